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


def test_orthogonality_just_under_the_random_percentile_is_not_judged_on_a_point(tied_folder, tmp_path, monkeypatch):
    """Catches local_digit_rows_orthogonal judged 'holds' on a point value with no interval: with the
    random-subspace 95th percentile set just above the measured cos θ1 (a point just under it, as SmolLM2's
    0.2361 vs 0.2551), the count subspace's sampling noise over the fit prompts must make the claim
    inconclusive, not 'holds'. The interval is the bootstrap over fit prompts (refitted subspace)."""
    seen = {}
    real_diagnose = E.diagnose_model

    def diagnose(*a, **k):
        seen["diag"] = real_diagnose(*a, **k)
        return seen["diag"]

    monkeypatch.setattr(E, "diagnose_model", diagnose)
    # the control's percentile 1e-6 above the measured point: just under it, as on the real model
    monkeypatch.setattr(E, "random_principal_cosine", lambda *a, **k: seen["diag"].alignment["cos_theta1"] + 1e-6)
    cfg = E.Config(model_path=str(tied_folder), local_layers=2, local_lora_steps=10)
    claims = E._local_model(cfg, RunContext(seed=0, out_dir=tmp_path / "run"), metrics := {})
    c = {c.id: c for c in claims}["local_digit_rows_orthogonal"]
    assert c.kind == "paper" and c.control
    assert c.measured == seen["diag"].alignment["cos_theta1"] < c.rule["bound"]
    assert c.interval is not None and c.interval[0] < c.rule["bound"] < c.interval[1]
    assert c.verdict is Verdict.INCONCLUSIVE
    from neurips26.counting_readout import load_local_model
    from neurips26.counting_readout.diagnosis import bootstrap_cos_theta1

    boot = metrics["local_model"]["cos_theta1_bootstrap"]
    assert tuple(boot["interval"]) == c.interval and boot["cos_theta1"] == pytest.approx(c.measured, abs=1e-12)
    f = seen["diag"].features                                # the interval comes from the run seed
    again = bootstrap_cos_theta1(f["fit_H"].numpy(), f["fit_y"].numpy(),
                                 E.digit_rows(load_local_model(tied_folder)[0], seen["diag"].digits.ids), 8, seed=0)
    assert again["interval"] == boot["interval"]


def test_bootstrap_cos_theta1_covers_the_true_angle_and_refuses_bad_input():
    """Catches a bootstrap interval that ignores the subspace's sampling noise (zero width), misses the
    true cos θ1 of a planted geometry, or accepts too few replicates. Planted: class means along a
    2-plane at a known angle to the 'digit rows' plane, isotropic noise; cos θ1 = cos 60° = 0.5."""
    from neurips26.counting_readout.diagnosis import bootstrap_cos_theta1

    rng = np.random.default_rng(0)
    d = 20
    e = np.eye(d)
    u1, u2 = e[0], e[1]                                   # count plane
    rows = np.stack([0.5 * e[0] + np.sqrt(0.75) * e[2], e[3]])   # digit rows [2, d]: cos θ1 = 0.5
    y = np.repeat(np.arange(1, 10), 60)
    t = (y - 5) / 4.0
    H = np.outer(t, u1) + np.outer(t ** 2 - t.mean() ** 2, u2) + 0.3 * rng.standard_normal((len(y), d))
    b = bootstrap_cos_theta1(H, y, rows, 2, n_boot=100, seed=0)
    lo, hi = b["interval"]
    assert hi - lo > 0.005 and lo <= 0.5 <= hi, b         # noise 0.3 over 60 prompts a count: not exact
    assert b == bootstrap_cos_theta1(H, y, rows, 2, n_boot=100, seed=0)
    for bad in ({"n_boot": 5}, {"level": 1.0}):
        with pytest.raises(ValueError, match="allowed"):
            bootstrap_cos_theta1(H, y, rows, 2, **bad)
