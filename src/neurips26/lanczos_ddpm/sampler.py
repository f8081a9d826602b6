"""DDPM ancestral sampling with any reverse covariance, plugged into an existing network.

One reverse step t → s (derived here; the paper's notation is not known):

    m      = E[x_0 | x_t]           from the network (ε-, x_0- or v-prediction)
    μ_t    = c0 m + c1 x_t
    ξ      ~ N(0, Σ_t)              Σ_t one of covariance.COVARIANCES; "lanczos" = k JVPs
    x_s    = μ_t + ξ

The network is called as ``model(x, t)`` with x of shape (B, ...) and t a LongTensor (B,) of
training indices (the diffusers convention, minus ``.sample``). Cost per step: 1 forward pass
(+ k JVPs for "lanczos", + d JVPs for "diagonal"/"trace"/"dense", which are oracles).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from .covariance import (
    COVARIANCES,
    SamplerStats,
    check_prediction_type,
    covariance_matvec,
    linearize,
    posterior_mean_from_prediction,
    reverse_noise,
)
from .lanczos import check_num_steps
from .schedule import StepCoefficients, schedule_steps

Model = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def reverse_step(model: Model, x_t: torch.Tensor, t: int, coeffs: StepCoefficients, z: torch.Tensor, *,
                 prediction_type: str = "epsilon", covariance: str = "lanczos", k: int = 3,
                 symmetrize: bool = False, mean_only: bool = False,
                 stats: SamplerStats | None = None,
                 posterior_covariance: Callable | None = None,
                 x0_transform: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """One reverse step x_t → x_s = μ_t + ξ with ξ ~ N(0, Σ_t).

    Args:
        model: ``model(x, t) -> prediction`` of the same shape as x.
        x_t: shape (B, ...), floating. t: training index of x_t. coeffs: the step's
            :class:`.schedule.StepCoefficients`. z: standard normal, same shape as x_t.
        prediction_type: "epsilon", "sample" or "v_prediction".
        covariance: one of ``COVARIANCES``. k: Lanczos steps (≥ 1, capped at d).
        symmetrize: use ½(J + Jᵀ) of the network's mean Jacobian (one extra VJP per product).
        mean_only: return μ_t (no noise; the usual final DDPM step).
        stats: counters to update (a fresh one if None).
        posterior_covariance: optional closed-form ``(x_t, t) -> Cov[x_0|x_t]`` of shape
            (B, d, d); the oracles "trace"/"diagonal"/"dense" then skip their d JVPs.
        x0_transform: optional map applied to the predicted x_0 = E[x_0|x_t] before the mean
            μ_t is formed (diffusers' ``clip_sample`` / ``thresholding``, see
            :func:`.diffusers_adapter.scheduler_x0_transform`). It changes the mean only: the
            covariance is that of the network's own (untransformed) posterior mean.

    Returns:
        x_s, same shape as x_t.

    Raises:
        ValueError: bad covariance / prediction type / k, or mismatched shapes.
        FloatingPointError: the network or the noise produced NaN/inf.
    """
    stats = SamplerStats() if stats is None else stats
    if z.shape != x_t.shape:
        raise ValueError(f"z shape {tuple(z.shape)} does not match x_t {tuple(x_t.shape)}")
    B = x_t.shape[0]
    d = int(np.prod(x_t.shape[1:]))
    t_batch = torch.full((B,), int(t), dtype=torch.long, device=x_t.device)

    def mean_fn(x: torch.Tensor) -> torch.Tensor:
        return posterior_mean_from_prediction(model(x, t_batch), x, coeffs.alpha_bar, prediction_type)

    needs_jac = (not mean_only) and covariance not in ("beta", "beta_tilde")
    m, jvp, vjp = linearize(mean_fn, x_t, stats, need_vjp=needs_jac and symmetrize)
    if x0_transform is not None:
        m = x0_transform(m)
    mu = coeffs.c0 * m + coeffs.c1 * x_t                          # μ_t = c0 E[x0|x_t] + c1 x_t
    if mean_only:
        return mu
    matvec = covariance_matvec(jvp, coeffs, x_t.shape, vjp) if needs_jac else None
    sigma_star = None
    if posterior_covariance is not None and covariance in ("trace", "diagonal", "dense"):
        cov0 = posterior_covariance(x_t.reshape(B, d), t_batch)  # Σ* = β̃ I + c0² Cov[x0|x_t]
        sigma_star = coeffs.beta_tilde * torch.eye(d, dtype=cov0.dtype, device=cov0.device) + coeffs.c0**2 * cov0
    xi = reverse_noise(covariance, z.reshape(B, d), coeffs, matvec, stats, k=k, sigma_star=sigma_star)
    if not torch.isfinite(xi).all():
        raise FloatingPointError(f"reverse noise is not finite at timestep {t}")
    return mu + xi.reshape(x_t.shape)


def ddpm_sample(model: Model, shape: tuple[int, ...], alphas_cumprod, timesteps, *,
                prediction_type: str = "epsilon", covariance: str = "lanczos", k: int = 3,
                symmetrize: bool = False, denoise_last: bool = True,
                generator: torch.Generator | None = None, x_T: torch.Tensor | None = None,
                dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
                progress: Callable | None = None, posterior_covariance: Callable | None = None,
                x0_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
                ) -> tuple[torch.Tensor, SamplerStats]:
    """Ancestral DDPM sampling over a (possibly skipped) descending timestep subset.

    β of each step is recomputed from ᾱ of the actual previous step of the subset, so any
    subset of the training grid is a valid (coarser) DDPM (diffusers PR #2076).

    Args:
        model: ``model(x, t) -> prediction`` (shape of x), sample-wise independent.
        shape: (B, ...) of the samples.
        alphas_cumprod: ᾱ over the training grid, shape (N,).
        timesteps: strictly descending training indices, e.g. :func:`.schedule.spaced_timesteps`.
        prediction_type: "epsilon", "sample" or "v_prediction" — must be what the network was
            trained for (a wrong one silently gives wrong samples; the diffusers adapter checks it).
        covariance: one of ``COVARIANCES`` (default "lanczos").
        k: Lanczos steps per reverse step (default 3; capped at d).
        symmetrize: symmetrise the learned Jacobian (+1 VJP per Lanczos step).
        denoise_last: the last step returns its mean μ (standard DDPM practice).
        generator: torch generator for x_T and the per-step noise (CPU).
        x_T: optional starting point (else N(0, I)).
        progress: optional ``iterable -> iterable`` wrapper (e.g. ``ctx.track``).
        posterior_covariance: optional closed-form ``(x_t, t) -> Cov[x_0|x_t]`` (B, d, d) for
            the oracle covariances (see :func:`reverse_step`).
        x0_transform: optional clipping/thresholding of the predicted x_0 at every step (mean
            only; see :func:`reverse_step`).

    Returns:
        (x_0 samples of ``shape``, :class:`.covariance.SamplerStats`).

    Raises:
        ValueError: unknown covariance/prediction type, k ≤ 0, bad schedule, shapes or dtype.
        FloatingPointError: NaN/inf from the network.
    """
    if covariance not in COVARIANCES:
        raise ValueError(f"covariance {covariance!r} is not one of {COVARIANCES}")
    check_prediction_type(prediction_type)
    if len(shape) < 2 or any(int(s) < 1 for s in shape):
        raise ValueError(f"shape must be (B, ...) with positive sizes, got {shape}")
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point and not dtype.is_complex):
        raise ValueError(f"dtype must be a real floating torch dtype (e.g. torch.float32), got {dtype!r}")
    d = int(np.prod(shape[1:]))
    k = check_num_steps(k, d)
    steps = schedule_steps(alphas_cumprod, timesteps)
    if x_T is None:
        x = torch.randn(*shape, generator=generator, dtype=dtype).to(device)
    else:
        if tuple(x_T.shape) != tuple(shape):
            raise ValueError(f"x_T shape {tuple(x_T.shape)} does not match shape {tuple(shape)}")
        x = x_T.to(device=device, dtype=dtype)
    stats = SamplerStats()
    it = range(len(steps)) if progress is None else progress(range(len(steps)))
    for i in it:
        t, coeffs = steps[i]
        z = torch.randn(*shape, generator=generator, dtype=dtype).to(device)
        last = i == len(steps) - 1
        x = reverse_step(model, x, t, coeffs, z, prediction_type=prediction_type, covariance=covariance,
                         k=k, symmetrize=symmetrize, mean_only=last and denoise_last, stats=stats,
                         posterior_covariance=posterior_covariance, x0_transform=x0_transform)
    return x, stats


def equal_cost_steps(T: int, k: int, *, jvp_cost: float = 2.0, max_steps: int = 1000) -> tuple[int, bool]:
    """Steps T' an isotropic/diagonal sampler (one network evaluation per step) may take for the
    counted cost of LGS with T steps and k JVPs per step: T' = round((1 + k·c)·T), capped at ``max_steps``.

    The cost is in forward-pass equivalents: one LGS step is 1 forward + k JVPs of ``jvp_cost`` = c
    forward passes each. The default c = 2 is the textbook count (primal + tangent; Griewank &
    Walther bound it by 2.5); measured c is higher for small networks on CPU (4–10 with
    ``torch.func.jvp``, which recomputes the primal; benchmarks/lanczos_ddpm.py prints c from CPU
    and wall time and the equal-cost comparison at the measured c) — pass the measured value.

    Args:
        T: LGS steps ≥ 1. k: Lanczos steps (JVPs) per step ≥ 1. jvp_cost: c > 0.
        max_steps: the training grid's length (a DDPM cannot take more steps than it was trained on).

    Returns:
        (T', capped): ``capped`` is True when the equal-cost count exceeded ``max_steps``.

    Raises:
        ValueError: on T < 1, k < 1, jvp_cost ≤ 0 or non-finite, or max_steps < T.
    """
    if int(T) != T or T < 1 or int(k) != k or k < 1:
        raise ValueError(f"T and k must be integers >= 1, got T={T!r}, k={k!r}")
    if not (math.isfinite(jvp_cost) and jvp_cost > 0):
        raise ValueError(f"jvp_cost must be finite and > 0, got {jvp_cost!r}")
    if int(max_steps) != max_steps or max_steps < T:
        raise ValueError(f"max_steps must be an integer >= T = {T}, got {max_steps!r}")
    t_eq = int(round((1 + k * jvp_cost) * T))
    return min(t_eq, int(max_steps)), t_eq > max_steps
