"""Timing helpers shared by the benchmark scripts (``benchmarks/<system>.py`` import them as
``from _timing import ...``: a script's own folder is first on ``sys.path``).

Benchmarks report ratios of two timings taken in the same run; these helpers only make the
individual timings robust on a shared machine.

Records. Besides printing, a script calls :func:`record` for each comparison it reports; when the
script ends without an error the rows are written to ``benchmarks/results/<script>.json`` (or the
folder in ``NEURIPS26_BENCH_OUT``) with the machine, the load average, the commit and the
script's own CPU and wall time. ``scripts/docs_snapshot.py`` turns that file into the table on
the system's docs page, so no benchmark number on a page is typed by hand.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

_T0_CPU, _T0_WALL = time.process_time(), time.perf_counter()
_LOAD0 = os.getloadavg() if hasattr(os, "getloadavg") else None
_ROWS: list[dict[str, Any]] = []
_FAILED = False


def record(comparison: str, ours: float, baseline: float, *, unit: str = "s", clock: str = "cpu",
           note: str = "") -> float:
    """Keep one row for ``benchmarks/results/<script>.json`` and return ``baseline / ours``.

    Args:
        comparison: what is compared, ours first (``"rate function: soft Bellman vs joint convex
            program"``).
        ours, baseline: the two measurements in ``unit`` (seconds by default; a count such as
            score evaluations is fine), both > 0 and from the same run.
        unit: the unit of ``ours`` and ``baseline`` (``s``, ``ms``, ``evals``…).
        clock: ``cpu`` (process time), ``wall``, or ``count`` for a non-time quantity.
        note: one short line (the setting, what the ratio means).

    Raises:
        ValueError: when ``ours`` or ``baseline`` is not a positive finite number.
    """
    for name, v in (("ours", ours), ("baseline", baseline)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise ValueError(f"record({comparison!r}): {name}={v!r}; allowed: a positive finite number")
    if not _ROWS:
        atexit.register(_write)
    ratio = float(baseline) / float(ours)
    _ROWS.append({"comparison": comparison, "ours": float(ours), "baseline": float(baseline),
                  "ratio": ratio, "unit": unit, "clock": clock, "note": note})
    return ratio


def _mark_failed(kind, value, tb):
    global _FAILED
    _FAILED = True
    _previous_hook(kind, value, tb)


_previous_hook = sys.excepthook
sys.excepthook = _mark_failed


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _write() -> None:
    """Write the recorded rows (only when the script finished without an uncaught error)."""
    if _FAILED or not _ROWS:
        return
    script = Path(sys.argv[0]).stem
    out = Path(os.environ.get("NEURIPS26_BENCH_OUT") or Path(__file__).parent / "results")
    out.mkdir(parents=True, exist_ok=True)
    load1 = os.getloadavg() if hasattr(os, "getloadavg") else None
    record_ = {
        "system": script, "script": f"benchmarks/{script}.py", "argv": sys.argv[1:],
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "commit": _commit(),
        "machine": {"platform": platform.platform(), "machine": platform.machine(), "cpu_count": os.cpu_count(),
                    "python": platform.python_version()},
        "load": [round(x, 2) for x in load1] if load1 else None,
        "load_at_start": [round(x, 2) for x in _LOAD0] if _LOAD0 else None,
        "cpu_s": round(time.process_time() - _T0_CPU, 2), "wall_s": round(time.perf_counter() - _T0_WALL, 2),
        "rows": _ROWS,
    }
    path = out / f"{script}.json"
    path.write_text(json.dumps(record_, indent=1, ensure_ascii=False) + "\n")
    print(f"benchmark rows written to {path}")


def best_cpu(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """Smallest CPU time (``time.process_time``, seconds) of ``repeats`` calls of ``fn`` and the
    last call's result. CPU time is not inflated by other processes preempting this one."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def best_wall(fn: Callable[[], Any], repeats: int = 3) -> float:
    """Smallest wall time (``time.perf_counter``, seconds) of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def median_wall(fn: Callable[[], Any], repeat: int = 5) -> float:
    """Median wall time (seconds) of ``repeat`` calls of ``fn`` after one untimed warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
