"""A time-boxed check of full configurations: ``neurips26 fullcheck SYSTEM... --budget-minutes N``.

A paper-scale run is hours per task. Before launching one, a user wants to see in minutes
whether it is real: does the work reach the device, how fast does each stage go, how much
device memory does it take, and when would it end. For each selected system this module runs
its (full) configuration in a child process on the requested device for at most the budget,
then stops it (terminate, then kill) and reports, from what the run itself announced:

- per stage (each ``ctx.track`` loop of the system, :class:`~neurips26.harness.context.LineProgress`):
  steps done of the total, throughput in steps per second, elapsed time and the stage's ETA;
- device memory: ``torch.cuda.max_memory_allocated`` on a CUDA device, else the process's peak
  resident memory (``VmHWM``), sampled every second;
- device utilisation (``torch.cuda.utilization``, which needs NVIDIA's ``pynvml``) where available;
- the run's ETA: its wall time when it finished inside the budget, else a lower bound: elapsed
  plus the running stages' ETAs (stages not started yet are not known), next to the hours its
  config declares (``resources().hours``).

Nothing is written to a results folder (the run folder is temporary): a check never passes for
a finished run. Source: inferred: the protocol of :mod:`neurips26.harness.dryrun` (a child
process per system, stopped on a limit).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .context import LineProgress, _duration
from .task import Task, execute

#: Seconds between snapshots the child sends (stages, memory, utilisation).
SNAPSHOT_S = 1.0


@dataclass
class StageReport:
    """One stage as the check saw it: ``steps`` of ``total`` (``None``: unknown) in ``elapsed_s``
    seconds, ``rate`` steps/s, ``eta_s`` seconds left at that rate (``None``: unknown), ``done``."""

    name: str
    steps: float
    total: float | None
    elapsed_s: float
    rate: float
    eta_s: float | None
    done: bool


@dataclass
class SystemCheck:
    """What the full-scale check of one system measured.

    Attributes:
        system: system name; ``scale``/``device``: what ran.
        outcome: ``finished`` (inside the budget; ``status`` is the run's ``ok``/``failed``),
            ``budget`` (stopped at the budget), ``died`` (the child process ended without a
            result), ``error`` (could not start: ``error`` says why).
        wall_s: seconds the check ran.
        stages: every stage seen, in start order.
        memory_bytes: peak device memory (``memory_kind`` ``cuda``) or peak RSS (``rss``).
        util_mean / util_max: device utilisation in percent over the samples (``None``: not available).
        declared_hours: the config's ``resources().hours`` (``None``: not declared).
        error: the run's last error line (a failed run) or why the check could not run.
    """

    system: str
    scale: str
    device: str
    outcome: str = "error"
    status: str = ""
    wall_s: float = 0.0
    stages: list[StageReport] = field(default_factory=list)
    memory_bytes: int | None = None
    memory_kind: str = ""
    util_mean: float | None = None
    util_max: float | None = None
    declared_hours: float | None = None
    error: str = ""
    forward_devices: dict[str, int] = field(default_factory=dict)

    @property
    def reached_device(self) -> bool | None:
        """For a non-CPU ``device``: whether any module's forward pass ran with its parameters on
        that device type (``None``: the device is the CPU, or no module ran a forward pass)."""
        kind = self.device.split(":")[0]
        if kind == "cpu" or not self.forward_devices:
            return None
        return self.forward_devices.get(kind, 0) > 0

    @property
    def eta_s(self) -> float | None:
        """The whole run's expected wall time in seconds: the wall time when it finished, else
        elapsed plus the running stages' ETAs (a lower bound: later stages are unknown);
        ``None`` when a running stage's ETA is unknown."""
        if self.outcome == "finished":
            return self.wall_s
        running = [s.eta_s for s in self.stages if not s.done]
        if any(e is None for e in running):
            return None
        return self.wall_s + sum(running)

    def lines(self) -> list[str]:
        """The report of this system, one line each (stages indented)."""
        name = self.system.replace("_", "-")
        if self.outcome == "error":
            return [f"{name} ({self.scale}, {self.device}): could not run: {self.error}"]
        what = {"finished": f"finished in {_duration(self.wall_s)} ({self.status})",
                "budget": f"stopped at the budget after {_duration(self.wall_s)}",
                "died": f"the process died after {_duration(self.wall_s)}"}[self.outcome]
        out = [f"{name} ({self.scale}, {self.device}): {what}"]
        if self.error:
            out.append(f"  error: {self.error}")
        if not self.stages:
            out.append("  no stage reported progress (the system has no ctx.track loop in what ran)")
        for s in self.stages:
            total = "?" if s.total is None else f"{s.total:g}"
            state = "done" if s.done else f"running, ETA {_duration(s.eta_s) if s.eta_s is not None else '?'}"
            out.append(f"  stage {s.name!r}: {s.steps:g}/{total} in {_duration(s.elapsed_s)}, "
                       f"{s.rate:.3g} steps/s ({state})")
        if self.memory_bytes is not None:
            how = "torch.cuda.max_memory_allocated" if self.memory_kind == "cuda" else "peak RSS of the process"
            out.append(f"  memory: {self.memory_bytes / 2**30:.3g} GiB ({how})")
        util = ("not available (needs pynvml)" if self.util_mean is None
                else f"mean {self.util_mean:.0f} %, max {self.util_max:.0f} %")
        if self.device.startswith("cuda"):
            out.append(f"  device utilisation: {util}")
        if self.forward_devices:
            census = ", ".join(f"{k} {v:,}" for k, v in sorted(self.forward_devices.items()))
            verdict = {True: "", None: "",
                       False: f" — NOT ON {self.device}: the modules ran where they were built (a full config "
                              "that never moves its models to ctx.device)"}[self.reached_device]
            out.append(f"  torch module forward passes by parameter device: {census}{verdict}")
        else:
            out.append("  torch module forward passes: none seen (no torch model ran, or the work is not torch)")
        eta = self.eta_s
        declared = f"; declared {self.declared_hours:g} h" if self.declared_hours else ""
        if self.outcome == "finished":
            out.append(f"  run ETA: {_duration(self.wall_s)} (measured){declared}")
        elif eta is None:
            out.append(f"  run ETA: unknown (a running stage has no total or no step done yet){declared}")
        else:
            out.append(f"  run ETA: at least {_duration(eta)} (elapsed + running stages; later stages "
                       f"not seen yet){declared}")
        return out


# ----------------------------------------------------------------------------- child side

class _Recorder(LineProgress):
    """A silent :class:`LineProgress` whose stages the child sends to the parent."""

    def __init__(self) -> None:
        import io

        super().__init__("", every_s=3600.0, stream=io.StringIO())

    def snapshot(self) -> list[dict[str, Any]]:
        now = time.perf_counter()
        with self._lock:
            return [asdict(StageReport(s.name, s.steps, s.total, s.elapsed(now), s.rate(now),
                                       None if math.isinf(s.eta(now)) else s.eta(now), s.ended is not None))
                    for s in self.stages]


def _peak_rss_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            m = re.search(r"^VmHWM:\s+(\d+)\s+kB", fh.read(), re.M)
        return int(m.group(1)) * 1024 if m else None
    except OSError:
        import resource
        import sys

        v = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(v if sys.platform == "darwin" else v * 1024)


def _device_sampler(device: str) -> Callable[[], tuple[int | None, str, float | None]]:
    """A function giving (peak memory bytes, ``cuda``/``rss``, utilisation % or ``None``)."""
    torch = None
    if device.startswith("cuda"):
        try:
            import torch as _torch

            torch = _torch if _torch.cuda.is_available() else None
        except ImportError:
            torch = None

    def sample() -> tuple[int | None, str, float | None]:
        if torch is None:
            return _peak_rss_bytes(), "rss", None
        dev = torch.device(device)
        try:
            util = float(torch.cuda.utilization(dev))
        except Exception:  # noqa: BLE001 - pynvml missing or no NVML: not available
            util = None
        return int(torch.cuda.max_memory_allocated(dev)), "cuda", util

    return sample


class ForwardCensus:
    """Count torch module forward passes by the device type of the module's own parameters.

    A global forward pre-hook (``torch.nn.modules.module.register_module_forward_pre_hook``)
    sees every ``nn.Module.__call__`` in the process; modules without parameters of their own
    (containers, activations) are not counted, so a ``Sequential`` of three ``Linear`` counts
    three. This is how the full-scale check tells a run that reached the device from one that
    built its models on the CPU and never moved them (GPU utilisation 0 %, 4 MiB of device memory).

    Use as a context manager; ``counts`` maps a device type (``"cpu"``, ``"cuda"``, ``"meta"``)
    to the number of forward passes. Thread-safe enough for counting (an int add under the GIL).

    Source: inferred: PyTorch's documented global module hooks.
    """

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._handle = None

    def _hook(self, module: Any, args: Any) -> None:
        p = next(module.parameters(recurse=False), None)
        if p is not None:
            kind = p.device.type
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def __enter__(self) -> "ForwardCensus":
        try:
            from torch.nn.modules.module import register_module_forward_pre_hook
        except ImportError:  # torch missing: nothing to count
            return self
        self._handle = register_module_forward_pre_hook(self._hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None


def _child(conn: Any, task: Task, device: str, run_dir: str) -> None:
    """Entry point of the check's child process: run the task (pinned to its declared CPUs) in
    ``run_dir``, send snapshots, then the end."""
    import signal

    from .executor import pinned, task_threads

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the child
    os.environ.setdefault("MPLBACKEND", "Agg")
    recorder = _Recorder()
    census = ForwardCensus()
    sample = _device_sampler(device)
    stop = threading.Event()
    utils: list[float] = []
    lock = threading.Lock()

    def send(kind: str, extra: dict[str, Any] | None = None) -> None:
        mem, mem_kind, _ = sample()
        msg = {"stages": recorder.snapshot(), "memory_bytes": mem, "memory_kind": mem_kind,
               "utils": list(utils), "forward_devices": dict(census.counts), **(extra or {})}
        with lock:
            try:
                conn.send((kind, msg))
            except (OSError, ValueError, BrokenPipeError):
                pass

    def loop() -> None:
        while not stop.wait(SNAPSHOT_S):
            util = sample()[2]
            if util is not None:
                utils.append(util)
            send("snapshot")

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        with pinned(task_threads(task)), census:
            result = execute(task, Path(run_dir), device=device, progress=recorder)
        last = result.error.strip().splitlines()[-1] if result.error.strip() else ""
        stop.set()
        send("done", {"status": result.status, "error": last})
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as one line
        stop.set()
        send("done", {"status": "failed", "error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


# ----------------------------------------------------------------------------- parent side

def _apply(check: SystemCheck, msg: dict[str, Any]) -> None:
    check.stages = [StageReport(**s) for s in msg.get("stages", [])]
    if msg.get("memory_bytes") is not None:
        check.memory_bytes = int(msg["memory_bytes"])
        check.memory_kind = str(msg.get("memory_kind", ""))
    if msg.get("forward_devices"):
        check.forward_devices = {str(k): int(v) for k, v in msg["forward_devices"].items()}
    utils = msg.get("utils") or []
    if utils:
        check.util_mean, check.util_max = sum(utils) / len(utils), max(utils)


def check_one(task: Task, *, device: str, budget_s: float, declared_hours: float | None = None,
              on_line: Callable[[str], None] | None = None) -> SystemCheck:
    """Run ``task`` in a child process for at most ``budget_s`` seconds and measure it.

    ``on_line`` receives a line whenever a stage starts or ends (progress while it runs).

    Raises:
        ValueError: ``budget_s`` not a finite number > 0.
    """
    if not (budget_s > 0 and math.isfinite(budget_s)):
        raise ValueError(f"budget_s={budget_s!r}; allowed: a finite number of seconds > 0")
    check = SystemCheck(task.system, task.scale, device, declared_hours=declared_hours)
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    parent, child = ctx.Pipe(duplex=False)
    tmp = tempfile.mkdtemp(prefix="neurips26-fullcheck-")  # removed here, whatever the child did
    proc = ctx.Process(target=_child, args=(child, task, device, str(Path(tmp) / task.run_key)),
                       name=f"neurips26 fullcheck {task.label}")
    t0 = time.perf_counter()
    proc.start()
    child.close()
    seen: dict[str, bool] = {}
    outcome = "budget"
    try:
        while True:
            left = budget_s - (time.perf_counter() - t0)
            if left <= 0:
                break
            if parent.poll(min(left, 0.5)):
                try:
                    kind, msg = parent.recv()
                except (EOFError, OSError):
                    outcome = "died"
                    break
                _apply(check, msg)
                for s in check.stages:
                    state = "done" if s.done else "started"
                    if seen.get(s.name) != s.done and on_line is not None:
                        on_line(f"{task.label}: stage {s.name!r} {state}")
                    seen[s.name] = s.done
                if kind == "done":
                    outcome, check.status, check.error = "finished", msg.get("status", ""), msg.get("error", "")
                    break
            elif not proc.is_alive():
                outcome = "died"
                break
    finally:
        check.wall_s = time.perf_counter() - t0
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=10)
        parent.close()
        shutil.rmtree(tmp, ignore_errors=True)
    check.outcome = outcome
    if outcome == "died":
        check.error = f"exit code {proc.exitcode}"
    return check


def total_lines(checks: Sequence[SystemCheck], tasks_per_system: dict[str, int]) -> list[str]:
    """The plan's ETA: per system run ETA x its tasks (seeds and confirmation seeds), summed,
    on one device one task after another; systems without an ETA are named."""
    known, unknown = 0.0, []
    for c in checks:
        eta = c.eta_s
        if eta is None or c.outcome in ("error", "died"):
            unknown.append(c.system.replace("_", "-"))
            continue
        known += eta * tasks_per_system.get(c.system, 1)
    n = sum(tasks_per_system.get(c.system, 1) for c in checks)
    line = f"whole plan ({n} tasks, one after another on one device): at least {_duration(known)}"
    return [line + (f"; unknown for {', '.join(unknown)}" if unknown else "")]


def write_json(checks: Sequence[SystemCheck], path: Path) -> Path:
    """Write the checks as JSON (with each system's ``eta_s``) to ``path``; returns it."""
    from .results import atomic_write_text

    data = [{**asdict(c), "eta_s": c.eta_s} for c in checks]
    atomic_write_text(Path(path), json.dumps(data, indent=2, allow_nan=False))
    return Path(path)


__all__ = ["check_one", "ForwardCensus", "SystemCheck", "StageReport", "total_lines", "write_json", "SNAPSHOT_S"]
