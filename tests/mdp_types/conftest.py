"""Shared fixtures: a small Dirichlet MDP (2 states × 2 actions) with a well-mixed logging policy."""

import numpy as np
import pytest


def toy_mdp(seed: int = 0, S: int = 2, A: int = 2):
    rng = np.random.default_rng(seed)
    T = rng.dirichlet(np.ones(S), size=(S, A))
    pi = 0.5 * rng.dirichlet(np.ones(A), size=S) + 0.5 / A
    return T, pi


@pytest.fixture
def toy():
    return toy_mdp(0)
