"""The batched (numpy) masked staircases, candidate masks, slices and Hilbert grid snapping equal the
per-simplex reference code they replaced, bitwise.

Bugs caught: a batch padded at the wrong end of a staircase (pads entering the running minimum), a
segment boundary missed by the tie-group / strict-decrease compression (a grade dropped or one kept
across two simplices), a candidate mask differing from the per-simplex ``np.unique`` union, squared
distances whose square root is not cdist's value, and padding rows that are not +inf after snapping.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist

from neurips26.flood_bifiltration import bifiltration as B
from neurips26.flood_bifiltration.delaunay import delaunay_complex, minimum_enclosing_balls, simplex_samples
from neurips26.flood_bifiltration.features import hilbert_signed_measure, snap_up


def _reference_masked(x, f, L, ppe):
    """The former per-simplex masked construction (np.unique per simplex, cdist per simplex, _compress)."""
    bif = B.sublevel_flood_bifiltration(x, f, L, points_per_edge=ppe, exact=True)  # for landmarks and vertices
    vertices = x[bif.landmark_indices]
    cx = delaunay_complex(vertices)
    order = np.argsort(f, kind="stable")
    xs, fs = x[order], f[order]
    vrows, _ = B._dense_grades(xs, fs, vertices[:, None, :], 2**28, {})
    top = cx.simplices[cx.dimension]
    centres, radii = minimum_enclosing_balls(vertices, top)
    balls = cKDTree(xs).query_ball_point(centres, math.sqrt(2.0) * radii)
    balls = [np.unique(np.concatenate([np.asarray(b, dtype=np.int64)] + [vrows[v] for v in cell]))
             for b, cell in zip(balls, top)]
    grades = [bif.grades[0]]
    for k in range(1, cx.dimension + 1):
        samples = simplex_samples(vertices, cx.simplices[k], ppe)
        out = []
        for i, (simp, cof) in enumerate(zip(cx.simplices[k], cx.cofacets[k])):
            rws = np.unique(np.concatenate([balls[c] for c in cof] + [vrows[v] for v in simp]))
            D = cdist(xs[rws], samples[i])
            np.minimum.accumulate(D, axis=0, out=D)
            out.append(B._compress(D.max(axis=1), fs[rws])[1])
        grades.append(out)
    return grades


@pytest.mark.parametrize("d,n,L,ppe,ties,limit_mb", [(2, 800, 24, 8, False, 256.0), (2, 800, 24, 8, True, 256.0),
                                                     (3, 600, 20, 5, True, 256.0), (2, 800, 24, 8, True, 0.02)])
def test_batched_masked_grades_equal_the_per_simplex_reference(d, n, L, ppe, ties, limit_mb):
    rng = np.random.default_rng(d * 10 + ties)
    x = rng.normal(size=(n, d))
    f = rng.uniform(size=n)
    if ties:
        f = np.round(f * 7) / 7
    ref = _reference_masked(x, f, L, ppe)
    fast = B.sublevel_flood_bifiltration(x, f, L, points_per_edge=ppe, memory_limit_mb=limit_mb)
    if limit_mb < 1:   # several padded batches and the row-blocked path for the largest masks
        assert fast.stats["masked_chunked_simplices"] > 0
    for gr, gf in zip(ref, fast.grades):
        assert len(gr) == len(gf)
        for a, b in zip(gr, gf):
            assert a.shape == b.shape and np.array_equal(a, b)


def test_compress_segments_equals_compress_per_segment():
    rng = np.random.default_rng(3)
    lens = np.array([0, 1, 5, 0, 9, 3, 1, 12])
    ptr = np.concatenate([[0], np.cumsum(lens)])
    r_parts, t_parts = [], []
    for m in lens:
        r_parts.append(np.sort(rng.integers(0, 4, m).astype(float))[::-1])
        t_parts.append(np.sort(rng.integers(0, 4, m).astype(float)))
    r, t = np.concatenate(r_parts), np.concatenate(t_parts)
    want = np.concatenate([B._compress(rp, tp)[0] + p for rp, tp, p in zip(r_parts, t_parts, ptr[:-1])])
    np.testing.assert_array_equal(B._compress_segments(r, t, ptr), want)


def _reference_slice(bif, t):
    out = []
    for gs in bif.grades:
        vals = np.full(len(gs), np.inf)
        for i, g in enumerate(gs):
            ok = g[:, 1] <= t
            if ok.any():
                vals[i] = g[ok, 0].min()
        out.append(vals)
    return out


def _reference_hilbert(bif, rg, tg, degrees):
    import multipers as mp

    snapped = copy.copy(bif)
    snapped.grades = [[np.stack([snap_up(g[:, 0], rg), snap_up(g[:, 1], tg)], axis=1) if len(g) else g
                       for g in gs] for gs in bif.grades]
    for gs in snapped.grades:
        for g in gs:
            g[~np.isfinite(g).all(axis=1)] = np.inf
    st = mp.SimplexTreeMulti(num_parameters=2, kcritical=True)
    for k, simp in enumerate(snapped.simplices):
        gs = snapped.grades[k]
        F = np.full((len(gs), max(len(g) for g in gs), 2), np.inf)
        for i, g in enumerate(gs):
            F[i, :len(g)] = g
        st.insert_batch(np.ascontiguousarray(simp.T, dtype=np.int32), F)
    out = mp.signed_measure(st.grid_squeeze(filtration_grid=[rg, tg]), degrees=list(degrees), invariant="hilbert")
    return [(np.asarray(p, dtype=np.float64), np.asarray(w)) for p, w in out]


def test_slices_and_hilbert_measures_equal_the_per_simplex_reference():
    rng = np.random.default_rng(9)
    th = rng.uniform(0, 2 * np.pi, 300)
    x = np.concatenate([np.stack([np.cos(th), np.sin(th)], 1), rng.uniform(-1.5, 1.5, (200, 2))])
    f = rng.uniform(size=len(x))
    bif = B.sublevel_flood_bifiltration(x, f, 32, points_per_edge=8)
    for t in (-1.0, 0.2, 0.5, math.inf):
        for a, b in zip(_reference_slice(bif, t), B.slice_values(bif, t)):
            np.testing.assert_array_equal(a, b)
    r_max = float(max(v.max() for v in B.slice_values(bif, math.inf)))
    rg, tg = np.linspace(0, 0.8 * r_max, 24), np.linspace(0, 0.9, 24)  # some grades fall off the grid
    for (pa, wa), (pb, wb) in zip(_reference_hilbert(bif, rg, tg, (0, 1)), hilbert_signed_measure(bif, rg, tg)):
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(wa, wb)


@pytest.mark.parametrize("d,ties,limit_mb", [(2, False, 256.0), (3, True, 256.0), (2, True, 0.05)])
def test_exact_grades_equal_cdist_per_simplex(d, ties, limit_mb):
    """Exact mode takes minima and maxima on squared distances (cdist "sqeuclidean", one reused block
    buffer) and the square root of the staircase values only: its grades must be bitwise those of
    Euclidean cdist per simplex over all sorted points (catches a sqrt not commuting with the
    staircase, a stale buffer row in the last short block, or a running minimum in mixed units)."""
    rng = np.random.default_rng(20 + d)
    x = rng.normal(size=(1500, d))
    f = rng.uniform(size=1500)
    if ties:
        f = np.round(f * 9) / 9
    bif = B.sublevel_flood_bifiltration(x, f, 16, points_per_edge=5, exact=True, memory_limit_mb=limit_mb)
    order = np.argsort(f, kind="stable")
    xs, fs = x[order], f[order]
    vertices = x[bif.landmark_indices]
    for k, simp in enumerate(bif.simplices):
        samples = simplex_samples(vertices, simp, 5) if k else vertices[:, None, :]
        for i, g in enumerate(bif.grades[k]):
            D = cdist(xs, samples[i])
            np.minimum.accumulate(D, axis=0, out=D)
            want = B._compress(D.max(axis=1), fs)[1]
            assert want.shape == g.shape and np.array_equal(want, g)
