"""Target Linearity (TL) of a layer's features and its Gram surrogate.

TL (abstract: "a measure quantifying the linear alignment between features and targets") is the
in-sample R² of least squares from the features H (n×p) to the column-centred targets Y_c (n×C):

    TL = 1 − ‖Y_c − P_H Y_c‖_F² / ‖Y_c‖_F²,     P_H = H (HᵀH)⁻¹ Hᵀ.

Conventions (inferred from the authors' released description; each is an option here):

- ``intercept=False`` (default, the authors' convention): H is not centred and no constant column
  is added. ``intercept=True`` centres H as well, i.e. fits an intercept. Because Y_c is centred,
  the two differ only through the mean of H.
- Wide layers: when p > ``pca_threshold`` the features are first projected on their top
  ``pca_components`` principal directions (randomised PCA of centred H), as the authors do for
  wide or unfolded conv features. The result is then a with-intercept TL of the projected features.
- Rank-deficient H: the projection is computed from the SVD H = U S Vᵀ; when the smallest
  retained singular value is below ``rcond``·s_max a ridge λ = ``ridge``·s_max² is used,
  fitted = U diag(s²/(s²+λ)) Uᵀ Y_c, with a warning; :class:`TargetLinearity` reports λ.
- p ≥ n: TL is trivially 1 (interpolation); a warning says so.

Gram surrogate (inferred from the released description): with the next layer's weight W (q×p) and
Z = H Wᵀ, S = (1/C) tr(Y_cᵀ Z Zᵀ Y_c) = (1/C) tr(Y_cᵀ H WᵀW Hᵀ Y_c): it sees the weights only
through WᵀW. ``normalise=True`` divides by ‖Z_c‖_F² (see :func:`gram_surrogate`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import torch


class TrivialTargetLinearityWarning(UserWarning):
    """TL is computed with at least as many features as samples: it is trivially (close to) 1."""


class RidgeTargetLinearityWarning(UserWarning):
    """The features are rank-deficient: TL used a ridge (the value is reported)."""


@dataclass(frozen=True)
class TargetLinearity:
    """A Target Linearity measurement.

    Attributes:
        value: TL in [0, 1] (1 = the centred targets are exactly linear in the features).
        n_samples: n. n_features: p as given. used_features: p after PCA (= p without PCA).
        rank: numerical rank of the (projected) features.
        ridge: λ used (0.0 when the least squares was well posed).
        intercept: whether H was centred (intercept fitted).
    """

    value: float
    n_samples: int
    n_features: int
    used_features: int
    rank: int
    ridge: float
    intercept: bool


def one_hot_targets(labels, num_classes: int | None = None) -> np.ndarray:
    """(n, C) float64 one-hot matrix of integer labels 0..C−1.

    Raises:
        ValueError: labels not integers, negative, ≥ ``num_classes``, or (without ``num_classes``)
            not contiguous 0..C−1 (a missing class would give a wrong one-hot width).
    """
    y = np.asarray(labels.detach().cpu() if isinstance(labels, torch.Tensor) else labels)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array, got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        if not np.all(np.isfinite(y)) or not np.all(y == np.round(y)):
            raise ValueError(f"labels must be integers 0..C-1, got dtype {y.dtype}")
        y = y.astype(np.int64)
    present = np.unique(y)
    if present[0] < 0:
        raise ValueError(f"labels must be >= 0, got {present[0]}")
    if num_classes is None:
        if not np.array_equal(present, np.arange(len(present))):
            raise ValueError(f"labels must be contiguous 0..C-1 (classes present: {present.tolist()[:20]}); "
                             "relabel them or pass num_classes")
        num_classes = len(present)
    elif present[-1] >= num_classes:
        raise ValueError(f"label {present[-1]} >= num_classes={num_classes}")
    return np.eye(num_classes)[y]


def _targets(targets, n: int) -> np.ndarray:
    Y = np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != n:
        raise ValueError(f"targets must be (n,) or (n, C) with n = {n} rows (one per feature row), got "
                         f"shape {Y.shape}; features and targets must list the same samples in the same order")
    if not np.all(np.isfinite(Y)):
        raise ValueError("targets contain NaN/inf")
    Yc = Y - Y.mean(0)
    if not np.any(Yc):
        raise ValueError("targets have zero variance: TL = 1 − residual / 0 is undefined")
    return Yc


def _features(features) -> np.ndarray:
    H = features.detach().cpu().to(torch.float64).numpy() if isinstance(features, torch.Tensor) \
        else np.asarray(features, dtype=np.float64)
    if H.ndim > 2:
        H = H.reshape(H.shape[0], -1)
    if H.ndim != 2 or H.shape[0] < 2:
        raise ValueError(f"features must be (n, p) with n >= 2 (or (n, ...) flattened), got shape {H.shape}")
    if not np.all(np.isfinite(H)):
        raise ValueError(f"features contain {int((~np.isfinite(H)).sum())} NaN/inf entries")
    return H


def _pca(H: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Scores of centred H on its top-k principal directions (randomised SVD)."""
    from sklearn.utils.extmath import randomized_svd

    Hc = H - H.mean(0)
    U, S, _ = randomized_svd(Hc, n_components=k, random_state=seed)
    return U * S


def target_linearity_details(features, targets, *, intercept: bool = False, pca_threshold: int = 1000,
                             pca_components: int = 256, ridge: float = 1e-8, rcond: float = 1e-10,
                             seed: int = 0, warn: bool = True) -> TargetLinearity:
    """Target Linearity of ``features`` with respect to ``targets``, with the details.

    Args:
        features: (n, p) (or (n, ...), flattened) array or tensor; rows = samples.
        targets: (n,) regression target, (n, C) one-hot or multi-output targets (see
            :func:`one_hot_targets` for labels); centred by column here.
        intercept: centre the features too (fit an intercept). Default ``False``: the authors'
            convention (no intercept).
        pca_threshold, pca_components: project on the top ``pca_components`` principal directions
            when p > ``pca_threshold``.
        ridge: relative ridge λ/s_max² applied only when H is rank-deficient (see ``rcond``).
        rcond: rank tolerance relative to the largest singular value.
        seed: randomised-PCA seed.
        warn: emit :class:`TrivialTargetLinearityWarning` / :class:`RidgeTargetLinearityWarning`.

    Returns:
        :class:`TargetLinearity`.

    Raises:
        ValueError: shapes, NaN/inf, zero-variance targets, bad options.
    """
    if pca_components < 1 or pca_threshold < 1:
        raise ValueError(f"pca_components={pca_components}, pca_threshold={pca_threshold}; both must be >= 1")
    if not (ridge > 0 and np.isfinite(ridge)) or not (0 < rcond < 1):
        raise ValueError(f"ridge={ridge} must be a finite number > 0 and rcond={rcond} in (0, 1)")
    H = _features(features)
    n, p = H.shape
    Yc = _targets(targets, n)
    if p > pca_threshold:
        H = _pca(H, min(pca_components, n - 1), seed)
    elif intercept:
        H = H - H.mean(0)
    used = H.shape[1]
    if warn and used >= n:
        warnings.warn(f"target_linearity: {used} features for {n} samples (p >= n): TL is trivially ~1 "
                      "(interpolation); use more samples, PCA (pca_threshold) or a held-out TL",
                      TrivialTargetLinearityWarning, stacklevel=2)
    U, s, _ = np.linalg.svd(H, full_matrices=False)   # H = U S Vᵀ
    if s[0] == 0:
        return TargetLinearity(0.0, n, p, used, 0, 0.0, intercept)
    rank = int(np.sum(s > rcond * s[0]))
    UtY = U.T @ Yc
    lam = 0.0
    if rank < len(s):
        lam = ridge * s[0] ** 2
        shrink = s**2 / (s**2 + lam)                   # ridge: fitted = U diag(s²/(s²+λ)) Uᵀ Y_c
        fitted_sq = np.sum((shrink[:, None] * UtY) ** 2)
        cross = np.sum(shrink[:, None] * UtY**2)
        resid = np.sum(Yc**2) - 2 * cross + fitted_sq
        if warn:
            warnings.warn(f"target_linearity: features are rank-deficient (rank {rank} of {len(s)}); "
                          f"used ridge lambda = {lam:.3g} (= {ridge:g} * s_max^2)", RidgeTargetLinearityWarning,
                          stacklevel=2)
    else:
        resid = np.sum(Yc**2) - np.sum(UtY**2)        # ‖Y_c − P_H Y_c‖² = ‖Y_c‖² − ‖Uᵀ Y_c‖²
    value = 1.0 - max(resid, 0.0) / np.sum(Yc**2)     # TL = 1 − ‖Y_c − Ŷ‖²/‖Y_c‖²
    return TargetLinearity(float(value), n, p, used, rank, float(lam), intercept)


def target_linearity(features, targets, **kwargs) -> float:
    """TL in [0, 1]; see :func:`target_linearity_details` for the arguments and conventions."""
    return target_linearity_details(features, targets, **kwargs).value


def gram_surrogate(features, targets, weight, *, normalise: bool = True) -> float:
    """Gram surrogate of TL: S = (1/C) tr(Y_cᵀ H WᵀW Hᵀ Y_c) with Z = H Wᵀ.

    Args:
        features: (n, p) input features H of the layer whose weight is ``weight``.
        targets: (n,) or (n, C); column-centred here.
        weight: (q, p) weight W (only WᵀW enters).
        normalise: divide by ‖Z_c‖_F² (Z column-centred), which removes the overall scale of W
            and H (the value is then invariant to rescaling either) but is not bounded by 1: it is
            (1/C) Σ_c ‖Zᵀy_c‖²/‖Z_c‖² and grows with the class sizes. Inferred: the authors report
            S together with ‖Z‖_F² for normalisation.

    Raises:
        ValueError: shapes, NaN/inf, zero-variance targets.
    """
    H = _features(features)
    Yc = _targets(targets, H.shape[0])
    W = _features(weight)
    if W.shape[1] != H.shape[1]:
        raise ValueError(f"weight has p = {W.shape[1]} columns but features have p = {H.shape[1]}")
    Z = H @ W.T                                          # Z = H Wᵀ
    C = Yc.shape[1]
    S = float(np.sum((Yc.T @ Z) ** 2) / C)              # (1/C) tr(Y_cᵀ Z Zᵀ Y_c)
    if not normalise:
        return S
    Zc = Z - Z.mean(0)
    return S / max(float(np.sum(Zc**2)), 1e-300)
