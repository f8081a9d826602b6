"""Trajectories for path integration: a simulated rat in a square box, and real rat paths.

A trajectory of ``T`` steps of length ``dt`` is the heading ``θ_0..θ_T`` and position
``x_0..x_T`` together with the self-motion inputs that generate it exactly::

    θ_t = θ_{t-1} + ω_t dt                       # angular velocity ω_t (rad/s)
    x_t = x_{t-1} + v_t dt (cos θ_t, sin θ_t)    # linear speed v_t (m/s), heading = movement direction

Simulation follows the defaults of the grid-cell path-integration lineage (Sorscher, Mel, Ganguli
& Ocko, NeurIPS 2019, their trajectory generator): dt = 0.02 s, rotational velocity
``N(0, 11.52 rad/s)``, forward speed ``Rayleigh(0.13·2π m/s)``, and wall avoidance (within 3 cm
of a wall while facing it: turn away by ``π/2 − |angle to wall|`` and slow to 25 %). Ours
(inferred, so that inputs and positions agree exactly): the turn is applied before the step, and
a step that would leave the box is shortened to end inside it (its speed is the shortened one).

Real paths: ``ratinabox`` 1.15.3 ships two recordings in its wheel (``ratinabox/data``):
Sargolini et al. 2006 (1 × 1 m box, 600 s at 50 Hz) and Tanni et al. 2022 (3.5 × 2.5 m, 7323 s
at 30 Hz). Both hold positions only; heading is the movement direction and ω its wrapped
difference (:func:`recording_to_trajectories`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Arena", "Trajectories", "simulate_trajectories", "simulate_batches", "RatRecording", "load_rat_recording",
           "resample_recording", "recording_to_trajectories", "heading_spike_rate", "wrap_angle", "SIGMA_ROTATION",
           "RAYLEIGH_SPEED", "DT"]

DT = 0.02  #: s, time step of the lineage (Sorscher et al. 2019)
SIGMA_ROTATION = 11.52  #: rad/s, std of the rotational velocity (Sorscher et al. 2019: 5.76·2)
RAYLEIGH_SPEED = 0.13 * 2 * math.pi  #: m/s, Rayleigh scale of the forward speed (Sorscher et al. 2019)
WALL_BORDER = 0.03  #: m, wall-avoidance distance (Sorscher et al. 2019)
WALL_SLOWDOWN = 0.25  #: speed factor near a wall (Sorscher et al. 2019)
RECORDINGS = {"sargolini": "Sargolini et al. 2006, 1 x 1 m box, 50 Hz",
              "tanni": "Tanni et al. 2022, 3.5 x 2.5 m environment, 30 Hz"}


def wrap_angle(a):
    """Wrap angles (rad, any shape, numpy or torch) to [-π, π)."""
    return (a + math.pi) % (2 * math.pi) - math.pi


@dataclass(frozen=True)
class Arena:
    """Square box ``[-side/2, side/2]²`` (metres), centred at the origin.

    Raises:
        ValueError: ``side`` not a finite number > 0.

    Source: Sorscher et al. 2019 (2.2 m box, non-periodic).
    """

    side: float = 2.2

    def __post_init__(self) -> None:
        if not (isinstance(self.side, (int, float)) and math.isfinite(self.side) and self.side > 0):
            raise ValueError(f"Arena.side={self.side!r}: must be a finite length in metres > 0")

    @property
    def half(self) -> float:
        """Half side (m)."""
        return self.side / 2

    def contains(self, pos: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        """Boolean mask ``[...]`` of positions ``[..., 2]`` inside the box (with tolerance ``tol`` m)."""
        return np.all(np.abs(np.asarray(pos)) <= self.half + tol, axis=-1)


@dataclass(frozen=True)
class Trajectories:
    """A batch of ``B`` trajectories of ``T`` steps (float32 numpy arrays).

    Attributes:
        position: ``[B, T+1, 2]`` metres, inside the arena.
        heading: ``[B, T+1]`` rad in [-π, π) (movement direction).
        angular_velocity: ``[B, T]`` rad/s, ``ω_t = wrap(θ_t − θ_{t−1}) / dt``.
        speed: ``[B, T]`` m/s, ``v_t = |x_t − x_{t−1}| / dt`` (≥ 0).
        dt: step length (s).
        arena: the box the positions lie in.

    Raises:
        ValueError: mismatched shapes, NaN/inf values, negative speed, dt ≤ 0, positions outside
            the arena, or inputs that do not regenerate the path: headings (|error| > 1e-3 rad) or
            positions (a step missing by more than 0.1 mm + 0.1 % of its length — catches speeds in
            other units or computed with another dt).
        TypeError: non-numeric (complex, bool, string) arrays, dt not a number, arena not an :class:`Arena`.
    """

    position: np.ndarray
    heading: np.ndarray
    angular_velocity: np.ndarray
    speed: np.ndarray
    dt: float
    arena: Arena

    def __post_init__(self) -> None:
        if not isinstance(self.arena, Arena):
            raise TypeError(f"arena={self.arena!r}: must be an Arena (e.g. Arena(2.2)), not {type(self.arena).__name__}")
        if isinstance(self.dt, bool) or not isinstance(self.dt, (int, float, np.integer, np.floating)):
            raise TypeError(f"dt={self.dt!r}: must be a number of seconds, not {type(self.dt).__name__}")
        for name in ("position", "heading", "angular_velocity", "speed"):
            kind = np.asarray(getattr(self, name)).dtype.kind
            if kind not in "iuf":
                raise TypeError(f"{name} has dtype {np.asarray(getattr(self, name)).dtype}; expected real numbers "
                                "(float or int)")
        pos, hd = np.asarray(self.position, np.float32), np.asarray(self.heading, np.float32)
        om, v = np.asarray(self.angular_velocity, np.float32), np.asarray(self.speed, np.float32)
        if pos.ndim != 3 or pos.shape[-1] != 2:
            raise ValueError(f"position has shape {pos.shape}; expected [B, T+1, 2]")
        B, T1 = pos.shape[:2]
        if T1 < 2:
            raise ValueError(f"position has {T1} time points; need at least 2 (one step)")
        for name, arr, shape in (("heading", hd, (B, T1)), ("angular_velocity", om, (B, T1 - 1)),
                                 ("speed", v, (B, T1 - 1))):
            if arr.shape != shape:
                raise ValueError(f"{name} has shape {arr.shape}; expected {shape} for position {pos.shape}")
        for name, arr in (("position", pos), ("heading", hd), ("angular_velocity", om), ("speed", v)):
            if not np.all(np.isfinite(arr)):
                idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
                raise ValueError(f"{name}{idx} = {arr[idx]}: trajectories must be finite (no NaN/inf)")
        if not (math.isfinite(self.dt) and self.dt > 0):
            raise ValueError(f"dt={self.dt!r}: must be a finite step length in seconds > 0")
        if np.any(v < 0):
            raise ValueError(f"speed has a negative value {float(v.min()):.3g} m/s; speeds are >= 0")
        inside = self.arena.contains(pos, tol=1e-4)
        if not np.all(inside):
            b, t = (int(i) for i in np.argwhere(~inside)[0])
            raise ValueError(f"position[{b}, {t}] = {pos[b, t].tolist()} leaves the arena "
                             f"[-{self.arena.half:g}, {self.arena.half:g}]² m")
        recon = wrap_angle(hd[:, :1] + np.cumsum(om.astype(np.float64) * self.dt, axis=1) - hd[:, 1:])
        if np.abs(recon).max(initial=0) > 1e-3:
            raise ValueError(f"angular_velocity does not regenerate heading (max error {np.abs(recon).max():.3g} "
                             f"rad): check dt={self.dt} and units (ω in rad/s)")
        # x_t = x_{t-1} + v_t dt (cos θ_t, sin θ_t), step by step (no accumulation: float32 rounding only)
        step = (v.astype(np.float64) * self.dt)[..., None] * np.stack([np.cos(hd[:, 1:]), np.sin(hd[:, 1:])], -1)
        miss = np.linalg.norm(pos[:, :-1].astype(np.float64) + step - pos[:, 1:], axis=-1)
        tol = 1e-4 + 1e-3 * np.linalg.norm(step, axis=-1)               # 0.1 mm + 0.1 % of the step
        if np.any(miss > tol):
            b, t = (int(i) for i in np.argwhere(miss > tol)[0])
            raise ValueError(f"speed and heading do not regenerate position: step {t} of trajectory {b} moves "
                             f"{float(np.linalg.norm(pos[b, t + 1] - pos[b, t])):.4g} m but v·dt = "
                             f"{float(v[b, t]) * self.dt:.4g} m along θ (miss {float(miss[b, t]):.3g} m); check "
                             f"dt={self.dt} and units (v in m/s, heading = movement direction)")
        for name, arr in (("position", pos), ("heading", hd), ("angular_velocity", om), ("speed", v)):
            object.__setattr__(self, name, arr)

    @property
    def batch(self) -> int:
        """Number of trajectories B."""
        return self.position.shape[0]

    @property
    def steps(self) -> int:
        """Number of steps T."""
        return self.position.shape[1] - 1

    def self_motion(self) -> tuple[np.ndarray, np.ndarray]:
        """The inputs ``(ω [B, T] rad/s, v [B, T] m/s)``."""
        return self.angular_velocity, self.speed

    def subset(self, idx) -> "Trajectories":
        """The trajectories ``idx`` (an index array or slice)."""
        return Trajectories(self.position[idx], self.heading[idx], self.angular_velocity[idx], self.speed[idx],
                            self.dt, self.arena)


def _max_step_inside(pos: np.ndarray, direction: np.ndarray, half: float) -> np.ndarray:
    """Largest step length ``[B]`` from ``pos [B, 2]`` along unit ``direction [B, 2]`` staying in the box."""
    with np.errstate(divide="ignore", invalid="ignore"):
        to_wall = np.where(direction > 0, (half - pos) / direction,
                           np.where(direction < 0, (-half - pos) / direction, np.inf))
    return np.clip(to_wall.min(axis=1), 0.0, None)


def simulate_trajectories(n: int, steps: int, rng: np.random.Generator, *, arena: Arena = Arena(),
                          dt: float = DT, sigma_rotation: float = SIGMA_ROTATION,
                          rayleigh_speed: float = RAYLEIGH_SPEED, border: float = WALL_BORDER,
                          speed_scale_range: tuple[float, float] = (1.0, 1.0)) -> Trajectories:
    r"""Simulate ``n`` random-foraging trajectories of ``steps`` steps (vectorised over the batch).

    Per step (Sorscher et al. 2019 defaults, see the module docstring):

    .. math::

        \begin{aligned}
        \mathrm{turn}_t &= dt \cdot \mathcal{N}(0, \sigma_{\mathrm{rot}})
          \;\big(+\,\mathrm{sign}(\varphi_{\mathrm{wall}})(\tfrac{\pi}{2} - |\varphi_{\mathrm{wall}}|)
          \text{ if } d_{\mathrm{wall}} < \text{border and } |\varphi_{\mathrm{wall}}| < \tfrac{\pi}{2}\big),\\
        \theta_t &= \theta_{t-1} + \mathrm{turn}_t, \qquad
          v_t \sim \mathrm{Rayleigh}(b)\ (\times 0.25 \text{ near a wall}),\\
        x_t &= x_{t-1} + \min(v_t\,dt,\ \text{distance to the wall along } \theta_t)\,(\cos\theta_t, \sin\theta_t).
        \end{aligned}

    Start positions are uniform in the box, start headings uniform on the circle. With
    ``speed_scale_range = (a, b)`` each trajectory's Rayleigh scale is multiplied by a factor drawn
    log-uniformly in [a, b] (ours, inferred: real rats move at 0.1–0.2 m/s, far below the lineage's
    ~1 m/s; (1, 1) is the lineage default).

    Args:
        n: trajectories (≥ 1). steps: T (≥ 1). rng: numpy generator.
        arena: the box. dt: step (s). sigma_rotation: rad/s (≥ 0). rayleigh_speed: m/s (> 0).
        border: wall-avoidance distance (m, ≥ 0). speed_scale_range: (a, b) with 0 < a ≤ b.

    Returns:
        :class:`Trajectories` with inputs that regenerate positions and headings exactly.

    Raises:
        ValueError: a non-positive count, dt, speed scale or arena smaller than 2·border.
    """
    return simulate_batches(1, n, steps, rng, arena=arena, dt=dt, sigma_rotation=sigma_rotation,
                            rayleigh_speed=rayleigh_speed, border=border, speed_scale_range=speed_scale_range)


def simulate_batches(n_batches: int, n: int, steps: int, rng: np.random.Generator, *, arena: Arena = Arena(),
                     dt: float = DT, sigma_rotation: float = SIGMA_ROTATION,
                     rayleigh_speed: float = RAYLEIGH_SPEED, border: float = WALL_BORDER,
                     speed_scale_range: tuple[float, float] = (1.0, 1.0)) -> Trajectories:
    """``n_batches`` consecutive calls of :func:`simulate_trajectories` (``n`` trajectories each) in one
    vectorised pass: the random draws are taken batch by batch in the order those calls take them, so
    the result equals their concatenation along the batch axis (bit for bit, rows ``b·n … (b+1)·n − 1``
    are call ``b``) and leaves ``rng`` in the same state; the wall-avoidance dynamics, which act on each
    trajectory alone, then run once over all ``n_batches · n`` trajectories (training draws one batch per
    step: one pass per chunk of steps instead of a Python loop over ``steps`` per step).

    Raises:
        ValueError: as :func:`simulate_trajectories`, or ``n_batches`` < 1.
    """
    for name, val in (("n_batches", n_batches), ("n", n), ("steps", steps)):
        if isinstance(val, bool) or int(val) != val or val < 1:
            raise ValueError(f"{name}={val!r}: must be an integer >= 1")
    for name, val, lo in (("dt", dt, 0.0), ("rayleigh_speed", rayleigh_speed, 0.0)):
        if not (math.isfinite(val) and val > lo):
            raise ValueError(f"{name}={val!r}: must be finite and > {lo}")
    if not (math.isfinite(sigma_rotation) and sigma_rotation >= 0):
        raise ValueError(f"sigma_rotation={sigma_rotation!r}: must be a finite std in rad/s >= 0")
    if not (math.isfinite(border) and 0 <= 2 * border < arena.side):
        raise ValueError(f"border={border!r}: must be >= 0 and < half the arena side {arena.side / 2:g} m")
    lo_s, hi_s = (float(v) for v in speed_scale_range)
    if not (math.isfinite(lo_s) and math.isfinite(hi_s) and 0 < lo_s <= hi_s):
        raise ValueError(f"speed_scale_range={speed_scale_range!r}: need finite 0 < a <= b")
    n_batches, n, steps, half = int(n_batches), int(n), int(steps), arena.half
    draws = []
    for _ in range(n_batches):                                         # the draw order of one call each
        start = rng.uniform(-half, half, (n, 2))
        hd0 = rng.uniform(-math.pi, math.pi, n)
        turns = rng.normal(0.0, sigma_rotation, (n, steps)) * dt
        speeds = rng.rayleigh(rayleigh_speed, (n, steps))
        if (lo_s, hi_s) != (1.0, 1.0):
            speeds *= np.exp(rng.uniform(math.log(lo_s), math.log(hi_s), (n, 1)))
        draws.append((start, hd0, turns, speeds))
    start, hd0, turns, speeds = (np.concatenate(a) for a in zip(*draws))
    n = n_batches * n
    pos = np.empty((n, steps + 1, 2))
    hd = np.empty((n, steps + 1))
    pos[:, 0] = start
    hd[:, 0] = hd0
    walls = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])  # outward normals of the 4 walls
    wall_angle = np.arctan2(walls[:, 1], walls[:, 0])
    step_len = np.empty((n, steps))
    for t in range(steps):
        p, h = pos[:, t], hd[:, t]
        dist = half - p @ walls.T                                      # [n, 4] distance to each wall
        k = dist.argmin(axis=1)
        d_wall = dist[np.arange(n), k]
        phi = wrap_angle(wall_angle[k] - h)                            # angle to the nearest wall
        near = (d_wall < border) & (np.abs(phi) < math.pi / 2)
        turn = turns[:, t] - np.where(near, np.sign(phi) * (math.pi / 2 - np.abs(phi)), 0.0)
        v = np.where(near, WALL_SLOWDOWN * speeds[:, t], speeds[:, t])
        hd[:, t + 1] = wrap_angle(h + turn)
        direction = np.stack([np.cos(hd[:, t + 1]), np.sin(hd[:, t + 1])], axis=1)
        s = np.minimum(v * dt, 0.999 * _max_step_inside(p, direction, half))
        pos[:, t + 1] = p + s[:, None] * direction
        step_len[:, t] = s
    omega = wrap_angle(np.diff(hd, axis=1)) / dt
    return Trajectories(pos, hd, omega, step_len / dt, dt, arena)


# --------------------------------------------------------------------------- real recordings

@dataclass(frozen=True)
class RatRecording:
    """A recorded path: times ``t [N]`` (s, strictly increasing) and positions ``pos [N, 2]`` (m).

    Raises:
        ValueError: mismatched lengths, fewer than 3 samples, NaN/inf, or non-increasing times.
    """

    name: str
    t: np.ndarray
    pos: np.ndarray

    def __post_init__(self) -> None:
        t, pos = np.asarray(self.t, np.float64), np.asarray(self.pos, np.float64)
        if t.ndim != 1 or pos.shape != (t.shape[0], 2):
            raise ValueError(f"recording {self.name!r}: t {t.shape} and pos {pos.shape}; expected [N] and [N, 2]")
        if len(t) < 3:
            raise ValueError(f"recording {self.name!r} has {len(t)} samples; need at least 3")
        for nm, arr in (("t", t), ("pos", pos)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"recording {self.name!r}: {nm} has NaN/inf at sample "
                                 f"{int(np.argwhere(~np.isfinite(arr))[0][0])}")
        if np.any(np.diff(t) <= 0):
            i = int(np.argmax(np.diff(t) <= 0))
            raise ValueError(f"recording {self.name!r}: times not strictly increasing at sample {i + 1} "
                             f"({t[i]} -> {t[i + 1]} s)")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "pos", pos)

    @property
    def sampling_interval(self) -> float:
        """Median sampling interval (s)."""
        return float(np.median(np.diff(self.t)))


def load_rat_recording(name: str = "sargolini", path: str | Path | None = None) -> RatRecording:
    """Load a real rat path shipped in the ``ratinabox`` wheel, or any ``.npz`` with ``t`` and ``pos``.

    Args:
        name: ``"sargolini"`` (Sargolini et al. 2006) or ``"tanni"`` (Tanni et al. 2022).
        path: a local ``.npz`` holding arrays ``t [N]`` (s) and ``pos [N, 2]`` (m); overrides ``name``.

    Raises:
        ValueError: unknown name, or a file without ``t``/``pos``.
        ImportError: ``ratinabox`` missing (``pip install -c constraints.txt -e '.[neuro]'``) when no ``path`` is given.
    """
    if path is None:
        if name not in RECORDINGS:
            raise ValueError(f"recording {name!r}: allowed {sorted(RECORDINGS)} or a path to an .npz")
        try:
            import ratinabox
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError("the shipped rat recordings need ratinabox (pip install -c constraints.txt -e '.[neuro]')") from exc
        path = Path(ratinabox.__file__).parent / "data" / f"{name}.npz"
    with np.load(path) as z:
        missing = {"t", "pos"} - set(z.files)
        if missing:
            raise ValueError(f"{path}: missing arrays {sorted(missing)}; expected 't' [N] (s) and 'pos' [N, 2] (m)")
        return RatRecording(str(name if path is None else Path(path).stem), z["t"], z["pos"])


def resample_recording(rec: RatRecording, dt: float, *, max_interval_ratio: float = 2.0,
                       max_gap: float = 0.25) -> list[np.ndarray]:
    """Linearly interpolate a recording onto a regular grid of step ``dt``.

    Interpolation may only refine the sampling: a recording sampled more coarsely than
    ``max_interval_ratio · dt`` would invent motion and is refused. Gaps in tracking longer than
    ``max(max_gap, max_interval_ratio · dt)`` seconds split the recording into pieces (the second
    term keeps a coarse model step from counting every sample interval as a gap).

    Returns:
        List of position arrays ``[n_i, 2]`` (m), one per gap-free piece, on the ``dt`` grid
        ``t_0 + k·dt ≤ t_last`` (end point included: 5 samples 1 s apart at dt = 1 give 5 points).

    Raises:
        ValueError: dt ≤ 0, a median sampling interval above ``max_interval_ratio · dt``, or no
            gap-free piece of two samples.
    """
    if isinstance(dt, bool) or not isinstance(dt, (int, float, np.integer, np.floating)) or not (
            math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt={dt!r}: must be a finite step in seconds > 0")
    si = rec.sampling_interval
    if si > max_interval_ratio * dt:
        raise ValueError(f"recording {rec.name!r} is sampled every {si:.4g} s, coarser than "
                         f"{max_interval_ratio:g} x the model step dt={dt:g} s; resample the model or record faster")
    cuts = np.flatnonzero(np.diff(rec.t) > max(max_gap, max_interval_ratio * dt)) + 1
    pieces = []
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(rec.t)]):
        t = rec.t[lo:hi]
        if len(t) < 2:
            continue
        n = int(math.floor((t[-1] - t[0]) / dt * (1 + 1e-12) + 1e-9)) + 1   # t[0], t[0]+dt, … ≤ t[-1]: the last
        grid = t[0] + dt * np.arange(n)                                     # sample is kept when it is on the grid
        pieces.append(np.stack([np.interp(grid, t, rec.pos[lo:hi, 0]), np.interp(grid, t, rec.pos[lo:hi, 1])], 1))
    if not pieces:
        raise ValueError(f"recording {rec.name!r}: every sample is separated from the next by a tracking gap "
                         f"> {max(max_gap, max_interval_ratio * dt):g} s; nothing to resample")
    return pieces


MAX_SPEED = 10.0  #: m/s; ours: no rat runs this fast, a faster step is a tracking jump
MIN_SCALE = 0.1  #: ours: shrinking a recording more than 10× to fit the arena means its positions are not in metres


SMOOTH_S = 0.1  #: s, Gaussian σ for tracked positions before heading is taken (field practice: 0.1–0.2 s)
SPIKE_OMEGA = 4 * SIGMA_ROTATION  #: rad/s, |ω| above 4σ of the simulated turning counts as a heading spike


def heading_spike_rate(traj: Trajectories, threshold: float = SPIKE_OMEGA) -> float:
    """Fraction of steps whose angular velocity exceeds ``threshold`` (rad/s; default 4 × 11.52 = 46).

    On simulated paths it is ≈ 0.8 % (wall turns); on tracked paths a higher rate means heading
    is taken from tracking jitter. Returns a float in [0, 1].
    """
    return float(np.mean(np.abs(traj.angular_velocity) > threshold))


def recording_to_trajectories(rec: RatRecording, steps: int, *, arena: Arena = Arena(), dt: float = DT,
                              min_speed: float = 0.02, max_segments: int | None = None,
                              max_speed: float = MAX_SPEED, smooth_s: float = SMOOTH_S) -> Trajectories:
    """Cut a real path into non-overlapping ``steps``-step trajectories placed in ``arena``.

    The recording's bounding box is centred in the arena, at its own scale when it fits, else
    shrunk uniformly to fit (speeds shrink by the same factor). Positions are first smoothed with a
    Gaussian of σ = ``smooth_s`` seconds (as the field does with tracked positions: without it, jitter
    of a few mm between frames makes the movement direction swing, and |ω| > 46 rad/s on 4.3 % of
    Sargolini's and 10.4 % of Tanni's steps against 0.8 % on simulated paths; with σ = 0.1 s it is
    0.6 % and 1.1 % — :func:`heading_spike_rate` reports it). Heading is the movement direction
    ``atan2(Δy, Δx)``, held at its last value while the speed is below ``min_speed`` (at rest);
    ``ω`` is its wrapped difference / dt;
    positions are re-integrated from the inputs within each segment so inputs and targets agree
    exactly (the drift from the recorded path is at most the jitter removed at rest).

    A segment whose re-integrated path strays outside the arena is translated back inside (this
    keeps inputs and positions consistent; the rescaling leaves a 1 % margin for it).

    Args:
        rec: the recording. steps: T per trajectory. arena, dt: the model's.
        min_speed: m/s below which heading is held. max_segments: keep at most this many (first ones).
        max_speed: m/s; a faster movement between two recorded samples is a tracking jump and is refused.
        smooth_s: σ (s) of the Gaussian smoothing of positions (0: none).

    Raises:
        ValueError: the recording is too short for one trajectory of ``steps`` steps, contains a
            movement faster than ``max_speed`` (naming the sample), would have to shrink more than
            10× to fit the arena (positions probably not in metres), or any error of
            :func:`resample_recording`.
    """
    if isinstance(steps, bool) or int(steps) != steps or steps < 1:
        raise ValueError(f"steps={steps!r}: must be an integer >= 1")
    if not (math.isfinite(max_speed) and max_speed > 0):
        raise ValueError(f"max_speed={max_speed!r}: must be a finite speed in m/s > 0")
    raw_v = np.linalg.norm(np.diff(rec.pos, axis=0), axis=1) / np.diff(rec.t)
    if np.any(raw_v > max_speed):
        i = int(np.argmax(raw_v > max_speed))
        raise ValueError(f"recording {rec.name!r}: the rat moves {raw_v[i]:.3g} m/s between samples {i} and {i + 1} "
                         f"(t = {rec.t[i]:.4g} s), faster than max_speed={max_speed:g} m/s: a tracking jump, or "
                         "positions not in metres; clean the recording or raise max_speed")
    if not (math.isfinite(smooth_s) and smooth_s >= 0):
        raise ValueError(f"smooth_s={smooth_s!r}: must be a finite time in seconds >= 0")
    pieces = resample_recording(rec, dt)
    if smooth_s > 0:
        from scipy.ndimage import gaussian_filter1d

        pieces = [gaussian_filter1d(p, smooth_s / dt, axis=0, mode="nearest") for p in pieces]
    lo = np.min([p.min(0) for p in pieces], axis=0)
    hi = np.max([p.max(0) for p in pieces], axis=0)
    extent = float(np.max(hi - lo))
    scale = min(1.0, 0.98 * arena.side / extent) if extent > 0 else 1.0
    if scale < MIN_SCALE:
        raise ValueError(f"recording {rec.name!r} spans {extent:.4g} (units of pos) but the arena is {arena.side:g} m: "
                         f"it would shrink {1 / scale:.3g}×; give positions in metres or a larger Arena")
    centre = (lo + hi) / 2
    segs = []
    for p in pieces:
        p = (p - centre) * scale
        for k in range((len(p) - 1) // steps):
            segs.append(p[k * steps: (k + 1) * steps + 1])
    if not segs:
        longest = max(len(p) for p in pieces) * dt
        raise ValueError(f"recording {rec.name!r}: longest gap-free stretch is {longest:.3g} s, too short for "
                         f"{steps} steps of {dt:g} s ({steps * dt:.3g} s)")
    if max_segments is not None:
        segs = segs[:max_segments]
    seg = np.stack(segs)                                               # [B, T+1, 2]
    d = np.diff(seg, axis=1)
    step = np.linalg.norm(d, axis=-1)
    raw = np.arctan2(d[..., 1], d[..., 0])
    moving = step >= min_speed * dt
    hd = np.empty(seg.shape[:2])
    hd[:, 0] = raw[:, 0]
    for t in range(seg.shape[1] - 1):                                  # hold heading at rest
        hd[:, t + 1] = np.where(moving[:, t], raw[:, t], hd[:, t])
    hd[:, 0] = hd[:, 1]
    omega = wrap_angle(np.diff(hd, axis=1)) / dt
    direction = np.stack([np.cos(hd[:, 1:]), np.sin(hd[:, 1:])], axis=-1)
    pos = seg[:, :1] + np.concatenate([np.zeros_like(seg[:, :1]), np.cumsum(step[..., None] * direction, 1)], 1)
    lim = arena.half * 0.999
    pos_lo, pos_hi = pos.min(1, keepdims=True), pos.max(1, keepdims=True)
    if np.any(pos_hi - pos_lo > 2 * lim):
        raise ValueError(f"recording {rec.name!r}: a re-integrated segment of {steps} steps spans more than the "
                         f"{arena.side:g} m arena; use shorter segments or a larger arena")
    pos = pos + np.clip(-lim - pos_lo, 0, None) + np.clip(lim - pos_hi, None, 0)  # translate strays back inside
    return Trajectories(pos, hd, omega, step / dt, dt, arena)
