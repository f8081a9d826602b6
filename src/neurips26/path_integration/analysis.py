"""Analyses of the trained HRNN: tuning, cell types, topology, connectivity and silencing.

Definitions (from the experimental literature the abstract's cell types come from):

* Rate map: mean rate per spatial bin (occupancy-normalised), empty bins NaN. Vectorised: one
  sparse ``[bins², S] @ [S, N]`` product for all units (no per-unit loop).
* Head-direction tuning: mean resultant length ``R = |Σ r_t e^{iθ_t}| / Σ r_t`` and preferred
  direction ``arg Σ r_t e^{iθ_t}``; HD cell: R above the 99th percentile of time-shifted shuffles.
* Angular-velocity (AV) / speed cells: Pearson ``r(rate, ω)`` / ``r(rate, v)`` beyond the 99th
  percentile of |r| under time-shifted shuffles; the sign of ``r(rate, ω)`` splits CCW (+) from CW (−).
* Grid cells: Sargolini gridness of the rate map (``spatial_maps.gridness``) above the 99th
  percentile of gridness under time-shifted shuffles (the field's null, e.g. Langston et al. 2010,
  Boccara et al. 2010: rate maps of the same activity shifted in time against the path, pooled
  over units; :func:`gridness_null`). A fixed 0.3 lets uniform noise through in about 1 of 40 maps.
* Fractions of each type are over *active* units (a silent unit has no tuning); the silent count
  is reported beside them (:class:`CellTypes`).
* Conjunctive cells: grid and HD criteria both met.
* Shuffles: circular time shifts of the rate relative to behaviour by at least ``min_shift``
  samples, computed for all shifts at once by FFT cross-correlation.
* Ring topology: persistent H1 (``ripser``) of the PCA-projected population activity; a ring
  has one long bar (ratio of the longest to the second-longest H1 bar).
* Connectivity asymmetry: the first circular moment of W^A_ij over the preferred-heading
  difference Δ_ij = θ_i − θ_j, separately for CCW- and CW-tuned presynaptic units (Cueva et al.
  2020: AV-integrating RNNs learn offset weight profiles of opposite sign).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .trajectories import Arena, Trajectories, wrap_angle

__all__ = ["Activity", "collect_activity", "rate_maps", "rate_maps_loop", "heading_tuning", "shuffled_statistics",
           "CellTypes", "classify_cells", "gridness_scores", "gridness_null", "ring_topology", "RingTopology",
           "connectivity_asymmetry", "ConnectivityAsymmetry", "torus_topology", "TorusTopology", "asymmetry_score",
           "symmetrised_control", "SymmetrisedControl", "paired_ratio", "ratio_change"]


@dataclass
class Activity:
    """Flattened activity and behaviour over ``S`` samples (numpy float64).

    Attributes:
        angular: angular-module activity, shape ``[S, N_A]``.
        positional: positional-module activity, shape ``[S, N_P]``.
        heading: heading in rad, shape ``[S]``.
        omega: angular velocity in rad/s, shape ``[S]``.
        speed: speed in m/s, shape ``[S]``.
        position: position in m, shape ``[S, 2]``.
    """

    angular: np.ndarray
    positional: np.ndarray
    heading: np.ndarray
    omega: np.ndarray
    speed: np.ndarray
    position: np.ndarray


def collect_activity(model, traj: Trajectories) -> Activity:
    """Run ``model`` on ``traj`` and flatten (trajectory, step) into samples."""
    out = model.run(traj)
    flat = lambda a: np.asarray(a, np.float64).reshape(-1, *a.shape[2:])  # noqa: E731
    return Activity(flat(out.angular.numpy()), flat(out.positional.numpy()), flat(traj.heading[:, 1:]),
                    flat(traj.angular_velocity), flat(traj.speed), flat(traj.position[:, 1:]))


def _bin_index(position: np.ndarray, arena: Arena, bins: int) -> np.ndarray:
    if position.ndim != 2 or position.shape[1] != 2:
        raise ValueError(f"position has shape {position.shape}; expected [S, 2]")
    if not np.all(arena.contains(position, tol=1e-4)):
        raise ValueError(f"positions leave the {arena.side:g} m arena; cannot bin them")
    ij = np.clip(((position + arena.half) / arena.side * bins).astype(int), 0, bins - 1)
    return ij[:, 0] * bins + ij[:, 1]


def rate_maps(position: np.ndarray, activity: np.ndarray, arena: Arena, bins: int = 20) -> np.ndarray:
    """Occupancy-normalised rate maps ``[N, bins, bins]`` (x index first; empty bins NaN).

    ``map_n[b] = Σ_{t: bin(x_t)=b} r_{t,n} / #{t: bin(x_t)=b}`` for all units in one sparse product.

    Args:
        position: ``[S, 2]`` m inside ``arena``. activity: ``[S, N]``. bins: per side (≥ 2).

    Raises:
        ValueError: mismatched sample counts, bins < 2, or positions outside the arena.
    """
    activity = np.asarray(activity, np.float64)
    if activity.ndim != 2 or activity.shape[0] != position.shape[0]:
        raise ValueError(f"activity has shape {activity.shape}; expected [S={position.shape[0]}, N]")
    if isinstance(bins, bool) or int(bins) != bins or bins < 2:
        raise ValueError(f"bins={bins!r}: must be an integer >= 2")
    k = _bin_index(np.asarray(position, np.float64), arena, bins)
    S = len(k)
    onehot = sp.csr_matrix((np.ones(S), (k, np.arange(S))), shape=(bins * bins, S))
    sums = np.asarray(onehot @ activity)                                   # [bins², N]
    occ = np.bincount(k, minlength=bins * bins).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        maps = np.where(occ[:, None] > 0, sums / occ[:, None], np.nan)
    return maps.T.reshape(-1, bins, bins)


def rate_maps_loop(position: np.ndarray, activity: np.ndarray, arena: Arena, bins: int = 20) -> np.ndarray:
    """Reference implementation of :func:`rate_maps`: one ``numpy.histogram2d`` per unit (benchmark only)."""
    edges = np.linspace(-arena.half, arena.half, bins + 1)
    occ, _, _ = np.histogram2d(position[:, 0], position[:, 1], bins=[edges, edges])
    out = np.empty((activity.shape[1], bins, bins))
    for n in range(activity.shape[1]):
        s, _, _ = np.histogram2d(position[:, 0], position[:, 1], bins=[edges, edges], weights=activity[:, n])
        with np.errstate(invalid="ignore", divide="ignore"):
            out[n] = np.where(occ > 0, s / occ, np.nan)
    return out


def heading_tuning(heading: np.ndarray, activity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(R [N], preferred [N])``: mean resultant length and preferred direction (rad) per unit.

    Units that never fire get R = 0 and preferred direction 0.

    Raises:
        ValueError: ``heading`` not ``[S]`` or ``activity`` not ``[S, N]`` with the same ``S``.
    """
    heading, activity = np.asarray(heading, np.float64), np.asarray(activity, np.float64)
    if heading.ndim != 1 or activity.ndim != 2 or activity.shape[0] != heading.shape[0]:
        raise ValueError(f"heading {heading.shape} and activity {activity.shape}: expected [S] and [S, N]")
    z = np.exp(1j * heading) @ activity                                    # Σ_t r_t e^{iθ_t}
    total = activity.sum(0)
    R = np.where(total > 0, np.abs(z) / np.maximum(total, 1e-300), 0.0)
    return R, np.angle(z)


def shuffled_statistics(activity: np.ndarray, heading: np.ndarray, omega: np.ndarray, speed: np.ndarray,
                        rng: np.random.Generator, *, n_shuffles: int = 200, min_shift: int = 50) -> dict:
    """Observed and shuffle-99th-percentile values of R (heading), r(ω) and r(v) per unit.

    All circular shifts are computed at once by FFT; ``n_shuffles`` shifts with
    ``min_shift ≤ s ≤ S − min_shift`` are drawn from them.

    Returns:
        dict with ``R``, ``R_p99``, ``preferred``, ``r_omega``, ``r_omega_p99`` (of |r|), ``r_speed``,
        ``r_speed_p99`` — arrays ``[N]``.

    Raises:
        ValueError: fewer than ``2·min_shift + 1`` samples.
    """
    S, N = activity.shape
    if S < 2 * min_shift + 1:
        raise ValueError(f"{S} samples: need at least {2 * min_shift + 1} for shuffles with min_shift={min_shift}")
    shifts = rng.integers(min_shift, S - min_shift + 1, n_shuffles)
    total = np.maximum(activity.sum(0), 1e-300)
    z = np.exp(1j * heading)
    # C[s] = Σ_t r_{t+s} e^{iθ_t}  (shift the rate against the behaviour)
    Cz = np.fft.ifft(np.fft.fft(activity, axis=0) * np.conj(np.fft.fft(np.conj(z)))[:, None], axis=0)
    R_all = np.abs(Cz) / total
    a = activity - activity.mean(0)
    a_sd = np.sqrt((a ** 2).sum(0))
    fa = np.fft.fft(a, axis=0)                                             # shared by r(ω) and r(v)

    def corr_all(x: np.ndarray) -> np.ndarray:
        xc = x - x.mean()
        c = np.fft.ifft(fa * np.conj(np.fft.fft(xc))[:, None], axis=0).real
        return c / np.maximum(a_sd * np.sqrt((xc ** 2).sum()), 1e-300)

    r_om, r_v = corr_all(omega), corr_all(speed)
    return {"R": R_all[0], "R_p99": np.quantile(R_all[shifts], 0.99, axis=0), "preferred": np.angle(Cz[0]),
            "r_omega": r_om[0], "r_omega_p99": np.quantile(np.abs(r_om[shifts]), 0.99, axis=0),
            "r_speed": r_v[0], "r_speed_p99": np.quantile(np.abs(r_v[shifts]), 0.99, axis=0)}


def _gridness(rate_map: np.ndarray) -> float:
    """``spatial_maps.gridness`` (v0.2) with the same arithmetic, 4× faster: its ``rotate_corr`` builds a
    ``numpy.ma`` correlation per rotation (most of its time) and re-runs the cubic-spline prefilter for
    each of the six rotations. Here the prefilter runs once (``scipy.ndimage.rotate`` with
    ``reshape=False`` is exactly this ``geometric_transform`` of the prefiltered map) and the masked
    correlation is the same sums on zero-filled arrays (``numpy.ma.cov``: row means over unmasked
    entries, one ``gemm`` of the centred rows, divided by the float32 count − 1). Bit-identical to the
    library (``tests/path_integration/test_analysis.py``); degenerate masks fall back to it."""
    from scipy import special
    from scipy.ndimage import _nd_image, spline_filter
    from spatial_maps import gridness
    from spatial_maps.fields import find_peaks
    from spatial_maps.gridcells import peak_to_peak_distance
    from spatial_maps.tools import autocorrelation

    rate_map = rate_map.copy()
    rate_map[~np.isfinite(rate_map)] = 0
    acorr = autocorrelation(rate_map, mode="full", normalize=True)
    acorr_maxima = find_peaks(acorr)
    inner_radius = 0.5 * peak_to_peak_distance(acorr_maxima, 0, 1)
    outer_radius = inner_radius + peak_to_peak_distance(acorr_maxima, 0, 6)
    outer_radius = np.clip(outer_radius, 0.0, min(acorr.shape) / 2)
    inner_radius = np.clip(inner_radius, 0.0, outer_radius)
    center = np.array(acorr.shape) / 2
    lower, upper = (center - outer_radius).astype(int), (center + outer_radius).astype(int)
    acorr = np.ascontiguousarray(acorr[lower[0]: upper[0], lower[1]: upper[1]], dtype=np.float64)
    ylen, xlen = acorr.shape
    X, Y = np.meshgrid(np.linspace(-xlen / 2.0, xlen / 2.0, xlen), np.linspace(-ylen / 2.0, ylen / 2.0, ylen))
    distance_map = np.sqrt(X**2 + Y**2)
    mask = (distance_map < inner_radius) | (distance_map > outer_radius)
    n = int((~mask).sum())
    if n < 2 or acorr.ndim != 2 or min(acorr.shape) < 1:
        return gridness(rate_map)                      # degenerate mask: let the library decide
    fact = np.float32(n) - 1                           # numpy.ma.cov: float32 count of unmasked pairs − ddof

    def centred(a: np.ndarray) -> np.ndarray:
        a = np.where(mask, 0.0, a)
        return np.where(mask, 0.0, a - a.sum() / n).ravel()

    filtered = spline_filter(acorr, 3, output=np.float64, mode="constant")
    in_center = (np.asarray(acorr.shape) - 1) / 2
    orig = centred(acorr)
    corr = []
    for angle in range(30, 180 + 30, 30):              # as spatial_maps.gridcells.rotate_corr
        c, s = special.cosdg(angle), special.sindg(angle)
        rot = np.array([[c, s], [-s, c]])
        offset = np.ascontiguousarray(in_center - rot @ in_center, dtype=np.float64)
        out = np.empty_like(acorr)
        _nd_image.geometric_transform(filtered, None, None, rot, offset, out, 3, 4, 0.0, 0, None, None)  # 4: constant
        x = np.stack([centred(out), orig])
        cov = np.dot(x, x.T.copy()) / fact            # a copy: numpy.ma multiplies two buffers (gemm, not syrk)
        std = np.sqrt(np.diagonal(cov))
        if not std[0] * std[1] > 0:
            return gridness(rate_map)                  # a flat (masked-out) correlation: the library's rule
        corr.append(cov[0, 1] / (std[0] * std[1]))
    return float(np.min(corr[1::2]) - np.max(corr[::2]))


def gridness_scores(maps: np.ndarray, *, reference: bool = False) -> np.ndarray:
    """Sargolini gridness ``[N]`` of rate maps ``[N, bins, bins]``, the arithmetic of ``spatial_maps.gridness``
    (:func:`_gridness`; ``reference=True`` calls the library itself, for tests). NaN bins are set to 0;
    silent units get NaN."""
    from spatial_maps import gridness

    one = gridness if reference else _gridness
    out = np.full(len(maps), np.nan)
    for n, m in enumerate(maps):
        if np.nanmax(m) - np.nanmin(m) > 1e-9:
            try:
                out[n] = one(np.nan_to_num(m, nan=0.0))
            except (ValueError, IndexError):  # no autocorrelogram peaks found
                out[n] = np.nan
    return out


def gridness_null(position: np.ndarray, activity: np.ndarray, arena: Arena, rng: np.random.Generator, *,
                  bins: int = 20, n_maps: int = 200, min_shift: int = 50, quantile: float = 0.99) -> float:
    """Shuffle threshold for gridness: the ``quantile`` of gridness over ``n_maps`` rate maps of
    randomly chosen active units whose activity is circularly shifted in time against the path by
    ≥ ``min_shift`` samples (pooled over units, as in the field's grid-cell criteria, e.g.
    Langston et al. 2010; Boccara et al. 2010 use the 95th–99th percentile).

    Args:
        position: ``[S, 2]`` m. activity: ``[S, N]``. arena, bins: as :func:`rate_maps`.

    Returns:
        the threshold (float; ``inf`` when no shuffled map has a defined gridness, so no unit passes).

    Raises:
        ValueError: fewer than ``2·min_shift + 1`` samples, no active unit, or shapes that disagree.
    """
    activity = np.asarray(activity, np.float64)
    S = activity.shape[0]
    if activity.ndim != 2 or position.shape != (S, 2):
        raise ValueError(f"activity {activity.shape} and position {position.shape}: expected [S, N] and [S, 2]")
    if S < 2 * min_shift + 1:
        raise ValueError(f"{S} samples: need at least {2 * min_shift + 1} for shuffles with min_shift={min_shift}")
    active = np.flatnonzero(activity.std(0) > 1e-6)
    if not active.size:
        raise ValueError("no active unit: no gridness null to build")
    units = rng.choice(active, n_maps)
    shifts = rng.integers(min_shift, S - min_shift + 1, n_maps)
    cols = np.stack([np.roll(activity[:, u], s) for u, s in zip(units, shifts)], 1)
    g = gridness_scores(rate_maps(position, cols, arena, bins))
    g = g[np.isfinite(g)]
    return float(np.quantile(g, quantile)) if g.size else math.inf


@dataclass
class CellTypes:
    """Boolean masks ``[N]`` for one module, the active units, and fractions over the active units.

    Attributes:
        masks: ``{type: bool [N]}``. active: ``bool [N]`` (units that fire at all).
        grid_threshold: the gridness threshold used (shuffle null), or None without grid scores.
    """

    masks: dict[str, np.ndarray]
    active: np.ndarray | None = None
    grid_threshold: float | None = None

    @property
    def n_silent(self) -> int:
        """Units that never vary (no tuning can be measured)."""
        return 0 if self.active is None else int((~self.active).sum())

    @property
    def fractions(self) -> dict[str, float]:
        """Fraction of the *active* units of each type (0 for every type when no unit is active)."""
        act = np.ones_like(next(iter(self.masks.values()))) if self.active is None else self.active
        n = int(act.sum())
        return {k: float((v & act).sum() / n) if n else 0.0 for k, v in self.masks.items()}


def classify_cells(stats: dict, active: np.ndarray, grid: np.ndarray | None = None,
                   grid_threshold: float = 0.3) -> CellTypes:
    """HD / AV (CCW, CW) / speed / grid / conjunctive (grid ∧ HD) masks from :func:`shuffled_statistics`.

    ``active`` ``[N]`` marks units that fire at all (others are never of a type; fractions are over
    active units). ``grid_threshold``: gridness above which a unit is a grid cell — pass the
    shuffle null of :func:`gridness_null` (the default 0.3 is the old fixed rule, kept for callers
    without a null).
    """
    hd = active & (stats["R"] > stats["R_p99"])
    av = active & (np.abs(stats["r_omega"]) > stats["r_omega_p99"])
    masks = {"head_direction": hd, "angular_velocity": av, "ccw": av & (stats["r_omega"] > 0),
             "cw": av & (stats["r_omega"] < 0),
             "speed": active & (np.abs(stats["r_speed"]) > stats["r_speed_p99"])}
    if grid is not None:
        g = active & (np.nan_to_num(grid, nan=-np.inf) > grid_threshold)
        masks["grid"] = g
        masks["conjunctive"] = g & hd
        masks["pure_grid"] = g & ~hd
    return CellTypes(masks, np.asarray(active, bool), grid_threshold if grid is not None else None)


@dataclass
class RingTopology:
    """H1 persistence of population activity.

    Attributes:
        lifetimes: H1 bar lengths, longest first. ratio: longest / second longest (inf if one bar).
        n_long_bars: bars longer than half the longest (1 for a ring).
        projection: ``[n_points, 2]`` first two principal components (for the figure).
        diagram: ``[k, 2]`` H1 (birth, death) pairs.
    """

    lifetimes: np.ndarray
    ratio: float
    n_long_bars: int
    projection: np.ndarray
    diagram: np.ndarray


def ring_topology(activity: np.ndarray, rng: np.random.Generator, *, n_points: int = 300,
                  n_components: int = 6) -> RingTopology:
    """H1 of ``n_points`` random samples of ``activity [S, N]`` after PCA to ``n_components``.

    Raises:
        ValueError: fewer samples than ``n_points`` or activity with no variance.
    """
    from ripser import ripser
    from sklearn.decomposition import PCA

    if activity.shape[0] < n_points:
        raise ValueError(f"activity has {activity.shape[0]} samples; need >= n_points={n_points}")
    if not np.any(activity.std(0) > 0):
        raise ValueError("activity has no variance: no topology to measure")
    x = activity[rng.choice(activity.shape[0], n_points, replace=False)]
    y = PCA(min(n_components, x.shape[1]), random_state=0).fit_transform(x)
    dgm = ripser(y, maxdim=1)["dgms"][1]
    life = np.sort(dgm[:, 1] - dgm[:, 0])[::-1] if len(dgm) else np.zeros(0)
    ratio = float(life[0] / life[1]) if len(life) > 1 and life[1] > 0 else (math.inf if len(life) else 0.0)
    n_long = int(np.sum(life > 0.5 * life[0])) if len(life) else 0
    return RingTopology(life, ratio, n_long, y[:, :2], dgm)


@dataclass
class TorusTopology:
    """H1 and H2 persistence of grid-module activity (Gardner et al. 2022: a torus has two long H1
    bars and one long H2 bar).

    Attributes:
        h1, h2: bar lengths, longest first. n_long_h1: H1 bars longer than half the longest H1 bar;
            n_long_h2: H2 bars longer than a quarter of it (inferred: the void of a sparsely sampled
            torus dies earlier than its loops; on 200 samples of a flat torus H2 ≈ 0.55 × H1, noise bars
            ≈ 0.1 ×). is_torus: ``n_long_h1 == 2 and n_long_h2 == 1``.
    """

    h1: np.ndarray
    h2: np.ndarray
    n_long_h1: int
    n_long_h2: int

    @property
    def is_torus(self) -> bool:
        """Two long H1 bars and one long H2 bar."""
        return self.n_long_h1 == 2 and self.n_long_h2 == 1


def torus_topology(activity: np.ndarray, rng: np.random.Generator, *, n_points: int = 250,
                   n_components: int = 6) -> TorusTopology:
    """H1/H2 of ``n_points`` samples of ``activity [S, N]`` after PCA (ripser, maxdim 2).

    Raises:
        ValueError: fewer samples than ``n_points``.
    """
    from ripser import ripser
    from sklearn.decomposition import PCA

    if activity.shape[0] < n_points:
        raise ValueError(f"activity has {activity.shape[0]} samples; need >= n_points={n_points}")
    x = activity[rng.choice(activity.shape[0], n_points, replace=False)]
    y = PCA(min(n_components, x.shape[1]), random_state=0).fit_transform(x)
    dg = ripser(y, maxdim=2)["dgms"]
    life = [np.sort(d[:, 1] - d[:, 0])[::-1] if len(d) else np.zeros(0) for d in dg[1:3]]
    scale = life[0][0] if len(life[0]) else np.inf
    return TorusTopology(life[0], life[1], int(np.sum(life[0] > 0.5 * scale)), int(np.sum(life[1] > 0.25 * scale)))


@dataclass
class ConnectivityAsymmetry:
    """Weight profiles over the preferred-heading difference and their circular offsets.

    Attributes:
        offset_ccw, offset_cw: rad, ``arg Σ_ij W_ij e^{iΔ_ij}`` over presynaptic CCW / CW units j
            (Δ_ij = θ_i − θ_j wrapped); a CCW unit should drive units ahead (+), a CW unit behind (−).
        centres: ``[bins]`` Δ bin centres. profile_ccw, profile_cw: ``[bins]`` mean weight per bin.
        n_ccw, n_cw: presynaptic units used.
    """

    offset_ccw: float
    offset_cw: float
    centres: np.ndarray
    profile_ccw: np.ndarray
    profile_cw: np.ndarray
    n_ccw: int
    n_cw: int


def connectivity_asymmetry(weights: np.ndarray, preferred: np.ndarray, post_mask: np.ndarray,
                           ccw_mask: np.ndarray, cw_mask: np.ndarray, bins: int = 18) -> ConnectivityAsymmetry:
    """Profiles and offsets of ``weights [N, N]`` (row = post) against preferred-heading difference.

    Args:
        preferred: ``[N]`` rad. post_mask: postsynaptic units used (HD-tuned).
        ccw_mask, cw_mask: presynaptic CCW / CW units (HD-tuned AV units).

    Raises:
        ValueError: a mask selecting no unit, or mismatched shapes.
    """
    N = weights.shape[0]
    if weights.shape != (N, N) or any(m.shape != (N,) for m in (preferred, post_mask, ccw_mask, cw_mask)):
        raise ValueError(f"weights {weights.shape} and masks must be [N, N] and [N] with the same N")
    for name, m in (("post_mask", post_mask), ("ccw_mask", ccw_mask), ("cw_mask", cw_mask)):
        if not m.any():
            raise ValueError(f"{name} selects no unit; cannot build a weight profile")
    delta = wrap_angle(preferred[:, None] - preferred[None, :])
    edges = np.linspace(-math.pi, math.pi, bins + 1)
    out = {}
    for name, pre in (("ccw", ccw_mask), ("cw", cw_mask)):
        sel = post_mask[:, None] & pre[None, :] & ~np.eye(N, dtype=bool)
        w, d = weights[sel], delta[sel]
        out[f"offset_{name}"] = float(np.angle(np.sum(w * np.exp(1j * d))))
        idx = np.clip(np.digitize(d, edges) - 1, 0, bins - 1)
        cnt = np.bincount(idx, minlength=bins)
        out[f"profile_{name}"] = np.bincount(idx, weights=w, minlength=bins) / np.maximum(cnt, 1)
    return ConnectivityAsymmetry(out["offset_ccw"], out["offset_cw"], (edges[:-1] + edges[1:]) / 2,
                                 out["profile_ccw"], out["profile_cw"], int(ccw_mask.sum()), int(cw_mask.sum()))


def asymmetry_score(weights: np.ndarray, preferred: np.ndarray, post_mask: np.ndarray, ccw_mask: np.ndarray,
                    cw_mask: np.ndarray) -> float:
    """``min(offset_CCW, −offset_CW)`` in degrees (:func:`connectivity_asymmetry`'s offsets).

    Positive only when CCW presynaptic units project ahead (+Δθ) **and** CW units behind (−Δθ);
    0 for a population whose weights do not depend on the sign of Δθ. Shapes and errors as in
    :func:`connectivity_asymmetry`.
    """
    a = connectivity_asymmetry(weights, preferred, post_mask, ccw_mask, cw_mask)
    return math.degrees(min(a.offset_ccw, -a.offset_cw))


@dataclass
class SymmetrisedControl:
    """Asymmetry of the trained ``W`` against its symmetrised twin ``(W + Wᵀ)/2``, paired.

    Attributes:
        trained_deg: :func:`asymmetry_score` of ``W``. symmetrised_deg: the same of ``(W + Wᵀ)/2``
            (same units, masks and preferred headings).
        difference_deg: ``trained_deg − symmetrised_deg``.
        interval: ``(lo, hi)`` percentile bootstrap interval of the difference (degrees), resampling
            the presynaptic CCW and CW units with replacement (the same resample for both matrices).
        n_boot: bootstrap resamples.
    """

    trained_deg: float
    symmetrised_deg: float
    difference_deg: float
    interval: tuple[float, float]
    n_boot: int


def symmetrised_control(weights: np.ndarray, preferred: np.ndarray, post_mask: np.ndarray, ccw_mask: np.ndarray,
                        cw_mask: np.ndarray, rng: np.random.Generator, n_boot: int = 500,
                        level: float = 0.95) -> SymmetrisedControl:
    """The asymmetry score of ``weights`` [N, N] (row = post) minus that of its symmetric part.

    The symmetrised twin ``(W + Wᵀ)/2`` keeps every weight's size and the units' tuning and removes
    the directed (antisymmetric) part, the mechanism an offset profile is meant to show. A symmetric
    matrix can still give offsets of opposite sign for CCW and CW presynaptic units (through the
    connections between the two populations), so the raw score alone cannot show asymmetry; the
    paired difference can. Interval: bootstrap over presynaptic units (each resample's circular
    moment is a count-weighted sum of per-unit moments, so a resample costs one small matrix product).

    Args:
        weights: ``[N, N]``. preferred: ``[N]`` rad. post_mask, ccw_mask, cw_mask: ``[N]`` bool, non-empty.
        rng: bootstrap generator. n_boot: resamples (>= 100). level: interval level in (0, 1).

    Raises:
        ValueError: as :func:`connectivity_asymmetry`, or ``n_boot < 100`` / ``level`` outside (0, 1).
    """
    if int(n_boot) != n_boot or n_boot < 100:
        raise ValueError(f"n_boot={n_boot!r}: need an integer >= 100 for a percentile interval")
    if not 0 < level < 1:
        raise ValueError(f"level={level!r}: allowed 0 < level < 1")
    W = np.asarray(weights, np.float64)
    Ws = (W + W.T) / 2
    trained = asymmetry_score(W, preferred, post_mask, ccw_mask, cw_mask)   # validates shapes and masks
    sym = asymmetry_score(Ws, preferred, post_mask, ccw_mask, cw_mask)
    N = W.shape[0]
    phase = np.exp(1j * wrap_angle(preferred[:, None] - preferred[None, :]))
    post = post_mask[:, None] & ~np.eye(N, dtype=bool)
    # per presynaptic unit j: Σ_i∈post, i≠j W_ij e^{iΔ_ij}
    moment = {name: (np.where(post, M, 0.0) * phase).sum(0) for name, M in (("W", W), ("S", Ws))}
    diffs = np.empty(n_boot)
    pre = {"ccw": np.flatnonzero(ccw_mask), "cw": np.flatnonzero(cw_mask)}
    for b in range(n_boot):
        draw = {k: rng.choice(v, len(v), replace=True) for k, v in pre.items()}
        score = {}
        for name in ("W", "S"):
            off_ccw = np.angle(moment[name][draw["ccw"]].sum())
            off_cw = np.angle(moment[name][draw["cw"]].sum())
            score[name] = math.degrees(min(off_ccw, -off_cw))
        diffs[b] = score["W"] - score["S"]
    lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    return SymmetrisedControl(trained, sym, trained - sym, (float(lo), float(hi)), int(n_boot))


def _ratio_and_se(numerator, denominator) -> tuple[float, float, np.ndarray, np.ndarray]:
    """``(r, se, a, b)``: the ratio of means of paired values and its delta-method standard error
    ``sd(z)/√n``, ``z_i = (a_i − r·b_i) / mean(b)``; validates as :func:`paired_ratio` says."""
    a, b = np.asarray(numerator, np.float64).ravel(), np.asarray(denominator, np.float64).ravel()
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"paired_ratio(): need two arrays of the same length >= 2, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("paired_ratio(): values must be finite")
    if not b.mean() > 0:
        raise ValueError(f"paired_ratio(): mean of the denominator is {b.mean()!r}; must be > 0")
    r = float(a.mean() / b.mean())
    z = (a - r * b) / b.mean()
    return r, float(z.std(ddof=1)) / math.sqrt(a.size), a, b


def paired_ratio(numerator: np.ndarray, denominator: np.ndarray, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Ratio of means ``mean(a) / mean(b)`` of paired per-item values and its delta-method interval.

    For paired items (the same trajectory under two conditions) the linearised ratio
    ``z_i = (a_i − r·b_i) / mean(b)`` has mean 0 and standard error ``sd(z)/√n``; the interval is
    ``r ± t_{(1+level)/2, n−1} · sd(z)/√n``, its lower end kept at ``>= 0`` when every value is
    non-negative (errors).

    Args:
        numerator, denominator: ``[n]`` finite, ``n >= 2``, ``mean(denominator) > 0``.
        level: confidence level in (0, 1).

    Raises:
        ValueError: shapes differ, fewer than 2 items, non-finite values, or ``mean(b) <= 0``.

    Source: the delta method for a ratio of means (e.g. Cochran, *Sampling Techniques*, ratio estimator).
    """
    from scipy import stats

    if not 0 < level < 1:
        raise ValueError(f"paired_ratio(): level={level!r}; allowed 0 < level < 1")
    r, se, a, b = _ratio_and_se(numerator, denominator)
    half = float(stats.t.ppf(0.5 + level / 2, a.size - 1)) * se
    lo = r - half
    if (a >= 0).all() and (b >= 0).all():
        lo = max(lo, 0.0)
    return r, (lo, r + half)


def ratio_change(numerator_a: np.ndarray, denominator_a: np.ndarray, numerator_b: np.ndarray,
                 denominator_b: np.ndarray, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Change ``r_a − r_b`` of two paired ratios of means measured on two independent sets of items,
    with a delta-method interval.

    Each ratio ``r = mean(numerator) / mean(denominator)`` is paired within its own set (the same
    trajectory under two conditions, as in :func:`paired_ratio`); the two sets are independent (e.g.
    test trajectories of two lengths for the same network), so the standard errors add in quadrature:
    ``se = sqrt(se_a² + se_b²)`` with ``se = sd(z)/√n``, ``z_i = (a_i − r·b_i) / mean(b)``; the interval
    is ``Δ ± t_{(1+level)/2, min(n_a, n_b) − 1} · se`` (the smaller sample's degrees of freedom: a
    conservative stand-in for Welch–Satterthwaite).

    Args:
        numerator_a, denominator_a: ``[n_a]`` paired values of set a; numerator_b, denominator_b: ``[n_b]``;
            each finite, ``n >= 2``, mean denominator > 0.
        level: confidence level in (0, 1).

    Raises:
        ValueError: as :func:`paired_ratio` for either set.

    Source: the delta method for a ratio of means (e.g. Cochran, *Sampling Techniques*), two independent samples.
    """
    from scipy import stats

    if not 0 < level < 1:
        raise ValueError(f"ratio_change(): level={level!r}; allowed 0 < level < 1")
    (ra, sa, a, _), (rb, sb, b, _) = (_ratio_and_se(numerator_a, denominator_a),
                                      _ratio_and_se(numerator_b, denominator_b))
    na, nb = a.size, b.size
    half = float(stats.t.ppf(0.5 + level / 2, min(na, nb) - 1)) * math.hypot(sa, sb)
    d = ra - rb
    return d, (d - half, d + half)
