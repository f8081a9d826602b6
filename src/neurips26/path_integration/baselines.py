"""Same-run baselines for path integration.

* :func:`stay_at_start` — no integration: the estimate stays at the start cue (the floor).
* :func:`dead_reckoning` — exact integration of the self-motion inputs corrupted by Gaussian
  noise (a noisy odometer; with ``noise = 0`` it is the exact integrator, the ceiling).
* :class:`SingleModuleRNN` — one recurrent module receiving angular velocity and speed together,
  with the same readouts, the non-hierarchical comparison of the benchmark (Sorscher et al. 2019
  feed a single RNN with a 2-D velocity; here the same inputs as the HRNN, inferred: equal inputs
  so that only the architecture differs).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .cells import HeadDirectionCells, PlaceCells
from .hrnn import HRNN, HRNNOutput, PathIntegrationError
from .trajectories import DT, RAYLEIGH_SPEED, SIGMA_ROTATION, Trajectories, wrap_angle

__all__ = ["stay_at_start", "dead_reckoning", "SingleModuleRNN"]


def stay_at_start(traj: Trajectories) -> PathIntegrationError:
    """Errors ``[B, T]`` of the estimate that never moves from ``(θ_0, x_0)``."""
    return PathIntegrationError(np.degrees(np.abs(wrap_angle(traj.heading[:, 1:] - traj.heading[:, :1]))),
                                np.linalg.norm(traj.position[:, 1:] - traj.position[:, :1], axis=-1))


def dead_reckoning(traj: Trajectories, rng: np.random.Generator, *, omega_noise: float = 0.0,
                   speed_noise: float = 0.0) -> PathIntegrationError:
    """Integrate noisy self-motion exactly: ``θ̂_t = θ_0 + Σ (ω_s + ε_s) dt``,
    ``x̂_t = x_0 + Σ max(v_s + η_s, 0) dt (cos θ̂_s, sin θ̂_s)`` with ``ε ~ N(0, omega_noise)`` rad/s and
    ``η ~ N(0, speed_noise)`` m/s per step; no wall knowledge.

    Raises:
        ValueError: a negative or non-finite noise level.
    """
    for name, v in (("omega_noise", omega_noise), ("speed_noise", speed_noise)):
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name}={v!r}: must be a finite standard deviation >= 0")
    om = traj.angular_velocity + rng.normal(0, omega_noise, traj.angular_velocity.shape) if omega_noise else \
        traj.angular_velocity.astype(np.float64)
    v = np.clip(traj.speed + rng.normal(0, speed_noise, traj.speed.shape), 0, None) if speed_noise else \
        traj.speed.astype(np.float64)
    hd = traj.heading[:, :1] + np.cumsum(om * traj.dt, axis=1)
    step = (v * traj.dt)[..., None] * np.stack([np.cos(hd), np.sin(hd)], -1)
    pos = traj.position[:, :1] + np.cumsum(step, axis=1)
    return PathIntegrationError(np.degrees(np.abs(wrap_angle(hd - traj.heading[:, 1:]))),
                                np.linalg.norm(pos - traj.position[:, 1:], axis=-1))


class SingleModuleRNN(HRNN):
    """One ReLU RNN of ``n_units`` receiving ``[ω⁺, ω⁻, v]`` with HD and place readouts.

    Same interface as :class:`HRNN` (``angular`` and ``positional`` of the output are the same
    activity). Used as the non-hierarchical baseline of equal unit count (``N_A + N_P``).
    """

    def __init__(self, n_units: int = 192, hd_cells: HeadDirectionCells | None = None,
                 place_cells: PlaceCells | None = None, *, dt: float = DT, omega_scale: float = SIGMA_ROTATION,
                 speed_scale: float = RAYLEIGH_SPEED) -> None:
        super().__init__(2, 2, hd_cells, place_cells, dt=dt, omega_scale=omega_scale, speed_scale=speed_scale)
        self.rnn = nn.RNN(3, n_units, nonlinearity="relu", batch_first=True)
        self.hd_readout = nn.Linear(n_units, self.hd_cells.n)
        self.place_readout = nn.Linear(n_units, self.place_cells.n)
        self.cue_encoder = nn.Linear(self.hd_cells.n + self.place_cells.n, n_units, bias=False)
        del self.angular, self.positional, self.hd_encoder, self.place_encoder

    def recurrent_weights(self) -> list[torch.Tensor]:
        """``[W]``, the single recurrent matrix."""
        return [self.rnn.weight_hh_l0]

    def forward(self, omega, speed, heading0, pos0, **kw) -> HRNNOutput:  # noqa: D401
        """Run the single module (perturbation keywords are not supported and raise ``TypeError``)."""
        if kw:
            raise TypeError(f"SingleModuleRNN.forward: unsupported keywords {sorted(kw)}")
        cue = torch.cat([self.hd_cells.targets(heading0), self.place_cells.targets(pos0)], -1)
        cue = cue / cue.max(-1, keepdim=True).values
        x = torch.cat([self.angular_inputs(omega), speed[..., None] / self.speed_scale], -1)
        h, _ = self.rnn(x, torch.relu(self.cue_encoder(cue))[None].contiguous())
        return HRNNOutput(h, h, self.hd_readout(h), self.place_readout(h))
