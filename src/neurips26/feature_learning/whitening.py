"""Gram whitening: keep each step's change of the weight Gram, remove its rotational part.

For a weight W ∈ R^{q×p}, any left rotation Q W (Qᵀ Q = I) has the same Gram WᵀW, so by the
Feature Learning Equation it induces the same feature dynamics downstream of the layer. After the
base optimizer moves W1 → W2, Gram whitening replaces W2 by Q W2 with Q the orthogonal Procrustes
rotation that brings W2 closest to W1:

    Q = argmin_{QᵀQ=I} ‖Q W2 − W1‖_F = polar factor of M = W1 W2ᵀ  (M = U S Vᵀ → Q = U Vᵀ).

The Gram W2ᵀW2 is kept exactly; the part of the update that only rotates W is removed. When
q > p, M has rank ≤ p and Q is a partial isometry U_r V_rᵀ on its range: Q W2 still has Gram
W2ᵀW2 because V_r spans the columns of W2.

Polar factor: quintic Newton–Schulz iteration X ← X (15 I − 10 XᵀX + 3 (XᵀX)²)/8 after
Frobenius normalisation (Higham, "Functions of Matrices", 2008, on Newton–Schulz polar
iterations), or an SVD (exact). The default ``method="auto"`` takes the SVD on CPU (faster
there) and Newton–Schulz on an accelerator. Source of the rule: the paper's abstract (the Gram
captures feature dynamics) and the authors' released description of Gram-only updates; the
implementation is ours.

Not done: the base optimizer's state (momentum buffers, Adam moments) is not rotated; weight
decay acts before the rotation; biases are left as they are.
"""

from __future__ import annotations

import torch


def polar_factor_svd(M: torch.Tensor, rcond: float = 1e-12) -> torch.Tensor:
    """Polar factor U_r V_rᵀ of a square or rectangular matrix by SVD (singular values below
    ``rcond``·s_max dropped, giving the partial isometry for rank-deficient M).

    Raises:
        ValueError: M not 2-D or not finite.
    """
    _check(M)
    U, S, Vh = torch.linalg.svd(M, full_matrices=False)
    keep = S > rcond * S[0] if S.numel() and S[0] > 0 else torch.zeros_like(S, dtype=torch.bool)
    return U[:, keep] @ Vh[keep]


def polar_factor_newton_schulz(M: torch.Tensor, steps: int = 10) -> torch.Tensor:
    """Polar factor of M by ``steps`` quintic Newton–Schulz iterations.

    X_0 = M / ‖M‖_F, X_{k+1} = X_k (15 I − 10 X_kᵀX_k + 3 (X_kᵀX_k)²)/8. Each singular value
    σ ∈ (0, 1] moves by f(σ) = (15σ − 10σ³ + 3σ⁵)/8 towards 1 (f(1) = 1, f'(1) = f''(1) = 0);
    zero singular values stay 0. Small σ grow by 15/8 per step, so ill-conditioned M needs
    more steps (check ‖XᵀX − I‖ on the range, or use :func:`polar_factor_svd`).

    Raises:
        ValueError: M not 2-D or not finite, ``steps`` < 1.
    """
    _check(M)
    if steps < 1:
        raise ValueError(f"steps={steps}: need at least one Newton–Schulz step")
    X = M / torch.linalg.norm(M).clamp_min(torch.finfo(M.dtype).tiny)
    eye = torch.eye(X.shape[1], dtype=X.dtype, device=X.device)
    for _ in range(steps):
        A = X.T @ X
        X = X @ (15 * eye - 10 * A + 3 * (A @ A)) / 8   # X ← X(15I − 10XᵀX + 3(XᵀX)²)/8
    return X


def _check(M: torch.Tensor) -> None:
    if M.ndim != 2:
        raise ValueError(f"M must be a 2-D matrix, got shape {tuple(M.shape)}")
    if not torch.isfinite(M).all():
        raise ValueError(f"M has {int((~torch.isfinite(M)).sum())} non-finite entries (NaN/inf)")


METHODS = ("auto", "newton_schulz", "svd")


def resolve_method(method: str, device: torch.device | str) -> str:
    """The polar-factor path actually used: ``"auto"`` is the SVD on CPU and Newton–Schulz on an
    accelerator; the other names are returned unchanged.

    Why: on CPU a q×q SVD (LAPACK gesdd, about 10–20 q³ flops) is faster than 10 Newton–Schulz
    steps (3 q×q products each, 60 q³ flops), measured 1.4–2.1× at q = 256–1024 in
    ``benchmarks/feature_learning.py``; on a GPU matrix products are what the hardware does
    fastest and batched SVDs are slow, so Newton–Schulz is the usual choice there.

    Raises:
        ValueError: ``method`` not one of :data:`METHODS`.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r}; allowed: {', '.join(repr(m) for m in METHODS)}")
    if method != "auto":
        return method
    return "svd" if torch.device(device).type == "cpu" else "newton_schulz"


def whiten_update(W1: torch.Tensor, W2: torch.Tensor, method: str = "auto", steps: int = 10,
                  tol: float = 1e-4) -> tuple[torch.Tensor, bool]:
    """Q W2 with Q the polar factor of W1 W2ᵀ: W2's Gram, rotated back towards W1.

    Newton–Schulz does not converge in a fixed number of steps when W1 W2ᵀ is ill-conditioned
    (e.g. square layers at random initialisation, whose smallest singular values are tiny): the
    result then shrinks those directions and changes the Gram. With ``method="newton_schulz"``
    the relative Gram change ‖(QW2)ᵀ(QW2) − W2ᵀW2‖_F / ‖W2ᵀW2‖_F is checked and, above ``tol``,
    the exact SVD polar factor is used instead.

    Args:
        W1, W2: (q, p) weights before and after the base step (computed in their dtype).
        method: ``"auto"`` (default: SVD on CPU, Newton–Schulz on an accelerator, see
            :func:`resolve_method`), ``"newton_schulz"`` or ``"svd"``.
        steps: Newton–Schulz iterations. tol: Gram-change tolerance of the fallback check.

    Returns:
        ``(Q W2, fell_back)`` — ``fell_back`` is True when Newton–Schulz was replaced by the SVD.

    Raises:
        ValueError: unknown method, shape mismatch, non-finite entries.
    """
    if W1.shape != W2.shape or W1.ndim != 2:
        raise ValueError(f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be 2-D of the same shape")
    method = resolve_method(method, W2.device)
    M = W1 @ W2.T                                        # M = W1 W2ᵀ (q×q)
    if method == "svd":
        return polar_factor_svd(M) @ W2, False
    out = polar_factor_newton_schulz(M, steps) @ W2
    G2 = W2.T @ W2
    if torch.linalg.norm(out.T @ out - G2) <= tol * torch.linalg.norm(G2):
        return out, False
    return polar_factor_svd(M) @ W2, True


class GramWhitening(torch.optim.Optimizer):
    """Wrap any optimizer so that each step keeps the Gram change and removes the rotation.

    For each parameter with ≥ 2 dimensions (Linear weights; conv kernels flattened to
    (C_out, C_in·k_h·k_w)), after ``base.step()`` the new weight W2 is replaced by Q W2
    (:func:`whiten_update`). One-dimensional parameters (biases, norms) follow the base step.
    Steps where Newton–Schulz did not keep the Gram within ``tol`` use the SVD polar factor;
    they are counted in :attr:`fallbacks` (and :attr:`rotations` counts all rotations).

    Args:
        base: a constructed optimizer (``torch.optim.SGD(model.parameters(), ...)``).
        method: ``"auto"`` (default: the SVD on CPU, where it is faster, Newton–Schulz on an
            accelerator; see :func:`resolve_method`), ``"newton_schulz"`` (``steps`` iterations,
            the authors' description) or ``"svd"``. Both give the same polar factor up to the
            Newton–Schulz convergence error (checked, with an SVD fallback).
        steps: Newton–Schulz iterations (10 by default, as the authors describe).

    The base optimizer's state (momentum, Adam moments) is not rotated. Non-finite weights after
    the base step raise ``FloatingPointError`` (no silent NaN training).

    Raises:
        ValueError: unknown ``method`` or ``steps`` < 1. TypeError: ``base`` not an optimizer.
    """

    def __init__(self, base: torch.optim.Optimizer, method: str = "auto", steps: int = 10,
                 tol: float = 1e-4):
        if not isinstance(base, torch.optim.Optimizer):
            raise TypeError(f"base must be a torch.optim.Optimizer, got {type(base).__name__}")
        if method not in METHODS:
            raise ValueError(f"method={method!r}; allowed: {', '.join(repr(m) for m in METHODS)}")
        if steps < 1:
            raise ValueError(f"steps={steps}: need at least one Newton–Schulz step")
        self.base, self.method, self.steps, self.tol = base, method, steps, tol
        self.fallbacks = self.rotations = 0
        # share the base optimizer's groups and state (schedulers and zero_grad then act on both)
        self.param_groups = base.param_groups
        self.state = base.state
        self.defaults = base.defaults
        self._optimizer_step_pre_hooks = {}
        self._optimizer_step_post_hooks = {}

    @torch.no_grad()
    def step(self, closure=None):
        """One base step, then Q W2 for every ≥ 2-D parameter; returns the closure's loss."""
        before = [(p, p.detach().clone()) for g in self.param_groups for p in g["params"]
                  if p.ndim >= 2 and p.grad is not None]
        if closure is not None:
            with torch.enable_grad():
                loss = self.base.step(closure)
        else:
            loss = self.base.step()
        for p, w1 in before:
            if not torch.isfinite(p).all():
                raise FloatingPointError(f"GramWhitening: parameter of shape {tuple(p.shape)} is not finite after "
                                         "the base step (NaN/inf gradients or a too large learning rate)")
            W1, W2 = w1.reshape(w1.shape[0], -1), p.reshape(p.shape[0], -1)
            new, fell_back = whiten_update(W1, W2, self.method, self.steps, self.tol)
            p.copy_(new.reshape(p.shape))
            self.rotations += 1
            self.fallbacks += fell_back
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Zero the base optimizer's gradients."""
        self.base.zero_grad(set_to_none=set_to_none)

    def state_dict(self):
        """The base optimizer's state dict."""
        return self.base.state_dict()

    def load_state_dict(self, state_dict) -> None:
        """Load the base optimizer's state dict."""
        self.base.load_state_dict(state_dict)


def gram_relative_change(W_before: torch.Tensor, W_after: torch.Tensor) -> float:
    """‖W_afterᵀW_after − W_beforeᵀW_before‖_F / ‖W_beforeᵀW_before‖_F (float64)."""
    a, b = W_before.detach().to(torch.float64), W_after.detach().to(torch.float64)
    G0 = a.T @ a
    return float(torch.linalg.norm(b.T @ b - G0) / torch.linalg.norm(G0).clamp_min(1e-300))

