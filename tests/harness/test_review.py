"""Spine review: Ctrl-C that Python swallows, bad --out, bad --set, damaged results, report."""

from __future__ import annotations

import json
import os
import signal
import types
from pathlib import Path

import pytest
from pydantic import model_validator
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ConfigError, apply_overrides
from neurips26.harness.report import build_report
from neurips26.harness.results import Result, latest_results
from neurips26.harness.runner import SystemSpec, reproduce

from .test_cli import _patch_fake_system

runner = CliRunner()


def _swallowing_module(calls: list) -> types.ModuleType:
    """A system whose run gets Ctrl-C but swallows it (as a weakref callback or bare except can)."""
    mod = types.ModuleType("swallow")
    from .conftest import FakeConfig

    mod.Config = FakeConfig

    def run(config, ctx):
        calls.append(config)
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:  # noqa: BLE001 - the point of the test
            pass
        return Outcome()

    mod.run = run
    return mod


def test_swallowed_ctrl_c_still_stops_and_keeps_finished(tmp_path: Path, make_fake):
    first, second, third = [], [], []
    results, interrupted = reproduce([SystemSpec("good", make_fake(first), {}),
                                      SystemSpec("swallow", _swallowing_module(second), {}),
                                      SystemSpec("never", make_fake(third), {})],
                                     out=tmp_path, device="cpu")
    assert interrupted and [r.system for r in results] == ["good"]
    assert len(second) == 1 and third == []
    assert set(latest_results(tmp_path)) == {"good"}  # the interrupted system wrote nothing
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    # the next run resumes: the finished system is reused, the others run
    again, interrupted = reproduce([SystemSpec("good", make_fake(first), {}),
                                    SystemSpec("never", make_fake(third), {})], out=tmp_path, device="cpu")
    assert not interrupted and len(first) == 1 and len(third) == 1


def test_ctrl_c_through_the_cli_exits_130(monkeypatch, tmp_path, make_fake):
    import neurips26.cli as cli

    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    monkeypatch.setattr(cli, "load_experiment", lambda p: _swallowing_module(calls))
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path)])
    assert res.exit_code == 130 and "interrupted" in res.output and "Traceback" not in res.output
    assert (tmp_path / "report.html").exists()


@pytest.mark.parametrize("make_out, expect", [
    (lambda t: (t / "f").write_text("x") and t / "f", "is a file"),
    (lambda t: (t / "f").write_text("x") and t / "f" / "sub", "cannot create the folder"),
])
def test_bad_out_is_one_line_and_runs_nothing(monkeypatch, tmp_path, make_fake, make_out, expect):
    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    out = make_out(tmp_path)
    res = runner.invoke(app, ["reproduce", "--out", str(out)], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and expect in res.output and str(out) in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert calls == []


def test_bad_set_does_not_create_out(monkeypatch, tmp_path, make_fake):
    _patch_fake_system(monkeypatch, [], make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path / "new"), "--set", "eta=0"])
    assert res.exit_code == 2 and not (tmp_path / "new").exists()


def test_set_errors_say_what_is_allowed(monkeypatch, tmp_path, make_fake):
    _patch_fake_system(monkeypatch, [], make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "bogus=1"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "keys: lr-schedules: eta, steps, fail" in res.output
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "nosuch:eta=1"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "'nosuch' is not a known system; selected: lr-schedules" in res.output
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "ncp-tom:eta=1"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "'ncp-tom' is not among those being run" in res.output


@pytest.mark.parametrize("value", [True, "nan", float("nan"), float("inf"), "-Infinity"])
def test_bool_and_non_finite_numbers_are_rejected(make_fake, value):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(make_fake.Config(), {"eta": value}, "fake")
    assert "'eta'" in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ConfigError):
        apply_overrides(make_fake.Config(), {"steps": True}, "fake")
    assert apply_overrides(make_fake.Config(), {"fail": True}, "fake").fail is True


def test_model_validator_error_is_one_line(make_fake):
    class Cfg(make_fake.Config):
        @model_validator(mode="after")
        def _check(self):
            if self.steps > 5 and self.eta > 1:
                raise ValueError("eta > 1 needs\nsteps <= 5")
            return self

    with pytest.raises(ConfigError) as exc:
        apply_overrides(Cfg(), {"steps": 9, "eta": 2.0}, "fake")
    msg = str(exc.value)
    assert "\n" not in msg and "steps=9" in msg and "eta > 1 needs steps <= 5" in msg


def _good_record() -> dict:
    return json.loads(Result("s", "ok", "quick", 0, {}, "k", "v", "a", "b", 1.0).to_json())


@pytest.mark.parametrize("change", [
    lambda d: [1, 2],
    lambda d: {**d, "wall_time_s": "x"},
    lambda d: {**d, "status": "maybe"},
    lambda d: {**d, "seed": True},
    lambda d: {**d, "figures": ["../../etc/passwd"]},
    lambda d: {**d, "claims": [{"id": "x"}]},
    lambda d: {k: v for k, v in d.items() if k != "config"},
])
def test_damaged_records_are_value_errors(change):
    with pytest.raises(ValueError, match="not a neurips26 result record"):
        Result.from_json(json.dumps(change(_good_record())))


def test_report_on_damaged_folder_warns_and_flags(tmp_path: Path, make_fake):
    results, _ = reproduce([SystemSpec("a", make_fake([]), {}), SystemSpec("b", make_fake([]), {})],
                           out=tmp_path, device="cpu")
    a_dir, b_dir = (tmp_path / r.system / r.run_key for r in results)
    (a_dir / "result.json").write_text((a_dir / "result.json").read_text()[:200])  # truncated
    (b_dir / "figures" / "line.png").unlink()
    res = runner.invoke(app, ["report", str(tmp_path)], env={"COLUMNS": "300"})
    assert res.exit_code == 1 and "warning: skipped" in res.output and "result.json" in res.output
    html = (tmp_path / "report.html").read_text()
    assert "Unreadable results" in html and "a/" in html and "is missing from the run folder" in html
    (b_dir / "result.json").write_text("[1, 2]")
    res = runner.invoke(app, ["report", str(tmp_path)], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "no readable results" in res.output and res.exception is not None
    assert isinstance(res.exception, SystemExit)


def test_report_escapes_claim_text_and_shows_overrides(tmp_path: Path, make_fake):
    mod = make_fake([])
    base_run = mod.run

    def run(config, ctx):
        out = base_run(config, ctx)
        out.claims.append(C.check("lt", "loss < 1 & <script>x</script>", measured={"a": 0.123456789},
                                  holds=True, tolerance="a < 1", reason="R&D", paper_value="<1", kind="check", source="inferred: test"))
        return out

    mod.run = run
    reproduce([SystemSpec("esc", mod, {"eta": 0.12})], out=tmp_path, device="cpu")
    html = build_report(tmp_path)
    assert "loss &lt; 1 &amp; &lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
    assert "R&amp;D" in html and "&lt;1" in html and "0.1235" in html
    assert "--set eta=0.12" in html and "(custom)" in html


def test_list_never_cuts_system_names():
    res = runner.invoke(app, ["list"], env={"COLUMNS": "80"})
    assert res.exit_code == 0 and "text-uncanny-valley" in res.output and "search-agent-attacks" in res.output


def test_show_without_results_says_how_to_get_them(monkeypatch, tmp_path, make_fake):
    _patch_fake_system(monkeypatch, [], make_fake)
    res = runner.invoke(app, ["show", "lr-schedules", "--out", str(tmp_path)], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and "no results under" in res.output
    runner.invoke(app, ["reproduce", "--out", str(tmp_path)])
    res = runner.invoke(app, ["show", "lr-schedules", "--out", str(tmp_path)], env={"COLUMNS": "80"})
    assert res.exit_code == 0 and "holds" in res.output and "None" not in res.output


def test_bad_device_is_one_line(monkeypatch, tmp_path, make_fake):
    import torch

    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--device", "bogus"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "--device 'bogus'" in res.output and "cpu, cuda" in res.output
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--device", "cuda"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "no cuda device" in res.output and calls == []
    assert runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--device", "cpu"]).exit_code == 0


def test_text_fields_take_the_text_as_typed(monkeypatch, tmp_path, make_fake):
    import neurips26.cli as cli

    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    mod = make_fake(calls)

    class Cfg(mod.Config):
        model: str = ""

    mod.Config = Cfg
    monkeypatch.setattr(cli, "load_experiment", lambda p: mod)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "model=1e3", "--set", "eta=0.1"])
    assert res.exit_code == 0, res.output
    assert calls[0].model == "1e3" and calls[0].eta == 0.1
    html = (tmp_path / "report.html").read_text()
    assert "Seed: 0." in html


def test_scale_without_a_config_is_a_config_error(monkeypatch, tmp_path, make_fake):
    import neurips26.cli as cli
    from neurips26.harness.config import ExperimentConfig

    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    mod = make_fake(calls)

    class QuickOnly(ExperimentConfig):
        eta: float = 0.1

    mod.Config = QuickOnly
    monkeypatch.setattr(cli, "load_experiment", lambda p: mod)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--scale", "full"], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and "no full configuration" in res.output and calls == []


@pytest.mark.parametrize("seed", ["-1", str(2**32), str(2**70)])
def test_seed_out_of_range_is_one_line(monkeypatch, tmp_path, make_fake, seed):
    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--seed", seed], env={"COLUMNS": "300"})
    assert res.exit_code == 2 and f"--seed {seed}: allowed" in res.output and calls == []


def test_report_write_failure_is_one_line(monkeypatch, tmp_path, make_fake):
    import neurips26.cli as cli

    reproduce([SystemSpec("a", make_fake([]), {})], out=tmp_path, device="cpu")

    def deny(out):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli, "write_report", deny)
    res = runner.invoke(app, ["report", str(tmp_path)], env={"COLUMNS": "300"})
    assert res.exit_code == 1 and "cannot write" in res.output and "Permission denied" in res.output
