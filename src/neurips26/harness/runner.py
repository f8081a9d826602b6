"""Run systems: resolve configs, seed, skip finished runs, isolate failures, write the report.

One (system, seed, scale) run is one :class:`Task`. :func:`reproduce` turns the selected systems
and seeds into tasks, skips those already finished (same config and code: the run folder's hash
matches and its ``result.json`` says ``ok``), hands the rest to an executor
(:mod:`neurips26.harness.executor`: in this process, a local process pool, or Ray tasks) and
writes each result on the driver as soon as it comes back — so resume and the report never
depend on where a run happened.

One run failing never loses another's result: each result is written atomically as soon as its
run finishes, a failure (an exception in the system, or a worker process that died) is recorded
as a ``failed`` result with the traceback, and Ctrl-C cancels outstanding runs after keeping
every finished one (the interrupted ones rerun next time).

Several seeds. With ``seeds=[0, 1, 2]`` every system runs once per seed (one folder per seed:
``<out>/<system>/<scale>-seed<N>-<hash>/``; the hash covers config and code, not the seed, so
the folders of one multi-seed run share it). After a run over two or more seeds,
:func:`write_seeds_summary` writes ``<out>/<system>/<scale>-seeds-summary.json``: per claim id,
the claim combined over the seeds by :func:`neurips26.harness.claims.over_seeds` (unanimous
rule: holds if it held in every seed, does not hold if it held in none, otherwise inconclusive;
not checkable if any seed was), with its :class:`~neurips26.harness.claims.SeedRecord` (seeds,
held k of n, per-seed values and verdicts). :func:`seeds_summary` computes the same from any
list of results, and :func:`results_by_seed` lists a folder's results per (system, scale, seed).
"""

from __future__ import annotations

import heapq
import json
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.markup import escape

from .catalogue import check_packages
from .claims import over_seeds
from .config import ConfigError, ExperimentConfig, apply_overrides, resolve_auto_backend
from .executor import check_requirements, make_executor
from .results import RESULT_FILE, Result, atomic_write_bytes, atomic_write_text, load_result, to_jsonable
from .task import (  # noqa: F401 - re-exported: these lived here before harness/task.py
    _PKG_ROOT,
    _SIGINT,
    EXECUTORS,
    SCALES,
    SystemSpec,
    Task,
    _now,
    _result,
    code_version,
    config_resources,
    default_device,
    environment,
    execute,
    failed_result,
    git_commit,
    make_task,
    run_key,
)


def _on_sigint(signum: int, frame: Any) -> None:
    _SIGINT.set()
    raise KeyboardInterrupt


def resolve_config(module: ModuleType, scale: str, overrides: dict[str, Any], system: str) -> ExperimentConfig:
    """The system's ``Config.quick()``/``full()`` with ``overrides`` applied and validated, and
    ``backend=auto`` resolved to the installed local model or ``none``
    (:func:`~neurips26.harness.config.resolve_auto_backend`), so the resolution enters the run's
    config hash.

    Raises:
        ConfigError: unknown scale, unknown key or invalid value (one-line message).
    """
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    try:
        base = getattr(module.Config, scale)()
    except NotImplementedError as exc:
        raise ConfigError(f"{system}: no {scale} configuration ({exc})") from None
    config = apply_overrides(base, overrides, system) if overrides else base
    try:
        return resolve_auto_backend(config)
    except ConfigError as exc:
        raise ConfigError(f"{system}: {exc}") from None


def preflight_inputs(module: ModuleType, config: ExperimentConfig, system: str) -> None:
    """Call the experiment's ``preflight(config)`` when it defines one: it opens and validates every
    external input (model folders with weights and tokenizer, data roots, mask files) and makes one
    short call to each model endpoint, before any run starts.

    Raises:
        ConfigError: one line naming the system, the input and what is allowed (from the
            system's ``ValueError``/``OSError``/``BackendError``/``ConfigError``).
    """
    check = getattr(module, "preflight", None)
    if check is None:
        return
    try:
        check(config)
    except ConfigError as exc:
        raise ConfigError(f"{system}: {exc}" if not str(exc).startswith(system) else str(exc)) from None
    except (ValueError, OSError, RuntimeError, ImportError) as exc:  # BackendError is a RuntimeError
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(f"{system}: {text}") from None


def confirmation_seeds(module: ModuleType) -> list[int]:
    """The experiment's declared ``CONFIRMATION_SEEDS`` (seeds never used while choosing a
    threshold or setting after a look), or ``[]``.

    Raises:
        ConfigError: if the declaration is not a sequence of distinct integers in 0..2**32-1.
    """
    seeds = getattr(module, "CONFIRMATION_SEEDS", ())
    try:
        out = [int(s) for s in seeds]
    except (TypeError, ValueError):
        raise ConfigError(f"{module.__name__}.CONFIRMATION_SEEDS={seeds!r}; allowed: a tuple of integers") from None
    if any(not 0 <= s < 2**32 for s in out) or len(set(out)) != len(out):
        raise ConfigError(f"{module.__name__}.CONFIRMATION_SEEDS={seeds!r}; allowed: distinct integers 0..2**32-1")
    return out


def is_deterministic(module: ModuleType) -> bool:
    """True when the experiment declares ``DETERMINISTIC = True``: its paper claims do not depend
    on the seed (a seed-dependent check or reconstruction in it is judged on its own within-run
    interval), so a multi-seed run computes one seed (replicas would repeat the paper claims'
    numbers, not add evidence) and it has no confirmation seeds (a seed cannot confirm what it
    does not change). The experiment module says why in a comment beside the flag.

    Raises:
        ConfigError: if ``DETERMINISTIC`` is not a bool.
    """
    flag = getattr(module, "DETERMINISTIC", False)
    if not isinstance(flag, bool):
        raise ConfigError(f"{module.__name__}.DETERMINISTIC={flag!r}; allowed: True or False")
    return flag


def parse_seeds(text: str) -> list[int]:
    """``"0,1,2"`` → ``[0, 1, 2]``; a single count ``"5"`` → ``[0, 1, 2, 3, 4]``.

    Raises:
        ConfigError: empty, not integers, a count < 1, a seed outside 0..2**32-1, or repeated.
    """
    text = text.strip()
    allowed = "a count (5 = seeds 0..4) or a comma-separated list of seeds (0,1,2), each 0..2**32-1"
    try:
        if "," in text:
            seeds = [int(s) for s in text.split(",") if s.strip()]
        else:
            count = int(text)
            if count < 1:
                raise ConfigError(f"--seeds {text!r}: a count must be at least 1; allowed: {allowed}")
            if count > 10_000:
                raise ConfigError(f"--seeds {text!r}: at most 10000 seeds; allowed: {allowed}")
            seeds = list(range(count))
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"--seeds {text!r}: not integers; allowed: {allowed}") from None
    if not seeds:
        raise ConfigError(f"--seeds {text!r}: no seed given; allowed: {allowed}")
    bad = [s for s in seeds if not 0 <= s < 2**32]
    if bad:
        raise ConfigError(f"--seeds {text!r}: seed {bad[0]} out of range; allowed: {allowed}")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds {text!r}: a seed is repeated; allowed: {allowed}")
    return seeds


def finished_result(task: Task, out: Path) -> Result | None:
    """The task's finished (``ok``) result under ``out``, if there is one (resume)."""
    path = Path(out) / task.system / task.run_key / RESULT_FILE
    if path.exists():
        try:
            res = load_result(path)
        except ValueError:
            return None
        if res.status == "ok":
            return res
    return None


def store(task: Task, result: Result, out: Path, files: dict[str, bytes] | None = None) -> Path:
    """Write a task's files (figures; from a worker) and then its ``result.json``, atomically.

    ``files`` maps paths relative to the run folder to their bytes; ``None`` when the run wrote
    them in place. The result is written last, so a folder with a ``result.json`` is complete.

    Raises:
        ValueError: a file path outside the run folder.
    """
    run_dir = Path(out) / task.system / task.run_key
    for rel, data in (files or {}).items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            raise ValueError(f"{task.label}: worker returned a file outside its run folder: {rel!r}")
        atomic_write_bytes(run_dir / rel, data)
    return result.save(run_dir)


def run_one(spec: SystemSpec, config: ExperimentConfig, *, scale: str, seed: int, out: Path,
            device: str, progress: Any = None, force: bool = False) -> tuple[Result, bool]:
    """Run one system in this process (or reuse its finished run). Returns (result, reused).

    Exceptions raised by the system are caught and returned as a ``failed`` result;
    ``KeyboardInterrupt`` propagates and nothing is written for the interrupted system.
    """
    task = make_task(spec, config, scale=scale, seed=seed)
    if not force and (done := finished_result(task, out)) is not None:
        return done, True
    result = execute(task, Path(out) / task.system / task.run_key, device=device, progress=progress)
    store(task, result, out)
    return result, False


# ----------------------------------------------------------------------------- estimates

def _recorded_times(out: Path) -> dict[tuple[str, str], list[tuple[str, str, float, float | None]]]:
    """(system, scale) → [(config-and-code hash, finished_at, wall seconds, CPU seconds or None)]
    of ok results."""
    times: dict[tuple[str, str], list[tuple[str, str, float, float | None]]] = {}
    for path in Path(out).glob(f"*/*/{RESULT_FILE}"):
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            if d.get("status") == "ok" and isinstance(d.get("wall_time_s"), (int, float)):
                cpu = d.get("cpu_time_s")
                times.setdefault((d["system"], d["scale"]), []).append(
                    (str(d.get("run_key", "")).rsplit("-", 1)[-1], str(d.get("finished_at", "")),
                     float(d["wall_time_s"]), float(cpu) if isinstance(cpu, (int, float)) and cpu > 0 else None))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return times


def estimate_seconds(tasks: Sequence[Task], out: Path) -> list[float | None]:
    """Each task's expected wall time from the last recorded run in ``out``.

    The last ``ok`` run with the same config and code (any seed) if there is one, else the last
    ``ok`` run of the same system and scale; ``None`` where nothing is recorded. A record with
    ``cpu_time_s`` gives its CPU time divided by the CPUs the task will get (its declared
    ``num_cpus``, whole, at least 1: executors pin it to those), so a run recorded on a busy
    machine does not inflate the estimate; an older record without it gives its wall time.
    """
    times = _recorded_times(out)
    est: list[float | None] = []
    for t in tasks:
        rows = times.get((t.system, t.scale), [])
        same = [r for r in rows if r[0] == t.run_key.rsplit("-", 1)[-1]]
        pick = max(same or rows, key=lambda r: r[1], default=None)
        if pick is not None and pick[3] is not None:
            est.append(pick[3] / max(1, int(t.resources.num_cpus)))
        else:
            est.append(pick[2] if pick else None)
    return est


def schedule_length(durations: Sequence[float], cpus: Sequence[float], total_cpus: float) -> float:
    """Makespan of running tasks greedily (longest first) on ``total_cpus`` cores.

    A task holding ``cpus[i]`` cores (capped at ``total_cpus``) runs in ``durations[i]``
    seconds; inferred: a simple list-scheduling model, good enough for an estimate.
    """
    if not durations:
        return 0.0
    slots = max(1, int(total_cpus // max(1.0, min(total_cpus, max(cpus)))))
    heap = [0.0] * slots
    for d in sorted(durations, reverse=True):
        heapq.heappush(heap, heapq.heappop(heap) + d)
    return max(heap)


def _fmt_duration(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def estimate_line(todo: Sequence[Task], n_done: int, out: Path, total_cpus: float, executor: str) -> str:
    """One line: how many tasks run, how many are reused, and the expected duration.

    Each task's time is its last recorded run's (:func:`estimate_seconds`), else the hours its
    config's ``resources()`` declares, else the mean of the others.
    """
    head = f"{len(todo)} task{'s' if len(todo) != 1 else ''} to run" + (f", {n_done} already done" if n_done else "")
    if not todo:
        return head
    recorded = estimate_seconds(todo, out)
    est = [r if r is not None else (t.resources.hours * 3600 if t.resources.hours else None)
           for t, r in zip(todo, recorded)]
    known = [e for e in est if e is not None]
    if not known:
        return f"{head}; no recorded run times in {str(out)!r} yet to estimate the duration"
    source = ("the last recorded run times" if all(r is not None for r in recorded)
              else "the configs' declared hours" if not any(r is not None for r in recorded)
              else "recorded run times and declared hours")
    fill = sum(known) / len(known)
    cpus = [t.resources.num_cpus for t in todo]
    total = total_cpus if executor != "local" else max(cpus)
    span = schedule_length([e if e is not None else fill for e in est], cpus, total)
    missing = sorted({t.label.split(" seed ")[0] for t, e in zip(todo, est) if e is None})
    tail = f" (no record for {', '.join(missing)}: assumed {_fmt_duration(fill)} each)" if missing else ""
    return f"{head}; estimated {_fmt_duration(span)} from {source}{tail}"


# ----------------------------------------------------------------------------- seeds

def results_by_seed(out: Path, system: str | None = None, scale: str | None = None,
                    ) -> dict[tuple[str, str], dict[int, Result]]:
    """Results under ``out`` per (system, scale) and seed: the most recently finished of each.

    Unreadable ``result.json`` files are skipped (``latest_results`` lists them).
    """
    found: dict[tuple[str, str], dict[int, Result]] = {}
    pattern = f"{system or '*'}/*/{RESULT_FILE}"
    for path in sorted(Path(out).glob(pattern)):
        try:
            res = load_result(path)
        except (OSError, ValueError):
            continue
        if (scale is not None and res.scale != scale) or res.role == "confirmation":
            continue
        per = found.setdefault((res.system, res.scale), {})
        cur = per.get(res.seed)
        if cur is None or res.finished_at > cur.finished_at:
            per[res.seed] = res
    return found


def seeds_summary(results: Sequence[Result]) -> dict[str, Any]:
    """Per-claim verdict over the seeds of ``results`` (one system, one scale, one config).

    Each claim id found in the ``ok`` results is combined with
    :func:`~neurips26.harness.claims.over_seeds` (unanimous rule; see the module docstring).
    Returns a JSON-ready dict: ``system``, ``scale``, ``seeds`` (ok ones), ``failed_seeds``,
    ``run_keys``, ``claims`` (list of claim dicts with ``seeds.held`` k of ``len(seeds.seeds)``)
    and ``counts`` ({kind: {verdict: n}}).

    Raises:
        ValueError: no results, or results of several systems or scales.
    """
    from .claims import counts_by_kind

    results = sorted(results, key=lambda r: r.seed)
    if not results:
        raise ValueError("seeds_summary(): no results")
    if len({(r.system, r.scale) for r in results}) != 1:
        raise ValueError("seeds_summary(): results of several systems or scales")
    ok = [r for r in results if r.status == "ok"]
    ids: list[str] = []
    for r in ok:
        ids += [c.id for c in r.claims if c.id not in ids]
    combined = []
    for cid in ids:
        pairs = [(r.seed, c) for r in ok for c in r.claims if c.id == cid]
        combined.append(over_seeds([c for _, c in pairs], [s for s, _ in pairs]))
    return to_jsonable({
        "system": results[0].system, "scale": results[0].scale,
        "seeds": [r.seed for r in ok], "failed_seeds": [r.seed for r in results if r.status != "ok"],
        "run_keys": [r.run_key for r in results], "written_at": _now(),
        "counts": counts_by_kind(combined), "claims": [c.to_dict() for c in combined],
    })


def write_seeds_summary(results: Sequence[Result], out: Path) -> Path | None:
    """Write :func:`seeds_summary` to ``<out>/<system>/<scale>-seeds-summary.json``.

    Returns the path, or ``None`` (nothing written) with fewer than two seeds.
    """
    if len({r.seed for r in results}) < 2:
        return None
    summary = seeds_summary(results)
    path = Path(out) / summary["system"] / f"{summary['scale']}-seeds-summary.json"
    atomic_write_text(path, json.dumps(summary, indent=2, allow_nan=False, ensure_ascii=False))
    return path


# ----------------------------------------------------------------------------- driver

def _counts_text(res: Result) -> str:
    """Paper claims by verdict first, then reconstruction and checks (never pooled)."""
    labels = {"holds": "hold", "does_not_hold": "do not hold", "inconclusive": "inconclusive",
              "not_checkable": "not checkable"}
    out = []
    for kind, counts in res.counts_by_kind().items():
        parts = [f"{n} {labels[v]}" for v, n in counts.items() if n]
        out.append(f"{kind}: " + (", ".join(parts) if parts else "none"))
    return "; ".join(out) or "no claims"


class _Display:
    """Progress over the run's tasks: a rich bar on a terminal, else one line per task on stderr."""

    def __init__(self, console: Any, total: int, done: int) -> None:
        from rich.console import Console

        self.console = console if console is not None else Console()
        self.err = Console(stderr=True, soft_wrap=True, highlight=False)
        self.total, self.done, self.t0 = total, done, time.perf_counter()
        self.progress: Any = None
        self.bar = None
        if self.console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TimeRemainingColumn(), console=self.console,
                                     transient=False)

    def __enter__(self) -> "_Display":
        if self.progress is not None:
            self.progress.start()
            self.bar = self.progress.add_task("tasks", total=self.total, completed=self.done)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()

    @property
    def out(self) -> Any:
        return self.progress.console if self.progress is not None else self.console

    def running(self, label: str) -> None:
        if self.progress is not None:
            short = label if len(label) <= 60 else label[:57] + "..."
            self.progress.update(self.bar, description=f"[bold]{escape(short)}")

    def finished(self, task: Task, res: Result, reused: bool) -> None:
        tag = "reused" if reused else f"{res.wall_time_s:.1f}s"
        if res.status == "ok":
            self.out.print(f"[green]✓[/] {escape(task.label)} ({tag}): {_counts_text(res)}")
        else:
            last = res.error.strip().splitlines()[-1] if res.error.strip() else "error"
            self.out.print(f"[red]✗[/] {escape(task.label)} failed: {escape(last)}")
        if reused:
            return
        self.done += 1
        if self.progress is not None:
            self.progress.advance(self.bar)
        else:  # no terminal: a plain line per finished task on stderr (for logs)
            self.err.print(f"[{self.done}/{self.total}] {task.system} seed {task.seed} {task.scale}: "
                           f"{res.status} in {res.wall_time_s:.1f} s "
                           f"(elapsed {_fmt_duration(time.perf_counter() - self.t0)})", markup=False)


class TaskLocks:
    """One lock file per task under ``<out>/.locks/`` (``fcntl.flock``), so that two commands
    writing into the same results folder never run the same task twice: the second waits for the
    first's task to finish and reuses its result.

    A lock is held by this process from :meth:`try_lock` (or :meth:`wait`) until :meth:`release`;
    the operating system drops it when the process dies, so a killed command never leaves a task
    locked. Without ``fcntl`` (Windows) every lock is granted (no protection).
    """

    def __init__(self, out: Path) -> None:
        self.folder = Path(out) / ".locks"
        self._held: dict[str, Any] = {}

    def _path(self, task: Task) -> Path:
        return self.folder / f"{task.system}--{task.run_key}.lock"

    def _open(self, task: Task) -> Any:
        self.folder.mkdir(parents=True, exist_ok=True)
        return open(self._path(task), "a+b")  # noqa: SIM115 - held open while the lock is held

    def try_lock(self, task: Task) -> bool:
        """Take the task's lock if free (``True``); ``False`` if another process holds it."""
        try:
            import fcntl
        except ImportError:
            return True
        fh = self._open(task)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            return False
        self._held[task.run_key + task.system] = fh
        return True

    def wait(self, task: Task) -> None:
        """Take the task's lock, waiting while another process holds it (Ctrl-C interrupts)."""
        try:
            import fcntl
        except ImportError:
            return
        fh = self._open(task)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        except BaseException:
            fh.close()
            raise
        self._held[task.run_key + task.system] = fh

    def release(self, task: Task) -> None:
        """Drop the task's lock (no-op if not held)."""
        fh = self._held.pop(task.run_key + task.system, None)
        if fh is not None:
            fh.close()  # closing the descriptor releases the flock

    def release_all(self) -> None:
        """Drop every lock this object holds."""
        for key in list(self._held):
            self._held.pop(key).close()


def run_tasks(tasks: Sequence[Task], *, out: Path, device: str | None = None, force: bool = False,
              console: Any = None, executor: str = "local", address: str | None = None,
              workers: int | None = None) -> tuple[list[Result], bool]:
    """Run ``tasks`` on ``executor``, writing each result under ``out`` as it finishes.

    Finished tasks (same config and code, status ok) are reused unless ``force``. Prints an
    estimate of the duration first (from the last recorded run times in ``out``), then progress.
    Returns (results in task order — finished and reused ones only —, interrupted?).
    Ctrl-C cancels outstanding tasks and keeps the finished ones.

    Each task is locked while it runs (:class:`TaskLocks`): a task that another command is
    running into the same ``out`` is not started here; after this command's own tasks, it waits
    for that lock and reuses the result the other command wrote (even with ``force``: it was
    just computed), or runs the task if the other command did not finish it.
    """
    tasks = list(tasks)
    for i, t in enumerate(tasks):
        t.index = i
    results: dict[int, Result] = {}
    reused: list[Task] = []
    todo: list[Task] = []
    for t in tasks:
        done = None if force else finished_result(t, out)
        if done is not None:
            results[t.index] = done
            reused.append(t)
        else:
            todo.append(t)
    locks = TaskLocks(out)
    busy = [t for t in todo if not locks.try_lock(t)]  # running in another command now
    todo = [t for t in todo if t not in busy]
    started_at = _now()
    _SIGINT.clear()
    handler = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) not in (
            signal.SIG_IGN, None):
        handler = signal.signal(signal.SIGINT, _on_sigint)
    interrupted, current = False, ""
    display = _Display(console, total=len(tasks), done=len(reused))
    ex = None
    try:
        with display:
            for t in reused:
                display.finished(t, results[t.index], reused=True)
            rounds = 0
            while todo or busy:
                rounds += 1
                if todo:
                    ex = make_executor(executor, address=address, workers=workers, tasks=todo)
                    if rounds == 1:
                        display.out.print(estimate_line(todo, len(reused), out, ex.total_cpus, executor)
                                          + f" ({ex.describe()})", highlight=False)
                    for task, res, files in ex.run(todo, out=out, device=device, progress=display.progress,
                                                   on_start=display.running):
                        current = task.label  # a finished worker's result is complete: keep it
                        store(task, res, out, files)
                        locks.release(task)
                        results[task.index] = res
                        current = ""
                        display.finished(task, res, reused=False)
                        if _SIGINT.is_set():
                            raise KeyboardInterrupt
                    ex.close()
                    ex = None
                todo = []
                for t in busy:  # another command runs these: wait for it, then reuse its result
                    display.out.print(f"waiting for {escape(t.label)}: another neurips26 command is running it "
                                      f"into {escape(str(out))}", highlight=False)
                    locks.wait(t)
                    done = finished_result(t, out)
                    if done is not None and (not force or done.finished_at >= started_at):
                        locks.release(t)
                        results[t.index] = done
                        display.finished(t, done, reused=True)
                    else:  # the other command failed or stopped: run it here (lock held)
                        todo.append(t)
                busy = []
    except KeyboardInterrupt:
        interrupted = True
        running = [current] if current else (ex.running() if ex is not None else [])
        where = f" during {', '.join(running)}" if running else ""
        display.console.print(f"[yellow]interrupted{escape(where)}; finished runs are kept; rerun to resume")
    finally:
        if ex is not None:
            try:
                ex.close()
            except KeyboardInterrupt:
                interrupted = True
        locks.release_all()
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        interrupted = interrupted or _SIGINT.is_set()
        _SIGINT.clear()
    return [results[i] for i in sorted(results)], interrupted


def reproduce(specs: Sequence[SystemSpec], *, scale: str = "quick", seed: int = 0,
              seeds: Sequence[int] | None = None, out: Path = Path("results"), device: str | None = None,
              force: bool = False, console: Any = None, executor: str = "local", address: str | None = None,
              workers: int | None = None, confirm: bool = True, preflight: bool = True) -> tuple[list[Result], bool]:
    """Run each system over ``seeds`` (default ``[seed]``) on ``executor``, then write
    ``out/report.html`` (and, over two or more seeds, each system's seeds summary).

    A system that declares ``DETERMINISTIC = True`` (:func:`is_deterministic`) runs the first seed
    only, with no confirmation seeds, and the console says so.

    With ``confirm`` (the default) each system that declares ``CONFIRMATION_SEEDS`` in its
    experiment module is also run on those seeds (``role="confirmation"``, ``ctx.confirmation``
    True): the claims it tuned after a look are judged there, on seeds never used while choosing,
    and only those verdicts count in the report's headline.

    Configs are resolved (and validated), each experiment's ``preflight(config)`` run
    (:func:`preflight_inputs`: external inputs opened, endpoints called once) and each run's
    requirements checked (:func:`neurips26.harness.executor.check_requirements`) before any runs,
    so a bad ``--set``, a missing model folder, a dead endpoint or a missing GPU fails fast. Returns (results of the runs that finished, in
    system-then-seed order; interrupted?).

    Raises:
        ConfigError: if any system's config is invalid or a requirement is missing.
    """
    from .report import write_report

    seeds = list(seeds) if seeds is not None else [seed]
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; allowed: {', '.join(EXECUTORS)}")
    if executor == "local":
        device = device or default_device()
    configs = [resolve_config(s.module, scale, s.overrides, s.name) for s in specs]
    for s, c in zip(specs, configs):  # optional packages (one line naming the extra), before any run
        check_packages(s.name, c)
    for s, c in zip(specs, configs):  # every external input and endpoint, before any run
        if preflight:  # (the CLI has already done this while validating; it passes False)
            preflight_inputs(s.module, c, s.name)
    commit = git_commit()
    det = {s.name for s in specs if is_deterministic(s.module)}
    if console is not None and len(seeds) > 1:
        for name in sorted(det):
            console.print(f"{name.replace('_', '-')} is deterministic: seeds do not change its paper claims "
                          f"(its experiment says why); running seed {seeds[0]} only")
    tasks = [make_task(s, c, scale=scale, seed=sd, commit=commit) for s, c in zip(specs, configs)
             for sd in (seeds[:1] if s.name in det else seeds)]
    if confirm:
        tasks += [make_task(s, c, scale=scale, seed=sd, commit=commit, role="confirmation")
                  for s, c in zip(specs, configs) if s.name not in det for sd in confirmation_seeds(s.module)]
        for i, t in enumerate(tasks):
            t.index = i
    check_requirements(tasks, executor=executor, address=address, device=device)
    results, interrupted = run_tasks(tasks, out=out, device=device, force=force, console=console,
                                     executor=executor, address=address, workers=workers)
    if len(seeds) > 1:
        for s in specs:
            mine = [r for r in results if r.system == s.name and r.role != "confirmation"]
            if len({r.seed for r in mine}) > 1:
                write_seeds_summary(mine, out)
    try:
        write_report(Path(out))
    except KeyboardInterrupt:  # the previous report.html is left intact (atomic write)
        interrupted = True
    return results, interrupted


__all__ = ["SystemSpec", "Task", "reproduce", "run_tasks", "run_one", "execute", "make_task", "resolve_config",
           "code_version", "confirmation_seeds", "is_deterministic", "preflight_inputs", "parse_seeds", "seeds_summary", "write_seeds_summary", "results_by_seed",
           "estimate_seconds", "ConfigError", "SCALES", "EXECUTORS"]
