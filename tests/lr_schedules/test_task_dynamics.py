"""Task, moment dynamics, stability bound and the adjoint gradients of lr_schedules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import zeta

from neurips26.lr_schedules import (
    PowerLawTask,
    Spectrum,
    check_schedule,
    final_loss_and_grad,
    loss_curve,
    loss_curve_torch,
    momentum_final_loss_and_grad,
    momentum_loss_curve,
    stability_bound,
)
from neurips26.lr_schedules.dynamics import momentum_loss_curve_torch


def _dense_matrix(sp: Spectrum, eta: float, m: float) -> tuple[np.ndarray, np.ndarray]:
    """Independent dense form c' = A c + b (A = diag(a) + (η²/m) λλᵀ) written from the recursion in the dynamics module's docstring."""
    lam = sp.lambdas
    A = np.diag((1 - eta * lam) ** 2 + eta**2 * lam**2 / m) + (eta**2 / m) * np.outer(lam, lam)
    b = (eta**2 / m) * lam * (sp.residual + sp.sigma0_sq)
    return A, b


@pytest.fixture(scope="module")
def small() -> Spectrum:
    return PowerLawTask(1.5, 0.5, 30, 300, 0.05).spectrum()


def test_power_law_task_arrays_and_residual():
    task = PowerLawTask(alpha=2.0, beta=0.75, N=10, M=100, sigma0_sq=0.1)
    k = np.arange(1, 11)
    np.testing.assert_allclose(task.lambdas, k**-2.0)
    np.testing.assert_allclose(task.target_power, k ** (-2.0 * 0.75 - 1))
    np.testing.assert_allclose(task.residual, np.sum(np.arange(11, 101) ** -2.5))
    sp = task.spectrum()
    np.testing.assert_allclose(sp.lambdas * sp.c0, task.target_power)  # λ_k w*_k²
    assert sp.noise == pytest.approx(0.1 + task.residual)
    # unbounded modes: Hurwitz zeta; agrees with a long direct sum up to its tail (~∫ k^-2.5 from 10^6)
    inf = PowerLawTask(alpha=2.0, beta=0.75, N=10, M=None)
    assert inf.residual == pytest.approx(float(zeta(2.5, 11)))
    assert inf.residual == pytest.approx(np.sum(np.arange(11, 10**6) ** -2.5), rel=1e-6)
    assert PowerLawTask(1.5, 1.5, 10).constant_lr_exponent() == pytest.approx(1.5 / 2.5)
    assert PowerLawTask(1.5, 1.5, 10).decaying_schedule_exponent() == pytest.approx(1 - 1.5 / 3.25)


@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=1.0, beta=1.0, N=10, M=None), "unbounded"),
    (dict(alpha=0.8, beta=1.0, N=10, M=None), "alpha"),
    (dict(alpha=1.5, beta=0.0, N=10), "beta"),
    (dict(alpha=1.5, beta=-1.0, N=10), "beta"),
    (dict(alpha=1.5, beta=1.0, N=0), "N"),
    (dict(alpha=1.5, beta=1.0, N=10, M=50), "10 N"),
    (dict(alpha=1.5, beta=1.0, N=10, sigma0_sq=-0.1), "sigma0_sq"),
    (dict(alpha=float("nan"), beta=1.0, N=10), "alpha"),
])
def test_power_law_task_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PowerLawTask(**kwargs)


def test_alpha_below_one_allowed_with_finite_modes():
    assert PowerLawTask(0.9, 1.0, 10, 100).residual > 0


def test_spectrum_validation():
    with pytest.raises(ValueError, match="lambdas"):
        Spectrum(np.array([1.0, 0.0]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="c0"):
        Spectrum(np.array([1.0, 0.5]), np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="shape"):
        Spectrum(np.array([1.0, 0.5]), np.array([1.0]))
    with pytest.raises(ValueError, match="sigma0_sq"):
        Spectrum(np.array([1.0]), np.array([1.0]), sigma0_sq=-1)
    sp = Spectrum.from_target_power(np.array([1.0, 0.5, 0.25]), np.array([0.5, 0.2, 0.1]), n_learned=2)
    np.testing.assert_allclose(sp.c0, [0.5, 0.4])
    assert sp.residual == pytest.approx(0.1)


def test_loss_curve_matches_dense_linear_map(small):
    rng = np.random.default_rng(0)
    cap = stability_bound(small.lambdas, 2.0)
    eta = cap * rng.uniform(0.1, 0.9, 40)
    c = small.c0.copy()
    ref = [small.lambdas @ c + small.residual]
    for e in eta:
        A, b = _dense_matrix(small, e, 2.0)
        c = A @ c + b
        ref.append(small.lambdas @ c + small.residual)
    np.testing.assert_allclose(loss_curve(small, eta, 2.0), ref, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(alpha=st.floats(1.1, 3.0), N=st.integers(2, 40), m=st.floats(0.5, 64.0))
def test_stability_bound_is_where_spectral_radius_hits_one(alpha, N, m):
    sp = PowerLawTask(alpha, 1.0, N, 10 * N).spectrum()
    cap = stability_bound(sp.lambdas, m)
    rho = lambda eta: np.max(np.abs(np.linalg.eigvals(_dense_matrix(sp, eta, m)[0])))
    # bisection in the bound is to ~1e-12 relative; 1e-6 margins keep eigvals' own error out
    assert rho(cap * (1 - 1e-6)) < 1.0
    assert rho(cap * (1 + 1e-6)) > 1.0
    assert cap <= 2.0 / (sp.lambdas.max() * (1 + 1 / m)) + 1e-12


def test_schedule_bad_inputs(small):
    cap = stability_bound(small.lambdas, 1.0)
    with pytest.raises(ValueError, match="stability bound"):
        loss_curve(small, np.full(10, 1.01 * cap))
    with pytest.raises(ValueError, match="batch size m"):
        loss_curve(small, np.full(10, 0.1), m=0)
    with pytest.raises(ValueError, match="batch size m"):
        loss_curve(small, np.full(10, 0.1), m=-2.0)
    with pytest.raises(ValueError, match=r"eta\[3\]"):
        loss_curve(small, np.array([0.1, 0.1, 0.1, np.nan]))
    with pytest.raises(ValueError, match="non-empty"):
        loss_curve(small, np.array([]))
    with pytest.raises(ValueError, match="batch size"):
        stability_bound(small.lambdas, 0.0)
    # without validation, a schedule far above the bound overflows: a clear error, never a NaN
    with pytest.raises(FloatingPointError, match="overflowed"), np.errstate(over="ignore", invalid="ignore"):
        loss_curve(small, np.full(3000, 3 * cap), validate=False)
    eta, m = check_schedule(small, [0.1, 0.2], 4)
    assert m.tolist() == [4.0, 4.0]


def test_loss_below_bound_converges_to_the_stationary_point(small):
    cap = stability_bound(small.lambdas, 1.0)
    eta = 0.9 * cap
    L = loss_curve(small, np.full(6000, eta))
    A, b = _dense_matrix(small, eta, 1.0)
    c_star = np.linalg.solve(np.eye(small.N) - A, b)  # fixed point of the linear map
    # slowest mode contracts by ≈ 1 − 2ηλ_N ≈ 1 − 5e-3 per step: after 6000 steps the gap is ~e^-30
    assert L[-1] == pytest.approx(small.lambdas @ c_star + small.residual, rel=1e-8)


def test_adjoint_matches_finite_differences(small):
    rng = np.random.default_rng(1)
    T = 61
    cap = stability_bound(small.lambdas, 1.0)
    eta = cap * rng.uniform(0.2, 0.8, T)
    m = rng.integers(1, 5, T).astype(float)
    L, g, gm = final_loss_and_grad(small, eta, m, with_m_grad=True)
    assert L == pytest.approx(loss_curve(small, eta, m)[-1], rel=1e-13)
    h = 1e-6
    E = np.eye(T)
    fd = np.array([(loss_curve(small, eta + h * E[t], m, validate=False)[-1]
                    - loss_curve(small, eta - h * E[t], m, validate=False)[-1]) / (2 * h) for t in range(T)])
    fdm = np.array([(loss_curve(small, eta, m + h * E[t])[-1] - loss_curve(small, eta, m - h * E[t])[-1]) / (2 * h)
                    for t in range(T)])
    # < 1e-4 relative required; central differences at h=1e-6 are accurate to ~1e-9 here
    assert np.max(np.abs(fd - g)) / np.max(np.abs(g)) < 1e-4
    assert np.max(np.abs(fdm - gm)) / np.max(np.abs(gm)) < 1e-4


@pytest.mark.parametrize("T", [1, 7, 50, 101])  # exercise segment boundaries of the √T checkpointing
def test_adjoint_matches_torch_autograd(small, T):
    rng = np.random.default_rng(T)
    eta = stability_bound(small.lambdas, 1.0) * rng.uniform(0.1, 0.9, T)
    _, g = final_loss_and_grad(small, eta)
    te = torch.tensor(eta, requires_grad=True)
    out = loss_curve_torch(torch.tensor(small.lambdas), torch.tensor(small.c0), small.residual, small.sigma0_sq, te)
    out[-1].backward()
    # both float64 and the same arithmetic: agreement to rounding (1e-10 relative is ~10^6 ulps of slack)
    np.testing.assert_allclose(te.grad.numpy(), g, rtol=1e-10, atol=1e-14 * np.max(np.abs(g)))


def test_momentum_reduces_to_sgd_and_matches_autograd(small):
    rng = np.random.default_rng(2)
    T = 45
    eta = stability_bound(small.lambdas, 2.0) * rng.uniform(0.1, 0.5, T)
    np.testing.assert_allclose(momentum_loss_curve(small, eta, np.zeros(T), 2.0), loss_curve(small, eta, 2.0),
                               rtol=1e-12)
    beta = rng.uniform(0.0, 0.9, T)
    g = momentum_final_loss_and_grad(small, eta, beta, 2.0)
    assert g.loss == pytest.approx(momentum_loss_curve(small, eta, beta, 2.0)[-1], rel=1e-13)
    te, tb = torch.tensor(eta, requires_grad=True), torch.tensor(beta, requires_grad=True)
    out = momentum_loss_curve_torch(torch.tensor(small.lambdas), torch.tensor(small.c0), small.residual,
                                    small.sigma0_sq, te, tb, 2.0)
    out[-1].backward()
    np.testing.assert_allclose(te.grad.numpy(), g.d_eta, rtol=1e-9, atol=1e-13 * np.abs(g.d_eta).max())
    np.testing.assert_allclose(tb.grad.numpy(), g.d_beta, rtol=1e-9, atol=1e-13 * np.abs(g.d_beta).max())
    h = 1e-6
    t = 10
    fd = (momentum_loss_curve(small, eta, beta + h * (np.arange(T) == t), 2.0)[-1]
          - momentum_loss_curve(small, eta, beta - h * (np.arange(T) == t), 2.0)[-1]) / (2 * h)
    assert fd == pytest.approx(g.d_beta[t], rel=1e-4)


def test_momentum_bad_inputs(small):
    with pytest.raises(ValueError, match="beta must be in"):
        momentum_loss_curve(small, np.full(5, 0.1), np.full(5, 1.0))
    with pytest.raises(ValueError, match="equal"):
        momentum_loss_curve(small, np.full(5, 0.1), np.full(4, 0.1))
    with pytest.raises(ValueError, match="batch size"):
        momentum_final_loss_and_grad(small, np.full(5, 0.1), np.full(5, 0.1), m=0)


@settings(max_examples=10, deadline=None)
@given(alpha=st.floats(1.2, 2.5), beta=st.floats(0.1, 2.0), N=st.integers(1, 25), T=st.integers(1, 40),
       frac=st.floats(0.05, 0.95), m=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_adjoint_matches_finite_differences_on_random_tasks(alpha, beta, N, T, frac, m, seed):
    sp = PowerLawTask(alpha, beta, N, 10 * N, 0.05).spectrum()
    rng = np.random.default_rng(seed)
    eta = frac * stability_bound(sp.lambdas, m) * rng.uniform(0.5, 1.0, T)
    _, g = final_loss_and_grad(sp, eta, m)
    t = int(rng.integers(T))
    h = 1e-6 * eta[t]
    e = np.zeros(T)
    e[t] = h
    fd = (loss_curve(sp, eta + e, m, validate=False)[-1] - loss_curve(sp, eta - e, m, validate=False)[-1]) / (2 * h)
    # central differences: truncation O(h²) and rounding ~1e-16·L/h ≈ 1e-10 relative; bound 1e-4
    assert fd == pytest.approx(g[t], rel=1e-4, abs=1e-9 * np.max(np.abs(g)))


@pytest.mark.parametrize("store_all", [True, False])
@pytest.mark.parametrize("block", [1, 3, 16])
def test_adjoint_block_and_checkpoint_paths_match_autograd(small, monkeypatch, store_all, block):
    """The forward/backward run in cache-sized blocks of precomputed factors; with T·N above the
    store-all size they recompute √T segments from checkpoints. Every path gives the same gradient."""
    import neurips26.lr_schedules.dynamics as dyn

    monkeypatch.setattr(dyn, "_BLOCK_FLOATS", block * small.N)
    monkeypatch.setattr(dyn, "_STORE_ALL_FLOATS", 10**9 if store_all else 1)
    T = 53
    rng = np.random.default_rng(block)
    eta = stability_bound(small.lambdas, 2.0) * rng.uniform(0.1, 0.9, T)
    m = rng.choice([2.0, 3.0], T)
    L, g, gm = final_loss_and_grad(small, eta, m, with_m_grad=True)
    te = torch.tensor(eta, requires_grad=True)
    tm = torch.tensor(m, requires_grad=True)
    out = loss_curve_torch(torch.tensor(small.lambdas), torch.tensor(small.c0), small.residual, small.sigma0_sq, te, tm)
    out[-1].backward()
    np.testing.assert_allclose(L, out[-1].item(), rtol=1e-12)
    np.testing.assert_allclose(te.grad.numpy(), g, rtol=1e-10, atol=1e-14 * np.max(np.abs(g)))
    np.testing.assert_allclose(tm.grad.numpy(), gm, rtol=1e-10, atol=1e-14 * np.max(np.abs(gm)))
    np.testing.assert_allclose(loss_curve(small, eta, m), out.detach().numpy(), rtol=1e-12)


def test_bad_shapes_and_dtypes_name_the_argument(small):
    from neurips26.lr_schedules import optimal_schedule

    with pytest.raises(ValueError, match=r"batch size m must be a scalar or have the schedule's shape \(10,\)"):
        loss_curve(small, np.full(10, 0.1), np.ones(3))
    with pytest.raises(ValueError, match="complex"):
        loss_curve(small, np.array([0.1 + 1j, 0.1]))
    with pytest.raises(ValueError, match="complex"):
        final_loss_and_grad(small, np.full(4, 0.1), np.full(4, 1 + 0j))
    with pytest.raises(ValueError, match="horizon T must be an integer >= 1, got nan"):
        optimal_schedule(small, float("nan"))
    with pytest.raises(ValueError, match=r"eta_init must be a constant or have shape \(40,\)"):
        optimal_schedule(small, 40, n_knots=4, eta_init=np.full(7, 0.01))


def test_alpha_so_large_that_lambda_underflows_is_a_clear_error():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning (division by an underflowed 0) on the way
        with pytest.raises(ValueError, match="alpha=400.*underflows"):
            PowerLawTask(alpha=400.0, beta=1.0, N=10, M=100, sigma0_sq=0.0).spectrum()
