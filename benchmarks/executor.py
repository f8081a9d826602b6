"""Benchmark of the executors: the same 4 short CPU tasks sequentially (in process), in a local
process pool and on a local Ray instance; speed-ups over the sequential run and each executor's
overhead per task.

Each task is a tiny experiment (a fixed number of symmetric eigen-decompositions, one BLAS
thread) run through the real runner (results written, resume checked), so the times include
everything a user waits for. Overhead per task is measured separately with empty tasks: the
median round trip of one empty task at a time (pool: fork, import, run, send back; Ray: submit,
schedule on a warm worker, return), plus Ray's start-up once per command.

Run: ``.venv/bin/python benchmarks/executor.py [--reps 40] [--cpus 2]``. On a loaded machine
the wall times are inflated; the ratios are what to read.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

TASK_MODULE = '''
import numpy as np
from pydantic import Field
from threadpoolctl import threadpool_limits

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig


class Config(ExperimentConfig):
    reps: int = Field(40, ge=0, le=100_000, description="eigen-decompositions of a 200 x 200 matrix")


def run(config, ctx):
    with threadpool_limits(1):  # one core per task, whichever executor runs it
        total = 0.0
        for _ in range(config.reps):
            a = ctx.rng.normal(size=(200, 200))
            total += float(np.linalg.eigvalsh(a + a.T)[-1])
    return Outcome(metrics={"total": total},
                   claims=[C.check("ran", "the task ran", measured=config.reps, holds=True, tolerance="ran",
                                   reason="benchmark", kind="check", source="inferred: benchmark")])
'''


def main() -> None:
    from rich.console import Console

    from neurips26.harness.executor import RayExecutor
    from neurips26.harness.runner import SystemSpec, make_task, resolve_config, run_tasks

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40, help="work per task (eigen-decompositions)")
    ap.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="cores for the pool and Ray")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="n26bench-"))
    (tmp / "n26bench_burn.py").write_text(TASK_MODULE)
    sys.path.insert(0, str(tmp))
    module = importlib.import_module("n26bench_burn")
    quiet = Console(file=open(os.devnull, "w"))

    def tasks(reps: int, n: int):
        spec = SystemSpec("bench_burn", module, {"reps": reps})
        config = resolve_config(module, "quick", spec.overrides, "bench_burn")
        return [make_task(spec, config, scale="quick", seed=s, commit="") for s in range(n)]

    def timed(executor: str, reps: int, n: int, out: Path) -> float:
        t0 = time.perf_counter()
        results, _ = run_tasks(tasks(reps, n), out=out, device="cpu", console=quiet, executor=executor,
                               workers=args.cpus)
        wall = time.perf_counter() - t0
        assert len(results) == n and all(r.status == "ok" for r in results), [r.error for r in results]
        return wall

    print(f"4 tasks x {args.reps} eigen-decompositions (200 x 200, 1 thread each), {args.cpus} cores")
    # one-time start-up costs, measured apart: the driver's first task imports torch (the run
    # context seeds it), the pool's first task starts the fork server (which imports torch and
    # matplotlib once), Ray starts its processes and its first workers
    cold_local = timed("local", 0, 1, tmp / "cold-local")
    cold_pool = timed("pool", 0, 1, tmp / "cold-pool")
    t0 = time.perf_counter()
    ray = RayExecutor(workers=args.cpus)  # started here, so run_tasks below reuses the warm instance
    ray_start = time.perf_counter() - t0
    try:
        cold_ray = timed("ray", 0, 2, tmp / "cold-ray")  # one worker process per CPU
        seq = timed("local", args.reps, 4, tmp / "seq")
        pool = timed("pool", args.reps, 4, tmp / "pool")
        ray_warm = timed("ray", args.reps, 4, tmp / "ray")
        t0 = time.perf_counter()
        run_tasks(tasks(args.reps, 4), out=tmp / "pool", device="cpu", console=quiet, executor="pool")
        resume = time.perf_counter() - t0
        local_rt = [timed("local", 0, 1, tmp / f"le{i}") for i in range(5)]
        pool_rt = [timed("pool", 0, 1, tmp / f"pe{i}") for i in range(5)]
        ray_rt = [timed("ray", 0, 1, tmp / f"re{i}") for i in range(5)]
    finally:
        ray.close()

    ideal = min(args.cpus, 4)
    print(f"sequential (in process)  {seq:7.2f} s")
    print(f"process pool             {pool:7.2f} s   speed-up {seq / pool:4.2f}x (ideal {ideal}x)")
    print(f"local Ray (warm)         {ray_warm:7.2f} s   speed-up {seq / ray_warm:4.2f}x")
    print(f"resume, all 4 finished   {resume:7.2f} s")
    print(f"overhead per task (median of an empty task through the runner, one at a time): in process "
          f"{statistics.median(local_rt):.2f} s, pool {statistics.median(pool_rt):.2f} s, "
          f"Ray {statistics.median(ray_rt):.2f} s")
    print(f"once per command: first in-process task {cold_local:.1f} s, pool fork server {cold_pool:.1f} s, "
          f"Ray start {ray_start:.1f} s + first workers {cold_ray:.1f} s")

if __name__ == "__main__":
    main()
