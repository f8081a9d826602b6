"""Every system has a benchmark that records its comparisons, and a stored record whose rows the
docs table shows (no system page says "not yet measured").

Catches: a ``benchmarks/<system>.py`` that prints its ratios without calling ``record()`` (its
page then has no table, only a "not yet measured" line — 11 of 19 systems were so); a script
whose result file is missing or empty; a row with a ratio that is not ``baseline / ours`` or a
non-positive measurement (a hand-edited or truncated record); a row without the fields the docs
table and a reader need (the comparison, the unit and the clock), or a record without its machine,
load and CPU/wall time.
"""

from __future__ import annotations

import json
import math

import pytest

from neurips26.harness import docsgen
from neurips26.harness.catalogue import PAPERS

from ._examples import ROOT

IDS = [p.system for p in PAPERS]


@pytest.mark.parametrize("paper", PAPERS, ids=IDS)
def test_benchmark_script_records_and_its_record_has_rows(paper):
    """``benchmarks/<system>.py`` calls ``record()`` and ``benchmarks/results/<system>.json`` holds
    its rows with the machine, the load and the script's CPU and wall time."""
    script = ROOT / "benchmarks" / f"{paper.system}.py"
    assert script.is_file(), f"{script.relative_to(ROOT)} missing"
    assert "record(" in script.read_text(), f"{script.relative_to(ROOT)} does not call record()"
    path = ROOT / "benchmarks" / "results" / f"{paper.system}.json"
    assert path.is_file(), f"{path.relative_to(ROOT)} missing: run .venv/bin/python {script.relative_to(ROOT)}"
    rec = json.loads(path.read_text())
    assert rec["system"] == paper.system and rec["rows"], f"{path.name}: no rows"
    for key in ("machine", "load", "cpu_s", "wall_s", "date", "commit"):
        assert rec.get(key) not in (None, ""), f"{path.name}: no {key!r}"
    for r in rec["rows"]:
        assert r["comparison"].strip() and r.get("unit") and r.get("clock") in ("cpu", "wall", "count"), r
        assert r["ours"] > 0 and r["baseline"] > 0, r
        # the ratio is baseline / ours as written by record(); 1e-12 relative: float round-off only
        assert math.isclose(r["ratio"], r["baseline"] / r["ours"], rel_tol=1e-12), r


@pytest.mark.parametrize("paper", PAPERS, ids=IDS)
def test_generated_benchmark_table_is_measured(paper):
    """The generated include of each system page is a table of measured rows, not the
    "not yet measured" placeholder."""
    text = (ROOT / "docs" / "results" / f"{paper.system}-benchmark.md").read_text()
    assert docsgen.NOT_MEASURED not in text, f"docs/results/{paper.system}-benchmark.md: {docsgen.NOT_MEASURED}"
    assert "| comparison | ours | baseline | ratio (baseline / ours) |" in text


def test_executor_benchmark_records_and_the_guide_shows_its_table():
    """``benchmarks/executor.py`` records its rows (speed-ups, control, overheads, one-off costs)
    with the load, and the guide's generated executor block is that table.

    Catches: the executor benchmark printing its speed-ups without recording them (the guide then
    said "not yet measured" while the README pointed to it), and a record without the
    CPU-normalised rows that are the only ones to read on a shared, loaded machine.
    """
    assert "record(" in (ROOT / "benchmarks" / "executor.py").read_text()
    rec = json.loads((ROOT / "benchmarks" / "results" / "executor.json").read_text())
    for key in ("machine", "load", "cpu_s", "wall_s", "date", "commit"):
        assert rec.get(key) not in (None, ""), f"executor.json: no {key!r}"
    names = [r["comparison"] for r in rec["rows"]]
    assert any("CPU-normalised" in n for n in names) and any("unpinned" in n for n in names), names
    for r in rec["rows"]:
        assert r["ours"] > 0 and r["baseline"] > 0, r
        assert math.isclose(r["ratio"], r["baseline"] / r["ours"], rel_tol=1e-12), r  # round-off only
    guide = (ROOT / docsgen.EXECUTOR_PAGE).read_text()
    block = guide[guide.index(docsgen.EXECUTOR_BEGIN):guide.index(docsgen.EXECUTOR_END)]
    assert docsgen.NOT_MEASURED not in block and "| comparison | ours | baseline | ratio (baseline / ours) |" in block
