"""Readout populations: head-direction cells (von Mises) and difference-of-Gaussians place cells.

Both give a *target distribution* over cells for a heading or position (the network is trained
with cross-entropy against it) and decode a heading or position back from a population code.

* Head-direction cells: ``N_HD`` preferred directions evenly spaced on the circle, tuning
  ``exp(κ cos(θ − μ_i))`` with ``κ = 1/σ²`` (σ = π/6), normalised over cells in log space (no
  overflow at large κ). Decoded heading: circular mean of the ``k = 3`` most active cells'
  preferred directions. Source: the HD-task code of the path-integration lineage (defaults
  σ = π/6, top-3 decoding); inferred: softmax normalisation to use cross-entropy as for places.
* Place cells: ``N_p`` centres uniform in the box; ``softmax_i(−d_i²/2σ²) − softmax_i(−d_i²/2sσ²)``
  (σ = 0.12 m, surround scale s = 2), shifted to be ≥ 0 and normalised to sum 1. Decoded position:
  mean centre of the 3 most active cells. Source: Sorscher et al. 2019 (their place-cell code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .trajectories import Arena

__all__ = ["HeadDirectionCells", "PlaceCells", "circular_mean"]


def circular_mean(angles: torch.Tensor, dim: int = -1, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Circular mean ``atan2(Σ w sin θ, Σ w cos θ)`` of ``angles`` (rad) along ``dim``."""
    w = torch.ones_like(angles) if weights is None else weights
    return torch.atan2((w * torch.sin(angles)).sum(dim), (w * torch.cos(angles)).sum(dim))


@dataclass(frozen=True)
class HeadDirectionCells:
    """``n`` head-direction cells with von Mises tuning of width ``sigma`` (rad).

    Raises:
        ValueError: n < 3, or sigma not in (0, π].
    """

    n: int = 64
    sigma: float = math.pi / 6

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or int(self.n) != self.n or self.n < 3:
            raise ValueError(f"HeadDirectionCells.n={self.n!r}: need an integer >= 3 cells")
        if not (math.isfinite(self.sigma) and 0 < self.sigma <= math.pi):
            raise ValueError(f"HeadDirectionCells.sigma={self.sigma!r}: allowed 0 < sigma <= π rad")

    @property
    def preferred(self) -> torch.Tensor:
        """Preferred directions ``[n]`` (rad), evenly spaced on [−π, π)."""
        return torch.arange(self.n, dtype=torch.float32) * (2 * math.pi / self.n) - math.pi

    def log_targets(self, heading: torch.Tensor) -> torch.Tensor:
        """Log target distribution ``[..., n]`` for headings ``[...]`` (rad): log-softmax of κ cos(θ − μ)."""
        kappa = 1.0 / self.sigma ** 2
        return torch.log_softmax(kappa * torch.cos(heading[..., None] - self.preferred.to(heading.device)), -1)

    def targets(self, heading: torch.Tensor) -> torch.Tensor:
        """Target distribution ``[..., n]`` (sums to 1 over cells)."""
        return self.log_targets(heading).exp()

    def decode(self, activity: torch.Tensor, k: int = 3) -> torch.Tensor:
        """Heading ``[...]`` (rad) from activity/logits ``[..., n]``: circular mean of the top-``k`` cells."""
        idx = activity.topk(k, dim=-1).indices
        return circular_mean(self.preferred.to(activity.device)[idx])

    def population_vector(self, logits: torch.Tensor) -> torch.Tensor:
        """Heading ``[...]`` (rad): ``arg Σ_i softmax(z)_i e^{iμ_i}`` — continuous (not quantised to the
        cell spacing), used for small offsets such as theta sweeps (inferred: top-3 decoding moves in
        steps of 360°/n)."""
        return circular_mean(self.preferred.to(logits.device).expand_as(logits), weights=torch.softmax(logits, -1))


@dataclass(frozen=True)
class PlaceCells:
    """``n`` difference-of-Gaussians place cells with centres uniform in ``arena``.

    Attributes:
        centres: ``[n, 2]`` metres (drawn from ``seed``).

    Raises:
        ValueError: n < 3, sigma ≤ 0, or surround_scale ≤ 1.
    """

    n: int = 256
    arena: Arena = Arena()
    sigma: float = 0.12
    surround_scale: float | None = 2.0
    seed: int = 0
    centres: torch.Tensor = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or int(self.n) != self.n or self.n < 3:
            raise ValueError(f"PlaceCells.n={self.n!r}: need an integer >= 3 cells")
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"PlaceCells.sigma={self.sigma!r}: must be a width in metres > 0")
        if self.surround_scale is not None and not (math.isfinite(self.surround_scale) and self.surround_scale > 1):
            raise ValueError(f"PlaceCells.surround_scale={self.surround_scale!r}: must be > 1 (surround wider "
                             "than centre) or None (Gaussian place cells, no surround)")
        rng = np.random.default_rng(self.seed)
        c = rng.uniform(-self.arena.half, self.arena.half, (int(self.n), 2))
        object.__setattr__(self, "centres", torch.tensor(c, dtype=torch.float32))

    def targets(self, pos: torch.Tensor) -> torch.Tensor:
        """DoG target distribution ``[..., n]`` for positions ``[..., 2]`` (m)."""
        c = self.centres.to(pos.device)
        dx, dy = pos[..., None, 0] - c[:, 0], pos[..., None, 1] - c[:, 1]     # x² + y² as sum(-1) adds them,
        if not (pos.requires_grad and torch.is_grad_enabled()):                 # without a [..., n, 2] temporary;
            d2 = dx.mul_(dx).add_(dy.mul_(dy))                                  # in place: same ops, no new
            if self.surround_scale is None:                                     # [..., n] buffers (training
                return torch.softmax(d2.neg_().div_(2 * self.sigma ** 2), -1)   # calls this every step)
        else:
            d2 = dx * dx + dy * dy
        out = torch.softmax(-d2 / (2 * self.sigma ** 2), -1)                               # centre
        if self.surround_scale is None:                                                    # Gaussian cells
            return out
        out = out - torch.softmax(-d2 / (2 * self.surround_scale * self.sigma ** 2), -1)  # − surround
        out = out - out.min(-1, keepdim=True).values                                       # ≥ 0
        return out / out.sum(-1, keepdim=True)

    def decode(self, activity: torch.Tensor, k: int = 3) -> torch.Tensor:
        """Position ``[..., 2]`` (m) from activity/logits ``[..., n]``: mean centre of the top-``k`` cells."""
        idx = activity.topk(k, dim=-1).indices
        return self.centres.to(activity.device)[idx].mean(-2)
