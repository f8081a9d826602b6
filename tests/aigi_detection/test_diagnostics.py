"""GAMC diagnostics and metrics on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from neurips26.aigi_detection import world as W
from neurips26.aigi_detection.diagnostics import (
    artifact_statistics,
    contribution_entropy,
    detection_metrics,
    effective_rank,
    fisher_ratios,
    generator_clustering,
    per_generator_metrics,
)


def test_effective_rank_extremes():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(200, 1))
    assert effective_rank(u @ rng.normal(size=(1, 10))) == pytest.approx(1.0, abs=1e-6)
    iso = effective_rank(rng.normal(size=(5000, 8)))
    assert 7.8 < iso <= 8.0  # equal singular values up to sampling noise ~ 1/sqrt(5000)
    with pytest.raises(ValueError):
        effective_rank(np.ones(5))


def test_fisher_ratio_hand_case():
    X = np.array([[0.0], [2.0], [10.0], [12.0]])
    names, F = fisher_ratios(X, ["real", "real", "g", "g"])
    assert names == ["g"] and F[0, 0] == pytest.approx(100 / 2)  # (11-1)^2 / (1 + 1)
    with pytest.raises(ValueError, match="'g' has 1"):
        fisher_ratios(X[:3], ["real", "real", "g"])


def test_detection_metrics_match_sklearn():
    y = np.array([0, 0, 1, 1, 0, 1])
    s = np.array([0.1, 0.6, 0.4, 0.9, 0.2, 0.7])
    m = detection_metrics(y, s)
    assert m["acc"] == pytest.approx(4 / 6)
    assert m["ap"] == pytest.approx(average_precision_score(y, s))
    assert m["auroc"] == pytest.approx(roc_auc_score(y, s))
    pg = per_generator_metrics(np.r_[s, 0.95], ["real", "real", "a", "a", "real", "b", "b"])
    assert set(pg) == {"a", "b", "mean"} and pg["mean"]["ap"] == pytest.approx((pg["a"]["ap"] + pg["b"]["ap"]) / 2)
    with pytest.raises(ValueError, match="both real"):
        detection_metrics(np.ones(3), np.ones(3))


def test_contribution_entropy_extremes():
    assert contribution_entropy(np.ones((5, 4))) == pytest.approx(1.0)
    one = np.zeros((5, 4))
    one[:, 1] = 3.0
    assert contribution_entropy(one) == pytest.approx(0.0)


def test_world_generators_raise_their_own_artifact_statistic():
    rng = np.random.default_rng(0)
    s = W.ImageSet.concat([W.make_reals(150, rng)] + [W.make_fakes(g, 80, rng) for g in
                                                      ("upconv_gan", "grid_vae", "colour_diff")])
    names, F = fisher_ratios(artifact_statistics(s.images), s.generator)
    dom = {n: W.ARTIFACTS[int(np.argmax(F[i]))] for i, n in enumerate(names)}
    assert dom == {"upconv_gan": "upsampling", "grid_vae": "grid", "colour_diff": "colour"}


def test_world_validation_and_identical_encoding():
    rng = np.random.default_rng(1)
    r, f = W.make_reals(5, rng), W.make_fakes("ddpm_like", 5, rng)
    for s in (r, f):  # same dtype, range and 8-bit grid for both classes
        assert s.images.dtype == np.float32 and s.images.min() >= 0 and s.images.max() <= 1
        assert np.allclose(s.images * 255, np.round(s.images * 255), atol=1e-4)
    with pytest.raises(ValueError, match="allowed"):
        W.make_fakes("nope", 5, rng)
    with pytest.raises(ValueError, match="content_probs"):
        W.make_reals(5, rng, content_probs=(0.5, 0.5, 0.5))


def test_generator_clustering_separates_obvious_clusters():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 1, (50, 5)), rng.normal(8, 1, (50, 5))])
    out = generator_clustering(X, ["a"] * 50 + ["b"] * 50, n_components=2)
    assert out["silhouette"] > 0.5 and out["kmeans_ari"] > 0.9


def test_paired_bootstrap_map_difference():
    from neurips26.aigi_detection.diagnostics import paired_bootstrap_map_difference, per_generator_metrics

    rng = np.random.default_rng(0)
    g = np.array(["real"] * 200 + ["g1"] * 100 + ["g2"] * 100)
    y = (g != "real").astype(float)
    weak = 0.5 * y + rng.normal(size=400)       # AUROC ~0.64
    strong = 2.0 * y + rng.normal(size=400)     # AUROC ~0.92
    d, (lo, hi) = paired_bootstrap_map_difference(weak, strong, g, seed=0)
    ref = per_generator_metrics(strong, g)["mean"]["ap"] - per_generator_metrics(weak, g)["mean"]["ap"]
    assert d == pytest.approx(ref) and 0 < lo < d < hi  # a large gain: the whole interval is positive
    d0, (lo0, hi0) = paired_bootstrap_map_difference(weak, weak, g)
    assert d0 == lo0 == hi0 == 0.0  # paired: identical detectors differ by exactly 0 in every resample
    with pytest.raises(ValueError, match="the same images"):
        paired_bootstrap_map_difference(weak, strong[:-1], g)
