"""Schedule coefficients, Gaussian-mixture posteriors and path KL against independent derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal

from neurips26.lanczos_ddpm import (
    gaussian_kl_same_mean,
    gaussian_mixture_law,
    gmm_posterior_covariance,
    gmm_posterior_mean,
    gmm_reverse_logpdf,
    path_kl_gaussian_mixture,
    schedule_steps,
    spaced_timesteps,
    step_coefficients,
    vp_alphas_cumprod,
)


def _joint_gaussian_reverse(m, S, ap, beta, xt):
    """q(x_s | x_t) for x_0 ~ N(m, S) by conditioning the joint Gaussian of (x_s, x_t) (numpy)."""
    d = len(m)
    I = np.eye(d)
    mean_s, cov_s = math.sqrt(ap) * m, ap * S + (1 - ap) * I
    mean_t, cov_t = math.sqrt(1 - beta) * mean_s, (1 - beta) * cov_s + beta * I
    cross = math.sqrt(1 - beta) * cov_s                          # Cov(x_s, x_t)
    K = cross @ np.linalg.inv(cov_t)
    return mean_s + K @ (xt - mean_t), cov_s - K @ cross.T


def test_reverse_step_moments_match_gaussian_conditioning():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    S, m = A @ A.T + 0.1 * np.eye(3), rng.normal(size=3)
    law = gaussian_mixture_law([1.0], [m], [S])
    for a, ap in [(0.3, 0.5), (0.9, 0.95), (0.5, 1.0)]:
        co = step_coefficients(a, ap)
        xt = rng.normal(size=3)
        ref_mean, ref_cov = _joint_gaussian_reverse(m, S, ap, co.beta, xt)
        x = torch.as_tensor(xt)[None]
        mu = co.c0 * gmm_posterior_mean(law, x, a)[0] + co.c1 * x[0]
        sig = co.beta_tilde * torch.eye(3, dtype=torch.float64) + co.c0**2 * gmm_posterior_covariance(law, x, a)[0]
        np.testing.assert_allclose(mu.numpy(), ref_mean, atol=1e-10)   # float64 algebra
        np.testing.assert_allclose(sig.numpy(), ref_cov, atol=1e-10)
        # the exact reverse density is that Gaussian
        xs = rng.normal(size=(5, 3))
        lp = gmm_reverse_logpdf(law, torch.as_tensor(xs), x.expand(5, 3), co).numpy()
        np.testing.assert_allclose(lp, multivariate_normal(ref_mean, ref_cov).logpdf(xs), atol=1e-9)


def _mix1d():
    return gaussian_mixture_law([0.3, 0.7], [[-1.0], [1.5]], [[[0.05]], [[0.3]]])


def test_tweedie_second_order_equals_posterior_covariance():
    # Cov[x0|xt] = (1-a)/sqrt(a) * d E[x0|xt]/d xt (second-order Tweedie) — autograd vs closed form
    law = gaussian_mixture_law([0.5, 0.5], [[1.0, 0.0], [-1.0, 0.5]], [np.diag([0.2, 0.05]), [[0.3, 0.1], [0.1, 0.2]]])
    x = torch.tensor([[0.2, -0.3], [1.0, 1.0]], dtype=torch.float64)
    a = 0.6
    J = torch.stack([torch.autograd.functional.jacobian(lambda y: gmm_posterior_mean(law, y[None], a)[0], xi) for xi in x])
    torch.testing.assert_close((1 - a) / math.sqrt(a) * J, gmm_posterior_covariance(law, x, a), rtol=1e-9, atol=1e-9)


def test_mixture_reverse_density_normalised_with_exact_moments():
    law = _mix1d()
    co = step_coefficients(0.4, 0.6)
    xt = torch.tensor([[0.3]], dtype=torch.float64)
    grid = torch.linspace(-8, 8, 20001, dtype=torch.float64)[:, None]
    p = torch.exp(gmm_reverse_logpdf(law, grid, xt.expand_as(grid), co))
    h = float(grid[1] - grid[0])
    mass = float(p.sum() * h)
    mean = float((p * grid[:, 0]).sum() * h)
    var = float((p * grid[:, 0] ** 2).sum() * h) - mean**2
    mu = co.c0 * float(gmm_posterior_mean(law, xt, 0.4)) + co.c1 * 0.3
    sig = co.beta_tilde + co.c0**2 * float(gmm_posterior_covariance(law, xt, 0.4))
    # Riemann sum on a fine grid over +-8: quadrature error far below 1e-6
    assert abs(mass - 1) < 1e-6 and abs(mean - mu) < 1e-6 and abs(var - sig) < 1e-6


def test_schedule_and_subsets():
    ac = vp_alphas_cumprod(100)
    assert np.all(np.diff(ac) < 0) and 0 < ac[-1] < ac[0] < 1
    ts = spaced_timesteps(100, 10)
    assert ts[0] == 99 and ts[-1] == 9 and np.all(np.diff(ts) == -10)
    steps = schedule_steps(ac, ts)
    # beta recomputed from the actual previous step of the subset (diffusers #2076)
    assert steps[0][1].beta == pytest.approx(1 - ac[99] / ac[89])
    assert steps[-1][1].alpha_bar_prev == 1.0 and steps[-1][1].beta_tilde == 0.0
    with pytest.raises(ValueError, match="descending"):
        schedule_steps(ac, [1, 5])
    with pytest.raises(ValueError, match="lie in"):
        schedule_steps(ac, [100, 5])
    with pytest.raises(ValueError, match="alpha_bar"):
        step_coefficients(0.5, 0.4)
    with pytest.raises(ValueError, match="num_inference_steps"):
        spaced_timesteps(10, 11)


def test_gaussian_kl_same_mean_against_formula():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 4))
    S = A @ A.T + np.eye(4)
    sig = torch.as_tensor(S)[None]
    D = np.diag(np.diag(S))
    ref = 0.5 * (np.trace(np.linalg.solve(D, S)) - 4 + np.linalg.slogdet(D)[1] - np.linalg.slogdet(S)[1])
    assert float(gaussian_kl_same_mean(sig, "diagonal", 0.1, 0.05)) == pytest.approx(ref, rel=1e-10)
    assert float(gaussian_kl_same_mean(sig, "full", 0.1, 0.05)) == 0.0
    assert math.isinf(float(gaussian_kl_same_mean(sig, "beta_tilde", 0.1, 0.0)))
    with pytest.raises(ValueError, match="not one of"):
        gaussian_kl_same_mean(sig, "lanczos", 0.1, 0.05)


def test_path_kl_gaussian_data_full_covariance_is_exact():
    # Gaussian data: every reverse conditional is Gaussian, so full-covariance path KL is only the
    # (tiny) prior term, while isotropic beta I is clearly positive.
    law = gaussian_mixture_law([1.0], [[0.5, -0.5]], [[[1.0, 0.6], [0.6, 0.5]]])
    pk = path_kl_gaussian_mixture(law, vp_alphas_cumprod(8), np.arange(7, -1, -1), ("beta", "full"),
                                  num_samples=4000, generator=torch.Generator().manual_seed(0))
    assert np.abs(pk.non_gaussian).max() < 1e-9        # log q - log N(mu*, Sigma*) is identically 0
    assert abs(pk.total("full")) < 5 * pk.stderr["full"] + 1e-4
    assert pk.total("beta") > 0.05


def test_path_kl_mixture_orders_covariances():
    law = gaussian_mixture_law([0.5, 0.5], [[-1.0, 0.0], [1.0, 0.5]], [np.diag([0.5, 0.02]), np.diag([0.02, 0.3])])
    pk = path_kl_gaussian_mixture(law, vp_alphas_cumprod(16), np.arange(15, -1, -1), ("beta", "trace", "diagonal", "full"),
                                  num_samples=4000, generator=torch.Generator().manual_seed(0))
    tot = [pk.total(c) for c in ("trace", "diagonal", "full")]
    # nested Gaussian families: each is the exact mismatch + a shared term, so the order is exact
    assert tot[0] >= tot[1] >= tot[2] > 0
    assert np.all(pk.non_gaussian > -5 * 1e-3)       # each term is a KL up to Monte Carlo noise


def test_mixture_validation():
    with pytest.raises(ValueError, match="sum to 1"):
        gaussian_mixture_law([0.5, 0.6], [[0.0], [1.0]], [[[1.0]], [[1.0]]])
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_mixture_law([1.0], [[0.0, 0.0]], [np.diag([1.0, -1.0])])
    with pytest.raises(ValueError, match="need weights"):
        gaussian_mixture_law([1.0], [[0.0, 0.0]], [np.eye(3)])


def test_mixture_rejects_nonfinite_entries():
    # NaN weights/means used to be accepted silently and gave NaN densities downstream
    with pytest.raises(ValueError, match="means contain NaN"):
        gaussian_mixture_law([0.5, 0.5], [[0.0, float("nan")], [1.0, 1.0]], [np.eye(2), np.eye(2)])
    with pytest.raises(ValueError, match="weights contain NaN"):
        gaussian_mixture_law([float("nan"), 0.5], [[0.0, 0.0], [1.0, 1.0]], [np.eye(2), np.eye(2)])
    with pytest.raises(ValueError, match="covariances contain NaN"):
        gaussian_mixture_law([1.0], [[0.0, 0.0]], [np.diag([np.inf, 1.0])])
