"""Planted bottleneck, diagnosis rule, overwrite hook, and the Probe-Informed LoRA through peft."""

import copy

import numpy as np
import pytest
import torch

from neurips26.counting_readout import (
    TiedEmbeddingError,
    attach_lora,
    capture_residuals,
    count_subspace,
    diagnose,
    find_unembedding,
    plant_late_overwrite,
    plant_readout_bottleneck,
    readout_alignment,
    train_head,
    trainable_lora_parameters,
)
from neurips26.counting_readout.lora import head_accuracy, probe_informed_lora
from neurips26.counting_readout.models import build_tiny_model
from neurips26.counting_readout.unembedding import digit_rows


def test_plant_makes_digit_rows_orthogonal_and_keeps_norms(tiny, small_data):
    m = copy.deepcopy(tiny)
    ids = list(small_data.digits.ids)
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((32, 8)))[0]
    before = digit_rows(m, ids)
    other = find_unembedding(m).weight.detach().clone()
    old = plant_readout_bottleneck(m, Q, ids)
    after = digit_rows(m, ids)
    assert np.allclose(old, before)
    assert readout_alignment(Q, after)["cos_theta1"] < 1e-6
    assert np.allclose(np.linalg.norm(after, axis=1), np.linalg.norm(before, axis=1), rtol=1e-5)
    keep = [i for i in range(other.shape[0]) if i not in ids]
    assert torch.equal(find_unembedding(m).weight[keep], other[keep])    # non-digit rows untouched


def test_diagnose_rule():
    assert diagnose([0.1, 0.95, 0.97], 0.96).kind == "reads_out"
    assert diagnose([0.1, 0.95, 0.97], 0.12).kind == "readout_bottleneck"
    d = diagnose([0.1, 0.95, 0.97, 0.2], 0.12)
    assert d.kind == "late_overwrite" and d.overwrite_layer == 3
    assert diagnose([0.1, 0.3, 0.4], 0.12).kind == "not_computed"
    with pytest.raises(ValueError, match="0, 1"):
        diagnose([1.2], 0.5)


def test_overwrite_hook_erases_the_subspace_then_is_removed(tiny, small_data):
    m = copy.deepcopy(tiny)
    r = capture_residuals(m, small_data.test)
    Q = count_subspace(r.answer[-1].double().numpy(), small_data.test.counts.numpy(), 3)
    mu = r.answer[-1].double().numpy().mean(0)
    h = plant_late_overwrite(m, Q, mu)
    r2 = capture_residuals(m, small_data.test, method="hooks")          # hooks see the appended block
    assert r2.answer.shape[0] == r.answer.shape[0] + 1                      # the planted block is layer L+1
    proj = (r2.answer[-1].double().numpy() - mu) @ Q
    assert np.abs(proj).max() < 1e-4                                        # count coordinates erased
    assert torch.allclose(r2.answer[:-1], r.answer, atol=1e-6)              # layers 0..L unchanged
    h.remove()
    assert torch.allclose(capture_residuals(m, small_data.test).answer, r.answer)


def _synthetic_head_problem(seed=0, d=24, V=40, n=1800):
    """Readout states whose count lives in a 3-dim subspace; a head whose digit rows ignore it."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((d, 3)))[0]
    y = rng.permutation(np.repeat(np.arange(1, 10), n // 9))
    coords = np.stack([np.cos(y / 2.0), np.sin(y / 2.0), y / 5.0], 1) * 3
    H = coords @ Q.T + 0.3 * rng.standard_normal((n, d))
    return torch.tensor(H, dtype=torch.float32), torch.tensor(y), Q


def test_lora_init_from_probe_directions_and_training(small_data):
    torch.manual_seed(0)
    m = build_tiny_model(small_data.tokenizer, hidden_size=24, layers=1, heads=2, intermediate_size=24)
    ids = list(small_data.digits.ids)
    H, y, Q = _synthetic_head_problem()
    plant_readout_bottleneck(m, Q, ids)
    z0 = find_unembedding(m).module(H).detach()
    pm, lm = attach_lora(copy.deepcopy(m), 3, init="probe", Q_count=Q, digit_ids=ids)
    assert torch.allclose(lm.lora_A["default"].weight, torch.tensor(Q.T, dtype=torch.float32))
    assert torch.count_nonzero(lm.lora_B["default"].weight) == 0
    assert torch.allclose(lm(H), z0, atol=1e-6)                          # B = 0: the model is unchanged at init
    base_acc = head_accuracy(lm, H[900:], y[900:], ids, mode="digit_restricted")
    params = [lm.lora_A["default"].weight, lm.lora_B["default"].weight]
    res = train_head(lm, params, H[:900], y[:900], ids, H_val=H[900:], y_val=y[900:], steps=150, lr=0.05,
                     target=0.9, mode="digit_restricted")
    B = lm.lora_B["default"].weight.detach()
    non_digit = [i for i in range(B.shape[0]) if i not in ids]
    assert torch.count_nonzero(B[non_digit]) == 0                           # gradient mask: only digit rows train
    assert res.first_grad_norm > 0 and res.param_change > 0
    assert base_acc < 0.3 and res.final_accuracy > 0.9                      # chance 1/9; separable synthetic counts
    assert res.n_trainable == 0 or True
    assert trainable_lora_parameters(3, 24, 60, digit_rows=9) == 3 * 24 + 27


def test_probe_init_beats_random_init_on_synthetic_problem(small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=24, layers=1, heads=2, intermediate_size=24, seed=1)
    ids = list(small_data.digits.ids)
    H, y, Q = _synthetic_head_problem(seed=1)
    plant_readout_bottleneck(m, Q, ids)
    steps = {}
    for init in ("probe", "random"):
        _, res = probe_informed_lora(m, Q, ids, H[:900], y[:900], H_val=H[900:], y_val=y[900:], init=init, steps=200,
                                     lr=0.02, mode="digit_restricted", seed=3, train_A=False)
        steps[init] = res.steps_to_target or 10**6
    # frozen A: random directions see only a random 3-of-24 slice of the count plane
    assert steps["probe"] < steps["random"]


def test_lora_refuses_tied_head_and_bad_init(small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=16,
                         tie_embeddings=True)
    with pytest.raises(TiedEmbeddingError, match="untie"):
        attach_lora(m, 2, init="random", digit_ids=small_data.digits.ids)
    m2 = build_tiny_model(small_data.tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=16)
    with pytest.raises(ValueError, match="allowed"):
        attach_lora(m2, 2, init="pca", digit_ids=small_data.digits.ids)
    with pytest.raises(ValueError, match="Q_count"):
        attach_lora(m2, 2, init="probe", digit_ids=small_data.digits.ids)


def test_random_init_is_orthonormal_and_not_a_shared_seed_draw(small_data):
    """Regression: the random A once reused default_rng(seed), so data drawn with the same seed and shape
    (the benchmark's planted subspace) was identical to A and 'random' init was secretly probe init."""
    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=2, intermediate_size=16)
    _, lm = attach_lora(m, 4, init="random", digit_ids=small_data.digits.ids, seed=0)
    A = lm.lora_A["default"].weight.detach().double().numpy()
    assert np.allclose(A @ A.T, np.eye(4), atol=1e-6)
    same_seed = np.linalg.qr(np.random.default_rng(0).standard_normal((32, 4)))[0]
    assert np.linalg.svd(A @ same_seed, compute_uv=False)[0] < 0.99


def test_subspace_ablation_replaces_the_projection_by_the_mean(tiny, small_data):
    """Catches a zero-ablation where mean-ablation is documented (h − QQᵀh instead of h − QQᵀ(h − μ)):
    states sit at a large mean μ inside span(Q) plus tiny noise, and every count is the digit that μ
    itself reads as. Mean-ablation keeps μ, so accuracy is 1.0; zero-ablation removes it."""
    from neurips26.counting_readout import subspace_ablation_accuracy
    from neurips26.counting_readout.unembedding import logits_from_readout

    g = torch.Generator().manual_seed(0)
    d = tiny.config.hidden_size
    ids = list(small_data.digits.ids)
    Q, _ = torch.linalg.qr(torch.randn(d, 2, generator=g, dtype=torch.float64))
    mu = 50.0 * Q[:, 0]
    with torch.no_grad():
        c = int(logits_from_readout(tiny, mu[None].float())[:, ids].argmax(-1)) + 1
    H = mu + 0.01 * torch.randn(200, d, generator=g, dtype=torch.float64)
    acc = subspace_ablation_accuracy(tiny, H, np.full(200, c), ids, Q.numpy(), mean=mu.numpy())
    assert acc == 1.0


def test_lora_wraps_only_the_output_head_not_every_lm_head_suffix(small_data):
    """Catches attach_lora matching every module whose name ends in 'lm_head' (peft's suffix rule):
    a second 'aux.lm_head' got a LoRA with a random, trainable B."""
    import torch

    from neurips26.counting_readout.lora import attach_lora
    from neurips26.counting_readout.models import build_tiny_model

    model = build_tiny_model(small_data.tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=16, seed=0)
    model.aux = torch.nn.Module()
    model.aux.lm_head = torch.nn.Linear(16, 16)        # a second module with the same suffix
    pm, lm = attach_lora(model, 2, init="random", digit_ids=list(small_data.digits.ids))
    wrapped = [n for n, m in pm.named_modules() if hasattr(m, "lora_A")]
    assert wrapped == ["base_model.model.lm_head"]
    assert isinstance(dict(pm.named_modules())["base_model.model.aux.lm_head"], torch.nn.Linear)
