"""Direct value tests of single points of detection: grades under tied function values, and the
sign of the KDE co-density.

Bugs these tests are meant to catch (each tried on a broken copy, red here): grade compression
that keeps the first row of a tie group of f instead of the last (the staircase is then too high
at the tied threshold), and a KDE co-density with the wrong sign (dense points high instead of
low). Whether a claim of the quick run also moves under these bugs was not measured.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import cKDTree

from neurips26.flood_bifiltration import codensity, slice_values, sublevel_flood_bifiltration
from neurips26.flood_bifiltration.data import circle_with_outliers
from neurips26.flood_bifiltration.delaunay import simplex_samples


def _brute_force_slice(x, f, bif, t, ppe):
    """ρ_σ(t) = max_{y ∈ S_σ} min_{x: f(x) ≤ t} ‖y − x‖ by a k-d tree on the sublevel set."""
    tree = cKDTree(x[f <= t])
    lm = x[bif.landmark_indices]
    out = []
    for simp in bif.simplices:
        y = simplex_samples(lm, np.asarray(simp), ppe)
        d, _ = tree.query(y.reshape(-1, y.shape[-1]))
        out.append(d.reshape(y.shape[:2]).max(axis=1))
    return out


@pytest.mark.parametrize("exact", [True, False])
def test_grades_with_tied_function_values_match_the_sublevel_flood_values(exact):
    rng = np.random.default_rng(4)
    x = circle_with_outliers(200, 150, rng)
    levels = np.array([0.0, 0.5, 1.0])
    f = levels[np.digitize(codensity(x, "kde", bandwidth=0.15), [0.3, 0.6])]  # three tie groups
    ppe = 6
    bif = sublevel_flood_bifiltration(x, f, 24, points_per_edge=ppe, exact=exact)
    for t in levels:
        if not np.any(f <= t):
            continue
        ref = _brute_force_slice(x, f, bif, t, ppe)
        for k, (a, b) in enumerate(zip(slice_values(bif, t), ref)):
            if exact:   # identical distances up to cdist vs k-d tree rounding
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=f"dim {k}, t = {t}")
            else:       # the masked mode uses a subset of the points: never below the exact value
                assert np.all(a >= b - 1e-12), f"dim {k}, t = {t}"
    # every grade's t is one of the three levels, and no simplex has more grades than levels
    ts = np.concatenate([g[:, 1] for gs in bif.grades for g in gs])
    assert set(np.unique(ts)) <= set(levels)
    assert max(len(g) for gs in bif.grades for g in gs) <= 3
    # a constant f: one grade per simplex, equal to the single-parameter Flood value
    const = sublevel_flood_bifiltration(x, np.full(len(x), 0.7), 24, points_per_edge=ppe, exact=True)
    assert max(len(g) for gs in const.grades for g in gs) == 1
    for a, b in zip(slice_values(const, math.inf), _brute_force_slice(x, np.zeros(len(x)), const, 0.0, ppe)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["kde", "dtm"])
def test_codensity_is_lowest_in_the_densest_region(method):
    # 200 points in a tight cluster, 20 spread far out: every cluster point has lower co-density
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(0, 0.05, (200, 2)), rng.uniform(2, 4, (20, 2))])
    f = codensity(x, method, bandwidth=0.1, dtm_mass=0.05)
    assert f[:200].max() < f[200:].min()
    assert f.min() == 0.0 and f.max() == 1.0
    raw = codensity(x, method, bandwidth=0.1, dtm_mass=0.05, normalize=False)
    assert np.argmin(raw) < 200 and np.argmax(raw) >= 200


def test_compress_keeps_the_last_row_of_each_tie_group():
    from neurips26.flood_bifiltration.bifiltration import _compress

    # staircase rows sorted by t: ties at t = 0 and t = 1; r non-increasing
    r = np.array([5.0, 4.0, 3.0, 2.0, 2.0, 1.0])
    t = np.array([0.0, 0.0, 1.0, 1.0, 2.0, 3.0])
    idx, g = _compress(r, t)
    # the value at t = 0 is the min over both tied points (4, not 5); at t = 2 r does not drop: no grade
    assert idx.tolist() == [1, 3, 5]
    np.testing.assert_array_equal(g, [[4.0, 0.0], [2.0, 1.0], [1.0, 3.0]])


@pytest.mark.parametrize("n,d,L,seed", [(2000, 2, 64, 0), (5000, 3, 200, 1), (300, 2, 300, 2)])
def test_fpsample_gives_the_reference_farthest_point_selection(n, d, L, seed):
    from neurips26.flood_bifiltration.landmarks import farthest_point_sampling, farthest_point_sampling_reference

    x = np.random.default_rng(seed).normal(size=(n, d))
    fast = farthest_point_sampling(x, L, start_index=7)
    np.testing.assert_array_equal(fast, farthest_point_sampling_reference(x, L, 7))
