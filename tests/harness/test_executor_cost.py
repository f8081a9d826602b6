"""Cost in the record and pinned threads: every executor records ``cpu_time_s`` and ``peak_rss_mb``
and runs a task with as many torch/BLAS threads as the CPUs it declares."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from neurips26.harness.results import load_result
from neurips26.harness.runner import SystemSpec, make_task, resolve_config, run_tasks

BURN = '''
import numpy as np
import torch
from pydantic import Field
from threadpoolctl import threadpool_info

from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources


class Config(ExperimentConfig):
    cpus: int = Field(1, ge=1)
    mb: int = Field(0, ge=0)
    reps: int = Field(0, ge=0)

    def resources(self):
        return Resources(num_cpus=self.cpus)


def run(config, ctx):
    block = np.ones(config.mb * 2**20 // 8) if config.mb else None  # touched: resident
    a = torch.randn(128, 128, generator=torch.Generator().manual_seed(0)) / 12
    b = a.clone()
    for _ in range(config.reps):
        b = torch.tanh(a @ b)
    blas = sorted({p["num_threads"] for p in threadpool_info()})
    return Outcome(metrics={"torch_threads": torch.get_num_threads(), "blas_threads": blas,
                            "held": 0 if block is None else float(block.sum())})
'''


@pytest.fixture(scope="module")
def burn(tmp_path_factory):
    folder = tmp_path_factory.mktemp("costsys")
    (folder / "n26_cost_burn.py").write_text(BURN)
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("n26_cost_burn")
    finally:
        sys.path.remove(str(folder))


def _tasks(mod, **overrides):
    spec = SystemSpec("cost_burn", mod, overrides)
    config = resolve_config(mod, "quick", overrides, "cost_burn")
    return [make_task(spec, config, scale="quick", seed=0, commit="")]


@pytest.mark.parametrize("executor", ["local", "pool"])
def test_cpu_time_and_peak_memory_are_recorded(burn, tmp_path, executor):
    """Catches result.json without the task's cost, or a cost measured around the wrong thing: a task
    holding 300 MB records a peak of at least 300 MiB and its matrix products at least 0.3 CPU s."""
    (res,), _ = run_tasks(_tasks(burn, mb=300, reps=3000), out=tmp_path, device="cpu", executor=executor,
                          workers=2)
    assert res.status == "ok", res.error
    saved = json.loads((tmp_path / "cost_burn" / res.run_key / "result.json").read_text())
    assert saved["cpu_time_s"] == res.cpu_time_s and saved["peak_rss_mb"] == res.peak_rss_mb
    assert load_result(tmp_path / "cost_burn" / res.run_key / "result.json").cpu_time_s == res.cpu_time_s
    # 3000 products of 128 x 128 take ~0.6-1 CPU s on one 2020s core; 0.3 leaves room for a fast one
    assert res.cpu_time_s >= 0.3
    assert res.peak_rss_mb >= 300  # the 300 MiB block itself, plus the interpreter


@pytest.mark.parametrize("executor", ["local", "pool"])
def test_task_runs_with_the_threads_it_declares(burn, tmp_path, executor):
    """Catches a task that runs a torch/BLAS thread per core while others share the cores (measured
    in benchmarks/executor.py: ~20x the CPU per unit of work at load 15 on 2 cores)."""
    import torch

    before = torch.get_num_threads()
    (res,), _ = run_tasks(_tasks(burn, cpus=1), out=tmp_path, device="cpu", executor=executor, workers=2)
    assert res.metrics["torch_threads"] == 1 and res.metrics["blas_threads"] == [1]
    assert torch.get_num_threads() == before  # the local executor puts the driver's setting back


def test_estimate_uses_cpu_time_over_the_cpus_the_task_gets(burn, tmp_path):
    """Catches a duration estimate read from wall time when CPU time is recorded (a run recorded on
    a busy machine would inflate it): 40 CPU s for a 2-CPU task is 20 s; a record without CPU time
    still gives its wall time."""
    from neurips26.harness.runner import estimate_seconds, store

    (task,) = _tasks(burn, cpus=2)
    (res,), _ = run_tasks([task], out=tmp_path, device="cpu", executor="local")
    res.wall_time_s, res.cpu_time_s = 100.0, 40.0  # recorded on a loaded machine
    store(task, res, tmp_path)
    assert estimate_seconds([task], tmp_path) == [pytest.approx(20.0)]
    res.cpu_time_s = None  # a record from before cpu_time_s existed
    store(task, res, tmp_path)
    assert estimate_seconds([task], tmp_path) == [pytest.approx(100.0)]


def test_report_systems_table_shows_cpu_time(tmp_path):
    """Catches a systems table that shows wall time only (on a shared machine that says little
    about cost): a result with cpu_time_s shows 'CPU <seconds>' in its row; one without, nothing."""
    from neurips26.harness.report import build_report, format_seconds

    from .test_report import write_result

    run_dir = write_result(tmp_path, "lr_schedules")
    html = build_report(tmp_path)
    row = html[html.index('id="row-lr_schedules"'):]
    assert "CPU " not in row[:row.index("</tr>")]
    res = load_result(run_dir / "result.json")
    res.cpu_time_s = 7.25
    res.save(run_dir)
    row = build_report(tmp_path)
    row = row[row.index('id="row-lr_schedules"'):]
    assert f"CPU {format_seconds(7.25)}" in row[:row.index("</tr>")]


def test_blas_threads_caps_and_restores_the_pools():
    """Catches a system run called directly (outside an executor) keeping every BLAS/OpenMP thread,
    or a cap that leaks past its block: inside ``blas_threads(1)`` every loaded pool has one thread,
    afterwards the caller's counts are back; n < 1 is refused."""
    import numpy as np  # noqa: F401 - loads OpenBLAS, so there is a pool to cap
    from threadpoolctl import threadpool_info

    from neurips26.harness.context import blas_threads

    before = [p["num_threads"] for p in threadpool_info()]
    with blas_threads(1):
        assert {p["num_threads"] for p in threadpool_info()} == {1}
    assert [p["num_threads"] for p in threadpool_info()] == before
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        blas_threads(0)
