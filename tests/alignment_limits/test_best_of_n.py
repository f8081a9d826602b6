"""Best-of-N: exact grouped formula vs simulation, the bound, ties, the frontier, inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from neurips26.alignment_limits import (
    best_of_n,
    best_of_n_kl_bound,
    best_of_n_policy,
    kl_divergence,
    max_reward_gain,
    sampled_best_of_n,
)


@st.composite
def discrete_policy(draw):
    k = draw(st.integers(1, 30))
    w = draw(arrays(np.float64, k, elements=st.floats(0.01, 1.0)))
    r = draw(arrays(np.float64, k, elements=st.sampled_from([-1.0, 0.0, 0.5, 2.0])))  # many ties
    n = draw(st.integers(1, 500))
    return w / w.sum(), r, n


@settings(max_examples=150, deadline=None)
@given(discrete_policy())
def test_kl_below_bound_and_policy_consistent(case):
    pi0, r, n = case
    bon = best_of_n(pi0, r, n)
    assert bon.kl[0] <= bon.kl_bound[0] + 1e-12          # Beirami et al.: an upper bound
    pol = best_of_n_policy(pi0, r, n)
    assert pol.sum() == pytest.approx(1.0, abs=1e-12)
    # the per-level formula equals the KL / gain of the explicit outcome distribution
    assert bon.kl[0] == pytest.approx(kl_divergence(pol, pi0), rel=1e-9, abs=1e-12)
    assert bon.gain[0] == pytest.approx(pol @ r - pi0 @ r, rel=1e-9, abs=1e-12)


def test_matches_simulation_with_ties():
    rng = np.random.default_rng(0)
    k, n = 12, 5
    pi0 = rng.dirichlet(np.ones(k))
    r = rng.integers(0, 4, k).astype(float)               # 4 reward levels: heavy ties
    draws = rng.choice(k, size=(200_000, n), p=pi0)
    picked = draws[np.arange(draws.shape[0]), np.argmax(r[draws], axis=1)]   # first max among ties
    counts = np.bincount(picked, minlength=k)
    expected = best_of_n_policy(pi0, r, n) * draws.shape[0]
    keep = expected > 0
    # chi-square goodness of fit; p > 1e-4 fails by chance 1 in 10^4, a wrong formula fails hard
    assert stats.chisquare(counts[keep], expected[keep]).pvalue > 1e-4


def test_continuous_formula_overstates_kl_under_ties():
    # all rewards equal: BoN = pi0 exactly, KL 0, while log N - (N-1)/N is positive
    pi0 = np.full(10, 0.1)
    bon = best_of_n(pi0, np.zeros(10), [2, 64])
    assert np.all(bon.kl == 0) and np.all(bon.gain == 0) and np.all(bon.kl_bound > 0)


def test_continuous_rewards_attain_the_bound():
    # distinct rewards, uniform pi0 over K: KL -> log N - (N-1)/N with O(N/K) error
    k = 200_000
    r = np.random.default_rng(1).normal(size=k)
    bon = best_of_n(np.full(k, 1 / k), r, [2, 16, 128])
    assert np.allclose(bon.kl, bon.kl_bound, rtol=0, atol=2e-3)
    # and the gain of N Gaussian draws' maximum: E max of 2 N(0,1) is 1/sqrt(pi)
    assert bon.gain[0] == pytest.approx(1 / math.sqrt(math.pi), abs=0.01)   # 0.01 ~ 4 x MC sd of r's mean


def test_best_of_n_lies_below_the_frontier():
    rng = np.random.default_rng(2)
    logits = rng.normal(0, 1.5, 2000)
    pi0 = np.exp(logits - logits.max())
    pi0 /= pi0.sum()
    r = rng.normal(size=2000)
    bon = best_of_n(pi0, r, [2, 16, 256])
    for kl, gain in zip(bon.kl, bon.gain):
        front = max_reward_gain(pi0, r, kl).gain
        assert gain <= front + 1e-9 and gain >= 0.85 * front   # BoN within 15% on this setup (prototype run: 0.91-0.98)


def test_huge_n_is_precise():
    pi0 = np.array([0.5, 0.3, 0.2 - 1e-9, 1e-9])
    r = np.array([0.0, 1.0, 2.0, 3.0])
    bon = best_of_n(pi0, r, [10**6, 10**12])
    pol = best_of_n_policy(pi0, r, 10**6)
    # P(top outcome) = 1 - (1 - 1e-9)^N, computed by hand with log1p
    assert pol[3] == pytest.approx(-math.expm1(10**6 * math.log1p(-1e-9)), rel=1e-9)
    assert np.all(np.isfinite(bon.kl)) and bon.kl[1] <= -math.log(1e-9) + 1e-9


def test_sampled_best_of_n_agrees_with_exact():
    rng = np.random.default_rng(3)
    k = 1000
    pi0 = np.full(k, 1 / k)
    r = rng.gamma(2.0, size=k)
    exact = best_of_n(pi0, r, 8)
    s = sampled_best_of_n(r[rng.integers(0, k, 80_000)], 8)
    assert abs(s.gain - exact.gain[0]) <= 4 * s.gain_se      # 4 SE: chance failure ~6e-5
    assert s.kl <= s.kl_bound + 1e-12 and s.n_groups == 10_000
    assert s.kl == pytest.approx(exact.kl[0], abs=0.02)       # plug-in with 80k samples of 1000 outcomes


def test_bound_values():
    assert best_of_n_kl_bound(1) == 0.0
    assert best_of_n_kl_bound(2) == pytest.approx(math.log(2) - 0.5)
    np.testing.assert_allclose(best_of_n_kl_bound(np.array([4, 8])), np.log([4, 8]) - np.array([3 / 4, 7 / 8]))


@pytest.mark.parametrize("n", [0, -3, 2.5, "4", np.array([[2]])])
def test_bad_n_is_refused(n):
    with pytest.raises(ValueError, match="n must be"):
        best_of_n([0.5, 0.5], [0.0, 1.0], n)


def test_too_few_samples_and_bad_rewards():
    with pytest.raises(ValueError, match="at least 2 groups"):
        sampled_best_of_n(np.arange(10.0), 6)
    with pytest.raises(ValueError, match="finite"):
        sampled_best_of_n([0.0, np.nan, 1.0, 2.0], 2)
    with pytest.raises(ValueError, match="same length"):
        best_of_n([0.5, 0.5], [0.0, 1.0, 2.0], 2)
