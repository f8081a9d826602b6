"""Target Linearity, its Gram surrogate and NC1 against independent references."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from neurips26.feature_learning import (
    RidgeTargetLinearityWarning,
    TrivialTargetLinearityWarning,
    gram_surrogate,
    nc1,
    one_hot_targets,
    target_linearity,
    target_linearity_details,
)


def test_tl_equals_sklearn_r2_with_and_without_intercept():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(300, 12)) + 2.0
    y = rng.integers(0, 4, 300)
    Y = one_hot_targets(y)
    Yc = Y - Y.mean(0)
    ref0 = LinearRegression(fit_intercept=False).fit(H, Yc)
    r0 = 1 - np.sum((Yc - ref0.predict(H)) ** 2) / np.sum(Yc**2)
    ref1 = LinearRegression().fit(H, Yc)
    r1 = 1 - np.sum((Yc - ref1.predict(H)) ** 2) / np.sum(Yc**2)
    assert target_linearity(H, Y) == pytest.approx(r0, abs=1e-10)
    assert target_linearity(H, Y, intercept=True) == pytest.approx(r1, abs=1e-10)
    assert r1 >= r0 - 1e-12  # an intercept can only help


def test_tl_is_one_for_linear_targets_and_invariant_to_feature_rescaling():
    rng = np.random.default_rng(1)
    H = rng.normal(size=(200, 5)) + 1.0
    t = H @ rng.normal(size=5)
    # the centred target t − mean(t) is linear in H only with an intercept (the no-intercept
    # convention misses the mean of H): the documented difference between the two conventions
    assert target_linearity(H, t, intercept=True) == pytest.approx(1.0, abs=1e-12)
    assert target_linearity(H, t) < 1.0 - 1e-6
    Hc = H - H.mean(0)
    assert target_linearity(Hc, Hc @ rng.normal(size=5)) == pytest.approx(1.0, abs=1e-12)
    y = rng.integers(0, 3, 200)
    A = rng.normal(size=(5, 5))
    assert target_linearity(H @ A, one_hot_targets(y)) == pytest.approx(target_linearity(H, one_hot_targets(y)),
                                                                       abs=1e-9)


def test_pca_path_for_wide_features_is_close_to_exact():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(400, 20))
    H = Z @ rng.normal(size=(20, 1200))  # wide but of rank 20: PCA to 64 components loses nothing
    y = (Z[:, 0] > 0).astype(int)
    exact = target_linearity(H, one_hot_targets(y), pca_threshold=5000, intercept=True, warn=False)
    d = target_linearity_details(H, one_hot_targets(y), pca_components=64, warn=False)
    assert d.used_features == 64
    assert d.value == pytest.approx(exact, abs=1e-6)


def test_warnings_for_trivial_and_rank_deficient_features():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 20)
    with pytest.warns(TrivialTargetLinearityWarning, match="p >= n"):
        target_linearity(rng.normal(size=(20, 30)), one_hot_targets(y))
    H = rng.normal(size=(50, 4))
    H = np.hstack([H, H[:, :1]])  # duplicated column: singular HᵀH
    with pytest.warns(RidgeTargetLinearityWarning, match="rank 4 of 5"):
        d = target_linearity_details(H, rng.normal(size=50))
    assert d.ridge > 0 and d.rank == 4


def test_bad_targets_raise():
    with pytest.raises(ValueError, match="contiguous"):
        one_hot_targets([0, 2, 2])
    with pytest.raises(ValueError, match="zero variance"):
        target_linearity(np.ones((5, 2)) + np.arange(5)[:, None], np.ones(5))
    with pytest.raises(ValueError, match="same samples"):
        target_linearity(np.ones((5, 2)), np.arange(4.0))
    with pytest.raises(ValueError, match="NaN"):
        target_linearity(np.full((5, 2), np.nan), np.arange(5.0))


def test_gram_surrogate_depends_on_weight_only_through_its_gram():
    rng = np.random.default_rng(4)
    H, W = rng.normal(size=(60, 6)), rng.normal(size=(8, 6))
    Y = one_hot_targets(rng.integers(0, 3, 60))
    Q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    assert gram_surrogate(H, Y, Q @ W) == pytest.approx(gram_surrogate(H, Y, W), rel=1e-10)
    Yc = Y - Y.mean(0)
    raw = np.trace(Yc.T @ H @ W.T @ W @ H.T @ Yc) / 3
    assert gram_surrogate(H, Y, W, normalise=False) == pytest.approx(raw, rel=1e-10)


def test_nc1_is_zero_for_collapsed_classes_and_positive_otherwise():
    rng = np.random.default_rng(5)
    means = rng.normal(size=(3, 4)) * 5
    y = rng.integers(0, 3, 90)
    assert nc1(means[y], y) == pytest.approx(0.0, abs=1e-12)
    noisy = means[y] + rng.normal(size=(90, 4))
    assert nc1(noisy, y) > 0.01
    with pytest.raises(ValueError, match="2 classes"):
        nc1(noisy, np.zeros(90, int))
