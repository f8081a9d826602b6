"""Tests of the sublevel Flood bifiltration: landmarks, Delaunay grids, grades and invariants.

The key oracle is a brute-force evaluation of the definition SLF_{r,t} = Flood_r(X_{f≤t}, L):
for every threshold t = f(x) the single-parameter Flood values of X_{f ≤ t} are computed with
a k-d tree (no staircase, no cumulative min) and compared with the grades.
"""

from __future__ import annotations

import math
import warnings
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from neurips26.flood_bifiltration import (
    barycentric_grid,
    delaunay_complex,
    farthest_point_sampling,
    flood_complex_values,
    minimum_enclosing_balls,
    slice_values,
    sublevel_flood_bifiltration,
)
from neurips26.flood_bifiltration.delaunay import simplex_samples
from neurips26.flood_bifiltration.invariants import (
    grades_as_set,
    masked_exactness_violations,
    max_critical_degree,
    max_face_excess,
    monotone_violations,
    staircase_at,
    staircase_difference,
)


def _cloud(n, d, seed):
    rng = np.random.default_rng(seed)
    half = n // 2
    v = rng.normal(size=(half, d))
    sig = v / np.linalg.norm(v, axis=1, keepdims=True) + 0.05 * rng.normal(size=(half, d))
    x = np.vstack([sig, rng.uniform(-1.5, 1.5, (n - half, d))])
    f = rng.uniform(size=n)
    return x, f


def _brute_force_staircases(x, f, lm, ppe):
    """ρ_σ(t) for every distinct t = f(x), straight from the definition (k-d tree per threshold)."""
    vertices = x[lm]
    cx = delaunay_complex(vertices)
    samples = [vertices[:, None, :]] + [simplex_samples(vertices, s, ppe) for s in cx.simplices[1:]]
    ts = np.unique(f)
    out = [np.empty((len(s), len(ts))) for s in cx.simplices]
    for j, t in enumerate(ts):
        tree = cKDTree(x[f <= t])
        for k, smp in enumerate(samples):
            dist, _ = tree.query(smp.reshape(-1, x.shape[1]))
            out[k][:, j] = dist.reshape(len(smp), -1).max(axis=1)
    return ts, out


@pytest.mark.parametrize("d,n,L,ppe", [(2, 150, 12, 5), (3, 90, 9, 3)])
def test_exact_grades_match_brute_force_definition(d, n, L, ppe):
    x, f = _cloud(n, d, seed=d)
    bif = sublevel_flood_bifiltration(x, f, L, points_per_edge=ppe, exact=True)
    ts, ref = _brute_force_staircases(x, f, bif.landmark_indices, ppe)
    for k, gs in enumerate(bif.grades):
        for i, g in enumerate(gs):
            # identical arithmetic up to the order of float min/max: 1e-12 covers cdist vs k-d tree rounding
            np.testing.assert_allclose(staircase_at(g, ts), ref[k][i], rtol=0, atol=1e-12)


def test_masked_is_upper_bound_and_exact_near_the_cell_centre():
    x, f = _cloud(1200, 2, seed=5)
    ex = sublevel_flood_bifiltration(x, f, 30, points_per_edge=8, exact=True)
    ma = sublevel_flood_bifiltration(x, f, 30, points_per_edge=8, exact=False)
    lo, hi = staircase_difference(ma, ex)
    assert lo >= 0.0  # masked uses a subset of the points: never below exact (no rounding: same cdist values)
    checked, bad = masked_exactness_violations(ma, ex)
    assert checked > 100 and bad == 0
    # the mask is a real restriction on this cloud (otherwise the test above would be vacuous)
    assert ma.stats["mask_mean_points"] < 0.5 * len(x)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("d", [2, 3])
def test_structural_invariants(d, exact):
    x, f = _cloud(600 if d == 2 else 300, d, seed=10 + d)
    bif = sublevel_flood_bifiltration(x, f, 25 if d == 2 else 12, points_per_edge=6 if d == 2 else 3, exact=exact)
    assert monotone_violations(bif) == 0
    assert max_face_excess(bif) <= 0.0  # face grids are bitwise sub-grids: no tolerance needed
    # slice at max f = single-parameter Flood, computed independently with a k-d tree
    direct = flood_complex_values(x, bif.landmark_indices, bif.points_per_edge)
    for a, b in zip(slice_values(bif, math.inf), direct):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_constant_function_is_one_critical_and_landmarks_everywhere_give_zero_vertex_radius():
    x, f = _cloud(200, 2, seed=3)
    bif = sublevel_flood_bifiltration(x, np.full(len(x), 0.25), 20, points_per_edge=4)
    assert max_critical_degree(bif) == 1
    assert np.all(np.concatenate([g[:, 1] for gs in bif.grades for g in gs]) == 0.25)
    # L = X: every vertex enters at radius 0 exactly at its own f
    small = x[:40]
    full = sublevel_flood_bifiltration(small, f[:40], 40, points_per_edge=3, exact=True)
    for v, g in zip(full.landmark_indices, full.grades[0]):
        assert g[-1, 0] == 0.0 and g[-1, 1] == f[:40][v]


def test_point_order_invariance():
    x, f = _cloud(500, 2, seed=8)
    perm = np.random.default_rng(0).permutation(len(x))
    a = sublevel_flood_bifiltration(x, f, 20, points_per_edge=5)
    b = sublevel_flood_bifiltration(x[perm], f[perm], 20, points_per_edge=5)
    assert grades_as_set(a) == grades_as_set(b)


def test_ties_in_f_give_one_grade_per_distinct_value():
    x, f = _cloud(300, 2, seed=4)
    f = np.round(f, 1)  # 11 distinct values, many ties
    bif = sublevel_flood_bifiltration(x, f, 15, points_per_edge=4, exact=True)
    ts, ref = _brute_force_staircases(x, f, bif.landmark_indices, 4)
    for k, gs in enumerate(bif.grades):
        for i, g in enumerate(gs):
            assert set(g[:, 1]) <= set(ts)
            np.testing.assert_allclose(staircase_at(g, ts), ref[k][i], rtol=0, atol=1e-12)


def test_chunking_under_memory_guard_gives_identical_grades():
    x, f = _cloud(3000, 2, seed=6)
    big = sublevel_flood_bifiltration(x, f, 20, points_per_edge=6, exact=True, memory_limit_mb=512)
    tiny = sublevel_flood_bifiltration(x, f, 20, points_per_edge=6, exact=True, memory_limit_mb=0.05)
    assert tiny.stats["exact_blocks"] > 10 * big.stats["exact_blocks"]
    for ga, gb in zip(big.grades, tiny.grades):
        for a, b in zip(ga, gb):
            np.testing.assert_array_equal(a, b)


def test_masked_mode_also_respects_the_memory_guard():
    # review fix: a masked simplex with many candidates used one unguarded (candidates × S) block
    x, f = _cloud(3000, 2, seed=7)
    big = sublevel_flood_bifiltration(x, f, 20, points_per_edge=6, memory_limit_mb=512)
    tiny = sublevel_flood_bifiltration(x, f, 20, points_per_edge=6, memory_limit_mb=0.05)
    assert big.stats["masked_chunked_simplices"] == 0 < tiny.stats["masked_chunked_simplices"]
    for ga, gb in zip(big.grades, tiny.grades):
        for a, b in zip(ga, gb):
            np.testing.assert_array_equal(a, b)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(30, 120), exact=st.booleans())
def test_property_faces_dominated_and_masked_above_exact(seed, n, exact):
    x, f = _cloud(n, 2, seed)
    bif = sublevel_flood_bifiltration(x, f, 8, points_per_edge=3, exact=exact)
    assert monotone_violations(bif) == 0 and max_face_excess(bif) <= 0.0
    if not exact:
        ex = sublevel_flood_bifiltration(x, f, 8, points_per_edge=3, exact=True)
        assert staircase_difference(bif, ex)[0] >= 0.0


# ---------- parts ----------

def test_fps_is_an_epsilon_net_and_distinct():
    x, _ = _cloud(800, 2, seed=1)
    idx = farthest_point_sampling(x, 50)
    assert len(np.unique(idx)) == 50
    d_all = cKDTree(x[idx]).query(x)[0].max()
    # greedy FPS: every landmark added was at distance >= the final covering radius
    d_pairs = cKDTree(x[idx]).query(x[idx], k=2)[0][:, 1].min()
    assert d_pairs >= d_all - 1e-12


def test_fps_starts_at_the_minimiser_of_f_and_the_bifiltration_uses_it():
    """Planted bug not caught before (issue 34): FPS starting at the maximiser of f (lexsort()[-1]) left
    every test green. The documented start is argmin f (ties: lexicographically smallest point), else the
    lexicographically smallest point; the bifiltration's first landmark is that point."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 2))
    f = rng.uniform(size=300)
    assert farthest_point_sampling(x, 5, f=f)[0] == int(np.argmin(f))
    f_tie = np.ones(300)
    f_tie[[10, 20]] = 0.0                      # two minimisers: the lexicographically smaller point wins
    first = 10 if tuple(x[10]) < tuple(x[20]) else 20
    assert farthest_point_sampling(x, 5, f=f_tie)[0] == first
    assert farthest_point_sampling(x, 5)[0] == int(np.lexsort((x[:, 1], x[:, 0]))[0])
    bif = sublevel_flood_bifiltration(x, f, 12, points_per_edge=4)
    assert bif.landmark_indices[0] == int(np.argmin(f))


def test_fps_clamps_and_stops_at_duplicates():
    x = np.array([[0.0, 0], [1, 0], [0, 1], [0, 1], [1, 0]])
    with pytest.warns(UserWarning) as rec:
        assert len(farthest_point_sampling(x, 10)) == 3
    assert any("clamping" in str(w.message) for w in rec)
    with pytest.warns(UserWarning, match="distinct"):
        assert len(farthest_point_sampling(x, 5)) == 3
    with pytest.raises(ValueError, match="start_index"):
        farthest_point_sampling(x, 2, start_index=7)


@pytest.mark.parametrize("k,n", [(0, 5), (1, 4), (2, 20), (3, 6)])
def test_barycentric_grid(k, n):
    w = barycentric_grid(k, n)
    assert w.shape == (comb(n + k, k), k + 1)
    assert np.all(w.sum(axis=1) == n) and np.all(w >= 0)
    assert len(np.unique(w, axis=0)) == len(w)


def test_minimum_enclosing_ball_obtuse_and_acute():
    v = np.array([[0.0, 0], [4, 0], [2, 0.5], [2, 3]])
    c, r = minimum_enclosing_balls(v, np.array([[0, 1, 2], [0, 1, 3]]))
    np.testing.assert_allclose(c[0], [2, 0], atol=1e-12)  # obtuse: the longest edge's midpoint ball
    np.testing.assert_allclose(r[0], 2, atol=1e-12)
    # acute: circumcentre (2, y) with 4 + y^2 = (3 - y)^2 -> y = 5/6
    np.testing.assert_allclose(c[1], [2, 5 / 6], atol=1e-12)
    np.testing.assert_allclose(r[1], 3 - 5 / 6, atol=1e-12)


def test_delaunay_complex_is_closed_under_faces():
    x, _ = _cloud(100, 3, seed=2)
    cx = delaunay_complex(x[:30])
    edges = {tuple(e) for e in cx.simplices[1]}
    for tri in cx.simplices[2]:
        for e in ((tri[0], tri[1]), (tri[0], tri[2]), (tri[1], tri[2])):
            assert tuple(e) in edges
    assert all(len(c) >= 1 for c in cx.cofacets[2])  # every triangle lies in a tetrahedron


# ---------- bad input ----------

@pytest.mark.parametrize("d", [1, 4])
def test_rejects_dimension(d):
    with pytest.raises(ValueError, match=r"d=%d.*\(2, 3\)" % d):
        sublevel_flood_bifiltration(np.random.default_rng(0).normal(size=(50, d)), np.zeros(50), 10)


def test_rejects_nan_inf_and_length_mismatch():
    x, f = _cloud(50, 2, seed=0)
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or inf.*row 3"):
        sublevel_flood_bifiltration(bad, f, 10)
    with pytest.raises(ValueError, match=r"len\(f\)=49 does not match.*N=50"):
        sublevel_flood_bifiltration(x, f[:-1], 10)
    g = f.copy()
    g[7] = np.inf
    with pytest.raises(ValueError, match="NaN/inf"):
        sublevel_flood_bifiltration(x, g, 10)


def test_more_landmarks_than_points_is_clamped():
    x, f = _cloud(30, 2, seed=0)
    with pytest.warns(UserWarning, match="clamping to 30"):
        bif = sublevel_flood_bifiltration(x, f, 100, points_per_edge=3)
    assert len(bif.landmark_indices) == 30


def test_degenerate_and_duplicate_landmarks():
    t = np.linspace(0, 1, 20)
    line = np.c_[t, 2 * t]
    assert len(sublevel_flood_bifiltration(line, t, 10).simplices) == 2   # collinear: the 1-D complex
    plane = np.c_[t, 2 * t, np.sin(7 * t)] @ np.array([[1.0, 0, 0], [0, 1, 0], [1, 1, 0]])  # z = 0: coplanar
    with pytest.raises(ValueError, match="affinely degenerate"):
        delaunay_complex(plane)
    x, f = _cloud(30, 2, seed=0)
    with pytest.raises(ValueError, match="repeated"):
        sublevel_flood_bifiltration(x, f, landmark_indices=np.array([0, 1, 2, 2]))
    dup = np.vstack([x[:5], x[:5]])
    with pytest.raises(ValueError, match="duplicate"):
        delaunay_complex(dup)
    with pytest.raises(ValueError, match="near_radius"):
        sublevel_flood_bifiltration(x, f, 10, near_radius=0.9)
    with pytest.raises(ValueError, match="points_per_edge"):
        sublevel_flood_bifiltration(x, f, 10, points_per_edge=0)


def test_warnings_are_not_errors_for_small_clouds():
    x, f = _cloud(12, 2, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sublevel_flood_bifiltration(x, f, 12, points_per_edge=2)


def test_stability_in_f_and_in_points():
    from neurips26.flood_bifiltration.invariants import interleaving_excess

    x, f = _cloud(400, 2, seed=21)
    rng = np.random.default_rng(1)
    a = sublevel_flood_bifiltration(x, f, 15, points_per_edge=5, exact=True)
    eps = 0.05
    g = f + eps * rng.uniform(-1, 1, len(f))
    b = sublevel_flood_bifiltration(x, g, points_per_edge=5, exact=True, landmark_indices=a.landmark_indices)
    assert interleaving_excess(a, b, eps) <= 1e-12  # exact set inclusion; 1e-12 only for rounding
    # a shift larger than ε is not an ε-interleaving: the check must be able to fail
    c = sublevel_flood_bifiltration(x, f + 0.3, points_per_edge=5, exact=True, landmark_indices=a.landmark_indices)
    assert interleaving_excess(a, c, eps) > 0
    moved = x + 0.02 * rng.uniform(-1, 1, x.shape)
    moved[a.landmark_indices] = x[a.landmark_indices]
    m = sublevel_flood_bifiltration(moved, f, points_per_edge=5, exact=True, landmark_indices=a.landmark_indices)
    lo, hi = staircase_difference(m, a)
    assert max(-lo, hi) <= 0.02 * math.sqrt(2) + 1e-12  # 1-Lipschitz in the points (sup-norm shift ≤ 0.02·√2)
