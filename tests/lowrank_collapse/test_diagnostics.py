"""Rank diagnostics: exact/effective ranks, the rank bound from layer signals, subspace measures."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.lowrank_collapse import (
    MLPVectorField,
    capture_layer_signals,
    entropy_effective_rank,
    flow_matching_loss,
    gaussian_reference_participation_ratio,
    gradient_rank_bound,
    numerical_rank,
    participation_ratio,
    principal_angle_cosines,
    rank_summary,
    singular_values,
    subspace_energy_fraction,
    top_right_singular_vectors,
)


def _low_rank(m, n, r, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(m, r, generator=g, dtype=dtype) @ torch.randn(r, n, generator=g, dtype=dtype))


def test_numerical_rank_of_constructed_low_rank_matrices():
    for r in (1, 3, 7):
        assert numerical_rank(_low_rank(40, 30, r)) == r
    assert numerical_rank(torch.zeros(5, 4)) == 0


def test_float32_source_needs_float32_tolerance():
    # a rank-3 product computed in float32: its round-off (~1e-7 relative) would read as full rank
    # with a float64 tolerance; the source-dtype rule counts 3
    M = _low_rank(64, 64, 3, dtype=torch.float32)
    assert numerical_rank(M.double(), source_dtype=torch.float32) == 3
    assert numerical_rank(M.double(), source_dtype=torch.float64) > 3


def test_effective_ranks_on_known_spectra():
    assert participation_ratio([1, 1, 1, 1]) == pytest.approx(4)
    assert entropy_effective_rank([2, 2, 2]) == pytest.approx(3)
    assert participation_ratio([1, 0, 0]) == pytest.approx(1)
    # PR = (Σσ²)²/Σσ⁴: σ² = (4, 1) → 25 / 17
    assert participation_ratio([2, 1]) == pytest.approx(25 / 17)
    assert participation_ratio([0, 0]) == 0.0 and entropy_effective_rank([0.0]) == 0.0


def test_randomized_svd_matches_exact_top_values_of_a_low_rank_matrix():
    torch.manual_seed(0)
    M = _low_rank(300, 200, 5)
    exact = singular_values(M)[:5]
    rand = singular_values(M, "randomized", k=5)
    assert torch.allclose(rand, exact, rtol=1e-8)  # exact rank 5 < k + oversample: the sketch spans it
    s = rank_summary(M, "randomized", k=5)
    # the sketch's residual certifies the rank (it was None before RankMonitor's auto method was fixed)
    assert s.rank == 5 == numerical_rank(M) and s.method == "randomized"
    with pytest.raises(ValueError, match="k=None; allowed: 1..200"):
        singular_values(M, "randomized")
    with pytest.raises(ValueError, match="method='qr'"):
        singular_values(M, "qr")


def test_rank_bound_reports_when_trivial():
    b = gradient_rank_bound(64, 64, n_signals=12)
    assert b.bound == 12 and not b.trivial
    b = gradient_rank_bound(64, 9, n_signals=12)
    assert b.bound == 9 and b.trivial
    assert gradient_rank_bound(64, 64, 8, terms_per_signal=3).bound == 24
    with pytest.raises(ValueError, match="n_signals=0"):
        gradient_rank_bound(4, 4, 0)


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 5), times=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_flow_matching_gradient_is_the_signal_sum_and_obeys_the_bound(batch, times, seed):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    field = MLPVectorField(6, 48, 2)
    with capture_layer_signals(field.linear_layers) as signals:
        flow_matching_loss(field, torch.randn(batch, 6, generator=g), g, n_times=times).backward()
    N = batch * times
    for layer, sig in zip(field.linear_layers, signals):
        G = layer.weight.grad.double()
        assert sig.inputs.shape[0] == sig.cotangents.shape[0] == N
        # (1): ∇_W L = Σ δ h^T, float32 accumulation error only
        assert torch.allclose(sig.gradient(), G, rtol=1e-4, atol=1e-7 * float(G.abs().max()))
        r = numerical_rank(layer.weight.grad)
        assert r <= gradient_rank_bound(*G.shape, N).bound
        assert r <= sig.rank_bound()


def test_capture_rejects_unsupported_layers():
    with pytest.raises(TypeError, match="LayerNorm is not supported; supported: nn.Linear"):
        with capture_layer_signals([torch.nn.LayerNorm(3)]):
            pass


def test_principal_angles_and_energy_fraction():
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.normal(size=(10, 3)))
    assert np.allclose(principal_angle_cosines(U, U @ rng.normal(size=(3, 3))), 1.0)
    Q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    assert np.allclose(principal_angle_cosines(Q[:, :3], Q[:, 3:6]), 0.0, atol=1e-12)
    M = torch.as_tensor(rng.normal(size=(20, 3)) @ U.T)        # row space inside span(U)
    assert subspace_energy_fraction(M, U) == pytest.approx(1.0)
    assert np.allclose(principal_angle_cosines(top_right_singular_vectors(M, 3), U), 1.0)
    with pytest.raises(ValueError, match="basis has 9 rows"):
        subspace_energy_fraction(M, U[:9])


def test_gaussian_reference_matches_marchenko_pastur():
    # PR of an m×n Gaussian matrix (m ≥ n) → n / (1 + n/m); 128×32 → 25.6 (± finite-size)
    assert gaussian_reference_participation_ratio((128, 32)) == pytest.approx(25.6, rel=0.05)


def _euler_solve(field, z, n_steps):
    """x_{k+1} = x_k + h v(t_k, x_k): each Linear layer is called once per step."""
    x, h = z, 1.0 / n_steps
    for k in range(n_steps):
        x = x + h * field(torch.full((x.shape[0],), k * h), x)
    return x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_captured_gradients_equal_weight_grad_through_a_three_step_euler_solve(seed):
    """Catches: inputs and cotangents of a layer called several times (the steps of an ODE solve)
    paired in the wrong order. Flow matching calls each layer once and cannot see it; through a
    3-step Euler solve the right pairing reproduces weight.grad to float32 round-off, a wrong one
    is off by ~1e-2 relative (issue 34 item 3)."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    field = MLPVectorField(4, 32, 2)
    z = torch.randn(16, 4, generator=g)
    target = torch.randn(16, 4, generator=g)
    with capture_layer_signals(field.linear_layers) as signals:
        loss = (_euler_solve(field, z, 3) - target).pow(2).sum(1).mean()
        loss.backward()
    for layer, sig in zip(field.linear_layers, signals):
        G = layer.weight.grad.double()
        assert sig.inputs.shape[0] == sig.cotangents.shape[0] == 3 * 16
        err = float((sig.gradient() - G).abs().max() / G.abs().max())
        # float32 forward/backward against a float64 sum of 48 outer products: ~1e-7 relative;
        # 1e-5 leaves two orders of margin and is three below the wrong-pairing error
        assert err < 1e-5, err


def test_capture_pairs_by_call_even_when_a_call_gets_no_cotangent():
    """Catches: cotangents concatenated in arrival order, which drops the pairing when one call's
    output does not reach the loss (its cotangent is zero and must stay in its own row)."""
    torch.manual_seed(0)
    field = MLPVectorField(3, 8, 1)
    a, b = torch.randn(5, 3), torch.randn(5, 3)
    with capture_layer_signals(field.linear_layers) as signals:
        ya = field(0.1, a)
        field(0.2, b)                       # called, never used by the loss
        ya.pow(2).sum().backward()
    for layer, sig in zip(field.linear_layers, signals):
        assert sig.inputs.shape[0] == sig.cotangents.shape[0] == 10
        assert torch.all(sig.cotangents[5:] == 0)
        assert torch.allclose(sig.gradient(), layer.weight.grad.double(), rtol=1e-5, atol=1e-7)
