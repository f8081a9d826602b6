"""Collapse and memorisation metrics for samples of a generative model.

- Mode coverage on a mixture with known component locations: a component is *covered* when at
  least ``min_weight`` of the samples lie within ``radius_in_std`` component standard deviations
  of its mean (the criterion of the mode-collapse literature, e.g. Srivastava et al. 2017,
  "VEEGAN", which counts modes holding samples within 3σ).
- Memorisation by nearest neighbours (Yoon et al. 2023, "Diffusion Probabilistic Models
  Generalize when They Fail to Memorize"): a sample is *memorised* when its nearest training
  point is closer than ``ratio`` (1/3) times the second nearest. The same rule against an
  equally large held-out set from the same distribution gives the chance rate of the metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def _np(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected an (n, d) array, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{int((~np.isfinite(x)).any(1).sum())} of {len(x)} points contain NaN or inf")
    return x


@dataclass
class ModeCoverage:
    """Mode weights and coverage of a sample set on a mixture.

    Attributes:
        weights: ``(K,)`` fraction of all samples within the radius of each component.
        covered: ``(K,)`` bool, weight ≥ ``min_weight``.
        n_covered: number of covered components.
        outside: fraction of samples near no component.
    """

    weights: np.ndarray
    covered: np.ndarray
    n_covered: int
    outside: float


def mode_coverage(samples, means, std: float | None, radius_in_std: float = 3.0,
                  min_weight: float = 0.05) -> ModeCoverage:
    """Which mixture components the samples cover.

    Args:
        samples: ``(n, d)``.
        means: ``(K, d)`` component locations (required: coverage is meaningless without them;
            for an unknown mixture pass k-means centres of a large reference sample).
        std: component standard deviation (> 0).
        radius_in_std: a sample belongs to its nearest component if within this many stds.
        min_weight: a component is covered if it holds at least this fraction of the samples.

    Raises:
        ValueError: missing means or std, dimension mismatch, non-finite samples, bad thresholds.
    """
    if means is None or std is None:
        raise ValueError("mode_coverage: component locations and std are required; for an unknown mixture "
                         "pass k-means centres of a large reference sample and their spread")
    x, mu = _np(samples), _np(means)
    if x.shape[1] != mu.shape[1]:
        raise ValueError(f"mode_coverage: samples have d={x.shape[1]}, means d={mu.shape[1]}")
    if not std > 0 or not radius_in_std > 0 or not 0 < min_weight < 1:
        raise ValueError(f"mode_coverage: std={std}, radius_in_std={radius_in_std}, min_weight={min_weight}; "
                         "allowed: std > 0, radius_in_std > 0, 0 < min_weight < 1")
    d = np.sqrt(((x[:, None, :] - mu[None]) ** 2).sum(-1))  # (n, K)
    k = d.argmin(1)
    near = d[np.arange(len(x)), k] <= radius_in_std * std
    w = np.bincount(k[near], minlength=len(mu)) / len(x)
    cov = w >= min_weight
    return ModeCoverage(w, cov, int(cov.sum()), float(1 - near.mean()))


def memorisation_fraction(samples, reference, ratio: float = 1 / 3) -> float:
    """Fraction of samples whose nearest reference point is < ``ratio`` × the second nearest.

    Raises:
        ValueError: fewer than 2 reference points, dimension mismatch, ratio outside (0, 1).
    """
    from scipy.spatial import cKDTree

    x, ref = _np(samples), _np(reference)
    if len(ref) < 2:
        raise ValueError(f"memorisation_fraction: need >= 2 reference points, got {len(ref)}")
    if x.shape[1] != ref.shape[1]:
        raise ValueError(f"memorisation_fraction: samples have d={x.shape[1]}, reference d={ref.shape[1]}")
    if not 0 < ratio < 1:
        raise ValueError(f"memorisation_fraction: ratio={ratio}; allowed: 0 < ratio < 1")
    d, _ = cKDTree(ref).query(x, k=2)
    return float(np.mean(d[:, 0] < ratio * d[:, 1]))


@dataclass
class MemorisationReport:
    """Memorisation against the training set and, as the chance rate, a held-out set.

    Attributes:
        train: memorised fraction w.r.t. the training points.
        heldout: the same rule w.r.t. an equally large held-out set.
        nn_distance_ratio: median over samples of d(nearest train) / d(nearest held-out)
            (≪ 1: samples sit on training points; ≈ 1: no preference).
    """

    train: float
    heldout: float
    nn_distance_ratio: float


def memorisation_report(samples, train, heldout, ratio: float = 1 / 3) -> MemorisationReport:
    """:class:`MemorisationReport` of ``samples`` against ``train`` and ``heldout`` (same size).

    Raises:
        ValueError: as :func:`memorisation_fraction`, or sets of different sizes.
    """
    from scipy.spatial import cKDTree

    tr, ho = _np(train), _np(heldout)
    if len(tr) != len(ho):
        raise ValueError(f"memorisation_report: train has {len(tr)} points, heldout {len(ho)}; use equal sizes "
                         "so the held-out rate is the chance rate")
    x = _np(samples)
    dt = cKDTree(tr).query(x, k=1)[0]
    dh = cKDTree(ho).query(x, k=1)[0]
    return MemorisationReport(memorisation_fraction(x, tr, ratio), memorisation_fraction(x, ho, ratio),
                              float(np.median(dt / np.maximum(dh, 1e-300))))
