"""Pair types: counts, conditional KL and its split, exact enumeration against the type bounds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.mdp_types import (
    conditional_kl,
    exact_type_distribution,
    kl_decomposition,
    pair_counts,
    pair_kernel,
    plug_in_kernel,
    sample_pair_chain,
    stationary_distribution,
    type_probability_bounds,
)

from .conftest import toy_mdp


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=40))
def test_pair_counts_open_and_cyclic(z):
    z = np.array(z)
    N = pair_counts(z, 4)
    assert N.sum() == len(z) - 1
    Nc = pair_counts(z, 4, cyclic=True)
    assert Nc.sum() == len(z)
    assert np.array_equal(Nc.sum(axis=0), Nc.sum(axis=1))  # cyclic types are balanced


def test_pair_counts_rejects_bad_input():
    with pytest.raises(ValueError, match="at least 2"):
        pair_counts(np.array([1]), 4)
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        pair_counts(np.array([0, 5]), 4)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_conditional_kl_splits_into_dynamics_and_policy(seed):
    rng = np.random.default_rng(seed)
    T, pi = toy_mdp(seed % 7)
    P = pair_kernel(T, pi)
    Q = rng.dirichlet(np.ones(16)).reshape(4, 4)
    dyn, pol = kl_decomposition(Q, T, pi)
    assert dyn >= -1e-12 and pol >= -1e-12
    assert np.isclose(dyn + pol, conditional_kl(Q, P), rtol=1e-10, atol=1e-12)


def test_conditional_kl_zero_at_truth_and_inf_off_support(toy):
    T, pi = toy
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    assert abs(conditional_kl(mu[:, None] * P, P)) < 1e-12
    P0 = P.copy()
    P0[0] = [1.0, 0.0, 0.0, 0.0]
    Q = np.full((4, 4), 1 / 16)
    assert conditional_kl(Q, P0) == np.inf


def test_plug_in_kernel_unvisited_rows_are_flagged_not_nan():
    N = np.zeros((2, 2, 2))
    N[0, 0] = [3, 1]
    T_hat, visited = plug_in_kernel(N)
    assert np.all(np.isfinite(T_hat)) and visited.sum() == 1
    assert np.allclose(T_hat[0, 0], [0.75, 0.25]) and np.allclose(T_hat[1, 1], 0.5)


def test_exact_type_probabilities_respect_both_bounds(toy):
    T, pi = toy
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    N, logp = exact_type_distribution(P, mu, 8)
    assert np.isclose(np.exp(logp).sum(), 1.0, atol=1e-12)
    b = type_probability_bounds(N, P, mu)
    assert np.max(logp - b.log_upper) <= 1e-9          # the theorem; 1e-9 is round-off
    assert np.min(logp - b.log_lower) >= 0.0


def test_exact_type_law_matches_simulation(toy):
    """Independent check of the enumeration: frequency of the most likely type in 40k simulated paths."""
    T, pi = toy
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    N, logp = exact_type_distribution(P, mu, 6)
    k = int(np.argmax(logp))
    p = np.exp(logp[k])
    paths = sample_pair_chain(P, 6, np.random.default_rng(3), n_chains=40_000)
    hits = np.all(pair_counts(paths, 4) == N[k], axis=(1, 2)).mean()
    se = np.sqrt(p * (1 - p) / 40_000)
    assert abs(hits - p) < 5 * se                      # 5 s.e.: false alarm ~6e-7


def test_enumeration_refuses_huge_cases(toy):
    P = pair_kernel(*toy)
    with pytest.raises(ValueError, match="exceeds max_paths"):
        exact_type_distribution(P, np.full(4, 0.25), 20)
