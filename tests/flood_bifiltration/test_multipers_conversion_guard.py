"""gudhi 3.13 with multipers 2.3.3b5 segfaults when a gudhi SimplexTree is converted into a
``multipers.SimplexTreeMulti`` (and in multipers' ``RipsCodensity``, which converts). Our code
builds every SimplexTreeMulti empty and fills it with ``insert_batch``; this test keeps it so
(issue 15, item 4: a test that our code never takes that path)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python_files():
    yield from (ROOT / "src").rglob("*.py")
    yield from (ROOT / "benchmarks").glob("*.py")


def test_no_simplextreemulti_is_built_from_a_gudhi_tree_and_no_rips_codensity():
    offenders = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                # SimplexTreeMulti(gudhi_tree, ...) / SimplexTreeMulti(input=...) is the crashing conversion
                if name == "SimplexTreeMulti" and (node.args or any(k.arg in (None, "input", "other") for k in node.keywords)):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} SimplexTreeMulti(<tree>)")
            if isinstance(node, ast.Attribute) and node.attr == "RipsCodensity":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} RipsCodensity")
    assert not offenders, offenders


def test_the_guard_sees_the_crashing_form(tmp_path):
    bad = ast.parse("import multipers as mp\nst = mp.SimplexTreeMulti(gudhi_tree, num_parameters=2)\n")
    calls = [n for n in ast.walk(bad) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "SimplexTreeMulti"]
    assert calls and calls[0].args
