"""The reproduction end to end at a tiny size, offline and against a stub OpenAI endpoint."""

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
    assert all(c.verdict is not Verdict.NOT_CHECKABLE for k, c in paper.items()
               if k not in ("llm_math_u", "llm_regularised_reduces_u"))
    # a subject with no U has nothing for regularising to reduce
    reg = paper["llm_regularised_reduces_u"]
    assert reg.verdict is not Verdict.NOT_CHECKABLE or "no U" in reg.reason
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
