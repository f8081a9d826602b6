"""Degenerate clouds that real data produce: collinear points, a single distinct point, and time
series whose delay embeddings are such clouds. Regression tests: each failed before (collinear
landmarks were refused as "affinely degenerate" and a batch with one such series failed whole)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.flood_bifiltration import DelayEmbedding, SublevelFloodFeatures, slice_values, sublevel_flood_bifiltration
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
