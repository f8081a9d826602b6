"""Flows: exact log-density, adjoint, flow-matching loss, training loop and its bad-input errors."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.lowrank_collapse import (
    GaussianMixture,
    LinearVectorField,
    MLPVectorField,
    NonFiniteError,
    TooManyEvaluationsError,
    divergence,
    eight_gaussians,
    flow_log_density,
    flow_matching_loss,
    reverse_kl_loss,
    sample_flow,
    standard_normal_log_prob,
    train,
)


def test_log_density_of_a_linear_flow_is_exact():
    g = torch.Generator().manual_seed(0)
    A = 0.5 * torch.randn(3, 3, generator=g, dtype=torch.float64)
    z = torch.randn(16, 3, generator=g, dtype=torch.float64)
    x1, log_q, nfe = flow_log_density(LinearVectorField(3, A), z, method="dopri5", rtol=1e-10, atol=1e-10)
    assert torch.allclose(x1, z @ torch.matrix_exp(A).T, atol=1e-8)
    # log q(e^A z) = log N(z) − tr A
    assert torch.allclose(log_q, standard_normal_log_prob(z) - torch.trace(A), atol=1e-8)
    assert nfe > 0


def test_divergence_equals_jacobian_trace():
    torch.manual_seed(0)
    f = MLPVectorField(3, 16, 2).double()
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    div = divergence(f(0.3, x), x)
    for i in range(len(x)):
        J = torch.autograd.functional.jacobian(lambda xi: f(0.3, xi[None])[0], x[i].detach())
        assert float(div[i].detach()) == pytest.approx(float(torch.trace(J)), abs=1e-12)


def test_log_density_matches_the_flow_maps_jacobian_determinant():
    # nonlinear field: log q(x1) = log N(z) − log |det ∂x1/∂z| (change of variables); both by dopri5
    torch.manual_seed(1)
    f = MLPVectorField(2, 16, 1).double()
    z = torch.randn(4, 2, dtype=torch.float64)
    _, log_q, _ = flow_log_density(f, z, method="dopri5", rtol=1e-10, atol=1e-10)
    for i in range(len(z)):
        J = torch.autograd.functional.jacobian(
            lambda zi: sample_flow(f, zi[None], method="dopri5", rtol=1e-10, atol=1e-10)[0], z[i])
        expected = standard_normal_log_prob(z[i:i + 1])[0] - torch.linalg.slogdet(J)[1]
        assert float(log_q[i].detach()) == pytest.approx(float(expected.detach()), abs=1e-6)  # solver tolerance 1e-10


def test_adjoint_gradients_match_backprop():
    z = torch.randn(6, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    grads = []
    for adjoint in (False, True):
        torch.manual_seed(3)
        f = MLPVectorField(2, 8, 1).double()
        _, lq, _ = flow_log_density(f, z, method="dopri5", adjoint=adjoint, rtol=1e-9, atol=1e-9)
        grads.append(torch.cat([p.reshape(-1) for p in torch.autograd.grad(lq.sum(), list(f.parameters()))]))
    assert torch.allclose(grads[0], grads[1], rtol=1e-4, atol=1e-7)


def test_flow_matching_loss_is_zero_for_the_exact_field_of_a_point_mass():
    # data = a single point c: x_t = (1−t) x0 + t c, u = c − x0 = (c − x_t)/(1 − t) — a known field
    c = torch.tensor([[1.5, -0.5]])

    def exact(t, x):
        return (c - x) / (1 - t[:, None])

    g = torch.Generator().manual_seed(0)
    assert float(flow_matching_loss(exact, c.repeat(64, 1), g)) == pytest.approx(0.0, abs=1e-9)


def test_training_fits_a_gaussian_by_flow_matching():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    target = GaussianMixture([[2.0, -1.0]], 0.5)
    f = MLPVectorField(2, 32, 2)
    train(f, lambda s: flow_matching_loss(f, target.sample(128, g), g), 300, 3e-3)
    with torch.no_grad():
        x = sample_flow(f, torch.randn(2000, 2, generator=g), 20)
    assert torch.allclose(x.mean(0), torch.tensor([2.0, -1.0]), atol=0.15)   # 300 steps: bias ≲ 0.1
    assert float(x.std(0).mean()) == pytest.approx(0.5, abs=0.15)


def test_nonfinite_loss_stops_with_the_step():
    f = MLPVectorField(2, 8, 1)

    def loss_fn(step):
        out = f(0.0, torch.zeros(1, 2)).sum()
        return out * (float("nan") if step == 3 else 1.0)

    with pytest.raises(NonFiniteError, match="step 3: loss is nan") as err:
        train(f, loss_fn, 10)
    assert err.value.step == 3


def test_nonfinite_target_log_density_stops_with_the_step():
    f = MLPVectorField(2, 8, 1)

    def log_p(x):  # −inf outside the right half-plane (unclipped support)
        return torch.where(x[:, 0] > 0, torch.zeros(len(x)), torch.full((len(x),), -math.inf))

    g = torch.Generator().manual_seed(0)
    with pytest.raises(NonFiniteError, match=r"step 0: target log-density non-finite for \d+/64"):
        train(f, lambda s: reverse_kl_loss(f, log_p, 64, 4, g)[0], 5)


def test_vi_needs_a_log_density():
    f = MLPVectorField(2, 8, 1)
    with pytest.raises(TypeError, match="needs the target's .*log-density, got samples"):
        reverse_kl_loss(f, eight_gaussians().sample(100), 8)
    with pytest.raises(TypeError, match="got int"):
        reverse_kl_loss(f, 3, 8)


def test_solver_limits_and_bad_methods():
    f = MLPVectorField(2, 8, 1)
    with pytest.raises(TooManyEvaluationsError, match="max_nfe=3"):
        flow_log_density(f, torch.randn(4, 2), method="dopri5", max_nfe=3)
    with pytest.raises(ValueError, match="method='heun'; allowed"):
        sample_flow(f, torch.randn(4, 2), method="heun")
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        sample_flow(f, torch.randn(4))
    with pytest.raises(ValueError, match="sigma_min=1.0"):
        flow_matching_loss(f, torch.randn(4, 2), sigma_min=1.0)
    with pytest.raises(ValueError, match="activation='relu'"):
        MLPVectorField(2, activation="relu")


def test_reverse_kl_loss_accepts_the_products_linear_field():
    """Catches: reverse_kl_loss(LinearVectorField(2), ...) refusing the product's own field
    ("needs a .dim attribute", issue 33 item 11) or failing on its float64 parameter."""
    from neurips26.lowrank_collapse import LinearVectorField, reverse_kl_loss

    field = LinearVectorField(2)
    target = lambda x: -0.5 * (x ** 2).sum(1)              # noqa: E731  N(0, I) up to a constant
    loss, info = reverse_kl_loss(field, target, 64, n_steps=4, generator=torch.Generator().manual_seed(0))
    # A = 0: q = N(0, I) = p, so log q − log p̃ = −(d/2) log 2π exactly for every sample
    assert info["x1"].dtype == torch.float64
    assert float(loss.detach()) == pytest.approx(-math.log(2 * math.pi), abs=1e-12)
    loss.backward()
    assert field.A.grad is not None and field.A.grad.shape == (2, 2)


def test_hutchinson_trace_is_unbiased_and_matches_the_exact_log_density():
    """Catches: a biased or mis-scaled Hutchinson estimator (e.g. Gaussian probes not averaged,
    a missing probe on one side, probes redrawn differently): at d = 120 the mean over 400
    independent Rademacher probe sets of log q matches the exact trace's log q."""
    from neurips26.lowrank_collapse import divergence, divergence_hutchinson

    torch.manual_seed(0)
    d = 120
    f = MLPVectorField(d, 32, 1, final_scale=0.5).double()
    z = torch.randn(3, d, dtype=torch.float64)
    _, exact, _ = flow_log_density(f, z, n_steps=2)
    _, est, _ = flow_log_density(f, z, n_steps=2, trace="hutchinson", n_probes=400,
                                 generator=torch.Generator().manual_seed(1))
    # per-sample standard error of the 400-probe mean, from the probes' own spread
    x = z.clone().requires_grad_(True)
    v = f(0.0, x)
    probes = (2 * torch.randint(0, 2, (400, 3, d), generator=torch.Generator().manual_seed(2)) - 1).double()
    single = torch.stack([divergence_hutchinson(v, x, p[None], create_graph=False) for p in probes])
    se = single.std(0) / 20
    # 5 standard errors (two solver steps each add one such term: ×√2), plus float64 round-off
    assert torch.all((est - exact).abs() <= 5 * 2 ** 0.5 * se + 1e-9), (est - exact, se)
    assert torch.allclose(single.mean(0), divergence(v, x, create_graph=False), atol=float(5 * se.max()))
    # a linear field v = A x: log q(x1) = log N(z) − tr A exactly; tr A = 3d dominates, so a probe
    # applied on one side only (εᵀA1, mean 0) or a sum not divided by the probe count is far off
    gA = torch.Generator().manual_seed(3)
    A = 3 * torch.eye(d, dtype=torch.float64) + 0.3 * torch.randn(d, d, generator=gA, dtype=torch.float64) / d ** 0.5
    lin = LinearVectorField(d, A)
    _, lq, _ = flow_log_density(lin, z, n_steps=2, trace="hutchinson", n_probes=50,
                                generator=torch.Generator().manual_seed(4))
    expected = standard_normal_log_prob(z) - torch.trace(A)
    # Rademacher variance of εᵀAε: 2 Σ_{i≠j} ((A_ij + A_ji)/2)² ≈ 2·0.09·d → sd ≈ 4.6 per probe, ÷√50
    assert torch.allclose(lq, expected, atol=5 * (2 * 0.09 * d) ** 0.5 / 50 ** 0.5), (lq - expected)
    with pytest.raises(ValueError, match="trace='hutch'"):
        flow_log_density(f, z, trace="hutch")
    with pytest.raises(ValueError, match="n_probes=0"):
        flow_log_density(f, z, trace="hutchinson", n_probes=0)
