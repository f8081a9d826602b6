"""Universal fixed-rate coding of controlled Markov (state–action) trajectories: the error exponent.

A universal code of rate ``R`` nats per step indexes every pair type with empirical conditional
entropy ``H(Q_{2|1}|Q_1) ≤ R`` (and the paths inside it); a path whose type has larger entropy
is an error. By the type bounds, ``P_err ≈ exp(−m E(R))`` with

    E(R) = min { D(Q ‖ Q_1⊗P) : Q balanced, H(Q_{2|1}|Q_1) ≥ R }.

``E(R) = 0`` for ``R ≤ H(P)`` (the entropy rate; ``Q = μ⊗P`` is feasible) and ``E(R) > 0``,
increasing and convex above it. The program is convex: ``rel_entr(Q, Q_1·P)`` is jointly convex
with ``Q_1`` linear in ``Q`` and the conditional entropy ``−Σ rel_entr(Q, Q_1)`` is concave.
``E(R) = +inf`` above the largest conditional entropy the support of ``P`` allows.

References:
    Davisson, Longo & Sgarro (1981), "The error exponent for the noiseless encoding of finite
    ergodic Markov sources"; Natarajan (1985); Csiszár (1998). Inferred: the abstract names
    "explicit coding error exponents" but not their form.
"""

from __future__ import annotations

import numpy as np

from .pair_types import conditional_entropy, exact_type_distribution


def coding_error_exponent(P: np.ndarray, rates: np.ndarray, solver: str | None = None) -> np.ndarray:
    """``E(R)`` (nats per step) for each rate in ``rates`` by the convex program above.

    Args:
        P: ``(Z, Z)`` pair kernel of an irreducible chain; rates: ``(k,)`` rates ``R >= 0`` (nats).

    Returns:
        ``(k,)`` exponents; ``inf`` where the rate exceeds the largest achievable conditional
        entropy on the support of ``P``.

    Raises:
        ValueError: negative or non-finite rates, rates not 1-D, or ``P`` not square row-stochastic.

    Warns:
        RuntimeWarning: if ``P`` is not irreducible (the exponent's meaning needs ergodicity).
    """
    import warnings

    import cvxpy as cp

    from .large_deviations import _support_program
    from .mdp import is_irreducible, validate_pair_kernel

    P = validate_pair_kernel(P)
    rates = np.atleast_1d(np.asarray(rates, dtype=float))
    if rates.ndim != 1:
        raise ValueError(f"rates must be a 1-D array of rates; got shape {rates.shape}")
    if np.any(~np.isfinite(rates)) or np.any(rates < 0):
        raise ValueError(f"rates must be finite and >= 0; got {rates}")
    if not is_irreducible(P):
        warnings.warn("P is not irreducible: E(R) is still the value of the program (minimum over balanced "
                      "Q on the support of P, i.e. over every recurrent class), but the entropy rate is not "
                      "unique and P_err ≈ exp(−m E(R)) needs an ergodic source", RuntimeWarning, stacklevel=2)
    q, q1, D, cons, rows, _ = _support_program(P)  # the rate function's program on the support of P
    H = -cp.sum(cp.rel_entr(q, q1[rows]))
    R = cp.Parameter(nonneg=True)
    prob = cp.Problem(cp.Minimize(D), [*cons, H >= R])
    out = np.empty(len(rates))
    for i, rate in enumerate(rates):
        R.value = float(rate)
        try:
            prob.solve(solver=solver or cp.CLARABEL)
        except cp.SolverError:
            prob.solve(solver=cp.SCS, eps=1e-9, max_iters=100_000)
        if prob.status in ("infeasible", "infeasible_inaccurate"):
            out[i] = np.inf
        else:
            out[i] = max(float(prob.value), 0.0)
    return out


def coding_error_probability_exact(P: np.ndarray, mu0: np.ndarray, n: int, rate: float) -> float:
    """Exact error probability of the universal type code at rate ``rate`` for paths of length ``n``.

    ``P_err = P(H(Q_{2|1}|Q_1) > rate)`` for the open pair type of ``Z_1..Z_n`` (``m = n − 1``),
    by enumerating all paths (small cases only; see :func:`exact_type_distribution`).

    Raises:
        ValueError: as :func:`exact_type_distribution`.
    """
    counts, log_prob = exact_type_distribution(P, mu0, n)
    Q = counts.astype(float)
    Q /= Q.sum(axis=(1, 2), keepdims=True)
    q1 = Q.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.sum(np.where(Q > 0, Q * np.log(Q / q1), 0.0), axis=(1, 2))
    return float(np.exp(log_prob[H > rate + 1e-12]).sum())


__all__ = ["coding_error_exponent", "coding_error_probability_exact", "conditional_entropy"]
