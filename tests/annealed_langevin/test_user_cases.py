"""Regression tests from user-reported cases: each input used to give a silent wrong answer, a
divergence without an error, or an unhelpful exception."""

import warnings

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import (
    GaussianFit,
    IndefinitePrecisionWarning,
    InfeasibleAccuracyError,
    VPSchedule,
    annealed_langevin,
    gauss_score,
    hand_tuned,
    sample_tall_posterior,
    tune,
    w2_gaussian,
)
from neurips26.annealed_langevin.sbi_adapter import _prior_gaussian

SCH = VPSchedule()


def _gauss_1d_case():
    """1-D, prior N(0, 1), per-observation posterior precision 0.9 (< the prior's: an inconsistent
    estimate), n = 20, at t = 1: Λ = Σ_j P̃_j + (1 − n) P̃_λ ≈ 20·0.907 − 19·1.007 < 0."""
    n, a = 20, SCH.alpha(1.0)
    post_var_t = a / 0.9 + (1 - a)                         # diffused single posterior N(0, 1/0.9)

    def score(theta, t=1.0):
        s = (-theta / post_var_t)[:, None, :].expand(-1, n, -1)
        p = -theta                                          # diffused prior N(0, 1) keeps variance 1
        return gauss_score(s, p, torch.tensor([[0.9]], dtype=torch.float64),
                           torch.tensor([[1.0]], dtype=torch.float64), a)

    return score


def test_gauss_indefinite_precision_is_corrected_so_the_score_points_to_the_mode():
    # Before: Λ's eigenvalues were clipped at a nugget while the weighted sum kept its indefinite
    # weights, so the score was ∓201 at θ = ±2 (pointing away from the mode).
    score = _gauss_1d_case()
    theta = torch.tensor([[-2.0], [2.0]], dtype=torch.float64)
    with pytest.warns(IndefinitePrecisionWarning, match="added"):
        s = score(theta)
    # the corrected composite is the GAUSS score of slightly sharper single posteriors: its slope is
    # −Λ'⁻¹(Σ P̃'_j/v_t − (n − 1) P̃_λ) ≈ −0.99 here (exact: the correction is sbi's)
    torch.testing.assert_close(s, -0.99 * theta, atol=0.05, rtol=0.0)


def test_langevin_on_the_corrected_score_stays_order_one():
    # Before: Langevin on the clipped score ran to |θ| ≈ 1e72 without an error.
    score = _gauss_1d_case()
    g = torch.Generator().manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndefinitePrecisionWarning)
        th = annealed_langevin(lambda th, t: score(th), torch.randn((500, 1), generator=g, dtype=torch.float64),
                               [1.0], [0.05], [400], g)
    assert float(th.abs().max()) < 6.0            # N(0, ~1): 500 draws stay within 6 sd
    assert abs(float(th.var()) - 1.0) < 0.25      # stationary variance ≈ 1/0.99 (+ O(h) ULA bias)


def test_diverging_particles_stop_with_the_level_and_step():
    away = lambda th, t: 3.0 * th   # noqa: E731  (a score pointing away from the mode: |θ| grows 1.15× per step)
    th0 = torch.ones((4, 2), dtype=torch.float64)
    with pytest.raises(FloatingPointError, match=r"at level 1 \(t=0\.5\), step \d+ of 500"):
        annealed_langevin(away, th0, [0.9, 0.5], [0.05, 0.05], [2, 500])


@pytest.mark.parametrize("times, match", [([], "non-empty"), ([0.5, float("nan")], "finite"),
                                          ([[0.5, 0.2]], "1-D")])
def test_sampler_refuses_empty_or_nan_level_times(times, match):
    with pytest.raises(ValueError, match=match):
        annealed_langevin(lambda th, t: -th, torch.zeros((3, 2), dtype=torch.float64), times, 0.01, 1)


def test_sampler_refuses_nan_initial_particles():
    with pytest.raises(ValueError, match="theta0 contains NaN"):
        annealed_langevin(lambda th, t: -th, torch.full((3, 2), float("nan"), dtype=torch.float64), [0.5], 0.01, 1)


@pytest.mark.parametrize("kw, match", [(dict(step_size=-1), "step_size must be a finite number > 0, got -1"),
                                       (dict(step_size=float("nan")), "step_size"),
                                       (dict(n_steps=-2), "n_steps must be an integer >= 0, got -2"),
                                       (dict(n_steps=2.5), "n_steps"),
                                       (dict(num_levels=0), "num_levels")])
def test_hand_tuned_refuses_negative_or_nan_settings(kw, match):
    with pytest.raises(ValueError, match=match):
        hand_tuned("geffner", SCH, **kw)


def _fit():
    return GaussianFit.linear_gaussian(np.ones(2), np.eye(2), 2 * np.eye(2), np.ones((5, 2)))


def test_tiny_epsilon_is_refused_with_a_clear_error_not_zero_division():
    # Before: ZeroDivisionError from log(1 − m h) == 0 for a step size below float resolution.
    with pytest.raises(InfeasibleAccuracyError, match="raise epsilon"):
        tune("linhart", SCH, _fit(), 1e-9, level_candidates=(1,))


def test_tune_and_sample_tall_posterior_share_one_default_bias_term():
    import inspect

    from neurips26.annealed_langevin.tuning import DEFAULT_BIAS_TERM, tune_for_levels

    assert DEFAULT_BIAS_TERM == "hessian_lipschitz"
    for f in (tune, tune_for_levels):
        assert inspect.signature(f).parameters["bias_term"].default == DEFAULT_BIAS_TERM
    fit = _fit()
    single = lambda th, t: (-th[:, None, :].expand(-1, 5, -1) if th.ndim == 2 else -th)   # noqa: E731
    res = sample_tall_posterior(single, torch.ones(5, 2), (np.ones(2), np.eye(2)), 5, 0.2, schedule=SCH, fit=fit,
                                generator=torch.Generator().manual_seed(0))
    assert res.hyperparameters.total_steps == tune("linhart", SCH, fit, 0.2).total_steps


def test_independent_normal_prior_is_accepted_as_a_diagonal_gaussian():
    d = torch.distributions
    prior = d.Independent(d.Normal(torch.tensor([1.0, -1.0]), torch.tensor([2.0, 0.5])), 1)
    mean, cov = _prior_gaussian(prior)
    torch.testing.assert_close(mean, torch.tensor([1.0, -1.0], dtype=torch.float64))
    torch.testing.assert_close(cov, torch.diag(torch.tensor([4.0, 0.25], dtype=torch.float64)))


def test_box_uniform_prior_is_accepted_with_its_moments():
    d = torch.distributions
    box = d.Independent(d.Uniform(torch.zeros(2), torch.tensor([1.0, 3.0])), 1)
    mean, cov = _prior_gaussian(box)       # the Gaussian the tuning rule and GAUSS's prior precision use
    torch.testing.assert_close(mean, torch.tensor([0.5, 1.5], dtype=torch.float64))
    torch.testing.assert_close(cov, torch.diag(torch.tensor([1 / 12, 9 / 12], dtype=torch.float64)))
    from sbi.utils import BoxUniform

    assert _prior_gaussian(BoxUniform(torch.zeros(2), torch.ones(2)))[1].shape == (2, 2)
    with pytest.raises(TypeError, match=r"box-uniform.*re-parametrise"):
        _prior_gaussian(d.Gamma(torch.ones(2), 1.0))


def test_box_uniform_diffused_score_matches_high_precision_and_sbi():
    """The closed form against (a) sbi's UniformNormalConvolution log-density differentiated by
    autograd where sbi's 1e-30 clamp is inactive (|theta| <= 1.5, alpha <= 0.5), and (b) 60-digit
    mpmath values of the same formula far in the tails, where float64 subtraction of Phi's would
    give 0/0: relative error 1e-9 (measured ~1e-11)."""
    import mpmath as mp
    from sbi.utils import BoxUniform
    from sbi.utils.vector_field_utils import marginalize

    from neurips26.annealed_langevin import box_uniform_diffused_score

    low, high = torch.tensor([-1.0, 0.0], dtype=torch.float64), torch.tensor([2.0, 0.5], dtype=torch.float64)
    th = torch.linspace(-1.5, 1.5, 13, dtype=torch.float64)[:, None].expand(13, 2).contiguous()
    for a in (0.05, 0.5):
        p = marginalize(BoxUniform(low, high), torch.tensor(a ** 0.5, dtype=torch.float64),
                        torch.tensor((1 - a) ** 0.5, dtype=torch.float64))
        x = th.clone().requires_grad_(True)
        g = torch.autograd.grad(p.log_prob(x).sum(), x)[0]
        torch.testing.assert_close(box_uniform_diffused_score(th, low, high, a), g, rtol=1e-6, atol=1e-8)
    mp.mp.dps = 60

    def reference(t, a, lo, hi):
        sa, s = mp.sqrt(a), mp.sqrt(1 - a)
        ua, ub = (t - sa * lo) / s, (t - sa * hi) / s
        e = lambda u: mp.erfc(u / mp.sqrt(2)) / 2                      # noqa: E731  upper tail
        tail = e(-ua) - e(-ub) if ub <= 0 else e(ub) - e(ua)            # Phi(ua) - Phi(ub)
        return float((mp.npdf(ua) - mp.npdf(ub)) / (s * tail))

    far = torch.tensor([[-9.6, 7.4], [30.0, -20.0], [0.5, 0.25]], dtype=torch.float64)
    for a in (0.99, 0.9999):
        ours = box_uniform_diffused_score(far, low, high, a)
        for i in range(3):
            for j in range(2):
                ref = reference(mp.mpf(float(far[i, j])), mp.mpf(a), mp.mpf(float(low[j])), mp.mpf(float(high[j])))
                assert abs(float(ours[i, j]) - ref) <= 1e-9 * max(1.0, abs(ref)), (a, i, j, float(ours[i, j]), ref)
    assert float(box_uniform_diffused_score(far, low, high, 0.9999)[1, 0]) < 0 < float(
        box_uniform_diffused_score(far, low, high, 0.9999)[1, 1])        # pulls back towards the box
    with pytest.raises(ValueError, match="low < high"):
        box_uniform_diffused_score(far, high, low, 0.5)


def test_w2_gaussian_agrees_with_pots_bures_wasserstein():
    # Cross-check with the field's library: POT's closed-form Gaussian W2 (Bures–Wasserstein).
    import ot

    rng = np.random.default_rng(3)
    for d in (1, 2, 5):
        a, b = rng.normal(size=(d, d)), rng.normal(size=(d, d))
        c1, c2 = a @ a.T + 0.1 * np.eye(d), b @ b.T + 0.1 * np.eye(d)
        m1, m2 = rng.normal(size=d), rng.normal(size=d)
        ours = w2_gaussian(m1, c1, m2, c2)
        theirs = float(ot.gaussian.bures_wasserstein_distance(m1, m2, c1, c2))   # W2, not squared
        assert ours == pytest.approx(theirs, rel=1e-8, abs=1e-10)
