"""Coding error exponent E(R) against the i.i.d. closed form and its shape."""

import numpy as np
from scipy.optimize import brentq

from neurips26.mdp_types import coding_error_exponent, entropy_rate, pair_kernel


def test_iid_source_matches_the_classical_exponent():
    """Identical rows = i.i.d. source: E(R) = min{D(q‖p) : H(q) ≥ R} (Csiszár–Körner), binary here."""
    p = np.array([0.8, 0.2])
    P = np.tile(p, (2, 1))
    H = lambda t: -(t * np.log(t) + (1 - t) * np.log(1 - t))
    for R in (0.55, 0.62, 0.68):
        t = brentq(lambda t: H(t) - R, 0.2, 0.5)          # the constraint binds on the side towards uniform
        ref = t * np.log(t / 0.2) + (1 - t) * np.log((1 - t) / 0.8)
        assert abs(coding_error_exponent(P, [R])[0] - ref) < 1e-6


def test_zero_below_entropy_rate_positive_above_and_inf_beyond_log_z(toy):
    P = pair_kernel(*toy)
    H = entropy_rate(P)
    E = coding_error_exponent(P, [0.5 * H, H, H + 0.1, H + 0.2, np.log(4) + 0.1])
    assert np.all(np.abs(E[:2]) < 1e-6)
    assert 0 < E[2] < E[3] and E[4] == np.inf


def test_exact_error_probability_decreases_with_rate(toy):
    from neurips26.mdp_types import coding_error_probability_exact, stationary_distribution

    P = pair_kernel(*toy)
    mu = stationary_distribution(P)
    p = [coding_error_probability_exact(P, mu, 6, R) for R in (0.0, 0.3, 0.6, 5.0)]
    assert 0 < p[0] <= 1 and np.all(np.diff(p) <= 0) and p[-1] == 0.0
