"""The README stays a landing page, CI runs its test command, and the API reference is complete.

Catches: a README that grows back past 300 lines or loses its link to a system's page; `.ci/run`
drifting from the test command the README tells users to run; a public name added to a
package's ``__all__`` without its API reference page listing it (or a page listing a name that
no longer exists); a system page missing from the docs site's navigation.
"""

from __future__ import annotations

import importlib.util
import re
import sys

from ._examples import ROOT

README = (ROOT / "README.md").read_text()


def _load_api_script():
    spec = importlib.util.spec_from_file_location("docs_api_pages", ROOT / "scripts" / "docs_api_pages.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["docs_api_pages"] = mod
    spec.loader.exec_module(mod)
    return mod


API = _load_api_script()


def test_readme_is_a_landing_page():
    """At most 300 lines (it was 1,657 with every system's section inlined)."""
    n = len(README.splitlines())
    assert n <= 300, f"README.md has {n} lines; move detail to docs/ (limit 300)"


def test_readme_links_every_system_page_and_the_pages_exist():
    """Every system of the catalogue is one click from the README, and the page exists."""
    from neurips26.harness.catalogue import PAPERS

    for p in PAPERS:
        link = f"](docs/systems/{p.system}.md)"
        assert link in README, f"README.md has no link {link!r} for {p.cli_name}"
        assert (ROOT / "docs" / "systems" / f"{p.system}.md").is_file(), f"docs/systems/{p.system}.md missing"


def test_ci_runs_the_readme_test_command_verbatim():
    """The command under 'Tests' in the README is a line of .ci/run, character for character."""
    m = re.search(r"\*\*Tests\*\*.*?```bash\n(?P<cmd>[^\n]+)\n```", README, re.S)
    assert m, "README.md: no bash block under **Tests**"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert m.group("cmd") in ci, f".ci/run does not run the README's test command verbatim: {m.group('cmd')!r}"
    assert any(line.startswith(".venv/bin/ruff check") for line in ci), ".ci/run does not run ruff check"
    assert any("mkdocs build --strict" in line for line in ci), ".ci/run does not run mkdocs build --strict"


def test_readme_keeps_the_counts_placeholder_or_counts():
    """The lead fills the verdict counts after the final run at the marked line."""
    assert "<!-- counts:" in README, "README.md lost the '<!-- counts: ... -->' marker"


def test_api_reference_lists_every_public_name():
    """docs/api/<package>.md lists exactly the package's __all__ (regenerate: scripts/docs_api_pages.py)."""
    for package in API.packages():
        page = ROOT / "docs" / "api" / f"{package}.md"
        assert page.is_file(), f"{page.relative_to(ROOT)} missing: run .venv/bin/python scripts/docs_api_pages.py"
        listed = re.findall(r"^ {8}- (\S+)$", page.read_text(), re.M)
        names = API.public_names(package)
        missing, extra = sorted(set(names) - set(listed)), sorted(set(listed) - set(names))
        assert not missing and not extra, (
            f"{page.relative_to(ROOT)} disagrees with neurips26.{package}.__all__: missing {missing}, "
            f"not public {extra}; run .venv/bin/python scripts/docs_api_pages.py")


def test_every_docs_page_is_in_the_site_navigation():
    """A page left out of mkdocs.yml's nav is unreachable from the site."""
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        rel = page.relative_to(ROOT / "docs").as_posix()
        assert re.search(rf"(?m)^\s*- (?:.*: )?{re.escape(rel)}$", nav), f"mkdocs.yml nav lacks {rel}"
