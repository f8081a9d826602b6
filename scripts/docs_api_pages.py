"""Write docs/api/<package>.md: one API reference page per system (and the spine), members = ``__all__``.

Run after adding or removing a public name: ``.venv/bin/python scripts/docs_api_pages.py``.
``tests/docs/test_api_reference.py`` fails when a page and its package's ``__all__`` disagree.
The names are read from the source with ``ast`` (``__all__`` must be a literal list), so
nothing is imported.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "neurips26"
SPINE = {"harness": "The spine: catalogue, claims, configs, run context, results, runner, report.",
         "backends": "Chat backends shared by the LLM/VLM systems."}


def public_names(package: str) -> list[str]:
    """The literal ``__all__`` of ``neurips26.<package>`` (ValueError if missing or not a literal)."""
    path = PKG / package / "__init__.py"
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise ValueError(f"{path}: no literal __all__")


def packages() -> list[str]:
    """Every subpackage of neurips26 with an ``__init__.py``, systems first, spine last."""
    names = sorted(p.parent.name for p in PKG.glob("*/__init__.py"))
    return [n for n in names if n not in SPINE] + [n for n in SPINE if n in names]


def page(package: str) -> str:
    """The Markdown of one reference page."""
    intro = (SPINE[package] if package in SPINE else
             f"User guide: [{package.replace('_', '-')}](../systems/{package}.md).")
    members = "\n".join(f"        - {n}" for n in public_names(package))
    return (f"# `neurips26.{package}`\n\n{intro}\n\n::: neurips26.{package}\n    options:\n"
            f"      members:\n{members}\n")


def main() -> int:
    out = ROOT / "docs" / "api"
    out.mkdir(parents=True, exist_ok=True)
    pkgs = packages()
    for p in pkgs:
        (out / f"{p}.md").write_text(page(p))
    rows = "\n".join(f"| [`neurips26.{p}`]({p}.md) | {len(public_names(p))} |" for p in pkgs)
    (out / "index.md").write_text(
        "# API reference\n\nGenerated from the docstrings: one page per package, listing every name of its "
        "`__all__`.\n\n| Package | Public names |\n|---|---|\n" + rows + "\n")
    print(f"wrote {len(pkgs)} pages to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
