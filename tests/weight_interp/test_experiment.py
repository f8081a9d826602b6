"""The reproduction end to end at a tiny size, offline and with the LLM arm against a stub endpoint."""

import pytest

from neurips26.backends import StubOpenAIServer
from neurips26.harness import RunContext
from neurips26.harness.claims import Kind, Verdict
from neurips26.harness.config import ConfigError, apply_overrides
from neurips26.weight_interp.experiment import Config, run

TINY = dict(seeds=[0, 1], corpus_chars=120_000, ctx=16, d_model=32, d_mlp=64, n_head=2, steps=40, batch=8,
            eval_every=10, val_windows=20, explain_windows=60, score_windows=60, n_weights=20, n_examples=12,
            min_positives=3, n_ablation_weights=2, ablation_windows=1, planted_windows=150)


def test_quick_run_gives_every_claim_a_kind_and_verdict(tmp_path):
    out = run(Config(**TINY), RunContext(seed=0, out_dir=tmp_path))
    assert out.claims and all(c.kind is not None and isinstance(c.verdict, Verdict) for c in out.claims)
    by = {c.id: c for c in out.claims}
    assert {c.kind for c in out.claims} == {Kind.CHECK, Kind.RECONSTRUCTION, Kind.PAPER}
    for cid in ("sparsity_invariant_every_step", "kept_fraction_schedule", "gradient_rms_normalised",
                "planted_weight_explained", "shuffled_control_not_explained"):
        assert by[cid].verdict is Verdict.HOLDS, cid
    assert by["paper_fractions"].verdict is Verdict.NOT_CHECKABLE
    assert by["llm_sparse_vs_dense"].verdict is Verdict.NOT_CHECKABLE
    assert (tmp_path / "figures" / "interpretable_fraction.png").is_file()


def test_llm_arm_through_an_openai_compatible_endpoint(tmp_path):
    def reply(body):
        user = body["messages"][-1]["content"]
        return "MATTERS WHEN: the current token is a colon" if "MATTERS:" in user else "no"

    with StubOpenAIServer(reply=reply) as server:
        cfg = Config(**{**TINY, "seeds": [0, 1]}, backend="openai", model="stub", base_url=server.url,
                     llm_weights=4, llm_min_usable=1)
        out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
        assert len(server.requests) > 0
    claim = {c.id: c for c in out.claims}["llm_sparse_vs_dense"]
    assert claim.verdict is not Verdict.NOT_CHECKABLE, claim.reason
    assert "usable explanations" in claim.note
    assert "llm_arm" in out.metrics


@pytest.mark.parametrize("key, value, match", [("seeds", [0], "seeds"), ("tau", 0.3, "tau"),
                                               ("target_fraction", 1.0, "target_fraction"),
                                               ("backend", "openai", "needs model")])
def test_config_errors_are_one_line(key, value, match):
    with pytest.raises(ConfigError, match=match):
        apply_overrides(Config.quick(), {key: value}, "weight_interp")


def test_full_config_declares_a_gpu():
    assert Config.full().resources().num_gpus == 1 and Config.quick().resources().num_gpus == 0
