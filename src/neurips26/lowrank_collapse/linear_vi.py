"""The solvable case: reverse-KL VI with a linear field, where the low-rank bias is exact.

Field v = A x, flow map x(1) = e^A z, so q_A = N(0, S), S = e^A e^{Aᵀ}, and for a target N(0, Σ)

    KL(q_A ‖ p) = ½ [ tr(Σ⁻¹ S) − d + log det Σ − 2 tr A ]          (log det S = 2 tr A)

    ∇_A KL |_{A=0} = Σ⁻¹ − I.

If Σ⁻¹ − I = U D Uᵀ has rank k, gradient descent from A_0 = 0 stays in {U B Uᵀ}: the loss is
invariant under rotations of span(U)^⊥, so its gradient at any U B Uᵀ has no component there and
the complement block's derivative, tr(E) − tr(E), vanishes. Hence rank A_t ≤ k for every t and q
moves away from N(0, I) only in the k directions where the target differs — parsimony.
(Inferred: the paper's own statement is unknown; this is the exact linear instance of its
low-rank bias for VI.) From a small random init A_0 the components of A_t − A_0 outside span(U)
are first-order in ‖A_0‖.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def lowrank_precision_target(dim: int, rank: int, rng: np.random.Generator,
                             low: float = -0.6, high: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Σ⁻¹ = I + U D Uᵀ with U ``(dim, rank)`` orthonormal (random) and D ~ U[low, high] (> −1).

    Returns:
        ``(Sigma, U)``: the ``(dim, dim)`` float64 target covariance and the basis U.

    Raises:
        ValueError: rank outside 1..dim−1, or low ≤ −1 (Σ⁻¹ must be positive definite).
    """
    if not 1 <= rank < dim:
        raise ValueError(f"lowrank_precision_target: rank={rank}; allowed: 1..{dim - 1}")
    if low <= -1 or high <= low:
        raise ValueError(f"lowrank_precision_target: low={low}, high={high}; allowed: -1 < low < high")
    U, _ = np.linalg.qr(rng.normal(size=(dim, rank)))
    D = rng.uniform(low, high, size=rank)
    P = np.eye(dim) + (U * D) @ U.T
    return np.linalg.inv(P), U


def linear_field_kl(A: torch.Tensor, Sigma: torch.Tensor) -> torch.Tensor:
    """KL(N(0, e^A e^{Aᵀ}) ‖ N(0, Σ)) (differentiable in A; float64 recommended).

    Raises:
        ValueError: shape mismatch.
    """
    if A.shape != Sigma.shape or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"linear_field_kl: A {tuple(A.shape)} and Sigma {tuple(Sigma.shape)} must be equal square")
    d = A.shape[0]
    M = torch.matrix_exp(A)
    P = torch.linalg.inv(Sigma)
    return 0.5 * (torch.trace(P @ M @ M.T) - d + torch.logdet(Sigma) - 2 * torch.trace(A))


@dataclass
class LinearVIRun:
    """Trajectory of gradient descent on :func:`linear_field_kl`.

    Attributes:
        steps: recorded step indices.
        A: ``(len(steps), d, d)`` the field's matrix at those steps.
        kl: KL at every step (length ``n_steps + 1``).
        singular_values: ``(len(steps), d)`` singular values of A_t − A_0.
    """

    steps: np.ndarray
    A: np.ndarray
    kl: np.ndarray
    singular_values: np.ndarray


def train_linear_vi(Sigma: np.ndarray, n_steps: int = 300, lr: float = 0.1, A0: np.ndarray | None = None,
                    record_every: int = 10) -> LinearVIRun:
    """Gradient descent A ← A − lr ∇_A KL in float64 from ``A0`` (default 0).

    Raises:
        ValueError: bad sizes, lr ≤ 0, non-square or non-positive-definite Sigma.
    """
    Sigma = np.asarray(Sigma, dtype=np.float64)
    d = Sigma.shape[0]
    if Sigma.shape != (d, d) or np.any(np.linalg.eigvalsh((Sigma + Sigma.T) / 2) <= 0):
        raise ValueError("train_linear_vi: Sigma must be a symmetric positive-definite (d, d) matrix")
    if n_steps < 1 or lr <= 0 or record_every < 1:
        raise ValueError(f"train_linear_vi: n_steps={n_steps}, lr={lr}, record_every={record_every}; all must be > 0")
    S = torch.as_tensor(Sigma)
    A = torch.zeros(d, d, dtype=torch.float64) if A0 is None else torch.as_tensor(A0, dtype=torch.float64).clone()
    A_init = A.clone()
    A.requires_grad_(True)
    steps, As, kls, svs = [], [], [], []
    for t in range(n_steps + 1):
        kl = linear_field_kl(A, S)
        kls.append(float(kl.detach()))
        if t % record_every == 0 or t == n_steps:
            steps.append(t)
            As.append(A.detach().numpy().copy())
            svs.append(np.linalg.svd(As[-1] - A_init.numpy(), compute_uv=False))
        if t == n_steps:
            break
        (g,) = torch.autograd.grad(kl, A)
        with torch.no_grad():
            A -= lr * g
    return LinearVIRun(np.array(steps), np.array(As), np.array(kls), np.array(svs))
