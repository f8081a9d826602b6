r"""The optimal learning-rate schedule η*_T(t) for a horizon T: numerically (L-BFGS-B on log L_T with
the adjoint gradient) and by optimal control (Pontryagin forward–backward sweep, continuous time);
plus the fits the paper reports: peak LR, decay exponent δ, decay fraction, exponents across
horizons (ξ, loss-scaling) with confidence intervals, and a phase label derived from them.

Parametrisation (inferred: a smooth, low-dimensional schedule the optimiser can handle): K knots
of z = logit(η/η_max) at Chebyshev–Lobatto relative times s_j = (1 − cos(π u_j))/2, u_j uniform on
[0, 1] — dense at both ends, so the fast early change of the optimum (its warm-up or fast initial
decay) and a decay over a small fraction of T are both resolved; linear interpolation in between:
η_t = η_max σ(Σ_j W_tj z_j). The sigmoid keeps every η_t strictly below the stability bound η_max.
(``placement="end"``, s_j = 1 − (1 − u_j)^p, is the older end-dense placement: on a one-mode
problem at T = 200 its first 10 % of steps were 12 % off the fully resolved optimum, against 2 %
for the default.)

Continuous-time control (inferred from the moment dynamics): with ċ_k = −2ηλ_k c_k + (η²/m)λ_k(L + σ0²) and
Hamiltonian H = Σ_k p_k ċ_k, the costate obeys ṗ_k = 2ηλ_k p_k − (η²/m)λ_k Σ_j λ_j p_j, p(T) = λ,
and minimising H over η gives

    η*(t) = m Σ_k p_k λ_k c_k / ((L + σ0²) Σ_k p_k λ_k),      clipped to [0, η_max]

(on the clip — "bang" — the WSD plateau of the hard phase).

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), abstract (numerical optimum and optimal control);
    L. S. Pontryagin et al. (1962), the maximum principle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import stats
from scipy.optimize import minimize
from scipy.special import expit, logit

from .dynamics import final_loss_and_grad, stability_bound
from .task import Spectrum

__all__ = [
    "knot_positions", "interpolation_matrix", "knot_objective", "OptimalSchedule", "optimal_schedule",
    "ScheduleShape", "schedule_shape", "Exponent", "fit_exponent", "phase_label", "pontryagin_schedule",
]


def knot_positions(n_knots: int, power: float = 3.0, placement: str = "both_ends") -> np.ndarray:
    """(K,) relative knot times in [0, 1], u_j = j/(K−1).

    ``placement="both_ends"`` (default): Chebyshev–Lobatto s_j = (1 − cos(π u_j))/2, dense at the
    start and at the end of training (``power`` unused). ``placement="end"``: s_j = 1 − (1 − u_j)^power,
    dense near the end only.

    Raises:
        ValueError: if n_knots < 2, power < 1 or placement is unknown.
    """
    if int(n_knots) != n_knots or n_knots < 2:
        raise ValueError(f"n_knots must be an integer >= 2, got {n_knots!r}")
    if not power >= 1:
        raise ValueError(f"power must be >= 1, got {power!r}")
    u = np.linspace(0.0, 1.0, int(n_knots))
    if placement == "both_ends":
        s = 0.5 * (1.0 - np.cos(np.pi * u))                    # s_j = (1 − cos π u_j)/2
        s[0], s[-1] = 0.0, 1.0
        return s
    if placement == "end":
        return 1.0 - (1.0 - u) ** power                         # s_j = 1 − (1 − u_j)^p
    raise ValueError(f"placement={placement!r}; allowed: 'both_ends', 'end'")


def interpolation_matrix(T: int, knots: np.ndarray) -> np.ndarray:
    """(T, K) matrix W of linear-interpolation weights from knot values to steps t = 0..T−1
    (step t sits at relative time (t + ½)/T).

    Raises:
        ValueError: if T is smaller than the number of knots (the schedule's resolution).
    """
    knots = np.asarray(knots, dtype=np.float64)
    if int(T) != T or T < knots.size:
        raise ValueError(f"horizon T={T!r} is smaller than the schedule's resolution ({knots.size} knots); "
                         f"use T >= {knots.size} or fewer knots")
    u = (np.arange(T) + 0.5) / T
    W = np.zeros((int(T), knots.size))
    j = np.clip(np.searchsorted(knots, u, side="right") - 1, 0, knots.size - 2)
    w = (u - knots[j]) / (knots[j + 1] - knots[j])
    W[np.arange(T), j] = 1.0 - w
    W[np.arange(T), j + 1] = w
    return W


def knot_objective(spectrum: Spectrum, W: np.ndarray, eta_max: float, m: float = 1.0):
    """The function L-BFGS-B minimises: z ↦ (log L_T(η(z)), ∂ log L_T/∂z) with η = η_max σ(W z).

    Chain rule: ∂ log L/∂z = Wᵀ (∂L/∂η ∘ η_max σ'(Wz)) / L, σ' = σ(1 − σ); ∂L/∂η is the adjoint
    gradient of :func:`final_loss_and_grad`.

    Args:
        spectrum: the task; W: (T, K) interpolation matrix; eta_max: the cap; m: batch size.

    Returns:
        A callable z (K,) → (float, (K,) array).
    """
    def objective(z: np.ndarray):
        sig = expit(W @ z)                                                  # σ(W z)
        L, g = final_loss_and_grad(spectrum, eta_max * sig, m, validate=False)
        return np.log(L), W.T @ (g * eta_max * sig * (1.0 - sig)) / L      # Wᵀ(∂L/∂η · η_max σ(1−σ)) / L

    return objective


@dataclass
class OptimalSchedule:
    """A numerically optimal schedule for one horizon.

    Attributes:
        eta: (T,) the schedule η*_T(t).
        loss: final loss L_T.
        eta_max: the stability bound the schedule stays under.
        z: (K,) knot values logit(η/η_max); knots: (K,) their relative times.
        n_iter: L-BFGS-B iterations; converged: its success flag; message: its message.
    """

    eta: np.ndarray
    loss: float
    eta_max: float
    z: np.ndarray
    knots: np.ndarray
    n_iter: int
    converged: bool
    message: str = ""


def optimal_schedule(spectrum: Spectrum, T: int, *, m: float = 1.0, n_knots: int = 24, knot_power: float = 3.0,
                     knot_placement: str = "both_ends",
                     eta_init: float | np.ndarray | None = None, max_iter: int = 300, tol: float = 1e-10,
                     z_bounds: tuple[float, float] = (-20.0, 10.0)) -> OptimalSchedule:
    """Minimise L_T over knot schedules η_t = η_max σ(W z) with L-BFGS-B on log L_T (adjoint gradient).

    Args:
        spectrum: the task.
        T: horizon (steps) ≥ n_knots.
        m: batch size > 0 (η_max = :func:`stability_bound` at m).
        n_knots: K knots; knot_placement, knot_power: where they sit (:func:`knot_positions`).
        eta_init: starting schedule: a constant, a (T,) array, or None (η_max/4).
        max_iter: L-BFGS-B iteration cap; tol: its ``ftol`` on log L_T.
        z_bounds: box on knot logits (keeps σ'(z) from vanishing completely).

    Returns:
        :class:`OptimalSchedule`.

    Raises:
        ValueError: if T < n_knots, m ≤ 0, or eta_init is outside (0, η_max).

    Source: abstract (the schedule is computed as a numerical optimisation problem); the knot
    parametrisation is inferred (module docstring).
    """
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"batch size m must be finite and > 0, got {m!r}")
    if not (isinstance(T, (int, np.integer)) or (isinstance(T, float) and T.is_integer())) or T < 1:
        raise ValueError(f"horizon T must be an integer >= 1, got {T!r}")
    knots = knot_positions(n_knots, knot_power, knot_placement)
    W = interpolation_matrix(T, knots)
    eta_max = stability_bound(spectrum.lambdas, m)
    if eta_init is None:
        z0 = np.full(knots.size, logit(0.25))
    else:
        if np.ndim(eta_init) and np.shape(eta_init) != (int(T),):
            raise ValueError(f"eta_init must be a constant or have shape ({int(T)},), got shape {np.shape(eta_init)}")
        e0 = np.broadcast_to(np.asarray(eta_init, dtype=np.float64), (int(T),)) if np.ndim(eta_init) else \
            np.full(int(T), float(eta_init))
        if np.any(~np.isfinite(e0)) or np.any(e0 <= 0) or np.any(e0 >= eta_max):
            raise ValueError(f"eta_init must lie in (0, eta_max={eta_max:.6g}); got range "
                             f"[{np.min(e0):.6g}, {np.max(e0):.6g}]")
        # least-squares knot values reproducing the initial schedule
        z0 = np.linalg.lstsq(W, logit(e0 / eta_max), rcond=None)[0]
    z0 = np.clip(z0, *z_bounds)

    objective = knot_objective(spectrum, W, eta_max, m)
    res = minimize(objective, z0, jac=True, method="L-BFGS-B", bounds=[z_bounds] * knots.size,
                   options={"maxiter": max_iter, "ftol": tol, "gtol": 1e-9})
    eta = eta_max * expit(W @ res.x)
    return OptimalSchedule(eta, float(np.exp(res.fun)), eta_max, res.x, knots, int(res.nit), bool(res.success),
                           str(res.message))


@dataclass
class ScheduleShape:
    """Shape summary of a schedule.

    Attributes:
        peak: max_t η_t; peak_step: its argmax.
        decay_fraction: (T − 1 − t_d)/T where t_d is the last step with η_t ≥ 0.9·peak.
        delta: fitted δ of η_t ≈ A (1 − t/T)^δ over t ≥ peak_step; delta_se: its standard error.
    """

    peak: float
    peak_step: int
    decay_fraction: float
    delta: float
    delta_se: float


def schedule_shape(eta: np.ndarray, plateau_level: float = 0.9, n_fit: int = 40) -> ScheduleShape:
    """Peak, decay fraction and decay exponent δ of a schedule (abstract: η* ≃ T^{-ξ}(1 − t/T)^δ).

    δ is the least-squares slope of log η_t on log(1 − (t+½)/T) at ``n_fit`` steps log-spaced in
    distance from the end, from the peak on (so the fit weighs every scale of 1 − t/T equally).

    Raises:
        ValueError: if eta is not a 1-d positive finite array of length ≥ 4, or plateau_level ∉ (0, 1).
    """
    eta = np.asarray(eta, dtype=np.float64)
    if eta.ndim != 1 or eta.size < 4 or np.any(~np.isfinite(eta)) or np.any(eta <= 0):
        raise ValueError("eta must be a 1-d array of >= 4 finite values > 0")
    if not 0 < plateau_level < 1:
        raise ValueError(f"plateau_level must be in (0, 1), got {plateau_level!r}")
    T = eta.size
    k = int(np.argmax(eta))
    t_d = int(np.flatnonzero(eta >= plateau_level * eta[k]).max())
    dist = np.unique(np.round(np.geomspace(1, T - k, n_fit)).astype(int))
    idx = T - dist
    x = np.log(1.0 - (idx + 0.5) / T)
    if idx.size >= 3 and np.ptp(x) > 0:
        fit = stats.linregress(x, np.log(eta[idx]))
        delta, se = float(fit.slope), float(fit.stderr)
    else:
        delta, se = float("nan"), float("nan")
    return ScheduleShape(float(eta[k]), k, (T - 1 - t_d) / T, delta, se)


@dataclass
class Exponent:
    """A fitted power-law exponent y ∝ x^{slope} with its 95 % confidence interval."""

    slope: float
    se: float
    ci_low: float
    ci_high: float
    prefactor: float = field(default=float("nan"))

    def as_dict(self) -> dict:
        return {"slope": self.slope, "se": self.se, "ci95": [self.ci_low, self.ci_high]}


def fit_exponent(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> Exponent:
    """Least-squares slope of log y on log x, with a Student-t confidence interval.

    Raises:
        ValueError: if fewer than 3 points, or any x or y is not finite and > 0.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(f"need >= 3 matching points, got x {x.shape}, y {y.shape}")
    if np.any(~np.isfinite(x) | (x <= 0)) or np.any(~np.isfinite(y) | (y <= 0)):
        raise ValueError("x and y must be finite and > 0 to fit a power law")
    fit = stats.linregress(np.log(x), np.log(y))
    half = stats.t.ppf(0.5 + level / 2, x.size - 2) * fit.stderr
    return Exponent(float(fit.slope), float(fit.stderr), float(fit.slope - half), float(fit.slope + half),
                    float(np.exp(fit.intercept)))


def phase_label(peak_exponent: Exponent, decay_fraction_exponent: Exponent, flat: float = 0.1) -> str:
    """Phase from exponents fitted across horizons (not from a hard-coded boundary in α, β).

    ``easy``: the peak LR falls with T (peak ∝ T^{-ξ}, CI of −ξ entirely below −flat).
    ``hard``: the peak is T-independent (CI of its exponent within ±flat of 0 overlap) and the
    decay fraction shrinks (CI of its exponent entirely below 0). Otherwise ``ambiguous``.

    Args:
        peak_exponent: fit of peak LR vs T (slope = −ξ).
        decay_fraction_exponent: fit of decay fraction vs T.
        flat: |exponent| regarded as flat (a resolution choice at finite T, reported).
    """
    if peak_exponent.ci_high < -flat:
        return "easy"
    flat_peak = peak_exponent.ci_low <= flat and peak_exponent.ci_high >= -flat
    if flat_peak and decay_fraction_exponent.ci_high < 0:
        return "hard"
    return "ambiguous"


@dataclass
class PontryaginSchedule:
    """Continuous-time optimal-control schedule on a grid, mapped to steps.

    Attributes:
        eta: (T,) schedule on steps; grid: (G,) grid times; eta_grid: (G−1,) per cell;
        sweeps: forward–backward sweeps done; change: last max relative change of η.
    """

    eta: np.ndarray
    grid: np.ndarray
    eta_grid: np.ndarray
    sweeps: int
    change: float


def pontryagin_schedule(spectrum: Spectrum, T: int, *, m: float = 1.0, eta_max: float | None = None,
                        n_grid: int = 400, grid_power: float = 3.0, sweeps: int = 400, damping: float = 0.3,
                        tol: float = 1e-6, eta_init: float | None = None) -> PontryaginSchedule:
    """Forward–backward sweep for the continuous-time optimal control problem (module docstring).

    The state and costate are advanced over grid cells with an exponential integrator (η and L
    frozen per cell); η is then relaxed towards the pointwise Hamiltonian minimiser clipped to
    [0, η_max]: η ← (1 − damping) η + damping η*.

    Args:
        spectrum: the task; T: horizon in steps; m: batch size.
        eta_max: cap (default: the discrete stability bound at m).
        n_grid: cells, dense near T (relative edges 1 − (1 − u)^grid_power).
        sweeps: max sweeps; damping in (0, 1]; tol: stop when max |Δη|/η_max < tol.
        eta_init: starting constant (default η_max/4).

    Raises:
        ValueError: if T < 1, damping ∉ (0, 1], m ≤ 0 or n_grid < 2 (T may be smaller than n_grid: the
            grid is in continuous time).

    Source: abstract (optimal control theory); the Hamiltonian is inferred from the moment dynamics.
    """
    if not 0 < damping <= 1:
        raise ValueError(f"damping must be in (0, 1], got {damping!r}")
    if n_grid < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid!r}")
    if int(T) != T or T < 1:
        raise ValueError(f"horizon T must be an integer >= 1, got {T!r}")
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"batch size m must be finite and > 0, got {m!r}")
    if eta_max is None:
        eta_max = stability_bound(spectrum.lambdas, m)
    lam, s0, R = spectrum.lambdas, spectrum.sigma0_sq, spectrum.residual
    edges = float(T) * knot_positions(n_grid + 1, grid_power, placement="end")
    dt = np.diff(edges)
    eta = np.full(n_grid, eta_max / 4 if eta_init is None else float(eta_init))
    change = np.inf
    n = 0
    for n in range(1, sweeps + 1):  # noqa: B007 (n is the sweep count reported after the loop)
        cs = np.empty((n_grid, lam.size))
        c = spectrum.c0.copy()
        for j in range(n_grid):
            cs[j] = c
            decay = np.exp(-2 * eta[j] * lam * dt[j])
            c = decay * c + (1 - decay) * eta[j] * (lam @ c + R + s0) / (2 * m)
        p = lam.copy()
        target = np.empty(n_grid)
        for j in range(n_grid - 1, -1, -1):
            decay = np.exp(-2 * eta[j] * lam * dt[j])
            p = decay * p + (1 - decay) * eta[j] * (p @ lam) / (2 * m)  # costate at the cell's start
            c = cs[j]
            target[j] = m * (p @ (lam * c)) / ((lam @ c + R + s0) * (p @ lam))
        target = np.clip(target, 0.0, eta_max)
        new = (1 - damping) * eta + damping * target
        change = float(np.max(np.abs(new - eta)) / eta_max)
        eta = new
        if change < tol:
            break
    u = (np.arange(T) + 0.5)
    idx = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, n_grid - 1)
    return PontryaginSchedule(eta[idx], edges, eta, n, change)
