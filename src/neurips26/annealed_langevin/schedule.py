"""The variance-preserving (VP) forward diffusion that the score network was trained on.

    θ_t = √α_t θ_0 + √(1 − α_t) ε,   α_t = exp(−β_min t − ½ (β_max − β_min) t²)

This is sbi's ``VPScoreEstimator`` convention (``mean_t_fn`` = √α_t, ``std_fn`` = √(1 − α_t),
defaults β_min = 0.01, β_max = 10, t ∈ [t_min, t_max] = [1e-3, 1]).

References:
    Song et al., "Score-based generative modeling through SDEs", ICLR 2021 (VP SDE).
    sbi 0.27, ``sbi.neural_nets.estimators.score_estimator.VPScoreEstimator``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VPSchedule:
    """Linear-β VP schedule.

    Attributes:
        beta_min: β(0) > 0 (dimensionless rate per unit time).
        beta_max: β(1) ≥ beta_min.
        t_min: smallest diffusion time used (the last annealing level), 0 ≤ t_min < t_max.
        t_max: largest diffusion time (the first annealing level), ≤ 1.

    Raises:
        ValueError: if the values violate the ranges above.
    """

    beta_min: float = 0.01
    beta_max: float = 10.0
    t_min: float = 1e-3
    t_max: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.beta_min) and self.beta_min > 0):
            raise ValueError(f"beta_min must be a finite number > 0, got {self.beta_min!r}")
        if not (math.isfinite(self.beta_max) and self.beta_max >= self.beta_min):
            raise ValueError(f"beta_max must be finite and >= beta_min={self.beta_min}, got {self.beta_max!r}")
        if not (0.0 <= self.t_min < self.t_max <= 1.0):
            raise ValueError(f"need 0 <= t_min < t_max <= 1, got t_min={self.t_min!r}, t_max={self.t_max!r}")

    def beta(self, t):
        """β(t) = β_min + (β_max − β_min) t. ``t``: float or array in [0, 1]."""
        return self.beta_min + (self.beta_max - self.beta_min) * np.asarray(t, dtype=float)

    def alpha(self, t):
        """α_t = exp(−∫₀ᵗ β) = exp(−β_min t − ½(β_max − β_min) t²); float or array like ``t``."""
        t = np.asarray(t, dtype=float)
        out = np.exp(-self.beta_min * t - 0.5 * (self.beta_max - self.beta_min) * t**2)
        return float(out) if out.ndim == 0 else out

    def levels(self, num_levels: int) -> np.ndarray:
        """Annealing times t_L = t_max > … > t_1 = t_min, evenly spaced (``linspace``, as the
        authors' code). Shape ``(num_levels,)``, float64, in *sampling order* (decreasing).

        Raises:
            ValueError: if ``num_levels < 1``.
        """
        if int(num_levels) != num_levels or num_levels < 1:
            raise ValueError(f"num_levels must be an integer >= 1, got {num_levels!r}")
        if num_levels == 1:
            return np.array([self.t_min])
        return np.linspace(self.t_max, self.t_min, int(num_levels))

    @classmethod
    def from_sbi(cls, estimator) -> "VPSchedule":
        """The schedule of an sbi ``VPScoreEstimator`` (reads beta_min/beta_max/t_min/t_max).

        Raises:
            TypeError: if ``estimator`` is not a VP score estimator (VE/subVP are not supported:
                the bridging-density closed forms here assume the VP marginals).
        """
        if type(estimator).__name__ != "VPScoreEstimator":
            raise TypeError(f"need an sbi VPScoreEstimator (sde_type='vp'), got {type(estimator).__name__}")
        return cls(float(estimator.beta_min), float(estimator.beta_max),
                   float(estimator.t_min), float(estimator.t_max))
