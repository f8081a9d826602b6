"""DDPM noise schedules, timestep subsets and the reverse-step coefficients.

Forward process q(x_t | x_{t-1}) = N(√(1-β_t) x_{t-1}, β_t I), ᾱ_t = Π_{s≤t} (1 - β_s).
For a reverse step from training index t to the previous index s < t of a (possibly skipped)
timestep subset, β is recomputed from the actual previous step (the diffusers #2076 lesson):

    β_{t|s} = 1 - ᾱ_t / ᾱ_s
    β̃_{t|s} = (1 - ᾱ_s) β_{t|s} / (1 - ᾱ_t)                    (posterior variance)
    μ_t = c0 · E[x_0 | x_t] + c1 · x_t,
    c0 = √ᾱ_s β_{t|s} / (1 - ᾱ_t),  c1 = √(1 - β_{t|s}) (1 - ᾱ_s) / (1 - ᾱ_t)

(Ho et al. 2020, the DDPM posterior). The last step (s = "before the first index")
uses ᾱ_s = 1, so β̃ = 0 and the exact reverse covariance is c0² Cov[x_0 | x_t] with c0 = 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def vp_alphas_cumprod(num_steps: int, beta_min: float = 0.1, beta_max: float = 20.0) -> np.ndarray:
    """ᾱ_t, t = 1..N, of the VP-SDE schedule β(s) = β_min + (β_max - β_min) s on s ∈ [0, 1].

    ᾱ_t = exp(-∫_0^{t/N} β(u) du) = exp(-(β_min s + (β_max - β_min) s²/2)), s = t/N, so that
    the discrete chain with N steps is the exact discretisation of the same SDE for every N
    (used for the path-KL-vs-T experiment: β(s) = 0.1 + 19.9 s, the VP-SDE schedule of Song et al. 2021).

    Args:
        num_steps: N ≥ 1.
        beta_min, beta_max: 0 < beta_min ≤ beta_max (units of 1/“diffusion time”).

    Returns:
        float64 array of shape (N,), strictly decreasing in (0, 1).

    Raises:
        ValueError: on N < 1 or invalid β range.
    """
    if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) or num_steps < 1:
        raise ValueError(f"num_steps must be an integer >= 1, got {num_steps!r}")
    if not (0 < beta_min <= beta_max) or not math.isfinite(beta_max):
        raise ValueError(f"need 0 < beta_min <= beta_max < inf, got beta_min={beta_min}, beta_max={beta_max}")
    s = np.arange(1, num_steps + 1, dtype=np.float64) / num_steps
    return np.exp(-(beta_min * s + 0.5 * (beta_max - beta_min) * s**2))


def spaced_timesteps(num_train_steps: int, num_inference_steps: int) -> np.ndarray:
    """Evenly spaced ("trailing") subset of training indices, descending, 0-based.

    The first index is always N-1 (the noisiest), the last is N/T - 1 (rounded), so each
    reverse step covers about N/T training steps and the final one lands on x_0.

    Raises:
        ValueError: unless 1 ≤ num_inference_steps ≤ num_train_steps.
    """
    for name, v in (("num_train_steps", num_train_steps), ("num_inference_steps", num_inference_steps)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    if not 1 <= num_inference_steps <= num_train_steps:
        raise ValueError(f"need 1 <= num_inference_steps <= num_train_steps, got "
                         f"{num_inference_steps} and {num_train_steps}")
    ts = np.round(np.linspace(num_train_steps, 0, num_inference_steps, endpoint=False)).astype(int) - 1
    if len(np.unique(ts)) != len(ts):
        raise ValueError("timestep subset has duplicates")
    return ts


@dataclass(frozen=True)
class StepCoefficients:
    """Scalars of one reverse step t → s (see the module docstring for the formulas).

    Attributes:
        alpha_bar: ᾱ_t. alpha_bar_prev: ᾱ_s (1 for the last step). beta: β_{t|s}.
        beta_tilde: β̃_{t|s}. c0, c1: the posterior-mean coefficients.
    """

    alpha_bar: float
    alpha_bar_prev: float
    beta: float
    beta_tilde: float
    c0: float
    c1: float

    @property
    def tweedie_scale(self) -> float:
        """(1-ᾱ_t)/√ᾱ_t: Cov[x_0|x_t] = tweedie_scale · ∂E[x_0|x_t]/∂x_t (second-order Tweedie)."""
        return (1.0 - self.alpha_bar) / math.sqrt(self.alpha_bar)


def step_coefficients(alpha_bar: float, alpha_bar_prev: float) -> StepCoefficients:
    """Coefficients of the reverse step from ᾱ_t to ᾱ_s (ᾱ_s = 1 for the final step).

    Raises:
        ValueError: unless 0 < ᾱ_t < ᾱ_s ≤ 1.
    """
    a, ap = float(alpha_bar), float(alpha_bar_prev)
    if not (0.0 < a < ap <= 1.0):
        raise ValueError(f"need 0 < alpha_bar_t < alpha_bar_prev <= 1, got {a} and {ap}")
    beta = 1.0 - a / ap
    beta_tilde = (1.0 - ap) * beta / (1.0 - a)
    c0 = math.sqrt(ap) * beta / (1.0 - a)
    c1 = math.sqrt(1.0 - beta) * (1.0 - ap) / (1.0 - a)
    return StepCoefficients(a, ap, beta, beta_tilde, c0, c1)


def schedule_steps(alphas_cumprod: np.ndarray, timesteps: np.ndarray) -> list[tuple[int, StepCoefficients]]:
    """(training index t, coefficients) for each reverse step of a descending timestep subset.

    Args:
        alphas_cumprod: ᾱ over the training grid, shape (N,), strictly decreasing in (0, 1).
        timesteps: strictly descending 0-based indices into ``alphas_cumprod``.

    Raises:
        ValueError: on a non-descending subset, indices out of range or a bad ᾱ.
    """
    ac = np.asarray(alphas_cumprod, dtype=np.float64)
    ts = np.asarray(timesteps)
    if ac.ndim != 1 or len(ac) == 0 or not np.all((ac > 0) & (ac < 1)) or np.any(np.diff(ac) >= 0):
        raise ValueError("alphas_cumprod must be 1-D, strictly decreasing, inside (0, 1)")
    if ts.ndim != 1 or len(ts) == 0 or np.any(np.diff(ts) >= 0):
        raise ValueError(f"timesteps must be a non-empty strictly descending 1-D sequence, got {ts.tolist()}")
    if ts.min() < 0 or ts.max() >= len(ac):
        raise ValueError(f"timesteps must lie in 0..{len(ac) - 1}, got {ts.min()}..{ts.max()}")
    out = []
    for i, t in enumerate(ts):
        prev = float(ac[ts[i + 1]]) if i + 1 < len(ts) else 1.0
        out.append((int(t), step_coefficients(float(ac[t]), prev)))
    return out
