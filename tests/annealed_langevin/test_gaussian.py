"""Closed forms of the Gaussian setting, checked against independent computations."""

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import (
    VPSchedule,
    ald_output,
    annealed_langevin,
    bridge,
    gauss_score,
    geffner_score,
    geffner_undiffused_score,
    reverse_sde,
    reverse_sde_output,
    w2_gaussian,
)

from .conftest import analytic_single_scores, make_fit

SCH = VPSchedule()


def _probe(score, d):
    """Affine score s(θ) = −Pθ + c recovered by evaluating at 0 and the unit vectors."""
    pts = torch.cat([torch.zeros(1, d, dtype=torch.float64), torch.eye(d, dtype=torch.float64)])
    s = score(pts)
    c = s[0]
    P = -(s[1:] - c).T
    return P.numpy(), c.numpy()


def _prior_score(fit, t, diffused=True):
    a = SCH.alpha(t) if diffused else 1.0
    cov = a * fit.prior_cov + (1 - a) * np.eye(fit.d)
    prec = torch.tensor(np.linalg.inv(cov))
    mu = torch.tensor(np.sqrt(a) * fit.prior_mean)
    return lambda th: -(th - mu) @ prec.T


@pytest.mark.parametrize("t", [0.05, 0.3, 0.8])
@pytest.mark.parametrize("n", [2, 7])
def test_closed_form_bridges_match_composite_scores(t, n):
    # The closed-form precision/mean of each bridge must be the affine map the composite score
    # computes from exact single scores (two independent code paths).
    fit = make_fit(3, n, seed=n)
    single = analytic_single_scores(fit, SCH)
    precs = torch.tensor(np.linalg.inv(fit.post_covs))
    pprec = torch.tensor(np.linalg.inv(fit.prior_cov))
    scores = {
        "geffner": lambda th: geffner_score(single(th, t), _prior_score(fit, t)(th)),
        "geffner_undiffused": lambda th: geffner_undiffused_score(single(th, t), _prior_score(fit, t, False)(th),
                                                                  t, SCH.t_max),
        "linhart": lambda th: gauss_score(single(th, t), _prior_score(fit, t)(th), precs, pprec, SCH.alpha(t)),
    }
    for kind, score in scores.items():
        b = bridge(kind, t, SCH, fit)
        P, c = _probe(score, fit.d)
        np.testing.assert_allclose(P, b.precision, rtol=1e-8, atol=1e-8, err_msg=kind)   # float64 round-off
        np.testing.assert_allclose(c, b.precision @ b.mean, rtol=1e-8, atol=1e-8, err_msg=kind)


def test_linhart_bridge_is_diffused_tall_posterior_and_geffner_meets_it_at_t0():
    # Paper: with exact precisions GAUSS is the exact diffused tall score; Geffner's bridge equals the
    # tall posterior at t = 0 (λ^{1-n} Π p(θ|x_j) ∝ p(θ|x_{1:n})). Tall posterior from the textbook
    # conjugate formula, not from the code under test.
    fit = make_fit(2, 5, seed=3)
    s0inv = np.linalg.inv(fit.prior_cov)
    sn = np.linalg.inv(s0inv + 5 * np.eye(2) / 2.0)
    x = np.linalg.solve(fit.post_covs[0], fit.post_means.T).T - s0inv @ fit.prior_mean   # = x_j / 2
    mu_n = sn @ (x.sum(0) + s0inv @ fit.prior_mean)
    for t in (0.0, 0.4):
        a = SCH.alpha(t)
        b = bridge("linhart", t, SCH, fit)
        np.testing.assert_allclose(b.cov, a * sn + (1 - a) * np.eye(2), rtol=1e-9)
        np.testing.assert_allclose(b.mean, np.sqrt(a) * mu_n, rtol=1e-9, atol=1e-12)
    g = bridge("geffner", 0.0, SCH, fit)
    np.testing.assert_allclose(g.cov, sn, rtol=1e-9)
    np.testing.assert_allclose(g.mean, mu_n, rtol=1e-9)


def test_w2_gaussian_known_cases():
    # 1-D: W2 = sqrt((m1-m2)^2 + (s1-s2)^2); commuting covariances: per-axis sum.
    assert w2_gaussian([0.0], [[4.0]], [3.0], [[1.0]]) == pytest.approx(np.sqrt(9 + 1), rel=1e-12)
    w = w2_gaussian([0, 0], np.diag([1.0, 9.0]), [1, 1], np.diag([4.0, 1.0]))
    assert w == pytest.approx(np.sqrt(2 + 1 + 4), rel=1e-12)
    from scipy.linalg import sqrtm
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    c1, c2 = a @ a.T + np.eye(3), b @ b.T + np.eye(3)
    r1 = sqrtm(c1).real
    ref = float(np.sqrt(3 + np.trace(c1 + c2 - 2 * sqrtm(r1 @ c2 @ r1).real)))   # scipy's Schur sqrtm
    assert w2_gaussian(np.zeros(3), c1, np.ones(3), c2) == pytest.approx(ref, rel=1e-6)


def test_ald_output_long_run_is_ula_stationary_law():
    # ULA on N(μ, P^-1) with step h has stationary law N(μ, (P − hP²/2)^-1) (independent formula).
    fit = make_fit(2, 4, seed=1)
    b = bridge("linhart", 0.01, SCH, fit)
    h = 0.5 / b.M
    m, c = ald_output(np.zeros(2), np.eye(2), [b], [h], [5000])
    P = b.precision
    np.testing.assert_allclose(c, np.linalg.inv(P - h * P @ P / 2), rtol=1e-8)
    np.testing.assert_allclose(m, b.mean, rtol=1e-8, atol=1e-10)


def test_ald_output_matches_particles():
    # 40k particles: mean SE ~ sqrt(var/40k) ≤ 0.01, cov entries SE ~ var*sqrt(2/40k) ≈ 0.007·var;
    # tolerance 0.05 is ~5 SE, and a wrong noise scale (√h instead of √2h) changes the cov by ~50%.
    fit = make_fit(2, 6, seed=2)
    times = SCH.levels(4)
    bs = [bridge("geffner", float(t), SCH, fit) for t in times]
    hs = [0.3 / b.M for b in bs]
    ks = [3, 5, 5, 20]
    m_exact, c_exact = ald_output(np.zeros(2), np.eye(2), bs, hs, ks)
    single = analytic_single_scores(fit, SCH)

    def score(th, t):
        return geffner_score(single(th, t), _prior_score(fit, t)(th))

    g = torch.Generator().manual_seed(0)
    th = annealed_langevin(score, torch.randn(40000, 2, generator=g, dtype=torch.float64), times, hs, ks, g).numpy()
    np.testing.assert_allclose(th.mean(0), m_exact, atol=0.05)
    np.testing.assert_allclose(np.cov(th.T), c_exact, atol=0.05 * np.abs(c_exact).max())


def test_reverse_sde_output_matches_particles():
    # Same tolerance reasoning as above (40k particles, ~5 SE).
    fit = make_fit(2, 3, seed=4)
    steps = 60
    ts = np.linspace(SCH.t_max, SCH.t_min, steps + 1)
    bs = [bridge("linhart", float(t), SCH, fit) for t in ts]
    m_exact, c_exact = reverse_sde_output(np.zeros(2), np.eye(2), bs, SCH)
    by_t = {float(b.t): b for b in bs}

    def score(th, t):
        b = by_t[t]
        return -(th - torch.tensor(b.mean)) @ torch.tensor(b.precision).T

    g = torch.Generator().manual_seed(1)
    th = reverse_sde(score, torch.randn(40000, 2, generator=g, dtype=torch.float64), SCH, steps, g).numpy()
    np.testing.assert_allclose(th.mean(0), m_exact, atol=0.05)
    np.testing.assert_allclose(np.cov(th.T), c_exact, atol=0.05 * np.abs(c_exact).max())
