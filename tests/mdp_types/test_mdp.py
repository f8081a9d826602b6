"""Finite-MDP utilities: validation, pair chain, evaluation, gymnasium tables and logging."""

import numpy as np
import pytest

from neurips26.mdp_types import (
    check_logging_chain,
    log_episodes,
    pair_kernel,
    policy_evaluation,
    sample_pair_chain,
    stationary_distribution,
    toy_text_mdp,
    transition_counts,
    validate_gamma,
    validate_kernel,
    validate_policy,
    validate_rewards,
)


def test_validation_messages_name_the_bad_value():
    T = np.full((2, 2, 2), 0.5)
    T[1, 0] = [0.7, 0.7]
    with pytest.raises(ValueError, match=r"T\[1, 0, :\] sums to 1.4"):
        validate_kernel(T)
    with pytest.raises(ValueError, match="shape"):
        validate_kernel(np.ones((2, 2)))
    with pytest.raises(ValueError, match="pi\\[0, :\\] sums to"):
        validate_policy(np.array([[0.2, 0.2], [0.5, 0.5]]), 2, 2)
    with pytest.raises(ValueError, match=r"r\[1, 1\] = 2 is outside the declared range \[0.0, 1.0\]"):
        validate_rewards(np.array([[0.0, 1.0], [0.5, 2.0]]), 2, 2, (0.0, 1.0))
    for g in (1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="0 <= gamma < 1"):
            validate_gamma(g)


def test_pair_kernel_and_stationary_law(toy):
    T, pi = toy
    P = pair_kernel(T, pi)
    assert np.allclose(P.sum(axis=1), 1)
    mu = stationary_distribution(P)
    assert np.allclose(mu @ P, mu, atol=1e-12)
    # the state marginal of μ is stationary for the state chain P^π (independent identity)
    P_pi = np.einsum("sa,sat->st", pi, T)
    q = mu.reshape(2, 2).sum(axis=1)
    assert np.allclose(q @ P_pi, q, atol=1e-12)


def test_reducible_chain_raises_and_warns():
    T = np.zeros((2, 1, 2))
    T[0, 0] = [0.5, 0.5]
    T[1, 0] = [0.0, 1.0]           # state 1 absorbing
    pi = np.ones((2, 1))
    with pytest.raises(ValueError, match="not irreducible"):
        stationary_distribution(pair_kernel(T, pi))
    with pytest.warns(RuntimeWarning, match="not irreducible"):
        assert not check_logging_chain(T, pi)


def test_policy_evaluation_matches_truncated_series(toy):
    T, pi = toy
    r = np.array([[0.1, 0.9], [0.4, 0.3]])
    V, Q = policy_evaluation(T, r, pi=pi, gamma=0.8)
    P_pi, r_pi = np.einsum("sa,sat->st", pi, T), (pi * r).sum(axis=1)
    series, term = np.zeros(2), r_pi.copy()
    for _ in range(400):            # 0.8^400 ≈ 1e-39: the truncation error is negligible
        series += term
        term = 0.8 * P_pi @ term
    assert np.allclose(V, series, atol=1e-10)
    assert np.allclose((pi * Q).sum(axis=1), V)


def test_sampled_chain_frequencies_match_kernel(toy):
    T, pi = toy
    P = pair_kernel(T, pi)
    path = sample_pair_chain(P, 20_001, np.random.default_rng(1))[0]
    N = np.zeros((4, 4))
    np.add.at(N, (path[:-1], path[1:]), 1)
    emp = N / N.sum(axis=1, keepdims=True)
    # each row has >= ~3000 visits: binomial s.e. <= 0.01, so 0.04 is 4 s.e.
    assert np.max(np.abs(emp - P)) < 0.04


def test_frozenlake_tables_and_logged_data():
    mdp = toy_text_mdp("FrozenLake-v1", map_name="8x8")
    assert mdp.T.shape == (64, 4, 64) and np.allclose(mdp.T.sum(axis=2), 1)
    assert mdp.terminal.sum() == 11       # 10 holes + the goal on the 8x8 map
    for s in np.flatnonzero(mdp.terminal):
        assert np.all(mdp.T[s, :, s] == 1) and np.all(mdp.R[s] == 0)
    assert np.allclose((mdp.T * mdp.R).sum(axis=2), mdp.r)
    data = log_episodes("FrozenLake-v1", np.full((64, 4), 0.25), 3000, seed=0, map_name="8x8")
    N = transition_counts(data, 64, 4)
    assert N.sum() == 3000
    assert np.all(mdp.T[N > 0] > 0)       # every logged transition is possible in the table
    # the start state's action 0 is logged often; its frequencies follow the shipped table
    row = N[0, 0] / N[0, 0].sum()
    assert N[0, 0].sum() > 100 and np.max(np.abs(row - mdp.T[0, 0])) < 0.15  # 0.15 ≈ 3 s.e. at n≈100
