"""Deciding functional equivalence ``f_θ = f_θ′`` on a domain, with evidence on every answer.

This is **our** decision procedure (the paper states a polynomial-time algorithm in its abstract,
but its algorithm was not readable). Every answer carries evidence:

* :class:`NotEquivalent` carries a witness ``x`` and the *exact* rational values ``f_θ(x)``,
  ``f_θ′(x)`` (:func:`~neurips26.relu_symmetries.network.exact_forward`); it is returned only when
  the exact gap exceeds the tolerance, so float rounding never makes a witness.
* :class:`Equivalent` carries a proof: ``"orbit"`` (the permutation and positive scalings that map
  the reduced θ onto the reduced θ′, with the residual), ``"segment"`` (both functions depend on
  one linear coordinate; the sup of ``|f − f′|`` over the box equals its max over the union of
  both breakpoint sets on one segment), ``"cells"`` (on every cell of the common activation
  refinement both networks are affine with equal coefficients) or ``"points"`` (a finite domain,
  every point evaluated).
* :class:`Undecided` carries the reason (near-degenerate arrangement, cell budget exceeded).
  Non-generic inputs are never guessed.

Steps (on a box): (1) refute: evaluate at random points; a large gap is checked exactly;
(2) reduce: drop units provably dead on the box or with zero outgoing weights; (3) canonicalise
and match the permutation/scaling orbit in ``O(n log n)`` per layer (sort by a generic projection
of the unit-normalised incoming weights, scales pushed forward); (4) if every first-layer
hyperplane is parallel (width-1 first layer), compare exactly along one segment in
``O(n log n)``; (5) otherwise split the box into activation cells (LPs; polynomial in the widths
for fixed ``n0``) and compare affine pieces. Tolerances are relative to ``1 + max |f|``.

References:
    Grillo & Montúfar (2026), Most ReLU networks admit identifiable parameters (generic
    identifiability up to permutation and scaling for widths ≥ 2; its first page).
    Katz et al. (2017), Reluplex (worst-case hardness of ReLU verification: the polynomial path
    needs its genericity checks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .network import Box, ReluNet3, exact_forward
from .regions import CellBudgetExceeded, activation_cells, affine_on_cell
from .symmetries import unit_bounds

__all__ = ["Equivalent", "NotEquivalent", "Undecided", "equivalent", "reduce_network", "match_orbit",
           "OrbitMatch", "segment_breakpoints", "verify_witness"]


@dataclass
class Equivalent:
    """``f_θ = f_θ′`` on the domain. ``proof`` ∈ {orbit, segment, cells, points}; ``evidence``
    holds its data (permutations/scales and residual, points checked, max discrepancy)."""

    proof: str
    evidence: dict = field(default_factory=dict)
    decided = True
    is_equivalent = True


@dataclass
class NotEquivalent:
    """``f_θ(x) ≠ f_θ′(x)`` at the witness ``x`` (float64 ``[n0]``), shown in exact arithmetic:
    ``value`` and ``other_value`` are the exact rationals, ``gap = max_k |value_k − other_k|``."""

    witness: np.ndarray
    value: list
    other_value: list
    gap: float
    evidence: dict = field(default_factory=dict)
    decided = True
    is_equivalent = False


@dataclass
class Undecided:
    """No certificate either way; ``reason`` says why (never a guess)."""

    reason: str
    evidence: dict = field(default_factory=dict)
    decided = False
    is_equivalent = None


# --------------------------------------------------------------------------- helpers

def verify_witness(net: ReluNet3, other: ReluNet3, x, tol: float) -> NotEquivalent | None:
    """Exact check of a candidate witness: a :class:`NotEquivalent` when the exact gap > ``tol``."""
    x = np.asarray(x, dtype=np.float64)
    fa, fb = exact_forward(net, x), exact_forward(other, x)
    gap = max(abs(a - b) for a, b in zip(fa, fb))
    if gap > Fraction(tol):
        return NotEquivalent(x.copy(), fa, fb, float(gap))
    return None


def reduce_network(net: ReluNet3, box: Box) -> tuple[ReluNet3, dict]:
    """Drop units that cannot affect f on ``box``: provably dead (pre-activation ≤ 0 on the whole
    box: exact bound for layer 1, interval bound for layer 2) or with all outgoing weights zero.
    Repeats until nothing changes. Returns the reduced network and ``{"kept1", "kept2"}`` indices.

    Source: inferred (reduction before canonicalisation; networks of different widths can be
    equivalent through extra dead units).
    """
    keep1 = np.arange(net.architecture[1])
    keep2 = np.arange(net.architecture[2])
    cur = net
    while True:
        lo1, hi1, lo2, hi2 = unit_bounds(cur, box)
        k1 = (hi1 > 0) & np.any(cur.W2 != 0, axis=0)
        k2 = (hi2 > 0) & np.any(cur.W3 != 0, axis=0)
        if k1.all() and k2.all():
            return cur, {"kept1": keep1.tolist(), "kept2": keep2.tolist()}
        cur = ReluNet3(cur.W1[k1], cur.b1[k1], cur.W2[np.ix_(k2, k1)], cur.b2[k2], cur.W3[:, k2], cur.b3)
        keep1, keep2 = keep1[k1], keep2[k2]


@dataclass
class OrbitMatch:
    """``θ′ = g·θ`` for ``g = (perm1, scales1, perm2, scales2)``: unit ``k`` of θ′ is unit
    ``perm[k]`` of θ scaled by ``scales[k]``; ``residual`` is the largest normalised mismatch."""

    perm1: list
    scales1: list
    perm2: list
    scales2: list
    residual: float


def _generic_key(n: int) -> np.ndarray:
    # a fixed generic direction: ties of projections are then non-generic coincidences
    return np.random.default_rng(20260518).normal(size=n)


def _match_rows(A: np.ndarray, B: np.ndarray, tol: float) -> np.ndarray | None:
    """Permutation p with ``B[k] ≈ A[p[k]]`` (rows), or None. Sort by a generic projection
    (O(n log n)); near-tied keys fall back to optimal assignment."""
    if A.shape != B.shape:
        return None
    if len(A) == 0:
        return np.zeros(0, dtype=int)
    g = _generic_key(A.shape[1])
    ka, kb = A @ g, B @ g
    ia, ib = np.argsort(ka, kind="stable"), np.argsort(kb, kind="stable")
    ties = len(A) > 1 and (np.min(np.diff(ka[ia])) <= 10 * tol or np.min(np.diff(kb[ib])) <= 10 * tol)
    if not ties:
        p = np.empty(len(A), dtype=int)
        p[ib] = ia
    else:
        from scipy.optimize import linear_sum_assignment

        cost = np.abs(B[:, None, :] - A[None, :, :]).max(-1)
        rows, cols = linear_sum_assignment(cost)
        p = cols[np.argsort(rows)]
    return p if np.max(np.abs(B - A[p])) <= tol else None


def _normalised_rows(W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    R = np.c_[W, b]
    nrm = np.linalg.norm(R, axis=1)
    if np.any(nrm == 0):
        return None
    return R / nrm[:, None], nrm


def match_orbit(net: ReluNet3, other: ReluNet3, tol: float = 1e-9) -> OrbitMatch | None:
    """Find ``g`` in the permutation × positive-scaling group with ``other ≈ g·net``, or ``None``.

    Canonicalisation: unit-normalise each first-layer row ``(w_i, b_i)`` and push its norm into
    ``W2[:, i]``; then the same for the second layer into ``W3``. Two networks lie on one orbit iff
    the normalised layers agree up to permutations. Matching entries must agree to ``tol``
    (relative to the layer's largest entry).

    Source: the group is from the first page; the canonical form is inferred (standard).
    """
    if net.architecture != other.architecture:
        return None
    na, nb = _normalised_rows(net.W1, net.b1), _normalised_rows(other.W1, other.b1)
    if na is None or nb is None:
        return None
    (Ra, la), (Rb, lb) = na, nb
    p1 = _match_rows(Ra, Rb, tol)
    if p1 is None:
        return None
    W2a, W2b = net.W2[:, p1] * la[p1][None, :], other.W2 * lb[None, :]
    ma, mb = _normalised_rows(W2a, net.b2), _normalised_rows(W2b, other.b2)
    if ma is None or mb is None:
        return None
    (Qa, mua), (Qb, mub) = ma, mb
    p2 = _match_rows(Qa, Qb, tol)
    if p2 is None:
        return None
    W3a, W3b = net.W3[:, p2] * mua[p2][None, :], other.W3 * mub[None, :]
    scale3 = max(1.0, float(np.max(np.abs(W3b), initial=0.0)), float(np.max(np.abs(net.b3))))
    res3 = max(float(np.max(np.abs(W3a - W3b), initial=0.0)), float(np.max(np.abs(net.b3 - other.b3)))) / scale3
    if res3 > tol:
        return None
    resid = max(float(np.max(np.abs(Rb - Ra[p1]), initial=0.0)), float(np.max(np.abs(Qb - Qa[p2]), initial=0.0)),
                res3)
    return OrbitMatch(p1.tolist(), (lb / la[p1]).tolist(), p2.tolist(), (mub / mua[p2]).tolist(), resid)


def segment_breakpoints(net: ReluNet3, x0, x1) -> np.ndarray:
    """Parameters ``τ ∈ (0, 1)`` where ``f`` restricted to ``x(τ) = x0 + τ (x1 − x0)`` may bend:
    zeros of the first-layer pre-activations, then, inside each first-layer piece (where the
    second-layer pre-activations are affine in τ), their zeros. Sorted, ``O(n log n + n1 n2)``.

    Source: inferred (piecewise linearity along a line).
    """
    x0, x1 = np.asarray(x0, float), np.asarray(x1, float)
    a = net.W1 @ x0 + net.b1
    s = net.W1 @ (x1 - x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = -a / s
    t1 = np.unique(t1[(s != 0) & (t1 > 0) & (t1 < 1)])
    knots = np.r_[0.0, t1, 1.0]
    out = [t1]
    for lo, hi in zip(knots[:-1], knots[1:]):
        D1 = (a + s * (0.5 * (lo + hi))) > 0
        h_lo, h_hi = D1 * (a + s * lo), D1 * (a + s * hi)
        z_lo, z_hi = net.W2 @ h_lo + net.b2, net.W2 @ h_hi + net.b2
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = z_lo / (z_lo - z_hi)
        ok = (z_lo * z_hi < 0) & np.isfinite(frac)
        out.append(lo + frac[ok] * (hi - lo))
    t = np.concatenate(out)
    return np.unique(t[(t > 0) & (t < 1)])


def _parallel_direction(rows: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray | None, float]:
    """A unit direction u with every row parallel to it (max sine ≤ tol), else None."""
    nz = rows[np.linalg.norm(rows, axis=1) > 0]
    if len(nz) == 0:
        return None, 0.0
    u = nz[0] / np.linalg.norm(nz[0])
    res = nz - np.outer(nz @ u, u)
    sine = float(np.max(np.linalg.norm(res, axis=1) / np.linalg.norm(nz, axis=1)))
    return (u if sine <= tol else None), sine


# --------------------------------------------------------------------------- the decision

def _validate_pair(net: ReluNet3, other: ReluNet3) -> None:
    if not isinstance(net, ReluNet3) or not isinstance(other, ReluNet3):
        raise TypeError(f"equivalent() compares two ReluNet3, got {type(net).__name__} and {type(other).__name__}"
                        " (convert torch models with from_sequential)")
    a, b = net.architecture, other.architecture
    if a[0] != b[0] or a[3] != b[3]:
        raise ValueError(f"architectures {a} and {b}: input and output widths must agree to compare functions")


def equivalent(net: ReluNet3, other: ReluNet3, domain, *, rtol: float = 1e-9, n_probe: int = 256,
               seed: int = 0, max_cells: int = 5000, eps: float = 1e-9):
    """Decide ``f_net = f_other`` on ``domain`` (a :class:`Box` or a finite point set ``[N, n0]``).

    Args:
        net, other: networks with equal input and output widths (hidden widths may differ).
        domain: ``Box`` or an array of points.
        rtol: tolerance relative to ``1 + max |f|`` on the probe points (float rounding of scaled
            parameters is ~1e-15; anything beyond ``rtol`` is a real difference).
        n_probe: random points for the refutation step.
        seed: seed of the probe points (the answer is deterministic given it).
        max_cells, eps: budget and sliver radius of the cell step.

    Returns:
        :class:`Equivalent`, :class:`NotEquivalent` or :class:`Undecided`.

    Raises:
        TypeError: not ReluNet3 instances.
        ValueError: mismatched input/output widths, a domain of the wrong dimension, non-finite
            domain points, ``rtol`` not in (0, 1).

    Source: ours (see the module docstring); the paper's abstract states that a polynomial-time
    algorithm exists.
    """
    _validate_pair(net, other)
    if not 0 < rtol < 1:
        raise ValueError(f"rtol={rtol}; allowed: 0 < rtol < 1")
    rng = np.random.default_rng(seed)
    if not isinstance(domain, Box):
        try:
            np.asarray(domain, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"domain={domain!r:.60}: allowed: a Box or an array of points [N, n0]") from None
        X = net._inputs(domain)
        fa, fb = net(X), other(X)
        tol = rtol * (1.0 + float(max(np.max(np.abs(fa)), np.max(np.abs(fb)))))
        diff = np.max(np.abs(fa - fb), axis=1)
        for i in np.argsort(-diff)[:3]:
            if diff[i] > tol:
                w = verify_witness(net, other, X[i], tol)
                if w is not None:
                    w.evidence = {"step": "points", "n_points": len(X)}
                    return w
        return Equivalent("points", {"n_points": len(X), "max_abs_diff": float(diff.max()), "tol": tol})
    domain.check(net)
    # (1) refute on random probes
    P = np.vstack([domain.sample(n_probe, rng), domain.center[None, :]])
    fa, fb = net(P), other(P)
    tol = rtol * (1.0 + float(max(np.max(np.abs(fa)), np.max(np.abs(fb)))))
    diff = np.max(np.abs(fa - fb), axis=1)
    i = int(np.argmax(diff))
    if diff[i] > tol:
        w = verify_witness(net, other, P[i], tol)
        if w is not None:
            w.evidence = {"step": "random probe", "n_probe": n_probe, "tol": tol}
            return w
    # (2) reduce
    ra, ka = reduce_network(net, domain)
    rb, kb = reduce_network(other, domain)
    ev = {"tol": tol, "reduced_architectures": [ra.architecture, rb.architecture], "kept": [ka, kb]}
    if ra.architecture[1] == 0 or ra.architecture[2] == 0 or rb.architecture[1] == 0 or rb.architecture[2] == 0:
        pass  # constant networks are handled by the segment step below
    # (3) orbit
    m = match_orbit(ra, rb, tol=rtol)
    if m is not None:
        return Equivalent("orbit", {**ev, "perm1": m.perm1, "scales1": m.scales1, "perm2": m.perm2,
                                    "scales2": m.scales2, "residual": m.residual})
    # (4) one linear coordinate: compare along one segment exactly at all breakpoints
    u, sine = _parallel_direction(np.vstack([ra.W1, rb.W1]))
    if u is not None or (ra.architecture[1] == 0 and rb.architecture[1] == 0):
        if u is None:
            u = np.eye(domain.dim)[0]
        x0 = domain.center - np.sign(u) * domain.half_width
        x1 = domain.center + np.sign(u) * domain.half_width
        taus = np.unique(np.r_[0.0, 1.0, segment_breakpoints(ra, x0, x1), segment_breakpoints(rb, x0, x1)])
        Xs = x0 + taus[:, None] * (x1 - x0)
        d = np.max(np.abs(ra(Xs) - rb(Xs)), axis=1)
        ev.update(n_breakpoints=int(len(taus)), max_sine=sine, max_abs_diff=float(d.max()))
        if d.max() <= tol:
            return Equivalent("segment", ev)
        for j in np.argsort(-d)[:3]:
            w = verify_witness(net, other, Xs[j], tol)
            if w is not None:
                w.evidence = {**ev, "step": "segment"}
                return w
        return Undecided(f"segment comparison found a gap {d.max():.3g} > tol that exact evaluation at the "
                         "breakpoints does not confirm (breakpoints within rounding of each other)", ev)
    # (5) activation cells
    st: dict = {}
    try:
        cells = activation_cells(ra, domain, (rb,), eps=eps * float(np.max(domain.half_width)),
                                 max_cells=max_cells, stats=st)
    except CellBudgetExceeded as e:
        return Undecided(f"not on one orbit, first layer not one-dimensional, and {e} (input dimension "
                         f"{domain.dim}: cell counts grow like width^n0)", ev)
    ev.update(n_cells=len(cells), lps=st["lps"], slivers=st["slivers"])
    worst, worst_cell = 0.0, None
    for cell in cells:
        Ja, oa = affine_on_cell(ra, *cell.patterns[0])
        Jb, ob = affine_on_cell(rb, *cell.patterns[1])
        dJ, do = Ja - Jb, oa - ob
        bound = float(np.max(np.abs(do + dJ @ domain.center) + np.abs(dJ) @ domain.half_width))
        if bound > worst:
            worst, worst_cell = bound, (cell, dJ, do)
    ev["max_coefficient_bound"] = worst
    if worst <= tol and st["slivers"] == 0:
        return Equivalent("cells", ev)
    if worst > tol:
        from scipy.optimize import linprog

        cell, dJ, do = worst_cell
        k = int(np.argmax(np.abs(dJ).sum(1) + np.abs(do)))
        cands = [cell.center]
        for sgn in (1.0, -1.0):
            res = linprog(-sgn * dJ[k], A_ub=cell.A, b_ub=cell.b, bounds=[(None, None)] * domain.dim,
                          method="highs")
            if res.status == 0:
                cands.append(0.9 * res.x + 0.1 * cell.center)  # pulled inside, off the kinks
        for x in cands:
            w = verify_witness(net, other, np.clip(x, domain.low, domain.high), tol)
            if w is not None:
                w.evidence = {**ev, "step": "cells"}
                return w
        return Undecided(f"affine pieces differ by up to {worst:.3g} > tol on a cell but no exact witness was "
                         "confirmed (near-degenerate cell)", ev)
    return Undecided(f"{st['slivers']} sliver cells thinner than eps (min radius {st['min_sliver']:.3g}): "
                     "near-degenerate arrangement (coincident or nearly coincident kinks)", ev)
