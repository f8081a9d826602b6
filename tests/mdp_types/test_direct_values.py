"""Direct value tests of single points of detection (each was caught only incidentally before).

Bugs these tests and the claims are meant to catch, each tried on a broken copy of the code:
a wrong power of |Z| or a missing log(1/δ) in the KL radius; a pair-type KL that drops the
row marginal Q_1 (caught here and by the claim
``type_bound_exact_on_deterministic_types``, which then measures ≈ 8 instead of 1e-15); a soft-Bellman
rate solver with a wrong sign on the continuation value (caught here and by
``rate_two_solvers_agree``). A constant-factor error in r_n that keeps it above the calibrated
radius changes no claim (``kl_set_coverage`` says so in its note): only the formula test sees it.
"""

import numpy as np
import pytest

from neurips26.mdp_types import kernel_rate, kl_radius
from neurips26.mdp_types.large_deviations import value_rate
from neurips26.mdp_types.mdp import policy_evaluation
from neurips26.mdp_types.pair_types import conditional_kl

from .conftest import toy_mdp


@pytest.mark.parametrize("m,n_pairs,delta", [(1, 1, 0.5), (100, 4, 0.05), (10_000, 256, 1e-3)])
def test_kl_radius_is_the_type_counting_formula(m, n_pairs, delta):
    # r_n = [log(1/δ) + |Z|² log(m+1)] / m, written out independently
    expected = (np.log(1.0 / delta) + (n_pairs * n_pairs) * np.log(m + 1.0)) / m
    assert kl_radius(m, n_pairs, delta) == pytest.approx(expected, rel=1e-14)


def test_conditional_kl_by_hand():
    # Z = 2: P = [[.9, .1], [.4, .6]]; pair counts N = [[2, 1], [1, 0]] (m = 4)
    P = np.array([[0.9, 0.1], [0.4, 0.6]])
    N = np.array([[2.0, 1.0], [1.0, 0.0]])
    Q = N / 4
    q1 = Q.sum(axis=1)                                   # row marginal (3/4, 1/4)
    by_hand = (Q[0, 0] * np.log(Q[0, 0] / (q1[0] * P[0, 0])) + Q[0, 1] * np.log(Q[0, 1] / (q1[0] * P[0, 1]))
               + Q[1, 0] * np.log(Q[1, 0] / (q1[1] * P[1, 0])))
    assert conditional_kl(N, P) == pytest.approx(by_hand, rel=1e-13)
    # Q = Q_1 ⊗ P gives 0; a single-path type (z…z) gives −log P(z, z)
    q = np.array([0.3, 0.7])
    assert conditional_kl(q[:, None] * P, P) == pytest.approx(0.0, abs=1e-15)
    assert conditional_kl(np.array([[5.0, 0.0], [0.0, 0.0]]), P) == pytest.approx(-np.log(0.9), rel=1e-13)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_soft_bellman_rate_matches_convex_program(seed):
    T, pi = toy_mdp(seed)
    Tp = toy_mdp(100 + seed)[0]
    # interior-point tolerance ~1e-7 on rates of order 0.1–1
    assert kernel_rate(Tp, T, pi, "bellman") == pytest.approx(kernel_rate(Tp, T, pi, "convex"), rel=1e-4, abs=1e-6)
    assert kernel_rate(T, T, pi, "bellman") == pytest.approx(0.0, abs=1e-10)


def test_value_rate_survives_near_deterministic_probes_and_refuses_unreachable_levels():
    # toy seed 1 led the local solver to near-deterministic kernels where relative value
    # iteration does not converge (it raised after 100000 sweeps); the rate is now finite
    rng = np.random.default_rng([1, 0])
    T = rng.dirichlet(np.ones(2), size=(2, 2))
    pi = 0.5 * rng.dirichlet(np.ones(2), size=2) + 0.25
    r = np.random.default_rng([1, 5]).random((2, 2))
    pi_e = np.random.default_rng([1, 6]).dirichlet(np.ones(2), size=2)
    V = policy_evaluation(T, r, pi=pi_e, gamma=0.9)[0]
    V_max = np.zeros(2)
    for _ in range(2000):
        V_max = (pi_e * (r + 0.9 * V_max.max())).sum(1)
    rate, _ = value_rate(V[0] + 0.8 * (V_max[0] - V[0]), T, pi, r, 0.9, pi_e, 0)
    assert np.isfinite(rate) and rate > 0
    with pytest.raises(RuntimeError, match="rate is \\+inf"):
        value_rate(V_max[0] + 0.1, T, pi, r, 0.9, pi_e, 0)


def test_greedy_policy_refuses_nan_and_one_dimensional_q():
    from neurips26.mdp_types import greedy_policy

    with pytest.raises(ValueError, match="NaN"):
        greedy_policy(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="2-D"):
        greedy_policy(np.array([0.0, 1.0]))
    assert greedy_policy(np.array([[0.0, 1.0], [2.0, 2.0]])).tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_kl_worst_case_reverse_direction_matches_the_primal_and_accepts_one_law():
    import cvxpy as cp

    from neurips26.mdp_types import kl_worst_case

    rng = np.random.default_rng(5)
    for _ in range(6):
        q = rng.dirichlet(np.ones(5))
        v = rng.normal(size=5)
        eps = rng.uniform(0.01, 0.6)
        p = cp.Variable(5, nonneg=True)
        ref = cp.Problem(cp.Minimize(p @ v), [cp.sum(p) == 1, cp.sum(cp.rel_entr(p, q)) <= eps]).solve(
            solver=cp.CLARABEL)
        sig, pw = kl_worst_case(q, v, np.array([eps]), direction="reverse")   # one law (S,)
        assert sig.shape == (1,) and pw.shape == (1, 5)
        assert abs(sig[0] - ref) < 1e-6                                       # interior-point tolerance
        assert np.sum(pw[0] * np.log(pw[0] / q)) <= eps + 1e-6 and abs(pw[0] @ v - sig[0]) < 1e-6
        fwd = kl_worst_case(q, v, np.array([eps]))[0][0]
        assert fwd != pytest.approx(sig[0], abs=1e-6)                         # the two balls differ
    with pytest.raises(ValueError, match="direction"):
        kl_worst_case(q, v, np.array([0.1]), direction="backward")


def test_pessimistic_values_in_either_kl_direction_lie_below_the_plug_in_value():
    from neurips26.mdp_types import pessimistic_values
    from neurips26.mdp_types.pair_types import plug_in_kernel

    N = np.array([[[30, 10], [5, 25]], [[12, 12], [40, 2]]])
    r = np.array([[0.2, 0.9], [0.5, 0.1]])
    pi = np.full((2, 2), 0.5)
    V_hat = policy_evaluation(plug_in_kernel(N)[0], r, pi=pi, gamma=0.9)[0]
    # reverse balls need explicit radii; at eps = 0.05-0.1 the reverse path's golden-section λ (accurate to
    # ~1e-8) made adversary policy iteration stall ("did not converge in 1000 rounds"): λ now solves
    # KL(p_λ‖q) = ε by Brent's method and evaluation converges in 3 rounds, like the forward ball
    eps = np.full((2, 2), 0.05)
    for direction in ("forward", "reverse"):
        res = pessimistic_values(N, r, gamma=0.9, pi_eval=pi, direction=direction, eps=eps)
        assert np.all(res.V <= V_hat + 1e-9) and np.all(res.V >= 0) and res.iterations <= 10
    with pytest.raises(ValueError, match="reverse"):
        pessimistic_values(N, r, gamma=0.9, pi_eval=pi, kind="l1", direction="reverse", eps=eps)


def test_radii_take_a_direction_and_refuse_reverse_balls_without_a_rule():
    """Issue 14, item 5: direction= on the radii. Forward radii are the default and unchanged;
    reverse KL balls have no radius rule with coverage (the plug-in can miss a reachable successor,
    making KL(T||T_hat) infinite), so set_radii and pessimistic_values say so and ask for eps."""
    from neurips26.mdp_types import pessimistic_values, set_radii

    N = np.array([[[30, 10], [5, 25]], [[12, 12], [40, 2]]])
    r = np.array([[0.2, 0.9], [0.5, 0.1]])
    np.testing.assert_array_equal(set_radii(N, 0.05, direction="forward"), set_radii(N, 0.05))
    with pytest.raises(ValueError, match=r"reverse.*infinite.*eps="):
        set_radii(N, 0.05, direction="reverse")
    with pytest.raises(ValueError, match=r"needs eps="):
        pessimistic_values(N, r, gamma=0.9, pi_eval=np.full((2, 2), 0.5), direction="reverse")
    with pytest.raises(ValueError, match="allowed: forward, reverse"):
        set_radii(N, 0.05, direction="backward")


def test_pi_and_gamma_are_keyword_only_in_both_evaluations():
    """Issue 14, item 5: pessimistic_values and policy_evaluation took pi and gamma in opposite
    positional orders; both are keyword-only now, so a swapped call cannot run silently."""
    from neurips26.mdp_types import pessimistic_values

    N = np.array([[[30, 10], [5, 25]], [[12, 12], [40, 2]]])
    T = N / N.sum(axis=2, keepdims=True)
    r = np.array([[0.2, 0.9], [0.5, 0.1]])
    pi = np.full((2, 2), 0.5)
    with pytest.raises(TypeError):
        policy_evaluation(T, r, pi, 0.9)
    with pytest.raises(TypeError):
        pessimistic_values(N, r, 0.9, pi)
    a = policy_evaluation(T, r, gamma=0.9, pi=pi)[0]
    b = policy_evaluation(T, r, pi=pi, gamma=0.9)[0]
    np.testing.assert_array_equal(a, b)
    low = pessimistic_values(N, r, pi_eval=pi, gamma=0.9).V
    assert np.all(low <= a + 1e-9)
