r"""Deterministic per-mode loss dynamics of minibatch SGD (and heavy-ball momentum) and the exact
gradient of the final loss with respect to the whole schedule (adjoint method).

For Gaussian features the second moments c_{t,k} = E(w_{t,k} − w*_k)² close exactly on the
diagonal (inferred: Gaussian fourth moments; checked by Monte Carlo in ``monte_carlo.py``):

    c_{t+1,k} = [(1 − η_t λ_k)² + η_t² λ_k² / m_t] c_{t,k} + (η_t² / m_t) λ_k (L_t + σ0²),
    L_t = Σ_k λ_k c_{t,k} + R_N.

Written as c_{t+1} = A_t c_t + b_t with A_t = diag(a_t) + q_t λλᵀ, q_t = η_t²/m_t, the adjoint
(costate) p_T = ∂L_T/∂c_T = λ and p_t = A_tᵀ p_{t+1} give

    ∂L_T/∂η_t = p_{t+1} · (∂a_t/∂η ∘ c_t + ∂q_t/∂η λ (λ·c_t + s)),     s = σ0² + R_N,

at the cost of one extra backward sweep: O(T·N) time for all T derivatives (finite differences
need T+1 forward runs). The per-step factors a_t are computed for cache-sized blocks of steps at
once. The forward states are all kept while T·N ≤ 2²³ (64 MiB; one forward pass); above that they
are checkpointed every ⌈√T⌉ steps and recomputed segment by segment, so memory is O(√T·N).

Stability: for a constant (η, m) the map c ↦ A c + b has spectral radius < 1 iff every
a_k < 1 and (η/m) Σ_k λ_k / (2 − η λ_k (1 + 1/m)) < 1 (rank-one update of a diagonal map;
derived here). :func:`stability_bound` solves this for η_max(m); schedules above it raise.

Heavy-ball momentum (e = w − w*, v_{t+1} = β_t v_t − η_t g_t, e_{t+1} = e_t + v_{t+1}) closes on
the three per-mode moments E = E e², X = E e v, V = E v² (derived here):

    E' = (1−ηλ)² E + 2β(1−ηλ) X + β² V + η² S
    X' = −ηλ(1−ηλ) E + β(1−2ηλ) X + β² V + η² S
    V' = η²λ² E − 2βηλ X + β² V + η² S,        S = (λ² E + λ (L + σ0²)) / m.

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), abstract (model, SGD, momentum); L. S. Pontryagin et al. (1962) for the costate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from .task import Spectrum

__all__ = [
    "stability_bound", "check_schedule", "loss_curve", "final_loss_and_grad",
    "momentum_loss_curve", "momentum_final_loss_and_grad", "loss_curve_torch",
    "momentum_loss_curve_torch", "MomentumGrad",
]


def stability_bound(lambdas: np.ndarray, m: float = 1.0) -> float:
    r"""Largest constant learning rate η_max(m) for which the SGD moment dynamics are stable.

    Solves (η/m) Σ_k λ_k / (2 − η λ_k (1 + 1/m)) = 1 for η in (0, 2/(λ_1(1+1/m))) (derived in the
    module docstring; a common approximation is 2 / (λ_1(1+1/m) + Σλ/m)).

    Args:
        lambdas: (N,) eigenvalues > 0.
        m: batch size > 0 (need not be an integer in the deterministic dynamics).

    Returns:
        η_max as a float (dimensionless: η λ is a step's contraction).

    Raises:
        ValueError: if m <= 0 or lambdas are not positive.
    """
    lam = np.asarray(lambdas, dtype=np.float64)
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"batch size m must be finite and > 0, got {m!r}")
    if lam.size == 0 or np.any(~np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError("lambdas must be a non-empty array of finite values > 0")
    hi = 2.0 / (lam.max() * (1.0 + 1.0 / m))

    def excess(eta: float) -> float:
        return eta / m * np.sum(lam / (2.0 - eta * lam * (1.0 + 1.0 / m))) - 1.0

    top = hi * (1 - 1e-12)
    if excess(top) < 0:  # noise never destabilises before the deterministic bound
        return float(top)
    return float(brentq(excess, 0.0, top, xtol=1e-14, rtol=1e-12))


def check_schedule(spectrum: Spectrum, eta: np.ndarray, m: np.ndarray | float = 1.0,
                   *, slack: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Validate a schedule: finite η_t ≥ 0 not above η_max(m_t), finite m_t > 0.

    Args:
        spectrum: the task's spectrum.
        eta: (T,) learning rates, T ≥ 1.
        m: batch sizes, scalar or (T,).
        slack: relative tolerance on the bound (rounding).

    Returns:
        (eta, m) as float64 arrays of shape (T,).

    Raises:
        ValueError: naming the first bad step, its value and the allowed range.
    """
    if np.iscomplexobj(eta) or np.iscomplexobj(m):
        raise ValueError("eta and m must be real numbers, got complex values")
    eta = np.asarray(eta, dtype=np.float64)
    if eta.ndim != 1 or eta.size == 0:
        raise ValueError(f"eta must be a non-empty 1-d schedule, got shape {eta.shape}")
    m_in = np.asarray(m, dtype=np.float64)
    if m_in.shape not in ((), (1,), eta.shape):
        raise ValueError(f"batch size m must be a scalar or have the schedule's shape {eta.shape}, got shape {m_in.shape}")
    m_arr = np.broadcast_to(m_in, eta.shape).copy()
    bad = np.flatnonzero(~np.isfinite(m_arr) | (m_arr <= 0))
    if bad.size:
        raise ValueError(f"batch size m must be finite and > 0; m[{bad[0]}] = {m_arr[bad[0]]!r}")
    bad = np.flatnonzero(~np.isfinite(eta) | (eta < 0))
    if bad.size:
        raise ValueError(f"learning rate must be finite and >= 0; eta[{bad[0]}] = {eta[bad[0]]!r}")
    for mv in np.unique(m_arr):
        cap = stability_bound(spectrum.lambdas, float(mv))
        over = np.flatnonzero((m_arr == mv) & (eta > cap * (1 + slack)))
        if over.size:
            t = over[0]
            raise ValueError(f"eta[{t}] = {eta[t]:.6g} is above the stability bound eta_max(m={mv:g}) = "
                             f"{cap:.6g}; allowed: 0 <= eta <= eta_max")
    return eta, m_arr


def _raise_nonfinite(t: int, eta: float) -> None:
    raise FloatingPointError(f"SGD moment dynamics overflowed (non-finite loss) at step {t} with eta={eta:.6g}; "
                             "lower the learning rate below the stability bound")


def loss_curve(spectrum: Spectrum, eta: np.ndarray, m: np.ndarray | float = 1.0,
               *, validate: bool = True) -> np.ndarray:
    """Test loss L_t, t = 0..T, of minibatch SGD under the schedule (η_t, m_t) (module equation).

    Args:
        spectrum: learned modes, initial errors, residual and label noise.
        eta: (T,) learning rate per step.
        m: batch size per step, scalar or (T,).
        validate: check the stability bound first (see :func:`check_schedule`).

    Returns:
        (T+1,) float64 losses L_t = Σ λ_k c_{t,k} + R_N.

    Raises:
        ValueError: bad schedule (see :func:`check_schedule`).
        FloatingPointError: if the loss overflows (never a silent NaN).
    """
    if validate:
        eta, m_arr = check_schedule(spectrum, eta, m)
    else:
        eta = np.asarray(eta, dtype=np.float64)
        m_arr = np.broadcast_to(np.asarray(m, dtype=np.float64), eta.shape)
    lam, s, R = spectrum.lambdas, spectrum.sigma0_sq, spectrum.residual
    lam2 = lam * lam
    c = spectrum.c0.copy()
    T = eta.size
    out = np.empty(T + 1)
    out[0] = lam @ c + R
    q_all = eta * eta / m_arr
    blk = _block_len(lam.size)
    for b0 in range(0, T, blk):  # per-step factors a_t precomputed a block at a time (fewer numpy calls per step)
        b1 = min(b0 + blk, T)
        A = _a_factors(eta[b0:b1], q_all[b0:b1], lam, lam2)
        for t in range(b0, b1):
            c = A[t - b0] * c + (q_all[t] * (out[t] + s)) * lam
            out[t + 1] = lam @ c + R
            if not math.isfinite(out[t + 1]):
                _raise_nonfinite(t, eta[t])
    return out


_BLOCK_FLOATS = 1 << 16  # 512 KiB of float64 per precomputed (steps, N) block (cache-sized)
_STORE_ALL_FLOATS = 1 << 23  # store every forward state (no recomputation) up to 64 MiB


def _block_len(n: int) -> int:
    return max(1, _BLOCK_FLOATS // max(1, n))


def _a_factors(eta: np.ndarray, q: np.ndarray, lam: np.ndarray, lam2: np.ndarray) -> np.ndarray:
    """(steps, N) diagonal factors a_t = (1 − η_t λ)² + q_t λ² of the recursion."""
    one = 1.0 - np.outer(eta, lam)
    one *= one
    one += np.outer(q, lam2)
    return one


def final_loss_and_grad(spectrum: Spectrum, eta: np.ndarray, m: np.ndarray | float = 1.0,
                        *, with_m_grad: bool = False, validate: bool = True):
    """Final loss L_T and its exact gradient with respect to every η_t (adjoint method).

    Implements p_T = λ, p_t = A_tᵀ p_{t+1} and ∂L_T/∂η_t = p_{t+1}·∂_η(A_t c_t + b_t) (module
    docstring). Forward states are kept while T·N ≤ 2²³ (time ≈ 2 forward passes), else
    checkpointed every ⌈√T⌉ steps (memory O(√T·N), time ≈ 3 forward passes).

    Args:
        spectrum: the task's spectrum.
        eta: (T,) schedule.
        m: batch sizes, scalar or (T,).
        with_m_grad: also return ∂L_T/∂m_t.
        validate: check the stability bound first.

    Returns:
        (L_T, dL/deta (T,)) or, with ``with_m_grad``, (L_T, dL/deta, dL/dm).

    Raises:
        ValueError, FloatingPointError: as :func:`loss_curve`.
    """
    if validate:
        eta, m_arr = check_schedule(spectrum, eta, m)
    else:
        eta = np.asarray(eta, dtype=np.float64)
        m_arr = np.broadcast_to(np.asarray(m, dtype=np.float64), eta.shape)
    lam, s, R = spectrum.lambdas, spectrum.sigma0_sq, spectrum.residual
    lam2 = lam * lam
    T, N = eta.size, lam.size
    Rs = R + s
    q_all = eta * eta / m_arr
    # Segments of `blk` steps (a cache-sized (steps, N) block: the per-step factors a_t are computed
    # for a whole block at once). All forward states are kept when T·N <= _STORE_ALL_FLOATS (one
    # forward pass); otherwise checkpoints every ≥ ⌈√T⌉ steps, recomputed segment by segment
    # (memory O(√T·N), one extra forward pass).
    blk = _block_len(N)
    store_all = T * N <= _STORE_ALL_FLOATS
    seg = blk if store_all else max(blk, int(math.ceil(math.sqrt(T))))
    starts = list(range(0, T, seg))
    saved: dict[int, np.ndarray] = {}  # t0 -> (n, N) states (store_all) or (N,) checkpoint

    def run_segment(t0: int, t1: int, c: np.ndarray, cs: np.ndarray | None) -> np.ndarray:
        for b0 in range(t0, t1, blk):
            b1 = min(b0 + blk, t1)
            A = _a_factors(eta[b0:b1], q_all[b0:b1], lam, lam2)
            for t in range(b0, b1):
                if cs is not None:
                    cs[t - t0] = c
                c = A[t - b0] * c + (q_all[t] * (lam @ c + Rs)) * lam
        return c

    c = spectrum.c0.copy()
    for t0 in starts:
        t1 = min(t0 + seg, T)
        if store_all:
            saved[t0] = np.empty((t1 - t0, N))
            c = run_segment(t0, t1, c, saved[t0])
        else:
            saved[t0] = c
            c = run_segment(t0, t1, c, None)
    L_T = float(lam @ c + R)
    if not math.isfinite(L_T):
        _raise_nonfinite(T - 1, float(eta[-1]))
    g_eta = np.empty(T)
    g_m = np.empty(T) if with_m_grad else None
    p = lam.copy()
    for t0 in reversed(starts):
        t1 = min(t0 + seg, T)
        n = t1 - t0
        if store_all:
            cs = saved.pop(t0)
        else:  # recompute the segment's states from its checkpoint
            cs = np.empty((n, N))
            run_segment(t0, t1, saved.pop(t0), cs)
        for b1 in range(t1, t0, -blk):  # cache-sized chunks, last to first
            b0 = max(b1 - blk, t0)
            A = _a_factors(eta[b0:b1], q_all[b0:b1], lam, lam2)
            ps = np.empty((b1 - b0, N))  # p_{t+1} for each step of the chunk
            for t in range(b1 - 1, b0 - 1, -1):
                ps[t - b0] = p
                p = A[t - b0] * p + (q_all[t] * (p @ lam)) * lam
            # vectorised over the chunk: ∂a/∂η = −2λ(1−ηλ) + 2ηλ²/m ;  ∂q/∂η = 2η/m
            c_ = cs[b0 - t0:b1 - t0]
            e, mt = eta[b0:b1], m_arr[b0:b1]
            Ls = c_ @ lam + Rs
            plam = ps @ lam
            dA = -2.0 * lam * (1.0 - np.outer(e, lam)) + np.outer(2.0 * e / mt, lam2)
            g_eta[b0:b1] = np.einsum("tk,tk->t", ps, dA * c_) + (2.0 * e / mt) * Ls * plam
            if with_m_grad:
                # ∂a/∂m = −η²λ²/m² ;  ∂q/∂m = −η²/m²
                g_m[b0:b1] = -(e * e / (mt * mt)) * (np.einsum("tk,tk->t", ps, lam2 * c_) + Ls * plam)
    if with_m_grad:
        return L_T, g_eta, g_m
    return L_T, g_eta


def loss_curve_torch(lambdas, c0, residual: float, sigma0_sq: float, eta, m=1.0):
    """Torch (float64, autograd-able) twin of :func:`loss_curve`; used to check the adjoint.

    Args: torch tensors ``lambdas`` (N,), ``c0`` (N,), ``eta`` (T,), ``m`` scalar or (T,).
    Returns: (T+1,) tensor of losses. No validation (a reference implementation).
    """
    import torch

    m = torch.as_tensor(m, dtype=torch.float64).expand(eta.shape)
    c = c0
    out = [lambdas @ c + residual]
    for t in range(eta.shape[0]):
        e, q = eta[t], eta[t] ** 2 / m[t]
        c = ((1 - e * lambdas) ** 2 + q * lambdas ** 2) * c + q * (out[-1] + sigma0_sq) * lambdas
        out.append(lambdas @ c + residual)
    return torch.stack(out)


# ----------------------------------------------------------------------------------- momentum

def _momentum_step(lam, lam2, E, X, V, e, b, m, s_total):
    S = (lam2 * E + lam * (lam @ E + s_total)) / m
    one = 1.0 - e * lam
    n = e * e * S
    bbV = b * b * V
    return (one * one * E + 2 * b * one * X + bbV + n,
            -e * lam * one * E + b * (1.0 - 2 * e * lam) * X + bbV + n,
            e * e * lam2 * E - 2 * b * e * lam * X + bbV + n)


def momentum_loss_curve(spectrum: Spectrum, eta: np.ndarray, beta: np.ndarray, m: float = 1.0) -> np.ndarray:
    """Test loss L_t (t = 0..T) of heavy-ball SGD with schedules η_t and momentum β_t (module eqs.).

    Args:
        spectrum: the task's spectrum (v_0 = 0, so X_0 = V_0 = 0).
        eta: (T,) learning rates ≥ 0.
        beta: (T,) momentum parameters in [0, 1).
        m: batch size > 0.

    Returns:
        (T+1,) float64 losses.

    Raises:
        ValueError: on shape mismatch, β outside [0, 1), η < 0, m ≤ 0.
        FloatingPointError: if the dynamics overflow (unstable (η, β)).
    """
    eta, beta = _check_momentum(eta, beta, m)
    lam, R = spectrum.lambdas, spectrum.residual
    lam2 = lam * lam
    E, X, V = spectrum.c0.copy(), np.zeros_like(lam), np.zeros_like(lam)
    out = np.empty(eta.size + 1)
    out[0] = lam @ E + R
    st = spectrum.noise
    for t in range(eta.size):
        E, X, V = _momentum_step(lam, lam2, E, X, V, eta[t], beta[t], m, st)
        out[t + 1] = lam @ E + R
        if not math.isfinite(out[t + 1]):
            _raise_nonfinite(t, eta[t])
    return out


def _check_momentum(eta, beta, m):
    eta = np.asarray(eta, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    if eta.ndim != 1 or eta.size == 0 or beta.shape != eta.shape:
        raise ValueError(f"eta {eta.shape} and beta {beta.shape} must be equal non-empty 1-d schedules")
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"batch size m must be finite and > 0, got {m!r}")
    if np.any(~np.isfinite(eta) | (eta < 0)):
        raise ValueError(f"learning rate must be finite and >= 0; min is {eta.min()!r}")
    if np.any(~np.isfinite(beta) | (beta < 0) | (beta >= 1)):
        raise ValueError(f"momentum beta must be in [0, 1); got values in [{beta.min()!r}, {beta.max()!r}]")
    return eta, beta


@dataclass
class MomentumGrad:
    """Final loss of heavy-ball SGD and its gradients.

    Attributes:
        loss: L_T.
        d_eta: (T,) ∂L_T/∂η_t.
        d_beta: (T,) ∂L_T/∂β_t.
    """

    loss: float
    d_eta: np.ndarray
    d_beta: np.ndarray


def momentum_final_loss_and_grad(spectrum: Spectrum, eta: np.ndarray, beta: np.ndarray,
                                 m: float = 1.0) -> MomentumGrad:
    """L_T of heavy-ball SGD and its exact gradient w.r.t. η_t and β_t (adjoint of the 3-moment map).

    Costates (P_E, P_X, P_V) start at (λ, 0, 0) and run backward through the transpose of the
    linear map in the module docstring. Stores all T states: memory O(T·N).

    Raises:
        ValueError, FloatingPointError: as :func:`momentum_loss_curve`.
    """
    eta, beta = _check_momentum(eta, beta, m)
    lam, R = spectrum.lambdas, spectrum.residual
    lam2 = lam * lam
    st = spectrum.noise
    T, N = eta.size, lam.size
    Es, Xs, Vs = np.empty((T, N)), np.empty((T, N)), np.empty((T, N))
    E, X, V = spectrum.c0.copy(), np.zeros(N), np.zeros(N)
    for t in range(T):
        Es[t], Xs[t], Vs[t] = E, X, V
        E, X, V = _momentum_step(lam, lam2, E, X, V, eta[t], beta[t], m, st)
    loss = float(lam @ E + R)
    if not math.isfinite(loss):
        _raise_nonfinite(T - 1, float(eta[-1]))
    # Costate sweep (sequential), storing the costate p_{t+1} each step t sees for a cache-sized block of
    # steps; the gradient terms are then evaluated for the whole block at once (same formulas, vectorised
    # over t: a few numpy calls per block instead of ~30 per step; memory O(block·N) on top of the states).
    pE, pX, pV = lam.copy(), np.zeros(N), np.zeros(N)
    d_eta, d_beta = np.empty(T), np.empty(T)
    blk = _block_len(N)
    for b1 in range(T, 0, -blk):
        b0 = max(b1 - blk, 0)
        PE, PX, PV = np.empty((b1 - b0, N)), np.empty((b1 - b0, N)), np.empty((b1 - b0, N))
        for t in range(b1 - 1, b0 - 1, -1):
            PE[t - b0], PX[t - b0], PV[t - b0] = pE, pX, pV
            e, b = eta[t], beta[t]
            one = 1.0 - e * lam
            P = pE + pX + pV
            # transpose of the map (E, X, V) -> (E', X', V'); S couples E through λ² and λλᵀ
            noiseE = (e * e / m) * (lam2 * P + lam * (P @ lam))
            pE, pX, pV = (one * one * pE - e * lam * one * pX + e * e * lam2 * pV + noiseE,
                          2 * b * one * pE + b * (1 - 2 * e * lam) * pX - 2 * b * e * lam * pV,
                          b * b * P)
        E, X, V = Es[b0:b1], Xs[b0:b1], Vs[b0:b1]
        e, b = eta[b0:b1, None], beta[b0:b1, None]
        one = 1.0 - e * lam
        S = (lam2 * E + lam * (E @ lam + st)[:, None]) / m
        common = -2 * b * lam * X + 2 * e * S
        d_eta[b0:b1] = (np.einsum("tk,tk->t", PE, -2 * lam * one * E + common)
                        + np.einsum("tk,tk->t", PX, -lam * (1 - 2 * e * lam) * E + common)
                        + np.einsum("tk,tk->t", PV, 2 * e * lam2 * E + common))
        bV = 2 * b * V
        d_beta[b0:b1] = (np.einsum("tk,tk->t", PE, 2 * one * X + bV)
                         + np.einsum("tk,tk->t", PX, (1 - 2 * e * lam) * X + bV)
                         + np.einsum("tk,tk->t", PV, -2 * e * lam * X + bV))
    return MomentumGrad(loss, d_eta, d_beta)


def momentum_loss_curve_torch(lambdas, c0, residual: float, sigma0_sq: float, eta, beta, m: float = 1.0):
    """Torch (float64, autograd-able) twin of :func:`momentum_loss_curve` (reference for tests)."""
    import torch

    lam2 = lambdas ** 2
    E, X, V = c0, torch.zeros_like(c0), torch.zeros_like(c0)
    out = [lambdas @ E + residual]
    st = residual + sigma0_sq
    for t in range(eta.shape[0]):
        E, X, V = _momentum_step(lambdas, lam2, E, X, V, eta[t], beta[t], m, st)
        out.append(lambdas @ E + residual)
    return torch.stack(out)
