"""The deletion-mask parametrisation: identity at start, budget, gradient, only gates change, errors."""

import copy
import math

import pytest
import torch
from torch import nn

from neurips26.bit_mask_tuning import (
    BudgetError,
    NoGateProjectionError,
    attach_bit_mask,
    budget,
    count_parameters,
    find_gate_projections,
)
from neurips26.bit_mask_tuning.task import (
    all_pairs,
    answer_logits,
    build_model,
    make_batch,
    sequence_loss,
    target_batch,
)


def _logits(model):
    a, b = all_pairs()
    with torch.no_grad():
        return torch.cat([answer_logits(model, make_batch(a, b, m, "A")) for m in (None, "A")])


@pytest.mark.parametrize("rho", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf"), True, "0.1"])
def test_rho_outside_open_unit_interval_is_refused(base, rho):
    with pytest.raises(BudgetError, match="strictly between 0 and 1"):
        attach_bit_mask(base, rho)


def test_budget_denominators_and_limits():
    assert budget(0.01, 1000, 300, "model") == 10
    assert budget(0.01, 1000, 300, "gate") == 3
    with pytest.raises(BudgetError, match="k=0 < 1"):
        budget(1e-4, 1000, 300)
    with pytest.raises(BudgetError, match="> 300 gate-projection entries"):
        budget(0.5, 1000, 300)
    with pytest.raises(BudgetError, match="denominator"):
        budget(0.1, 1000, 300, "layer")


def test_model_without_gate_projection_lists_what_was_found():
    from transformers import GPT2Config, GPT2LMHeadModel

    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=20, n_positions=8))
    with pytest.raises(NoGateProjectionError, match=r"no gated MLP.*c_fc"):
        attach_bit_mask(gpt2, 0.01)


def test_fused_and_quantised_gates_are_refused():
    class Fused(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Module()
            self.mlp.gate_up_proj = nn.Linear(4, 8)

    with pytest.raises(NoGateProjectionError, match="fused"):
        find_gate_projections(Fused())

    class Quant(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Module()
            self.mlp.gate_proj = nn.Linear(4, 8)
            self.mlp.gate_proj.weight = nn.Parameter(torch.zeros(8, 4, dtype=torch.int8), requires_grad=False)

    with pytest.raises(NoGateProjectionError, match="quantised"):
        find_gate_projections(Quant())


def test_router_named_gate_is_not_matched():
    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Module()
            self.mlp.gate = nn.Linear(4, 2)                   # a router, not a gate projection
            self.mlp.experts = nn.ModuleList([nn.Module()])
            self.mlp.experts[0].gate_proj = nn.Linear(4, 8)

    assert list(find_gate_projections(MoE(), "gate_proj")) == ["mlp.experts.0.gate_proj"]
    with pytest.raises(NoGateProjectionError):
        find_gate_projections(MoE())                           # default target mlp.gate_proj: experts don't match


@pytest.mark.parametrize("family", ["qwen2", "llama"])
@pytest.mark.parametrize("estimator", ["ste", "hard_concrete"])
def test_identity_at_start(family, estimator):
    model = build_model(family, seed=1, hidden=32, layers=2, ffn=64)
    ref = _logits(model)
    bm = attach_bit_mask(model, 0.01, estimator=estimator)
    model.eval()
    assert bm.n_deleted() == 0
    assert torch.equal(_logits(model), ref)  # exact: W * (1 - 0) == W bitwise


def test_budget_respected_and_only_gates_change(base):
    before = copy.deepcopy(base)
    bm = attach_bit_mask(base, 0.01)
    assert bm.n_model == count_parameters(before) and bm.k == math.floor(0.01 * bm.n_model)
    opt = torch.optim.SGD(bm.parameters(), lr=1.0)
    gen = torch.Generator().manual_seed(0)
    base.train()
    for _ in range(8):
        loss = sequence_loss(base, target_batch(32, gen))
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert bm.n_deleted() <= bm.k
    assert bm.n_deleted() == bm.k  # saliency positive for far more than k entries after a few steps
    ref = dict(before.named_parameters())
    for name, p in base.named_parameters():
        if name.endswith(".scores"):
            continue
        assert torch.equal(p, ref[name.replace(".parametrizations.weight.original", ".weight")]), name
    changed_gates = 0
    for name, mod in base.named_modules():
        if isinstance(mod, nn.Linear):
            same = torch.equal(mod.weight, dict(before.named_modules())[name].weight)
            if name.endswith("mlp.gate_proj"):
                changed_gates += not same          # the global top-k may put all k in one layer
            else:
                assert same, name
    assert changed_gates >= 1
    z = bm.deleted()
    for name, mod in bm.modules().items():
        w0 = dict(before.named_modules())[name].weight
        assert torch.equal(mod.weight == 0, z[name] | (w0 == 0))


def test_straight_through_gradient_is_minus_g_times_w(base):
    bm = attach_bit_mask(base, 0.01)
    batch = target_batch(16, torch.Generator().manual_seed(3))
    sequence_loss(base, batch).backward()
    got = [m.scores.grad.clone() for m in bm.masks]
    # reference: the gradient of the same loss w.r.t. the gate weight of an unmasked copy, times −W
    plain = build_model("qwen2", 0, hidden=32, layers=2, ffn=128)
    plain.load_state_dict({k.replace(".parametrizations.weight.original", ".weight"): v
                           for k, v in base.state_dict().items() if ".scores" not in k})
    gates = [m for n, m in plain.named_modules() if n.endswith("mlp.gate_proj")]
    sequence_loss(plain, batch).backward()
    for g, mod in zip(got, gates):
        expected = -mod.weight.grad * mod.weight                                   # ∂L/∂S = −(∂L/∂W') ⊙ W
        assert torch.allclose(g, expected, atol=1e-7, rtol=1e-5)


def test_ties_broken_deterministically(base):
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.fill_(1.0)                                                     # all tied
    z = bm.deleted()
    flat = torch.cat([z[n].flatten() for n in bm.names])
    assert int(flat.sum()) == bm.k and bool(flat[: bm.k].all())                    # the first k positions


def test_hard_concrete_respects_budget_in_train_mode(base):
    bm = attach_bit_mask(base, 0.01, estimator="hard_concrete", seed=0)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.fill_(3.0)                                                     # most gates open
    base.train()
    assert bm.n_deleted() == bm.k
    assert float(bm.l0_penalty().detach()) > 0


def test_detach_bakes_or_restores(base):
    ref = copy.deepcopy(base)
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():
        bm.masks[0].scores[0, :5] = 1.0
    masked = _logits(base)
    bm.detach(bake=True)
    assert torch.equal(_logits(base), masked)
    assert int((base.model.layers[0].mlp.gate_proj.weight[0, :5] == 0).sum()) == 5
    bm2 = attach_bit_mask(ref, 0.01)
    with torch.no_grad():
        bm2.masks[0].scores[0, :5] = 1.0
    bm2.detach(bake=False)
    assert not any(".parametrizations." in n for n, _ in ref.named_parameters())


def test_second_attach_refused(base):
    attach_bit_mask(base, 0.01)
    with pytest.raises(BudgetError, match="already parametrised"):
        attach_bit_mask(base, 0.01)


# ---- review regressions (bad input found by a reviewer) --------------------------------------------

@pytest.mark.parametrize("estimator,tau", [("ste", -1.0), ("ste", float("nan")), ("hard_concrete", -0.5),
                                           ("hard_concrete", 0.0), ("hard_concrete", 1.0)])
def test_threshold_that_deletes_at_start_is_refused(base, estimator, tau):
    # τ < 0 (ste) made every zero score eligible: k weights deleted before any training
    with pytest.raises(ValueError, match="threshold"):
        attach_bit_mask(base, 0.01, estimator=estimator, threshold=tau)


def test_fp8_gate_weight_is_refused():
    class F8(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Module()
            self.mlp.gate_proj = nn.Linear(16, 16, bias=False)
            self.mlp.gate_proj.weight = nn.Parameter(torch.randn(16, 16).to(torch.float8_e4m3fn), requires_grad=False)

    with pytest.raises(NoGateProjectionError, match="float8"):       # FP8 is "floating point" to torch
        find_gate_projections(F8())


def test_gpt2_conv1d_target_suggested_by_the_error_works(tmp_path):
    # the no-gate error suggests target='mlp.c_fc'; that target used to be refused as "not a dense nn.Linear"
    from transformers import GPT2Config, GPT2LMHeadModel

    from neurips26.bit_mask_tuning import apply_mask, save_mask

    cfg = GPT2Config(n_layer=2, n_embd=16, n_head=2, vocab_size=20, n_positions=8)
    torch.manual_seed(0)
    model, fresh = GPT2LMHeadModel(cfg).eval(), None
    fresh = copy.deepcopy(model)
    with pytest.raises(NoGateProjectionError, match="mlp.c_fc"):
        attach_bit_mask(model, 0.01)
    bm = attach_bit_mask(model, 0.01, target="mlp.c_fc")
    assert bm.names == ["transformer.h.0.mlp.c_fc", "transformer.h.1.mlp.c_fc"]
    ids = torch.randint(0, 20, (2, 8), generator=torch.Generator().manual_seed(0))
    opt = torch.optim.SGD(bm.parameters(), lr=1.0)
    for _ in range(3):
        loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert 0 < bm.n_deleted() <= bm.k
    save_mask(bm, tmp_path / "g.bmt")
    apply_mask(fresh, tmp_path / "g.bmt")
    with torch.no_grad():
        assert torch.equal(fresh(input_ids=ids).logits, model(input_ids=ids).logits)   # bit-exact


def test_moe_without_mlp_gate_proj_suggests_the_exact_suffix():
    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = nn.Module()
            self.mlp.gate = nn.Linear(4, 2)
            self.mlp.shared_expert = nn.Module()
            self.mlp.shared_expert.gate_proj = nn.Linear(4, 8)

    with pytest.raises(NoGateProjectionError, match="target='gate_proj'"):
        find_gate_projections(MoE())


def test_numpy_rho_accepted_and_detached_mask_errors_clearly(base):
    import numpy as np

    bm = attach_bit_mask(base, np.float32(0.01))
    assert bm.k == budget(0.01, bm.n_model, bm.n_gate)
    bm.detach(bake=False)
    with pytest.raises(RuntimeError, match="detached"):
        bm.n_deleted()
