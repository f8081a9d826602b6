"""The Lanczos Gaussian sampler: ξ ≈ Σ^{1/2} z from k covariance-vector products.

Given a symmetric positive semi-definite Σ available only through ``v ↦ Σ v`` and a standard
normal z, k Lanczos steps started at z/‖z‖ give an orthonormal basis V_k = [v_1 … v_k] of the
Krylov space K_k(Σ, z) and a tridiagonal T_k = V_kᵀ Σ V_k with

    Σ V_k = V_k T_k + β_k v_{k+1} e_kᵀ,                                  (Lanczos relation)

and the sampler returns

    ξ_k = ‖z‖ · V_k · T_k^{1/2} · e_1                                    (paper: LGS step 3)

which equals Σ^{1/2} z exactly when k reaches the dimension of K(Σ, z) (at most d). The error
decays geometrically in k at a rate governed by κ(Σ) (Chow & Saad 2014; the paper proves
exponential decay). x_{t-1} = μ_t + ξ_k is then a sample of the reverse step.

Numerics (inferred: standard safeguards of a short Lanczos recursion):

* full re-orthogonalisation (classical Gram–Schmidt, twice) — cheap at small k;
* breakdown (β_j ≈ 0, z in an invariant subspace) stops that sample's recursion: the
  remaining basis vectors are zero, T_k becomes block diagonal and T_k^{1/2} e_1 only involves
  the first block, which is then exact;
* negative Ritz values (non-PSD operator: learned, non-symmetric Jacobians, fp16) are clipped
  to 0 and counted;
* k is capped at d.

Everything is batched: a batch of B independent operators (one per sample x_t) is handled by a
single matvec on a (B, d) tensor.

References:
    Chow, E. & Saad, Y. (2014). Preconditioned Krylov subspace methods for sampling
    multivariate Gaussian distributions. SIAM J. Sci. Comput. 36(2), A588–A608.
    Akhtar, El Gadarri, Farias, Jozefiak (2026). The Value of Covariance Matching in Gaussian
    DDPMs and the Lanczos Sampler. arXiv:2605.22723.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

import torch

Matvec = Callable[[torch.Tensor], torch.Tensor]


@dataclass
class LanczosDecomposition:
    """Result of k batched Lanczos steps on v ↦ Σ_b v, b = 1..B.

    Attributes:
        basis: V, shape (B, k, d); rows are orthonormal Lanczos vectors (zero after breakdown).
        alpha: diagonal of T_k, shape (B, k).
        beta: off-diagonal of T_k, shape (B, k-1) (zero where the recursion broke down).
        z_norm: ‖z_b‖, shape (B,).
        breakdown: number of samples whose recursion broke down before k steps (int).
        matvecs: number of calls to the matvec (= k; each call handles the whole batch).
    """

    basis: torch.Tensor
    alpha: torch.Tensor
    beta: torch.Tensor
    z_norm: torch.Tensor
    breakdown: int
    matvecs: int

    @property
    def k(self) -> int:
        """Number of Lanczos steps taken."""
        return int(self.alpha.shape[1])

    def tridiagonal(self, k: int | None = None) -> torch.Tensor:
        """Dense T_k (leading k×k block, Lanczos is nested), shape (B, k, k)."""
        k = self.k if k is None else k
        T = torch.diag_embed(self.alpha[:, :k])
        if k > 1:
            off = torch.diag_embed(self.beta[:, : k - 1], offset=1)
            T = T + off + off.transpose(1, 2)
        return T


def _check_batch(z: torch.Tensor) -> None:
    if not isinstance(z, torch.Tensor):
        raise TypeError(f"z must be a torch.Tensor of shape (B, d), got {type(z).__name__}")
    if z.ndim != 2 or z.shape[0] < 1 or z.shape[1] < 1:
        raise ValueError(f"z must have shape (B, d) with B >= 1 and d >= 1, got shape {tuple(z.shape)}")
    if not torch.is_floating_point(z):
        raise TypeError(f"z must be a floating tensor, got dtype {z.dtype}")
    if not torch.isfinite(z).all():
        raise ValueError("z contains NaN or infinite entries")


def check_num_steps(k: int, d: int) -> int:
    """Validate the number of Lanczos steps and cap it at the dimension d.

    Returns:
        min(k, d).

    Raises:
        ValueError: if k is not a positive integer (Python or NumPy integer; bool is rejected).
    """
    try:
        kk = operator.index(k) if not isinstance(k, bool) else None
    except TypeError:
        kk = None
    if kk is None or kk <= 0:
        raise ValueError(f"number of Lanczos steps k must be a positive integer, got {k!r} "
                         f"(k > d = {d} is allowed and capped at d)")
    return min(kk, d)


def lanczos_tridiagonal(matvec: Matvec, z: torch.Tensor, k: int, *,
                        reorthogonalize: bool = True) -> LanczosDecomposition:
    """Run k Lanczos steps on a batch of symmetric operators, started at z_b/‖z_b‖.

    Args:
        matvec: maps V of shape (B, d) to (Σ_b V_b)_b of shape (B, d); must be linear in V
            (a zero row maps to a zero row).
        z: starting vectors, shape (B, d), floating dtype, finite and non-zero rows.
        k: number of steps, ≥ 1; capped at d.
            float16/bfloat16 z: the recursion runs in float32 (the matvec still gets the input dtype).
        reorthogonalize: full re-orthogonalisation against all previous vectors (default).

    Returns:
        A :class:`LanczosDecomposition` with k' = min(k, d) steps.

    Raises:
        ValueError: bad shapes, k ≤ 0, a zero row of z, or a matvec output of the wrong shape
            or with NaN/inf entries.

    Source: the Lanczos recursion (Golub & Van Loan, Matrix Computations), batched; breakdown
    handling and re-orthogonalisation inferred (standard safeguards).
    """
    _check_batch(z)
    B, d = z.shape
    k = check_num_steps(k, d)
    in_dtype = z.dtype
    z = z.to(_eig_dtype(in_dtype))          # half precision: recursion in float32, matvec in the input dtype
    z_norm = z.norm(dim=1)
    if (z_norm == 0).any():
        raise ValueError("z has a zero row; the Lanczos start vector z/‖z‖ is undefined")
    eps = torch.finfo(z.dtype).eps
    V = z.new_zeros(B, k, d)
    alpha = z.new_zeros(B, k)
    beta = z.new_zeros(B, max(k - 1, 0))
    broken = torch.zeros(B, dtype=torch.bool, device=z.device)
    scale = z.new_zeros(B)
    v = z / z_norm[:, None]
    for j in range(k):
        V[:, j] = v
        w = matvec(v.to(in_dtype))
        if w.shape != v.shape:
            raise ValueError(f"matvec returned shape {tuple(w.shape)}, expected {tuple(v.shape)}")
        if not torch.isfinite(w).all():
            raise ValueError(f"matvec returned NaN/inf at Lanczos step {j + 1}")
        w = w.to(z.dtype)
        a = (w * v).sum(dim=1)                                   # α_j = v_jᵀ Σ v_j
        alpha[:, j] = a
        scale = torch.maximum(scale, a.abs())
        if j == k - 1:
            break
        w = w - a[:, None] * v                                   # w = Σ v_j − α_j v_j − β_{j-1} v_{j-1}
        if j > 0:
            w = w - beta[:, j - 1, None] * V[:, j - 1]
        if reorthogonalize:
            for _ in range(2):                                   # CGS2 against v_1..v_j
                coef = torch.einsum("bjd,bd->bj", V[:, : j + 1], w)
                w = w - torch.einsum("bj,bjd->bd", coef, V[:, : j + 1])
        b = w.norm(dim=1)                                        # β_j = ‖w‖
        stop = (b <= 100 * eps * torch.clamp(scale, min=eps)) | broken
        broken = broken | stop
        b = torch.where(stop, torch.zeros_like(b), b)
        beta[:, j] = b
        v = torch.where(stop[:, None], torch.zeros_like(w), w / torch.where(stop, 1.0, b)[:, None])
    return LanczosDecomposition(V, alpha, beta, z_norm, int(broken.sum()), k)


def lanczos_sqrt(decomp: LanczosDecomposition, k: int | None = None, *,
                 clip_tol: float | None = None) -> tuple[torch.Tensor, int]:
    """ξ_k = ‖z‖ V_k T_k^{1/2} e_1 ≈ Σ^{1/2} z from a Lanczos decomposition.

    Args:
        decomp: output of :func:`lanczos_tridiagonal`.
        k: use the leading k steps (1 ≤ k ≤ decomp.k); default all.
        clip_tol: Ritz values below ``-clip_tol`` are counted as clipped (all negative values
            are set to 0); default 1e3·eps·max|α| (round-off is not counted).

    Returns:
        (ξ of shape (B, d), number of clipped (negative) Ritz values).

    Raises:
        ValueError: if k is outside 1..decomp.k.

    Source: paper (LGS, "clip negative Ritz values"); T_k^{1/2} via a batched symmetric eigh.
    """
    k = decomp.k if k is None else k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= decomp.k:
        raise ValueError(f"k must be an integer in 1..{decomp.k}, got {k!r}")
    T = decomp.tridiagonal(k)
    theta, S = torch.linalg.eigh(T.to(_eig_dtype(T.dtype)))     # T_k = S diag(θ) Sᵀ
    if clip_tol is None:
        clip_tol = 1e3 * torch.finfo(T.dtype).eps * float(decomp.alpha[:, :k].abs().max())
    clipped = int((theta < -clip_tol).sum())
    root = torch.sqrt(torch.clamp(theta, min=0.0))
    coeff = torch.einsum("bij,bj,bj->bi", S, root, S[:, 0, :]).to(T.dtype)  # T_k^{1/2} e_1
    xi = decomp.z_norm[:, None] * torch.einsum("bi,bid->bd", coeff, decomp.basis[:, :k])
    return xi, clipped


def lanczos_gaussian_sample(matvec: Matvec, z: torch.Tensor, k: int = 3, *,
                            reorthogonalize: bool = True) -> tuple[torch.Tensor, dict[str, int]]:
    """Draw ξ ≈ Σ^{1/2} z (so ξ ~≈ N(0, Σ)) with k Lanczos steps, matrix-free.

    Memory: (k + 2)·d floats per sample (V_k, w and z), against d² for a dense Σ.

    Args:
        matvec: (B, d) → (B, d), v ↦ Σ_b v (symmetric PSD; negative curvature is clipped). For a
            single vector z of shape (d,), matvec maps (d,) → (d,).
        z: standard normal draws, shape (B, d), or a single draw of shape (d,) (ξ then has shape (d,)).
        k: Lanczos steps (≥ 1, capped at d); each costs one matvec (one JVP in a DDPM).

    Returns:
        (ξ of shape (B, d), info) with info = {"k": steps used, "matvecs", "clipped",
        "breakdown"} (counts over the batch).

    Raises:
        ValueError: see :func:`lanczos_tridiagonal`.

    Source: paper, Lanczos Gaussian sampler (abstract: matrix-free, one covariance-vector product per
    Lanczos step); the formula ξ = ‖z‖ V_k T_k^{1/2} e_1 is the standard Lanczos approximation of Σ^{1/2} z
    (Chow & Saad 2014).
    """
    if isinstance(z, torch.Tensor) and z.ndim == 1:            # a single vector (d,): batch of one
        def batched(V: torch.Tensor) -> torch.Tensor:
            w = matvec(V[0])
            if not isinstance(w, torch.Tensor) or w.shape != V[0].shape:
                raise ValueError(f"matvec of a single vector (d,) = {tuple(V[0].shape)} must return the same shape, "
                                 f"got {tuple(getattr(w, 'shape', ()))}")
            return w[None]
        xi, info = lanczos_gaussian_sample(batched, z[None], k, reorthogonalize=reorthogonalize)
        return xi[0], info
    dec = lanczos_tridiagonal(matvec, z, k, reorthogonalize=reorthogonalize)
    xi, clipped = lanczos_sqrt(dec)
    return xi.to(z.dtype), {"k": dec.k, "matvecs": dec.matvecs, "clipped": clipped, "breakdown": dec.breakdown}


def dense_sqrt_apply(cov: torch.Tensor, z: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Σ^{1/2} z for a batch of dense covariances (the exact target of the Lanczos sampler).

    Uses the symmetric square root via ``eigh`` of 0.5(Σ + Σᵀ) with negative eigenvalues
    clipped to 0 (counted). Same law as a Cholesky factor L z, but pathwise comparable with
    the Lanczos sample for the same z.

    Args:
        cov: shape (B, d, d). z: shape (B, d).

    Returns:
        (Σ^{1/2} z of shape (B, d), number of clipped eigenvalues).

    Raises:
        ValueError: on mismatched shapes.
    """
    if cov.ndim != 3 or cov.shape[1] != cov.shape[2] or z.shape != cov.shape[:2]:
        raise ValueError(f"cov must be (B, d, d) and z (B, d); got {tuple(cov.shape)} and {tuple(z.shape)}")
    if not torch.isfinite(cov).all():
        raise ValueError("cov contains NaN or infinite entries")
    wd = _eig_dtype(cov.dtype)
    lam, U = torch.linalg.eigh(0.5 * (cov + cov.transpose(1, 2)).to(wd))
    tol = 1e3 * torch.finfo(cov.dtype).eps * float(lam.abs().max())
    clipped = int((lam < -tol).sum())
    root = torch.sqrt(torch.clamp(lam, min=0.0))
    return torch.einsum("bij,bj,bkj,bk->bi", U, root, U, z.to(wd)).to(z.dtype), clipped


def _eig_dtype(dtype: torch.dtype) -> torch.dtype:
    """Working dtype of the small eigendecompositions: float16/bfloat16 are promoted to float32
    (no half-precision ``eigh`` kernels; the k×k problem is negligible in cost)."""
    return torch.float32 if torch.finfo(dtype).bits < 32 else dtype
