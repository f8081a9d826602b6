"""Annealed Langevin dynamics (ALD) over the bridging densities of a composite score, and the
reverse-SDE baseline.

ALD (authors' code; Song & Ermon 2019): start θ ~ N(0, I); for levels ℓ = L, …, 1 (times
t_L = t_max > … > t_1 = t_min) run K_ℓ unadjusted Langevin steps

    θ ← θ + h_ℓ s_{t_ℓ}(θ) + √(2 h_ℓ) ξ,    ξ ~ N(0, I).

Reverse SDE (VP, Euler–Maruyama, the biased baseline):
    θ ← θ + Δ β(t) [½ θ + s_t(θ)] + √(β(t) Δ) ξ.

``score_fn(theta (b, d), t: float) -> (b, d)`` is any composite score (see ``composite``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from .schedule import VPSchedule

ScoreFn = Callable[[torch.Tensor, float], torch.Tensor]


def annealed_langevin(score_fn: ScoreFn, theta0: torch.Tensor, times: Sequence[float],
                      step_sizes: Sequence[float], n_steps: Sequence[int],
                      generator: torch.Generator | None = None,
                      max_step_sizes: Sequence[float] | None = None) -> torch.Tensor:
    """Run annealed Langevin dynamics.

    Args:
        score_fn: composite score, ``(b, d), t -> (b, d)``.
        theta0: initial particles ``(b, d)`` (float tensor; ALD starts from N(0, I)).
        times: levels in sampling order, shape ``(L,)``.
        step_sizes: h_ℓ > 0, shape ``(L,)`` (a scalar is broadcast).
        n_steps: K_ℓ ≥ 0 integers, shape ``(L,)`` (a scalar is broadcast).
        generator: torch generator for the Gaussian noise (reproducibility).
        max_step_sizes: optional stability bounds 2/(m_ℓ + M_ℓ); a larger h_ℓ raises.

    Returns:
        Particles ``(b, d)`` after the last level.

    Raises:
        ValueError: shape/length mismatch, empty or non-finite ``times``, NaN/inf in ``theta0``,
            h_ℓ ≤ 0 or above its stability bound (naming it).
        FloatingPointError: the particles became NaN or left 1e6 × (1 + max|θ₀|), naming the
            level and step (checked after every step).
    """
    if theta0.ndim != 2:
        raise ValueError(f"theta0 must have shape (b, d), got {tuple(theta0.shape)}")
    if not torch.is_floating_point(theta0):
        raise ValueError(f"theta0 must be a floating-point tensor, got dtype {theta0.dtype}")
    if not torch.isfinite(theta0).all():
        raise ValueError("theta0 contains NaN or inf")
    ts = np.asarray(times, dtype=float)
    if ts.ndim != 1 or ts.size == 0 or not np.all(np.isfinite(ts)):
        raise ValueError(f"times must be a non-empty 1-D sequence of finite diffusion times, got {np.asarray(times)!r}")
    L = len(ts)
    try:
        hs = np.broadcast_to(np.asarray(step_sizes, dtype=float), (L,))
        ks = np.broadcast_to(np.asarray(n_steps), (L,))
    except ValueError:
        raise ValueError(f"step_sizes ({np.size(step_sizes)}) and n_steps ({np.size(n_steps)}) must be scalars "
                         f"or have one entry per level (len(times) = {L})") from None
    if np.any(~(hs > 0)) or not np.all(np.isfinite(hs)):
        raise ValueError(f"step sizes must be finite and > 0, got {hs[~((hs > 0) & np.isfinite(hs))][:3]}")
    if np.any(ks < 0) or np.any(ks != np.round(ks)):
        raise ValueError("n_steps must be integers >= 0")
    if max_step_sizes is not None:
        hm = np.broadcast_to(np.asarray(max_step_sizes, float), (L,))
        bad = np.nonzero(hs > hm)[0]
        if len(bad):
            i = bad[0]
            raise ValueError(f"step size h={hs[i]:.4g} at level t={ts[i]:.4g} exceeds the stability "
                             f"bound 2/(m_t+M_t)={hm[i]:.4g}")
    # divergence: a Langevin chain on a log-concave target stays within a few posterior sds of the
    # mode; 1e6 × the initial scale (+1) is far beyond any useful sample (inferred threshold)
    limit = 1e6 * (1.0 + float(theta0.abs().max()))
    theta = theta0.clone()
    for level, (t, h, k) in enumerate(zip(ts, hs, ks)):
        sq = float(np.sqrt(2 * h))                              # √(2h): ULA noise scale
        for step in range(int(k)):
            s = score_fn(theta, float(t))
            if s.shape != theta.shape:
                raise ValueError(f"score_fn returned shape {tuple(s.shape)}, expected {tuple(theta.shape)}")
            noise = torch.randn(theta.shape, generator=generator, dtype=theta.dtype, device=theta.device)
            theta = theta + h * s + sq * noise                  # θ ← θ + h s_t(θ) + √(2h) ξ
            top = float(theta.abs().max())
            if not top <= limit:                                # NaN compares False
                raise FloatingPointError(
                    f"particles diverged (max |theta| = {top:.3g}) at level {level} (t={t:.4g}), step {step} of "
                    f"{int(k)}, with h={h:.4g}: the step size is above the stability bound, the score points "
                    "away from the mode, or the score is NaN")
    return theta


def reverse_sde(score_fn: ScoreFn, theta0: torch.Tensor, schedule: VPSchedule, num_steps: int,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """Euler–Maruyama reverse VP SDE from t_max to t_min on a uniform grid of ``num_steps`` steps
    (the score is evaluated at the start of each step; the baseline sbi uses without correctors).

    Raises:
        ValueError: num_steps < 1. FloatingPointError: divergence.
    """
    if num_steps < 1:
        raise ValueError(f"num_steps must be >= 1, got {num_steps}")
    ts = np.linspace(schedule.t_max, schedule.t_min, num_steps + 1)
    theta = theta0.clone()
    for t0, t1 in zip(ts[:-1], ts[1:]):
        dt = float(t0 - t1)
        beta = float(schedule.beta(t0))
        s = score_fn(theta, float(t0))
        noise = torch.randn(theta.shape, generator=generator, dtype=theta.dtype, device=theta.device)
        theta = theta + dt * beta * (0.5 * theta + s) + float(np.sqrt(beta * dt)) * noise
    if not torch.isfinite(theta).all():
        raise FloatingPointError("reverse SDE diverged (NaN/inf)")
    return theta
