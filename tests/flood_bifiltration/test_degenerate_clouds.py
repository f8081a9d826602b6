"""Degenerate clouds that real data produce: collinear points, a single distinct point, and time
series whose delay embeddings are such clouds. Regression tests: each failed before (collinear
landmarks were refused as "affinely degenerate" and a batch with one such series failed whole)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.flood_bifiltration import (
    DelayEmbedding,
    SublevelFloodFeatures,
    flood_complex_values,
    slice_simplex_tree,
    slice_values,
    sublevel_flood_bifiltration,
)
from neurips26.flood_bifiltration.delaunay import delaunay_complex


def test_collinear_points_give_the_one_dimensional_complex():
    t = np.arange(10.0)
    x = np.stack([np.sin(t), -np.sin(t)], axis=1)       # exactly collinear, distinct
    cx = delaunay_complex(x)
    assert cx.dimension == 1 and len(cx.simplices[1]) == len(x) - 1
    bif = sublevel_flood_bifiltration(x, np.zeros(len(x)), len(x), points_per_edge=3, exact=True)
    # each edge joins neighbours along the line and enters when its midpoint is covered: half its length
    proj = np.sort(x @ np.array([1.0, -1.0]) / math.sqrt(2))
    half_gaps = np.sort(np.diff(proj) / 2)
    np.testing.assert_allclose(np.sort(slice_values(bif, math.inf)[1]), half_gaps, rtol=0, atol=1e-12)
    st = sublevel_flood_bifiltration(x, np.zeros(len(x)), len(x), points_per_edge=3)
    assert len(st.simplices) == 2                        # no triangles, hence no H1


def test_a_single_distinct_point_is_one_vertex():
    with pytest.warns(UserWarning, match="distinct"):
        bif = sublevel_flood_bifiltration(np.zeros((5, 2)), np.zeros(5), 4)
    assert [len(s) for s in bif.simplices] == [1]


def test_delay_embedding_batch_with_linear_constant_and_alternating_series():
    rng = np.random.default_rng(0)
    series = np.stack([np.linspace(0, 1, 60), np.full(60, 0.3), np.arange(60) % 2.0,
                       np.sin(np.linspace(0, 6, 60)) + 0.05 * rng.normal(size=60)])
    pts = DelayEmbedding(2).transform(series)
    F = SublevelFloodFeatures(n_landmarks=16, points_per_edge=4).fit_transform(pts)
    assert F.shape[0] == 4 and np.all(np.isfinite(F))


def _h1_bars(bif):
    st = slice_simplex_tree(bif)
    st.compute_persistence()
    return [d - b for b, d in st.persistence_intervals_in_dimension(1)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearly_collinear_points_give_no_spurious_h1(seed):
    """Issue 14, 2(c): collinear points plus 1e-9 noise gave 8-11 H1 bars (persistence up to 0.025)
    at flooder's 20 points per edge: Qhull's slivers, whose grids sample the long edge more finely
    than the edge's own grid. Within √ε of a line they are now the 1-D complex (no H1)."""
    t = np.arange(10.0)
    x = np.stack([np.sin(t), -np.sin(t)], axis=1) + 1e-9 * np.random.default_rng(seed).normal(size=(10, 2))
    for ppe in (20, 21):
        bif = sublevel_flood_bifiltration(x, np.zeros(len(x)), len(x), points_per_edge=ppe, exact=True)
        assert len(bif.simplices) == 2 and _h1_bars(bif) == []
    # H0 deaths are the half gaps along the line (to the noise)
    proj = np.sort(x @ np.array([1.0, -1.0]) / math.sqrt(2))
    np.testing.assert_allclose(np.sort(slice_values(bif, math.inf)[1]), np.sort(np.diff(proj) / 2), atol=1e-8)


def test_default_grid_samples_edge_midpoints():
    """Issue 14, 2(c) note: with 20 points per edge (19 subdivisions) a lone edge between two points
    came out 0.474 instead of 0.5 (its value is attained at the midpoint); the default now uses an
    even number of subdivisions, exact here to round-off."""
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 3.0]])
    values = flood_complex_values(x, np.arange(3))
    edge01 = values[1][0]                                  # simplices sorted: (0, 1) first
    assert abs(edge01 - 0.5) < 1e-12, edge01
    assert abs(flood_complex_values(x, np.arange(3), points_per_edge=20)[1][0] - 0.5) > 0.02   # flooder's 20 misses it
    F = sublevel_flood_bifiltration(x, np.zeros(3), exact=True, landmark_indices=np.arange(3))
    assert F.points_per_edge % 2 == 1 and abs(slice_values(F, math.inf)[1][0] - 0.5) < 1e-12
