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
    seq = timed("local", args.reps, 4, tmp / "seq")
    pool = timed("pool", args.reps, 4, tmp / "pool")
    t0 = time.perf_counter()
    reused, _ = run_tasks(tasks(args.reps, 4), out=tmp / "pool", device="cpu", console=quiet, executor="pool")
    resume = time.perf_counter() - t0
    ray_all = timed("ray", args.reps, 4, tmp / "ray")

    # overheads: one empty task at a time
    pool_rt = [timed("pool", 0, 1, tmp / f"pe{i}") for i in range(5)]
    local_rt = [timed("local", 0, 1, tmp / f"le{i}") for i in range(5)]
    t0 = time.perf_counter()
    ray = RayExecutor(workers=args.cpus)
    start = time.perf_counter() - t0
    try:
        rt = []
        for i in range(6):
            (t,) = tasks(0, 1)
            t1 = time.perf_counter()
            list(ray.run([t], out=tmp / "re", device="cpu"))
            rt.append(time.perf_counter() - t1)
        t1 = time.perf_counter()
        list(ray.run(tasks(args.reps, 4), out=tmp / "rw", device="cpu"))
        ray_warm = time.perf_counter() - t1
    finally:
        ray.close()
    ray_rt = rt[1:]  # the first also starts a worker process

    ideal = seq / min(args.cpus, 4)
    print(f"sequential (in process)   {seq:7.2f} s")
    print(f"process pool              {pool:7.2f} s   speed-up {seq / pool:4.2f}x (ideal {seq / ideal:.0f}x)")
    print(f"local Ray, with start-up  {ray_all:7.2f} s   speed-up {seq / ray_all:4.2f}x")
    print(f"local Ray, warm           {ray_warm:7.2f} s   speed-up {seq / ray_warm:4.2f}x")
    print(f"resume (all 4 finished)   {resume:7.2f} s")
    print(f"overhead per task: in process {statistics.median(local_rt):.2f} s (empty task through the runner), "
          f"pool {statistics.median(pool_rt):.2f} s, Ray {statistics.median(ray_rt):.2f} s on a warm worker; "
          f"Ray start-up {start:.1f} s once per command")


if __name__ == "__main__":
    main()
