"""Reproduction of paper 9 (a hierarchical RNN for angular and positional path integration) at laptop scale.

Only the abstract was read; the paper itself was not found. The model follows the abstract's
wording and the Sorscher / Banino / Cueva lineage (see :mod:`.hrnn`). Per seed: train an HRNN on
simulated foraging; compare its heading and position errors with same-run baselines (stay at
start, an untrained network of the same architecture, dead reckoning from noisy self-motion) at
the trained length and 3× longer, and with the same network's ω input set to 0 or its speed input
replaced by the batch mean (the controls of the integration claims, paired by trajectory; generalisation
is judged on how the ratio to that control changes from the trained to the longer length); classify
cell types against the untrained control; H1 of the angular module's activity; weight asymmetry by
preferred heading against the symmetrised twin (W + Wᵀ)/2; silencing (angular→positional pathway,
AV units); theta-paced mutual inhibition between the CW and CCW AV populations, against the same
inhibition between random size-matched unit groups and with shuffled dominance; replay of real rat paths (Sargolini et al. 2006, shipped in
ratinabox).
"""

from __future__ import annotations

import math
import time
from typing import Literal

import numpy as np
import torch
from pydantic import Field, field_validator, model_validator

from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import Resources
from neurips26.harness.context import blas_threads, torch_threads

from .analysis import (
    classify_cells,
    collect_activity,
    connectivity_asymmetry,
    gridness_null,
    gridness_scores,
    paired_ratio,
    rate_maps,
    ratio_change,
    ring_topology,
    shuffled_statistics,
    symmetrised_control,
    torus_topology,
)
from .baselines import dead_reckoning, stay_at_start
from .cells import HeadDirectionCells, PlaceCells
from .hrnn import HRNN, PathIntegrationError, TrainingConfig, evaluate, identity_init, train_hrnn
from .theta import theta_sweeps
from .trajectories import (
    DT,
    RAYLEIGH_SPEED,
    SIGMA_ROTATION,
    Arena,
    heading_spike_rate,
    load_rat_recording,
    recording_to_trajectories,
    simulate_trajectories,
    wrap_angle,
)

ABSTRACT = "abstract"
#: Seeds never used while choosing (development used run seed 0 with training seeds 0, 1, 2 and a theta
#: scan on seed 0; run seed 101 was the former single confirmation seed and was read, so it is not reused):
#: ``reproduce`` reruns the tuned claims (theta, angular bound) on them. A run with seed c trains seeds
#: c + config.seeds, so the confirmation seeds are 10 apart and never share a network.
CONFIRMATION_SEEDS = (1001, 1011, 1021)
#: Training seeds per confirmation run (the first of ``config.seeds``): the tuned claims are judged over
#: the three confirmation runs together, so two networks each keep them cheap (6 networks in all).
CONFIRMATION_TRAINING_SEEDS = 2
#: Precondition of the silencing claims: the intact network must integrate position — its error at the
#: trained length at most this fraction of the stay-at-start baseline on every seed (fixed before the
#: silencing claims were rewritten; the same 0.5 as "well below" in the ratio claims).
FORMED_POSITION_RATIO = 0.5
TUNED_THETA = ("β = 0.3 and balanced CW/CCW groups chosen after a scan on seed 0 (β ∈ {0.1, 0.3}, group sizes "
               "4/8/16) in which the raw offset drifted; the excursion is measured from the offset at cycle start")
TUNED_ANGULAR = ("bound 0.5 → 0.2 after a review showed that comparing decoded and true heading one step apart "
                 "gives 0.30 and still held at 0.5 (the aligned comparison gave 0.11); the bound was chosen on the "
                 "ratio to the stay-at-start estimate, and the denominator was then changed to the zero-ω control "
                 "(same network, ω = 0) with the same bound, before that control's value was seen")
#: The harness's ``at_least`` is inclusive (``measured >= bound``). A claim that a paired difference is
#: *positive* (training or the mechanism adds something over its control) must not hold at a difference of
#: exactly 0, so its bound sits just above 0: below any non-zero difference of two fractions of at most
#: 4096 units (>= 1/4096² ≈ 6e-8) and far above float rounding of a difference of angles in degrees.
STRICTLY_POSITIVE = 1e-9
#: Theta alternation: the alternating gate must raise the fraction of alternating cycle pairs by at least
#: this much over the shuffled-sign gate (the former absolute bound 0.7 minus the ≈ 0.5 of independent
#: signs, which a sweep that follows a shuffled gate shows); fixed when the control was added, from that rule.
THETA_ALTERNATION_GAIN = 0.2
#: Generalisation to longer trajectories: the ratio (trained network's error / its control's error) at
#: ``generalisation_factor``× the trained length may exceed the ratio at the trained length by at most this
#: much (in units of the control's error). Fixed before the change of ratio was computed (an audit found
#: that the ratio at the long length alone gets easier with length, because the control's error grows).
#: Rule: a noisy integrator whose error grows like its control's keeps its ratio (change 0); a network that
#: stops integrating past the trained horizon moves towards ratio 1 (change ≥ 0.5 here); 0.1 — a tenth of
#: the control's error — allows test-set noise and mild degradation and separates the two.
GENERALISATION_MARGIN = 0.1
#: The margin was set by a session that had seen the previous snapshot's per-length ratios (heading 0.17 →
#: 0.22, position 0.59 → 0.63), from which the change is readable: the generalisation claims count only when
#: they hold on the pooled confirmation seeds (the confirmation runs measure both lengths anyway).
TUNED_GENERALISATION = ("the margin 0.1 on the change of ratio was set after the previous snapshot's ratios at both "
                        "lengths had been seen (heading 0.17 → 0.22, position 0.59 → 0.63)")
#: Precondition of the generalisation claims: the network integrates at the trained length at all — its
#: ratio there at most these bounds on every seed (the bounds of the former long-length claims, fixed before
#: training: 'well below' 0.5 for heading, 0.8 for position); otherwise there is nothing to generalise.
GENERALISATION_PRECONDITION = {"heading_deg": 0.5, "position_m": 0.8}


class Config(ExperimentConfig):
    """Sizes of the reproduction (quick: 3 seeds; ``train_steps`` is set by the CPU budget of the quick
    run, about 65 CPU-s for the development and the confirmation run together, each of which trains
    three HRNNs)."""

    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], description="training seeds (offsets of the run seed)")
    n_angular: int = Field(64, ge=4, le=8192, description="units of the angular module N_A")
    n_positional: int = Field(128, ge=4, le=16384, description="units of the positional module N_P")
    n_hd_cells: int = Field(32, ge=8, le=4096, description="head-direction readout cells")
    n_place_cells: int = Field(256, ge=16, le=4096, description="place readout cells")
    place_cell_profile: Literal["gaussian", "dog"] = Field(
        "gaussian", description="gaussian (fast to learn, quick scale) or dog (difference of Gaussians, Sorscher)")
    arena_side: float = Field(2.2, gt=0.2, le=20.0, description="square box side (m)")
    train_steps: int = Field(400, ge=1, le=10_000_000, description="Adam steps (quick: 400, set by the quick run's "
                             "CPU budget; 1000 before, training was ~80% of its CPU)")
    recurrent_init: Literal["identity", "uniform"] = Field(
        "identity", description="recurrent weights at the start of training (and of the untrained control): identity "
        "(IRNN, well conditioned for integration: the quick network then integrates position) or torch's uniform "
        "default (before: the quick network stayed near the stay-at-start error)")
    speed_scale_range: list[float] = Field(
        default_factory=lambda: [0.25, 4.0], description="per-trajectory factor on the Rayleigh speed scale, drawn "
        "log-uniformly in [a, b], for training and every simulated test (inferred: with i.i.d. per-step speeds of one "
        "scale an integrator of the mean speed is nearly exact over 20 steps, so the network had no reason to read v; "
        "[1, 1] is the lineage's default)")
    batch: int = Field(64, ge=1, le=100_000, description="trajectories per step")
    seq_len: int = Field(20, ge=2, le=10_000, description="training sequence length T (steps of 0.02 s)")
    lr: float = Field(5e-3, gt=0, le=1.0, description="Adam learning rate (cosine-annealed)")
    weight_decay: float = Field(1e-4, ge=0, le=1.0, description="λ on ||W^A||² + ||W^P||²")
    generalisation_factor: int = Field(3, ge=2, le=100, description="test length = factor × seq_len")
    n_test: int = Field(200, ge=10, le=100_000, description="test trajectories per length")
    n_analysis: int = Field(500, ge=20, le=1_000_000, description="trajectories (of seq_len) for tuning analyses")
    rate_map_bins: int = Field(20, ge=8, le=200, description="rate-map bins per side")
    odometer_noise: float = Field(0.1, ge=0, le=10, description="dead-reckoning noise, fraction of the input scales")
    theta_strength: float = Field(0.3, ge=0, le=1, description="β of the mutual inhibition gate")
    theta_frequency: float = Field(8.0, gt=0, le=12.5, description="theta frequency (Hz)")
    theta_steps: int = Field(200, ge=40, le=100_000, description="steps of the theta test trajectories")
    n_theta: int = Field(50, ge=2, le=100_000, description="theta test trajectories")
    recording: Literal["sargolini", "tanni"] = Field("sargolini", description="real rat path shipped in ratinabox")
    max_real_segments: int = Field(300, ge=2, le=1_000_000, description="segments of the real path evaluated")
    torch_threads: int = Field(1, ge=1, le=256, description="torch intra-op threads")

    @field_validator("speed_scale_range")
    @classmethod
    def _speed_range(cls, v: list[float]) -> list[float]:
        if len(v) != 2 or not all(math.isfinite(x) for x in v) or not 0 < v[0] <= v[1] <= 20:
            raise ValueError(f"{v}: allowed [a, b] with 0 < a <= b <= 20 (factors on the Rayleigh speed scale)")
        return v

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if len(v) < 2 or len(set(v)) != len(v):
            raise ValueError("need at least 2 distinct seeds (claims are judged over seeds)")
        return v

    @model_validator(mode="after")
    def _sizes_the_analyses_need(self) -> "Config":
        # review: these used to pass validation and crash after minutes of training
        samples = self.n_analysis * self.seq_len
        if samples < 300:
            raise ValueError(f"n_analysis × seq_len = {samples} samples; the ring topology needs >= 300 "
                             "(raise n_analysis or seq_len)")
        cycles = int(math.floor(self.theta_frequency * self.theta_steps * DT + 1e-9)) - 1
        if cycles < 4:
            raise ValueError(f"theta_steps={self.theta_steps} at theta_frequency={self.theta_frequency:g} Hz "
                             f"(dt = {DT} s) gives {cycles} complete theta cycles; sweep alternation needs >= 4 "
                             f"(theta_frequency × theta_steps × {DT} >= 5)")
        return self

    def resources(self) -> Resources:
        """GPU for the Sorscher-scale config (4096 positional units, 10^5 steps)."""
        big = self.n_positional * self.train_steps > 5_000_000
        return Resources(num_cpus=2 if big else 1, num_gpus=1 if big else 0, memory_gb=16 if big else 2,
                         hours=6.0 if big else None, on_device="HRNN training and evaluation (model and trajectory batches on ctx.device)", on_cpu="trajectory simulation (ratinabox/numpy) and the cell-type and topology analyses (numpy, ripser)")

    @classmethod
    def full(cls) -> "Config":
        """Sorscher scale: N_P = 4096 positional units, 512 DoG place cells, N_A = 512, 512 HD cells,
        batch 200, 10^5 Adam steps at lr 1e-4 (hours on one GPU per seed). Analyses use 1000 × 20
        samples (the FFT shuffles of 4096 units then need ≈ 1.3 GB)."""
        return cls(n_angular=512, n_positional=4096, n_hd_cells=512, n_place_cells=512, place_cell_profile="dog",
                   train_steps=100_000, batch=200, lr=1e-4, n_test=2000, n_analysis=1000, rate_map_bins=40,
                   n_theta=500, max_real_segments=100_000, torch_threads=8)


# --------------------------------------------------------------------------- one seed

def _build(config: Config, seed: int) -> HRNN:
    arena = Arena(config.arena_side)
    place = PlaceCells(config.n_place_cells, arena, surround_scale=2.0 if config.place_cell_profile == "dog" else None,
                       seed=seed)
    torch.manual_seed(seed)
    model = HRNN(config.n_angular, config.n_positional, HeadDirectionCells(config.n_hd_cells), place)
    return identity_init(model) if config.recurrent_init == "identity" else model


def _sim(config: Config, n: int, steps: int, rng: np.random.Generator, arena: Arena):
    """Simulated foraging with the config's per-trajectory speed range (training and tests alike)."""
    return simulate_trajectories(n, steps, rng, arena=arena, speed_scale_range=tuple(config.speed_scale_range))


def _cell_analysis(model: HRNN, traj, rng: np.random.Generator, bins: int, positional: bool = True) -> dict:
    act = collect_activity(model, traj)
    out = {"activity": act}
    for name, a in (("angular", act.angular), ("positional", act.positional))[:2 if positional else 1]:
        st = shuffled_statistics(a, act.heading, act.omega, act.speed, rng)
        active = a.std(0) > 1e-6
        grid, thr = None, 0.3
        if name == "positional":
            arena = model.place_cells.arena
            grid = gridness_scores(rate_maps(act.position, a, arena, bins))
            thr = gridness_null(act.position, a, arena, rng, bins=bins, n_maps=100) if active.any() else math.inf
        out[name] = (st, classify_cells(st, active, grid, grid_threshold=thr), grid)
    return out


def _perturbed_errors(model: HRNN, traj, *, omega: np.ndarray | float | None = None,
                      speed: np.ndarray | float | None = None):
    """Decoding errors (:class:`~.hrnn.PathIntegrationError`, ``[B, T]`` degrees and m) of ``model`` on
    ``traj`` when its angular-velocity input is replaced by ``omega`` (rad/s) and/or its speed input by
    ``speed`` (m/s) — a constant or a ``[B, T]`` array; ``None`` keeps ``traj``'s own input. The start
    cue and the targets stay those of ``traj`` (a perturbation of the input, so not a
    :class:`Trajectories`).

    Raises:
        ValueError: ``traj`` made with another dt or arena than the model's, or an array of another shape.
    """
    model.check_inputs(traj)

    def replaced(own: np.ndarray, new) -> torch.Tensor:
        if new is None:
            return torch.as_tensor(own)
        arr = np.broadcast_to(np.asarray(new, np.float32), own.shape) if np.ndim(new) == 0 else np.asarray(new)
        if arr.shape != own.shape:
            raise ValueError(f"replacement input of shape {arr.shape}; expected {own.shape} or a scalar")
        return torch.as_tensor(np.ascontiguousarray(arr, dtype=np.float32))

    t = torch.as_tensor
    with torch.no_grad():
        out = model(replaced(traj.angular_velocity, omega), replaced(traj.speed, speed), t(traj.heading[:, 0]),
                    t(traj.position[:, 0]))
    hd = model.hd_cells.decode(out.hd_logits).numpy()
    pos = model.place_cells.decode(out.place_logits).numpy()
    return PathIntegrationError(np.degrees(np.abs(wrap_angle(hd - traj.heading[:, 1:]))),
                                np.linalg.norm(pos - traj.position[:, 1:], axis=-1))


def _position_error_with_speed(model: HRNN, traj, speed: float) -> float:
    """Mean position error (m) when the speed input is replaced by the constant ``speed`` (m/s) while
    ω, the start cue and the targets stay those of ``traj`` (see :func:`_perturbed_errors`)."""
    return _perturbed_errors(model, traj, speed=speed).mean_position_m


def _one_seed(config: Config, ctx: RunContext, seed: int) -> dict:
    """Everything measured on one training seed; a confirmation run (``ctx.confirmation``) measures only
    what its tuned claims need (errors, angular-module cell types, theta) and skips the rest."""
    arena = Arena(config.arena_side)
    rng = ctx.child_rng(1000 + seed)
    model, untrained = _build(config, seed), _build(config, seed + 10_000)
    log = train_hrnn(model, TrainingConfig(config.train_steps, config.batch, config.seq_len, config.lr,
                                           config.weight_decay, speed_scale_range=tuple(config.speed_scale_range)),
                     rng, device=ctx.device)
    model.cpu()
    r: dict = {"loss_first": log.loss[0], "loss_last": float(np.mean(log.loss[-20:])),
               "train_s": log.seconds, "sequences_per_s": log.sequences_per_s}
    noise = dict(omega_noise=config.odometer_noise * SIGMA_ROTATION, speed_noise=config.odometer_noise * RAYLEIGH_SPEED)
    for tag, T in (("train_len", config.seq_len), ("long", config.generalisation_factor * config.seq_len)):
        te = _sim(config, config.n_test, T, ctx.child_rng(2000 + seed * 10 + T), arena)
        intact = evaluate(model, te)
        # controls that remove the integrated input from the same network on the same trajectories:
        # ω = 0 (its mean: the rotation information goes, the start cue stays), another trajectory's ω
        # (a batch roll: realistic input, wrong path), the batch-mean speed (the speed information goes)
        zero_omega = _perturbed_errors(model, te, omega=0.0)
        other_omega = _perturbed_errors(model, te, omega=np.roll(te.angular_velocity, 1, axis=0))
        mean_speed = _perturbed_errors(model, te, speed=float(te.speed.mean()))
        r.setdefault("paired", {})[tag] = {"hrnn_heading_deg": intact.heading_deg.mean(1),
                                           "zero_omega_heading_deg": zero_omega.heading_deg.mean(1),
                                           "hrnn_position_m": intact.position_m.mean(1),
                                           "mean_speed_position_m": mean_speed.position_m.mean(1)}
        for name, err in (("hrnn", intact), ("stay", stay_at_start(te)), ("untrained", evaluate(untrained, te)),
                          ("dead_reckoning", dead_reckoning(te, rng, **noise)),
                          ("pathway_off", evaluate(model, te, pathway=False)), ("zero_omega", zero_omega),
                          ("other_omega", other_omega), ("mean_speed", mean_speed)):
            r[f"{tag}_{name}_heading_deg"] = err.mean_heading_deg
            r[f"{tag}_{name}_position_m"] = err.mean_position_m
            if tag == "long" and name not in ("zero_omega", "other_omega", "mean_speed"):
                r.setdefault("error_by_step_long", {})[name] = {"heading_deg": err.heading_deg.mean(0).tolist(),
                                                                "position_m": err.position_m.mean(0).tolist()}
        if tag == "train_len":
            r["train_len_zero_speed_position_m"] = _position_error_with_speed(model, te, 0.0)
            x = torch.as_tensor(te.position[:, 1:])
            r["place_decoding_floor_m"] = float((model.place_cells.decode(model.place_cells.targets(x)) - x)
                                                .norm(dim=-1).mean())       # top-3 decoding of the exact code
            r["error_by_step"] = {"hrnn_position_m": intact.position_m.mean(0).tolist(),
                                  "stay_position_m": stay_at_start(te).position_m.mean(0).tolist()}
    # tuning and cell types, trained vs untrained
    an_traj = _sim(config, config.n_analysis, config.seq_len, ctx.child_rng(3000 + seed), arena)
    if ctx.confirmation:
        trained_cells = _cell_analysis(model, an_traj, rng, config.rate_map_bins, positional=False)
        _theta(config, ctx, seed, model, arena, r, *trained_cells["angular"][:2])
        return r
    trained_cells = _cell_analysis(model, an_traj, rng, config.rate_map_bins)
    control_cells = _cell_analysis(untrained, an_traj, rng, config.rate_map_bins)
    for who, cells in (("trained", trained_cells), ("untrained", control_cells)):
        for mod in ("angular", "positional"):
            for k, v in cells[mod][1].fractions.items():
                r[f"{who}_{mod}_{k}_fraction"] = v
            r[f"{who}_{mod}_n_silent"] = cells[mod][1].n_silent
        r[f"{who}_grid_threshold"] = cells["positional"][1].grid_threshold
    r["trained_cells"] = trained_cells
    stA, ctA, _ = trained_cells["angular"]
    # ring topology of the angular module (trained and untrained)
    r["ring"] = ring_topology(trained_cells["activity"].angular, ctx.child_rng(4000 + seed))
    act_u = control_cells["activity"].angular
    r["ring_untrained"] = ring_topology(act_u, ctx.child_rng(4000 + seed)) if act_u.std(0).max() > 0 else None
    # torus of the grid units of the positional module (only when enough grid units emerged)
    grid_units = trained_cells["positional"][1].masks["grid"]
    r["n_grid_units"] = int(grid_units.sum())
    r["torus"] = (torus_topology(trained_cells["activity"].positional[:, grid_units], ctx.child_rng(4500 + seed))
                  if grid_units.sum() >= 20 else None)
    # connectivity asymmetry by preferred heading
    hd = ctA.masks["head_direction"]
    ccw, cw = ctA.masks["ccw"] & hd, ctA.masks["cw"] & hd
    W = model.recurrent_angular.detach().numpy()
    r["asymmetry"] = connectivity_asymmetry(W, stA["preferred"], hd, ccw, cw) if ccw.any() and cw.any() else None
    # control: the symmetrised twin (W + Wᵀ)/2, same units and tuning (the untrained network cannot serve:
    # identity-initialised, it has no off-diagonal recurrent weights and scores 0 by construction)
    r["asymmetry_control"] = (symmetrised_control(W, stA["preferred"], hd, ccw, cw, ctx.child_rng(8000 + seed))
                              if ccw.any() and cw.any() else None)
    # silencing the AV units of the angular module
    te = _sim(config, config.n_test, config.seq_len, ctx.child_rng(5000 + seed), arena)
    av = ctA.masks["angular_velocity"]
    gain = torch.ones(1, config.seq_len, config.n_angular)
    gain[:, :, torch.as_tensor(av)] = 0.0
    r["silence_av_heading_deg"] = evaluate(model, te, angular_gain=gain).mean_heading_deg
    r["intact_heading_deg"] = evaluate(model, te).mean_heading_deg
    r["n_av_units"] = int(av.sum())
    _theta(config, ctx, seed, model, arena, r, stA, ctA)
    # real rat path replayed as input
    rec = recording_to_trajectories(load_rat_recording(config.recording), config.seq_len, arena=arena,
                                    max_segments=config.max_real_segments)
    for name, err in (("hrnn", evaluate(model, rec)), ("stay", stay_at_start(rec)), ("untrained", evaluate(untrained, rec))):
        r[f"real_{name}_heading_deg"] = err.mean_heading_deg
        r[f"real_{name}_position_m"] = err.mean_position_m
    x = torch.as_tensor(rec.position[:, 1:])
    r["real_place_decoding_floor_m"] = float((model.place_cells.decode(model.place_cells.targets(x)) - x)
                                             .norm(dim=-1).mean())      # top-3 decoding of the exact place code
    r["real_zero_speed_position_m"] = _position_error_with_speed(model, rec, 0.0)
    r["real_segments"] = rec.batch
    r["real_heading_spike_rate"] = heading_spike_rate(rec)
    r["sim_heading_spike_rate"] = heading_spike_rate(te)
    r["real_mean_speed"] = float(rec.speed.mean())
    slow = simulate_trajectories(config.n_test, config.seq_len, ctx.child_rng(7000 + seed), arena=arena,
                                 rayleigh_speed=float(rec.speed.mean()) / math.sqrt(math.pi / 2))  # same mean speed
    r["slow_sim_hrnn_position_m"] = evaluate(model, slow).mean_position_m
    r["slow_sim_stay_position_m"] = stay_at_start(slow).mean_position_m
    r["model"] = model
    return r


def _theta(config: Config, ctx: RunContext, seed: int, model: HRNN, arena: Arena, r: dict, stA: dict, ctA) -> None:
    """Theta-paced mutual inhibition between balanced CW / CCW groups (the k most tuned of each sign)."""
    av = ctA.masks["angular_velocity"]
    k = int(min(ctA.masks["ccw"].sum(), ctA.masks["cw"].sum()))
    r["theta_group_size"] = k
    if k >= 1:
        order = np.argsort(np.where(av, stA["r_omega"], 0.0))
        cw_g = np.zeros(config.n_angular, bool)
        cw_g[order[:k]] = True
        ccw_g = np.zeros(config.n_angular, bool)
        ccw_g[order[-k:]] = True
        th = _sim(config, config.n_theta, config.theta_steps, ctx.child_rng(6000 + seed), arena)
        r["theta"], r["theta_traces"] = theta_sweeps(model, th, ccw_g, cw_g, strength=config.theta_strength,
                                                     frequency=config.theta_frequency,
                                                     control_rng=ctx.child_rng(6500 + seed),
                                                     group_rng=ctx.child_rng(6700 + seed))


# --------------------------------------------------------------------------- claims

def _ratio_claims(config: Config, res: list[dict], confirmation: bool = False) -> list:
    seeds = config.seeds
    claims = []
    omega_control = ("the same trained network on the same trajectories with its angular-velocity input set to 0 "
                     "(start cue intact), which removes the rotation information (ω's mean is 0); paired by "
                     "trajectory, ratio of mean errors with a delta-method interval over trajectories")
    specs = [
        ("angular_path_integration", "train_len", "heading_deg", 0.2,
         "The HRNN performs angular path integration: its mean heading error at the trained length is at most "
         "0.2× that of the same network with its angular-velocity input set to 0 (same trajectories, start cue "
         "intact, decoded and true heading at the same step).",
         "zero_omega", omega_control, TUNED_ANGULAR,
         "a decoder fed the true state errs by ≈ 1.5° (top-3 of 32 cells), a one-step misalignment by ≈ 11°: 0.2× "
         "the no-integration error separates them"),
    ]
    for cid, tag, q, bound, statement, ctrl, control, tuned, reason in specs:
        per = []
        for r in res:
            p = r["paired"][tag]
            ratio, iv = paired_ratio(p[f"hrnn_{q}"], p[f"{ctrl}_{q}"])
            stay = r[f"{tag}_stay_{q}"]
            extra = (f"; another trajectory's ω / stay = {r[f'{tag}_other_omega_{q}'] / stay:.2f}"
                     if ctrl == "zero_omega" else "")
            per.append(C.at_most(
                cid, statement, measured=ratio, interval=iv, bound=bound, reason=reason,
                paper_value="path integration (no number in the abstract)", kind="paper", source=ABSTRACT,
                domain=(0, math.inf), tuned_after_look=tuned, object="toy", control=control,
                note=f"errors over {len(p[f'hrnn_{q}'])} trajectories: intact {r[f'{tag}_hrnn_{q}']:.3g}, control "
                     f"{r[f'{tag}_{ctrl}_{q}']:.3g}, stay-at-start {stay:.3g} ({q.split('_')[-1]}); intact / stay = "
                     f"{r[f'{tag}_hrnn_{q}'] / stay:.2f}, control / stay = {r[f'{tag}_{ctrl}_{q}'] / stay:.2f}"
                     f"{extra}; untrained network / stay = {r[f'{tag}_untrained_{q}'] / stay:.2f}; dead reckoning "
                     f"with {config.odometer_noise:.0%} input noise / stay = "
                     f"{r[f'{tag}_dead_reckoning_{q}'] / stay:.2f}"))
        claims.append(C.over_seeds(per, seeds))
    claims += _generalisation_claims(config, res)      # tuned too: confirmation runs judge them
    if confirmation:                                   # confirmation run: tuned claims only
        return claims
    per = [C.at_most("positional_path_integration", "The HRNN performs positional path integration from linear "
                     "speed: its mean position error at the trained length is at most 0.8× the error of the same "
                     "network when its speed input is replaced by the batch mean speed (ω and the start cue intact) "
                     "— the control that removes the speed information and keeps the average distance.",
                     measured=r["train_len_hrnn_position_m"] / max(r["train_len_mean_speed_position_m"], 1e-12),
                     bound=0.8, domain=(0, math.inf), kind="paper", source=ABSTRACT, object="toy",
                     control="the same trained network on the same trajectories with its speed input replaced by the "
                             "batch mean speed (ω and the start cue intact), which removes the speed information",
                     paper_value="the HRNN processes linear speed to perform positional path integration",
                     reason="the headline is judged against the control that removes its mechanism (speed): using "
                            "the speed must remove at least a fifth of the error an integrator of the mean speed "
                            "makes; fixed before this run (the stay-at-start comparison alone cannot show that speed "
                            "is integrated)",
                     note=f"error {r['train_len_hrnn_position_m']:.3f} m with the true speed, "
                          f"{r['train_len_mean_speed_position_m']:.3f} m with the batch-mean speed, "
                          f"{r['train_len_zero_speed_position_m']:.3f} m with v = 0; stay-at-start "
                          f"{r['train_len_stay_position_m']:.3f} m (ratio to stay "
                          f"{r['train_len_hrnn_position_m'] / r['train_len_stay_position_m']:.2f}). Each trajectory's "
                          f"speed scale is drawn in {config.speed_scale_range} × the lineage's (with one scale, "
                          "i.i.d. per-step speeds make an integrator of the mean speed nearly exact over 20 steps, "
                          "and the quick network did not learn to use v).")
           for r in res]
    claims.append(C.over_seeds(per, seeds))
    claims.append(_formed_claim(res, seeds))
    per = [C.at_most("beats_untrained_network", "Trained HRNN position error is below half that of the untrained "
                     "network of the same architecture (same trajectories, trained length).",
                     measured=r["train_len_hrnn_position_m"] / r["train_len_untrained_position_m"], bound=0.5,
                     reason="same 0.5× rule as against stay-at-start", kind="reconstruction", domain=(0, math.inf),
                     source="inferred: the untrained network is the control named for this reproduction")
           for r in res]
    claims.append(C.over_seeds(per, seeds))
    per = [C.at_most("vs_noisy_dead_reckoning", f"HRNN position error at 3× length is at most that of dead reckoning "
                     f"from self-motion with {config.odometer_noise:.0%} Gaussian noise.",
                     measured=r["long_hrnn_position_m"] / r["long_dead_reckoning_position_m"], bound=1.0,
                     reason="a learned integrator of noiseless inputs should not be worse than a noisy odometer",
                     domain=(0, math.inf),
                     kind="reconstruction", source="inferred: a noisy-odometer comparison; the paper names none",
                     note="the network sees noiseless inputs; exact dead reckoning of them has zero error (a ceiling "
                          "no network reaches); top-3 decoding of the exact place code already errs by "
                          f"{r['place_decoding_floor_m']:.3f} m vs dead reckoning's {r['long_dead_reckoning_position_m']:.3f} m")
           for r in res]
    claims.append(C.over_seeds(per, seeds))
    return claims


def _generalisation_claims(config: Config, res: list[dict]) -> list:
    """``generalises_longer_heading`` / ``_position``: per seed (one network), the change of the paired ratio
    (network / its control, same trajectories) from the trained length to ``generalisation_factor``× it,
    judged ``<=`` :data:`GENERALISATION_MARGIN` with a delta-method interval over the two independent test
    sets; not checkable unless the ratio at the trained length meets :data:`GENERALISATION_PRECONDITION` on
    every seed. Uses ``r["paired"][tag]`` per-trajectory errors and the ``{tag}_*`` means (notes only)."""
    seeds, claims = config.seeds, []
    factor = config.generalisation_factor
    specs = [("generalises_longer_heading", "heading_deg", "zero_omega", "heading", "angular-velocity input set to 0",
              "the same trained network on the same trajectories with its angular-velocity input set to 0 (start cue "
              "intact), which removes the rotation information (ω's mean is 0), at each length; per seed the ratio "
              "of mean errors network / control at each length, and their change (paired over the same network; "
              "delta-method interval over the two independent test sets)"),
             ("generalises_longer_position", "position_m", "mean_speed", "position",
              "speed input replaced by the batch mean speed (ω intact)",
              "the same trained network on the same trajectories with its speed input replaced by the batch mean "
              "speed (ω and the start cue intact), which removes the speed information and keeps the average "
              "distance, at each length; per seed the ratio of mean errors network / control at each length, and "
              "their change (paired over the same network; delta-method interval over the two independent test sets)")]
    for cid, q, ctrl, what, removed, control in specs:
        statement = (f"{what.capitalize()} integration generalises to sequences {factor}× longer than trained: the "
                     f"network's advantage over the same network with its {removed} is kept — its error ratio to "
                     f"that control at {factor}× the trained length exceeds the ratio at the trained length by at "
                     f"most {GENERALISATION_MARGIN:g} (same networks; the control's own error grows with length, so "
                     "the long-length ratio alone would get easier with length).")
        per, ratios = [], []
        for r in res:
            p_tr, p_lo = r["paired"]["train_len"], r["paired"]["long"]
            r_tr, _ = paired_ratio(p_tr[f"hrnn_{q}"], p_tr[f"{ctrl}_{q}"])
            r_lo, iv_lo = paired_ratio(p_lo[f"hrnn_{q}"], p_lo[f"{ctrl}_{q}"])
            delta, iv = ratio_change(p_lo[f"hrnn_{q}"], p_lo[f"{ctrl}_{q}"], p_tr[f"hrnn_{q}"], p_tr[f"{ctrl}_{q}"])
            ratios.append(r_tr)
            unit = q.split("_")[-1]
            per.append(C.at_most(
                cid, statement, measured=delta, interval=iv, bound=GENERALISATION_MARGIN, domain=(-math.inf, math.inf),
                kind="paper", source=ABSTRACT, object="toy", control=control, tuned_after_look=TUNED_GENERALISATION,
                paper_value="generalises to longer sequences than trained (no number in the abstract)",
                reason=f"{GENERALISATION_MARGIN:g}: a network that keeps integrating keeps its ratio (change ≈ 0; an "
                       "error that stays flat lowers it), one that stops integrating past the trained horizon moves "
                       "towards ratio 1; a tenth of the control's error allows noise and mild degradation. Fixed "
                       "before the change was computed, after an audit found the former rule (long-length ratio "
                       "≤ 0.5 heading / ≤ 0.8 position) easier to meet the longer the test",
                note=f"ratio {r_tr:.3f} at T = {config.seq_len}, {r_lo:.3f} [{iv_lo[0]:.3f}, {iv_lo[1]:.3f}] at "
                     f"T = {factor * config.seq_len} (the former claim judged the latter alone); errors ({unit}): "
                     f"network {r[f'train_len_hrnn_{q}']:.3g} → {r[f'long_hrnn_{q}']:.3g}, control "
                     f"{r[f'train_len_{ctrl}_{q}']:.3g} → {r[f'long_{ctrl}_{q}']:.3g}, stay-at-start "
                     f"{r[f'train_len_stay_{q}']:.3g} → {r[f'long_stay_{q}']:.3g}"))
        claim = C.over_seeds(per, seeds)
        pre = GENERALISATION_PRECONDITION[q]
        if not all(x <= pre for x in ratios):
            claim = C.as_not_checkable(
                claim, reason=f"the network does not integrate {what} at the trained length (ratio to its control "
                f"{[round(x, 3) for x in ratios]}, precondition <= {pre:g} on every seed), so there is no advantage "
                "to keep at a longer length",
                full_scale="the Sorscher-scale network integrates; the same paired test runs")
        claims.append(claim)
    return claims


def _formed(res: list[dict]) -> bool:
    """Whether the intact network integrates position on every seed (:data:`FORMED_POSITION_RATIO`)."""
    return all(_position_ratio(r) <= FORMED_POSITION_RATIO for r in res)


def _position_ratio(r: dict) -> float:
    return r["train_len_hrnn_position_m"] / r["train_len_stay_position_m"]


def _formed_claim(res: list[dict], seeds: list[int]) -> C.Claim:
    """Check claim: the object of the positional claims exists (the trained network integrates position)."""
    ratios = [round(_position_ratio(r), 3) for r in res]
    speed = [round(r["train_len_hrnn_position_m"] / max(r["train_len_mean_speed_position_m"], 1e-12), 3) for r in res]
    return C.check("hrnn_integrates_position", "The trained HRNN exists as a position integrator at this scale: on "
                   f"every seed its position error at the trained length is at most {FORMED_POSITION_RATIO:g}× the "
                   "stay-at-start baseline (the precondition of the silencing claims).",
                   measured={"position_over_stay": ratios, "position_over_mean_speed_input": speed},
                   holds=_formed(res), tolerance=f"position / stay <= {FORMED_POSITION_RATIO:g} on every seed",
                   reason="a network that does not integrate position cannot lose that ability when a pathway is cut",
                   kind="check", object="toy",
                   source="inferred: whether the quick scale's training produced the object the paper's claims are about")


def _cell_claims(config: Config, res: list[dict]) -> list:
    claims = []
    specs = [("av_cells", "angular", "angular_velocity", "angular-velocity cells (|r(rate, ω)| beyond shuffles)"),
             ("hd_cells", "angular", "head_direction", "head-direction cells (R beyond shuffles)"),
             ("speed_cells", "positional", "speed", "speed cells (|r(rate, v)| beyond shuffles)"),
             ("grid_cells", "positional", "pure_grid", "pure grid cells (gridness above its shuffle null, not "
                                                        "HD-tuned)"),
             ("conjunctive_cells", "positional", "conjunctive", "conjunctive grid × HD cells")]
    for cid, mod, key, words in specs:
        trained = [r[f"trained_{mod}_{key}_fraction"] for r in res]
        control = [r[f"untrained_{mod}_{key}_fraction"] for r in res]
        statement = (f"Training produces {words} in the {mod} module: their fraction of the active units exceeds "
                     "that of the untrained network (difference of fractions, mean over seeds with a 95% t-interval).")
        if key == "head_direction":
            # the angular module is trained onto a head-direction readout by cross-entropy, so HD tuning
            # follows from the supervision: a reconstruction check, not evidence for the paper
            kw = dict(kind="reconstruction", object="toy", paper_value="the cell type emerges",
                      source="inferred: the angular module is supervised by a head-direction readout, so its HD "
                             "tuning is what it is trained for (the paper's statement is about emergence)")
        else:
            kw = dict(kind="paper", source=ABSTRACT, paper_value="the cell type emerges", object="toy",
                      control="the untrained network of the same architecture and initialisation on the same "
                              "trajectories, classified by the same shuffle criteria (difference of fractions, "
                              "paired by seed)")
        silent = ([r[f"trained_{mod}_n_silent"] for r in res], [r[f"untrained_{mod}_n_silent"] for r in res])
        note = (f"trained {[round(v, 3) for v in trained]}, untrained {[round(v, 3) for v in control]} (fractions of "
                f"active units; silent units trained {silent[0]}, untrained {silent[1]} of "
                f"{config.n_angular if mod == 'angular' else config.n_positional}). The untrained ReLU network is "
                "driven by its inputs, so its units correlate with ω and v by construction."
                + (" Gridness threshold = 99th percentile of 100 time-shifted shuffled maps: trained "
                   f"{[round(r['trained_grid_threshold'], 2) for r in res]}, untrained "
                   f"{[round(r['untrained_grid_threshold'], 2) for r in res]}." if mod == "positional" else ""))
        if key in ("pure_grid", "conjunctive") and max(trained + control) == 0:
            claims.append(C.not_checkable(cid, statement, **kw, note=note,
                                          reason="no unit of either network has gridness above its shuffle null at "
                                                 "quick scale (small N, ~10^3 steps, Gaussian place cells)",
                                          full_scale="4096 positional units, DoG place cells, 10^5 steps on a GPU"))
            continue
        mean, iv = C.mean_interval([a - b for a, b in zip(trained, control)], domain=(-1, 1))
        claims.append(C.at_least(cid, statement, measured=mean, interval=iv, bound=STRICTLY_POSITIVE, domain=(-1, 1),
                                 reason="an excess over the untrained control, judged on the seed interval (noise); "
                                        "strictly positive (bound 1e-9, not 0: the same fraction as the control, a "
                                        "difference of exactly 0, is no emergence and must not hold); the abstract "
                                        "gives no fraction", note=note, **kw))
    return claims


def _second_bar_share(ring) -> float:
    """Second-longest H1 bar / longest (0 with fewer than two bars or a zero-length longest bar)."""
    life = ring.lifetimes
    return float(life[1] / life[0]) if len(life) > 1 and life[0] > 0 else 0.0


def _circuit_claims(config: Config, res: list[dict]) -> list:
    seeds, claims = config.seeds, []
    per = [C.at_most("ring_attractor_h1", "The angular module's population activity lies on a ring: one dominant "
                     "H1 bar (second-longest bar at most 1/3 of the longest, i.e. longest ≥ 3× the second).",
                     measured=_second_bar_share(r["ring"]), bound=1 / 3, kind="reconstruction", domain=(0, 1),
                     object="toy", paper_value="attractor dynamics",
                     source="inferred: a ring follows from supervising the angular module onto a ring of "
                            "head-direction cells, so this checks our reconstruction, not the paper's attractor claim",
                     reason="a factor 3 separates one loop from noise bars (fixed before looking); ring = H1 of 1; "
                            "judged as the share second/longest (0 with a single bar) so every seed has a finite "
                            "value in [0, 1]",
                      note=f"untrained ratio {r['ring_untrained'].ratio:.2f}" if r["ring_untrained"] else
                      "untrained network silent") for r in res]
    claims.append(C.over_seeds(per, seeds))
    torus_statement = ("The grid units of the positional module lie on a torus (two long H1 bars, one long H2 bar).")
    torus_kw = dict(kind="reconstruction", paper_value="attractor dynamics (a torus for grid cells: Gardner et al. 2022)",
                    source="inferred: the grid-cell attractor the abstract's 'attractor dynamics' implies")
    if any(r["torus"] is None for r in res):
        claims.append(C.not_checkable("grid_torus", torus_statement, **torus_kw,
                                      reason=f"fewer than 20 grid units (got {[r['n_grid_units'] for r in res]})",
                                      full_scale="the 4096-unit DoG-trained positional module's grid units"))
    else:
        claims.append(C.over_seeds([C.check("grid_torus", torus_statement, measured=[r["torus"].n_long_h1,
                                                                                     r["torus"].n_long_h2],
                                            holds=r["torus"].is_torus, tolerance="exactly 2 long H1 and 1 long H2 bars",
                                            reason="the Betti numbers of a torus", **torus_kw) for r in res], seeds))
    claims.append(_asymmetry_claim(res, seeds))
    claims += _silencing_claims(res, seeds)
    per = [C.at_least("silence_av_units", "Silencing the angular-velocity units of the angular module derails "
                      "heading: error ≥ 2× the intact network's.",
                      measured=r["silence_av_heading_deg"] / max(r["intact_heading_deg"], 1e-9), bound=2.0,
                      domain=(0, math.inf),
                      kind="reconstruction", source="inferred: the perturbation the abstract's hierarchy predicts",
                      reason="a factor 2 is far outside seed-to-seed variation of the intact error",
                      note=f"{r['n_av_units']} AV units silenced ({r['n_av_units'] / config.n_angular:.0%} of the "
                           "angular module; no size-matched random-silencing control, so it does not separate a role of "
                           "AV cells from silencing most of the module)") for r in res]
    claims.append(C.over_seeds(per, seeds))
    return claims


def _asymmetry_claim(res: list[dict], seeds: list[int]) -> C.Claim:
    """``asymmetric_connectivity``: the trained W^A's offset score minus its symmetrised twin's, per seed
    (``r["asymmetry"]``, ``r["asymmetry_control"]``), judged strictly positive over the seeds."""
    per = []
    for r in res:
        a, ctl = r["asymmetry"], r["asymmetry_control"]
        statement = ("Recurrent weights of the angular module are asymmetric by preferred heading: CCW-tuned units "
                     "project ahead (+Δθ) and CW-tuned units behind (−Δθ); measured as the score min(offset_CCW, "
                     "−offset_CW) in degrees of the trained weights minus that of their symmetrised twin "
                     "(W + Wᵀ)/2, which must be positive.")
        kw = dict(kind="paper", source=ABSTRACT, paper_value="asymmetric connectivity", domain=(-360, 360),
                  object="toy", control="the symmetrised twin (W + Wᵀ)/2 of the same trained weights, scored with "
                  "the same units, masks and preferred headings (it keeps each connection's size and removes the "
                  "directed part); paired difference, bootstrap interval over presynaptic units",
                  reason="a symmetric matrix can already give opposite-signed offsets through the connections between "
                         "the CCW and CW populations, so only the excess over the symmetrised twin shows asymmetry; "
                         "strictly positive (bound 1e-9, not 0), fixed when the control was added")
        if ctl is None:
            per.append(C.at_least("asymmetric_connectivity", statement, measured=float("nan"), bound=STRICTLY_POSITIVE,
                                  note="no HD-tuned CW or CCW units", **kw))
            continue
        per.append(C.at_least("asymmetric_connectivity", statement, measured=ctl.difference_deg, interval=ctl.interval,
                              bound=STRICTLY_POSITIVE,
                              note=(f"score {ctl.trained_deg:.1f}° trained, {ctl.symmetrised_deg:.1f}° symmetrised "
                                    f"twin; offsets CCW {math.degrees(a.offset_ccw):.1f}°, CW "
                                    f"{math.degrees(a.offset_cw):.1f}° ({a.n_ccw}/{a.n_cw} units); "
                                    f"{ctl.n_boot} bootstrap resamples"), **kw))
    return C.over_seeds(per, seeds)


def _lost_fraction(r: dict, key: str) -> float:
    """Share of the intact network's gain over stay-at-start that a perturbation removes:
    ``(e_perturbed − e_intact) / (e_stay − e_intact)`` (1: back to not integrating; 0: no effect)."""
    intact, stay = r["train_len_hrnn_position_m"], r["train_len_stay_position_m"]
    return (r[key] - intact) / max(stay - intact, 1e-12)


def _silencing_claims(res: list[dict], seeds: list[int]) -> list:
    """Cut the angular→positional pathway / set v = 0: judged against the intact network (paired), and not
    checkable when the intact network does not integrate position (the cut could not destroy anything)."""
    out = []
    specs = [("silence_pathway", "train_len_pathway_off_position_m",
              "Cutting the angular→positional pathway destroys position decoding: it removes at least 90% of the "
              "intact network's gain over the stay-at-start baseline, (e_cut − e_intact) / (e_stay − e_intact) ≥ 0.9 "
              "(same trajectories).", "functional information flow across the hierarchy",
              "without heading the positional module cannot integrate a 2-D path; 0.9 allows decoding noise",
              "the intact network on the same trajectories (paired by trajectory batch and seed)"),
             ("silence_speed_input", "train_len_zero_speed_position_m",
              "Position integration uses the linear-speed input: with the speed input set to 0 (ω and the start cue "
              "intact) the network loses at least 90% of its gain over the stay-at-start baseline, "
              "(e_v=0 − e_intact) / (e_stay − e_intact) ≥ 0.9.",
              "the HRNN processes linear speed to perform positional path integration",
              "an integrator of v_t·dt told v = 0 does not move, so it errs like the stay-at-start estimate; same "
              "0.9 as for cutting the pathway",
              "the intact network with its true speed input on the same trajectories (paired)")]
    # Cutting the pathway removes the positional module's only source of heading (its inputs are speed and
    # the angular activity), so by our architecture it cannot integrate a 2-D path afterwards: a check of the
    # architecture, not evidence for the paper. The speed input can fail (a learned prior speed) and did.
    kinds = {"silence_pathway": "check", "silence_speed_input": "paper"}
    for cid, key, statement, pv, reason, control in specs:
        per = [C.at_least(cid, statement, measured=_lost_fraction(r, key), bound=0.9, kind=kinds[cid],
                          source=ABSTRACT if kinds[cid] == "paper" else "inferred: the positional module's only "
                          "heading input is the angular pathway, so cutting it must remove position decoding",
                          paper_value=pv, object="toy", control=control, reason=reason,
                          note=(f"errors: perturbed {r[key]:.3f} m, intact {r['train_len_hrnn_position_m']:.3f} m, "
                                f"stay-at-start {r['train_len_stay_position_m']:.3f} m. Changed after a review: "
                                "judged before as perturbed / stay ≥ 0.9, which the intact network already met "
                                "when it did not integrate position"))
               for r in res]
        claim = C.over_seeds(per, seeds)
        if not _formed(res):
            claim = C.as_not_checkable(
                claim, reason="the intact network does not integrate position at this scale (position error / "
                f"stay-at-start {[round(_position_ratio(r), 2) for r in res]}, precondition <= "
                f"{FORMED_POSITION_RATIO:g} on every seed), so a perturbation has nothing to destroy",
                full_scale="the Sorscher-scale network (10^5 steps) integrates position; the same paired test runs")
        out.append(claim)
    return out


def _theta_claims(config: Config, res: list[dict]) -> list:
    seeds, claims = config.seeds, []
    ok = [r for r in res if "theta" in r]
    if len(ok) < len(res):
        return [C.not_checkable(cid, statement, paper_value="bidirectional sweeps",
                                reason="a seed had no CW or CCW units", full_scale="larger angular module",
                                kind="paper", source=ABSTRACT, tuned_after_look=TUNED_THETA, object="toy")
                for cid, statement in (("theta_alternation", "Theta sweeps alternate."),
                                       ("theta_sweeps_follow_gate", "Theta sweeps follow the gate's alternation."))]
    note = "gate strength β and group sizes: see tuned_after_look"
    rule = (f"{THETA_ALTERNATION_GAIN:g}: the former absolute bound 0.7 (below the ≈0.8 alternation reported in rats, "
            "to allow decoding noise) minus the ≈0.5 of sweeps whose sign does not follow the alternating drive")
    # theta_alternation: the control removes the mechanism the abstract names — the two learned AV
    # subpopulations between which the inhibition acts — and keeps the theta-paced alternating gate. (In this
    # reconstruction the mutual inhibition is the gate's multiplicative gain, not learned recurrent weights
    # between two rings, so zeroing or symmetrising learned cross-weights would not remove it; the untrained
    # network has no trained heading readout, so its 'sweeps' could not be decoded.)
    for cid, key, statement, control, why in (
            ("theta_alternation", "random_groups",
             "Theta-paced mutual inhibition between the learned CW and CCW AV subpopulations produces sweeps that "
             "alternate left/right in successive theta cycles: the fraction of cycle pairs with opposite sweep signs "
             "exceeds that under the same alternating inhibition between two random size-matched groups of angular "
             f"units by at least {THETA_ALTERNATION_GAIN:g}.",
             "the same network, trajectories, alternating gate and β, with the inhibition acting between two random "
             "disjoint groups of angular units of the learned CW/CCW groups' sizes (drawn per trajectory, whatever "
             "their tuning), which keeps the theta-paced alternating inhibition and removes the learned AV "
             "subpopulations it acts between; paired by trajectory, t-interval over trajectories",
             "sweeps that any gated units would produce give ≈ 0"),
            ("theta_sweeps_follow_gate", "shuffled",
             "The sweeps' alternation comes from the theta-paced alternation of dominance: with the alternating "
             "gate, the fraction of cycle pairs with opposite sweep signs exceeds that under the same inhibition "
             f"between the same CW/CCW groups with shuffled dominance by at least {THETA_ALTERNATION_GAIN:g}.",
             "the same network, trajectories, CW/CCW groups and β with each trajectory's sequence of dominant sides "
             "shuffled (the same number of CCW- and CW-dominant cycles in random order), which keeps the inhibition "
             "between the learned groups and removes its alternation (it does not remove the learned groups: "
             "theta_alternation's control does); paired by trajectory, t-interval over trajectories",
             "sweeps that alternate whatever the gate's order give ≈ 0")):
        per = []
        for r in ok:
            ctl = r["theta_traces"][key]
            mean, iv = C.mean_interval(r["theta"].alternation_by_trajectory - ctl.alternation_by_trajectory,
                                       domain=(-1, 1))
            other = r["theta_traces"]["shuffled" if key == "random_groups" else "random_groups"]
            per.append(C.at_least(
                cid, statement, measured=mean, interval=iv, bound=THETA_ALTERNATION_GAIN, kind="paper",
                domain=(-1, 1), tuned_after_look=TUNED_THETA, object="toy", control=control, source=ABSTRACT,
                paper_value="bidirectional theta sweeps (≈78–83% alternation in rats)", reason=f"{rule}; {why}",
                note=f"alternation {r['theta'].alternation:.2f} with the alternating gate on the learned groups, "
                     f"{ctl.alternation:.2f} under this control ({'shuffled dominance' if key == 'shuffled' else 'random groups'}), "
                     f"{other.alternation:.2f} under the other control; gate agreement {r['theta'].gate_agreement:.2f} "
                     f"vs {ctl.gate_agreement:.2f}; no-theta alternation {r['theta_traces']['control_alternation']:.2f}; "
                     + note))
        claims.append(C.over_seeds(per, seeds))
    per = [C.at_least("theta_alternation_rate", "With the alternating gate, sweeps alternate left/right in at least "
                      "70% of successive theta-cycle pairs (rats: ≈78–83%).", measured=r["theta"].alternation,
                      bound=0.7, kind="reconstruction", domain=(0, 1), tuned_after_look=TUNED_THETA, object="toy",
                      source="inferred: the alternation level depends on the gate's form and strength β, which the "
                             "abstract does not give (the paper claims are judged against the random-groups and shuffled-gate controls)",
                      paper_value="≈78–83% alternation in rats",
                      reason="0.7: below the ≈0.8 alternation reported in rats to allow decoding noise, well above "
                             "the ≈0.5 of independent signs", note=note) for r in ok]
    claims.append(C.over_seeds(per, seeds))
    per = [C.within("theta_sweep_offset", "Mean |sweep excursion| of the internal heading lies in 10°–50° "
                    "(rats: ≈28° ± 8° either side).", measured=r["theta"].mean_abs_offset_deg, low=10, high=50,
                    domain=(0, 180), tuned_after_look=TUNED_THETA,
                    kind="reconstruction", source="inferred: the excursion size depends on the gate strength β, "
                    "which the abstract does not give", paper_value="≈28° (rats)",
                    reason="a wide band around the rat value; the size scales with β", note=note) for r in ok]
    claims.append(C.over_seeds(per, seeds))
    per = [C.at_least("theta_position_follows", "The positional module inherits the sweep: the lateral shift of the "
                      "decoded position has the heading excursion's sign in ≥ 60% of cycles.",
                      measured=r["theta"].lateral_agreement, bound=0.6, kind="reconstruction",
                      domain=(0, 1), tuned_after_look=TUNED_THETA,
                      source="inferred: position should sweep along the internal direction",
                      reason="0.6: clearly above the 0.5 of unrelated signs given decoding noise") for r in ok]
    claims.append(C.over_seeds(per, seeds))
    return claims


def _real_claims(config: Config, res: list[dict]) -> list:
    per = [C.at_most("real_trajectories", f"On real rat paths ({config.recording}, replayed as ω and v, never trained "
                     "on) the HRNN's position error is at most half the stay-at-start baseline.",
                     measured=r["real_hrnn_position_m"] / r["real_stay_position_m"], bound=0.5, kind="reconstruction",
                     domain=(0, math.inf), object="real",
                     source="inferred: real paths test transfer from simulated foraging",
                     reason="same 0.5× rule as on simulated paths",
                     note=f"{r['real_segments']} segments; heading ratio "
                          f"{r['real_hrnn_heading_deg'] / r['real_stay_heading_deg']:.2f}; rat mean speed "
                          f"{r['real_mean_speed']:.2f} m/s vs ~1.0 m/s in training; heading from positions smoothed "
                          f"with σ = 0.1 s: |ω| > 46 rad/s on {r['real_heading_spike_rate']:.1%} of steps (simulated "
                          f"{r['sim_heading_spike_rate']:.1%}); simulated paths at the rat's mean "
                          f"speed give ratio {r['slow_sim_hrnn_position_m'] / r['slow_sim_stay_position_m']:.2f} "
                          f"(the same failure); with v = 0 the error is {r['real_zero_speed_position_m']:.3f} m vs "
                          f"{r['real_hrnn_position_m']:.3f} m with the rat's speeds: the network moves on at about the "
                          "training speed whatever v says. At T = seq_len even a perfect integrator could not pass: "
                          f"top-3 decoding of the exact place code errs by {r['real_place_decoding_floor_m']:.3f} m "
                          f"= {r['real_place_decoding_floor_m'] / r['real_stay_position_m']:.1f}× the stay baseline here")
           for r in res]
    return [C.over_seeds(per, config.seeds)]


def _check_claims(config: Config, ctx: RunContext) -> list:
    rng = ctx.child_rng(7)
    tr = simulate_trajectories(500, 50, rng, arena=Arena(config.arena_side))
    dr = dead_reckoning(tr, rng)
    exact = max(float(dr.heading_deg.max()), float(dr.position_m.max()) * 1000)
    away = np.abs(tr.position[:, :-1]).max(-1) < config.arena_side / 2 - 0.2
    sd = float(np.std(tr.angular_velocity[away]))
    return [
        C.at_most("inputs_regenerate_path", "Simulated self-motion regenerates heading and position exactly (noise-"
                  "free dead reckoning; max of heading error in degrees and position error in mm).", measured=exact,
                  bound=1e-2, kind="check", source="inferred: the simulator's definition", domain=(0, math.inf),
                  reason="float32 rounding over 50 steps"),
        C.close("rotation_velocity_sd", "Away from walls, ω has the lineage's standard deviation 11.52 rad/s.",
                measured=sd, target=SIGMA_ROTATION, rel_tol=0.05, kind="check", domain=(0, math.inf),
                source="inferred: Sorscher et al. 2019 defaults",
                reason="5% covers the sampling error of ~10^4 draws and near-wall exclusions"),
    ]


# --------------------------------------------------------------------------- figures

def _figures(ctx: RunContext, res: list[dict], config: Config) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    labels = {"hrnn": "HRNN", "stay": "stay at start", "untrained": "untrained HRNN",
              "dead_reckoning": f"dead reckoning ({config.odometer_noise:.0%} noise)", "pathway_off": "HRNN, A→P cut"}
    for ax, q, unit in ((axes[0], "heading_deg", "heading error (deg)"), (axes[1], "position_m", "position error (m)")):
        for name, lab in labels.items():
            if q == "heading_deg" and name == "pathway_off":
                continue
            curve = np.mean([r["error_by_step_long"][name][q] for r in res], axis=0)
            ax.plot((np.arange(len(curve)) + 1) * 0.02, curve, label=lab)
        ax.axvline(config.seq_len * 0.02, color="grey", ls=":", lw=1)
        ax.set_xlabel("time (s); dotted: trained length")
        ax.set_ylabel(unit)
    axes[1].legend(fontsize=7)
    ctx.save_figure("path_integration_error", fig, caption="Angular and positional path integration at 3× the "
                    "trained length (mean over seeds): the HRNN stays far below the stay-at-start floor and the "
                    "untrained network; cutting the angular→positional pathway sends position error to the floor.")

    r = res[0]
    cells = r["trained_cells"]
    act = cells["activity"]
    stP, ctP, grid = cells["positional"]
    maps = rate_maps(act.position, act.positional, Arena(config.arena_side), config.rate_map_bins)
    order = np.argsort(-np.nan_to_num(grid, nan=-9))[:8]
    stA, _, _ = cells["angular"]
    orderA = np.argsort(-stA["R"])[:4]
    fig, axes = plt.subplots(2, 6, figsize=(13, 4.6))
    for ax, n in zip(axes[:, :4].ravel(), order):
        ax.imshow(maps[n].T, origin="lower", cmap="jet")
        ax.set_title(f"P{n} g={grid[n]:.2f}", fontsize=8)
        ax.axis("off")
    bins = np.linspace(-np.pi, np.pi, 37)
    idx = np.clip(np.digitize(act.heading, bins) - 1, 0, 35)
    cnt = np.maximum(np.bincount(idx, minlength=36), 1)
    for ax, n in zip(axes[:, 4:].ravel(), orderA):
        tun = np.bincount(idx, weights=act.angular[:, n], minlength=36) / cnt
        ax.plot(np.degrees((bins[:-1] + bins[1:]) / 2), tun)
        ax.set_title(f"A{n} R={stA['R'][n]:.2f}", fontsize=8)
        ax.set_xticks([-180, 0, 180])
    fig.suptitle("Positional-module rate maps (top gridness) and angular-module heading tuning, seed 0")
    ctx.save_figure("rate_maps", fig, caption="Left: rate maps of the positional units with the highest gridness "
                    "(grids are not expected at quick scale). Right: heading tuning of the most HD-tuned angular units.")

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    ring = r["ring"]
    sub = ctx.child_rng(4000 + config.seeds[0])
    hd_idx = sub.choice(act.angular.shape[0], len(ring.projection), replace=False)
    axes[0].scatter(ring.projection[:, 0], ring.projection[:, 1], c=act.heading[hd_idx], cmap="hsv", s=6)
    axes[0].set_title("angular module, PC1–PC2 (colour: true heading)", fontsize=9)
    for key, lab in (("ring", "trained"), ("ring_untrained", "untrained")):
        if r[key] is not None:
            axes[1].plot(np.arange(1, min(10, len(r[key].lifetimes)) + 1), r[key].lifetimes[:10], "o-", label=lab)
    axes[1].set_xlabel("H1 bar rank")
    axes[1].set_ylabel("lifetime")
    axes[1].legend()
    a = r["asymmetry"]
    if a is not None:
        axes[2].plot(np.degrees(a.centres), a.profile_ccw, label="presynaptic CCW units")
        axes[2].plot(np.degrees(a.centres), a.profile_cw, label="presynaptic CW units")
        axes[2].set_xlabel("θ_post − θ_pre (deg)")
        axes[2].set_ylabel("mean W^A")
        axes[2].legend(fontsize=8)
    ctx.save_figure("ring", fig, caption="Ring attractor: the angular module's activity forms a loop coloured by "
                    "heading, one long H1 bar (untrained: none), and weight profiles offset in opposite directions "
                    "for CCW and CW units.")

    if "theta_traces" in r:
        tr = r["theta_traces"]
        fig, ax = plt.subplots(2, 1, figsize=(10, 4.5), sharex=True)
        t = (np.arange(len(tr["gate"])) + 1) * 0.02
        ax[0].plot(t, tr["gate"], "k")
        ax[0].set_ylabel("gate g(t)")
        for b in range(min(3, len(tr["offset_deg"]))):
            ax[1].plot(t, tr["offset_deg"][b], label=f"trajectory {b}")
        ax[1].set_ylabel("heading offset (deg)")
        ax[1].set_xlabel("time (s)")
        ax[1].set_xlim(0, 1.5)
        ax[1].legend(fontsize=8)
        ctx.save_figure("theta_sweeps", fig, caption="Theta-paced mutual inhibition (top: gate, + = CCW dominant) "
                        "and the decoded heading's offset from the unperturbed network. Sweeps should swing to alternate "
                        "sides in successive cycles; small within-cycle swings can ride on a drift the network never "
                        "corrects (unequal CW/CCW effects); the alternation claim counts how often they change side.")


# --------------------------------------------------------------------------- run


def run(config: Config, ctx: RunContext) -> Outcome:
    """Train, test, analyse and perturb one HRNN per seed; return metrics, figures and claims."""
    t0 = time.process_time()
    if ctx.confirmation:                               # cheap confirmation: two networks per confirmation seed
        config = config.model_copy(update={"seeds": config.seeds[:CONFIRMATION_TRAINING_SEEDS]})
    with torch_threads(config.torch_threads), blas_threads(1):
        res = [_one_seed(config, ctx, ctx.seed + s) for s in ctx.track(config.seeds, "HRNN seeds")]
        if ctx.confirmation:                           # only the claims tuned after a look (CONFIRMATION_SEEDS)
            return Outcome(metrics={"per_seed": [{k: v for k, v in r.items() if k not in
                                                  ("model", "theta", "theta_traces", "paired")} for r in res],
                                    "cpu_seconds": time.process_time() - t0},
                           claims=_ratio_claims(config, res, confirmation=True) + _theta_claims(config, res),
                           notes="Confirmation run: the claims tuned after a look, on seeds never used while choosing.")
        claims = (_ratio_claims(config, res) + _cell_claims(config, res) + _circuit_claims(config, res)
                  + _theta_claims(config, res) + _real_claims(config, res) + _check_claims(config, ctx))
        _figures(ctx, res, config)
    skip = {"trained_cells", "ring", "ring_untrained", "asymmetry", "asymmetry_control", "theta", "theta_traces",
            "model", "torus", "paired"}
    metrics = {"per_seed": [{k: v for k, v in r.items() if k not in skip} for r in res]}
    for i, r in enumerate(res):
        metrics["per_seed"][i].update(
            ring_h1_lifetimes=r["ring"].lifetimes[:5].tolist(), ring_ratio=r["ring"].ratio,
            ring_untrained_ratio=r["ring_untrained"].ratio if r["ring_untrained"] else None,
            asymmetry_offsets_deg=[math.degrees(r["asymmetry"].offset_ccw), math.degrees(r["asymmetry"].offset_cw)]
            if r["asymmetry"] else None,
            asymmetry_symmetrised_control=({k: v for k, v in vars(r["asymmetry_control"]).items()}
                                           if r["asymmetry_control"] else None))
        if "theta" in r:
            th = r["theta"]
            metrics["per_seed"][i].update(theta_alternation=th.alternation, theta_mean_abs_offset_deg=th.mean_abs_offset_deg,
                                          theta_gate_agreement=th.gate_agreement, theta_lateral_agreement=th.lateral_agreement,
                                          theta_control_alternation=r["theta_traces"]["control_alternation"],
                                          theta_shuffled_gate_alternation=r["theta_traces"]["shuffled"].alternation,
                                          theta_random_groups_alternation=r["theta_traces"]["random_groups"].alternation,
                                          theta_drift_deg_per_s=r["theta_traces"]["drift_deg_per_s"])
    metrics["cpu_seconds"] = time.process_time() - t0
    notes = ("Paper not found; only its abstract was read. The HRNN's equations, losses, cell criteria and the theta "
             "gate are inferred (Sorscher 2019 / Banino 2018 / Cueva 2020 lineage). "
             f"Place cells: {config.place_cell_profile} (the quick scale uses Gaussian place cells because DoG targets "
             "are nearly uniform and did not train in 10^3 steps; the full config uses DoG). canns (theta-sweep "
             "reference model) is not used: it pulls jax, brainpy and jupyter. Real path: "
             f"{config.recording} (ratinabox wheel), heading = movement direction.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
