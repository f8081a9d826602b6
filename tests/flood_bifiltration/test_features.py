"""Tests of the multipers export, Hilbert signed measures, features and the end-to-end experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.flood_bifiltration import (
    slice_simplex_tree,
    slice_values,
    sublevel_flood_bifiltration,
    to_simplextree_multi,
)
from neurips26.flood_bifiltration.data import circle_with_outliers, loop_vs_disk_dataset
from neurips26.flood_bifiltration.features import (
    DelayEmbedding,
    SublevelFloodFeatures,
    codensity,
    convolved_signed_measure,
    delay_embedding,
    hilbert_signed_measure,
)

pytest.importorskip("multipers")


@pytest.fixture(scope="module")
def circle_bif():
    rng = np.random.default_rng(0)
    x = circle_with_outliers(200, 200, rng)
    f = codensity(x, "kde", bandwidth=0.15)
    return sublevel_flood_bifiltration(x, f, 30, points_per_edge=5)


def test_simplextree_multi_roundtrip(circle_bif):
    st = to_simplextree_multi(circle_bif)
    assert st.is_kcritical and st.num_parameters == 2
    assert st.num_simplices == circle_bif.num_simplices
    ours = {s: {tuple(r) for r in g} for s, g in circle_bif.iter_simplices()}
    for simplex, filt in st.get_simplices():
        got = {tuple(r) for r in np.asarray(filt)}
        assert got == ours[tuple(int(v) for v in simplex)]


def test_hilbert_signed_measure_matches_betti_numbers_of_slices(circle_bif):
    """H_q(r_i, t_j) = Σ_{p ≤ (r_i, t_j)} w equals dim H_q of the slice computed by gudhi."""
    rg, tg = np.linspace(0, 0.8, 17), np.linspace(0, 1, 11)
    sm = hilbert_signed_measure(circle_bif, rg, tg, (0, 1))
    mismatches = 0
    for t in tg:
        st = slice_simplex_tree(circle_bif, t)
        if st.num_simplices() == 0:
            ref = np.zeros((2, len(rg)))
        else:
            st.compute_persistence(persistence_dim_max=True)
            ref = np.array([[np.sum((iv[:, 0] <= r) & (iv[:, 1] > r)) for r in rg]
                            for iv in (np.asarray(st.persistence_intervals_in_dimension(q)).reshape(-1, 2)
                                       for q in (0, 1))])
        for q in (0, 1):
            p, w = sm[q]
            got = [w[(p[:, 0] <= r + 1e-12) & (p[:, 1] <= t + 1e-12)].sum() for r in rg]
            mismatches += int(np.sum(np.asarray(got) != ref[q]))
    assert mismatches == 0
    assert any(len(p) for p, _ in sm) and np.abs(sm[1][1]).sum() > 0  # H1 is not trivially empty


def test_convolved_measure_shape_and_linearity():
    m1 = [(np.array([[0.2, 0.3]]), np.array([1])), (np.zeros((0, 2)), np.zeros(0))]
    m2 = [(np.array([[0.2, 0.3]]), np.array([-2])), (np.zeros((0, 2)), np.zeros(0))]
    a = convolved_signed_measure(m1, (0, 1), (0, 1), resolution=5, bandwidth=0.1)
    b = convolved_signed_measure(m2, (0, 1), (0, 1), resolution=5, bandwidth=0.1)
    assert a.shape == (50,) and np.allclose(b, -2 * a) and np.all(a[25:] == 0)
    with pytest.raises(ValueError, match="bandwidth"):
        convolved_signed_measure(m1, (0, 1), (0, 1), bandwidth=0)


def test_codensity_is_low_on_the_circle():
    rng = np.random.default_rng(1)
    x = circle_with_outliers(300, 300, rng)
    for method in ("kde", "dtm"):
        f = codensity(x, method, bandwidth=0.15, dtm_mass=0.02)
        assert f.min() == 0 and f.max() == 1
        # signal points are ~10x denser than outliers: their median co-density is lower
        assert np.median(f[:300]) < np.median(f[300:])
    with pytest.raises(ValueError, match="method"):
        codensity(x, "knn")
    with pytest.raises(ValueError, match="dtm_mass"):
        codensity(x, "dtm", dtm_mass=2)


def test_delay_embedding():
    s = np.arange(10.0)
    e = delay_embedding(s, 3, 2)
    assert e.shape == (6, 3) and np.array_equal(e[0], [0, 2, 4]) and np.array_equal(e[-1], [5, 7, 9])
    with pytest.raises(ValueError, match="shorter than the embedding window"):
        delay_embedding(np.arange(4.0), 3, 1)
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        delay_embedding(s, 4, 1)
    with pytest.raises(ValueError, match="NaN"):
        delay_embedding(np.array([1.0, np.nan, 2, 3, 4, 5]), 2, 1)


def test_transformer_in_pipeline_with_cross_validation():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(2)
    clouds, y = loop_vs_disk_dataset(8, 60, 60, rng)
    pipe = make_pipeline(SublevelFloodFeatures(n_landmarks=16, points_per_edge=4, grid_size=10, resolution=6),
                         StandardScaler(), LogisticRegression(max_iter=2000))
    scores = cross_val_score(pipe, clouds, y, cv=2)
    assert scores.shape == (2,) and np.all((scores >= 0) & (scores <= 1))
    with pytest.raises(ValueError, match="mode"):
        SublevelFloodFeatures(mode="rips").fit([clouds[0]])
    with pytest.raises(ValueError, match="not fitted"):
        SublevelFloodFeatures().transform([clouds[0]])


def test_time_series_path():
    series = np.sin(np.linspace(0, 6 * np.pi, 60))[None, :].repeat(3, 0) + \
        0.05 * np.random.default_rng(3).normal(size=(3, 60))
    clouds = DelayEmbedding(dimension=2).transform(series)
    F = SublevelFloodFeatures(n_landmarks=12, points_per_edge=3, grid_size=8, resolution=4).fit_transform(clouds)
    assert F.shape == (3, 2 * 16) and np.all(np.isfinite(F))


def test_slice_matches_flooder_package():
    pytest.importorskip("flooder")  # in the [tda] extra, with fpsample and torch
    import flooder.core
    import torch
    from flooder import flood_complex

    if not hasattr(flooder.core, "tl_dtypes_dict"):  # flooder 1.0.1 bug without Triton: name undefined on CPU
        flooder.core.tl_dtypes_dict = {torch.float32: None, torch.float64: None}

    x = circle_with_outliers(300, 300, np.random.default_rng(4))
    f = codensity(x, "kde", bandwidth=0.15)
    bif = sublevel_flood_bifiltration(x, f, 30, points_per_edge=20, exact=True)
    lm = torch.tensor(x[bif.landmark_indices], dtype=torch.float32)
    theirs = flood_complex(torch.tensor(x, dtype=torch.float32), lm, points_per_edge=20, use_triton=False)
    theirs = {tuple(sorted(s)): float(v) for s, v in theirs.items()}
    mine = {s: float(v) for k, vals in enumerate(slice_values(bif, math.inf))
            for s, v in zip(map(tuple, bif.simplices[k].tolist()), vals)}
    assert set(theirs) == set(mine)
    # flooder computes in float32: 1e-5 relative on radii of order 1
    assert max(abs(theirs[s] - mine[s]) for s in mine) < 1e-5


def test_multipers_accepts_it_for_module_approximation_and_rank(circle_bif):
    import multipers as mp

    st = to_simplextree_multi(circle_bif)
    module = mp.module_approximation(st)
    assert len(module) > 0  # H0 alone has at least one summand
    sm = mp.signed_measure(st.grid_squeeze(resolution=10, strategy="regular"), degree=1, invariant="rank")
    assert len(sm) == 1


def test_review_bad_input_gives_clear_errors(circle_bif):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 2))
    with pytest.raises(ValueError, match="real-valued.*complex"):  # was silently cast to the real part
        sublevel_flood_bifiltration(x + 1j, rng.uniform(size=60), 8)
    with pytest.raises(ValueError, match="f must be real-valued"):
        sublevel_flood_bifiltration(x, rng.uniform(size=60) + 0j, 8)
    with pytest.raises(ValueError, match="points must be numeric"):
        sublevel_flood_bifiltration(np.array([[{}, {}]] * 5, dtype=object), np.zeros(5), 3)
    with pytest.raises(ValueError, match="not NaN"):  # was an all-+inf (empty) slice
        slice_values(circle_bif, float("nan"))
    with pytest.raises(ValueError, match="real threshold"):
        slice_simplex_tree(circle_bif, "0.5")
    with pytest.raises(ValueError, match="dtm_mass=1e-09 with N=60.*0 everywhere"):  # was f ≡ 0
        codensity(x, "dtm", dtm_mass=1e-9)
    assert np.ptp(codensity(x, "dtm", dtm_mass=2 / 60)) > 0
    with pytest.raises(ValueError, match="no point clouds"):
        SublevelFloodFeatures().fit([])
    with pytest.raises(ValueError, match="r_max must be a positive finite number; got -1"):
        SublevelFloodFeatures(r_max=-1).fit([x])
    with pytest.raises(ValueError, match="degrees must be .* in \\{0, 1, 2\\}.*got \\(5,\\)"):
        SublevelFloodFeatures(degrees=(5,)).fit([x])  # was an all-zero feature block


def test_review_delay_embedding_rejects_multichannel_and_single_series():
    X = np.random.default_rng(6).normal(size=(3, 2, 40))
    with pytest.raises(ValueError, match=r"series 0 has shape \(2, 40\).*univariate"):  # was concatenated
        DelayEmbedding(2).transform(X)
    assert [c.shape for c in DelayEmbedding(2).transform(X[:, :1])] == [(39, 2)] * 3  # aeon's (n, 1, T)
    with pytest.raises(ValueError, match="one 1-D series of length 40"):
        DelayEmbedding(2).transform(X[0, 0])


def test_prebuilt_complexes_give_the_same_features():
    # the experiment builds the sublevel Flood complexes once for the bifiltration and flood modes
    # (deterministic construction): passing them must give exactly the features built from the clouds
    rng = np.random.default_rng(5)
    clouds = [rng.normal(size=(60, 2)) for _ in range(4)]
    kw = dict(n_landmarks=10, points_per_edge=3, grid_size=8, resolution=4)
    shared = SublevelFloodFeatures(**kw).complexes(clouds)
    for mode in ("bifiltration", "flood"):
        own, pre = SublevelFloodFeatures(mode=mode, **kw), SublevelFloodFeatures(mode=mode, **kw)
        assert np.array_equal(own.fit_transform(clouds), pre.fit_transform(clouds, complexes=shared))
        assert np.array_equal(own.transform(clouds[:2]), pre.transform(clouds[:2], complexes=shared[:2]))
