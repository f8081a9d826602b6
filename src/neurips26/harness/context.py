"""The run context handed to a system's ``run(config, ctx)``.

It gives the seed and generators, progress bars, figure saving and the torch device, so that
``run`` stays a pure function of its config and seed and writes only through ``ctx``.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import resource
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .results import atomic_write_bytes

T = TypeVar("T")


def _peak_rss_kb() -> int | None:
    """This process's peak resident memory in kB since the last reset (``VmHWM``), or ``None``."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            m = re.search(r"^VmHWM:\s+(\d+)\s+kB", fh.read(), re.M)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _reset_peak_rss() -> bool:
    """Reset this process's peak-RSS counter (Linux ``/proc/self/clear_refs`` ← 5); True if done."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _maxrss_kb(who: int) -> int:
    """``ru_maxrss`` of ``getrusage(who)`` in kB (macOS reports bytes)."""
    v = resource.getrusage(who).ru_maxrss
    return v // 1024 if sys.platform == "darwin" else v


class TaskCost:
    """CPU time and peak resident memory of a block of work (one task), children included.

    Use as a context manager around a task; afterwards ``cpu_time_s`` (user + system seconds of
    this process and of the child processes it waited for while in the block) and
    ``peak_rss_mb`` (MiB: the larger of this process's peak resident set during the block and
    the largest waited-for child's) are set, and ``wall_s``.

    The peak is exact on Linux, where the process's counter is reset on entry (a task in a
    fresh pool process or a reused Ray worker measures itself only; in the driver's process it
    includes what earlier tasks left allocated). Elsewhere it is the process's lifetime peak, an
    upper bound. CPU time covers every thread of the process: in the driver's process that
    includes the progress display's thread (milliseconds).

    Source: inferred: ``getrusage(2)`` and ``proc(5)`` (``clear_refs``, ``VmHWM``).
    """

    def __init__(self) -> None:
        self.cpu_time_s: float | None = None
        self.peak_rss_mb: float | None = None
        self.wall_s: float | None = None

    def __enter__(self) -> "TaskCost":
        self._exact = _reset_peak_rss()
        self._children_peak0 = _maxrss_kb(resource.RUSAGE_CHILDREN)
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        self._cpu0 = s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall_s = time.perf_counter() - self._t0
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu_time_s = round(max(0.0, s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime - self._cpu0), 3)
        own = _peak_rss_kb() if self._exact else None
        if own is None:
            own = _maxrss_kb(resource.RUSAGE_SELF)
        child = _maxrss_kb(resource.RUSAGE_CHILDREN)
        child = child if child > self._children_peak0 else 0  # a child of this block raised the peak
        self.peak_rss_mb = round(max(own, child) / 1024, 1)


def limit_threads(n: int) -> None:
    """Make this process use at most ``n`` threads for BLAS, OpenMP and torch from now on.

    Sets ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
    ``VECLIB_MAXIMUM_THREADS``, ``NUMEXPR_NUM_THREADS`` (read by libraries loaded later, and by
    child processes), limits the thread pools of libraries already loaded (threadpoolctl), and
    torch's intra-op threads (if torch is imported). Used by the pool and Ray workers so that a
    task declaring ``num_cpus=1`` does not run a thread per core of the machine.

    Raises:
        ValueError: ``n < 1``.
    """
    if isinstance(n, bool) or int(n) < 1:
        raise ValueError(f"limit_threads(n={n!r}): n must be an integer >= 1")
    n = int(n)
    for var in _THREAD_VARS:
        os.environ[var] = str(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:  # threadpoolctl is a core dependency; tolerate its absence in tools
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(n)


_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                "NUMEXPR_NUM_THREADS")


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block with ``n`` torch intra-op threads, restoring the caller's setting afterwards.

    Small models on a shared 2-core machine run faster with one thread: more threads
    oversubscribe the cores (measured: lanczos-ddpm's digits part 795 s wall with 2 threads, 68 s
    with 1, at load 14).

    Raises:
        ValueError: ``n < 1``.
    """
    import torch

    if isinstance(n, bool) or int(n) < 1:
        raise ValueError(f"torch_threads(n={n!r}): n must be an integer >= 1")
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


def blas_threads(n: int) -> Any:
    """A context manager capping the BLAS/OpenMP thread pools of loaded libraries (numpy's
    OpenBLAS, scikit-learn's OpenMP) at ``n`` threads, restored on exit (``threadpoolctl``).

    With :func:`torch_threads` it keeps a system's run on the cores it declares when it is called
    directly (the executors pin tasks themselves, :func:`neurips26.harness.executor.pinned`). On a
    shared 2-core machine OpenBLAS's second thread spin-waits: one logistic-regression probe took
    7.2 s CPU / 59 s wall with 2 threads and 0.17 s / 2 s with 1 (measured at load 14).

    Raises:
        ValueError: ``n < 1``.
    """
    from threadpoolctl import threadpool_limits

    if isinstance(n, bool) or int(n) < 1:
        raise ValueError(f"blas_threads(n={n!r}): n must be an integer >= 1")
    return threadpool_limits(int(n))


def _duration(s: float) -> str:
    if s != s or s == float("inf"):
        return "?"
    if s < 10:
        return f"{s:.1f} s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


@dataclass
class StageStat:
    """What :class:`LineProgress` knows of one stage (one ``ctx.track`` loop).

    Attributes:
        name: the stage's description (``"HRNN seeds"``).
        total: steps planned (``None``: unknown).
        steps: steps done.
        started / ended: ``time.perf_counter()`` at its start and end (``ended`` ``None`` while it runs).
    """

    name: str
    total: float | None
    steps: float = 0.0
    started: float = 0.0
    ended: float | None = None

    def elapsed(self, now: float | None = None) -> float:
        """Seconds since the stage started (to its end once ended)."""
        end = self.ended if self.ended is not None else (time.perf_counter() if now is None else now)
        return max(0.0, end - self.started)

    def rate(self, now: float | None = None) -> float:
        """Steps per second so far (0 before the first step)."""
        dt = self.elapsed(now)
        return self.steps / dt if dt > 0 else 0.0

    def eta(self, now: float | None = None) -> float:
        """Seconds left at the current rate (``inf`` when unknown)."""
        r = self.rate(now)
        if self.total is None or r <= 0:
            return float("inf")
        return max(0.0, (self.total - self.steps) / r)

    def line(self, now: float | None = None) -> str:
        """``stage 'HRNN seeds': 3/10, 0.52 steps/s, ETA 13 s (elapsed 6 s)``."""
        total = "?" if self.total is None else f"{self.total:g}"
        return (f"stage {self.name!r}: {self.steps:g}/{total}, {self.rate(now):.3g} steps/s, "
                f"ETA {_duration(self.eta(now))} (elapsed {_duration(self.elapsed(now))})")


class LineProgress:
    """Progress as plain lines, for output that is not a terminal (a log file, a pipe).

    Implements the part of ``rich.progress.Progress`` that :meth:`RunContext.track` and systems
    use (``add_task``, ``advance``, ``update``, ``remove_task``): a line when a stage starts and
    when it ends, and while it runs a line at least every ``every_s`` seconds (stage, step/total,
    rate, ETA) — from a heartbeat thread, so a stage whose single step takes minutes still shows
    it is alive. Keeps every stage's :class:`StageStat` (``stages``) for throughput reports
    (:mod:`neurips26.harness.fullcheck`).

    Args:
        label: prefix of every line (``lr-schedules seed 0``).
        every_s: seconds between lines of a running stage (> 0).
        stream: where lines go (default: ``sys.stderr`` at the time of writing).

    Raises:
        ValueError: ``every_s <= 0``.
    """

    def __init__(self, label: str = "", every_s: float = 60.0, stream: Any = None) -> None:
        import threading

        if not every_s > 0:
            raise ValueError(f"LineProgress(every_s={every_s!r}): allowed: a number > 0")
        self.label, self.every_s, self.stream = label, float(every_s), stream
        self.stages: list[StageStat] = []
        self._live: dict[int, StageStat] = {}
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Any = None

    def _write(self, text: str) -> None:
        out = self.stream if self.stream is not None else sys.stderr
        try:
            out.write(f"[{self.label}] {text}\n" if self.label else f"{text}\n")
            out.flush()
        except (OSError, ValueError):  # a closed stream must never stop a run
            pass

    def _beat(self) -> None:
        while not self._stop.wait(min(self.every_s, 5.0)):
            now = time.perf_counter()
            with self._lock:
                due = [(i, st) for i, st in self._live.items() if now - self._last.get(i, 0.0) >= self.every_s]
                for i, _ in due:
                    self._last[i] = now
            for _, st in due:
                self._write(st.line(now))

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        """Start a stage; prints its first line. Returns its id."""
        import threading

        st = StageStat(" ".join(str(description).split()), None if total is None else float(total),
                       started=time.perf_counter())
        with self._lock:
            i = len(self.stages)
            self.stages.append(st)
            self._live[i] = st
            self._last[i] = st.started
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat, name="neurips26-progress", daemon=True)
                self._thread.start()
        self._write(f"stage {st.name!r} started" + (f" ({st.total:g} steps)" if st.total is not None else ""))
        return i

    def update(self, task_id: int, *, advance: float = 0, completed: float | None = None,
               total: float | None = None, description: str | None = None, **_: Any) -> None:
        """Advance or set a stage's count (``rich``'s signature); lines come from the heartbeat."""
        with self._lock:
            st = self.stages[task_id]
            if total is not None:
                st.total = float(total)
            st.steps = float(completed) if completed is not None else st.steps + advance
            # a new description (a counter some systems put there) is ignored: the stage keeps its name

    def advance(self, task_id: int, advance: float = 1) -> None:
        """One step (or ``advance`` steps) of a stage."""
        self.update(task_id, advance=advance)

    def remove_task(self, task_id: int) -> None:
        """End a stage; prints its last line (steps, time, rate)."""
        with self._lock:
            st = self.stages[task_id]
            st.ended = time.perf_counter()
            self._live.pop(task_id, None)
        self._write(f"stage {st.name!r} done: {st.steps:g} steps in {_duration(st.elapsed())}, "
                    f"{st.rate():.3g} steps/s")

    def close(self) -> None:
        """Stop the heartbeat thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def progress_lines_wanted() -> bool:
    """Whether runs without a progress display should print :class:`LineProgress` lines:
    ``NEURIPS26_PROGRESS=lines`` yes, ``=off`` no, else when stderr is not a terminal."""
    mode = os.environ.get("NEURIPS26_PROGRESS", "").strip().lower()
    if mode in ("off", "0", "no", "none"):
        return False
    if mode in ("lines", "1", "yes", "on"):
        return True
    try:
        return not sys.stderr.isatty()
    except (AttributeError, ValueError):
        return True


@dataclass
class RunContext:
    """Seed, generators, output folder, progress and figures for one system run.

    Attributes:
        seed: the run's integer seed.
        out_dir: the run folder; figures go to ``out_dir/figures``.
        device: torch device string (``cpu`` or ``cuda``).
        progress: a ``rich.progress.Progress`` owned by the runner, or ``None`` (no bars).
        confirmation: True in a confirmation run (one of the experiment's ``CONFIRMATION_SEEDS``):
            only claims tuned after a look are judged there, so ``run()`` may skip claim groups
            without such claims.
    """

    seed: int
    out_dir: Path
    device: str = "cpu"
    progress: Any = None
    confirmation: bool = False
    figures: list[str] = field(default_factory=list)
    captions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.rng = np.random.default_rng(self.seed)
        random.seed(self.seed)
        np.random.seed(self.seed % 2**32)
        try:
            import torch

            torch.manual_seed(self.seed)
        except ImportError:  # torch is a core dependency; tolerate its absence in tools
            pass

    def torch_generator(self, offset: int = 0):
        """A fresh ``torch.Generator`` seeded with ``seed + offset`` (on CPU)."""
        import torch

        return torch.Generator().manual_seed(self.seed + offset)

    def child_rng(self, offset: int) -> np.random.Generator:
        """An independent numpy generator for a sub-experiment (seed + offset)."""
        return np.random.default_rng([self.seed, offset])

    def track(self, iterable: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Iterate with a progress bar (removed when done). Works without a progress display."""
        if self.progress is None:
            yield from iterable
            return
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        task = self.progress.add_task(f"  {description}", total=total)
        try:
            for item in iterable:
                yield item
                self.progress.advance(task)
        finally:
            self.progress.remove_task(task)

    def save_figure(self, name: str, fig: Any, caption: str = "") -> str:
        """Save a matplotlib figure as ``figures/<name>.png`` atomically and close it.

        ``caption`` is what the report prints under the figure: what to look at and what the
        paper predicts (one or two sentences). The first figure saved is the system's key
        figure, shown first in the report. Returns the path relative to the run folder.

        Raises:
            ValueError: if ``name`` is not a plain file stem (letters, digits, ``-_.``).
        """
        if not name or any(not (ch.isalnum() or ch in "-_.") for ch in name) or name.startswith("."):
            raise ValueError(f"figure name {name!r}: use letters, digits, '-', '_' or '.'")
        import matplotlib.pyplot as plt

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        rel = f"figures/{name}.png"
        atomic_write_bytes(self.out_dir / rel, buf.getvalue())
        if rel not in self.figures:
            self.figures.append(rel)
        if caption:
            self.captions[rel] = caption
        return rel
