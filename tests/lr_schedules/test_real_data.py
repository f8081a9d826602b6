"""Tests of lr_schedules.real_data: digits random features, the power-law fit, real SGD."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from neurips26.lr_schedules.real_data import (
    RFData,
    digits_random_features,
    estimate_power_law,
    eval_steps,
    sgd_loss_curve,
    sgd_loss_curves,
)


def planted(alpha: float, beta: float, N: int = 200, n: int = 20000, seed: int = 0, noise: float = 0.1):
    """Gaussian features with spectrum k^-alpha in a random basis and target power k^-(alpha beta + 1)."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, N + 1)
    lam = k ** -alpha
    w = np.sqrt(k ** (-alpha * beta - 1) / lam) * rng.choice([-1.0, 1.0], N)
    Q, _ = np.linalg.qr(rng.standard_normal((N, N)))
    Z = rng.standard_normal((n, N)) * np.sqrt(lam)
    return Z @ Q.T, Z @ w + noise * rng.standard_normal(n)


# ---------------------------------------------------------------------------- power-law fit


@pytest.mark.parametrize("alpha,beta", [(1.5, 0.5), (2.0, 0.25), (1.2, 1.0)])
def test_estimate_power_law_recovers_planted_exponents(alpha, beta):
    psi, y = planted(alpha, beta, seed=1)
    fit = estimate_power_law(psi, y)
    # alpha: with n/N = 100 samples per feature the empirical eigenvalues are within ~1 % of the
    # true ones over k <= N/2 (Marchenko-Pastur width sqrt(N/n) = 0.1 acts on the bulk edge
    # only); over 1.4 decades of k that moves the slope by < 0.01. 0.02 leaves margin; a
    # wrong sign or a fit of sqrt(lambda) (alpha/2) fails by > 0.6.
    assert abs(fit.alpha - alpha) < 0.02
    # beta: per-mode powers are chi^2_1-like; after log-binning, 5 seeds per case gave
    # |beta_hat - beta| <= 0.03 (SE 0.01-0.03). 0.08 is ~3-8 SE. Fitting v_k^2 instead of
    # v_k^2 / lambda_k (a classic slip) shifts the exponent by alpha, i.e. beta by ~1.
    assert abs(fit.beta - beta) < 0.08
    assert fit.beta_se < 0.1 and fit.alpha_se < 0.05
    # the reported standard error is honest: the truth lies within 4 SE (plus the 1 % bias)
    assert abs(fit.beta - beta) < 4 * fit.beta_se + 0.03


def test_power_law_fit_is_a_pythagorean_decomposition():
    # For ridgeless least squares with n > N: mean y^2 = sum_k lambda_k w*_k^2 + sigma0^2
    # exactly (orthogonality of the residual). Independent of the fit; checks lambdas,
    # target_power and sigma0_sq together. Tolerance: float64 round-off on sums of O(1) terms.
    psi, y = planted(1.5, 0.5, N=60, n=3000, seed=2, noise=0.3)
    fit = estimate_power_law(psi, y, ridge=0.0)
    assert fit.target_power.sum() + fit.sigma0_sq == pytest.approx(np.mean(y**2), rel=1e-9)
    assert np.all(np.diff(fit.lambdas) <= 1e-15)
    assert fit.lambdas.sum() == pytest.approx(np.trace(psi.T @ psi) / psi.shape[0], rel=1e-10)
    # sigma0^2 ~ noise^2 (1 - N/n): the planted noise variance is recovered within 10 %
    assert fit.sigma0_sq == pytest.approx(0.09 * (1 - 60 / 3000), rel=0.1)


def test_power_law_fit_range_and_noise_floor():
    psi, y = planted(1.5, 1.5, N=200, n=5000, seed=3, noise=0.5)
    fit = estimate_power_law(psi, y)
    k0, k1 = fit.k_range_target
    assert k0 == 5 and k1 < 200  # steep target: its power hits the noise floor before k = N
    bins = fit.target_power[k1:].mean()
    assert bins < 10 * fit.noise_floor  # what was excluded is at the floor
    fit2 = estimate_power_law(psi, y, k_range_alpha=(3, 50), k_range_target=(5, 40))
    assert fit2.k_range_alpha == (3, 50) and fit2.k_range_target == (5, 40)


@pytest.mark.parametrize(
    "psi,y,match",
    [
        (np.ones(10), np.ones(10), "2-D"),
        (np.ones((10, 9)), np.ones(9), "1-D with 10"),
        (np.ones((10, 4)), np.ones(10), "at least 8 features"),
        (np.full((10, 9), np.nan), np.ones(10), "NaN"),
        (np.random.default_rng(0).random((20, 9)), np.zeros(20), "identically zero"),
    ],
)
def test_estimate_power_law_bad_input(psi, y, match):
    with pytest.raises(ValueError, match=match):
        estimate_power_law(psi, y)


def test_estimate_power_law_bad_ranges():
    psi, y = planted(1.5, 0.5, N=40, n=2000, seed=0)
    with pytest.raises(ValueError, match="k_range_alpha"):
        estimate_power_law(psi, y, k_range_alpha=(0, 10))
    with pytest.raises(ValueError, match="k_range_target"):
        estimate_power_law(psi, y, k_range_target=(5, 41))
    with pytest.raises(ValueError, match="ridge"):
        estimate_power_law(psi, y, ridge=-1.0)


# ---------------------------------------------------------------------------- digits data


def test_digits_random_features_shapes_scale_target():
    d = digits_random_features(64, seed=0, n_train=500)
    assert d.psi_train.shape == (500, 64) and d.psi_test.shape == (1297, 64)
    assert d.psi_train.dtype == np.float64 and d.y_train.dtype == np.float64
    # documented normalisation: tr Sigma = mean |psi|^2 = 1 on the training set (exact by construction)
    assert np.mean(np.sum(d.psi_train**2, axis=1)) == pytest.approx(1.0, rel=1e-12)
    # parity target is +-1 and roughly balanced (digits classes are ~equal: 5 odd / 10 classes)
    assert set(np.unique(d.y_train)) == {-1.0, 1.0}
    assert abs(d.y_train.mean()) < 0.1
    # on the sphere |psi_mu|^2 stays within a factor ~2 of its mean (documented 0.7-1.3x; the
    # per-pixel-standardised map it replaced reached 33x)
    q = np.sum(d.psi_train**2, axis=1)
    assert q.max() < 2.0 and q.min() > 0.3


def test_digits_random_features_deterministic_and_seeded():
    a = digits_random_features(32, seed=3, n_train=300, kind="fourier", target="value")
    b = digits_random_features(32, seed=3, n_train=300, kind="fourier", target="value")
    c = digits_random_features(32, seed=4, n_train=300, kind="fourier", target="value")
    np.testing.assert_array_equal(a.psi_train, b.psi_train)
    assert not np.allclose(a.psi_train, c.psi_train)
    assert abs(a.y_train.mean()) < 1e-12 and a.y_train.std() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(n_features=0, seed=0), "n_features"),
        (dict(n_features=8, seed=0, n_train=5), "n_train"),
        (dict(n_features=8, seed=0, n_train=1797), "n_train"),
        (dict(n_features=8, seed=0, kind="tanh"), "kind"),
        (dict(n_features=8, seed=0, target="class"), "target"),
        (dict(n_features=8, seed=0, bandwidth=0.0), "bandwidth"),
        (dict(n_features=8, seed=0.5), "seed"),
    ],
)
def test_digits_random_features_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        digits_random_features(**kwargs)


def test_digits_spectrum_is_power_law_like():
    # Not a claim of the paper: a sanity check that the fit is meaningful on the real data
    # (eigenvalues decay with a clear slope, alpha > 1 so tr Sigma converges, tight SE).
    d = digits_random_features(256, seed=0)
    fit = estimate_power_law(d.psi_train, d.y_train)
    assert 1.1 < fit.alpha < 2.5 and fit.alpha_se < 0.05
    assert np.isfinite(fit.beta) and np.isfinite(fit.beta_se)


# ---------------------------------------------------------------------------- real SGD


def tiny_data(seed=0, n=40, N=4, n_test=30):
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((n + n_test, N)) * np.array([1.0, 0.7, 0.5, 0.3])[:N]
    w = rng.standard_normal(N)
    y = P @ w + 0.3 * rng.standard_normal(n + n_test)
    return RFData(P[:n], y[:n], P[n:], y[n:])


def test_sgd_one_step_matches_closed_form_expectation():
    # w_1 = (eta/m) sum_mu psi_mu y_mu with mu iid uniform on the training set:
    # E w_1 = eta g, Cov w_1 = (eta^2/m) C, g = mean(psi y), C = Cov(psi y);
    # E L(w_1) = E[w]^T S E[w] + tr(S Cov) - 2 E[w]^T b + mean(y_test^2).
    d = tiny_data()
    eta, m, R = 0.3, 3, 40000
    L = sgd_loss_curves(d, np.array([eta]), m, seed=1, n_repeats=R)
    assert L.shape == (R, 2)
    S = d.psi_test.T @ d.psi_test / len(d.y_test)
    b = d.psi_test.T @ d.y_test / len(d.y_test)
    G = d.psi_train * d.y_train[:, None]
    g = G.mean(axis=0)
    C = np.cov(G.T, bias=True)
    mu, cov = eta * g, eta**2 / m * C
    exact = mu @ S @ mu + np.trace(S @ cov) - 2 * mu @ b + np.mean(d.y_test**2)
    np.testing.assert_allclose(L[:, 0], np.mean(d.y_test**2), rtol=1e-12)  # w_0 = 0
    se = L[:, 1].std() / np.sqrt(R)
    # 4 standard errors: a false alarm has probability < 1e-4. The variance term
    # tr(S Cov) is checked to be >> 4 SE so that a wrong 1/m scaling (eta instead of eta/m)
    # or sampling without replacement would be detected.
    assert abs(L[:, 1].mean() - exact) < 4 * se
    assert np.trace(S @ cov) * (m - 1) > 20 * se


def reference_sgd(d: RFData, eta, idx_seq):
    """Plain-python SGD with m = 1 along a given index sequence (independent implementation)."""
    w = np.zeros(d.psi_train.shape[1])
    for t, i in enumerate(idx_seq):
        psi = d.psi_train[i]
        w = w - eta[t] * psi * (psi @ w - d.y_train[i])
    return np.mean((d.psi_test @ w - d.y_test) ** 2)


def test_sgd_multi_step_matches_exact_enumeration():
    # With n = 4 training points, m = 1 and T = 3 steps there are 64 equally likely index
    # sequences: the exact expected loss is their average. Monte Carlo mean within 4 SE.
    d = tiny_data(seed=5, n=4, N=3, n_test=20)
    eta = np.array([0.5, 0.3, 0.2])
    exact = np.mean([reference_sgd(d, eta, s) for s in itertools.product(range(4), repeat=3)])
    L = sgd_loss_curves(d, eta, 1, seed=2, n_repeats=30000, eval_every=3)
    assert L.shape == (30000, 2)
    se = L[:, -1].std() / np.sqrt(L.shape[0])
    assert abs(L[:, -1].mean() - exact) < 4 * se


def test_sgd_loss_decreases_on_digits():
    # Real data, small constant eta, 8 repeats: the training loss falls well below its initial
    # value mean(y^2) = 1 (least squares reaches sigma0^2 ~ 0.1 here; 600 steps of m = 8 at
    # eta = 0.5 reach ~0.3-0.4). Halving is a loose bound that a sign error or eta/m^2 fails.
    d = digits_random_features(128, seed=0)
    curve = sgd_loss_curve(d, np.full(600, 0.5), 8, seed=0, eval_every=100, n_repeats=8, evaluate_on="train")
    assert curve.shape == (7,)
    assert curve[0] == pytest.approx(1.0)
    assert curve[-1] < 0.5 and np.all(np.diff(curve) < 0.05)


def test_sgd_divergence_names_step_and_eta():
    d = tiny_data()
    eta = np.full(200, 0.1)
    eta[50:] = 20.0  # far above the stability bound 2/(lambda_1 + tr Sigma/m)
    with pytest.raises(FloatingPointError, match=r"step t = 5\d with eta_t = 20"):
        sgd_loss_curve(d, eta, 1, seed=0)


def test_eval_steps():
    np.testing.assert_array_equal(eval_steps(10, 3), [0, 3, 6, 9, 10])
    np.testing.assert_array_equal(eval_steps(9, 3), [0, 3, 6, 9])
    with pytest.raises(ValueError, match="eval_every"):
        eval_steps(10, 0)


@pytest.mark.parametrize(
    "eta,kwargs,match",
    [
        (np.array([0.1, -0.1]), {}, r"eta\[1\] = -0.1"),
        (np.array([0.1, np.nan]), {}, r"eta\[1\]"),
        (np.ones((2, 2)), {}, "1-D"),
        (np.ones(3), dict(batch_size=0), "batch_size"),
        (np.ones(3), dict(n_repeats=0), "n_repeats"),
        (np.ones(3), dict(evaluate_on="val"), "evaluate_on"),
        (np.ones(3), dict(eval_every=0), "eval_every"),
    ],
)
def test_sgd_bad_input(eta, kwargs, match):
    d = tiny_data()
    args = dict(batch_size=1, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        sgd_loss_curves(d, eta, **args)
