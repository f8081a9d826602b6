"""The reproduction end to end at a tiny size, offline and against a stub OpenAI endpoint."""

import numpy as np
import pytest

from neurips26.backends import StubOpenAIServer
from neurips26.harness import RunContext
from neurips26.harness.claims import Kind, Verdict
from neurips26.harness.config import ConfigError, apply_overrides
from neurips26.text_uncanny_valley.experiment import Config, run

TINY = dict(rates=[0.0, 0.2, 0.4, 0.7, 1.0], tokenizers=["gpt2"], n_docs=12, n_boot=200, n_train_needles=40)


def test_offline_run_has_every_claim_kind_and_paper_claims_not_checkable(tmp_path):
    out = run(Config(**TINY), RunContext(seed=0, out_dir=tmp_path))
    kinds = {c.kind for c in out.claims}
    assert kinds == {Kind.CHECK, Kind.RECONSTRUCTION, Kind.PAPER}
    paper = [c for c in out.claims if c.kind is Kind.PAPER]
    assert paper and all(c.verdict is Verdict.NOT_CHECKABLE for c in paper)
    by_id = {c.id: c for c in out.claims}
    assert by_id["perturbation_reversible"].verdict is Verdict.HOLDS
    assert by_id["scorer_fragmented_echo"].verdict is Verdict.HOLDS
    assert (tmp_path / "figures" / "detector_valley.png").is_file()


def test_llm_arm_runs_against_an_openai_compatible_endpoint(tmp_path):
    with StubOpenAIServer(reply="nothing is missing") as server:
        cfg = Config(**{**TINY, "n_docs": 8}, backend="openai", model="stub", base_url=server.url, llm_docs=4,
                     llm_rates=[0.0, 0.5, 1.0], icl_shots=1)
        out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
        assert len(server.requests) > 0
    paper = {c.id: c for c in out.claims if c.kind is Kind.PAPER}
    # the math claim compares named frontier models: not checkable with any single configured model
    gated = ("llm_regularised_reduces_u", "llm_icl_no_rescue", "llm_entropy_before_minimum")
    assert all(c.verdict is not Verdict.NOT_CHECKABLE for k, c in paper.items() if k not in ("llm_math_u",) + gated)
    # a subject with no U has nothing for regularising to reduce, ICL to rescue, or entropy to precede
    assert all(paper[k].verdict is not Verdict.NOT_CHECKABLE or "no U" in paper[k].reason for k in gated)
    assert paper["llm_math_u"].verdict is Verdict.NOT_CHECKABLE and "Gemini" in paper["llm_math_u"].reason
    assert all(c.object == "real" for c in paper.values())
    # a subject that never answers shows no U: the claim is judged, not forced
    assert paper["llm_u_shape"].verdict in (Verdict.DOES_NOT_HOLD, Verdict.INCONCLUSIVE)


@pytest.mark.parametrize("key, value, match", [
    ("rates", [0.0, 0.5], "rates"), ("rates", [0.0, 0.5, 0.4, 1.0], "increasing"),
    ("n_docs", 10**9, "n_docs"), ("backend", "openai", "needs model"), ("seeds", [0], "seeds"),
])
def test_config_bounds_are_one_line_errors(key, value, match):
    with pytest.raises(ConfigError, match=match):
        apply_overrides(Config.quick(), {key: value}, "text_uncanny_valley")


def test_full_scale_refuses_early_without_an_api_key(monkeypatch):
    from typer.testing import CliRunner

    from neurips26.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    res = CliRunner().invoke(app, ["reproduce", "text-uncanny-valley", "--scale", "full", "--out", "/tmp/none"])
    assert res.exit_code != 0 and "OPENAI_API_KEY" in res.output
    assert Config.quick().resources().credentials == ()  # the offline run needs no key


def _dead_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def test_dead_endpoint_stops_the_run_in_seconds_before_any_work(tmp_path, monkeypatch):
    """Catches a dead endpoint found after minutes (issue 32 item 3: the run died in numpy after 3
    minutes): the module preflight and run() raise a one-line BackendError naming the URL within
    seconds, before any tokenizer is loaded."""
    import time

    from neurips26.backends import BackendError
    from neurips26.text_uncanny_valley import experiment

    url = f"http://127.0.0.1:{_dead_port()}/v1"
    cfg = Config(**TINY, backend="openai", model="x", base_url=url)
    loaded = []
    monkeypatch.setattr(experiment, "load_tokenizer", lambda name: loaded.append(name))
    for call in (lambda: experiment.preflight(cfg), lambda: run(cfg, RunContext(seed=0, out_dir=tmp_path))):
        t = time.perf_counter()
        with pytest.raises(BackendError) as err:
            call()
        assert time.perf_counter() - t < 15  # one call, no retries, a 10 s timeout; refused at once here
        assert url in str(err.value) and "\n" not in str(err.value)
    assert not loaded


def test_failing_calls_have_a_time_budget_progress_and_no_verdict(tmp_path, capsys):
    """Catches a sweep that retries every call for hours with no progress and then dies in numpy on
    all-NaN curves (issue 32 item 3): an endpoint that answers the preflight and then fails every call
    must stop retrying once the retry budget is spent, print progress (calls, failed, rate, time left),
    make every LLM claim not checkable with the failed-call count, and report the calls as failed."""
    import time

    with StubOpenAIServer(reply="ok", max_requests=1) as server:  # preflight answered, then HTTP 503
        cfg = Config(**{**TINY, "n_docs": 8}, backend="openai", model="stub", base_url=server.url, llm_docs=4,
                     llm_rates=[0.0, 0.5, 1.0], icl_shots=1, retry_budget_s=0.5)
        t = time.perf_counter()
        out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
        elapsed = time.perf_counter() - t
        requests = len(server.requests)
    paper = [c for c in out.claims if c.kind is Kind.PAPER]
    assert paper and all(c.verdict is Verdict.NOT_CHECKABLE and "backend calls failed" in c.reason for c in paper)
    total = 3 * (3 * 8 + 4)  # rates × (three arms × 8 documents + 4 math items)
    assert out.backend.calls == total and out.backend.failed == total and out.backend.too_many_failed
    assert requests < 20  # the budget ended the retrying: later calls never reach the server
    assert elapsed < 120  # offline part ~30 s + one call's retries within the client's backoff
    err = capsys.readouterr().err
    assert f"LLM sweep: {total}/{total} calls, {total} failed" in err and "calls/s" in err


class _VerboseBackend:
    """Every reply runs to the token limit (a verbose small model)."""

    name = "verbose"

    def chat(self, messages, params):
        from neurips26.backends import ChatReply

        return ChatReply(text="nothing is missing " * 50, prompt_tokens=10, completion_tokens=params.max_tokens)


def test_truncated_replies_are_scored_and_counted_not_failed_calls(tmp_path):
    """Catches a reply cut off at max_tokens counted as a failed backend call (64 of 84 replies of a
    real small model; the run failed with "more than 5 % failed calls"): truncated replies are
    scored, counted apart, and the claims are judged."""
    from neurips26.text_uncanny_valley import experiment

    cfg = Config(**{**TINY, "n_docs": 8}, backend="openai", model="x", base_url="http://127.0.0.1:9/v1", llm_docs=4,
                 llm_rates=[0.0, 0.5, 1.0], icl_shots=1, max_tokens=16)
    metrics: dict = {}
    claims, use = experiment._llm_valley(cfg, RunContext(seed=0, out_dir=tmp_path), metrics, _VerboseBackend())
    assert use.failed == 0 and use.calls > 0
    assert metrics["llm"]["truncated_replies"] == metrics["llm"]["replies"] > 0
    judged = [c for c in claims if c.verdict is not Verdict.NOT_CHECKABLE]
    assert "llm_u_shape" in {c.id for c in judged}
    assert not any("failed" in c.reason for c in claims)


def test_regularised_claim_needs_a_u_to_reduce():
    """Catches "regularising reduces the U" holding on [0, 0] when the model shows no U at all
    (SmolLM2 read through surprisal found every needle at every rate: drop 0 [0, 0] read "holds")."""
    from neurips26.text_uncanny_valley.experiment import _valley_claims
    from neurips26.text_uncanny_valley.sweep import UTest

    flat = UTest(0.0, False, 0.0, (0.0, 0.0), "no_u", {"mean": [1.0] * 3, "lo": [1.0] * 3, "hi": [1.0] * 3})
    statements = {k: (k, "x") for k in ("llm_u_shape", "llm_icl_no_rescue", "llm_regularised_reduces_u",
                                        "llm_math_u", "llm_entropy_before_minimum")}
    claims = {c.id: c for c in _valley_claims(statements, {"random": flat, "icl": flat, "regularised": flat},
                                              (0.0, (0.0, 0.0)), 0.1, "m", "full")}
    assert claims["llm_regularised_reduces_u"].verdict is Verdict.NOT_CHECKABLE
    assert claims["llm_u_shape"].verdict is Verdict.DOES_NOT_HOLD
    # nothing to rescue and no minimum to place: both gated, not judged (ICL read "does not hold" before)
    assert claims["llm_icl_no_rescue"].verdict is Verdict.NOT_CHECKABLE
    assert claims["llm_entropy_before_minimum"].verdict is Verdict.NOT_CHECKABLE


def _valley_curves(depth: float, n_docs: int = 40, seed: int = 0):
    """(rates, per_doc): F1 = 1 − depth·bump(p) + noise, the bump peaking at p = 0.5."""
    rates = np.linspace(0, 1, 7)
    rng = np.random.default_rng(seed)
    bump = np.exp(-((rates - 0.5) / 0.15) ** 2)
    per_doc = np.clip(1 - depth * bump[:, None] + 0.1 * rng.standard_normal((rates.size, n_docs)), 0, 1)
    return rates, per_doc


def test_u_shape_is_judged_against_the_shuffled_rate_control():
    """Catches a U-shape claim judged without its control (the paired difference must be what is
    judged) and a control that keeps the rate structure (unshuffled, its depth equals the observed one
    and a real valley would read "does not hold").

    A valley of depth 0.5 with noise 0.1 over 40 documents: the observed held-out depth is ≈ 0.5, the
    shuffled control's ≈ 0 (a minimum chosen by chance on the selection half), so the paired interval
    lies above 0; on flat curves (depth 0) the minimum is interior by chance half the time, and then
    the paired interval must reach 0 or below."""
    from neurips26.text_uncanny_valley.experiment import _u_claim
    from neurips26.text_uncanny_valley.sweep import shuffled_rate_control, u_shape_test

    rates, per_doc = _valley_curves(0.5)
    u = u_shape_test(per_doc, rates, n_boot=500, seed=1)
    assert u.interior
    d, ctrl, (lo, hi) = shuffled_rate_control(per_doc, rates, u, n_boot=500, seed=2)
    assert abs(ctrl) < 0.15 and lo > 0.2      # control ≈ 0 (noise 0.1/√20 per mean), difference ≈ 0.5
    c = _u_claim("u", "U", u, kind="paper", source="abstract", object="real", control="shuffled", paired=(d, ctrl, (lo, hi)))
    assert c.verdict is Verdict.HOLDS and c.measured == pytest.approx(d)
    from neurips26.text_uncanny_valley.experiment import _valley_claims

    statements = {k: (k, "x") for k in ("llm_u_shape", "llm_icl_no_rescue", "llm_regularised_reduces_u",
                                        "llm_math_u", "llm_entropy_before_minimum")}
    wired = {c.id: c for c in _valley_claims(statements, {"random": u, "icl": u, "regularised": u},
                                             (0.1, (0.05, 0.2)), 0.1, "m", "full", u_ctrl=(d, ctrl, (lo, hi)))}
    assert wired["llm_u_shape"].measured == pytest.approx(d) and "shuffled" in wired["llm_u_shape"].control
    for seed in range(6):
        rates, flat = _valley_curves(0.0, seed=seed)
        u0 = u_shape_test(flat, rates, n_boot=500, seed=seed)
        if u0.interior:
            assert shuffled_rate_control(flat, rates, u0, n_boot=500, seed=seed)[2][0] <= 0


def test_shuffled_rate_control_rejects_an_end_minimum():
    """Catches the control run on a minimum at an end of the grid (no valley to compare)."""
    from neurips26.text_uncanny_valley.sweep import UTest, shuffled_rate_control

    rates, per_doc = _valley_curves(0.5)
    end = UTest(0.0, False, 0.0, (0.0, 0.0), "no_u", {}, list(range(20)))
    with pytest.raises(ValueError, match="interior minimum"):
        shuffled_rate_control(per_doc, rates, end)


def test_entropy_order_needs_a_minimum_established_against_the_control():
    """Catches the entropy-before-minimum claim held on a chance minimum (one the shuffled-rate control
    cannot tell from noise) and held when the minimum lies before the entropy peak."""
    from neurips26.text_uncanny_valley.experiment import _valley_claims
    from neurips26.text_uncanny_valley.sweep import UTest

    u = UTest(0.5, True, 0.3, (0.1, 0.5), "u", {}, list(range(10)))
    statements = {k: (k, "x") for k in ("llm_u_shape", "llm_icl_no_rescue", "llm_regularised_reduces_u",
                                        "llm_math_u", "llm_entropy_before_minimum")}

    def order(p_h, ctrl):
        claims = _valley_claims(statements, {"random": u, "icl": u, "regularised": u}, (0.1, (0.05, 0.2)), p_h,
                                "m", "full", u_ctrl=ctrl)
        return next(c for c in claims if c.id == "llm_entropy_before_minimum")

    assert order(0.2, (0.3, 0.0, (0.1, 0.5))).verdict is Verdict.HOLDS
    assert order(0.2, (0.05, 0.0, (-0.1, 0.2))).verdict is Verdict.INCONCLUSIVE   # a chance minimum
    assert order(0.6, (0.3, 0.0, (0.1, 0.5))).verdict is Verdict.DOES_NOT_HOLD    # minimum before the peak
    assert order(0.2, (0.3, 0.0, (0.1, 0.5))).control
