"""The hierarchical RNN (HRNN): an angular module feeding a positional module.

Equations (inferred from the abstract's wording — "separately processes angular velocity and
linear speed to perform simultaneous angular and positional path integration"; the recurrent cell,
initial-state encoders, readouts and loss follow Sorscher et al. 2019 and Cueva & Wei 2018)::

    h^A_t = ReLU(W^A h^A_{t−1} + U^A [ω⁺_t, ω⁻_t]/s_ω + b^A)        # angular module (CW/CCW channels)
    h^P_t = ReLU(W^P h^P_{t−1} + U^P_v v_t/s_v + c · U^{A→P} h^A_t + b^P)   # positional module
    z^HD_t = R^HD h^A_t ,   z^place_t = R^P h^P_t                   # readouts (logits)
    h^A_0 = E^A y^HD(θ_0) ,  h^P_0 = E^P y^place(x_0)                # initial states from the start cue

with ω⁺ = max(ω, 0) (counter-clockwise), ω⁻ = max(−ω, 0) (clockwise), ``c ∈ {0, 1}`` the
switchable angular→positional pathway, and the loss

    L = CE(y^HD(θ_t), softmax z^HD_t) + CE(y^place(x_t), softmax z^place_t) + λ(‖W^A‖² + ‖W^P‖²).

The positional module never sees a 2-D velocity: it must combine speed with the heading carried
by the angular module. ``dt`` is stored with the model and checked against every input.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from .cells import HeadDirectionCells, PlaceCells
from .trajectories import DT, RAYLEIGH_SPEED, SIGMA_ROTATION, Arena, Trajectories, simulate_batches, wrap_angle

__all__ = ["HRNN", "HRNNOutput", "TrainingConfig", "TrainingLog", "train_hrnn", "evaluate", "PathIntegrationError",
           "soft_cross_entropy", "identity_init"]


@dataclass
class HRNNOutput:
    """Activity and readouts of one forward pass (torch tensors, float32).

    Attributes:
        angular: ``[B, T, N_A]`` angular-module rates. positional: ``[B, T, N_P]``.
        hd_logits: ``[B, T, N_HD]``. place_logits: ``[B, T, N_place]``.
    """

    angular: torch.Tensor
    positional: torch.Tensor
    hd_logits: torch.Tensor
    place_logits: torch.Tensor


def _peak_normalised(y: torch.Tensor) -> torch.Tensor:
    """``y / max_i y_i`` (cue code with peak 1; inferred: an O(1) start cue trains faster than a
    distribution whose entries are ~1/N)."""
    return y / y.max(-1, keepdim=True).values


class HRNN(nn.Module):
    """Hierarchical RNN for angular and positional path integration (see the module docstring).

    Args:
        n_angular: units N_A of the angular module (≥ 2). n_positional: units N_P (≥ 2).
        hd_cells, place_cells: the readout populations (the place cells fix the arena).
        dt: the time step (s) the model integrates with; inputs with another dt are refused.
        omega_scale: rad/s dividing ω (default the simulator's σ = 11.52 rad/s).
        speed_scale: m/s dividing v (default the Rayleigh scale 0.13·2π m/s).
        pathway: whether the angular→positional connection is on (``c`` above); settable later.

    Raises:
        ValueError: sizes < 2, or non-positive dt/scales.
    """

    def __init__(self, n_angular: int = 64, n_positional: int = 128, hd_cells: HeadDirectionCells | None = None,
                 place_cells: PlaceCells | None = None, *, dt: float = DT, omega_scale: float = SIGMA_ROTATION,
                 speed_scale: float = RAYLEIGH_SPEED, pathway: bool = True) -> None:
        super().__init__()
        for name, v in (("n_angular", n_angular), ("n_positional", n_positional)):
            if isinstance(v, bool) or int(v) != v or v < 2:
                raise ValueError(f"{name}={v!r}: must be an integer >= 2")
        for name, v in (("dt", dt), ("omega_scale", omega_scale), ("speed_scale", speed_scale)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name}={v!r}: must be finite and > 0")
        self.hd_cells = hd_cells or HeadDirectionCells()
        self.place_cells = place_cells or PlaceCells()
        self.dt, self.omega_scale, self.speed_scale = float(dt), float(omega_scale), float(speed_scale)
        self.pathway = bool(pathway)
        self.angular = nn.RNN(2, n_angular, nonlinearity="relu", batch_first=True)
        self.positional = nn.RNN(1 + n_angular, n_positional, nonlinearity="relu", batch_first=True)
        self.hd_readout = nn.Linear(n_angular, self.hd_cells.n)
        self.place_readout = nn.Linear(n_positional, self.place_cells.n)
        self.hd_encoder = nn.Linear(self.hd_cells.n, n_angular, bias=False)
        self.place_encoder = nn.Linear(self.place_cells.n, n_positional, bias=False)
        # saved with the weights so that a checkpoint cannot be loaded into a model with other readout
        # cells or another time step (load_state_dict refuses; see there)
        self.register_buffer("place_cell_centres", self.place_cells.centres.clone())
        self.register_buffer("readout_settings", torch.tensor(
            [self.dt, self.omega_scale, self.speed_scale, self.place_cells.arena.side, self.place_cells.sigma,
             self.place_cells.surround_scale or 0.0, float(self.hd_cells.n), self.hd_cells.sigma], dtype=torch.float64))

    _SETTINGS = ("dt", "omega_scale", "speed_scale", "arena side", "place-cell sigma", "place-cell surround_scale",
                 "number of HD cells", "HD-cell sigma")

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """``nn.Module.load_state_dict`` that first checks the saved readout cells and time step.

        The place-cell centres (drawn from ``PlaceCells.seed``) and ``dt``, input scales, arena and
        cell widths are not learned, so a model rebuilt with other constructor arguments would decode
        with the wrong cells — a silent wrong answer. Raises ``ValueError`` naming the mismatch.
        """
        saved = state_dict.get("readout_settings")
        if saved is not None and saved.shape == self.readout_settings.shape:
            for name, a, b in zip(self._SETTINGS, saved.tolist(), self.readout_settings.tolist()):
                if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12):
                    raise ValueError(f"checkpoint was trained with {name}={a:g} but this model has {name}={b:g}; "
                                     "rebuild the HRNN with the constructor arguments used for training")
        centres = state_dict.get("place_cell_centres")
        if centres is not None and (centres.shape != self.place_cell_centres.shape
                                    or not torch.allclose(centres.to(self.place_cell_centres), self.place_cell_centres)):
            raise ValueError(f"checkpoint place-cell centres {tuple(centres.shape)} differ from this model's "
                             f"{tuple(self.place_cell_centres.shape)}: build PlaceCells with the same n, arena and seed")
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    # ------------------------------------------------------------------ parts
    @property
    def n_angular(self) -> int:
        """N_A."""
        return self.angular.hidden_size

    @property
    def n_positional(self) -> int:
        """N_P."""
        return self.positional.hidden_size

    @property
    def recurrent_angular(self) -> torch.Tensor:
        """W^A ``[N_A, N_A]`` (row = postsynaptic unit)."""
        return self.angular.weight_hh_l0

    @property
    def recurrent_positional(self) -> torch.Tensor:
        """W^P ``[N_P, N_P]``."""
        return self.positional.weight_hh_l0

    def recurrent_weights(self) -> list[torch.Tensor]:
        """The recurrent matrices penalised by the weight decay: ``[W^A, W^P]``."""
        return [self.recurrent_angular, self.recurrent_positional]

    @property
    def pathway_weights(self) -> torch.Tensor:
        """U^{A→P} ``[N_P, N_A]``: the angular→positional connection."""
        return self.positional.weight_ih_l0[:, 1:]

    def angular_inputs(self, omega: torch.Tensor) -> torch.Tensor:
        """``[B, T, 2]``: (counter-clockwise ω⁺, clockwise ω⁻) / s_ω for ω ``[B, T]`` rad/s."""
        return torch.stack([omega.clamp(min=0), (-omega).clamp(min=0)], -1) / self.omega_scale

    def check_inputs(self, traj: Trajectories) -> None:
        """Raise ``ValueError`` if ``traj`` was made with another dt or arena than the model's."""
        if not math.isclose(traj.dt, self.dt, rel_tol=1e-6):
            raise ValueError(f"trajectories have dt={traj.dt:g} s but the model integrates with dt={self.dt:g} s; "
                             "resample the inputs (resample_recording) to the model's step")
        if not math.isclose(traj.arena.side, self.place_cells.arena.side, rel_tol=1e-6):
            raise ValueError(f"trajectories live in a {traj.arena.side:g} m box but the place cells tile a "
                             f"{self.place_cells.arena.side:g} m box")

    # ------------------------------------------------------------------ dynamics
    def forward(self, omega: torch.Tensor, speed: torch.Tensor, heading0: torch.Tensor, pos0: torch.Tensor, *,
                angular_gain: torch.Tensor | None = None, pathway: bool | None = None) -> HRNNOutput:
        """Run both modules.

        Args:
            omega: ``[B, T]`` rad/s. speed: ``[B, T]`` m/s. heading0: ``[B]`` rad. pos0: ``[B, 2]`` m.
            angular_gain: optional ``[B or 1, T, N_A]`` multiplicative gain on the angular rates at
                every step (0 silences a unit, < 1 inhibits it); it enters the recurrence (step-wise loop).
            pathway: override of ``self.pathway`` (False cuts the angular→positional connection).

        Returns:
            :class:`HRNNOutput`.
        """
        B, T = omega.shape
        h0a = torch.relu(self.hd_encoder(_peak_normalised(self.hd_cells.targets(heading0))))[None]
        x_a = self.angular_inputs(omega)
        if angular_gain is None:
            h_a, _ = self.angular(x_a, h0a.contiguous())
        else:
            h_a = self.rollout_angular(x_a, h0a[0], angular_gain)
        on = self.pathway if pathway is None else pathway
        x_p = torch.cat([speed[..., None] / self.speed_scale, h_a if on else torch.zeros_like(h_a)], -1)
        h0p = torch.relu(self.place_encoder(_peak_normalised(self.place_cells.targets(pos0))))[None]
        h_p, _ = self.positional(x_p, h0p.contiguous())
        return HRNNOutput(h_a, h_p, self.hd_readout(h_a), self.place_readout(h_p))

    def rollout_angular(self, x_a: torch.Tensor, h0: torch.Tensor, gain: torch.Tensor) -> torch.Tensor:
        """Angular module step by step with a multiplicative gain on its rates.

        ``h_t = g_t ⊙ ReLU(W_ih x_t + b_ih + W^A h_{t−1} + b_hh)`` (torch's RNN cell, then the gain).

        Args:
            x_a: ``[B, T, 2]`` angular inputs. h0: ``[B, N_A]``. gain: ``[B or 1, T, N_A]``.

        Raises:
            ValueError: gain of the wrong shape.
        """
        B, T, _ = x_a.shape
        if gain.ndim != 3 or gain.shape[1:] != (T, self.n_angular) or gain.shape[0] not in (1, B):
            raise ValueError(f"angular_gain has shape {tuple(gain.shape)}; expected [B or 1, {T}, {self.n_angular}]")
        a = self.angular
        drive = x_a @ a.weight_ih_l0.T + a.bias_ih_l0 + a.bias_hh_l0
        h, out = h0, []
        for t in range(T):
            h = gain[:, t] * torch.relu(drive[:, t] + h @ a.weight_hh_l0.T)
            out.append(h)
        return torch.stack(out, 1)

    def run(self, traj: Trajectories, *, device: str = "cpu", **kw) -> HRNNOutput:
        """Forward pass on a :class:`Trajectories` batch (checks dt and arena; no gradients)."""
        self.check_inputs(traj)
        t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
        with torch.no_grad():
            return self(t(traj.angular_velocity), t(traj.speed), t(traj.heading[:, 0]), t(traj.position[:, 0]), **kw)


def identity_init(model: HRNN, gain: float = 1.0) -> HRNN:
    """Set both recurrent matrices to ``gain · I`` and the recurrent biases to 0, in place (IRNN).

    A ReLU RNN started at the identity holds its state when its input is zero, so it begins as an
    integrator and its gradients neither vanish nor explode over T steps: at the quick scale's
    400 Adam steps the positional module then integrates position (error ≈ 0.4× the stay-at-start
    baseline on seed 0) where torch's default uniform initialisation left it near the baseline
    (≈ 0.9×). Input, readout and encoder weights keep their initialisation.

    Args:
        model: the :class:`HRNN`. gain: finite, > 0 (1.0: exact identity).

    Returns:
        ``model`` (for chaining).

    Raises:
        ValueError: ``gain`` not finite and > 0.

    Source: Le, Jaitly & Hinton 2015 (identity-initialised ReLU RNNs); its use here is ours.
    """
    if not (math.isfinite(gain) and gain > 0):
        raise ValueError(f"gain={gain!r}: must be finite and > 0")
    with torch.no_grad():
        for rnn in (model.angular, model.positional):
            rnn.weight_hh_l0.copy_(gain * torch.eye(rnn.hidden_size))
            rnn.bias_hh_l0.zero_()
            rnn.bias_ih_l0.zero_()
    return model


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over all leading dims of ``−Σ_i y_i log softmax(z)_i`` (targets ``y`` sum to 1)."""
    return -(targets * torch.log_softmax(logits, -1)).sum(-1).mean()


@dataclass
class PathIntegrationError:
    """Decoding errors of one evaluation (numpy / floats).

    Attributes:
        heading_deg: ``[B, T]`` |decoded − true| heading (degrees, circular).
        position_m: ``[B, T]`` ‖decoded − true‖ position (m).
    """

    heading_deg: np.ndarray
    position_m: np.ndarray

    @property
    def mean_heading_deg(self) -> float:
        """Mean absolute heading error over trajectories and steps (degrees)."""
        return float(self.heading_deg.mean())

    @property
    def mean_position_m(self) -> float:
        """Mean position error over trajectories and steps (m)."""
        return float(self.position_m.mean())


def evaluate(model: HRNN, traj: Trajectories, *, device: str = "cpu", **kw) -> PathIntegrationError:
    """Decode heading (top-3 HD cells) and position (top-3 place cells) at every step and compare."""
    out = model.run(traj, device=device, **kw)
    hd = model.hd_cells.decode(out.hd_logits).cpu().numpy()
    pos = model.place_cells.decode(out.place_logits).cpu().numpy()
    return PathIntegrationError(np.degrees(np.abs(wrap_angle(hd - traj.heading[:, 1:]))),
                                np.linalg.norm(pos - traj.position[:, 1:], axis=-1))


@dataclass(frozen=True)
class TrainingConfig:
    """Optimisation settings.

    Attributes:
        steps: Adam steps. batch: trajectories per step. seq_len: T. lr: learning rate.
        weight_decay: λ on ‖W^A‖² + ‖W^P‖² (Sorscher et al. 2019: 1e-4). clip: gradient-norm clip.
        speed_scale_range: per-trajectory speed factors of the simulated batches (see
            :func:`simulate_trajectories`; (1, 1) = lineage default).

    Source: Sorscher et al. 2019 (Adam, weight decay on recurrent weights, T = 20); the larger lr,
    cosine annealing and fewer steps of the quick scale are ours (inferred: laptop budget).
    """

    steps: int = 600
    batch: int = 64
    seq_len: int = 20
    lr: float = 3e-3
    weight_decay: float = 1e-4
    clip: float = 1.0
    speed_scale_range: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        for name in ("steps", "batch", "seq_len"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise ValueError(f"TrainingConfig.{name}={v!r}: must be an integer >= 1")
        for name in ("lr", "clip"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) > 0):
                raise ValueError(f"TrainingConfig.{name}={getattr(self, name)!r}: must be finite and > 0")
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"TrainingConfig.weight_decay={self.weight_decay!r}: must be >= 0")


@dataclass
class TrainingLog:
    """Loss curve (per step) and throughput of a training run."""

    loss: list[float] = field(default_factory=list)
    seconds: float = 0.0
    sequences_per_s: float = 0.0


SIM_CHUNK = 50  #: training steps whose batches are simulated in one vectorised pass


def train_hrnn(model: nn.Module, config: TrainingConfig, rng: np.random.Generator, *, device: str = "cpu",
               arena: Arena | None = None, batches: list[Trajectories] | None = None) -> TrainingLog:
    """Train ``model`` in place on freshly simulated trajectories (one new batch per step).

    Args:
        model: the HRNN (or any module with its forward signature, ``hd_cells``, ``place_cells``, ``dt``
            and ``recurrent_weights()``, e.g. :class:`~.baselines.SingleModuleRNN`). config: :class:`TrainingConfig`. rng: generator for the trajectories.
        arena: box for simulation (default: the place cells' arena).
        batches: optional pre-made batches cycled through instead of simulating (benchmarks).

    Returns:
        :class:`TrainingLog` (loss per step, CPU/GPU wall seconds, sequences per second).
    """
    arena = arena or model.place_cells.arena
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=config.steps)  # inferred: anneal for precision
    log = TrainingLog()
    t0 = time.perf_counter()
    t = lambda a: torch.as_tensor(a, device=device)  # noqa: E731
    chunk = None
    for step in range(config.steps):
        if batches:
            traj = batches[step % len(batches)]
            omega, speed, heading, position = traj.angular_velocity, traj.speed, traj.heading, traj.position
        else:
            # one fresh batch per step, simulated SIM_CHUNK steps at a time (same draws, same rng state
            # as one simulate_trajectories call per step: see simulate_batches)
            j = step % SIM_CHUNK
            if j == 0:
                chunk = simulate_batches(min(SIM_CHUNK, config.steps - step), config.batch, config.seq_len, rng,
                                         arena=arena, dt=model.dt, speed_scale_range=config.speed_scale_range)
            rows = slice(j * config.batch, (j + 1) * config.batch)
            omega, speed = chunk.angular_velocity[rows], chunk.speed[rows]
            heading, position = chunk.heading[rows], chunk.position[rows]
        out = model(t(omega), t(speed), t(heading[:, 0]), t(position[:, 0]))
        loss = (soft_cross_entropy(out.hd_logits, model.hd_cells.targets(t(heading[:, 1:])))
                + soft_cross_entropy(out.place_logits, model.place_cells.targets(t(position[:, 1:])))
                + config.weight_decay * sum(w.pow(2).sum() for w in model.recurrent_weights()))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        sched.step()
        log.loss.append(float(loss.detach()))
    log.seconds = time.perf_counter() - t0
    log.sequences_per_s = config.steps * config.batch / max(log.seconds, 1e-9)
    model.eval()
    return log
