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
    assert all(c.verdict is not Verdict.NOT_CHECKABLE for c in paper.values())
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
