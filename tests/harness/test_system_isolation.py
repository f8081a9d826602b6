"""A system never imports another system (only the spine, the backends and outside libraries)."""

from __future__ import annotations

import ast
from pathlib import Path

import neurips26
from neurips26.harness.catalogue import PAPERS

SRC = Path(neurips26.__file__).parent
SYSTEMS = {p.system for p in PAPERS}


def test_no_system_imports_another_system():
    """Catches a shared helper reached across systems (bit-mask-tuning once imported its model-folder
    check from counting-readout): such code belongs in the spine or the backends."""
    bad = []
    for system in sorted(SYSTEMS):
        for path in sorted((SRC / system).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                for name in names:
                    parts = name.split(".")
                    if len(parts) > 1 and parts[0] == "neurips26" and parts[1] in SYSTEMS - {system}:
                        bad.append(f"{path.relative_to(SRC)}:{node.lineno} imports {name}")
    assert not bad, "\n".join(bad)
