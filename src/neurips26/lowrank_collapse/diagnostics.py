"""Gradient-rank diagnostics: exact and effective rank, the rank bound from layer signals,
principal angles to a data subspace, randomised SVD for wide layers.

For a linear layer y = W h the gradient of any loss that reaches W only through y is a sum of
outer products over every (sample, time step) at which the layer was evaluated:

    ∇_W L = Σ_n δ_n h_nᵀ,   δ_n = ∂L/∂y_n,                                    (1)

so rank ∇_W L ≤ min(rank H, rank Δ) ≤ min(out, in, N) with H = [h_n], Δ = [δ_n] and N = batch ×
time steps (Baker et al. 2024, "Low-Rank Learning by Design", for batches; time steps of a flow
act like extra batch entries — inferred). Through an exact Jacobian trace (log-densities of
continuous flows) W also enters directly, adding at most d outer products per evaluation
(d = state dimension), so the VI bound is min(out, in, N·(d + 1)) — inferred from the chain rule.

The bound is *trivially satisfied* when N·terms ≥ min(out, in): then only the effective rank is
informative.

Effective ranks of a matrix with singular values σ_i:

    participation ratio  PR = (Σ σ_i²)² / Σ σ_i⁴          (as in KPFlow, Hazelden et al. 2025)
    entropy rank         erank = exp(−Σ p_i log p_i),  p_i = σ_i / Σ σ_j   (Roy & Vetterli 2007)

Exact ranks are counted in float64 with a tolerance relative to σ_1 and to the precision the
matrix was *computed* in: rtol = max(m, n) · eps(source dtype) (numpy's matrix_rank rule with the
source's eps; float32 gradients cast to float64 would otherwise read as full rank).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

SUPPORTED_LAYERS = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)


def _as_matrix(M) -> torch.Tensor:
    M = torch.as_tensor(M)
    if M.ndim > 2:  # convolution weights (out, in, *kernel) → (out, in·kernel)
        M = M.reshape(M.shape[0], -1)
    if M.ndim != 2:
        raise ValueError(f"expected a matrix (or a conv weight), got shape {tuple(M.shape)}")
    return M


def singular_values(M, method: str = "exact", k: int | None = None, oversample: int = 10,
                    n_iter: int = 2) -> torch.Tensor:
    """Singular values of ``M`` in float64, largest first.

    Args:
        M: ``(m, n)`` tensor/array (a conv weight is flattened to ``(out, in·kernel)``).
        method: ``exact`` (``torch.linalg.svdvals``, O(mn·min(m, n))) or ``randomized``
            (``torch.svd_lowrank``: Halko, Martinsson & Tropp 2011, O(mn·(k + oversample)) —
            for wide layers; draws from torch's global generator).
        k: number of values for ``randomized`` (required there; ≤ min(m, n)).
        oversample, n_iter: randomised SVD oversampling and power iterations.

    Returns:
        ``(min(m, n),)`` (exact) or ``(k,)`` (randomised) float64 tensor.

    Raises:
        ValueError: unknown method, missing/invalid ``k``, or non-finite entries.
    """
    M = _as_matrix(M).detach().to(torch.float64)
    if not torch.isfinite(M).all():
        raise ValueError("singular_values: matrix has NaN or inf entries")
    if method == "exact":
        return torch.linalg.svdvals(M)
    if method == "randomized":
        r = min(M.shape)
        if k is None or not 1 <= k <= r:
            raise ValueError(f"singular_values(method='randomized'): k={k!r}; allowed: 1..{r}")
        q = min(r, k + oversample)
        _, s, _ = torch.svd_lowrank(M, q=q, niter=n_iter)
        return s[:k]
    raise ValueError(f"singular_values: method={method!r}; allowed: 'exact', 'randomized'")


SVD_METHODS = ("auto", "exact", "randomized")

#: ``auto`` uses the exact SVD while min(m, n) ≤ this factor × (k + oversample), the randomised
#: top-k SVD above: its cost O(mn(k + p)) only beats the exact O(mn·min(m, n)) once the matrix is
#: several sketch widths wide. Measured on CPU (benchmarks/lowrank_collapse.py, k = 32, p = 10):
#: exact/randomised time 0.07 at 96, 0.72 at 128, 0.98 at 160, 0.87 at 192, 1.35 at 256, 4.3 at 1024
RANDOMIZED_SIDE_FACTOR = 6


def choose_svd_method(shape: tuple[int, ...], k: int = 32, oversample: int = 10) -> str:
    """``"exact"`` when the matrix's smaller side is at most ``RANDOMIZED_SIDE_FACTOR·(k + oversample)``
    (252 for the default k = 32), else ``"randomized"`` (a conv weight's shape is read as
    (out, in·kernel)).

    Raises:
        ValueError: ``shape`` with fewer than 2 entries or a non-positive size, or k < 1.
    """
    if len(shape) < 2 or any(int(n) < 1 for n in shape):
        raise ValueError(f"choose_svd_method: shape={tuple(shape)}; expected (m, n, ...) with positive sizes")
    if int(k) < 1:
        raise ValueError(f"choose_svd_method: k={k!r}; allowed: an integer >= 1")
    m, n = int(shape[0]), int(math.prod(int(v) for v in shape[1:]))
    return "exact" if min(m, n) <= RANDOMIZED_SIDE_FACTOR * (int(k) + int(oversample)) else "randomized"


def rank_tolerance(shape: tuple[int, int], source_dtype: torch.dtype = torch.float32) -> float:
    """Relative tolerance max(m, n)·eps(source_dtype) for counting singular values above zero."""
    return max(shape) * torch.finfo(source_dtype).eps


def numerical_rank(M, rtol: float | None = None, source_dtype: torch.dtype | None = None) -> int:
    """#{i : σ_i > rtol · σ_1} (0 for the zero matrix).

    Args:
        M: matrix (float32 or float64; a conv weight is flattened).
        rtol: relative tolerance; default :func:`rank_tolerance` with ``source_dtype``
            (default: ``M``'s own dtype).

    Raises:
        ValueError: ``rtol`` not in (0, 1).
    """
    M = _as_matrix(M)
    src = source_dtype or (M.dtype if M.is_floating_point() else torch.float64)
    tol = rank_tolerance(tuple(M.shape), src) if rtol is None else rtol
    if not 0 < tol < 1:
        raise ValueError(f"numerical_rank: rtol={tol!r}; allowed: 0 < rtol < 1")
    s = singular_values(M)
    return 0 if s.numel() == 0 or s[0] == 0 else int((s > tol * s[0]).sum())


def participation_ratio(s) -> float:
    """PR = (Σ σ²)² / Σ σ⁴ of singular values ``s`` (1 ≤ PR ≤ len(s); 0 for all zeros)."""
    lam = torch.as_tensor(s, dtype=torch.float64) ** 2
    den = float((lam ** 2).sum())
    return 0.0 if den == 0 else float(lam.sum() ** 2) / den


def entropy_effective_rank(s) -> float:
    """exp(H(p)), p = σ / Σσ (Roy & Vetterli 2007); 0 for all zeros."""
    s = torch.as_tensor(s, dtype=torch.float64)
    tot = float(s.sum())
    if tot == 0:
        return 0.0
    p = s[s > 0] / tot
    return float(torch.exp(-(p * p.log()).sum()))


@dataclass
class RankSummary:
    """Exact and effective rank of one matrix.

    Attributes:
        shape: (m, n).
        rank: exact rank at ``rtol`` (``None`` when the SVD was randomised and its sketch could
            not certify the rank, see :func:`rank_summary`).
        participation_ratio, entropy_rank: effective ranks (from the values computed).
        top: the largest singular values (up to 8).
        rtol: tolerance used for ``rank``.
        method: ``exact`` or ``randomized``.
    """

    shape: tuple[int, int]
    rank: int | None
    participation_ratio: float
    entropy_rank: float
    top: list[float]
    rtol: float
    method: str


def _certified_rank(s: torch.Tensor, residual: float, full: int, tol: float) -> int | None:
    """The exact rank #{σ_i > tol·σ_1} of a matrix whose randomised sketch has singular values
    ``s`` (of Q Qᵀ M, largest first) and residual ‖M − Q Qᵀ M‖_F = ``residual``, or ``None`` when
    the sketch cannot decide it. By Weyl's inequality each true σ_i lies in [s_i, s_i + residual]
    (σ_i ≤ residual beyond the sketch), so the rank is certain when its lower and upper bounds
    meet; ``full`` is min(m, n)."""
    if s.numel() == 0 or float(s[0]) == 0.0:
        return 0 if residual == 0.0 else None
    s1 = float(s[0])
    lower = int((s > tol * (s1 + residual)).sum())
    upper = int((s + residual > tol * s1).sum()) + (full - s.numel() if residual > tol * s1 else 0)
    return lower if lower == upper else None


def rank_summary(M, method: str = "exact", k: int | None = None, rtol: float | None = None,
                 source_dtype: torch.dtype | None = None, oversample: int = 10, n_iter: int = 2,
                 fallback: bool = False) -> RankSummary:
    """:class:`RankSummary` of ``M`` (exact SVD, or randomised top-``k`` for wide layers).

    The randomised summary's effective ranks use only the top k values (a lower bound). Its exact
    ``rank`` is reported whenever the sketch certifies it (the residual ‖M − QQᵀM‖_F is small
    enough that every σ_i is on a known side of rtol·σ_1: a matrix of rank below
    k + oversample), else ``None``; with ``fallback=True`` (``RankMonitor``'s ``auto`` method)
    an uncertified rank is computed by the exact SVD instead, so it is never lost (``method``
    then reads ``exact``).

    Raises:
        ValueError: as :func:`singular_values`.
    """
    M = _as_matrix(M)
    src = source_dtype or (M.dtype if M.is_floating_point() else torch.float64)
    tol = rank_tolerance(tuple(M.shape), src) if rtol is None else rtol
    if method == "randomized":
        A = M.detach().to(torch.float64)
        if not torch.isfinite(A).all():
            raise ValueError("singular_values: matrix has NaN or inf entries")
        r = min(A.shape)
        if k is None or not 1 <= k <= r:
            raise ValueError(f"singular_values(method='randomized'): k={k!r}; allowed: 1..{r}")
        U, sq, _ = torch.svd_lowrank(A, q=min(r, k + oversample), niter=n_iter)
        residual = float((A - U @ (U.T @ A)).norm())
        rank = _certified_rank(sq, residual, r, tol)
        if rank is not None or not fallback:
            s = sq[:k]
            return RankSummary(tuple(M.shape), rank, participation_ratio(s), entropy_effective_rank(s),
                               [float(v) for v in s[:8]], tol, method)
        method = "exact"
    s = singular_values(M, method, k)
    rank = None
    if method == "exact":
        rank = 0 if s.numel() == 0 or s[0] == 0 else int((s > tol * s[0]).sum())
    return RankSummary(tuple(M.shape), rank, participation_ratio(s), entropy_effective_rank(s),
                       [float(v) for v in s[:8]], tol, method)


@dataclass
class RankBound:
    """rank ∇_W L ≤ ``bound`` = min(out, in, n_signals · terms_per_signal).

    Attributes:
        bound: the bound.
        trivial: True when n_signals · terms_per_signal ≥ min(out, in) (the bound says nothing
            beyond the layer's shape; report effective ranks instead).
        n_signals: N = batch × time steps at which the layer was evaluated.
        terms_per_signal: outer products per evaluation (1 for flow matching; d + 1 through an
            exact Jacobian trace).
    """

    bound: int
    trivial: bool
    n_signals: int
    terms_per_signal: int


def gradient_rank_bound(n_out: int, n_in: int, n_signals: int, terms_per_signal: int = 1) -> RankBound:
    """Bound (1) on the rank of a layer's gradient (see module docstring; source: Baker et al. 2024
    for batches, time steps and the trace term inferred).

    Raises:
        ValueError: a non-positive size.
    """
    for name, v in (("n_out", n_out), ("n_in", n_in), ("n_signals", n_signals), ("terms_per_signal", terms_per_signal)):
        if int(v) != v or v < 1:
            raise ValueError(f"gradient_rank_bound: {name}={v!r}; allowed: an integer >= 1")
    shape_bound = min(n_out, n_in)
    sig = n_signals * terms_per_signal
    return RankBound(min(shape_bound, sig), sig >= shape_bound, int(n_signals), int(terms_per_signal))


@dataclass
class LayerSignals:
    """Inputs h_n and output cotangents δ_n of one Linear layer, stacked over all evaluations.

    Attributes:
        inputs: ``(N, in)`` float64.
        cotangents: ``(N, out)`` float64.
    """

    inputs: torch.Tensor
    cotangents: torch.Tensor

    def gradient(self) -> torch.Tensor:
        """Σ_n δ_n h_nᵀ = Δᵀ H, shape ``(out, in)`` — equals ∇_W L when W enters only through y."""
        return self.cotangents.T @ self.inputs

    def rank_bound(self, rtol: float | None = None, source_dtype: torch.dtype = torch.float32) -> int:
        """min(rank H, rank Δ): the span bound on rank ∇_W L."""
        return min(numerical_rank(self.inputs, rtol, source_dtype), numerical_rank(self.cotangents, rtol, source_dtype))


@contextlib.contextmanager
def capture_layer_signals(layers: list[nn.Linear]):
    """Record every Linear layer's inputs and output cotangents during forward and backward.

    Usage::

        import torch
        from neurips26.lowrank_collapse import MLPVectorField, capture_layer_signals, eight_gaussians, flow_matching_loss
        torch.manual_seed(0)
        field = MLPVectorField(dim=2, width=32, depth=2)
        x1 = eight_gaussians().sample(256, torch.Generator().manual_seed(0))
        with capture_layer_signals(field.linear_layers) as signals:
            loss = flow_matching_loss(field, x1, torch.Generator().manual_seed(1)); loss.backward()
        grad = field.linear_layers[0].weight.grad       # float32; the signals are float64
        print(float((signals[0].gradient() - grad.double()).abs().max() / grad.abs().max()))   # ~1e-7
        print(signals[0].rank_bound())                  # min(rank H, rank Δ) = 3 (inputs: x and t)

    Yields a list (same order as ``layers``) filled with :class:`LayerSignals` when the block
    exits. A layer called several times (the steps of an ODE solve) contributes one row per call
    and sample; each call's inputs are paired with that call's cotangents by call index. Only
    first-order losses give (1) exactly (not a loss through a Jacobian trace).

    Raises:
        TypeError: a layer that is not ``nn.Linear`` (names the supported type).
    """
    for layer in layers:
        if not isinstance(layer, nn.Linear):
            raise TypeError(f"capture_layer_signals: {type(layer).__name__} is not supported; supported: nn.Linear")
    store = [{"h": [], "d": {}} for _ in layers]
    handles = []

    def make_hook(i):
        def hook(module, inputs, output):
            n = len(store[i]["h"])                       # index of this call of the layer
            store[i]["h"].append(inputs[0].detach().reshape(-1, inputs[0].shape[-1]))

            def grad_hook(g, n=n):
                # paired with its own forward call by index (not by arrival order: the order in
                # which autograd reaches the calls of a layer is not guaranteed to be the reverse
                # of the forward order); several backward passes add up, as weight.grad does
                g = g.detach().reshape(-1, g.shape[-1])
                store[i]["d"][n] = store[i]["d"][n] + g if n in store[i]["d"] else g

            if output.requires_grad:
                output.register_hook(grad_hook)
        return hook

    for i, layer in enumerate(layers):
        handles.append(layer.register_forward_hook(make_hook(i)))
    out: list[LayerSignals] = []
    try:
        yield out
    finally:
        for h in handles:
            h.remove()
    for layer, s in zip(layers, store):
        H = torch.cat(s["h"]).to(torch.float64) if s["h"] else torch.zeros(0, 0, dtype=torch.float64)
        if s["d"]:
            # a call whose output the loss never reached has a zero cotangent
            D = torch.cat([s["d"][n] if n in s["d"] else h.new_zeros(h.shape[0], layer.out_features)
                           for n, h in enumerate(s["h"])]).to(torch.float64)
        else:
            D = torch.zeros(0, 0, dtype=torch.float64)
        out.append(LayerSignals(H, D))


def top_right_singular_vectors(M, k: int) -> np.ndarray:
    """``(n, k)`` orthonormal top-k right singular vectors of ``M`` (the update's input directions)."""
    M = _as_matrix(M).detach().to(torch.float64)
    if not 1 <= k <= min(M.shape):
        raise ValueError(f"top_right_singular_vectors: k={k}; allowed: 1..{min(M.shape)}")
    _, _, Vh = torch.linalg.svd(M, full_matrices=False)
    return Vh[:k].T.numpy()


def principal_angle_cosines(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Cosines of the principal angles between span(A) and span(B) (columns), largest first
    (scipy.linalg.subspace_angles; Björck & Golub 1973). 1 = shared direction, 0 = orthogonal."""
    from scipy.linalg import subspace_angles

    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or B.ndim != 2 or A.shape[0] != B.shape[0]:
        raise ValueError(f"principal_angle_cosines: bases of shapes {A.shape} and {B.shape}; expected (n, k) and (n, l)")
    return np.sort(np.cos(subspace_angles(A, B)))[::-1]


def subspace_energy_fraction(M, basis: np.ndarray) -> float:
    """‖M U‖²_F / ‖M‖²_F: the share of the update's (row-space) energy inside span(U).

    An isotropic update puts k/n there (U: ``(n, k)`` orthonormal)."""
    M = _as_matrix(M).detach().to(torch.float64).numpy()
    U = np.asarray(basis, dtype=np.float64)
    if U.shape[0] != M.shape[1]:
        raise ValueError(f"subspace_energy_fraction: basis has {U.shape[0]} rows; the matrix has {M.shape[1]} columns")
    tot = float((M ** 2).sum())
    return 0.0 if tot == 0 else float(((M @ U) ** 2).sum()) / tot


def gaussian_reference_participation_ratio(shape: tuple[int, int], n_draws: int = 8, seed: int = 0) -> float:
    """Mean participation ratio of i.i.d. Gaussian matrices of ``shape``: the effective rank of an
    update with no rank bias (≈ n / (1 + n/m) for m ≥ n by Marchenko–Pastur)."""
    g = torch.Generator().manual_seed(seed)
    return float(np.mean([participation_ratio(torch.linalg.svdvals(torch.randn(*shape, generator=g, dtype=torch.float64)))
                          for _ in range(n_draws)]))
