"""Theta-paced mutual inhibition between the CW and CCW angular-velocity populations.

The abstract: "introducing theta-paced mutual inhibition between two learned angular-velocity
subpopulations enables the HRNN to reproduce the bidirectional theta sweeps observed in
empirical data". The gate below is ours (inferred; the paper's form is unknown)::

    φ(t) = 2π f_θ t,   k(t) = ⌊f_θ t⌋ (theta cycle),   g(t) = (−1)^{k(t)} sin φ(t)
    gain_CW(t)  = 1 − β · max(g(t), 0)       # CCW population dominant: it inhibits CW units
    gain_CCW(t) = 1 − β · max(−g(t), 0)      # CW population dominant: it inhibits CCW units

Within a cycle the dominant population wins for the first half (the internal heading swings to
its side) and the other one for the second half (it swings back); dominance alternates from one
cycle to the next (Vollan et al., Nature 2025: left–right alternating sweeps). The gains enter
the angular module's recurrence (:meth:`HRNN.rollout_angular`), so the sweep is whatever the
learned circuit makes of the inhibition, and the positional module inherits it.

Sweep statistics: the signed peak excursion, within each cycle, of the decoded heading's offset
from the unperturbed decoded heading (measured from its value when the cycle begins, so that a slow
drift left by unequal CW/CCW effects does not count as a sweep; the drift is reported apart); alternation = fraction of successive cycles whose offsets have opposite
signs; lateral position offset = decoded-position shift perpendicular to the heading.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .trajectories import Trajectories, wrap_angle

__all__ = ["theta_gate", "shuffled_signs", "random_groups", "mutual_inhibition_gain", "SweepStatistics", "theta_sweeps", "sweep_statistics"]


def theta_gate(steps: int, dt: float, frequency: float = 8.0,
               signs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(g, cycle [T])``: the theta gate ``s_k sin(2π f t)`` at ``t = dt, 2dt, …``, ``k`` the cycle.

    Args:
        signs: the dominant side ``s_k = ±1`` of each cycle ``k = 0 … ⌊f·T·dt⌋``, as ``[K]`` (one gate,
            ``g`` is ``[T]``) or ``[B, K]`` (one gate per trajectory, ``g`` is ``[B, T]``); default
            ``(−1)^k`` (dominance alternates every cycle). Another sequence (a shuffle of the
            alternating one) is the control that keeps the inhibition and removes its alternation.

    Raises:
        ValueError: frequency not in (0, 1/(4 dt)] (fewer than 4 steps per cycle cannot resolve a
            sweep), or ``signs`` with too few cycles or values other than ±1.
    """
    if not (math.isfinite(frequency) and 0 < frequency <= 1 / (4 * dt)):
        raise ValueError(f"theta frequency={frequency!r} Hz: allowed 0 < f <= 1/(4·dt) = {1 / (4 * dt):g} Hz "
                         "(at least 4 steps per theta cycle)")
    t = (np.arange(steps) + 1) * dt
    cycle = np.floor(frequency * t + 1e-9).astype(int)
    if signs is None:
        s = np.where(cycle % 2 == 0, 1.0, -1.0)
    else:
        signs = np.asarray(signs, np.float64)
        if signs.ndim not in (1, 2) or signs.shape[-1] <= cycle.max() or not np.isin(signs, (-1.0, 1.0)).all():
            raise ValueError(f"signs of shape {signs.shape}: need [K] or [B, K] of ±1 with K >= {cycle.max() + 1} "
                             "(one per theta cycle)")
        s = signs[..., cycle]
    return s * np.sin(2 * math.pi * frequency * t), cycle


def shuffled_signs(n_cycles: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """``[batch, n_cycles]``: per trajectory, a random permutation of the alternating ``(−1)^k``.

    The same number of CCW- and CW-dominant cycles as the alternating gate, in random order: the
    control for sweep alternation (a sweep that follows its gate alternates only as often as the
    shuffled sequence changes sign, about half the time).
    """
    base = np.where(np.arange(n_cycles) % 2 == 0, 1.0, -1.0)
    return np.stack([rng.permutation(base) for _ in range(batch)])


def random_groups(n_units: int, n_ccw: int, n_cw: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(ccw_mask, cw_mask)`` ``[n_units]`` bool: two disjoint groups of ``n_ccw`` and ``n_cw`` units drawn
    uniformly at random, whatever their tuning.

    The control for the learned AV subpopulations: the same alternating gate and β acting between two
    size-matched groups that are not the learned CW and CCW populations (a sweep produced by the learned
    populations' opposite effects on the heading is then absent; one produced by gating any units is not).

    Raises:
        ValueError: group sizes < 1 or together more than ``n_units``.
    """
    if n_ccw < 1 or n_cw < 1 or n_ccw + n_cw > n_units:
        raise ValueError(f"random_groups(): sizes {n_ccw} and {n_cw}: need >= 1 each and together <= {n_units} units")
    pick = rng.permutation(n_units)
    ccw, cw = np.zeros(n_units, bool), np.zeros(n_units, bool)
    ccw[pick[:n_ccw]] = True
    cw[pick[n_ccw:n_ccw + n_cw]] = True
    return ccw, cw


def mutual_inhibition_gain(gate: np.ndarray, ccw_mask: np.ndarray, cw_mask: np.ndarray,
                           strength: float) -> torch.Tensor:
    """Gains ``[1, T, N_A]`` (gate ``[T]``) or ``[B, T, N_A]`` (gate ``[B, T]``) on the angular units
    from the gate (formula in the module docstring).

    Raises:
        ValueError: strength outside [0, 1], overlapping or empty groups.
    """
    if not (math.isfinite(strength) and 0 <= strength <= 1):
        raise ValueError(f"inhibition strength={strength!r}: allowed 0 <= β <= 1 (a gain stays in [0, 1])")
    if not ccw_mask.any() or not cw_mask.any():
        raise ValueError(f"need both populations: {int(ccw_mask.sum())} CCW and {int(cw_mask.sum())} CW units")
    if np.any(ccw_mask & cw_mask):
        raise ValueError("a unit cannot be in both the CW and the CCW population")
    g = np.asarray(gate, np.float64)
    g = (g[None] if g.ndim == 1 else g)[..., None]                         # [B or 1, T, 1]
    gain = np.ones(g.shape[:2] + (len(ccw_mask),))
    gain = np.where(cw_mask, 1 - strength * np.clip(g, 0, None), gain)
    gain = np.where(ccw_mask, 1 - strength * np.clip(-g, 0, None), gain)
    return torch.tensor(gain, dtype=torch.float32)


@dataclass
class SweepStatistics:
    """Per-cycle sweep peaks and summary statistics.

    Attributes:
        peak_offset_deg: ``[n_cycles]`` signed peak excursion per cycle (degrees, + = CCW).
        alternation: fraction of successive cycle pairs with opposite offset signs.
        mean_abs_offset_deg: mean |peak offset|.
        gate_agreement: fraction of cycles whose offset sign matches the dominant population's side.
        lateral_agreement: fraction of cycles whose lateral position shift has the heading offset's sign
            (NaN when positions are not given).
        n_cycles: complete cycles used.
        alternation_by_trajectory: ``[B]`` alternation of each trajectory (for paired comparisons).
    """

    peak_offset_deg: np.ndarray
    alternation: float
    mean_abs_offset_deg: float
    gate_agreement: float
    lateral_agreement: float
    n_cycles: int
    alternation_by_trajectory: np.ndarray = field(default_factory=lambda: np.empty(0))


def sweep_statistics(offset: np.ndarray, cycle: np.ndarray, expected_sign: np.ndarray | None = None,
                     lateral: np.ndarray | None = None, min_cycles: int = 4) -> SweepStatistics:
    """Sweep statistics from signed offsets ``[B, T]`` (rad) and cycle index ``[T]``.

    Only complete cycles are used (first and last partial cycles dropped).

    Args:
        expected_sign: ``[n_cycles_total]`` (or ``[B, n_cycles_total]``, one gate per trajectory) ±1
            side of the dominant population per cycle index.
        lateral: ``[B, T]`` signed lateral position shift (m), or None.

    Raises:
        ValueError: fewer than ``min_cycles`` complete cycles (alternation is meaningless).
    """
    counts = np.bincount(cycle)
    full = [k for k in range(1, len(counts) - 1) if counts[k] >= 2]
    if len(full) < min_cycles:
        raise ValueError(f"{len(full)} complete theta cycles; need at least {min_cycles} to measure alternation "
                         "(use longer trajectories)")
    peaks, lat, exp = [], [], []
    for k in full:
        i0 = np.flatnonzero(cycle == k)[0] - 1                             # last step before the cycle
        seg = offset[:, cycle == k] - offset[:, i0, None]                  # excursion within the cycle
        j = np.abs(seg).argmax(1)
        peaks.append(seg[np.arange(len(seg)), j])
        if lateral is not None:
            lat.append((lateral[:, cycle == k] - lateral[:, i0, None])[np.arange(len(seg)), j])
        if expected_sign is not None:
            exp.append(np.broadcast_to(np.asarray(expected_sign)[..., k], (len(seg),)))
    P = np.stack(peaks, 1)                                                 # [B, n_cycles]
    flips = np.sign(P[:, 1:]) != np.sign(P[:, :-1])
    alt = float(np.mean(flips))
    agree = float(np.mean(np.sign(P) == np.stack(exp, 1))) if expected_sign is not None else math.nan
    lat_agree = float(np.mean(np.sign(np.stack(lat, 1)) == np.sign(P))) if lateral is not None else math.nan
    return SweepStatistics(np.degrees(P).ravel(), alt, float(np.degrees(np.abs(P)).mean()), agree, lat_agree,
                           P.shape[1], flips.mean(1))


def theta_sweeps(model, traj: Trajectories, ccw_mask: np.ndarray, cw_mask: np.ndarray, *, strength: float = 0.5,
                 frequency: float = 8.0, control_rng: np.random.Generator | None = None,
                 group_rng: np.random.Generator | None = None) -> tuple[SweepStatistics, dict]:
    """Run the trained model with and without theta-paced mutual inhibition and measure sweeps.

    The offset is the decoded heading under inhibition minus the decoded heading of the same
    network without it (so path-integration drift cancels); the lateral shift is the decoded
    position difference projected on the left normal of the unperturbed decoded heading.

    Args:
        control_rng: when given, also run the **shuffled-gate control**: the same network, trajectories,
            groups and β, with each trajectory's sequence of dominant sides a random permutation of the
            alternating one (:func:`shuffled_signs`), so the inhibition stays and its alternation goes.
        group_rng: when given, also run the **random-groups control**: the same network, trajectories,
            alternating gate and β, acting between two random disjoint unit groups of the learned groups'
            sizes (:func:`random_groups`, one draw per trajectory, so the interval over trajectories
            includes the draw), so the theta-paced inhibition and its
            alternation stay and the learned CW/CCW subpopulations go.

    Returns:
        ``(SweepStatistics, traces)`` with traces ``offset_deg [B, T]``, ``gate [T]``,
        ``baseline_offset_deg [B, T]`` (unperturbed decoded minus true heading, the no-theta control),
        ``control_alternation`` (the same statistics on that control), ``drift_deg_per_s`` (mean
        |offset| at the end / duration), and with ``control_rng`` ``shuffled`` (the
        :class:`SweepStatistics` of the shuffled-gate control, its expected signs the shuffled ones), with
        ``group_rng`` ``random_groups`` (the :class:`SweepStatistics` of the random-groups control).
    """
    gate, cycle = theta_gate(traj.steps, traj.dt, frequency)
    gain = mutual_inhibition_gain(gate, ccw_mask, cw_mask, strength)
    base = model.run(traj)
    hd0 = model.hd_cells.population_vector(base.hd_logits).numpy()
    p0 = model.place_cells.decode(base.place_logits).numpy()

    def sweeps(gain: torch.Tensor, expected: np.ndarray):
        pert = model.run(traj, angular_gain=gain)
        offset = wrap_angle(model.hd_cells.population_vector(pert.hd_logits).numpy() - hd0)
        p1 = model.place_cells.decode(pert.place_logits).numpy()
        lateral = (p1 - p0)[..., 0] * -np.sin(hd0) + (p1 - p0)[..., 1] * np.cos(hd0)
        return sweep_statistics(offset, cycle, expected, lateral), offset

    expected = np.where(np.arange(cycle.max() + 1) % 2 == 0, 1.0, -1.0)   # even cycles: CCW dominant (+)
    stats, offset = sweeps(gain, expected)
    control = sweep_statistics(wrap_angle(hd0 - traj.heading[:, 1:]), cycle)
    drift = float(np.degrees(np.abs(offset[:, -1])).mean() / (traj.steps * traj.dt))
    traces = {"offset_deg": np.degrees(offset), "gate": gate, "cycle": cycle, "drift_deg_per_s": drift,
              "baseline_offset_deg": np.degrees(wrap_angle(hd0 - traj.heading[:, 1:])),
              "control_alternation": control.alternation}
    if control_rng is not None:
        signs = shuffled_signs(cycle.max() + 1, traj.batch, control_rng)
        shuffled_gate, _ = theta_gate(traj.steps, traj.dt, frequency, signs=signs)
        traces["shuffled"], _ = sweeps(mutual_inhibition_gain(shuffled_gate, ccw_mask, cw_mask, strength), signs)
    if group_rng is not None:
        draws = [random_groups(len(ccw_mask), int(ccw_mask.sum()), int(cw_mask.sum()), group_rng)
                 for _ in range(traj.batch)]                               # one draw per trajectory
        gains = torch.cat([mutual_inhibition_gain(gate, ccw_r, cw_r, strength) for ccw_r, cw_r in draws])
        traces["random_groups"], _ = sweeps(gains, expected)
    return stats, traces
