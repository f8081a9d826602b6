"""The local-model path on a real checkpoint's structure: a prompt count the run cannot use is refused
by the config (it crashed after 49 CPU-s), a head tied to the input embedding (SmolLM2, Gemma 3) is
untied in the repair's copy (it raised TiedEmbeddingError after 30 CPU-minutes), each finished stage
is on disk before the next starts, and the per-layer probes run on a few layers."""

import json

import numpy as np
import pytest
import torch

from neurips26.counting_readout import experiment as E
from neurips26.counting_readout.models import build_tiny_model
from neurips26.counting_readout.unembedding import find_unembedding
from neurips26.harness import RunContext
from neurips26.harness.claims import Verdict


@pytest.fixture()
def tied_folder(tmp_path, small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=2, heads=4, intermediate_size=32,
                         tie_embeddings=True)
    assert find_unembedding(m).tied
    m.save_pretrained(tmp_path / "ckpt")
    small_data.tokenizer.save_pretrained(tmp_path / "ckpt")
    return tmp_path / "ckpt"


def test_local_prompts_the_run_cannot_use_are_refused_by_the_config():
    """Catches local_prompts in 90..539 accepted while a rank-8 count subspace needs 40 fit prompts per
    count (the run crashed after the prompts and probes were computed)."""
    assert E.min_local_prompts(8) == 540
    with pytest.raises(ValueError, match="local_prompts=539; allowed: >= 540"):
        E.Config(local_prompts=539)
    assert E.Config(local_prompts=540).local_prompts == 540
    assert E.Config(local_prompts=E.min_local_prompts(2), rank=2).rank == 2      # the minimum follows the rank


def test_repair_unties_a_copy_of_a_tied_head(small_data):
    """Catches the repair raising TiedEmbeddingError on a tied model, and untying the caller's model."""
    from neurips26.counting_readout.lora import probe_informed_lora

    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=4, intermediate_size=32,
                         tie_embeddings=True).eval()
    emb = m.get_input_embeddings().weight.detach().clone()
    g = torch.Generator().manual_seed(0)
    H, y = torch.randn(90, 32, generator=g), torch.arange(90) % 9 + 1
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((32, 8)))[0]
    pm, res = probe_informed_lora(m, Q, small_data.digits.ids, H, y, H_val=H, y_val=y, steps=3, lr=0.01)
    assert res.first_grad_norm > 0
    assert find_unembedding(m).tied and torch.equal(m.get_input_embeddings().weight, emb)   # caller's model as it was


def test_local_run_writes_each_stage_and_keeps_the_diagnosis_after_a_crash(tied_folder, tmp_path, monkeypatch):
    """Catches the diagnosis results lost when the repair step crashes (nothing was written before the
    end), and probes fitted at every layer when a few were asked for."""
    from neurips26.counting_readout import lora as L

    cfg = E.Config(model_path=str(tied_folder), local_layers=2, local_lora_steps=10)
    E.preflight(cfg)                                             # a tied head passes the structure check
    out = tmp_path / "run"
    claims = E._local_model(cfg, RunContext(seed=0, out_dir=out), metrics := {})
    by = {c.id: c for c in claims}
    assert set(by) == {"local_count_decodable", "local_count_decodable_90", "local_digit_rows_orthogonal",
                       "local_pi_lora_restores", "local_pi_lora_reaches_80"}
    for c in claims:
        assert c.object == "real" and c.verdict is not Verdict.NOT_CHECKABLE
        assert c.control or c.kind == "reconstruction", c.id
    assert metrics["local_model"]["probe_layers"] == [0, 2]      # embedding and last layer only
    for stage in ("diagnosis", "repair_probe", "repair_random"):
        assert (out / "local_model" / f"{stage}.json").is_file(), stage

    def boom(*a, **k):
        raise RuntimeError("repair crashed")

    monkeypatch.setattr(L, "digit_lora_on_logits", boom)
    out2 = tmp_path / "run2"
    with pytest.raises(RuntimeError, match="repair crashed"):
        E._local_model(cfg, RunContext(seed=0, out_dir=out2), {})
    saved = json.loads((out2 / "local_model" / "diagnosis.json").read_text())
    assert len(saved["probe_accuracy"]) == 2 and "alignment" in saved


def test_no_model_gives_not_checkable_real_claims():
    """Catches the real-model claims silently missing (or judged) when no model is configured, and the
    reason of model=none claiming the model is not installed."""
    claims = E._not_checkable(E.Config(model="none"))
    local = [c for c in claims if c.id.startswith("local_")]
    assert len(local) == 3
    for c in local:
        assert c.verdict is Verdict.NOT_CHECKABLE and c.object == "real" and "no model configured" in c.reason


def test_local_paper_claims_are_judged_against_their_controls(tied_folder, tmp_path):
    """Catches the real-model paper claims judged on absolute accuracy with the control only reported
    (then any rank-r LoRA that restores counting, or any probe on a layer where the shuffled control is
    as good, makes them hold): local_pi_lora_restores must measure probe-informed − random-init LoRA on
    the same held-out prompts and local_count_decodable probe − shuffled-count control, each with a
    paired interval, bound strictly above 0; the absolute levels are separate reconstructions."""
    cfg = E.Config(model_path=str(tied_folder), local_layers=2, local_lora_steps=10)
    claims = E._local_model(cfg, RunContext(seed=0, out_dir=tmp_path / "run"), metrics := {})
    by = {c.id: c for c in claims}
    lm = metrics["local_model"]
    rep = lm["repair"]
    pi, lo = by["local_pi_lora_restores"], by["local_count_decodable"]
    assert pi.kind == lo.kind == "paper"
    assert pi.measured == pytest.approx(rep["probe"]["final_accuracy"] - rep["random"]["final_accuracy"])
    assert lo.measured == pytest.approx(lm["probe_accuracy"][-1] - lm["control_accuracy"][-1])
    for c, key in ((pi, "pi_minus_random_lora"), (lo, "probe_minus_shuffled_control")):
        assert c.rule["bound"] == E.STRICTLY_BETTER and c.interval[0] <= c.measured <= c.interval[1], c.id
        assert list(c.interval) == pytest.approx(lm["paired"][key][1]), c.id
    assert by["local_pi_lora_reaches_80"].kind == by["local_count_decodable_90"].kind == "reconstruction"
    assert by["local_pi_lora_reaches_80"].measured == pytest.approx(rep["probe"]["final_accuracy"])
    n = rep["probe"]["n_correct"]                   # the per-prompt counts agree with the reported accuracy
    assert n / len(json.loads((tmp_path / "run" / "local_model" / "repair_probe.json").read_text())["val_correct"]) \
        == pytest.approx(rep["probe"]["final_accuracy"])
