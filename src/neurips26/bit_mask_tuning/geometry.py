"""Update geometry of a weight delta ΔW = W_after − W_before (per matrix).

The abstract names three measures (effective rank, spectrum drift, principal-weight overlap)
without formulas; the forms below are inferred from the analyses the abstract's wording echoes:
Roy & Vetterli (2007) for the effective rank, Zhu et al. 2025 ("The Path Not Taken", arXiv
2511.08567) for spectrum drift and principal weights (principal weights as in LIFT, Liu et al.
2025). "Closer to FPT" is read as a smaller |metric(method) − metric(FPT)|.
"""

from __future__ import annotations

import math

import torch


def _check(m: torch.Tensor, name: str) -> torch.Tensor:
    if m.dim() != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(m.shape)}")
    m = m.detach().double()
    if not torch.isfinite(m).all():
        raise ValueError(f"{name} has non-finite entries")
    return m


def effective_rank(delta: torch.Tensor) -> float:
    """Effective rank ``erank = exp(−Σ p_i log p_i)``, ``p_i = σ_i / Σ_j σ_j`` (Roy & Vetterli 2007).

    Args:
        delta: a 2-D matrix (any float dtype). An all-zero matrix has erank 0.

    Returns:
        a float in [0, min(shape)] (1 for rank one, r for r equal singular values).

    Raises:
        ValueError: not 2-D or non-finite.
    """
    s = torch.linalg.svdvals(_check(delta, "delta"))
    total = s.sum()
    if total <= 0:
        return 0.0
    p = s / total
    p = p[p > 0]
    return float(torch.exp(-(p * p.log()).sum()))                                  # exp(H(p))


def spectrum_drift(weight: torch.Tensor, delta: torch.Tensor, q: int = 16) -> float:
    """Relative drift of the top-q singular values, ``‖σ_{1:q}(W+ΔW) − σ_{1:q}(W)‖₂ / ‖σ_{1:q}(W)‖₂``.

    Raises:
        ValueError: shapes differ, q < 1, non-finite entries.
    """
    w, d = _check(weight, "weight"), _check(delta, "delta")
    if w.shape != d.shape:
        raise ValueError(f"weight {tuple(w.shape)} and delta {tuple(d.shape)} shapes differ")
    if q < 1:
        raise ValueError(f"q={q}; must be >= 1")
    q = min(q, min(w.shape))
    s0 = torch.linalg.svdvals(w)[:q]
    s1 = torch.linalg.svdvals(w + d)[:q]
    return float(torch.linalg.norm(s1 - s0) / torch.linalg.norm(s0))


def principal_weights(weight: torch.Tensor, q: int, alpha: float) -> torch.Tensor:
    """Bool mask of the top-α fraction of entries of ``|U_q Σ_q V_qᵀ|`` (the rank-q part of W).

    Raises:
        ValueError: α not in (0, 1], q < 1.
    """
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha={alpha}; must be in (0, 1]")
    if q < 1:
        raise ValueError(f"q={q}; must be >= 1")
    w = _check(weight, "weight")
    u, s, vh = torch.linalg.svd(w, full_matrices=False)
    q = min(q, s.numel())
    low = (u[:, :q] * s[:q]) @ vh[:q]
    return _top_fraction(low.abs(), alpha)


def _top_fraction(score: torch.Tensor, alpha: float) -> torch.Tensor:
    n = max(1, int(math.ceil(alpha * score.numel())))
    idx = torch.topk(score.flatten(), n).indices
    out = torch.zeros(score.numel(), dtype=torch.bool)
    out[idx] = True
    return out.view_as(score)


def principal_weight_overlap(weight: torch.Tensor, delta: torch.Tensor, *, q: int = 16,
                             alpha: float | None = None) -> float:
    """``|P ∩ U| / |U|``: share of the updated entries U that are principal weights P.

    U is the support of ΔW when it is sparser than α (a mask's deletions), else the top-α
    entries of |ΔW|; P are the top-α entries of the rank-q part (:func:`principal_weights`).
    ``alpha`` defaults to the support density of ΔW (at least 1 %). A random U gives ≈ α.

    Raises:
        ValueError: shapes differ or invalid q/α.
    """
    w, d = _check(weight, "weight"), _check(delta, "delta")
    if w.shape != d.shape:
        raise ValueError(f"weight {tuple(w.shape)} and delta {tuple(d.shape)} shapes differ")
    nnz = int((d != 0).sum())
    if nnz == 0:
        return 0.0
    a = alpha if alpha is not None else max(0.01, nnz / d.numel())
    upd = (d != 0) if nnz <= a * d.numel() else _top_fraction(d.abs(), a)
    prin = principal_weights(w, q, a)
    return float((upd & prin).sum() / upd.sum())


def geometry(weight: torch.Tensor, delta: torch.Tensor, q: int = 16, alpha: float = 0.05) -> dict[str, float]:
    """All three measures of one matrix: ``effective_rank``, ``spectrum_drift``, ``principal_overlap``."""
    return {"effective_rank": effective_rank(delta), "spectrum_drift": spectrum_drift(weight, delta, q),
            "principal_overlap": principal_weight_overlap(weight, delta, q=q, alpha=alpha)}
