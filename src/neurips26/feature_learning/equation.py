"""The Feature Learning Equation and the Virtual Covariance of a gradient step.

Notation (rows = samples): H ∈ R^{n×p} input features of a layer, W ∈ R^{q×p} its weight,
Z = H Wᵀ, G_H = ∂L/∂H, G_W = ∂L/∂W, η the step size.

- Feature Learning Equation (abstract: "a simple identity ... identifies the weight Gram matrix
  as the key object"): Wᵀ G_W = G_Hᵀ H (p×p). Proof by the chain rule: G_W = G_Zᵀ H and
  G_H = G_Z W, so Wᵀ G_W = Wᵀ G_Zᵀ H = (G_Z W)ᵀ H.
- Virtual features H̃ = H − η G_H (the features moved as if they were the parameters) and their
  Virtual Covariance VC = H̃ᵀH̃ − HᵀH = −η(HᵀG_H + G_HᵀH) + η² G_HᵀG_H.
- One gradient step W ← W − η G_W changes the Gram by
  Δ(WᵀW) = −η(WᵀG_W + G_WᵀW) + η² G_WᵀG_W, so by the identity
  Δ(WᵀW) − VC = η² (G_WᵀG_W − G_HᵀG_H) exactly: equal to first order in η.

All functions accept torch tensors or numpy arrays and compute in float64 (Gram differences
cancel badly in float32). References: the paper's abstract (the identity, the Virtual Covariance);
the algebra above is the chain rule (inferred: stated here so it can be checked).
"""

from __future__ import annotations

import numpy as np
import torch


def _f64(x, name: str) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x).detach().to(torch.float64)
    if t.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(t.shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} has {int((~torch.isfinite(t)).sum())} non-finite entries (NaN/inf)")
    return t


def _shapes(W, G_W, H, G_H) -> tuple[torch.Tensor, ...]:
    W, G_W, H, G_H = _f64(W, "W"), _f64(G_W, "G_W"), _f64(H, "H"), _f64(G_H, "G_H")
    if W.shape != G_W.shape:
        raise ValueError(f"W {tuple(W.shape)} and G_W {tuple(G_W.shape)} must have the same shape (q, p)")
    if H.shape != G_H.shape:
        raise ValueError(f"H {tuple(H.shape)} and G_H {tuple(G_H.shape)} must have the same shape (n, p)")
    if W.shape[1] != H.shape[1]:
        raise ValueError(f"W has p = {W.shape[1]} input columns but H has p = {H.shape[1]} feature columns")
    return W, G_W, H, G_H


def feature_learning_equation(W, G_W, H, G_H) -> tuple[torch.Tensor, torch.Tensor]:
    """Both sides of the Feature Learning Equation, Wᵀ G_W and G_Hᵀ H (each (p, p), float64).

    Args:
        W: (q, p) weight. G_W: (q, p) ∂L/∂W. H: (n, p) input features. G_H: (n, p) ∂L/∂H.

    Raises:
        ValueError: on mismatched shapes or non-finite entries.
    """
    W, G_W, H, G_H = _shapes(W, G_W, H, G_H)
    return W.T @ G_W, G_H.T @ H  # Wᵀ G_W = G_Hᵀ H


def feature_learning_residual(W, G_W, H, G_H) -> float:
    """Relative residual max|Wᵀ G_W − G_Hᵀ H| / max(max|G_Hᵀ H|, tiny) of the identity (float64).

    ≈ 1e-15 when the four matrices come from the same forward/backward pass.
    """
    lhs, rhs = feature_learning_equation(W, G_W, H, G_H)
    return float((lhs - rhs).abs().max() / rhs.abs().max().clamp_min(1e-300))


def virtual_features(H, G_H, eta: float) -> torch.Tensor:
    """H̃ = H − η G_H, the features moved by one gradient step as if they were parameters ((n, p), float64)."""
    _eta(eta)
    H, G_H = _f64(H, "H"), _f64(G_H, "G_H")
    if H.shape != G_H.shape:
        raise ValueError(f"H {tuple(H.shape)} and G_H {tuple(G_H.shape)} must have the same shape (n, p)")
    return H - eta * G_H


def virtual_covariance(H, G_H, eta: float) -> torch.Tensor:
    """VC = H̃ᵀH̃ − HᵀH = −η(HᵀG_H + G_HᵀH) + η² G_HᵀG_H ((p, p), float64).

    Raises:
        ValueError: ``eta`` not finite or negative; shape mismatch; non-finite entries.
    """
    _eta(eta)
    H, G_H = _f64(H, "H"), _f64(G_H, "G_H")
    if H.shape != G_H.shape:
        raise ValueError(f"H {tuple(H.shape)} and G_H {tuple(G_H.shape)} must have the same shape (n, p)")
    cross = H.T @ G_H
    return -eta * (cross + cross.T) + eta**2 * (G_H.T @ G_H)


def gram_change(W, G_W, eta: float) -> torch.Tensor:
    """Δ(WᵀW) of one gradient step W ← W − η G_W, computed directly as W'ᵀW' − WᵀW ((p, p), float64)."""
    _eta(eta)
    W, G_W = _f64(W, "W"), _f64(G_W, "G_W")
    if W.shape != G_W.shape:
        raise ValueError(f"W {tuple(W.shape)} and G_W {tuple(G_W.shape)} must have the same shape (q, p)")
    W2 = W - eta * G_W
    return W2.T @ W2 - W.T @ W


def second_order_gap(G_W, G_H, eta: float) -> torch.Tensor:
    """η² (G_WᵀG_W − G_HᵀG_H), the exact difference Δ(WᵀW) − VC ((p, p), float64)."""
    _eta(eta)
    G_W, G_H = _f64(G_W, "G_W"), _f64(G_H, "G_H")
    if G_W.shape[1] != G_H.shape[1]:
        raise ValueError(f"G_W has p = {G_W.shape[1]} columns but G_H has p = {G_H.shape[1]}")
    return eta**2 * (G_W.T @ G_W - G_H.T @ G_H)


def gram_vc_residual(W, G_W, H, G_H, eta: float) -> float:
    """Relative residual ‖Δ(WᵀW) − VC − η²(G_WᵀG_W − G_HᵀG_H)‖_F / ‖Δ(WᵀW)‖_F (≈ 1e-14 in float64)."""
    W, G_W, H, G_H = _shapes(W, G_W, H, G_H)
    d = gram_change(W, G_W, eta)
    r = d - virtual_covariance(H, G_H, eta) - second_order_gap(G_W, G_H, eta)
    return float(torch.linalg.norm(r) / torch.linalg.norm(d).clamp_min(1e-300))


def first_order_mismatch(W, G_W, H, G_H, eta: float) -> float:
    """‖Δ(WᵀW) − VC‖_F / ‖Δ(WᵀW)‖_F: O(η) because the first-order terms coincide."""
    W, G_W, H, G_H = _shapes(W, G_W, H, G_H)
    d = gram_change(W, G_W, eta)
    return float(torch.linalg.norm(d - virtual_covariance(H, G_H, eta)) / torch.linalg.norm(d).clamp_min(1e-300))


def _eta(eta: float) -> None:
    if not (isinstance(eta, (int, float)) and np.isfinite(eta) and eta >= 0):
        raise ValueError(f"eta={eta!r}: the step size must be a finite number >= 0")
