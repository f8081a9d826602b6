"""Benchmark of the executors: 4 CPU-bound one-CPU tasks of about 10 s each, run one after another
in process (``local``), in a local process pool and on a local Ray instance; speed-ups over the
sequential run, Ray's start-up apart.

Each task is a tiny experiment that multiplies 256 x 256 float32 matrices with torch (a
synthetic CPU-bound load; torch would use a thread per core unless pinned) and declares
``num_cpus=1``; it runs through the real runner (results written, resume checked), so the times
include everything a user waits for. Two controls show where time goes:

- ``pool, unpinned``: ``cores`` tasks at a tenth of the work each, each forcing torch back to a
  thread per core inside the task (what a task's torch does when nothing pins it): N tasks on N
  cores then run N² threads that spin while waiting for each other. Printed as its slow-down per
  unit of work against the pinned pool.
- overhead per task: the median round trip of one empty task at a time.

On a machine shared with other work the wall times are inflated and the ratios are too, by how
much the others take. The benchmark therefore also prints, per run, the tasks' CPU seconds
(``cpu_time_s`` of their results: the work done) and the cores they obtained (CPU / wall), with
the machine's load from others over the run (``/proc/stat`` busy time minus ours), and a
CPU-normalised speed-up: ``min(cores, tasks)`` x (the sequential run's task CPU / this run's): the
speed-up if the CPU work were the only cost. It is blind to idle gaps (start-up, a tail of
unequal tasks), so it is an upper bound of the idle-machine speed-up; it drops below the ideal
when running tasks side by side costs extra CPU (threads spinning, cache and memory contention).
Read the wall ratios on an idle machine and the CPU-normalised ones on a busy one.

Every printed comparison is also recorded (``record()`` of ``_timing.py``) in
``benchmarks/results/executor.json``, each as ours / baseline / ratio = baseline / ours with its
clock; the notes carry the cores obtained and the load from others, the record the machine and the
load average. ``scripts/docs_snapshot.py`` turns it into the table of
``docs/guide/seeds-sweeps-clusters.md``. Rows: each parallel executor against the sequential run
(wall, and CPU-normalised: ours = this run's task CPU / ideal, baseline = the sequential task CPU);
the pinned pool against the unpinned control per unit of work (wall and CPU; the ratio is the
unpinned slow-down); the empty-task round trip of the pool and Ray against in process (per-task
overhead; below 1 when they cost more); the one-off costs (the pool's first task, Ray's start and
first workers) against the first in-process task; a resume of finished tasks against running them.

Run: ``.venv/bin/python benchmarks/executor.py [--seconds 10] [--cpus 2] [--skip-ray]``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _timing import record

os.environ.setdefault("MPLBACKEND", "Agg")

TASK_MODULE = '''
import os

import torch
from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources


class Config(ExperimentConfig):
    reps: int = Field(40, ge=0, le=10_000_000, description="256 x 256 matrix products")
    unpinned: bool = Field(False, description="use a torch thread per core whatever the executor set")

    def resources(self):
        return Resources(num_cpus=1)


def run(config, ctx):
    if config.unpinned:
        torch.set_num_threads(os.cpu_count() or 1)
    g = torch.Generator().manual_seed(ctx.seed)
    a = torch.randn(256, 256, generator=g) / 16
    b = a.clone()
    for _ in range(config.reps):
        b = torch.tanh(a @ b)
    return Outcome(metrics={"total": float(b.sum()), "threads": torch.get_num_threads()},
                   claims=[C.check("ran", "the task ran", measured=config.reps, holds=True, tolerance="ran",
                                   reason="benchmark", kind="check", source="inferred: benchmark")])
'''


def _machine_busy() -> float:
    """Busy CPU seconds of the whole machine so far (``/proc/stat``), or NaN off Linux."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except OSError:
        return float("nan")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    from rich.console import Console

    from neurips26.harness.runner import SystemSpec, make_task, resolve_config, run_tasks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per task (calibrated at 1 thread)")
    ap.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="cores for the pool and Ray")
    ap.add_argument("--tasks", type=int, default=4, help="number of tasks")
    ap.add_argument("--skip-ray", action="store_true", help="leave Ray out")
    ap.add_argument("--skip-unpinned", action="store_true", help="leave the unpinned control out")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="n26bench-"))
    (tmp / "n26bench_burn.py").write_text(TASK_MODULE)
    sys.path.insert(0, str(tmp))
    module = importlib.import_module("n26bench_burn")
    quiet = Console(file=open(os.devnull, "w"))
    n = args.tasks

    def tasks(reps: int, count: int, **extra):
        spec = SystemSpec("bench_burn", module, {"reps": reps, **extra})
        config = resolve_config(module, "quick", spec.overrides, "bench_burn")
        return [make_task(spec, config, scale="quick", seed=s, commit="") for s in range(count)]

    def timed(executor: str, reps: int, count: int, out: Path, **extra) -> dict:
        busy0, t0 = _machine_busy(), time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):  # the runner's per-task lines
            results, _ = run_tasks(tasks(reps, count, **extra), out=out, device="cpu", console=quiet,
                                   executor=executor, workers=args.cpus)
        wall, busy = time.perf_counter() - t0, _machine_busy() - busy0
        assert len(results) == count and all(r.status == "ok" for r in results), [r.error for r in results]
        cpu = sum(r.cpu_time_s or 0.0 for r in results)
        return {"wall": wall, "cpu": cpu, "cores": cpu / wall, "others": max(0.0, busy - cpu) / wall,
                "threads": sorted({r.metrics.get("threads") for r in results})}

    # calibrate: CPU seconds of one product at one thread
    import torch

    torch.set_num_threads(1)
    a = torch.randn(256, 256) / 16
    b = a.clone()
    for _ in range(50):
        b = torch.tanh(a @ b)
    c0 = time.process_time()
    for _ in range(400):
        b = torch.tanh(a @ b)
    per = (time.process_time() - c0) / 400
    reps = max(1, int(args.seconds / per))
    print(f"{n} tasks x {reps} products of 256 x 256 float32 (about {args.seconds:g} CPU s each at 1 thread), "
          f"{args.cpus} cores (machine: {os.cpu_count()}), load average before: "
          f"{os.getloadavg()[0]:.2f}")

    # one-time start-up costs, measured apart
    cold_local = timed("local", 0, 1, tmp / "cold-local")["wall"]
    cold_pool = timed("pool", 0, 1, tmp / "cold-pool")["wall"]
    rows: dict[str, dict] = {}
    ray_ex, ray_start, cold_ray = None, float("nan"), float("nan")
    try:
        rows["sequential (in process)"] = timed("local", reps, n, tmp / "seq")
        rows["process pool"] = timed("pool", reps, n, tmp / "pool")
        control = None
        if not args.skip_unpinned:  # a tenth of the work: unpinned runs can be 20x slower
            control = timed("pool", max(1, reps // 10), args.cpus, tmp / "pool-unpinned", unpinned=True)
        if not args.skip_ray:
            from neurips26.harness.executor import RayExecutor

            t0 = time.perf_counter()
            ray_ex = RayExecutor(workers=args.cpus)  # started here: run_tasks below reuses the instance
            ray_start = time.perf_counter() - t0
            cold_ray = timed("ray", 0, args.cpus, tmp / "cold-ray")["wall"]  # first worker per CPU
            rows["local Ray (warm)"] = timed("ray", reps, n, tmp / "ray")
        t0 = time.perf_counter()
        with contextlib.redirect_stderr(io.StringIO()):
            run_tasks(tasks(reps, n), out=tmp / "pool", device="cpu", console=quiet, executor="pool")
        resume = time.perf_counter() - t0
        local_rt = [timed("local", 0, 1, tmp / f"le{i}")["wall"] for i in range(3)]
        pool_rt = [timed("pool", 0, 1, tmp / f"pe{i}")["wall"] for i in range(3)]
        ray_rt = [timed("ray", 0, 1, tmp / f"re{i}")["wall"] for i in range(3)] if ray_ex else [float("nan")]
    finally:
        if ray_ex is not None:
            ray_ex.close()

    seq = rows["sequential (in process)"]
    ideal = min(args.cpus, n)
    print(f"{'':34} {'wall s':>7} {'speed-up':>8} {'task CPU s':>10} {'cores got':>9} {'others':>6} "
          f"{'CPU-normalised':>14}  torch threads")
    for name, r in rows.items():
        norm = (1 if r is seq else ideal) * seq["cpu"] / r["cpu"]
        print(f"{name:34} {r['wall']:7.2f} {seq['wall'] / r['wall']:7.2f}x {r['cpu']:10.1f} {r['cores']:9.2f} "
              f"{r['others']:6.2f} {norm:13.2f}x  {r['threads']}")
        if r is not seq:
            setting = (f"{n} tasks x {reps} products, {args.cpus} cores; cores got {r['cores']:.2f} (sequential "
                       f"{seq['cores']:.2f}), others {r['others']:.2f} (sequential {seq['others']:.2f})")
            record(f"{name} vs sequential in process: wall", r["wall"], seq["wall"], clock="wall",
                   note=f"speed-up, ideal {ideal}x on an idle machine; {setting}")
            record(f"{name} vs sequential in process: CPU-normalised", r["cpu"] / ideal, seq["cpu"],
                   note=f"ours = task CPU / {ideal}, baseline = sequential task CPU: the speed-up if CPU "
                        "were the only cost (blind to idle gaps: an upper bound); read it on a busy machine")
    print(f"ideal speed-up: {ideal}x. 'cores got': task CPU / wall; 'others': cores busy with other work during "
          "the run (/proc/stat); 'CPU-normalised': ideal x sequential task CPU / this run's task CPU")
    if control is not None:
        pinned = rows["process pool"]
        scale = (max(1, reps // 10) * args.cpus) / (reps * n)  # work of the control / work of the pool run
        print(f"unpinned control ({args.cpus} tasks x {max(1, reps // 10)} products, torch threads "
              f"{control['threads']}): wall {control['wall']:.1f} s, task CPU {control['cpu']:.1f} s, others "
              f"{control['others']:.2f}; per unit of work {control['wall'] / (pinned['wall'] * scale):.1f}x the "
              f"pinned pool's wall and {control['cpu'] / (pinned['cpu'] * scale):.1f}x its CPU")
        what = (f"per unit of work: the pinned pool's time scaled to the control's work ({args.cpus} tasks x "
                f"{max(1, reps // 10)} products, torch threads {control['threads']}); ratio = the unpinned slow-down")
        record("process pool pinned (1 thread per task) vs unpinned (a thread per core): wall",
               pinned["wall"] * scale, control["wall"], clock="wall",
               note=f"{what}; others {control['others']:.2f} (pinned run {pinned['others']:.2f})")
        record("process pool pinned (1 thread per task) vs unpinned (a thread per core): task CPU",
               pinned["cpu"] * scale, control["cpu"], note=what)
    print(f"resume, all {n} finished: {resume:.2f} s")
    record(f"resume of {n} finished tasks (process pool) vs running them", resume, rows["process pool"]["wall"],
           clock="wall", note="the results found on disk are kept, nothing is rerun")
    print(f"overhead per task (median of an empty task through the runner, one at a time): in process "
          f"{statistics.median(local_rt):.2f} s, pool {statistics.median(pool_rt):.2f} s, "
          f"Ray {statistics.median(ray_rt):.2f} s")
    overhead = "per-task overhead: median of 3 empty tasks through the runner, one at a time; below 1: costs more"
    record("empty task: process pool vs in process", statistics.median(pool_rt), statistics.median(local_rt),
           clock="wall", note=overhead)
    if ray_ex is not None:
        record("empty task: local Ray (warm) vs in process", statistics.median(ray_rt), statistics.median(local_rt),
               clock="wall", note=overhead)
    print(f"once per command (not in the ratios): first in-process task {cold_local:.1f} s, pool fork server "
          f"{cold_pool:.1f} s, Ray start {ray_start:.1f} s + first workers {cold_ray:.1f} s")
    once = "once per command, not in the speed-ups; baseline: the first in-process task (imports included)"
    record("first task of a command: process pool (fork server start) vs in process", cold_pool, cold_local,
           clock="wall", note=once)
    if ray_ex is not None:
        record(f"local Ray start + first task on each of {args.cpus} workers vs first in-process task",
               ray_start + cold_ray, cold_local, clock="wall",
               note=f"{once}; Ray start {ray_start:.1f} s + first workers {cold_ray:.1f} s")

if __name__ == "__main__":
    main()
