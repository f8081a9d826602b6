"""The spine has no import circle (issue 35): runner → executor → task, runner → report → task."""

from __future__ import annotations

import ast
from pathlib import Path

import neurips26.harness as harness


def _graph() -> dict[str, set[str]]:
    """harness module → harness modules it imports anywhere (top level or inside functions)."""
    folder = Path(harness.__file__).parent
    names = {p.stem for p in folder.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level == 1 and mod.split(".")[0] in names:
                    deps.add(mod.split(".")[0])
                elif node.level == 1 and not mod:  # from . import x
                    deps |= {a.name for a in node.names if a.name in names}
                elif mod.startswith("neurips26.harness."):
                    deps.add(mod.split(".")[2])
        graph[path.stem] = deps - {path.stem}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_circle_in_the_spine():
    """Catches runner ↔ executor ↔ report importing each other again (lazy imports included: a
    circle hidden in a function still makes the runner need the report to run tasks)."""
    graph = _graph()
    assert "report" not in graph["executor"] and "runner" not in graph["executor"]
    assert "report" not in graph["task"] and "runner" not in graph["task"] and "executor" not in graph["task"]
    assert _cycle(graph) is None, " → ".join(_cycle(graph))


def test_runner_names_still_importable():
    """Catches a caller of ``neurips26.harness.runner.X`` broken by the move to harness/task.py."""
    from neurips26.harness import runner, task

    for name in task.__all__:
        assert getattr(runner, name) is getattr(task, name), name
