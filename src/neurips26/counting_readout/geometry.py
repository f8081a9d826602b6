"""Principal angles between the count subspace and the digit rows of the unembedding.

``θ_k = arccos σ_k(Q_Aᵀ Q_B)`` for orthonormal bases Q_A, Q_B (Björck & Golub 1973); the
largest cosine ``cos θ₁`` says whether *any* direction of one space is readable by the other.
Random baseline: for independent random unit vectors in R^d, ``E|cos| ≈ √(2/(π d))``.

Source: abstract (digit-token columns of W_U orthogonal to the count subspace); inferred: the
principal-angle measure and the random baseline (standard).
"""

from __future__ import annotations

import math

import numpy as np


def orthonormal_basis(A, name: str = "A") -> np.ndarray:
    """Orthonormal basis [d, k] of the column span of ``A`` [d, p]: ``A`` itself when its columns
    are already orthonormal (order and signs kept), else the left singular vectors of the nonzero
    singular values (relative tolerance 1e-10).

    Raises:
        ValueError: ``A`` is not 2-D, has non-finite entries, or spans nothing.
    """
    A = np.asarray(A, np.float64)
    if A.ndim != 2 or not np.isfinite(A).all():
        raise ValueError(f"{name} must be a finite [d, p] matrix, got shape {A.shape}")
    if A.shape[1] <= A.shape[0] and np.allclose(A.T @ A, np.eye(A.shape[1]), atol=1e-8):
        return A
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    keep = s > 1e-10 * (s[0] if len(s) else 0)
    if not keep.any():
        raise ValueError(f"{name} spans no direction (all columns zero)")
    return U[:, keep]


def principal_cosines(A, B) -> np.ndarray:
    """Cosines of the principal angles between span(A) and span(B), descending (cos θ₁ first).

    Args:
        A: [d, p] and B: [d, q] (columns span the spaces; need not be orthonormal).

    Raises:
        ValueError: different ambient dimensions d.
    """
    A, B = np.asarray(A, np.float64), np.asarray(B, np.float64)
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"ambient dimensions differ: {A.shape[0]} vs {B.shape[0]}")
    s = np.linalg.svd(orthonormal_basis(A, "A").T @ orthonormal_basis(B, "B"), compute_uv=False)
    return np.clip(s, 0.0, 1.0)                                             # σ_k = cos θ_k


def principal_angles_deg(A, B) -> np.ndarray:
    """Principal angles in degrees, ascending (θ₁ smallest)."""
    return np.degrees(np.arccos(principal_cosines(A, B)))


def random_abs_cosine(d: int) -> float:
    """``E|cos|`` between two independent uniformly random unit vectors in R^d, ≈ √(2/(π d))
    (exact: Γ(d/2) / (√π Γ((d+1)/2)))."""
    if d < 2:
        raise ValueError(f"d={d}; allowed: d >= 2")
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


def readout_alignment(Q_count, digit_rows) -> dict:
    """How readable the count subspace is by the digit rows.

    Args:
        Q_count: count subspace basis [d, r].
        digit_rows: digit rows of W_U [k, d] (readout space).

    Returns:
        ``cos_theta1`` (largest principal cosine with the span of the raw rows),
        ``cos_theta1_contrast`` (with the span of the rows minus their mean: only row
        *differences* change which digit wins), ``mean_abs_cos`` (mean over rows and count
        directions of |cos| between a row and a direction), ``random_abs_cos`` (the baseline
        at this d), ``angles_deg`` (all principal angles with the raw rows).
    """
    Q = orthonormal_basis(Q_count, "Q_count")
    W = np.asarray(digit_rows, np.float64)
    if W.ndim != 2 or W.shape[1] != Q.shape[0]:
        raise ValueError(f"digit_rows must be [k, {Q.shape[0]}], got {W.shape}")
    cos = principal_cosines(Q, W.T)
    contrast = W - W.mean(0)
    cc = principal_cosines(Q, contrast.T) if np.abs(contrast).max() > 0 else np.zeros(1)
    Wn = W / np.linalg.norm(W, axis=1, keepdims=True)
    return {"cos_theta1": float(cos[0]), "cos_theta1_contrast": float(cc[0]),
            "mean_abs_cos": float(np.abs(Wn @ Q).mean()), "random_abs_cos": random_abs_cosine(Q.shape[0]),
            "angles_deg": np.degrees(np.arccos(cos)).tolist()}


def random_principal_cosine(d: int, p: int, q: int, *, n: int = 200, quantile: float = 0.95,
                            seed: int = 0) -> float:
    """The ``quantile`` of cos θ₁ between two independent uniformly random subspaces of
    dimensions ``p`` and ``q`` in R^d (Monte Carlo over ``n`` pairs): the largest principal cosine
    that "as orthogonal as chance" still allows.

    Raises:
        ValueError: ``p`` or ``q`` outside 1..d, or ``quantile`` outside (0, 1).
    """
    if not (1 <= p <= d and 1 <= q <= d) or not 0 < quantile < 1:
        raise ValueError(f"need 1 <= p, q <= d and 0 < quantile < 1; got d={d}, p={p}, q={q}, quantile={quantile}")
    rng = np.random.default_rng(seed)
    vals = [np.linalg.svd(np.linalg.qr(rng.standard_normal((d, p)))[0].T @ np.linalg.qr(rng.standard_normal((d, q)))[0],
                          compute_uv=False)[0] for _ in range(n)]
    return float(np.quantile(vals, quantile))
