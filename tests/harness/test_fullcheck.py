"""The time-boxed full-scale check on CPU with a tiny budget: it stops a long
run at the budget and reports per stage throughput, memory and the run's ETA; a short run
finishes inside the budget; the command prints the same."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness.fullcheck import check_one, total_lines
from neurips26.harness.runner import SystemSpec, make_task

_FAKE = '''
import time
from pydantic import Field
from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources


class Config(ExperimentConfig):
    long_steps: int = Field(3, ge=0)

    def resources(self):
        return Resources(num_cpus=1, hours=2.0)

    @classmethod
    def full(cls):
        return cls(long_steps=1000)


def run(config, ctx):
    for _ in ctx.track(range(3), "warm-up"):
        time.sleep(0.1)
    for _ in ctx.track(range(config.long_steps), "training"):
        time.sleep(0.2)
    return Outcome(metrics={}, claims=[C.check("ran", "it ran", measured=1, holds=True, tolerance="-",
                                               reason="r", kind="check", source="inferred: test")])
'''


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    import importlib

    folder = tmp_path_factory.mktemp("fullcheck")
    (folder / "n26fake_fullcheck.py").write_text(_FAKE)
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    return importlib.import_module("n26fake_fullcheck")


def test_a_long_run_is_stopped_at_the_budget_and_measured(fake):
    """Catches a check that runs past its budget, or reports no stage, no throughput, no memory
    or no ETA for a run it stopped."""
    spec = SystemSpec("n26fake_fullcheck", fake, {})
    task = make_task(spec, fake.Config.full(), scale="full", seed=0, commit="")
    t0 = time.perf_counter()
    check = check_one(task, device="cpu", budget_s=15.0, declared_hours=2.0)  # the child starts in ~6 s here
    took = time.perf_counter() - t0
    assert check.outcome == "budget" and took < 15.0 + 15  # stopped (terminate within seconds)
    names = [s.name for s in check.stages]
    assert names == ["warm-up", "training"], check
    warm, train = check.stages
    assert warm.done and warm.steps == 3 and not train.done and train.total == 1000
    assert 0 < train.rate < 6  # 0.2 s a step: at most 5 steps/s (slower on a loaded machine)
    assert train.eta_s == pytest.approx((1000 - train.steps) / train.rate, rel=0.05)
    assert check.memory_kind == "rss" and check.memory_bytes > 10 * 2**20
    assert check.eta_s > check.wall_s + 60  # ~200 s of training left
    text = "\n".join(check.lines())
    assert "stopped at the budget" in text and "stage 'training'" in text and "steps/s (running, ETA" in text
    assert "run ETA: at least" in text and "declared 2 h" in text
    assert "at least" in total_lines([check], {"n26fake_fullcheck": 3})[0]


def test_a_short_run_finishes_and_the_command_reports_it(fake, monkeypatch, tmp_path: Path):
    """Catches the command not running the selected system's configuration, or not reporting a
    run that finished inside the budget (its measured time is its ETA)."""
    import neurips26.cli as cli
    from neurips26.harness.catalogue import get_paper

    paper = get_paper("lr_schedules")
    monkeypatch.setattr(cli, "implemented_papers", lambda: [paper])
    monkeypatch.setattr(cli, "load_experiment", lambda p: fake)
    monkeypatch.setattr(type(paper), "implemented", property(lambda self: self.system == "lr_schedules"))
    res = CliRunner().invoke(app, ["fullcheck", "lr-schedules", "--budget-minutes", "1", "--device", "cpu",
                                   "--set", "long_steps=2", "--seeds", "2", "--out", str(tmp_path / "c.json")],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "lr-schedules (full, cpu): finished in" in res.output and "(ok)" in res.output
    assert "stage 'training': 2/2" in res.output and "run ETA:" in res.output and "(measured)" in res.output
    assert "whole plan (2 tasks" in res.output and (tmp_path / "c.json").is_file()
    bad = CliRunner().invoke(app, ["fullcheck", "lr-schedules", "--budget-minutes", "0"])
    assert bad.exit_code == 2 and "--budget-minutes 0" in bad.output


def test_forward_census_counts_modules_by_their_parameters_device():
    """Catches a census that counts containers (a Sequential of two Linear would count three) or
    that reports the input's device instead of the parameters' (the check that tells a full run
    that reached the GPU from one that built its model on the CPU and never moved it)."""
    import torch

    from neurips26.harness.fullcheck import ForwardCensus

    with torch.device("meta"):
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    cpu = torch.nn.Linear(2, 2)
    with ForwardCensus() as census:
        net(torch.zeros(5, 3, device="meta"))
        cpu(torch.zeros(1, 2))
    assert census.counts == {"meta": 2, "cpu": 1}
    cpu(torch.zeros(1, 2))  # the hook is removed on exit
    assert census.counts == {"meta": 2, "cpu": 1}


def test_a_run_that_never_reaches_the_device_is_flagged():
    """Catches the first contact's silent failure: a full run on cuda whose models stayed on the
    CPU (0 % utilisation) reported as fine. The report line must say it, and a run with the
    device's forward passes must not be flagged."""
    from neurips26.harness.fullcheck import SystemCheck

    off = SystemCheck("feature_learning", "full", "cuda", outcome="budget", forward_devices={"cpu": 1200})
    on = SystemCheck("afdonet", "full", "cuda:0", outcome="budget", forward_devices={"cuda": 900, "cpu": 3})
    cpu = SystemCheck("afdonet", "full", "cpu", outcome="budget", forward_devices={"cpu": 900})
    assert off.reached_device is False and on.reached_device is True and cpu.reached_device is None
    assert any("NOT ON cuda" in line for line in off.lines())
    assert not any("NOT ON" in line for line in on.lines() + cpu.lines())


def test_every_full_config_says_where_its_stages_run():
    """Catches a plan that reserves a GPU the code never uses, or says nothing about where the
    heavy work runs: every system's full configuration declares on_device and/or on_cpu, and one
    that reserves a GPU names its device stages (the Resources validator)."""
    from neurips26.harness.catalogue import implemented_papers, load_experiment
    from neurips26.harness.config import Resources

    with pytest.raises(ValueError, match="needs on_device"):
        Resources(num_gpus=1)
    for paper in implemented_papers():
        name = paper.system
        res = load_experiment(paper).Config.full().resources()
        assert res.on_device or res.on_cpu, f"{name}: full config declares neither on_device nor on_cpu"
        assert not res.num_gpus or res.on_device, name
