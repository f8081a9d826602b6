"""Reverse-step covariances of a Gaussian DDPM, from isotropic to the full posterior covariance.

For a reverse step t → s with coefficients (β, β̃, c0) (see :mod:`.schedule`) and posterior
mean m_t(x_t) = E[x_0 | x_t] given by the network, the exact conditional covariance of
q(x_s | x_t) is (law of total covariance + second-order Tweedie; derived here)

    Σ*_t(x_t) = β̃ I + c0² Cov[x_0 | x_t],   Cov[x_0 | x_t] = ((1-ᾱ_t)/√ᾱ_t) ∂m_t/∂x_t,

so a covariance-vector product costs one Jacobian-vector product (forward-mode AD):

    Σ*_t v = β̃ v + c0² ((1-ᾱ_t)/√ᾱ_t) J_m(x_t) v.

The covariance choices (``COVARIANCES``):

* ``"beta"``        β I            (DDPM "fixed_large")
* ``"beta_tilde"``  β̃ I            (DDPM "fixed_small")
* ``"trace"``       (tr Σ*/d) I    (trace-matched isotropic, Analytic-DPM-style oracle)
* ``"diagonal"``    diag(Σ*)       (the optimal diagonal that OCM-DDPM learns; here an oracle)
* ``"lanczos"``     Σ* via k Lanczos steps (the paper's sampler; k JVPs)
* ``"dense"``       Σ* materialised with d JVPs and an eigh square root (exact, O(d²) memory)

A learned J_m is not symmetric: ``symmetrize=True`` uses ½(J + Jᵀ) (one extra VJP per product);
otherwise Lanczos sees J as is (its Ritz values stay real because T_k is built symmetric from
vᵀJv; negative ones are clipped and counted).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .lanczos import dense_sqrt_apply, lanczos_gaussian_sample
from .schedule import StepCoefficients

PREDICTION_TYPES = ("epsilon", "sample", "v_prediction")
COVARIANCES = ("beta", "beta_tilde", "trace", "diagonal", "lanczos", "dense")


def check_prediction_type(prediction_type: str) -> str:
    """Raise ValueError unless ``prediction_type`` is one of ``PREDICTION_TYPES``."""
    if prediction_type not in PREDICTION_TYPES:
        raise ValueError(f"prediction_type {prediction_type!r} is not one of {PREDICTION_TYPES}")
    return prediction_type


def posterior_mean_from_prediction(prediction: torch.Tensor, x_t: torch.Tensor, alpha_bar: float,
                                   prediction_type: str) -> torch.Tensor:
    """E[x_0 | x_t] from an ε-, x_0- or v-prediction (x_t = √ᾱ x_0 + √(1-ᾱ) ε).

    * epsilon:      m = (x_t − √(1-ᾱ) ε̂) / √ᾱ
    * sample:       m = x̂_0
    * v_prediction: v = √ᾱ ε − √(1-ᾱ) x_0  ⇒  m = √ᾱ x_t − √(1-ᾱ) v̂

    Args:
        prediction, x_t: same shape (B, ...). alpha_bar: ᾱ_t in (0, 1).

    Raises:
        ValueError: unknown prediction type or mismatched shapes (e.g. a learned-variance
            network that outputs 2× channels).
    """
    check_prediction_type(prediction_type)
    if prediction.shape != x_t.shape:
        raise ValueError(f"network output shape {tuple(prediction.shape)} does not match its input "
                         f"{tuple(x_t.shape)}; a learned-variance head (2× channels) is not a "
                         f"{prediction_type!r} prediction")
    a = float(alpha_bar)
    if prediction_type == "epsilon":
        return (x_t - math.sqrt(1.0 - a) * prediction) / math.sqrt(a)
    if prediction_type == "sample":
        return prediction
    return math.sqrt(a) * x_t - math.sqrt(1.0 - a) * prediction


@dataclass
class SamplerStats:
    """Counters of one sampling run (summed over steps; each call handles the whole batch).

    Attributes:
        forward: network forward passes (batched). jvp: Jacobian-vector products.
        vjp: vector-Jacobian products (symmetrisation). fd_fallback: JVPs done by finite
        differences because forward-mode AD failed. clipped: negative Ritz values / eigenvalues
        clipped to 0. breakdown: samples whose Lanczos recursion broke down early.
    """

    forward: int = 0
    jvp: int = 0
    vjp: int = 0
    fd_fallback: int = 0
    clipped: int = 0
    breakdown: int = 0

    @property
    def network_evaluations(self) -> int:
        """forward + jvp + vjp (each counted as one network evaluation)."""
        return self.forward + self.jvp + self.vjp


class ForwardModeUnsupportedWarning(RuntimeWarning):
    """Forward-mode AD failed on the network; JVPs fall back to finite differences."""


def linearize(mean_fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, stats: SamplerStats,
              *, need_vjp: bool = False, allow_fallback: bool = True):
    """Posterior mean at x plus closures v ↦ J_m v (and v ↦ J_mᵀ v).

    JVPs use ``torch.func.jvp``. If the network has layers without forward-mode support
    (custom autograd functions, some fused kernels), the first failure emits a
    :class:`ForwardModeUnsupportedWarning` and every JVP of this call is replaced by a forward
    difference (m(x + h v) − m(x)) / h with h = √eps·(1 + ‖x_b‖)/‖v_b‖ per sample, counted in
    ``stats.fd_fallback`` (inferred: layers without forward-mode AD, such as custom autograd functions).

    Args:
        mean_fn: x (B, ...) ↦ E[x_0 | x] (B, ...), sample-wise independent (no batch coupling).
        x: the point x_t, shape (B, ...).
        stats: counters to update.
        need_vjp: also return v ↦ J_mᵀ v (one backward per call).
        allow_fallback: if False, a forward-mode failure is re-raised.

    Returns:
        (m, jvp, vjp or None).

    Raises:
        FloatingPointError: if the mean has NaN/inf entries.
    """
    x = x.detach()
    if need_vjp:
        with torch.enable_grad():
            m, vjp_fn = torch.func.vjp(mean_fn, x)
        m = m.detach()
    else:
        with torch.no_grad():
            m = mean_fn(x)
    stats.forward += 1
    if not torch.isfinite(m).all():
        raise FloatingPointError("the network produced NaN/inf (posterior mean is not finite)")
    state = {"fallback": False}
    flat = x.reshape(x.shape[0], -1)
    h_scale = math.sqrt(torch.finfo(x.dtype).eps) * (1.0 + flat.norm(dim=1))

    def fd(v: torch.Tensor) -> torch.Tensor:
        stats.fd_fallback += 1
        vn = v.reshape(v.shape[0], -1).norm(dim=1).clamp_min(torch.finfo(x.dtype).tiny)
        h = (h_scale / vn).reshape(-1, *([1] * (x.ndim - 1)))
        with torch.no_grad():
            return (mean_fn(x + h * v) - m) / h

    def jvp(v: torch.Tensor) -> torch.Tensor:
        stats.jvp += 1
        if state["fallback"]:
            return fd(v)
        try:
            with torch.no_grad():
                _, out = torch.func.jvp(mean_fn, (x,), (v,))
            return out
        except (RuntimeError, NotImplementedError) as exc:
            if not allow_fallback:
                raise
            warnings.warn(f"forward-mode AD failed ({type(exc).__name__}: {str(exc)[:120]}); "
                          "falling back to finite-difference JVPs", ForwardModeUnsupportedWarning,
                          stacklevel=2)
            state["fallback"] = True
            return fd(v)

    def vjp(v: torch.Tensor) -> torch.Tensor:
        stats.vjp += 1
        with torch.enable_grad():
            (out,) = vjp_fn(v)
        return out.detach()

    return m, jvp, (vjp if need_vjp else None)


def covariance_matvec(jvp: Callable, coeffs: StepCoefficients, shape: tuple[int, ...],
                      vjp: Callable | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
    """v ↦ Σ*_t v on flattened vectors (B, d): β̃ v + c0² (1-ᾱ)/√ᾱ · J v.

    With ``vjp`` given, J is replaced by its symmetric part ½(J + Jᵀ).
    """
    scale = coeffs.c0 ** 2 * coeffs.tweedie_scale

    def matvec(v: torch.Tensor) -> torch.Tensor:
        vv = v.reshape(shape)
        Jv = jvp(vv) if vjp is None else 0.5 * (jvp(vv) + vjp(vv))
        return coeffs.beta_tilde * v + scale * Jv.reshape(v.shape)

    return matvec


def dense_covariance(matvec: Callable[[torch.Tensor], torch.Tensor], batch: int, d: int,
                     dtype: torch.dtype, device: torch.device | str, *, stats: SamplerStats | None = None,
                     max_rows: int = 4096) -> torch.Tensor:
    """Materialise Σ*_b for every sample with d matvecs (one JVP each): shape (B, d, d).

    Column i is Σ e_i; the result is *not* symmetrised (see :func:`.lanczos.dense_sqrt_apply`).
    The d matvecs are batched with ``torch.func.vmap`` in chunks of ⌊max_rows / B⌋ basis vectors
    (one network call per chunk instead of one per column: the same products, fewer and larger
    calls); if vmap fails on the network (an op without a batching rule), the plain loop over
    columns runs instead. ``stats`` (optional) keeps counting d JVPs (and VJPs) either way.
    """
    chunk = min(d, max(1, max_rows // max(1, batch)))
    if chunk > 1:
        snap = None if stats is None else (stats.jvp, stats.vjp, stats.fd_fallback)
        try:
            tangents = torch.eye(d, dtype=dtype, device=device)[:, None, :].expand(d, batch, d)   # e_i per sample
            cols = torch.func.vmap(matvec, chunk_size=chunk)(tangents)                           # (d, B, d)
        except Exception:               # noqa: BLE001 (any vmap failure: the plain loop below raises real errors)
            if stats is not None:
                stats.jvp, stats.vjp, stats.fd_fallback = snap
        else:
            if stats is not None:       # the closures counted once per chunk: scale to d products
                calls = -(-d // chunk)
                stats.jvp = snap[0] + (stats.jvp - snap[0]) // calls * d
                stats.vjp = snap[1] + (stats.vjp - snap[1]) // calls * d
                stats.fd_fallback = snap[2] + (stats.fd_fallback - snap[2]) // calls * d
            return cols.permute(1, 2, 0)
    cols = []
    for i in range(d):
        e = torch.zeros(batch, d, dtype=dtype, device=device)
        e[:, i] = 1.0
        cols.append(matvec(e))
    return torch.stack(cols, dim=2)


def reverse_noise(covariance: str, z: torch.Tensor, coeffs: StepCoefficients,
                  matvec: Callable[[torch.Tensor], torch.Tensor] | None, stats: SamplerStats,
                  k: int = 3, sigma_star: torch.Tensor | None = None) -> torch.Tensor:
    """ξ with law N(0, Σ_t) for the chosen covariance, driven by the standard normal z (B, d).

    Args:
        covariance: one of ``COVARIANCES``.
        z: shape (B, d). coeffs: the step's coefficients. matvec: v ↦ Σ*_t v (needed for
            every choice except "beta"/"beta_tilde"). stats: counters. k: Lanczos steps.
        sigma_star: optional dense Σ*_t, shape (B, d, d), for "trace"/"diagonal"/"dense" when it
            is known in closed form (skips the d JVPs of materialising it).

    Returns:
        ξ, shape (B, d).

    Raises:
        ValueError: unknown covariance, or a missing matvec.
    """
    if covariance not in COVARIANCES:
        raise ValueError(f"covariance {covariance!r} is not one of {COVARIANCES}")
    if covariance == "beta":
        return math.sqrt(coeffs.beta) * z
    if covariance == "beta_tilde":
        return math.sqrt(coeffs.beta_tilde) * z
    B, d = z.shape
    if matvec is None and (covariance == "lanczos" or sigma_star is None):
        raise ValueError(f"covariance {covariance!r} needs the covariance matvec")
    if covariance == "lanczos":
        xi, info = lanczos_gaussian_sample(matvec, z, k)
        stats.clipped += info["clipped"]
        stats.breakdown += info["breakdown"]
        return xi
    if sigma_star is not None:
        if sigma_star.shape != (B, d, d):
            raise ValueError(f"sigma_star must have shape {(B, d, d)}, got {tuple(sigma_star.shape)}")
        cov = sigma_star.to(z.dtype)
    else:
        cov = dense_covariance(matvec, B, d, z.dtype, z.device, stats=stats)
    if covariance == "dense":
        xi, clipped = dense_sqrt_apply(cov, z)
        stats.clipped += clipped
        return xi
    diag = torch.diagonal(cov, dim1=1, dim2=2)
    if covariance == "trace":
        var = diag.mean(dim=1, keepdim=True)
    else:  # diagonal
        var = diag
    stats.clipped += int((var < 0).sum())
    return torch.sqrt(torch.clamp(var, min=0.0)) * z
