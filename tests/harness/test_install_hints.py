"""Every install hint in the code is the one form the README and the docs use:
``pip install -c constraints.txt -e '.[EXTRA]'`` (from the repository's folder).

Catches: a message or docstring in ``src/`` (or a benchmark script) that says ``pip install 'neurips26[cluster]'`` or
``install neurips26[tda]`` (the project is on no package index, so that install cannot work, or
would fetch whatever else carries the name), and a hint ``pip install -e '.[rl]'`` without the
constraints file (unpinned versions; pip free to pull another torch). Before this test,
``--executor ray`` without Ray, the flood, rat-recording, tokeniser, trl, models and server
messages all said ``neurips26[...]``, and ``neurips26 list`` / the missing-extra line said
``pip install -e '.[x]'``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import neurips26
from neurips26.harness.catalogue import Need, install_command, missing_text

SRC = Path(neurips26.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]
#: a hint to install the project under its name from an index: ``neurips26[tda]``, ``'neurips26[x]'``
BY_NAME = re.compile(r"neurips26\[")
#: an install of the checkout with extras: must be exactly the one form
WITH_EXTRAS = re.compile(r"pip install[^\n\"`]*?\.\[")
ONE_FORM = re.compile(r"pip install -c constraints\.txt -e '\.\[")


def bad_hints(root: Path) -> list[str]:
    """``file:line: text`` of every install hint under ``root`` (``*.py``) that is not the one form."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            wrong = BY_NAME.search(line) or any(not ONE_FORM.fullmatch(m.group(0)) for m in WITH_EXTRAS.finditer(line))
            if wrong:
                bad.append(f"{path.relative_to(root).as_posix()}:{i}: {line.strip()}")
    return bad


def test_no_install_hint_in_src_names_the_package_or_skips_the_constraints():
    """grep ``src/`` (and the benchmark and docs scripts, which print hints too): no ``neurips26[``
    anywhere, and every ``pip install … .[`` is ``pip install -c constraints.txt -e '.[``."""
    bad = bad_hints(SRC) + [b for d in ("benchmarks", "scripts") if (REPO / d).is_dir()
                            for b in bad_hints(REPO / d)]
    assert not bad, "install hints not in the one form (pip install -c constraints.txt -e '.[EXTRA]'):\n" + \
        "\n".join(bad)


def test_the_grep_finds_the_wrong_forms(tmp_path: Path):
    """The scan flags the hints it was written for and passes the right one (else it could not fail)."""
    (tmp_path / "m.py").write_text(
        "a = \"needs Ray: pip install 'neurips26[cluster]'\"\n"
        "b = 'flooder missing; install neurips26[tda]'\n"
        "c = \"to run the others: pip install -e '.[rl,convex]'\"\n"
        "d = \"pip install -c constraints.txt '.[rl]'\"\n"
        "ok = \"pip install -c constraints.txt -e '.[rl,convex]'\"\n"
        "ok2 = 'pip install bitsandbytes'\n")
    assert [b.split(":")[1] for b in bad_hints(tmp_path)] == ["1", "2", "3", "4"]


def test_install_command_and_missing_text_use_the_one_form():
    """The helper every hint in the harness goes through writes the docs' form, and refuses a
    name that is no extra."""
    assert install_command("cluster") == "pip install -c constraints.txt -e '.[cluster]'"
    assert install_command(["convex", "rl"]) == "pip install -c constraints.txt -e '.[convex,rl]'"
    assert missing_text("ncp_tom", [Need("gymnasium", "gymnasium", "rl")]).endswith(
        ": pip install -c constraints.txt -e '.[rl]'")
    for bad in ([], "", "rl]", ["rl", "a b"]):
        with pytest.raises(ValueError, match="install_command"):
            install_command(bad)
