"""Check configurations before launch: ``neurips26 reproduce --scale full --dry-run``.

A paper-scale run of the nineteen systems is some two hundred tasks on rented GPUs (the plan
counts them); a configuration that crashes an hour in wastes them. The dry run finds such crashes in seconds, without the GPUs:
for each selected system, in a child process of its own (so a hanging stage can be stopped),
it runs a list of *stages*, each under a time limit:

1. ``config``: ``Config.<scale>()`` with the ``--set`` overrides, validated; then rebuilt from its
   own dump (what a pool or Ray worker does), which reruns every cross-field check.
2. ``resources``: the config's ``resources()`` (CPUs, GPUs, memory, hours, credentials).
3. ``task``: the :class:`~neurips26.harness.runner.Task` a worker would receive, pickled and
   unpickled (what travels to a pool process or a Ray node), and its run folder name.
4. the system's own stages, from ``neurips26.<system>.full_scale.stages(config)``: typically its
   models built at full size on PyTorch's ``meta`` device (shapes and parameter counts, no
   memory), a forward pass of meta tensors through them (shape paths), and the data generators
   that run at full size in seconds. A stage it cannot check this way is declared
   :func:`unchecked` with the reason, and the plan lists it.
5. ``memory``: the estimated peak memory (from the system's stages) against the memory the
   config declares: more than declared means the task would be killed on a cluster node.

It then prints a plan: per system the tasks (seeds, plus the experiment's confirmation seeds),
declared CPUs, GPUs, memory and hours, parameter counts and estimated peak memory per task, the
stages checked and unchecked; the totals (tasks, GPU-hours, CPU-hours); and a section **you
must provide** (:func:`must_provide`): each model endpoint (model, approximate calls and output
tokens), each model server the run expects to reach (it needs a GPU of its own, counted in the
totals), and each local model or data folder with the config key that takes it. A paper-data part
that a full run would silently drop (no ``data_root``/``data_dir``/``model_path`` set) is printed
as a WARNING naming the ``--set`` that enables it. A stage that raises or runs past its limit
fails the dry run (exit 1), naming the system and the stage.

The system hook (``full_scale.py`` in each system's package)::

    from neurips26.harness.dryrun import Stage, meta_build, training_memory_gb, unchecked

    def stages(config) -> list[Stage]:
        return [Stage("model (meta)", lambda: meta_build({"field": lambda: Field(config.width)})),
                unchecked("training loop", "needs the GPU: 20 000 steps")]

A stage function returns ``None`` or a dict of facts: ``params`` ({model name: parameter
count}), ``peak_memory_gb`` (its estimate for the whole task; the plan takes the largest),
``note`` (one line shown in the plan), ``warning`` (one line: the run would go on, but not as
configured, e.g. a data set smaller than asked for; listed, does not fail the dry run).

Source: inferred: PyTorch's meta device (``torch.device("meta")`` as a context manager builds
modules without allocating their storage).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import pickle
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait as _wait
from typing import Any

from .config import ConfigError

#: Default limit of one stage in CPU seconds of its process (a loaded machine stretches wall
#: time, not CPU time; a stage looping forever spends CPU). A full-size data generator that takes
#: longer than this would cost minutes on the cluster anyway.
STAGE_LIMIT_S = 20.0
#: Limit for importing a system's experiment module (heavy libraries), CPU seconds.
IMPORT_LIMIT_S = 60.0
#: Wall-clock backstop of a stage, as a multiple of its CPU limit (catches a stage that blocks
#: without spending CPU: a lock, a socket), at least :data:`WALL_MIN_S`.
WALL_FACTOR = 10.0
WALL_MIN_S = 120.0


@dataclass
class Stage:
    """One check of a configuration, run by the dry run under a time limit.

    Attributes:
        name: what is checked, as the plan shows it (``model (meta)``, ``data generator``).
        fn: the check; returns ``None`` or a dict of facts (``params``: {name: count},
            ``peak_memory_gb``: float, ``note``: str). ``None`` for an unchecked stage.
        reason: why the stage cannot be checked in a dry run (only when ``fn`` is ``None``).
        limit_s: time limit in CPU seconds of the checking process (default
            :data:`STAGE_LIMIT_S`; off Linux, wall seconds); a wall-clock backstop of
            ``max(WALL_MIN_S, WALL_FACTOR * limit_s)`` also applies.
    """

    name: str
    fn: Callable[[], dict[str, Any] | None] | None = None
    reason: str = ""
    limit_s: float | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("Stage.name: must be non-empty")
        if self.fn is None and not self.reason:
            raise ValueError(f"Stage {self.name!r}: give fn, or a reason why it is unchecked")
        if self.limit_s is not None and not (self.limit_s > 0 and math.isfinite(self.limit_s)):
            raise ValueError(f"Stage {self.name!r}: limit_s={self.limit_s!r}; allowed: a finite number > 0")


def unchecked(name: str, reason: str) -> Stage:
    """A stage the dry run cannot check, with the reason (listed in the plan)."""
    return Stage(name, None, reason)


@dataclass
class StageReport:
    """What one stage did: ``status`` ``ok``, ``warning`` (ran, but the run would not go as
    configured), ``failed``, ``timeout`` or ``unchecked``; ``seconds`` of wall time; ``detail``:
    the error's last line, the warning, the reason it is unchecked, or the stage's note."""

    name: str
    status: str
    seconds: float = 0.0
    detail: str = ""
    error: str = ""


@dataclass
class SystemPlan:
    """The dry run of one system: its resources, tasks, facts from its stages, and stage reports.

    ``memory_gb``/``hours``/``num_cpus``/``num_gpus``/``on_device``/``on_cpu`` are as declared by
    ``resources()`` (where the stages run, in words);
    ``params`` and ``peak_memory_gb`` come from the system's stages (``None``: not estimated);
    ``cpu_s``: CPU seconds its checking process spent (``None`` if it died).
    """

    system: str
    scale: str
    tasks: int = 0
    confirmation_tasks: int = 0
    num_cpus: float = 0.0
    num_gpus: float = 0.0
    memory_gb: float | None = None
    hours: float | None = None
    credentials: tuple[str, ...] = ()
    on_device: str = ""
    on_cpu: str = ""
    params: dict[str, int] = field(default_factory=dict)
    peak_memory_gb: float | None = None
    stages: list[StageReport] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cpu_s: float | None = None
    inputs: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No stage failed or timed out."""
        return all(s.status not in ("failed", "timeout") for s in self.stages)

    @property
    def failure(self) -> StageReport | None:
        """The first failed or timed-out stage, if any."""
        return next((s for s in self.stages if s.status in ("failed", "timeout")), None)

    @property
    def all_tasks(self) -> int:
        """Tasks of the run: seeds plus confirmation seeds."""
        return self.tasks + self.confirmation_tasks


# ----------------------------------------------------------------------------- helpers for hooks

def meta_build(builders: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Build each model on PyTorch's ``meta`` device and count its parameters.

    Args:
        builders: model name → a function that constructs the ``torch.nn.Module`` (called inside
            ``with torch.device("meta")``, so its parameters take no memory).

    Returns:
        ``{"params": {name: parameter count}, "models": {name: module on meta}}``; the models
        are for :func:`meta_forward` (the dry run keeps only the counts).

    Raises:
        TypeError: a builder returned something that is not a module.
    """
    import torch

    params: dict[str, int] = {}
    models: dict[str, Any] = {}
    with torch.device("meta"):
        for name, build in builders.items():
            m = build()
            if not isinstance(m, torch.nn.Module):
                raise TypeError(f"meta_build: {name!r} built a {type(m).__name__}, expected a torch.nn.Module")
            params[name] = int(sum(p.numel() for p in m.parameters()))
            models[name] = m
    return {"params": params, "models": models}


def on_meta(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)`` with ``meta`` as torch's default device (tensors a forward
    pass creates, e.g. noise or masks, land on meta too); returns its result."""
    import torch

    with torch.device("meta"):
        return fn(*args, **kwargs)


def meta_tensor(*shape: int, dtype: Any = None) -> Any:
    """An empty tensor of ``shape`` on the ``meta`` device (float32 unless ``dtype``)."""
    import torch

    return torch.empty(*shape, device="meta", dtype=dtype or torch.float32)


def training_memory_gb(n_params: int, *, activations: float = 0.0, bytes_per: int = 4,
                       optimizer_states: int = 2, frozen: bool = False) -> float:
    """Peak training memory estimate in GB: weights, gradients, optimizer states, activations.

    Args:
        n_params: trainable (or, with ``frozen``, total) parameter count.
        activations: activation values kept for the backward pass (a count of numbers).
        bytes_per: bytes per number (4: float32).
        optimizer_states: per-parameter states of the optimizer (Adam: 2, SGD: 0).
        frozen: the parameters are not trained (weights only; no gradients or states).

    Inferred: the usual accounting of (1 + 1 + states) copies of the parameters plus stored
    activations; it ignores allocator slack and framework buffers (add a margin when comparing).
    """
    copies = 1 if frozen else 2 + optimizer_states
    return (n_params * copies + activations) * bytes_per / 1e9


# ----------------------------------------------------------------------------- child process

def _one_line(text: str) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return " ".join(lines[-1].split()) if lines else ""


def _child(conn: Any, module_name: str, system: str, scale: str, overrides: dict[str, Any],
           seed: int) -> None:
    """Run the stages of one system, reporting each as it starts and ends (runs in a child)."""
    import importlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C

    def send(*msg: Any) -> None:
        conn.send(msg)

    def stage(name: str, fn: Callable[[], Any], limit: float | None) -> tuple[bool, Any]:
        send("start", name, limit or STAGE_LIMIT_S)
        t0 = time.perf_counter()
        try:
            facts = fn()
        except Exception as exc:  # noqa: BLE001 - every failure is the dry run's finding
            send("end", StageReport(name, "failed", time.perf_counter() - t0,
                                    f"{type(exc).__name__}: {_one_line(exc) or type(exc).__name__}",
                                    traceback.format_exc()))
            return False, None
        note = facts.get("note", "") if isinstance(facts, dict) else ""
        warning = facts.get("warning", "") if isinstance(facts, dict) else ""
        send("end", StageReport(name, "warning" if warning else "ok", time.perf_counter() - t0,
                                f"{warning} ({note})" if warning and note else warning or note))
        return True, facts

    try:
        from .config import Resources
        from .runner import SystemSpec, config_resources, make_task, resolve_config

        ok, module = stage("import", lambda: {"module": importlib.import_module(module_name)}, IMPORT_LIMIT_S)
        if not ok:
            return
        module = module["module"]
        send("fact", "confirmation_tasks", len(tuple(getattr(module, "CONFIRMATION_SEEDS", ()) or ())))

        def check_config() -> dict:
            config = resolve_config(module, scale, overrides, system)
            again = module.Config.model_validate(config.model_dump())  # what a worker rebuilds
            if again != config:
                raise ConfigError(f"{system}: the {scale} config changes when rebuilt from its own dump "
                                  "(a validator rewrites a field): a worker would run another config")
            return {"config": config}

        ok, got = stage("config", check_config, None)
        if not ok:
            return
        config = got["config"]
        send("fact", "inputs", config_inputs(config))

        def check_resources() -> dict:
            res = config_resources(config, system)
            if not isinstance(res, Resources):  # config_resources raises first; kept for clarity
                raise ConfigError(f"{system}: resources() did not return Resources")
            send("fact", "resources", res)
            return {}

        if not stage("resources", check_resources, None)[0]:
            return

        def check_task() -> dict:
            task = make_task(SystemSpec(system, module, dict(overrides)), config, scale=scale, seed=seed, commit="")
            back = pickle.loads(pickle.dumps(task))
            _, rebuilt = back.load()
            if rebuilt != config:
                raise ConfigError(f"{system}: the task's config changes through pickling")
            return {"note": task.run_key}

        if not stage("task", check_task, None)[0]:
            return

        try:
            hooks = importlib.import_module(f"{module_name.rsplit('.', 1)[0]}.full_scale")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.endswith("full_scale"):
                send("end", StageReport("system stages", "unchecked", 0.0,
                                        "no full_scale.py hook: models and data generators not checked"))
                return
            raise
        ok, got = stage("list stages", lambda: {"stages": list(hooks.stages(config))}, None)
        if not ok:
            return
        for st in got["stages"]:
            if not isinstance(st, Stage):
                send("end", StageReport("list stages", "failed", 0.0,
                                        f"full_scale.stages returned a {type(st).__name__}, expected Stage"))
                return
            if st.fn is None:
                send("end", StageReport(st.name, "unchecked", 0.0, st.reason))
                continue
            ok, facts = stage(st.name, st.fn, st.limit_s)
            if not ok:
                return
            if isinstance(facts, dict):
                if facts.get("params"):
                    send("fact", "params", {str(k): int(v) for k, v in facts["params"].items()})
                if facts.get("peak_memory_gb") is not None:
                    send("fact", "peak_memory_gb", float(facts["peak_memory_gb"]))
    except BaseException:  # noqa: BLE001 - the parent records it
        send("end", StageReport("dry run", "failed", 0.0, "internal error", traceback.format_exc()))
    finally:
        try:
            import resource

            ru = resource.getrusage(resource.RUSAGE_SELF)
            send("fact", "cpu_s", ru.ru_utime + ru.ru_stime)
            send("done")
        finally:
            conn.close()


# ----------------------------------------------------------------------------- parent

@dataclass
class _Live:
    plan: SystemPlan
    proc: Any
    conn: Any
    stage: str = ""
    deadline: float = math.inf  # wall-clock backstop
    started: float = 0.0
    limit: float = STAGE_LIMIT_S  # CPU seconds
    stage_t0: float = 0.0
    cpu0: float = 0.0


def _proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) of process ``pid`` from ``/proc``, or ``None``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


_CLK_TCK = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0


def _context() -> Any:
    method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["neurips26.harness.runner", "numpy", "torch"])
    return ctx


def dry_run(specs: Sequence[Any], *, scale: str = "full", seeds: Sequence[int] = (0,), confirm: bool = True,
            workers: int | None = None, on_done: Callable[[SystemPlan], None] | None = None,
            stage_limit_s: float | None = None) -> list[SystemPlan]:
    """Run the stages of each system (a child process each, ``workers`` at a time).

    Args:
        specs: :class:`~neurips26.harness.runner.SystemSpec` of the systems (their ``overrides``
            are applied). The experiment modules must be importable by name.
        scale: ``quick`` or ``full``.
        seeds: the seeds of the planned run (tasks per system).
        confirm: count the experiments' confirmation seeds as tasks.
        workers: systems checked at once (default: this machine's cores).
        on_done: called with each system's plan as it finishes.
        stage_limit_s: overrides every stage's limit (tests).

    Returns:
        One :class:`SystemPlan` per spec, in the order given.

    Raises:
        ConfigError: unknown scale, no seeds, or ``workers < 1``.
    """
    if scale not in ("quick", "full"):
        raise ConfigError(f"--scale {scale!r}: allowed: quick, full")
    if not seeds:
        raise ConfigError("dry run: no seeds given; allowed: at least one seed")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers {workers}: allowed: an integer >= 1")
    ctx = _context()
    plans = [SystemPlan(s.name, scale, tasks=len(seeds)) for s in specs]
    pending = list(zip(specs, plans))
    live: list[_Live] = []
    cap = workers or os.cpu_count() or 1
    try:
        while pending or live:
            while pending and len(live) < cap:
                spec, plan = pending.pop(0)
                parent, child = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(child, spec.module.__name__, spec.name, scale,
                                                        dict(spec.overrides), int(seeds[0])),
                                   name=f"neurips26 dry run {spec.name}")
                proc.start()
                child.close()
                live.append(_Live(plan, proc, parent, started=time.perf_counter()))
            _wait([lv.conn for lv in live] + [lv.proc.sentinel for lv in live], timeout=0.5)
            now = time.perf_counter()
            for lv in list(live):
                finished = False
                while lv.conn.poll():
                    try:
                        msg = lv.conn.recv()
                    except (EOFError, OSError):
                        finished = True
                        break
                    finished = _handle(lv, msg, confirm, stage_limit_s) or finished
                    if finished:
                        break
                if not finished and not lv.proc.is_alive() and not lv.conn.poll():
                    code = lv.proc.exitcode
                    lv.plan.stages.append(StageReport(lv.stage or "dry run", "failed", now - lv.started,
                                                      f"the checking process died (exit code {code}) during "
                                                      f"this stage (killed for memory, or a crash in native code?)"))
                    finished = True
                elif not finished and lv.stage:
                    cpu = _proc_cpu(lv.proc.pid)
                    used = (cpu - lv.cpu0) if cpu is not None else now - lv.stage_t0
                    if used > lv.limit or now > lv.deadline:
                        lv.proc.kill()
                        what = (f"{used:.0f} CPU s" if used > lv.limit and cpu is not None
                                else f"{now - lv.stage_t0:.0f} s of wall time")
                        lv.plan.stages.append(StageReport(
                            lv.stage, "timeout", now - lv.stage_t0,
                            f"stopped after {what} (limit {lv.limit:g} CPU s): it would hang, or take far longer "
                            "at this size on the cluster"))
                        finished = True
                if finished:
                    live.remove(lv)
                    lv.proc.join(timeout=10)
                    if lv.proc.is_alive():
                        lv.proc.kill()
                    lv.conn.close()
                    if on_done:
                        on_done(lv.plan)
    finally:
        for lv in live:
            lv.proc.kill()
            lv.proc.join(timeout=10)
            lv.conn.close()
    return plans


def _handle(lv: _Live, msg: tuple, confirm: bool, stage_limit_s: float | None) -> bool:
    """Apply one message from a child to its plan; True when the child is done."""
    kind = msg[0]
    plan = lv.plan
    if kind == "start":
        lv.stage = msg[1]
        lv.limit = float(stage_limit_s or msg[2])
        lv.stage_t0 = time.perf_counter()
        lv.deadline = lv.stage_t0 + max(WALL_MIN_S, WALL_FACTOR * lv.limit)
        cpu = _proc_cpu(lv.proc.pid)
        lv.cpu0 = cpu if cpu is not None else 0.0
    elif kind == "end":
        report = msg[1]
        plan.stages.append(report)
        lv.stage, lv.deadline = "", math.inf
    elif kind == "fact":
        name, value = msg[1], msg[2]
        if name == "resources":
            plan.num_cpus, plan.num_gpus = value.num_cpus, value.num_gpus
            plan.memory_gb, plan.hours, plan.credentials = value.memory_gb, value.hours, tuple(value.credentials)
            plan.on_device, plan.on_cpu = value.on_device, value.on_cpu
        elif name == "params":
            plan.params.update(value)
        elif name == "peak_memory_gb":
            plan.peak_memory_gb = max(plan.peak_memory_gb or 0.0, value)
        elif name == "cpu_s":
            plan.cpu_s = float(value)
        elif name == "inputs":
            plan.inputs = dict(value)
        elif name == "confirmation_tasks" and confirm:
            plan.confirmation_tasks = int(value)
    elif kind == "done":
        if plan.ok and plan.peak_memory_gb is not None and plan.memory_gb is not None \
                and plan.peak_memory_gb > plan.memory_gb:
            plan.stages.append(StageReport(
                "memory", "failed", 0.0,
                f"estimated peak {plan.peak_memory_gb:.1f} GB exceeds the declared memory_gb="
                f"{plan.memory_gb:g}: a cluster node would kill the task; raise resources().memory_gb"))
        elif plan.ok and plan.peak_memory_gb is not None:
            plan.stages.append(StageReport(
                "memory", "ok" if plan.memory_gb is not None else "unchecked", 0.0,
                f"estimated peak {plan.peak_memory_gb:.2f} GB" + (f" <= declared {plan.memory_gb:g} GB"
                                                                  if plan.memory_gb is not None
                                                                  else "; no memory_gb declared")))
        return True
    return False


# ----------------------------------------------------------------------------- plan

def _fmt_count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def plan_table(plans: Sequence[SystemPlan]) -> Any:
    """A ``rich`` table of the plan: one row per system. Columns: tasks (seeds + confirmation seeds),
    declared CPUs, GPUs, memory (``mem GB``) and hours per task (``h/task``), GPU-hours of all its
    tasks, parameters (total over the system's models, and their count; :func:`print_plan` lists
    the models below the table), estimated peak memory per task (``peak GB``), stages, result."""
    from rich.table import Table

    t = Table(title="dry run: plan", title_justify="left")
    right = {"justify": "right", "no_wrap": True}
    for col, kw in (("system", {"no_wrap": True}), ("tasks", right), ("CPUs", right), ("GPUs", right),
                    ("mem GB", right), ("h/task", right), ("GPU-h", right), ("parameters", {"justify": "right"}),
                    ("peak GB", right), ("stages", {"no_wrap": True}), ("result", {"no_wrap": True})):
        t.add_column(col, **kw)
    for p in plans:
        gpu_h = "-" if not p.num_gpus else (f"{p.all_tasks * p.num_gpus * p.hours:g}" if p.hours is not None else "?")
        n_models = len(p.params)
        params = (f"{_fmt_count(sum(p.params.values()))} ({n_models} model{'s' if n_models != 1 else ''})"
                  if p.params else "-")
        n_ok = sum(s.status in ("ok", "warning") for s in p.stages)
        n_un = sum(s.status == "unchecked" for s in p.stages)
        n_warn = sum(s.status == "warning" for s in p.stages)
        fail = p.failure
        result = ("[green]ok[/]" if not n_warn else f"[yellow]ok, {n_warn} warning[/]") if fail is None \
            else f"[red]{fail.status}: {fail.name}[/]"
        tasks = str(p.tasks) + (f"+{p.confirmation_tasks}" if p.confirmation_tasks else "")
        t.add_row(p.system.replace("_", "-"), tasks, f"{p.num_cpus:g}", f"{p.num_gpus:g}",
                  "-" if p.memory_gb is None else f"{p.memory_gb:g}", "?" if p.hours is None else f"{p.hours:g}",
                  gpu_h, params, "-" if p.peak_memory_gb is None else f"{p.peak_memory_gb:.2f}",
                  f"{n_ok} ok" + (f", {n_un} unchecked" if n_un else ""), result)
    return t


def totals(plans: Sequence[SystemPlan]) -> dict[str, Any]:
    """Totals of the plan: tasks, GPU-hours (declared hours x GPUs x tasks, plus each model server's
    GPU for the hours of its system's tasks) and CPU-hours, the servers' GPUs, the paper-data
    parts a run would drop (:func:`must_provide`), and the systems whose hours are not declared
    (left out of the sums)."""
    tasks = sum(p.all_tasks for p in plans)
    gpu_h = sum(p.all_tasks * p.num_gpus * p.hours for p in plans if p.hours is not None)
    cpu_h = sum(p.all_tasks * p.num_cpus * p.hours for p in plans if p.hours is not None)
    wall_h = sum(p.all_tasks * p.hours for p in plans if p.hours is not None)
    servers = [x for x in must_provide(plans) if x.kind == "server"]
    server_h = sum(x.gpus * (x.hours or 0.0) for x in servers)
    return {"tasks": tasks, "gpu_hours": gpu_h + server_h, "cpu_hours": cpu_h, "task_hours": wall_h,
            "server_gpus": sum(x.gpus for x in servers), "server_gpu_hours": server_h,
            "dropped": [x for x in must_provide(plans) if x.dropped],
            "gpu_tasks": sum(p.all_tasks for p in plans if p.num_gpus),
            "no_hours": [p.system for p in plans if p.hours is None],
            "failed": [p.system for p in plans if not p.ok]}


#: Below this console width the plan is printed as one block per system instead of the table
#: (its eleven columns would be cut to a character or two at 80 columns).
PLAN_TABLE_MIN_WIDTH = 120


def _plan_blocks(plans: Sequence[SystemPlan], console: Any) -> None:
    """The plan table's content as one folded block per system (for narrow consoles and files):
    the same values as :func:`plan_table`, labelled, never cut."""
    table = plan_table(plans)
    names = [c.header for c in table.columns]
    cells = [list(c.cells) for c in table.columns]
    for i in range(len(plans)):
        row = [str(col[i]) for col in cells]
        console.print(f"[bold]{row[0]}[/]: " + ", ".join(f"{n} {v}" for n, v in zip(names[1:], row[1:])),
                      highlight=False, soft_wrap=False)


def print_plan(plans: Sequence[SystemPlan], console: Any, seeds: Sequence[int]) -> None:
    """Print the plan (a table on a wide console, else one block per system), the unchecked stages
    with their reasons, the totals and the failures."""
    if getattr(console, "width", PLAN_TABLE_MIN_WIDTH) >= PLAN_TABLE_MIN_WIDTH:
        console.print(plan_table(plans))
    else:
        console.print("[bold]dry run: plan[/]", highlight=False)
        _plan_blocks(plans, console)
    for p in plans:
        if p.params:
            console.print(f"  parameters: {p.system.replace('_', '-')}: "
                          + ", ".join(f"{k} {_fmt_count(v)}" for k, v in p.params.items()),
                          highlight=False, markup=False)
    for p in plans:
        where = "; ".join(x for x in (f"on the device: {p.on_device}" if p.on_device else "",
                                      f"on the CPU: {p.on_cpu}" if p.on_cpu else "") if x)
        if where:
            console.print(f"  runs: {p.system.replace('_', '-')}: {where}", highlight=False, markup=False)
    for p in plans:
        for s in p.stages:
            if s.status in ("unchecked", "warning"):
                console.print(f"  {s.status}: {p.system.replace('_', '-')} / {s.name}: {s.detail}",
                              highlight=False, markup=False)
    tot = totals(plans)
    console.print(
        f"total: {tot['tasks']} tasks ({len(seeds)} seed{'s' if len(seeds) != 1 else ''} x {len(plans)} "
        f"system{'s' if len(plans) != 1 else ''}, plus confirmation seeds, each counted at a full task's hours: an "
        f"upper bound, they rerun only their tuned claim groups); {tot['gpu_tasks']} need a GPU; "
        f"declared GPU-hours {tot['gpu_hours']:g}"
        + (f" (of which {tot['server_gpu_hours']:g} for {tot['server_gpus']:g} model server GPU(s))"
           if tot["server_gpus"] else "")
        + f", CPU-hours {tot['cpu_hours']:g}, task-hours {tot['task_hours']:g}"
        + (f"; hours not declared by {', '.join(s.replace('_', '-') for s in tot['no_hours'])} (not in the sums)"
           if tot["no_hours"] else ""), highlight=False, markup=False)
    cpu = sum(p.cpu_s or 0.0 for p in plans)
    console.print(f"the dry run's checks took {cpu:.1f} CPU s (child processes; the pool's start-up apart)",
                  highlight=False, markup=False)
    creds = sorted({c for p in plans for c in p.credentials})
    if creds:
        console.print(f"credentials the run needs: {', '.join(creds)}", highlight=False, markup=False)
    print_must_provide(plans, console)
    for p in plans:
        f = p.failure
        if f is not None:
            console.print(f"[red]FAILED[/] {p.system.replace('_', '-')}: stage {f.name!r} {f.status}: "
                          f"{f.detail}", highlight=False)


# ----------------------------------------------------------------------------- what the user must bring

#: Config fields that name something the user brings (an endpoint, a server, a local folder).
INPUT_KEYS = ("backend", "model", "base_url", "model_path", "data_root", "data_dir", "encoder_path",
              "max_tokens")
#: Config keys of local folders: a path the repository cannot ship.
FOLDER_KEYS = ("model_path", "data_root", "data_dir", "encoder_path")
#: Per system, the folder key without which a full run leaves out its paper-data part (the run
#: still goes on, on the synthetic parts only; the claim is then not checkable), and what it holds.
PAPER_DATA: dict[str, tuple[str, str]] = {
    "aigi_detection": ("data_root", "the real-image benchmark (train/ and test/, each real/ + fake/<generator>/), "
                                    "with encoder_path (a local CLIP-like encoder)"),
    "feature_learning": ("data_dir", "the user's mnist.npz, svhn.npz, cifar10.npz, cifar100.npz"),
    "counting_readout": ("model_path", "a local pretrained LM checkpoint to diagnose and repair (e.g. Qwen3-8B)"),
    "bit_mask_tuning": ("model_path", "a local pretrained LM checkpoint to mask (the paper's model)"),
}
#: Per system calling a model endpoint: approximate calls of one task from its full config, and
#: what one unit is. Estimates from the config's counts (each system's full_scale.py says the same
#: in its unchecked stage); a multi-turn unit makes several calls.
ENDPOINT_CALLS: dict[str, Callable[[Any], tuple[int, str]]] = {
    "ncp_tom": lambda c: (c.llm_instances * len(c.settings), "episodes, several calls each"),
    "search_agent_attacks": lambda c: (c.llm_questions, "agent questions, a search loop of calls each"),
    "weight_interp": lambda c: (c.llm_weights * 2 * 81, "calls"),
    "belief_search": lambda c: (c.vlm_looks, "looks, one VLM call each"),
    "text_uncanny_valley": lambda c: (c.llm_docs * len(c.llm_rates) * len(c.seeds),
                                      "documents x rates x seeds, one call each"),
}
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "[::1]")


def config_inputs(config: Any) -> dict[str, Any]:
    """The fields of ``config`` that name what a user brings (:data:`INPUT_KEYS`), with the field
    descriptions of the folder keys, and the endpoint call estimate (:data:`ENDPOINT_CALLS`) under
    ``"calls"`` when the system has one: a plain dict (it travels from the checking process)."""
    out: dict[str, Any] = {}
    fields = getattr(type(config), "model_fields", {})
    for key in INPUT_KEYS:
        if key in fields:
            out[key] = getattr(config, key)
            if key in FOLDER_KEYS:
                out[f"{key}.description"] = fields[key].description or ""
    system = type(config).__module__.split(".")[1] if type(config).__module__.count(".") >= 1 else ""
    est = ENDPOINT_CALLS.get(system)
    if est is not None:
        try:
            out["calls"] = est(config)
        except (AttributeError, TypeError):  # a renamed field: the estimate is left out, not guessed
            pass
    return out


@dataclass
class Provide:
    """One thing a full run needs from the user.

    Attributes:
        system: the system.
        kind: ``endpoint`` (a hosted model API), ``server`` (a model server the run expects at a
            local address: it needs a GPU of its own) or ``folder`` (a local model or data folder).
        what: the model name (endpoint, server) or the config key (folder).
        detail: calls and tokens, the address, or what the folder holds and its current value.
        dropped: True when the key is unset and the full run would leave out a paper-data part.
        gpus: GPUs the item needs besides the tasks' own (a server: 1).
        hours: hours the item must be up (a server: its system's task-hours).
    """

    system: str
    kind: str
    what: str
    detail: str
    dropped: bool = False
    gpus: float = 0.0
    hours: float | None = None


def must_provide(plans: Sequence[SystemPlan]) -> list[Provide]:
    """What the user must bring for the planned run, from each plan's config inputs."""
    out: list[Provide] = []
    for p in plans:
        inp = p.inputs
        name = p.system.replace("_", "-")
        backend, model, url = inp.get("backend"), inp.get("model") or "", inp.get("base_url") or ""
        if model and backend and backend not in ("stub", "local", "none", "transformers"):
            calls = inp.get("calls")
            tasks = p.all_tasks or 1
            if calls:
                n, unit = calls
                tok = (f"; output tokens up to {_fmt_count(n * tasks * int(inp['max_tokens']))} "
                       f"(max_tokens {inp['max_tokens']} x {n * tasks:,}; a multi-call unit uses more)"
                       if inp.get("max_tokens") else "; output tokens: no max_tokens in the config")
                detail = f"~{n:,} per task ({unit}), ~{n * tasks:,} over {tasks} tasks{tok}"
            else:
                detail = "calls not estimated"
            local = any(h in url for h in _LOCAL_HOSTS)
            if local:
                out.append(Provide(p.system, "server", model, f"an {'OpenAI' if backend == 'openai' else backend}-compatible server at {url} "
                                   f"(e.g. vLLM) on a GPU of its own; {detail}", gpus=1.0,
                                   hours=(p.hours or 0.0) * tasks))
            else:
                where = url or f"the {backend} API"
                cred = f" ({', '.join(p.credentials)})" if p.credentials else ""
                out.append(Provide(p.system, "endpoint", model, f"{where}{cred}; {detail}"))
        for key in FOLDER_KEYS:
            if key not in inp:
                continue
            value = inp[key]
            paper = PAPER_DATA.get(p.system)
            needed = paper is not None and paper[0] == key
            if not value and not needed:
                continue  # optional (e.g. a local model instead of an endpoint)
            what = paper[1] if needed else inp.get(f"{key}.description", "")
            state = f"set to {value}" if value else "NOT SET"
            out.append(Provide(p.system, "folder", key, f"{what} — {state} (--set {name}:{key}=PATH)",
                               dropped=needed and not value))
    return out


def print_must_provide(plans: Sequence[SystemPlan], console: Any) -> None:
    """Print the "you must provide" section and a WARNING for each paper-data part a run drops."""
    items = must_provide(plans)
    if not items:
        return
    console.print("you must provide:", highlight=False, markup=False)
    titles = {"endpoint": "model endpoints", "server": "model servers (each needs its own GPU, counted in "
              "the GPU-hours above)", "folder": "local models and data folders (config key)"}
    for kind in ("endpoint", "server", "folder"):
        rows = [x for x in items if x.kind == kind]
        if rows:
            console.print(f"  {titles[kind]}:", highlight=False, markup=False)
            for x in rows:
                console.print(f"    {x.system.replace('_', '-')}: {x.what}: {x.detail}", highlight=False, markup=False)
    for x in items:
        if x.dropped:
            console.print(f"WARNING: {x.system.replace('_', '-')}: {x.what} is not set: the full run would leave "
                          f"out its paper-data part ({PAPER_DATA[x.system][1]}); --set "
                          f"{x.system.replace('_', '-')}:{x.what}=PATH", highlight=False, markup=False)


__all__ = ["Stage", "StageReport", "SystemPlan", "unchecked", "meta_build", "meta_tensor", "on_meta", "training_memory_gb",
           "dry_run", "plan_table", "print_plan", "totals", "STAGE_LIMIT_S", "Provide", "must_provide",
           "print_must_provide", "config_inputs", "PAPER_DATA", "ENDPOINT_CALLS"]
