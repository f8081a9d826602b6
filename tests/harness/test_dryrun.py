"""``neurips26 reproduce --dry-run``: configs checked in seconds before a paper-scale launch."""

from __future__ import annotations

import importlib
import sys
import time

import pytest
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness.dryrun import Stage, dry_run, totals, training_memory_gb, unchecked
from neurips26.harness.runner import SystemSpec

EXPERIMENT = '''
from pydantic import Field, model_validator

from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources

CONFIRMATION_SEEDS = (101,)


class Config(ExperimentConfig):
    width: int = Field(8, ge=1)
    batch: int = Field(4, ge=1)
    hang: bool = False
    memory_gb: float = 2.0
    lo: int = 0
    hi: int = 10

    @model_validator(mode="after")
    def _order(self):
        if self.lo >= self.hi:
            raise ValueError(f"lo={self.lo} must be < hi={self.hi}")
        return self

    def resources(self):
        return Resources(num_cpus=2, num_gpus=1, memory_gb=self.memory_gb, hours=1.5,
                         on_device="the fake training")

    @classmethod
    def full(cls):
        return cls(width=64, batch=32)


def run(config, ctx):
    return Outcome()
'''

FULL_SCALE = '''
import time

import torch

from neurips26.harness.dryrun import Stage, meta_build, meta_tensor, training_memory_gb, unchecked


def stages(config):
    def model():
        built = meta_build({"net": lambda: torch.nn.Sequential(torch.nn.Linear(16, config.width),
                                                               torch.nn.Linear(config.width, 3))})
        built["models"]["net"](meta_tensor(config.batch, 16))
        n = built["params"]["net"]
        return {"params": built["params"], "peak_memory_gb": training_memory_gb(n) + 1.5}

    def data():
        while config.hang:  # a generator that never finishes at this size
            pass
        return {"note": "generated"}

    return [Stage("model (meta)", model), Stage("data", data, limit_s=3),
            unchecked("training", "needs the GPU")]
'''


@pytest.fixture
def drysys(tmp_path, monkeypatch):
    """An importable fake system package ``dryfake`` with a full_scale.py hook."""
    pkg = tmp_path / "dryfake"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "experiment.py").write_text(EXPERIMENT)
    (pkg / "full_scale.py").write_text(FULL_SCALE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for m in [m for m in sys.modules if m.startswith("dryfake")]:
        del sys.modules[m]
    return importlib.import_module("dryfake.experiment")


def test_plan_counts_tasks_params_and_gpu_hours(drysys):
    """Catches a plan that miscounts: tasks = seeds + confirmation seeds, parameters from the meta
    build at full width, GPU-hours = tasks x GPUs x hours, unchecked stages listed with reasons."""
    (plan,) = dry_run([SystemSpec("dryfake", drysys, {})], scale="full", seeds=list(range(10)))
    assert plan.ok, plan.stages
    assert [s.status for s in plan.stages] == ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "unchecked", "ok"]
    assert [s.name for s in plan.stages][:4] == ["import", "config", "resources", "task"]
    assert plan.params == {"net": 16 * 64 + 64 + 64 * 3 + 3}  # full(): width 64
    assert plan.tasks == 10 and plan.confirmation_tasks == 1
    t = totals([plan])
    assert t["tasks"] == 11 and t["gpu_hours"] == pytest.approx(11 * 1 * 1.5)
    assert plan.peak_memory_gb == pytest.approx(training_memory_gb(plan.params["net"]) + 1.5)


def test_hanging_stage_is_stopped_and_named(drysys):
    """Catches a dry run that hangs with the generator it checks (search-agent-attacks' 2000-company
    graph did): the stage is stopped at its CPU limit and named as timed out."""
    t0 = time.perf_counter()
    (plan,) = dry_run([SystemSpec("dryfake", drysys, {"hang": True})], scale="full", seeds=[0])
    assert not plan.ok and plan.failure.name == "data" and plan.failure.status == "timeout"
    assert "limit 3 CPU s" in plan.failure.detail
    assert "CPU s (limit" in plan.failure.detail  # stopped by its CPU, not the 120 s wall backstop
    assert time.perf_counter() - t0 < 110


def test_broken_configs_fail_naming_the_stage(drysys):
    """Catches a dry run that passes configs that would crash: a cross-field check that fails at
    full scale (config stage) and an estimated peak memory above the declared memory (memory)."""
    broken, oom = dry_run([SystemSpec("dryfake", drysys, {"lo": 20}), SystemSpec("dryfake", drysys,
                                                                                 {"memory_gb": 0.5})],
                          scale="full", seeds=[0])
    assert broken.failure.name == "config" and "lo=20 must be < hi=10" in broken.failure.detail
    assert oom.failure.name == "memory" and "exceeds the declared memory_gb=0.5" in oom.failure.detail


def test_stage_declarations_are_checked():
    """Catches a hook declaring a stage with neither a check nor a reason (it would be silently skipped)."""
    with pytest.raises(ValueError, match="give fn, or a reason"):
        Stage("data")
    with pytest.raises(ValueError, match="limit_s"):
        Stage("data", lambda: None, limit_s=0)
    assert unchecked("x", "why").reason == "why"


def test_cli_dry_run_exits_1_naming_system_and_stage(drysys, monkeypatch):
    """Catches ``--dry-run`` exiting 0 on a broken full config, or running the system instead."""
    import neurips26.cli as cli
    from neurips26.harness.catalogue import Paper

    paper = Paper(99, "dryfake", "a fake", "", "", "")
    monkeypatch.setattr(cli, "_select", lambda names: [paper])
    monkeypatch.setattr(cli, "load_experiment", lambda p: drysys)
    res = CliRunner().invoke(app, ["reproduce", "--scale", "full", "--dry-run", "--seeds", "3", "--set", "lo=20"])
    assert res.exit_code == 1, res.output
    assert "dryfake at stage 'config'" in res.output
    res = CliRunner().invoke(app, ["reproduce", "--scale", "full", "--dry-run", "--seeds", "3"], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    assert "total: 4 tasks" in res.output and "GPU-hours 6" in res.output
    # the table totals the parameters; the per-model counts are listed below it
    n = 16 * 64 + 64 + 64 * 3 + 3
    assert f"{n / 1e3:.3g}k (1 model)" in res.output and f"parameters: dryfake: net {n / 1e3:.3g}k" in res.output


def test_dry_run_of_all_nineteen_full_configs():
    """Catches a full configuration of any of the nineteen systems that would crash at a checkable
    stage (config cross-checks, resources, task pickling, models at full size on meta, data
    generators), and a dry run too slow to run before every launch: under 120 CPU s in all, i.e.
    under two minutes on two idle cores (CPU, not wall: this machine is shared)."""
    from neurips26.harness.catalogue import implemented_papers, load_experiment

    specs = [SystemSpec(p.system, load_experiment(p), {}) for p in implemented_papers()]
    assert len(specs) == 19
    plans = dry_run(specs, scale="full", seeds=list(range(10)))
    failed = {p.system: (p.failure.name, p.failure.detail) for p in plans if not p.ok}
    assert not failed, failed
    generic = ("import", "config", "resources", "task", "list stages", "memory")
    no_hook = [p.system for p in plans if any(s.name == "system stages" for s in p.stages)
               or not [s for s in p.stages if s.name not in generic]]
    assert not no_hook, f"without full_scale.py stages: {no_hook}"
    assert totals(plans)["tasks"] >= 190
    cpu = sum(p.cpu_s for p in plans)
    assert cpu < 120, f"{cpu:.0f} CPU s"
