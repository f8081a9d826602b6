"""Where runs happen: in this process, in a local process pool, or as Ray tasks.

Every executor takes :class:`~neurips26.harness.runner.Task` objects (one per system, seed and
scale) and yields ``(task, result, files)`` as tasks finish, in completion order. The driver
(:func:`neurips26.harness.runner.run_tasks`) writes what comes back, so results are written the
same way whichever executor ran them (atomic, resumable by config + code hash):

- ``local`` (:class:`LocalExecutor`): one task after another in this process, figures written
  in place, progress bars of the system's own loops shown. Today's behaviour.
- ``pool`` (:class:`PoolExecutor`): one fresh process per task (forked from a ``forkserver`` on
  Linux, else spawned), as many at once as their declared CPUs fit in ``workers`` cores. A
  worker runs its task in a temporary folder and sends back the result and its files. A process
  per task (not a reused pool) makes a dying worker (killed for memory, a crash in native code)
  fail exactly its own task, never its neighbours'.
- ``ray`` (:class:`RayExecutor`): one Ray task per run with the config's resources
  (``num_cpus``, ``num_gpus``, ``memory`` on a cluster) and no retries, so a GPU run lands on a
  GPU node and a worker that dies is recorded as failed. Without ``address`` a local Ray instance
  starts (``num_cpus`` = ``workers`` or all cores, no dashboard, worker logs not forwarded) and
  stops with the command; with ``address`` (``HOST:PORT`` of ``ray start --head``, or
  ``ray://…``) the driver joins that cluster, ships the ``neurips26`` sources to it
  (``runtime_env.py_modules``, so workers run the driver's code and its hashes match) and only
  disconnects at the end. Ray is imported only here, and only when chosen.

Every executor runs a task pinned to the CPUs it declares (``resources().num_cpus``: the
``OMP_NUM_THREADS``-style variables, the BLAS/OpenMP pools via threadpoolctl and torch's threads,
put back afterwards in this process) and records its cost in the result (``cpu_time_s``,
``peak_rss_mb``; :class:`~neurips26.harness.context.TaskCost`). Unpinned, N one-CPU tasks on N
cores each start a torch thread per core, and those threads spin while they wait for each other:
``benchmarks/executor.py`` measured 20x the CPU per unit of work on 2 loaded cores.

A task that raises is a ``failed`` result with the worker's traceback; the others go on.
:meth:`close` cancels outstanding tasks (Ctrl-C): the finished ones were already yielded and
written by the driver.

Requirements (:func:`check_requirements`) are checked on the driver before anything runs: a
config whose ``resources()`` names GPUs needs that many GPUs visible to torch here (deferred to
the cluster with ``--executor ray --address``), and every credential it names must be set in
the environment (and is forwarded to Ray workers).
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import platform
import signal
import sys
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait as _wait
from pathlib import Path
from typing import Any

from .catalogue import install_command
from .config import ConfigError
from .context import _THREAD_VARS, TaskCost, limit_threads
from .results import RESULT_FILE, Result
from .task import EXECUTORS, Task, execute, failed_result

Finished = tuple[Task, Result, "dict[str, bytes] | None"]
#: (result.json text, {path relative to the run folder: bytes}, host name) from a worker.
WorkerOutput = tuple[str, dict[str, bytes], str]


# ----------------------------------------------------------------------------- requirements

def gpu_count() -> int:
    """GPUs torch sees on this machine (0 without torch or CUDA)."""
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except ImportError:
        return 0


def check_requirements(tasks: Sequence[Task], *, executor: str = "local", address: str | None = None,
                       device: str | None = None) -> None:
    """Refuse, before anything runs, tasks whose required device or credential is missing.

    A task needs ``resources.num_gpus`` GPUs: refused when torch here sees fewer, unless the
    tasks go to a Ray cluster (``executor="ray"`` with ``address``: Ray places them on GPU
    nodes) or ``device="cpu"`` was asked for explicitly. Every name in
    ``resources.credentials`` must be a non-empty environment variable.

    Raises:
        ConfigError: one line naming the system, what it needs and what to do.
    """
    seen: set[tuple[str, str]] = set()
    gpus: int | None = None
    for t in tasks:
        if (t.system, t.scale) in seen:
            continue
        seen.add((t.system, t.scale))
        res, name = t.resources, t.system.replace("_", "-")
        need = math.ceil(res.num_gpus)
        if need > 0 and device != "cpu" and not (executor == "ray" and address):
            gpus = gpu_count() if gpus is None else gpus
            if gpus < need:
                raise ConfigError(
                    f"{name}: the {t.scale} configuration needs {res.num_gpus:g} GPU(s) and torch sees {gpus} "
                    "here; run it on a GPU machine or a Ray cluster (--executor ray --address HOST:PORT), "
                    "or pass --device cpu to run it on the CPU anyway")
        missing = [c for c in res.credentials if not os.environ.get(c)]
        if missing:
            raise ConfigError(f"{name}: the {t.scale} configuration needs the environment variable "
                              f"{missing[0]} (a credential), which is not set; export it and rerun")


# ----------------------------------------------------------------------------- worker side

def task_threads(task: Task, total_cpus: float | None = None) -> int:
    """Threads a task may use: its declared ``num_cpus`` (rounded down, at least 1), capped at
    ``total_cpus`` (the executor's cores) when given."""
    n = max(1, int(task.resources.num_cpus))
    return max(1, min(n, int(total_cpus))) if total_cpus else n


@contextlib.contextmanager
def pinned(n: int) -> Iterator[None]:
    """Run a block with at most ``n`` threads in torch, BLAS and OpenMP; restore afterwards.

    Sets the thread environment variables (``OMP_NUM_THREADS`` …, for libraries loaded and
    processes started inside the block), the pools of loaded BLAS/OpenMP libraries
    (threadpoolctl) and torch's intra-op threads, and puts every setting back on exit. Why: two
    one-CPU tasks on two cores each starting a thread per core run four busy threads on two
    cores (measured in ``benchmarks/executor.py``).

    Raises:
        ValueError: ``n < 1``.
    """
    from threadpoolctl import threadpool_limits

    if isinstance(n, bool) or int(n) < 1:
        raise ValueError(f"pinned(n={n!r}): n must be an integer >= 1")
    saved_env = {v: os.environ.get(v) for v in _THREAD_VARS}
    torch = sys.modules.get("torch")
    saved_torch = torch.get_num_threads() if torch is not None else None
    try:
        with threadpool_limits(int(n)):
            limit_threads(int(n))
            yield
    finally:
        for v, old in saved_env.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(saved_torch or (os.cpu_count() or 1))


def run_measured(task: Task, run_dir: Path, *, device: str | None, threads: int, progress: Any = None) -> Result:
    """:func:`~neurips26.harness.runner.execute` pinned to ``threads`` threads, with its cost.

    The result carries ``cpu_time_s`` and ``peak_rss_mb`` (:class:`TaskCost`). Every executor
    runs its tasks through this function.
    """
    with pinned(threads), TaskCost() as cost:
        result = execute(task, run_dir, device=device, progress=progress)
    result.cpu_time_s, result.peak_rss_mb = cost.cpu_time_s, cost.peak_rss_mb
    return result


def worker_entry(task: Task, device: str | None) -> WorkerOutput:
    """Run ``task`` in a temporary folder on a worker; return its result and files.

    Pins BLAS/OpenMP and torch threads to the task's declared CPUs (so tasks sharing a machine
    do not oversubscribe it) and measures its CPU time and peak memory. ``device=None``: the
    worker's default (cuda if its torch sees a GPU). Used by the process pool and by Ray.
    """
    os.environ.setdefault("MPLBACKEND", "Agg")
    with tempfile.TemporaryDirectory(prefix="neurips26-task-") as tmp:
        run_dir = Path(tmp) / task.run_key
        run_dir.mkdir()
        result = run_measured(task, run_dir, device=device, threads=task_threads(task))
        files = {p.relative_to(run_dir).as_posix(): p.read_bytes()
                 for p in sorted(run_dir.rglob("*")) if p.is_file() and p.name != RESULT_FILE}
    return result.to_json(), files, platform.node()


def _from_worker(task: Task, output: WorkerOutput) -> Finished:
    text, files, host = output
    try:
        result = Result.from_json(text)
    except ValueError as exc:
        return task, failed_result(task, f"the worker on {host} returned an unreadable result: {exc}"), None
    if host and host != platform.node():
        result.environment.setdefault("host", host)
    return task, result, files


def _pool_child(conn: Any, task: Task, device: str | None) -> None:
    """Entry point of a pool process: run the task, send ("ok", output) or ("error", traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C and stops workers
    try:
        conn.send(("ok", worker_entry(task, device)))
    except BaseException:  # noqa: BLE001 - everything goes back to the driver as text
        try:
            conn.send(("error", traceback.format_exc()))
        except Exception:  # noqa: BLE001 - the driver sees the process die instead
            pass
    finally:
        conn.close()


# ----------------------------------------------------------------------------- executors

class LocalExecutor:
    """Run tasks one after another in this process (figures written in place).

    Each task runs pinned to its declared CPUs (at most this machine's cores), as in the pool
    and on Ray, so a task's speed does not depend on the executor.
    """

    name = "local"

    def __init__(self) -> None:
        self.total_cpus = float(os.cpu_count() or 1)
        self._current = ""

    def describe(self) -> str:
        return "in this process"

    def running(self) -> list[str]:
        return [self._current] if self._current else []

    def run(self, tasks: Sequence[Task], *, out: Path, device: str | None, progress: Any = None,
            on_start: Callable[[str], None] | None = None) -> Iterator[Finished]:
        for task in tasks:
            self._current = task.label
            if on_start:
                on_start(task.label)
            result = run_measured(task, Path(out) / task.system / task.run_key, device=device,
                                  threads=task_threads(task, self.total_cpus), progress=progress)
            self._current = ""
            yield task, result, None

    def close(self) -> None:
        pass


@dataclass
class _Live:
    task: Task
    proc: Any
    conn: Any
    cpus: float
    started: float


class PoolExecutor:
    """A process per task, as many at once as their CPUs fit in ``workers`` cores.

    Args:
        workers: cores to fill (default: all of this machine's). A task declaring more CPUs
            than that still runs, alone.
    """

    name = "pool"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ConfigError(f"--workers {workers}: allowed: an integer >= 1")
        self.total_cpus = float(workers or os.cpu_count() or 1)
        method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
        self._ctx = mp.get_context(method)
        if method == "forkserver":  # children fork from a server with the spine already imported
            self._ctx.set_forkserver_preload(["neurips26.harness.executor", "numpy", "torch", "matplotlib.pyplot"])
        self._live: list[_Live] = []

    def describe(self) -> str:
        return f"process pool on {self.total_cpus:g} cores"

    def running(self) -> list[str]:
        return [lv.task.label for lv in self._live]

    def _start(self, task: Task, device: str | None) -> None:
        parent, child = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(target=_pool_child, args=(child, task, device),
                                 name=f"neurips26 {task.label}")
        proc.start()
        child.close()
        self._live.append(_Live(task, proc, parent, min(task.resources.num_cpus, self.total_cpus),
                                time.perf_counter()))

    def run(self, tasks: Sequence[Task], *, out: Path, device: str | None, progress: Any = None,
            on_start: Callable[[str], None] | None = None) -> Iterator[Finished]:
        pending = deque(tasks)
        while pending or self._live:
            while pending and (not self._live or sum(lv.cpus for lv in self._live)
                               + min(pending[0].resources.num_cpus, self.total_cpus) <= self.total_cpus + 1e-9):
                self._start(pending.popleft(), device)
                if on_start:
                    on_start(", ".join(self.running()))
            _wait([lv.conn for lv in self._live] + [lv.proc.sentinel for lv in self._live], timeout=1.0)
            for lv in list(self._live):
                if lv.conn.poll():
                    try:
                        kind, payload = lv.conn.recv()
                    except (EOFError, OSError):
                        kind, payload = "died", None
                elif not lv.proc.is_alive():
                    kind, payload = "died", None
                else:
                    continue
                self._live.remove(lv)
                lv.conn.close()
                lv.proc.join(timeout=10)
                if kind == "ok":
                    yield _from_worker(lv.task, payload)
                elif kind == "error":
                    yield lv.task, failed_result(lv.task, f"the worker failed outside the system's run:\n{payload}"), None
                else:
                    code = lv.proc.exitcode
                    how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
                    yield lv.task, failed_result(
                        lv.task, f"the worker process died ({how}) after "
                                 f"{time.perf_counter() - lv.started:.1f} s without returning a result "
                                 "(killed for memory, or a crash in native code?)"), None

    def close(self) -> None:
        """Stop every running worker (their tasks write nothing)."""
        for lv in self._live:
            if lv.proc.is_alive():
                lv.proc.kill()
        for lv in self._live:
            lv.proc.join(timeout=10)
            lv.conn.close()
        self._live.clear()


class RayExecutor:
    """One Ray task per run, with the run's declared resources and no retries.

    Args:
        address: a Ray cluster to join (``HOST:PORT`` or ``ray://HOST:PORT``); ``None`` starts
            a local instance that stops with :meth:`close`. If Ray is already initialised in
            this process it is used as it is and left running.
        workers: CPUs of the local instance (default: all cores); ignored with ``address``.
        credentials: environment variables forwarded to the workers (API keys the tasks need).
        modules: names of the tasks' experiment modules; with ``address``, the top-level
            packages of those outside ``neurips26`` (a user's own system) are shipped too.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None,
                 credentials: dict[str, str] | None = None, modules: Sequence[str] = ()) -> None:
        if workers is not None and workers < 1:
            raise ConfigError(f"--workers {workers}: allowed: an integer >= 1")
        try:
            import ray
        except ImportError:
            raise ConfigError(f"--executor ray needs Ray: {install_command('cluster')}") from None
        import logging

        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        self._ray = ray
        self.address = address
        self._owns = not ray.is_initialized()
        env = {"MPLBACKEND": "Agg", **(credentials or {})}
        if self._owns:
            if address:
                import neurips26

                runtime_env = {"env_vars": env, "py_modules": [str(Path(neurips26.__file__).parent)]
                               + _module_sources(modules)}
                try:
                    ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                             logging_level=logging.ERROR)
                except (ConnectionError, RuntimeError, ValueError) as exc:
                    raise ConfigError(f"--address {address!r}: cannot join the Ray cluster ({exc}); with "
                                      "Ray's token authentication (Ray >= 2.59) set RAY_AUTH_MODE=token and "
                                      "RAY_AUTH_TOKEN to the head's `ray get-auth-token`".replace("\n", " ")) from None
            else:  # workers import what the driver can: the driver's sys.path
                path = [p for p in sys.path if p] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
                runtime_env = {"env_vars": {**env, "PYTHONPATH": os.pathsep.join(dict.fromkeys(path))}}
                try:
                    # address="local": a new instance even when another cluster runs on this machine
                    # (a bare ray.init() would join the one it finds in /tmp/ray)
                    ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                             log_to_driver=False,
                             logging_level=logging.ERROR, runtime_env=runtime_env)
                except Exception as exc:  # noqa: BLE001 - Ray raises many kinds; one line for the user
                    raise ConfigError(f"--executor ray: cannot start a local Ray instance "
                                      f"({type(exc).__name__}: {exc})".replace("\n", " ")) from None
        self.local = not address and self._owns
        self.total_cpus = float(ray.cluster_resources().get("CPU", 1.0))
        self._remote = ray.remote(worker_entry)
        self._refs: dict[Any, Task] = {}

    def describe(self) -> str:
        where = f"Ray cluster at {self.address}" if self.address else "local Ray"
        return f"{where}, {self.total_cpus:g} CPUs"

    def running(self) -> list[str]:
        return [t.label for t in self._refs.values()]

    def options(self, task: Task, device: str | None) -> dict[str, Any]:
        """Ray task options from the task's resources (capped to a local instance's CPUs)."""
        res = task.resources
        cpus = min(res.num_cpus, self.total_cpus) if self.local else res.num_cpus
        opts: dict[str, Any] = {"num_cpus": cpus, "num_gpus": 0 if device == "cpu" else res.num_gpus,
                                "max_retries": 0, "name": task.label}
        if not self.local and res.memory_gb:
            opts["memory"] = int(res.memory_gb * 1024 ** 3)
        return opts

    def run(self, tasks: Sequence[Task], *, out: Path, device: str | None, progress: Any = None,
            on_start: Callable[[str], None] | None = None) -> Iterator[Finished]:
        ray = self._ray
        for task in tasks:
            self._refs[self._remote.options(**self.options(task, device)).remote(task, device)] = task
        if on_start:
            on_start(f"{len(tasks)} tasks on {self.describe()}")
        while self._refs:
            done, _ = ray.wait(list(self._refs), num_returns=1, timeout=1.0)
            for ref in done:
                task = self._refs.pop(ref)
                try:
                    output = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    yield task, failed_result(task, f"the Ray task failed ({type(exc).__name__}):\n{exc}"), None
                    continue
                yield _from_worker(task, output)

    def close(self) -> None:
        """Cancel outstanding tasks; stop the local instance (or disconnect from the cluster)."""
        ray = self._ray
        for ref in list(self._refs):
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - already finished or gone
                pass
        self._refs.clear()
        if self._owns and ray.is_initialized():
            ray.shutdown()


def make_executor(kind: str, *, address: str | None = None, workers: int | None = None,
                  tasks: Sequence[Task] = ()) -> LocalExecutor | PoolExecutor | RayExecutor:
    """The executor named ``kind`` (``local``, ``pool`` or ``ray``).

    Raises:
        ConfigError: unknown kind, ``address`` without ``ray``, Ray missing or unreachable.
    """
    if kind not in EXECUTORS:
        raise ConfigError(f"--executor {kind!r}: allowed: {', '.join(EXECUTORS)}")
    if address and kind != "ray":
        raise ConfigError(f"--address {address!r} needs --executor ray")
    if kind == "local":
        return LocalExecutor()
    if kind == "pool":
        return PoolExecutor(workers)
    credentials = {c: os.environ[c] for t in tasks for c in t.resources.credentials if os.environ.get(c)}
    return RayExecutor(address, workers, credentials, modules=[t.module_name for t in tasks])


def _module_sources(modules: Sequence[str]) -> list[str]:
    """Folders (packages) or files (single modules) of the top-level packages of ``modules`` other
    than ``neurips26``: what a Ray cluster's workers need besides the neurips26 sources."""
    import importlib.util

    out: list[str] = []
    for top in sorted({m.split(".", 1)[0] for m in modules} - {"neurips26"}):
        spec = importlib.util.find_spec(top)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            out.append(str(Path(list(spec.submodule_search_locations)[0])))
        elif spec.origin and spec.origin.endswith(".py"):
            out.append(spec.origin)
    return out


__all__ = ["LocalExecutor", "PoolExecutor", "RayExecutor", "make_executor", "check_requirements",
           "worker_entry", "gpu_count"]
