"""Co-densities, Hilbert signed measures, their Gaussian convolution, and scikit-learn transformers.

Vectorisation (Loiseaux et al., NeurIPS 2023, used by the paper's classification experiments):
the Hilbert function H_q(r, t) = dim H_q(SLF_{r,t}) on a grid G = {r_i} × {t_j} decomposes as a
signed measure μ_q = Σ_k w_k δ_{p_k} (Möbius inversion, computed by multipers), with
H_q(r, t) = Σ_{p_k ≤ (r, t)} w_k. The feature vector is μ_q convolved with a Gaussian,

    φ_q(z) = Σ_k w_k exp(−‖(z − p_k) ⊘ s‖² / (2 h²)),   z on an evaluation grid,       (conv)

with s the per-axis grid range (so both axes are in [0, 1] units) and h the bandwidth.

References:
    Loiseaux, Carrière, Blumberg, "A framework for fast and stable representations of
    multiparameter persistent homology decompositions", NeurIPS 2023.
    Chazal, Fasy, Lecci, Michel, Rinaldo, Wasserman, "Robust topological inference: distance to a
    measure and kernel distance", JMLR 2018 (DTM).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from sklearn.base import BaseEstimator, TransformerMixin

from .bifiltration import (
    SublevelFlood,
    padded_grades,
    slice_simplex_tree,
    slice_values,
    sublevel_flood_bifiltration,
)
from .validation import check_points, check_positive_float, check_positive_int

DENSITY_METHODS = ("kde", "dtm")
MODES = ("bifiltration", "flood", "alpha")


def codensity(points, method: str = "kde", *, bandwidth: float = 0.1, dtm_mass: float = 0.05,
              normalize: bool = True) -> np.ndarray:
    """A co-density f(x) (low in dense regions) for the sublevel Flood bifiltration.

    ``kde``: f = −KDE_h(x) with a Gaussian kernel of bandwidth h (scikit-learn KernelDensity).
    ``dtm``: f = DTM_m(x) = sqrt(mean of squared distances to the ⌈m·N⌉ nearest neighbours).
    With ``normalize`` f is mapped affinely onto [0, 1] (a constant f maps to 0).

    Args:
        points: (N, d) float array, d in {2, 3}.
        method: ``"kde"`` or ``"dtm"``.
        bandwidth: KDE bandwidth h > 0 (units of the points).
        dtm_mass: DTM mass m in (0, 1].
        normalize: map onto [0, 1].

    Returns:
        (N,) float64 array.

    Raises:
        ValueError: unknown method, bad bandwidth/mass (including dtm_mass·N < 2, where the DTM
            would be identically 0), or bad points.

    Source: upstream ``slflood`` transformer defaults (KDE or DTM, normalised); DTM from
    Chazal et al. 2018.
    """
    x = check_points(points)
    if method not in DENSITY_METHODS:
        raise ValueError(f"method must be one of {DENSITY_METHODS}; got {method!r}")
    if method == "kde":
        from sklearn.neighbors import KernelDensity

        h = check_positive_float(bandwidth, "bandwidth")
        f = -np.exp(KernelDensity(bandwidth=h).fit(x).score_samples(x))
    else:
        from sklearn.neighbors import NearestNeighbors

        m = check_positive_float(dtm_mass, "dtm_mass")
        if m > 1:
            raise ValueError(f"dtm_mass must be in (0, 1]; got {dtm_mass}")
        k = math.ceil(m * len(x))
        if k < 2:  # the nearest neighbour of x is x itself: a 1-point DTM is 0 everywhere
            raise ValueError(f"dtm_mass={dtm_mass} with N={len(x)} points uses {k} neighbour(s), so the DTM "
                             f"would be 0 everywhere; need dtm_mass >= 2/N = {2 / len(x):.3g} (and N >= 2)")
        dist, _ = NearestNeighbors(n_neighbors=k).fit(x).kneighbors(x)
        f = np.sqrt(np.mean(dist**2, axis=1))
    if normalize:
        span = f.max() - f.min()
        f = (f - f.min()) / span if span > 0 else np.zeros_like(f)
    return f


def snap_up(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Smallest grid value ≥ each value (+inf above the grid) — the exact restriction of a
    filtration to a grid (a simplex is present at grid point g iff its grade is ≤ g)."""
    idx = np.searchsorted(grid, values, side="left")
    out = np.full(values.shape, np.inf)
    ok = idx < len(grid)
    out[ok] = grid[idx[ok]]
    return out


def hilbert_signed_measure(bif: SublevelFlood, r_grid, t_grid, degrees=(0, 1)):
    """Hilbert signed measures μ_q of the bifiltration restricted to the grid r_grid × t_grid.

    Grades are first snapped up to the grid (so H_q on the grid is exact), then multipers
    computes the Möbius inversion on the k-critical SimplexTreeMulti.

    Args:
        bif: a :class:`SublevelFlood`.
        r_grid, t_grid: increasing 1-D float arrays (radius and function thresholds).
        degrees: homology degrees q.

    Returns:
        list (one per degree) of (locations (m, 2) float64 in (r, t) units, weights (m,) int).

    Raises:
        ValueError: if a grid is not strictly increasing or has fewer than 2 values.

    Source: Loiseaux et al. 2023 (Hilbert decomposition signed measure) via ``multipers``;
    grid snapping is ours (multipers' own squeeze does not round up).
    """
    import multipers as mp

    grids = []
    for name, g in (("r_grid", r_grid), ("t_grid", t_grid)):
        g = np.asarray(g, dtype=np.float64)
        if g.ndim != 1 or len(g) < 2 or not np.all(np.diff(g) > 0) or not np.all(np.isfinite(g)):
            raise ValueError(f"{name} must be a strictly increasing finite 1-D array of length >= 2")
        grids.append(g)
    st = mp.SimplexTreeMulti(num_parameters=2, kcritical=True)
    for k, simp in enumerate(bif.simplices):
        if not len(bif.grades[k]):
            continue
        F = padded_grades(bif.grades[k])   # +inf padding stays +inf when snapped
        F = np.stack([snap_up(F[..., 0], grids[0]), snap_up(F[..., 1], grids[1])], axis=-1)
        F[~np.isfinite(F).all(axis=-1)] = np.inf   # rows with an infinite coordinate: never on this grid
        st.insert_batch(np.ascontiguousarray(simp.T, dtype=np.int32), F)
    sq = st.grid_squeeze(filtration_grid=grids)
    out = mp.signed_measure(sq, degrees=list(degrees), invariant="hilbert")
    return [(np.asarray(p, dtype=np.float64), np.asarray(w)) for p, w in out]


def convolved_signed_measure(measures, r_range, t_range, *, resolution: int = 16,
                             bandwidth: float = 0.05) -> np.ndarray:
    """Gaussian convolution (conv) of signed measures, evaluated on a resolution² grid.

    Args:
        measures: list of (locations (m, 2), weights (m,)) per degree.
        r_range, t_range: (low, high) of the evaluation box; coordinates are rescaled to [0, 1].
        resolution: evaluation points per axis.
        bandwidth: h > 0 in rescaled units.

    Returns:
        (len(measures) · resolution²,) float64 feature vector.

    Source: Loiseaux et al. 2023 (convolution vectorisation).
    """
    resolution = check_positive_int(resolution, "resolution")
    h = check_positive_float(bandwidth, "bandwidth")
    lo = np.array([r_range[0], t_range[0]], dtype=np.float64)
    span = np.array([r_range[1] - r_range[0], t_range[1] - t_range[0]], dtype=np.float64)
    if not np.all(span > 0):
        raise ValueError(f"empty evaluation box r_range={r_range}, t_range={t_range}")
    u = np.linspace(0, 1, resolution)
    Z = np.stack(np.meshgrid(u, u, indexing="ij"), axis=-1).reshape(-1, 2)
    feats = []
    for p, w in measures:
        if len(p) == 0:
            feats.append(np.zeros(len(Z)))
            continue
        q = (np.asarray(p) - lo) / span
        q = np.where(np.isfinite(q), q, 1.0 + 3 * h)  # points at infinity sit just off the box
        d2 = ((Z[:, None, :] - q[None, :, :]) ** 2).sum(-1)
        feats.append(np.exp(-d2 / (2 * h * h)) @ np.asarray(w, dtype=np.float64))
    return np.concatenate(feats)


def delay_embedding(series, dimension: int = 2, delay: int = 1) -> np.ndarray:
    """Takens delay embedding x_i = (s_i, s_{i+τ}, …, s_{i+(m−1)τ}).

    Args:
        series: (T,) finite float array.
        dimension: m in {2, 3} (the bifiltration needs points in R^2 or R^3).
        delay: τ >= 1.

    Returns:
        (T − (m − 1)τ, m) float64 array.

    Raises:
        ValueError: if the series is not 1-D/finite, m not in {2, 3}, or T < (m − 1)τ + 1 + m
            (fewer points than a Delaunay complex needs).

    Source: inferred (time series via delay embedding, as gudhi's TimeDelayEmbedding does).
    """
    s = np.asarray(series, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"series must be 1-D; got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("series contains NaN or inf")
    dimension = check_positive_int(dimension, "dimension")
    if dimension not in (2, 3):
        raise ValueError(f"dimension must be 2 or 3 (points in R^2 or R^3); got {dimension}")
    delay = check_positive_int(delay, "delay")
    window = (dimension - 1) * delay + 1
    if len(s) < window + dimension:
        raise ValueError(f"series of length {len(s)} is shorter than the embedding window {window} plus "
                         f"{dimension} points needed for a Delaunay complex (dimension={dimension}, delay={delay})")
    return np.ascontiguousarray(sliding_window_view(s, window)[:, ::delay])


class DelayEmbedding(BaseEstimator, TransformerMixin):
    """scikit-learn transformer: a list/array of series (n, T) → list of (T', m) point clouds.

    Series are z-normalised first when ``standardize`` (UCR convention).

    Source: inferred pipeline for time series (the abstract names real-world time series).
    """

    def __init__(self, dimension: int = 2, delay: int = 1, standardize: bool = True):
        self.dimension = dimension
        self.delay = delay
        self.standardize = standardize

    def fit(self, X, y=None):
        """No-op (stateless); returns self."""
        return self

    def transform(self, X):
        """Embed each series of X ((n, T), (n, 1, T) as aeon loads it, or a list of 1-D series).

        Raises:
            ValueError: as :func:`delay_embedding`; also for a single 1-D series instead of a
                collection, and for multichannel series (c > 1 channels; pick a channel first).
        """
        if isinstance(X, np.ndarray) and X.ndim == 1 and X.dtype != object:
            raise ValueError(f"X must be a collection of series (n, T); got one 1-D series of length {len(X)} "
                             "(wrap it as [series])")
        out = []
        for i, s in enumerate(X):
            s = np.asarray(s, dtype=np.float64)
            if s.ndim == 2 and s.shape[0] == 1:  # one channel, as aeon's (n, 1, T)
                s = s[0]
            if s.ndim != 1:
                raise ValueError(f"series {i} has shape {s.shape}; expected a univariate series (T,) or (1, T) "
                                 "(multichannel input: select one channel first)")
            if self.standardize and s.std() > 0:
                s = (s - s.mean()) / s.std()
            out.append(delay_embedding(s, self.dimension, self.delay))
        return out


def _diagram_image(st, r_max: float, resolution: int, bandwidth: float, degrees) -> np.ndarray:
    """Persistence-image features of a 1-parameter gudhi SimplexTree (births × persistence)."""
    from gudhi.representations import PersistenceImage

    st.compute_persistence(persistence_dim_max=True)
    feats = []
    for q in degrees:
        dgm = st.persistence_intervals_in_dimension(q)
        dgm = np.asarray(dgm, dtype=np.float64).reshape(-1, 2)
        dgm = np.minimum(dgm, r_max)
        dgm = dgm[dgm[:, 1] > dgm[:, 0]]
        if len(dgm) == 0:
            feats.append(np.zeros(resolution * resolution))
            continue
        pi = PersistenceImage(bandwidth=bandwidth * r_max, resolution=[resolution, resolution],
                              im_range=[0.0, r_max, 0.0, r_max], weight=lambda x: 1.0)
        feats.append(pi.fit_transform([dgm])[0])
    return np.concatenate(feats)


class SublevelFloodFeatures(BaseEstimator, TransformerMixin):
    """scikit-learn transformer: point clouds → vectorised 2-parameter features.

    ``mode="bifiltration"``: sublevel Flood bifiltration with a co-density, Hilbert signed
    measures on an r × t grid, Gaussian-convolved (conv). ``mode="flood"``: the same-run
    single-parameter baseline, the slice at max f (= the Flood complex) → persistence images.
    ``mode="alpha"``: the Alpha complex of all points → persistence images (baseline).

    Parameters:
        n_landmarks, points_per_edge, exact: passed to :func:`sublevel_flood_bifiltration`
            (default 9 points per edge: an even number of subdivisions samples edge midpoints).
        density, bandwidth, dtm_mass: the co-density (:func:`codensity`, normalised to [0, 1]).
        grid_size: grid points per axis for the Hilbert function.
        resolution, kernel_bandwidth: evaluation grid and bandwidth of (conv).
        degrees: homology degrees, a non-empty tuple of values in {0, 1, 2}.
        r_max: radius range (a positive number); ``None`` learns it in ``fit`` as the largest
            Flood value over the training clouds.

    Source: upstream ``slflood/sklearn/transformer.py`` (parameters), Loiseaux et al. 2023.
    """

    def __init__(self, n_landmarks: int = 32, points_per_edge: int = 9, exact: bool = False,
                 density: str = "kde", bandwidth: float = 0.1, dtm_mass: float = 0.05,
                 grid_size: int = 24, resolution: int = 12, kernel_bandwidth: float = 0.06,
                 degrees: tuple = (0, 1), r_max: float | None = None, mode: str = "bifiltration"):
        self.n_landmarks = n_landmarks
        self.points_per_edge = points_per_edge
        self.exact = exact
        self.density = density
        self.bandwidth = bandwidth
        self.dtm_mass = dtm_mass
        self.grid_size = grid_size
        self.resolution = resolution
        self.kernel_bandwidth = kernel_bandwidth
        self.degrees = degrees
        self.r_max = r_max
        self.mode = mode

    def _check(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {self.mode!r}")
        if self.density not in DENSITY_METHODS:
            raise ValueError(f"density must be one of {DENSITY_METHODS}; got {self.density!r}")
        check_positive_int(self.grid_size, "grid_size", minimum=2)
        if self.r_max is not None:
            check_positive_float(self.r_max, "r_max")
        degrees = tuple(self.degrees) if isinstance(self.degrees, (tuple, list)) else None
        if not degrees or any(isinstance(q, bool) or not isinstance(q, (int, np.integer)) or not 0 <= q <= 2
                              for q in degrees):
            raise ValueError(f"degrees must be a non-empty tuple of homology degrees in {{0, 1, 2}} (points "
                             f"live in R^2 or R^3); got {self.degrees!r}")

    def _complex(self, cloud):
        x = check_points(cloud, name="point cloud")
        if self.mode == "alpha":
            import gudhi

            st = gudhi.AlphaComplex(points=x).create_simplex_tree()
            for s, v in st.get_filtration():  # alpha values are squared radii
                st.assign_filtration(s, math.sqrt(max(v, 0.0)))
            return st
        f = codensity(x, self.density, bandwidth=self.bandwidth, dtm_mass=self.dtm_mass)
        with warnings.catch_warnings():  # repeated points (e.g. flat series) clamp L by design
            warnings.simplefilter("ignore", UserWarning)
            return sublevel_flood_bifiltration(x, f, min(self.n_landmarks, len(x)),
                                               points_per_edge=self.points_per_edge, exact=self.exact)

    @staticmethod
    def _max_radius(obj) -> float:
        if isinstance(obj, SublevelFlood):
            return float(max(v.max() for v in slice_values(obj, math.inf) if len(v)))
        return float(max(v for _, v in obj.get_filtration()))

    def _vector(self, obj) -> np.ndarray:
        r_max = self.r_max_
        if self.mode == "bifiltration":
            rg = np.linspace(0.0, r_max, self.grid_size)
            tg = np.linspace(0.0, 1.0, self.grid_size)
            sm = hilbert_signed_measure(obj, rg, tg, self.degrees)
            return convolved_signed_measure(sm, (0.0, r_max), (0.0, 1.0), resolution=self.resolution,
                                            bandwidth=self.kernel_bandwidth)
        st = slice_simplex_tree(obj, math.inf) if isinstance(obj, SublevelFlood) else obj
        return _diagram_image(st, r_max, self.resolution, self.kernel_bandwidth, self.degrees)

    def fit(self, X, y=None):
        """Learn the radius range (if ``r_max`` is None) from the training clouds."""
        self.fit_transform(X, y)
        return self

    def complexes(self, X) -> list:
        """The complexes ``fit_transform``/``transform`` vectorise, one per cloud. Modes
        ``"bifiltration"`` and ``"flood"`` build the same sublevel Flood bifiltration (deterministic),
        so a caller running both may build them once and pass them as ``complexes=``."""
        self._check()
        return [self._complex(c) for c in X]

    def fit_transform(self, X, y=None, complexes: list | None = None, **fit_params):
        """Fit and transform in one pass (each complex is built once; ``complexes``: prebuilt ones
        from :meth:`complexes` of an estimator with the same complex parameters)."""
        self._check()
        objs = [self._complex(c) for c in X] if complexes is None else list(complexes)
        if not objs:
            raise ValueError("X holds no point clouds; fit needs at least one (N, 2|3) cloud")
        self.r_max_ = float(self.r_max) if self.r_max is not None else max(self._max_radius(o) for o in objs)
        return np.stack([self._vector(o) for o in objs])

    def transform(self, X, complexes: list | None = None):
        """Feature matrix (n_clouds, n_features) (``complexes``: as in :meth:`fit_transform`)."""
        if not hasattr(self, "r_max_"):
            raise ValueError("SublevelFloodFeatures is not fitted; call fit first")
        if complexes is not None:
            return np.stack([self._vector(o) for o in complexes])
        return np.stack([self._vector(self._complex(c)) for c in X])
