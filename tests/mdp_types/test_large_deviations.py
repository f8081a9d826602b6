"""Rate functions of the plug-in kernel and value estimators; importance sampling of tail events."""

import numpy as np
import pytest

from neurips26.mdp_types import (
    kernel_rate,
    kernel_tail_rate,
    pair_counts,
    pair_kernel,
    policy_evaluation,
    sample_pair_chain,
    stationary_distribution,
    tail_probability_is,
    value_rate,
)


def test_rate_is_zero_at_truth_and_both_solvers_agree(toy):
    T, pi = toy
    assert kernel_rate(T, T, pi) < 1e-10
    rng = np.random.default_rng(5)
    for _ in range(3):
        Tp = rng.dirichlet(np.ones(2), size=(2, 2))
        jb, jc = kernel_rate(Tp, T, pi, "bellman"), kernel_rate(Tp, T, pi, "convex")
        assert jb > 0
        assert abs(jb - jc) <= 1e-6 * max(1.0, jc)     # two independent solvers; 1e-6 = solver tolerance


def test_rate_below_the_no_policy_change_bound(toy):
    """Keeping ρ = π is feasible, so J(T') ≤ Σ_s,a μ'(s,a) KL(T'‖T) with μ' stationary for (T', π)."""
    T, pi = toy
    Tp = np.random.default_rng(9).dirichlet(np.ones(2), size=(2, 2))
    mu_p = stationary_distribution(pair_kernel(Tp, pi)).reshape(2, 2)
    c = np.sum(Tp * np.log(Tp / T), axis=2)
    assert kernel_rate(Tp, T, pi) <= np.sum(mu_p * c) + 1e-10


def test_rate_infinite_when_every_pair_must_leave_the_support():
    T = np.full((2, 1, 2), 0.5)
    T[0, 0] = [1.0, 0.0]
    Tp = np.full((2, 1, 2), 0.5)                      # row (0,0) goes to state 1, impossible under T
    with pytest.warns(RuntimeWarning, match="not irreducible"):   # state 0 is absorbing under T
        assert kernel_rate(Tp, T, np.ones((2, 1))) == np.inf


def test_importance_sampling_agrees_with_plain_monte_carlo(toy):
    """A moderately rare tail event (p ≈ 1e-2) at m = 40: IS and plain MC must agree within their errors."""
    T, pi = toy
    s1 = int(np.argmin(T[0, 0]))
    x = min(T[0, 0, s1] + 0.3, 0.95)
    m = 40
    lp, rel = tail_probability_is(T, pi, 0, 0, s1, x, m, 4000, np.random.default_rng(0))
    P = pair_kernel(T, pi)
    paths = sample_pair_chain(P, m + 1, np.random.default_rng(1), n_chains=60_000)
    N = pair_counts(paths, 4).reshape(-1, 2, 2, 2, 2).sum(axis=4)[:, 0, 0]   # (reps, S) counts out of (0,0)
    n0 = N.sum(axis=1)
    p_mc = np.mean((n0 > 0) & (N[:, s1] >= x * n0 - 1e-12))
    se_mc = np.sqrt(p_mc * (1 - p_mc) / 60_000)
    p_is = np.exp(lp)
    assert p_mc > 1e-3                                 # the event is not too rare for plain MC
    assert abs(p_is - p_mc) < 4 * np.hypot(se_mc, rel * p_is)


def test_tail_rate_increases_with_threshold(toy):
    T, pi = toy
    s1 = int(np.argmin(T[0, 0]))
    rates = [kernel_tail_rate(T, pi, 0, 0, s1, x).rate for x in (T[0, 0, s1] + 0.1, T[0, 0, s1] + 0.3, 0.95)]
    assert rates[0] > 0 and np.all(np.diff(rates) > 0)
    with pytest.raises(ValueError, match="threshold"):
        kernel_tail_rate(T, pi, 0, 0, s1, 1.5)


def test_value_rate_zero_below_and_increasing_above(toy):
    T, pi = toy
    r = np.array([[0.2, 0.8], [0.5, 0.1]])
    V = policy_evaluation(T, r, pi=pi, gamma=0.8)[0]
    assert value_rate(V[0] - 0.1, T, pi, r, 0.8, pi, 0)[0] == 0.0
    rates, Ts = zip(*[value_rate(V[0] + d, T, pi, r, 0.8, pi, 0) for d in (0.05, 0.15)])
    assert 0 < rates[0] < rates[1]
    # the minimiser reaches the level, and its rate is the reported one
    for d, Tstar, rate in zip((0.05, 0.15), Ts, rates):
        assert policy_evaluation(Tstar, r, pi=pi, gamma=0.8)[0][0] >= V[0] + d - 1e-6
        assert abs(kernel_rate(Tstar, T, pi) - rate) < 1e-6


def test_q_rate_reaches_the_level(toy):
    T, pi = toy
    r = np.array([[0.2, 0.8], [0.5, 0.1]])
    Q = policy_evaluation(T, r, pi=pi, gamma=0.8)[1]
    rate, Tstar = value_rate(Q[0, 1] + 0.1, T, pi, r, 0.8, pi, 0, a0=1)
    assert rate > 0 and policy_evaluation(Tstar, r, pi=pi, gamma=0.8)[1][0, 1] >= Q[0, 1] + 0.1 - 1e-6


def test_value_importance_sampling_agrees_with_plain_monte_carlo(toy):
    """P(V̂(s0) ≥ v) at m = 40 by IS (tilted by the minimiser of I_V) and by 40k plain paths."""
    from neurips26.mdp_types import value_tail_probability_is

    T, pi = toy
    r = np.array([[0.2, 0.8], [0.5, 0.1]])
    V = policy_evaluation(T, r, pi=pi, gamma=0.8)[0]
    v, m = V[0] + 0.08, 40
    lp, rel = value_tail_probability_is(v, T, pi, r, 0.8, pi, 0, m, 4000, np.random.default_rng(0))
    paths = sample_pair_chain(pair_kernel(T, pi), m + 1, np.random.default_rng(1), n_chains=40_000)
    N = pair_counts(paths, 4).reshape(-1, 2, 2, 2, 2).sum(axis=4).astype(float)
    n_z = N.sum(axis=3, keepdims=True)
    T_hat = np.where(n_z > 0, N / np.maximum(n_z, 1), 0.5)
    P_pi = np.einsum("sa,ksat->kst", pi, T_hat)
    V_hat = np.linalg.solve(np.eye(2)[None] - 0.8 * P_pi, np.broadcast_to((pi * r).sum(1), (40_000, 2))[..., None])[..., 0]
    p_mc = np.mean(V_hat[:, 0] >= v)
    se_mc = np.sqrt(p_mc * (1 - p_mc) / 40_000)
    assert p_mc > 1e-3
    assert abs(np.exp(lp) - p_mc) < 4 * np.hypot(se_mc, rel * np.exp(lp))
