"""Verdicts that are evidence: confirmation seeds for tuned claims, no verdict from a failed or
dead backend, one line before any work when an input or endpoint is bad."""

from __future__ import annotations

import socket
import time
import types

import pytest
from pydantic import Field

from neurips26.backends import BackendError, ScriptedBackend, make_backend, preflight
from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome, Verdict
from neurips26.harness.config import ConfigError, ExperimentConfig
from neurips26.harness.report import collect
from neurips26.harness.runner import SystemSpec, preflight_inputs, reproduce


def _dead_port() -> int:
    """A loopback port where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TunedConfig(ExperimentConfig):
    shift: float = Field(0.0, ge=-10, le=10)
    calls: int = Field(0, ge=0, le=100)
    failed: int = Field(0, ge=0, le=100)

    @classmethod
    def full(cls):
        return cls()


def _tuned_module(seen: list) -> types.ModuleType:
    mod = types.ModuleType("tuned_experiment")
    mod.Config = TunedConfig
    mod.CONFIRMATION_SEEDS = (101, 102, 103)

    def run(config, ctx):
        seen.append((ctx.seed, ctx.confirmation))
        x = 1.0 + 0.01 * ctx.seed + config.shift
        claims = [C.at_least("tuned", "tuned claim", measured=x, bound=0.5, reason="r", kind="paper",
                             source="abstract", object="toy", falsifiable_by="t",
                             tuned_after_look="bound lowered from 2 after a first run"),
                  C.at_least("flips", "holds where it was tuned only", measured=x if not ctx.confirmation else 0.1,
                             bound=0.5, reason="r", kind="paper", source="abstract", object="toy",
                             falsifiable_by="t", tuned_after_look="bound chosen after a first run")]
        if not ctx.confirmation:  # a preregistered group, skipped in confirmation runs
            claims.append(C.at_least("prereg", "preregistered claim", measured=x, bound=0.5, reason="r",
                                     kind="paper", source="abstract", object="toy", falsifiable_by="t"))
        use = C.BackendUse(calls=config.calls, failed=config.failed) if config.calls else None
        if use is not None:
            claims = C.unless_backend_ok(claims, use)
        return Outcome(metrics={"x": x}, claims=claims, backend=use)

    mod.run = run
    return mod


def test_confirmation_seeds_run_and_only_confirmed_tuned_verdicts_count(tmp_path):
    """Catches a tuned claim counted in the headline from the seeds it was tuned on, and
    confirmation runs mixed into the development seed group."""
    seen: list = []
    mod = _tuned_module(seen)
    results, _ = reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[0], out=tmp_path, device="cpu")
    assert sorted(seen) == [(0, False), (101, True), (102, True), (103, True)]
    assert sorted(r.role for r in results) == ["confirmation"] * 3 + ["development"]
    assert len(list(tmp_path.glob("tuned_sys/quick-confirm-seed10*-*/result.json"))) == 3
    data = collect(tmp_path)
    s = next(s for s in data.sections if s.paper.system == "tuned_sys")
    assert s.seeds == [0] and s.confirmation_seeds == [101, 102, 103]
    rows = {r.claim.id: r for r in s.rows}
    assert rows["tuned"].tuned and rows["tuned"].confirmation is not None
    assert rows["tuned"].confirmation.role == "confirmation" and rows["tuned"].counted is Verdict.HOLDS
    # the development verdict of 'flips' holds; only its confirmed verdict (does not hold) counts
    assert rows["flips"].verdict is Verdict.HOLDS and rows["flips"].counted is Verdict.DOES_NOT_HOLD
    assert s.counts["paper"]["holds"] == 2 and s.counts["paper"]["does_not_hold"] == 1  # prereg + tuned; flips
    # the attention list shows the same verdicts as the headline
    att = [r for r in data.attention if r.system == "tuned_sys"]
    assert [(r.claim.id, r.counted) for r in att] == [("flips", Verdict.DOES_NOT_HOLD)]
    assert data.tuned_confirmation == (1, 2)
    assert data.paper_by_object["toy"]["holds"] == 2
    # without confirmation runs the tuned verdict is exploratory: shown, not counted
    seen.clear()
    out2 = tmp_path / "noconfirm"
    reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[0], out=out2, device="cpu", confirm=False)
    assert seen == [(0, False)]
    s2 = next(s for s in collect(out2).sections if s.paper.system == "tuned_sys")
    assert s2.counts["paper"]["holds"] == 1 and s2.exploratory_counts["paper"]["holds"] == 2


def test_fewer_than_three_confirmation_seeds_do_not_confirm(tmp_path):
    """Catches one lucky confirmation seed turning a tuned claim into a headline verdict: with two
    confirmation seeds the tuned claims stay exploratory (shown, not counted)."""
    mod = _tuned_module([])
    mod.CONFIRMATION_SEEDS = (101, 102)
    reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[0], out=tmp_path, device="cpu")
    data = collect(tmp_path)
    s = next(s for s in data.sections if s.paper.system == "tuned_sys")
    rows = {r.claim.id: r for r in s.rows}
    assert rows["tuned"].confirmation is not None and rows["tuned"].counted is None
    assert s.counts["paper"]["holds"] == 1 and s.counts["paper"]["does_not_hold"] == 0
    assert {r.claim.id for r in data.exploratory_attention} == {"tuned", "flips"}
    assert not [r for r in data.attention if r.system == "tuned_sys"]


def test_failed_backend_calls_fail_the_run_and_never_give_a_verdict(tmp_path):
    """Catches the dead-endpoint bug: 40 of 40 failed calls must not read 'holds' with status ok."""
    mod = _tuned_module([])
    mod.CONFIRMATION_SEEDS = ()
    results, _ = reproduce([SystemSpec("tuned_sys", mod, {"calls": 40, "failed": 40})], seeds=[0],
                           out=tmp_path, device="cpu")
    (res,) = results
    assert res.status == "failed" and "40 of 40 calls failed" in res.error
    assert all(c.verdict is Verdict.NOT_CHECKABLE for c in res.claims)
    assert res.backend == {"calls": 40, "failed": 40, "max_failed_fraction": 0.05, "what": "", "prompt_tokens": 0,
                           "completion_tokens": 0, "model": ""}
    results, _ = reproduce([SystemSpec("tuned_sys", mod, {"calls": 100, "failed": 1})], seeds=[0],
                           out=tmp_path / "b", device="cpu")
    assert results[0].status == "ok" and "1 of 100 backend calls failed" in results[0].claims[0].reason


def test_preflight_of_a_dead_endpoint_fails_in_seconds_in_one_line():
    """Catches retrying a dead endpoint for minutes (the client's retries, a 60 s timeout)."""
    port = _dead_port()
    backend = make_backend("openai", model="x", base_url=f"http://127.0.0.1:{port}/v1", max_retries=4)
    t0 = time.perf_counter()
    with pytest.raises(BackendError) as err:
        preflight(backend, timeout_s=5)
    assert time.perf_counter() - t0 < 5
    msg = str(err.value)
    assert "\n" not in msg and f"127.0.0.1:{port}/v1" in msg and "model x" in msg


def test_preflight_accepts_a_live_backend_and_the_retry_budget_stops_retrying():
    """A scripted backend answers its preflight; a backend whose retry budget is spent fails at
    once instead of retrying every later call (catches hours of retries with no server)."""
    assert preflight(ScriptedBackend(lambda messages: "ok")) >= 0
    port = _dead_port()
    backend = make_backend("openai", model="x", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0,
                           timeout_s=2, retry_budget_s=0.001)
    from neurips26.backends import Message

    with pytest.raises(BackendError):
        backend.chat([Message("user", "hi")])
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match="retry budget spent"):
        backend.chat([Message("user", "hi")])
    assert time.perf_counter() - t0 < 0.5


def test_experiment_preflight_runs_before_any_work(tmp_path):
    """Catches an input checked only after minutes of work: the experiment's preflight(config)
    raises, reproduce stops with one ConfigError line and no run starts."""
    seen: list = []
    mod = _tuned_module(seen)

    def bad_preflight(config):
        raise FileNotFoundError("model_path '/nonexistent': no such folder; give a folder with config.json")

    mod.preflight = bad_preflight
    with pytest.raises(ConfigError, match="tuned_sys: model_path '/nonexistent'"):
        reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[0], out=tmp_path, device="cpu")
    assert seen == []
    with pytest.raises(ConfigError, match="^tuned_sys: "):
        preflight_inputs(mod, TunedConfig(), "tuned_sys")


def test_a_deterministic_system_is_run_once_over_seeds_and_never_confirmed(tmp_path):
    """Catches replication manufactured from identical runs: a system declaring DETERMINISTIC =
    True is run on the first seed only (no confirmation seeds), its claims keep the single-run
    verdicts, and the console says why; a non-bool declaration is refused before any run."""
    import io

    from rich.console import Console

    seen: list = []
    mod = _tuned_module(seen)
    mod.DETERMINISTIC = True
    buf = io.StringIO()
    results, _ = reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[7, 23], out=tmp_path, device="cpu",
                           console=Console(file=buf, width=200))
    assert seen == [(7, False)] and [r.seed for r in results] == [7]
    assert "deterministic: seeds do not change its paper claims" in buf.getvalue()
    single = {c.id: c.verdict for c in results[0].claims}
    s = next(s for s in collect(tmp_path).sections if s.paper.system == "tuned_sys")
    assert {r.claim.id: r.verdict for r in s.rows} == single
    mod.DETERMINISTIC = "yes"
    with pytest.raises(ConfigError, match="DETERMINISTIC='yes'"):
        reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[7, 23], out=tmp_path / "b", device="cpu")


def test_the_attention_line_of_a_confirmed_claim_quotes_the_confirmation_numbers(tmp_path):
    """Catches a development number printed beside a confirmation verdict in the attention list
    (``ours 1.0 …; needs >= 0.5`` labelled does not hold): the line quotes the confirmation seeds'
    value and names them."""
    mod = _tuned_module([])
    reproduce([SystemSpec("tuned_sys", mod, {})], seeds=[0], out=tmp_path, device="cpu")
    row = next(r for r in collect(tmp_path).attention if r.claim.id == "flips")
    line = row.reason_line()
    assert "confirmation seeds 101, 102, 103" in line and "0.1" in line and "ours 1 " not in line
