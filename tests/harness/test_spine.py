"""Tests of the spine: claims, results, config overrides, runner (resume, failure isolation,
interrupts) and the report — driven by small fake systems defined here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from neurips26.harness import claims as C
from neurips26.harness.catalogue import PAPERS, get_paper
from neurips26.harness.claims import Verdict
from neurips26.harness.config import ConfigError, apply_overrides, parse_assignment
from neurips26.harness.report import build_report
from neurips26.harness.results import Result, latest_results, load_result
from neurips26.harness.runner import SystemSpec, reproduce, run_one


def test_catalogue_has_nineteen_unique_systems():
    assert len(PAPERS) == 19
    assert len({p.system for p in PAPERS}) == 19
    assert [p.number for p in PAPERS] == list(range(1, 20))
    assert get_paper("lr-schedules").number == 1 and get_paper("13").system == "lanczos_ddpm"
    with pytest.raises(KeyError, match="known systems"):
        get_paper("nope")


def test_claim_verdicts_are_computed():
    assert C.close("a", "s", measured=0.55, target=0.5, abs_tol=0.1, reason="r", kind="check", source="inferred: test").verdict is Verdict.HOLDS
    assert C.close("a", "s", measured=0.65, target=0.5, abs_tol=0.1, reason="r", kind="check", source="inferred: test").verdict is Verdict.DOES_NOT_HOLD
    assert C.close("a", "s", measured=1.05, target=1.0, rel_tol=0.1, reason="r", kind="check", source="inferred: test").verdict is Verdict.HOLDS
    assert C.at_least("a", "s", measured=2, bound=3, reason="r", kind="check", source="inferred: test").verdict is Verdict.DOES_NOT_HOLD
    assert C.at_most("a", "s", measured=2, bound=3, reason="r", kind="check", source="inferred: test").verdict is Verdict.HOLDS
    assert C.within("a", "s", measured=5, low=0, high=4, reason="r", kind="check", source="inferred: test").verdict is Verdict.DOES_NOT_HOLD
    nan = C.at_least("a", "s", measured=math.nan, bound=0, reason="r", kind="check", source="inferred: test")
    assert nan.verdict is Verdict.DOES_NOT_HOLD and "not a finite" in nan.note
    nc = C.not_checkable("a", "s", paper_value="80%", reason="no GPT-5", full_scale="calls an endpoint", kind="check", source="inferred: test")
    assert nc.verdict is Verdict.NOT_CHECKABLE and "endpoint" in nc.note
    with pytest.raises(ValueError):
        C.close("a", "s", measured=1, target=1, reason="r", kind="check", source="inferred: test")
    with pytest.raises(ValueError):
        C.not_checkable("a", "s", paper_value=None, reason="x", full_scale=" ", kind="check", source="inferred: test")
    with pytest.raises(TypeError):
        C.check("a", "s", measured=1, holds="yes", tolerance="t", reason="r", kind="check", source="inferred: test")  # type: ignore[arg-type]


def test_overrides_validate_with_one_line_messages(make_fake):
    cfg = apply_overrides(make_fake.Config(), {"eta": 0.5}, "fake")
    assert cfg.eta == 0.5
    with pytest.raises(ConfigError, match=r"unknown config key 'nope'.*allowed keys: eta, steps, fail"):
        apply_overrides(make_fake.Config(), {"nope": 1}, "fake")
    with pytest.raises(ConfigError) as exc:
        apply_overrides(make_fake.Config(), {"eta": -1}, "fake")
    msg = str(exc.value)
    assert "'eta'" in msg and "-1" in msg and "gt=0" in msg and "\n" not in msg
    assert parse_assignment("lr-schedules:eta=0.3") == ("lr_schedules", "eta", 0.3)
    assert parse_assignment("name=abc") == (None, "name", "abc")
    with pytest.raises(ConfigError):
        parse_assignment("eta")


def test_run_writes_result_and_resumes(tmp_path: Path, make_fake):
    calls: list = []
    spec = SystemSpec("fake", make_fake(calls), {})
    results, interrupted = reproduce([spec], out=tmp_path, seed=3, device="cpu")
    assert not interrupted and len(calls) == 1
    res = results[0]
    assert res.status == "ok" and res.metrics["total"] == 3
    run_dir = tmp_path / "fake" / res.run_key
    on_disk = load_result(run_dir / "result.json")
    assert on_disk.claims[0].verdict is Verdict.HOLDS and (run_dir / "figures" / "line.png").exists()
    json.loads((run_dir / "result.json").read_text())  # strict JSON
    # same config + code: skipped; --force: rerun; other seed: a new run folder
    reproduce([spec], out=tmp_path, seed=3, device="cpu")
    assert len(calls) == 1
    reproduce([spec], out=tmp_path, seed=3, device="cpu", force=True)
    assert len(calls) == 2
    again, _ = reproduce([spec], out=tmp_path, seed=4, device="cpu")
    assert again[0].run_key != res.run_key and len(calls) == 3
    assert again[0].metrics["draw"] != res.metrics["draw"]  # the seed reaches ctx.rng
    html = (tmp_path / "report.html").read_text()
    assert "data:image/png;base64," in html


def test_seed_is_reproducible(tmp_path: Path, make_fake):
    a, _ = run_one(SystemSpec("fake", make_fake([]), {}), make_fake.Config(), scale="quick", seed=7,
                   out=tmp_path / "a", device="cpu")
    b, _ = run_one(SystemSpec("fake", make_fake([]), {}), make_fake.Config(), scale="quick", seed=7,
                   out=tmp_path / "b", device="cpu")
    assert a.metrics["draw"] == b.metrics["draw"]


def test_failure_is_isolated_and_interrupt_keeps_finished(tmp_path: Path, make_fake):
    good, bad = SystemSpec("good", make_fake([]), {}), SystemSpec("bad", make_fake([]), {"fail": True})
    results, _ = reproduce([bad, good], out=tmp_path, device="cpu")
    assert [r.status for r in results] == ["failed", "ok"]
    assert "RuntimeError: boom" in results[0].error
    assert set(latest_results(tmp_path)) == {"good", "bad"}
    # a failed run is retried on rerun
    calls: list = []
    reproduce([SystemSpec("bad", make_fake(calls), {"fail": True})], out=tmp_path, device="cpu")
    assert len(calls) == 1
    # Ctrl-C during the second system: the first is kept, the second writes nothing
    out2 = tmp_path / "int"
    results, interrupted = reproduce([SystemSpec("good", make_fake([]), {}),
                                      SystemSpec("stop", make_fake([], interrupt=True), {})],
                                     out=out2, device="cpu")
    assert interrupted and [r.system for r in results] == ["good"]
    assert set(latest_results(out2)) == {"good"}
    assert "good" in build_report(out2)


def test_bad_override_fails_before_any_run(tmp_path: Path, make_fake):
    calls: list = []
    with pytest.raises(ConfigError):
        reproduce([SystemSpec("a", make_fake(calls), {}), SystemSpec("b", make_fake(calls), {"steps": 0})],
                  out=tmp_path, device="cpu")
    assert calls == []


def test_result_json_roundtrip_handles_numpy_and_nan():
    import numpy as np

    res = Result(system="x", status="ok", scale="quick", seed=0, config={}, run_key="k", code_version="v",
                 started_at="a", finished_at="b", wall_time_s=1.0,
                 metrics={"arr": np.arange(3), "nan": float("nan"), "f": np.float64(2.5)},
                 claims=[C.at_least("c", "s", measured=np.float64(3), bound=1, reason="r", kind="check", source="inferred: test")])
    back = Result.from_json(res.to_json())
    assert back.metrics == {"arr": [0, 1, 2], "nan": "nan", "f": 2.5}
    assert back.claims[0].verdict is Verdict.HOLDS
    with pytest.raises(ValueError):
        Result.from_json("{}")


def test_atomic_write_gives_normal_permissions(tmp_path: Path):
    from neurips26.harness.results import atomic_write_text

    path = tmp_path / "sub" / "x.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    import os

    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # as a plain open() would create it
    assert [p.name for p in path.parent.iterdir()] == ["x.txt"]  # no temp files left behind


def test_failure_line_keeps_brackets(tmp_path: Path, make_fake, capsys):
    from rich.console import Console

    mod = make_fake([])

    def run(config, ctx):
        raise ValueError("bad value [nan] in list")

    mod.run = run
    console = Console(file=None, force_terminal=False, width=200)
    reproduce([SystemSpec("fake", mod, {})], out=tmp_path, device="cpu", console=console)
    assert "[nan]" in capsys.readouterr().out


def test_claim_helpers_require_a_kind():
    """Every new claim says whether it is the paper's, our reconstruction's or a check."""
    with pytest.raises(TypeError, match="kind"):
        C.at_least("a", "s", measured=2, bound=1, reason="r", source="abstract")  # type: ignore[call-arg]
