"""Local-checkpoint loading, the diagnosis pipeline on a saved model, and the experiment end to end."""

import pytest
import torch

from neurips26.counting_readout import diagnose_model, load_local_model
from neurips26.counting_readout.experiment import Config, run
from neurips26.counting_readout.models import answer_logits, build_tiny_model
from neurips26.harness import RunContext
from neurips26.harness.claims import Claim, Kind, Verdict
from neurips26.harness.config import ConfigError, apply_overrides


def test_local_checkpoint_round_trip_and_diagnosis(tmp_path, small_data):
    m = build_tiny_model(small_data.tokenizer, arch="qwen2", hidden_size=32, layers=2, heads=4, intermediate_size=64)
    m.save_pretrained(tmp_path)
    small_data.tokenizer.save_pretrained(tmp_path)
    model, tok = load_local_model(tmp_path)
    with torch.no_grad():
        assert torch.allclose(answer_logits(model, small_data.test), answer_logits(m.eval(), small_data.test), atol=1e-5)
    diag = diagnose_model(model, tok, n_prompts=600, seed=0)     # generated prompts, tokenised by the loaded tokenizer
    assert len(diag.probes) == 3 and diag.Q_count.shape == (32, 8)
    assert diag.diagnosis.kind in {"reads_out", "readout_bottleneck", "late_overwrite", "not_computed"}
    assert "diagnosis:" in diag.summary()


def test_local_checkpoint_errors(tmp_path):
    with pytest.raises(ValueError, match="config.json"):
        load_local_model(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "no_such_model"}')
    with pytest.raises(ValueError, match="cannot load"):
        load_local_model(tmp_path)


def test_config_validation_and_full():
    with pytest.raises(ConfigError, match="arch"):
        apply_overrides(Config.quick(), {"arch": "gpt9"}, "counting_readout")
    with pytest.raises(ConfigError, match="lora_seeds"):
        apply_overrides(Config.quick(), {"lora_seeds": [0, 1]}, "counting_readout")
    with pytest.raises(ConfigError, match="rank"):
        apply_overrides(Config.quick(), {"rank": 9}, "counting_readout")
    with pytest.raises(ConfigError, match="n_probe"):
        apply_overrides(Config.quick(), {"n_probe": 200}, "counting_readout")
    full = Config.full()
    assert full.layers > Config().layers and len(full.lora_seeds) >= 5
    assert Config().resources().num_gpus == 0
    assert Config(model_path="/some/llm").resources().num_gpus == 1


def test_reduced_run_every_claim_has_kind_and_verdict(tmp_path):
    cfg = Config(train_steps=60, n_train=300, n_probe=360, n_test=135, n_text=60, lora_steps=20, hidden_size=32,
                 intermediate_size=64)
    out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    ids = [c.id for c in out.claims]
    assert len(ids) == len(set(ids)) >= 20
    assert {c.kind for c in out.claims} == {Kind.PAPER, Kind.RECONSTRUCTION, Kind.CHECK}
    for c in out.claims:
        assert isinstance(c, Claim) and isinstance(c.verdict, Verdict) and c.statement and c.source
    by = {c.id: c for c in out.claims}
    # exact identities hold whatever the (barely trained) model learned
    for cid in ("capture_methods_agree", "final_norm_folded", "digit_rows_orthogonal_after_break",
                "probes_unchanged_by_break", "lora_actually_trains", "cached_features_faithful",
                "principal_angles_match_scipy", "snr_gaussian_analytic"):
        assert by[cid].verdict is Verdict.HOLDS, cid
    assert by["six_models_restored"].verdict is Verdict.NOT_CHECKABLE
    assert (tmp_path / "figures" / "count_signal_per_layer.png").exists()
    # 60 steps: the model does not count, so every claim about a counting model's readout is not a
    # verdict (catches 'the repair restores 45 %' judged as 'does not hold' on a model that never counted)
    from neurips26.counting_readout.experiment import NEEDS_A_COUNTING_MODEL

    assert by["tiny_model_counts"].verdict is Verdict.DOES_NOT_HOLD
    for cid in NEEDS_A_COUNTING_MODEL:
        assert by[cid].verdict is Verdict.NOT_CHECKABLE and "does not count" in by[cid].reason, cid


@pytest.mark.slow
def test_quick_run_reproduces_the_planted_bottleneck(tmp_path):
    """The quick configuration itself (about 60 CPU-s): the trained model counts (catches a training recipe
    whose model does not form: at 1200 uniform steps it counted 90.9 %, inconclusive, and nine claims were
    withheld), the plant breaks it, probes still decode, the diagnosis separates the accounts and the
    Probe-Informed LoRA restores counting."""
    out = run(Config.quick(), RunContext(seed=0, out_dir=tmp_path))
    by = {c.id: c for c in out.claims}
    for cid in ("tiny_model_counts", "count_decodable_final_layer", "planted_bottleneck_breaks_readout",
                "digit_rows_orthogonal_after_break", "diagnosis_separates_accounts", "pi_lora_restores_counting",
                "count_subspace_is_causal"):
        assert by[cid].verdict is Verdict.HOLDS, cid


def test_confirmation_run_returns_only_claims_tuned_after_a_look(tmp_path):
    """A confirmation seed judges only tuned claims (skipping the metric checks, the not-checkable
    LLM claims and the figures); the planted-bottleneck repair claims are reconstructions."""
    from neurips26.counting_readout import experiment as E

    assert E.CONFIRMATION_SEEDS and 0 not in E.CONFIRMATION_SEEDS
    cfg = Config(train_steps=60, n_train=300, n_probe=360, n_test=135, n_text=60, lora_steps=20, hidden_size=32,
                 intermediate_size=64)
    out = run(cfg, RunContext(seed=101, out_dir=tmp_path, confirmation=True))
    by = {c.id: c for c in out.claims}
    assert by and all(not c.preregistered for c in out.claims)
    assert {"tiny_model_counts", "pi_lora_restores_counting", "pi_lora_fewer_steps_than_random"} <= set(by)
    assert "snr_gaussian_analytic" not in by and "six_models_restored" not in by
    for cid in ("pi_lora_restores_counting", "general_text_loss_preserved"):
        assert by[cid].kind is Kind.RECONSTRUCTION and "planted" in by[cid].statement, cid
