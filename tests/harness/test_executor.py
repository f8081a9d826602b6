"""Executors: local, process pool and Ray give the same results; failures, dead workers, resume,
Ctrl-C, requirements, seeds summaries, estimates and progress lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness import claims as C
from neurips26.harness.config import ConfigError, Resources
from neurips26.harness.executor import check_requirements, make_executor
from neurips26.harness.results import latest_results, load_result
from neurips26.harness.runner import (
    SystemSpec,
    estimate_line,
    estimate_seconds,
    make_task,
    parse_seeds,
    reproduce,
    resolve_config,
    results_by_seed,
    schedule_length,
    seeds_summary,
)

from .executor_fakes import install
from .test_cli import _patch_fake_system


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    return install(tmp_path_factory.mktemp("fakesys"))


def _specs(fakes, log: Path, **alpha):
    alpha_mod, beta_mod = fakes
    return [SystemSpec("fake_alpha", alpha_mod, {"log": str(log), **alpha}),
            SystemSpec("fake_beta", beta_mod, {"log": str(log)})]


def _calls(log: Path) -> list[str]:
    return sorted(log.read_text().splitlines()) if log.exists() else []


def _same(a, b):
    """Two results of the same task: same config hash, claims and numbers."""
    assert (a.system, a.seed, a.run_key, a.status) == (b.system, b.seed, b.run_key, b.status)
    assert a.config == b.config and a.figures == b.figures and a.captions == b.captions
    # the fake systems use numpy's generator only: identical to the bit on any executor;
    # approx guards against a BLAS thread-count difference in a real system's reductions
    assert json.dumps(a.metrics, sort_keys=True) == json.dumps(b.metrics, sort_keys=True) or \
        a.metrics == pytest.approx(b.metrics, rel=1e-12)
    assert [c.to_dict() for c in a.claims] == [c.to_dict() for c in b.claims]


def test_parse_seeds():
    assert parse_seeds("5") == [0, 1, 2, 3, 4]
    assert parse_seeds("0,1,2") == [0, 1, 2] and parse_seeds("7,") == [7]
    for bad in ("0", "-1", "a,b", "1,1", f"{2**32},1", ""):
        with pytest.raises(ConfigError) as exc:
            parse_seeds(bad)
        assert "--seeds" in str(exc.value) and "\n" not in str(exc.value)


def test_local_and_pool_give_the_same_results(tmp_path, fakes, capfd):
    log = tmp_path / "calls.log"
    local, interrupted = reproduce(_specs(fakes, log), seeds=[0, 1], out=tmp_path / "local", device="cpu")
    assert not interrupted and len(local) == 4 and all(r.status == "ok" for r in local)
    pool, interrupted = reproduce(_specs(fakes, log), seeds=[0, 1], out=tmp_path / "pool", device="cpu",
                                  executor="pool", workers=2)
    assert not interrupted and [(r.system, r.seed) for r in pool] == [(r.system, r.seed) for r in local]
    for a, b in zip(local, pool):
        _same(a, b)
        for fig in b.figures:  # figures made in the worker came back to the driver
            assert (tmp_path / "pool" / b.system / b.run_key / fig).read_bytes()[:4] == b"\x89PNG"
    assert local[0].metrics["mean"] != local[1].metrics["mean"]  # the seed reaches the system
    assert len(_calls(log)) == 8
    err = capfd.readouterr().err  # no terminal: one line per finished task on stderr
    assert "[4/4] fake_" in err and " seed 1 quick: ok in " in err


def test_failures_and_dead_workers_are_recorded_and_the_rest_finish(tmp_path, fakes):
    alpha, beta = fakes
    specs = [SystemSpec("fake_fail", alpha, {"fail": True}), SystemSpec("fake_die", alpha, {"die": True}),
             SystemSpec("fake_beta", beta, {})]
    results, interrupted = reproduce(specs, seeds=[0, 1], out=tmp_path, device="cpu", executor="pool", workers=2)
    assert not interrupted
    status = {(r.system, r.seed): r for r in results}
    assert len(status) == 6
    assert all("RuntimeError: boom from the fake system" in status["fake_fail", s].error for s in (0, 1))
    assert all("worker process died (exit code 3)" in status["fake_die", s].error for s in (0, 1))
    assert all(status["fake_beta", s].status == "ok" for s in (0, 1))
    on_disk = latest_results(tmp_path)  # failures are on disk too (the report shows them)
    assert on_disk["fake_die"][1].status == "failed" and on_disk["fake_fail"][1].status == "failed"
    assert (tmp_path / "report.html").exists()


def test_rerun_after_a_killed_driver_recomputes_only_what_is_missing(tmp_path, fakes):
    log = tmp_path / "calls.log"
    first, _ = reproduce(_specs(fakes, log), seeds=[0, 1], out=tmp_path, device="cpu", executor="pool")
    assert len(_calls(log)) == 4
    # a driver killed mid-run leaves some results missing: simulate by deleting one
    gone = first[1]
    shutil.rmtree(tmp_path / gone.system / gone.run_key)
    log.unlink()
    again, _ = reproduce(_specs(fakes, log), seeds=[0, 1], out=tmp_path, device="cpu", executor="pool")
    assert _calls(log) == [f"n26{gone.system} {gone.seed}"]
    for a, b in zip(first, again):
        _same(a, b)


def test_ctrl_c_cancels_outstanding_tasks_and_keeps_finished(tmp_path, fakes):
    log = tmp_path / "calls.log"
    specs = _specs(fakes, log, sleep=3.0)[:1]
    out = tmp_path / "out"

    def interrupt_after_first_result():
        deadline = time.time() + 120
        while time.time() < deadline and not list(out.glob("*/*/result.json")):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_after_first_result, daemon=True).start()
    t0 = time.time()
    results, interrupted = reproduce(specs, seeds=[0, 1, 2, 3], out=out, device="cpu", executor="pool", workers=1)
    assert interrupted and 1 <= len(results) < 4 and all(r.status == "ok" for r in results)
    assert len(list(out.glob("*/*/result.json"))) == len(results)  # cancelled tasks wrote nothing
    assert (out / "report.html").exists()
    assert time.time() - t0 < 100
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_requirements_refuse_before_anything_runs(tmp_path, fakes, monkeypatch):
    import neurips26.harness.executor as ex

    log = tmp_path / "calls.log"
    alpha = fakes[0]
    monkeypatch.setattr(ex, "gpu_count", lambda: 0)
    gpu = SystemSpec("fake_alpha", alpha, {"gpus": 1, "log": str(log)})
    with pytest.raises(ConfigError) as exc:
        reproduce([gpu], scale="full", out=tmp_path, executor="pool")
    msg = str(exc.value)
    assert "needs 1 GPU(s) and torch sees 0" in msg and "--address" in msg and "\n" not in msg
    assert not log.exists() and not (tmp_path / "report.html").exists()
    task = make_task(gpu, resolve_config(alpha, "full", gpu.overrides, "fake_alpha"), scale="full", seed=0)
    check_requirements([task], executor="ray", address="10.0.0.1:6379")  # the cluster places it
    check_requirements([task], device="cpu")  # asked for explicitly
    monkeypatch.setattr(ex, "gpu_count", lambda: 1)
    check_requirements([task])
    key = SystemSpec("fake_alpha", alpha, {"credential": "N26_TEST_SECRET"})
    task = make_task(key, resolve_config(alpha, "quick", key.overrides, "fake_alpha"), scale="quick", seed=0)
    monkeypatch.delenv("N26_TEST_SECRET", raising=False)
    with pytest.raises(ConfigError, match="N26_TEST_SECRET"):
        check_requirements([task])
    monkeypatch.setenv("N26_TEST_SECRET", "x")
    check_requirements([task])
    with pytest.raises(ValueError, match="num_cpus"):
        Resources(num_cpus=0)
    with pytest.raises(ConfigError, match="--address"):
        make_executor("pool", address="x:1")


def test_seeds_summary_counts_each_claim_over_seeds(tmp_path, fakes):
    alpha = fakes[0]
    results, _ = reproduce([SystemSpec("fake_alpha", alpha, {})], seeds=[0, 1, 2], out=tmp_path, device="cpu")
    path = tmp_path / "fake_alpha" / "quick-seeds-summary.json"
    summary = json.loads(path.read_text())
    assert summary["seeds"] == [0, 1, 2] and summary["failed_seeds"] == []
    for claim in summary["claims"]:
        verdicts = [next(c.verdict.value for c in r.claims if c.id == claim["id"]) for r in results]
        held = verdicts.count("holds")
        assert claim["seeds"]["held"] == held and claim["seeds"]["verdicts"] == verdicts
        combined = C.over_seeds([next(c for c in r.claims if c.id == claim["id"]) for r in results], [0, 1, 2])
        assert claim["verdict"] == combined.verdict.value  # the seed-mean interval decides, not votes
    per = results_by_seed(tmp_path)[("fake_alpha", "quick")]
    assert sorted(per) == [0, 1, 2]
    assert seeds_summary(list(per.values()))["claims"] == summary["claims"]


def test_estimate_from_recorded_times(tmp_path, fakes, capsys):
    alpha = fakes[0]
    spec = SystemSpec("fake_alpha", alpha, {})
    reproduce([spec], seeds=[0], out=tmp_path, device="cpu")
    config = resolve_config(alpha, "quick", {}, "fake_alpha")
    rec = load_result(next(tmp_path.glob("fake_alpha/*/result.json")))
    tasks = [make_task(spec, config, scale="quick", seed=s) for s in (0, 5)]
    # the recorded CPU time over the task's one declared CPU (test_executor_cost: CPU vs wall)
    expected = rec.cpu_time_s / 1 if rec.cpu_time_s else rec.wall_time_s
    assert estimate_seconds(tasks, tmp_path) == [expected, expected]  # any seed, same config
    other = make_task(SystemSpec("fake_alpha", alpha, {"n": 500}), config.model_copy(update={"n": 500}),
                      scale="quick", seed=0)
    assert estimate_seconds([other], tmp_path) == [expected]  # same system and scale
    assert estimate_seconds([other], tmp_path / "empty") == [None]
    assert schedule_length([3, 3, 3, 3], [1] * 4, 2) == 6 and schedule_length([5, 1, 1], [1] * 3, 2) == 5
    declared = make_task(spec, config, scale="quick", seed=9)
    declared.resources = Resources(hours=0.5)
    line = estimate_line([declared, declared], 0, tmp_path / "empty", 2, "pool")
    assert "estimated 30.0 min from the configs' declared hours" in line  # two half-hour tasks on 2 cores
    capsys.readouterr()
    reproduce([spec], seeds=[0, 1], out=tmp_path, device="cpu")
    out = capsys.readouterr().out
    assert "1 task to run, 1 already done; estimated" in out


def test_cli_seeds_and_executor_options(monkeypatch, tmp_path, fakes):
    calls: list = []
    _patch_fake_system(monkeypatch, calls, lambda c: fakes[0])
    runner = CliRunner()
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--seeds", "0,2", "--executor", "pool"])
    assert res.exit_code == 0, res.output
    seeds = sorted(load_result(p).seed for p in tmp_path.glob("lr_schedules/*/result.json"))
    assert seeds == [0, 2] and (tmp_path / "lr_schedules" / "quick-seeds-summary.json").exists()
    for args, expect in ((["--seed", "1", "--seeds", "2"], "give one of them"),
                         (["--executor", "mpi"], "allowed values are local, pool, ray"),
                         (["--address", "h:1"], "needs --executor ray"),
                         (["--seeds", "0"], "at least 1"),
                         (["--workers", "0"], "--workers 0")):
        bad = runner.invoke(app, ["reproduce", "--out", str(tmp_path / "x"), *args], env={"COLUMNS": "300"})
        assert bad.exit_code == 2 and expect in bad.output and "Traceback" not in bad.output, bad.output
    assert not (tmp_path / "x").exists()


def test_ray_gives_the_same_results_and_records_failures(tmp_path, fakes):
    """Local Ray with 2 CPUs: same results as in process; a raising task and a dying worker are
    recorded as failed while the others finish."""
    ray = pytest.importorskip("ray")
    log = tmp_path / "calls.log"
    alpha = fakes[0]
    specs = _specs(fakes, log) + [SystemSpec("fake_fail", alpha, {"fail": True}),
                                  SystemSpec("fake_die", alpha, {"die": True})]
    local, _ = reproduce(specs[:2], seeds=[0, 1], out=tmp_path / "local", device="cpu")
    remote, interrupted = reproduce(specs, seeds=[0, 1], out=tmp_path / "ray", device="cpu",
                                    executor="ray", workers=2)
    assert not interrupted and not ray.is_initialized()  # the local instance stopped with the run
    by = {(r.system, r.seed): r for r in remote}
    for a in local:
        _same(a, by[a.system, a.seed])
        for fig in a.figures:  # figures made on the Ray worker came back to the driver
            assert (tmp_path / "ray" / a.system / a.run_key / fig).read_bytes()[:4] == b"\x89PNG"
    assert "RuntimeError: boom from the fake system" in by["fake_fail", 0].error
    assert by["fake_die", 1].status == "failed" and "Worker" in by["fake_die", 1].error
    assert (tmp_path / "ray" / "report.html").exists()
