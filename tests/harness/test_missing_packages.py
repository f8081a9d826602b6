"""Missing optional packages are named before any work: ``reproduce``,
``show`` and ``list`` say which extra to install, in one line, never "not implemented"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from neurips26.harness.catalogue import PAPERS, REQUIREMENTS, Need, missing_packages, missing_text

_HIDE = """
import sys
for name in {hide!r}:
    sys.modules[name] = None  # import and find_spec now fail as for a package that is not installed
sys.argv = ["neurips26", *{args!r}]
from neurips26.cli import main
main()
"""


def _cli(args: list[str], hide: list[str]) -> subprocess.CompletedProcess:
    code = _HIDE.format(hide=hide, args=args)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)})


def test_reproduce_show_and_list_name_the_missing_extra(tmp_path: Path):
    """Catches ncp-tom answering "not implemented yet" (its package failed to import for want of
    gymnasium) and a missing package surfacing as a bare ModuleNotFoundError after work began."""
    out = tmp_path / "out"
    res = _cli(["reproduce", "ncp-tom", "--out", str(out)], ["gymnasium"])
    text = res.stdout + res.stderr
    assert res.returncode == 2, text
    assert "ncp-tom needs the `rl` extra (gymnasium): pip install -c constraints.txt -e '.[rl]'" in text
    assert "not implemented" not in text and "Traceback" not in text
    assert not out.exists() or not list(out.rglob("*"))  # nothing written, nothing run
    shown = _cli(["show", "ncp-tom", "--out", str(out)], ["gymnasium"])
    assert shown.returncode == 0 and "needs the `rl` extra (gymnasium)" in shown.stdout, shown.stdout + shown.stderr
    listed = _cli(["list"], ["gymnasium", "cvxpy"])
    row = [ln for ln in listed.stdout.splitlines() if "mdp-types" in ln][0]
    assert "needs [convex,rl]: cvxpy, gymnasium" in row, listed.stdout
    assert "ncp-tom" in listed.stdout and "not implemented" not in listed.stdout
    assert "16 can run here" in listed.stdout and "pip install -c constraints.txt -e '.[rl,convex]'" in listed.stdout


def test_conditional_needs_and_data_files(tmp_path: Path, monkeypatch):
    """Catches a full-scale-only package refused at quick scale, and a vocabulary whose package is
    installed but whose data file is missing counted as present."""
    class Cfg:
        lm_experiment = False

    cvx_ok = [n for n in REQUIREMENTS["alignment_limits"] if n.module != "cvxpy"]
    assert all(not n.needed(Cfg()) for n in cvx_ok)
    Cfg.lm_experiment = True
    assert all(n.needed(Cfg()) for n in cvx_ok)
    pkg = tmp_path / "fakevocab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    need = Need("fakevocab", "fakevocab", "text", data="data/encoder.json", what="gpt2 vocabulary")
    assert not need.available()
    (pkg / "data").mkdir()
    (pkg / "data" / "encoder.json").write_text("{}")
    assert need.available()
    assert missing_text("text_uncanny_valley", [need]) == (
        "text-uncanny-valley needs the `text` extra (fakevocab's gpt2 vocabulary): pip install -c constraints.txt -e '.[text]'")


def test_every_declared_extra_exists_in_pyproject():
    """Catches a requirement naming an extra that ``pip install -c constraints.txt -e '.[x]'`` would not know."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    systems = {p.system for p in PAPERS}
    via = {"datasets": "trl", "tokenizers": "transformers"}  # installed as dependencies of the extra's packages
    for system, needs in REQUIREMENTS.items():
        assert system in systems
        for n in needs:
            assert n.extra in extras, (system, n)
            names = (n.package.lower(), via.get(n.package, n.package).lower())
            assert any(dep.lower().replace("_", "-").startswith(names) for dep in extras[n.extra]), (system, n)
    assert missing_packages("lr-schedules") == []


def test_reproduce_of_every_system_lists_each_missing_extra_at_once(tmp_path: Path):
    """Catches ``reproduce`` (all systems) stopping at the first system with a missing package,
    so a user installs extras one failed command at a time."""
    out = tmp_path / "out"
    res = _cli(["reproduce", "--out", str(out)], ["gymnasium", "cvxpy"])
    text = res.stdout + res.stderr
    assert res.returncode == 2, text
    for line in ("ncp-tom needs the `rl` extra (gymnasium)", "alignment-limits needs the `convex` extra (cvxpy)",
                 "mdp-types needs the `convex` extra (cvxpy) and the `rl` extra (gymnasium): pip install -c constraints.txt -e '.[convex,rl]'"):
        assert line in text, text
    assert "3 systems need packages missing here" in text and not out.exists()
