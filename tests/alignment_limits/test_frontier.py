"""Exact frontier: the Jeffreys identity, the closed form against independent solutions, inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from neurips26.alignment_limits import (
    BudgetExceedsMaximumWarning,
    beta_for_budget,
    jeffreys_divergence,
    kl_divergence,
    max_attainable_gain,
    max_attainable_kl,
    max_reward_gain,
    sqrt_kl_approximation,
    tilted_frontier,
    tilted_policy,
)


def _policy(k: int, seed: int, scale: float = 1.5):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, scale, k)
    p = np.exp(logits - logits.max())
    return p / p.sum(), rng.normal(size=k)


@st.composite
def policy_reward_beta(draw):
    k = draw(st.integers(2, 40))
    w = draw(arrays(np.float64, k, elements=st.floats(0.01, 1.0)))
    r = draw(arrays(np.float64, k, elements=st.floats(-3.0, 3.0)))
    beta = draw(st.floats(0.05, 10.0))
    return w / w.sum(), r, beta


@settings(max_examples=150, deadline=None)
@given(policy_reward_beta())
def test_gain_equals_beta_times_jeffreys(prb):
    pi0, r, beta = prb
    fp = tilted_frontier(pi0, r, beta)
    # J from the two KLs of the explicit tilted policy (scipy rel_entr), independent of fp
    j = jeffreys_divergence(tilted_policy(pi0, r, beta), pi0)
    # identity is exact; 1e-9 relative (+1e-13 absolute for near-constant rewards) is rounding room
    assert abs(fp.gain[0] - beta * j) <= 1e-9 * abs(fp.gain[0]) + 1e-13
    assert fp.gain[0] >= -1e-15 and fp.kl[0] >= 0
    # the frontier's own J agrees as well
    assert abs(fp.jeffreys[0] - j) <= 1e-9 * j + 1e-13


@settings(max_examples=60, deadline=None)
@given(policy_reward_beta())
def test_kl_and_gain_decrease_with_beta(prb):
    pi0, r, beta = prb
    if np.ptp(r) < 1e-6:
        return
    fp = tilted_frontier(pi0, r, [beta, 1.5 * beta])
    # monotone in beta (a theorem); 1e-12 absolute for rounding
    assert fp.kl[1] <= fp.kl[0] + 1e-12 and fp.gain[1] <= fp.gain[0] + 1e-12


def test_two_point_closed_form_by_hand():
    # pi0 = (1/2, 1/2), r = (0, 1): pi_beta(1) = s = sigmoid(1/beta), gain = s - 1/2,
    # KL = log 2 + s log s + (1 - s) log(1 - s)  (written out by hand, not from the code)
    for beta in (0.1, 0.7, 3.0):
        s = 1 / (1 + math.exp(-1 / beta))
        fp = tilted_frontier([0.5, 0.5], [0.0, 1.0], beta)
        assert fp.gain[0] == pytest.approx(s - 0.5, rel=1e-12)
        assert fp.kl[0] == pytest.approx(math.log(2) + s * math.log(s) + (1 - s) * math.log(1 - s), rel=1e-10)
    sol = max_reward_gain([0.5, 0.5], [0.0, 1.0], 0.3)
    # invert by hand: KL(s) = 0.3, solved by bisection on s in (1/2, 1)
    lo, hi = 0.5, 1 - 1e-15
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        kl = math.log(2) + mid * math.log(mid) + (1 - mid) * math.log(1 - mid)
        lo, hi = (mid, hi) if kl < 0.3 else (lo, mid)
    assert sol.gain == pytest.approx(lo - 0.5, rel=1e-9)
    assert sol.kl == pytest.approx(0.3, rel=1e-12)


def test_closed_form_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    pi0, r = _policy(30, 1)
    rc = r - pi0 @ r
    for eps in (0.01, 0.3, 1.5):
        u = cp.Variable(30)
        prob = cp.Problem(cp.Maximize((pi0 * rc) @ u), [pi0 @ u == 1, pi0 @ (-cp.entr(u)) <= eps])
        prob.solve(solver=cp.CLARABEL)
        # interior-point accuracy ~1e-8; 1e-6 leaves a 100x margin over it
        assert max_reward_gain(pi0, r, eps).gain == pytest.approx(float((pi0 * rc) @ u.value), abs=1e-6)


def test_random_feasible_policies_never_beat_the_limit():
    pi0, r = _policy(50, 2)
    eps = 0.4
    limit = max_reward_gain(pi0, r, eps).gain
    rng = np.random.default_rng(3)
    best = -np.inf
    for _ in range(3000):
        q = rng.dirichlet(np.ones(50) * 0.3)
        lam = 1.0
        while kl_divergence((1 - lam) * pi0 + lam * q, pi0) > eps:
            lam *= 0.8
        mix = (1 - lam) * pi0 + lam * q
        best = max(best, float(mix @ r - pi0 @ r))
    assert best <= limit + 1e-12          # a maximum: only rounding may exceed it
    assert best > 0.3 * limit             # the search is not vacuous


def test_budget_solution_consistency_and_beta():
    pi0, r = _policy(200, 4)
    for eps in (1e-6, 0.05, 1.0, 3.0):
        sol = max_reward_gain(pi0, r, eps)
        assert sol.kl == pytest.approx(eps, rel=1e-9)
        assert sol.gain == pytest.approx(sol.beta * sol.jeffreys, rel=1e-9)
        assert beta_for_budget(pi0, r, eps) == pytest.approx(sol.beta, rel=1e-12)
    # small budgets: sqrt(2 Var eps) is the leading term (relative correction O(sqrt(eps)))
    assert sqrt_kl_approximation(pi0, r, 1e-6) == pytest.approx(max_reward_gain(pi0, r, 1e-6).gain, rel=2e-3)


def test_budget_beyond_maximum_warns_and_returns_maximum():
    pi0, r = _policy(20, 5)
    kl_max = max_attainable_kl(pi0, r)
    with pytest.warns(BudgetExceedsMaximumWarning, match="attainable maximum"):
        sol = max_reward_gain(pi0, r, kl_max + 1.0)
    assert sol.saturated and sol.gain == pytest.approx(max_attainable_gain(pi0, r), rel=1e-12)
    assert sol.gain == pytest.approx(r.max() - pi0 @ r, rel=1e-12)


def test_zero_budget_and_constant_reward_give_zero_not_nan():
    pi0, _ = _policy(10, 6)
    assert max_reward_gain(pi0, np.ones(10), 0.0).gain == 0.0
    fp = tilted_frontier(pi0, np.full(10, 7.0), [0.01, 1.0, 100.0])
    assert np.all(fp.gain == 0) and np.all(fp.kl == 0) and np.all(fp.jeffreys == 0)
    with pytest.warns(BudgetExceedsMaximumWarning):
        sol = max_reward_gain(pi0, np.full(10, 7.0), 0.5)
    assert sol.gain == 0.0 and not math.isnan(sol.jeffreys)


def test_huge_rewards_and_tiny_beta_do_not_overflow():
    pi0, r = _policy(100, 7)
    fp = tilted_frontier(pi0, 1e6 * r, [1e-3, 1.0, 1e9])
    assert np.all(np.isfinite(fp.gain)) and np.all(np.isfinite(fp.kl))
    # beta -> 0: all mass on the argmax; gain -> max r - E r, KL -> -log pi0(argmax)
    assert fp.gain[0] == pytest.approx(1e6 * (r.max() - pi0 @ r), rel=1e-12)
    assert fp.kl[0] == pytest.approx(max_attainable_kl(pi0, r), rel=1e-9)
    # scale invariance: (c r, c beta) gives the same policy
    assert np.allclose(tilted_policy(pi0, 1e6 * r, 1e6), tilted_policy(pi0, r, 1.0), rtol=1e-10, atol=0)


def test_zero_mass_outcomes_are_ignored():
    pi0 = np.array([0.5, 0.0, 0.5])
    r = np.array([0.0, 100.0, 1.0])
    p = tilted_policy(pi0, r, 0.5)
    assert p[1] == 0.0
    assert max_attainable_gain(pi0, r) == pytest.approx(0.5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(beta=0.0), "beta must be finite and > 0"),
    (dict(beta=-1.0), "beta must be finite and > 0"),
    (dict(beta=np.nan), "beta must be finite and > 0"),
    (dict(r=[0.0, np.nan, 1.0]), r"r must be finite; r\[1\] = nan"),
    (dict(r=[0.0, 1.0]), "same length"),
    (dict(pi0=[0.5, 0.6, 0.1]), "must sum to 1"),
    (dict(pi0=[1.5, -0.5, 0.0]), "non-negative"),
])
def test_bad_inputs_are_named(kwargs, match):
    args = dict(pi0=[0.2, 0.3, 0.5], r=[0.0, 1.0, 2.0], beta=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        tilted_frontier(args["pi0"], args["r"], args["beta"])


def test_negative_or_nan_budget_is_refused():
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        max_reward_gain([0.5, 0.5], [0.0, 1.0], -0.1)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        max_reward_gain([0.5, 0.5], [0.0, 1.0], float("inf"))


# --- review fixes: huge rewards, tiny betas, non-real input, constant reward message ---------------

def test_huge_rewards_do_not_overflow_and_scale_exactly():
    from neurips26.alignment_limits import max_attainable_gain, tilted_policy

    pi0 = np.full(4, 0.25)
    r = np.array([0.0, 1.0, 2.0, 3.0])
    base = max_reward_gain(pi0, r, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no overflow RuntimeWarning either
        for k in (300, 700, 1000):                      # 2**1000 ~ 1e301: r**2 used to overflow
            big = max_reward_gain(pi0, r * 2.0**k, 0.5)
            assert big.gain == pytest.approx(base.gain * 2.0**k, rel=1e-12)
            assert big.beta == pytest.approx(base.beta * 2.0**k, rel=1e-12)
            assert big.kl == pytest.approx(0.5, rel=1e-12)
        spread = np.array([-1e308, 1e308, 0.0, 0.0])      # range beyond the float64 maximum
        fp = tilted_frontier(pi0, spread, [1.0, 1e308])
        assert np.all(np.isfinite(fp.kl)) and np.all(np.isfinite(fp.gain)) and not np.isnan(fp.jeffreys).any()
        assert fp.kl[0] == pytest.approx(math.log(4)) and fp.gain[0] == pytest.approx(1e308)
        assert max_attainable_gain(pi0, spread) == pytest.approx(1e308)
        assert np.isfinite(max_reward_gain(pi0, spread, 0.5).gain)
        assert np.array_equal(tilted_policy(pi0, r, 1e-320), [0, 0, 0, 1])   # r/beta overflows: argmax


def test_tiny_beta_gives_argmax_not_nan():
    pi0 = np.full(4, 0.25)
    fp = tilted_frontier(pi0, [0.0, 1.0, 2.0, 3.0], [1e-320, 1e-3])
    assert fp.kl == pytest.approx([math.log(4)] * 2) and fp.gain == pytest.approx([1.5, 1.5])
    assert fp.jeffreys[0] == math.inf and fp.jeffreys[1] == pytest.approx(1500.0)


@pytest.mark.parametrize("bad, match", [
    (np.array([0, 1, 2, 3]) + 1j, "complex"),
    (["a", "b", "c", "d"], "real numbers"),
    ([[0, 1], [2]], "real numbers"),
])
def test_non_real_rewards_are_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        tilted_frontier(np.full(4, 0.25), bad, 1.0)


@pytest.mark.parametrize("beta", ["a", 1 + 1j, None])
def test_non_numeric_beta_is_refused_naming_beta(beta):
    with pytest.raises(ValueError, match="beta must be"):
        tilted_frontier(np.full(4, 0.25), [0.0, 1.0, 2.0, 3.0], beta)


def test_constant_reward_budget_message_has_no_negative_zero():
    with pytest.warns(BudgetExceedsMaximumWarning, match=r"maximum 0 nats"):
        sol = max_reward_gain(np.full(4, 0.25), np.ones(4), 0.5)
    assert sol.gain == 0.0 and not math.isnan(sol.jeffreys)


@pytest.mark.parametrize("eps", [True, np.array([0.3]), [0.3], "0.3x"])
def test_budget_must_be_one_real_number(eps):
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        max_reward_gain(np.full(4, 0.25), [0.0, 1.0, 2.0, 3.0], eps)
