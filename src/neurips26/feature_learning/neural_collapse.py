"""Neural-collapse metric NC1: within-class variability relative to between-class spread.

NC1 = tr(Σ_W Σ_B⁺) / C, with Σ_W = (1/n) Σ_i (h_i − μ_{y_i})(h_i − μ_{y_i})ᵀ, Σ_B = (1/C) Σ_c
(μ_c − μ_G)(μ_c − μ_G)ᵀ and ⁺ the Moore–Penrose pseudo-inverse. NC1 → 0 when every class collapses
to its mean. Source: Papyan, Han & Donoho, "Prevalence of neural collapse during the terminal
phase of deep learning training" (PNAS 2020). The paper's abstract links Neural Collapse to
target linearity: class-mean features are exactly target-linear.
"""

from __future__ import annotations

import numpy as np
import torch


def nc1(features, labels) -> float:
    """NC1 = tr(Σ_W Σ_B⁺)/C of (n, p) features with integer labels (n,).

    Raises:
        ValueError: shape mismatch, NaN/inf features, fewer than 2 classes.
    """
    H = features.detach().cpu().to(torch.float64).numpy() if isinstance(features, torch.Tensor) \
        else np.asarray(features, dtype=np.float64)
    y = np.asarray(labels.detach().cpu() if isinstance(labels, torch.Tensor) else labels)
    if H.ndim > 2:
        H = H.reshape(H.shape[0], -1)
    if H.ndim != 2 or y.shape != (H.shape[0],):
        raise ValueError(f"features must be (n, p) and labels (n,); got {H.shape} and {y.shape}")
    if not np.all(np.isfinite(H)):
        raise ValueError("features contain NaN/inf")
    classes, inv = np.unique(y, return_inverse=True)
    C = len(classes)
    if C < 2:
        raise ValueError(f"NC1 needs at least 2 classes, got {C}")
    counts = np.bincount(inv, minlength=C).astype(np.float64)
    means = np.zeros((C, H.shape[1]))
    np.add.at(means, inv, H)
    means /= counts[:, None]
    within = H - means[inv]
    sigma_w = within.T @ within / len(H)               # Σ_W
    between = means - H.mean(0)
    sigma_b = between.T @ between / C                  # Σ_B
    return float(np.trace(sigma_w @ np.linalg.pinv(sigma_b, rcond=1e-10, hermitian=True)) / C)
