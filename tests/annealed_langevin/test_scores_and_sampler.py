"""Composite scores, the sampler, the sbi adapter: behaviour and bad input."""

import warnings

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import (
    IndefinitePrecisionWarning,
    NotLogConcaveWarning,
    VPSchedule,
    annealed_langevin,
    estimate_curvature,
    gauss_score,
    geffner_score,
    sample_tall_posterior,
    w2_gaussian,
    warn_if_not_log_concave,
)

from .conftest import analytic_single_scores, make_fit

SCH = VPSchedule()


def test_n_equal_one_reduces_to_the_single_score():
    g = torch.Generator().manual_seed(0)
    s, p = torch.randn(5, 1, 3, generator=g, dtype=torch.float64), torch.randn(5, 3, generator=g, dtype=torch.float64)
    torch.testing.assert_close(geffner_score(s, p), s[:, 0])
    prec = torch.eye(3, dtype=torch.float64) * 2
    torch.testing.assert_close(gauss_score(s, p, prec, torch.eye(3, dtype=torch.float64), 0.5), s[:, 0])


def test_shape_and_nan_errors():
    s, p = torch.zeros(4, 3, 2), torch.zeros(4, 2)
    with pytest.raises(ValueError, match=r"prior_score must have shape \(4, 2\)"):
        geffner_score(s, torch.zeros(4, 3))
    with pytest.raises(ValueError, match=r"\(b, n, d\)"):
        geffner_score(torch.zeros(4, 2), p)
    bad = s.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(FloatingPointError, match="NaN"):
        geffner_score(bad, p)
    with pytest.raises(ValueError, match="posterior_precisions"):
        gauss_score(s, p, torch.eye(3), torch.eye(2), 0.5)


def test_gauss_indefinite_precision_is_repaired_with_warning_or_refused():
    s, p = torch.zeros(2, 5, 2, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64)
    small, prior = 0.1 * torch.eye(2, dtype=torch.float64), torch.eye(2, dtype=torch.float64)
    with pytest.warns(IndefinitePrecisionWarning):
        gauss_score(s, p, small, prior, 0.01)
    with pytest.raises(ValueError, match="not positive definite"):
        gauss_score(s, p, small, prior, 0.01, repair=False)


def test_curvature_estimate_and_non_log_concave_warning():
    P = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    m, M = estimate_curvature(lambda th: -th @ P.T, torch.randn(10, 2, dtype=torch.float64))
    ev = np.linalg.eigvalsh(P.numpy())
    assert m == pytest.approx(ev[0], rel=1e-6) and M == pytest.approx(ev[1], rel=1e-6)
    with pytest.warns(NotLogConcaveWarning, match="heuristic"):
        assert warn_if_not_log_concave([1.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not warn_if_not_log_concave([1.0, 0.5])


def test_sampler_rejects_bad_steps_and_reports_divergence():
    score = lambda th, t: -10.0 * th   # noqa: E731  (M = 10, h_max = 0.1)
    th0 = torch.zeros(3, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"exceeds the stability bound 2/\(m_t\+M_t\)=0.1"):
        annealed_langevin(score, th0, [0.1], [0.5], [2], max_step_sizes=[0.1])
    with pytest.raises(ValueError, match="> 0"):
        annealed_langevin(score, th0, [0.1], [0.0], [2])
    with pytest.raises(FloatingPointError, match="diverged"):
        annealed_langevin(score, th0 + 1, [0.1], [1.0], [2000])


def test_sample_tall_posterior_meets_epsilon_with_exact_scores():
    # End-to-end API with an analytic score callable (moment fit from 400 reverse-SDE samples per
    # observation). W2 of the particle cloud is measured through its Gaussian fit (the law is Gaussian);
    # 1500 particles: the Gaussian-fit W2 estimate has error ~0.02 here (posterior sd ~0.35), so the check
    # is W2 <= ε + 0.04; Langevin noise √h instead of √(2h) (a tempered target) gives W2 ≈ 0.2 and fails.
    fit = make_fit(2, 8, seed=11)
    x = torch.zeros(8, 2)   # only the shape is used by a plain callable
    mn, sn = fit.tall_posterior()
    for kind in ("geffner", "linhart"):
        res = sample_tall_posterior(analytic_single_scores(fit, SCH), x, (fit.prior_mean, fit.prior_cov), 1500, 0.1,
                                    kind=kind, schedule=SCH, fit_samples=300, generator=torch.Generator().manual_seed(3))
        s = res.samples.numpy()
        assert w2_gaussian(s.mean(0), np.cov(s.T), mn, sn) <= 0.1 + 0.04
        assert res.score_evaluations == 1500 * 8 * res.hyperparameters.total_steps


def test_sample_tall_posterior_refuses_priors_without_density_score():
    with pytest.raises(TypeError, match="box-uniform"):
        sample_tall_posterior(lambda th, t: th, torch.zeros(3, 2), torch.distributions.Gamma(torch.ones(2), 1.0), 10,
                              0.1, schedule=SCH)


def test_sample_tall_posterior_with_sbis_box_uniform_prior():
    """sbi's default prior (issue 14, item 6): before, BoxUniform raised TypeError. Box U(-8, 8)^2,
    x_j ~ N(theta, I), n = 8: the box is so wide (|x_j| < 3) that each single posterior is N(x_j, I)
    to 1e-7 and its diffused score is exact, and the tall posterior is N(mean x, I/8). The composite
    uses the box's diffused score; same tolerance as the Gaussian end-to-end test (W2 <= eps + 0.04,
    1500 particles). This checks the API path and accuracy, not the box's score itself: with a box
    this wide, a zero prior score (sbi's fallback) gives the same W2 (measured 0.024 / 0.020); the
    score's values are tested against sbi and mpmath in test_user_cases."""
    from sbi.utils import BoxUniform

    from neurips26.annealed_langevin import GaussianFit

    rng = np.random.default_rng(4)
    xs = np.array([0.5, -0.3]) + rng.normal(size=(8, 2))
    fit = GaussianFit(np.zeros(2), np.eye(2) * 256 / 12, xs, np.tile(np.eye(2), (8, 1, 1)))
    prior = BoxUniform(-8 * torch.ones(2), 8 * torch.ones(2))
    mn, sn = xs.mean(0), np.eye(2) / 8
    for kind in ("geffner", "linhart", "geffner_undiffused"):
        res = sample_tall_posterior(analytic_single_scores(fit, SCH), torch.zeros(8, 2), prior, 1500, 0.1, kind=kind,
                                    schedule=SCH, fit_samples=300, generator=torch.Generator().manual_seed(3))
        smp = res.samples.numpy()
        assert w2_gaussian(smp.mean(0), np.cov(smp.T), mn, sn) <= 0.1 + 0.04, kind


def test_non_log_concave_composite_warns_that_the_rule_is_a_heuristic():
    # Each single posterior is bimodal (modes at ±3, sd 0.55): the composite score has negative
    # curvature between the modes, so sample_tall_posterior must warn.
    from neurips26.annealed_langevin import GaussianFit
    from neurips26.annealed_langevin.mixture_model import diffused_mixture_score

    n, d = 2, 2
    W = torch.full((n, 2), 0.5, dtype=torch.float64)
    Mu = torch.tensor([[[-3.0, 0.0], [3.0, 0.0]]] * n, dtype=torch.float64)
    Sg = 0.3 * torch.eye(d, dtype=torch.float64).expand(n, 2, d, d).clone()

    def single(theta, t):
        th = theta[:, None, :].expand(-1, n, -1) if theta.ndim == 2 else theta
        return diffused_mixture_score(W, Mu, Sg, SCH.alpha(t))(th)

    cov = np.diag([9.3, 0.3])
    fit = GaussianFit(np.zeros(d), 25 * np.eye(d), np.zeros((n, d)), np.stack([cov] * n))
    with pytest.warns(NotLogConcaveWarning):
        res = sample_tall_posterior(single, torch.zeros(n, d), (np.zeros(d), 25 * np.eye(d)), 20, 1.0, kind="geffner",
                                    schedule=SCH, fit=fit, generator=torch.Generator().manual_seed(0),
                                    level_rule="min_total")
    assert torch.isfinite(res.samples).all()


class _MLPEstimator(torch.nn.Module):
    """Stand-in for an sbi score estimator: s(θ, x, t) = MLP([θ, x, t]) with sbi's call signature
    (input (..., d) broadcast against condition (n, d_x)); records the rows of every call."""

    condition_shape = (2,)

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.SiLU(), torch.nn.Linear(16, 2))
        self.rows = []

    def forward(self, input, condition, time):
        inp, cond = torch.broadcast_tensors(input, condition.expand(*input.shape[:-1], 2))
        self.rows.append(inp[..., 0].numel())
        return self.net(torch.cat([inp, cond, time.expand(*inp.shape[:-1], 1)], -1))


def test_batched_single_scores_equal_a_loop_over_observations_and_chunk_the_rows():
    """Catches: the batched call for the n observations mis-pairing particles and observations when
    the rows are chunked (b not a multiple of the chunk), and one call on all b·n rows (0.54× a
    Python loop on CPU, issue 37): every call now carries at most batch_rows rows."""
    from neurips26.annealed_langevin.sbi_adapter import single_scores_from_estimator

    est = _MLPEstimator()
    x = torch.randn(7, 2, generator=torch.Generator().manual_seed(1))
    theta = torch.randn(23, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    f = single_scores_from_estimator(est, x, batch_rows=30)          # 4 particles (28 rows) per call
    out = f(theta, 0.3)
    with torch.no_grad():
        loop = torch.stack([est.net(torch.cat([theta.float(), x[j].expand(23, 2), torch.full((23, 1), 0.3)], -1))
                            for j in range(7)], 1).double()
    assert out.shape == (23, 7, 2) and out.dtype == torch.float64
    assert torch.allclose(out, loop, atol=1e-6)                        # float32 network
    est.rows.clear()
    paired = torch.randn(23, 7, 2, dtype=torch.float64)
    outp = f(paired, 0.3)
    assert max(est.rows) <= 30 and sum(est.rows) == 23 * 7
    with torch.no_grad():
        ref = torch.stack([est.net(torch.cat([paired[:, j].float(), x[j].expand(23, 2), torch.full((23, 1), 0.3)], -1))
                           for j in range(7)], 1).double()
    assert torch.allclose(outp, ref, atol=1e-6)
    with pytest.raises(ValueError, match="batch_rows must be an integer >= 1"):
        single_scores_from_estimator(est, x, batch_rows=0)
