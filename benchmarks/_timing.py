"""Timing helpers shared by the benchmark scripts (``benchmarks/<system>.py`` import them as
``from _timing import ...``: a script's own folder is first on ``sys.path``).

Benchmarks report ratios of two timings taken in the same run; these helpers only make the
individual timings robust on a shared machine.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np


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
