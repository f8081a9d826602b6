"""Base-sample estimator: agreement with the exact frontier, calibrated errors, ESS, inputs."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.alignment_limits import UnreliableEstimateWarning, estimate_frontier, tilted_frontier


def _policy(k: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.5, k)
    p = np.exp(logits - logits.max())
    return p / p.sum(), rng.normal(size=k)


BETAS = np.array([2.0, 1.0, 0.5, 0.25])


def test_estimate_agrees_with_exact_within_standard_errors():
    pi0, r = _policy()
    exact = tilted_frontier(pi0, r, BETAS)
    rng = np.random.default_rng(1)
    est = [estimate_frontier(r[rng.choice(r.size, 10_000, p=pi0)], BETAS) for _ in range(30)]
    gain = np.array([e.gain for e in est])
    kl = np.array([e.kl for e in est])
    se = np.array([e.gain_se for e in est]).mean(0)
    kse = np.array([e.kl_se for e in est]).mean(0)
    # mean of 30 estimates vs exact, in units of the standard error of that mean:
    # |z| <= 4 fails by chance with prob ~6e-5 per beta; a biased estimator (>~2% off) fails
    assert np.all(np.abs(gain.mean(0) - exact.gain) <= 4 * se / np.sqrt(30))
    assert np.all(np.abs(kl.mean(0) - exact.kl) <= 4 * kse / np.sqrt(30))


def test_delta_method_standard_error_is_calibrated():
    pi0, r = _policy()
    rng = np.random.default_rng(2)
    # betas with ESS >~ 500 at N = 4000: the delta method is a large-ESS approximation
    est = [estimate_frontier(r[rng.choice(r.size, 4000, p=pi0)], BETAS[:3]) for _ in range(200)]
    for attr in ("gain", "kl"):
        vals = np.array([getattr(e, attr) for e in est])
        se = np.array([getattr(e, attr + "_se") for e in est]).mean(0)
        ratio = vals.std(0, ddof=1) / se
        # 200 repeats: the empirical std is known to ~5%; [0.8, 1.25] is ~4 sigma wide
        assert np.all((ratio > 0.8) & (ratio < 1.25)), (attr, ratio)


def test_matches_naive_formula_written_in_the_test():
    r = np.random.default_rng(3).gamma(2.0, size=5000)
    e = estimate_frontier(r, BETAS)
    for b, g, k in zip(BETAS, e.gain, e.kl):
        w = np.exp(r / b)                                     # safe: r <~ 20, beta >= 0.25
        gain = np.mean(r * w) / np.mean(w) - np.mean(r)       # Cov(r, w) / E w
        kl = np.sum(w * r) / np.sum(w) / b - np.log(np.mean(w))
        assert g == pytest.approx(gain, rel=1e-10) and k == pytest.approx(kl, rel=1e-9)


def test_standard_error_stays_accurate_for_tiny_tilts():
    # beta >> spread: gain ~ Var/beta and its SE ~ c/beta; the cancellation-free path must keep
    # SE * beta constant across beta (a cancelling expansion gives 0 or noise here)
    r = np.random.default_rng(4).normal(size=20_000)
    e = estimate_frontier(r, [1e2, 1e4, 1e6])
    scaled = e.gain_se * e.beta
    assert np.all(scaled > 0)
    assert scaled[1] == pytest.approx(scaled[0], rel=0.02) and scaled[2] == pytest.approx(scaled[1], rel=1e-3)
    kscaled = e.kl_se * e.beta**2
    assert kscaled[2] == pytest.approx(kscaled[1], rel=1e-3) and kscaled[1] == pytest.approx(kscaled[0], rel=0.05)


def test_importance_weights_correct_for_a_different_sampling_policy():
    pi0, r = _policy(500, 5)
    exact = tilted_frontier(pi0, r, BETAS)
    q = np.full(500, 1 / 500)
    rng = np.random.default_rng(6)
    est, raw = [], []
    for _ in range(20):
        ys = rng.integers(0, 500, 20_000)
        est.append(estimate_frontier(r[ys], BETAS, log_importance_weights=np.log(pi0[ys] / q[ys])))
        raw.append(estimate_frontier(r[ys], BETAS))
    gain = np.array([e.gain for e in est])
    se = np.array([e.gain_se for e in est]).mean(0)
    assert np.all(np.abs(gain.mean(0) - exact.gain) <= 4 * se / np.sqrt(20))   # as above
    # the weighted standard error has the right size: 20 repeats know the std to ~16%, so
    # [0.55, 1.6] is ~3 sigma (a coarse check; the unweighted test above is the sharp one)
    ratio = gain.std(0, ddof=1) / se
    assert np.all((ratio > 0.55) & (ratio < 1.6)), ratio
    # without the weights the estimate is biased (samples are not from pi0): > 4 SE of the mean
    raw_gain = np.array([e.gain for e in raw])
    raw_se = np.array([e.gain_se for e in raw]).mean(0)
    assert np.all(np.abs(raw_gain.mean(0) - exact.gain) > 4 * raw_se / np.sqrt(20))


def test_effective_sample_size_and_unreliable_warning():
    r = np.random.default_rng(7).normal(size=200)
    with pytest.warns(UnreliableEstimateWarning, match="effective sample size"):
        e = estimate_frontier(r, [10.0, 0.01])
    assert e.reliable.tolist() == [True, False]
    assert e.ess[0] == pytest.approx(200, rel=0.01) and e.ess[1] < 2


def test_constant_rewards_give_zero_not_nan():
    e = estimate_frontier(np.full(50, 3.0), [0.1, 1.0])
    assert np.all(e.gain == 0) and np.all(e.kl == 0) and np.all(np.isfinite(e.gain_se))


def test_huge_rewards_do_not_overflow():
    r = np.random.default_rng(8).normal(size=1000) * 1e8
    e = estimate_frontier(r, [1.0, 1e8])
    assert np.all(np.isfinite(e.gain)) and np.all(np.isfinite(e.kl))
    assert e.gain[0] == pytest.approx(r.max() - r.mean(), rel=1e-12)


@pytest.mark.parametrize("rewards, kwargs, match", [
    ([1.0], {}, "at least 2"),
    ([1.0, np.inf, 0.0], {}, "rewards must be finite"),
    ([[1.0, 2.0]], {}, "1-D"),
    ([1.0, 2.0, 3.0], dict(log_importance_weights=[0.0, 0.0]), "same length"),
    ([1.0, 2.0, 3.0], dict(min_ess=0.5), "min_ess"),
])
def test_bad_inputs_are_named(rewards, kwargs, match):
    with pytest.raises(ValueError, match=match):
        estimate_frontier(rewards, 1.0, **kwargs)
    with pytest.raises(ValueError, match="beta must be finite and > 0"):
        estimate_frontier([1.0, 2.0], [1.0, -2.0])


# --- review fixes ------------------------------------------------------------------------------

def test_huge_rewards_and_tiny_betas_give_finite_standard_errors():
    import warnings

    r = np.random.default_rng(0).normal(size=500)
    base = estimate_frontier(r, [1.0, 0.5], warn_unreliable=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = estimate_frontier(r * 2.0**700, np.array([1.0, 0.5]) * 2.0**700, warn_unreliable=False)
        np.testing.assert_allclose(big.gain, base.gain * 2.0**700, rtol=1e-12)
        np.testing.assert_allclose(big.gain_se, base.gain_se * 2.0**700, rtol=1e-9)
        np.testing.assert_allclose(big.kl, base.kl, rtol=1e-12)
        # beta**2 underflowed to 0 here (0/0 = NaN standard error) before the fix
        tiny = estimate_frontier(np.arange(10.0), 1e-300, warn_unreliable=False)
        assert np.all(np.isfinite(tiny.kl_se)) and np.all(np.isfinite(tiny.gain_se))
        huge = estimate_frontier(np.arange(10.0) * 1e300, 1.0, warn_unreliable=False)
        assert np.all(np.isfinite(huge.kl_se)) and np.all(np.isfinite(huge.gain_se))


@pytest.mark.parametrize("min_ess", ["x", None, float("nan"), 1.0])
def test_bad_min_ess_is_a_value_error(min_ess):
    with pytest.raises(ValueError, match="min_ess must be a finite number > 1"):
        estimate_frontier(np.arange(10.0), 1.0, min_ess=min_ess)
