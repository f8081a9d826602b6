"""Structural invariants of a sublevel Flood bifiltration, as measurable quantities.

Each returns a number so that a claim or a test can state its tolerance. Source: inferred
(properties derived from the definition, not the paper's text).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .bifiltration import SublevelFlood


def staircase_at(grades: np.ndarray, t: np.ndarray) -> np.ndarray:
    """ρ_σ(t) from a simplex's (g, 2) grades: min{r_g : t_g ≤ t}, +inf before the first grade.

    Args:
        grades: (g, 2) rows (r, t) with t increasing and r decreasing.
        t: (m,) thresholds.

    Returns:
        (m,) float64 values.
    """
    t = np.asarray(t, dtype=np.float64)
    idx = np.searchsorted(grades[:, 1], t, side="right") - 1
    out = np.full(t.shape, np.inf)
    ok = idx >= 0
    out[ok] = grades[idx[ok], 0]
    return out


def monotone_violations(bif: SublevelFlood) -> int:
    """Number of simplices whose grades are not (t strictly increasing, r strictly decreasing)."""
    bad = 0
    for gs in bif.grades:
        for g in gs:
            if len(g) == 0 or (len(g) > 1 and not (np.all(np.diff(g[:, 1]) > 0) and np.all(np.diff(g[:, 0]) < 0))):
                bad += 1
    return bad


def max_face_excess(bif: SublevelFlood) -> float:
    """max over facets τ ⊂ σ and thresholds t of ρ_τ(t) − ρ_σ(t) (≤ 0 when faces are dominated).

    Evaluated at every grade threshold of τ and σ; +inf − +inf counts as 0.
    """
    index = [{tuple(row): i for i, row in enumerate(s)} for s in bif.simplices]
    worst = -np.inf
    for k in range(1, len(bif.simplices)):
        for row, g in zip(bif.simplices[k], bif.grades[k]):
            for face in combinations(tuple(row), k):
                gf = bif.grades[k - 1][index[k - 1][face]]
                ts = np.union1d(g[:, 1], gf[:, 1])
                a, b = staircase_at(gf, ts), staircase_at(g, ts)
                fin = np.isfinite(a) & np.isfinite(b)
                if np.any(np.isinf(a) & np.isfinite(b)):
                    return float("inf")
                if fin.any():
                    worst = max(worst, float(np.max(a[fin] - b[fin])))
    return worst


def max_critical_degree(bif: SublevelFlood) -> int:
    """Largest number of grades of any simplex (1 means the bifiltration is 1-critical)."""
    return int(max(len(g) for gs in bif.grades for g in gs))


def staircase_difference(a: SublevelFlood, b: SublevelFlood) -> tuple[float, float]:
    """(min, max) over simplices and thresholds of ρ^a_σ(t) − ρ^b_σ(t) for two bifiltrations on
    the same complex (e.g. masked − exact). Raises ValueError if the complexes differ."""
    lo, hi = np.inf, -np.inf
    for k, (sa, sb) in enumerate(zip(a.simplices, b.simplices)):
        if sa.shape != sb.shape or not np.array_equal(sa, sb):
            raise ValueError(f"the two bifiltrations have different {k}-simplices")
        for ga, gb in zip(a.grades[k], b.grades[k]):
            ts = np.union1d(ga[:, 1], gb[:, 1])
            va, vb = staircase_at(ga, ts), staircase_at(gb, ts)
            if np.any(np.isinf(va) != np.isinf(vb)):
                d = np.where(np.isinf(va) & ~np.isinf(vb), np.inf, -np.inf)
                lo, hi = min(lo, float(d.min())), max(hi, float(d.max()))
            fin = np.isfinite(va) & np.isfinite(vb)
            if fin.any():
                diff = va[fin] - vb[fin]
                lo, hi = min(lo, float(diff.min())), max(hi, float(diff.max()))
    return lo, hi


def grades_as_set(bif: SublevelFlood, decimals: int = 12) -> dict:
    """{sorted landmark point coordinates of σ: rounded grades} — a representation independent
    of the order of the input points and of vertex numbering (for order-invariance checks)."""
    coords = bif.points[bif.landmark_indices]
    out = {}
    for simplex, g in bif.iter_simplices():
        key = tuple(sorted(tuple(np.round(coords[v], decimals)) for v in simplex))
        out[key] = tuple(map(tuple, np.round(g, decimals)))
    return out


def masked_exactness_violations(masked: SublevelFlood, exact: SublevelFlood,
                                near_radius: float = float(np.sqrt(2.0))) -> tuple[int, int]:
    """Count (thresholds checked, mismatches) where the exact value satisfies
    ρ_σ(t) ≤ (near_radius − 1)·R_σ (R_σ the largest MEB radius over σ's top cofaces) but the
    masked value differs from it (the derived equality condition)."""
    from .delaunay import delaunay_complex, minimum_enclosing_balls

    vertices = exact.points[exact.landmark_indices]
    cx = delaunay_complex(vertices)
    _, radii = minimum_enclosing_balls(vertices, cx.simplices[-1])
    checked = bad = 0
    for k in range(1, len(cx.simplices)):
        for i, cof in enumerate(cx.cofacets[k]):
            R = radii[cof].max()
            ge, gm = exact.grades[k][i], masked.grades[k][i]
            ts = np.union1d(ge[:, 1], gm[:, 1])
            ve, vm = staircase_at(ge, ts), staircase_at(gm, ts)
            sel = np.isfinite(ve) & (ve <= (near_radius - 1.0) * R)
            checked += int(sel.sum())
            bad += int(np.sum(vm[sel] != ve[sel]))
    return checked, bad


def interleaving_excess(a: SublevelFlood, b: SublevelFlood, eps: float) -> float:
    """max over simplices, directions and thresholds t of ρ^b_σ(t + ε) − ρ^a_σ(t) (and a↔b).

    If ‖f_a − f_b‖∞ ≤ ε on the same points and complex, X_{f_a ≤ t} ⊆ X_{f_b ≤ t+ε}, so the two
    bifiltrations are ε-interleaved along t and the excess is ≤ 0 (inferred stability statement).
    Checking at the step thresholds of the right-hand staircase suffices (the left one is
    non-increasing in t). Raises ValueError if the complexes differ.
    """
    worst = -np.inf
    for p, q in ((a, b), (b, a)):
        for k, (sp, sq) in enumerate(zip(p.simplices, q.simplices)):
            if not np.array_equal(sp, sq):
                raise ValueError(f"the two bifiltrations have different {k}-simplices")
            for gp, gq in zip(p.grades[k], q.grades[k]):
                if len(gp):  # +inf (q absent at t + ε while p present at t) propagates as a violation
                    worst = max(worst, float(np.max(staircase_at(gq, gp[:, 1] + eps) - gp[:, 0])))
    return worst
