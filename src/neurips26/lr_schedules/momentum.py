r"""Optimal momentum schedules β(t) jointly with η(t) for heavy-ball SGD (paper: "Beyond SGD").

Both schedules use the knot parametrisation of :mod:`optimal`:

    η_t = η_cap σ(W z_η),     β_t = β_cap σ(W z_β),

and L-BFGS-B minimises log L_T with the exact adjoint gradient of the three-moment heavy-ball
dynamics (:func:`dynamics.momentum_final_loss_and_grad`). η_cap defaults to the SGD stability
bound; with β > 0 the effective learning rate η/(1 − β) can exceed it, which is how momentum can
help where SGD sits on its stability cap (the hard phase). Unstable trial points met by the line
search (overflow) are rejected with a large objective value; this back-off is counted and reported.

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), momentum section; B. T. Polyak (1964), heavy ball.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, logit

from .dynamics import momentum_final_loss_and_grad, stability_bound
from .optimal import interpolation_matrix, knot_positions
from .task import Spectrum

__all__ = ["MomentumSchedule", "optimal_momentum_schedule"]


@dataclass
class MomentumSchedule:
    """A jointly optimised (η, β) schedule.

    Attributes:
        eta: (T,) learning rates; beta: (T,) momentum; loss: L_T;
        eta_cap, beta_cap: the caps; n_iter: L-BFGS-B iterations; n_unstable: rejected unstable trials.
    """

    eta: np.ndarray
    beta: np.ndarray
    loss: float
    eta_cap: float
    beta_cap: float
    n_iter: int
    n_unstable: int


def optimal_momentum_schedule(spectrum: Spectrum, T: int, *, m: float = 1.0, n_knots: int = 16,
                              eta_init: np.ndarray | float | None = None, beta_init: float = 0.3,
                              eta_cap: float | None = None, beta_cap: float = 0.99,
                              max_iter: int = 300) -> MomentumSchedule:
    """Jointly optimise η(t) and β(t) on the heavy-ball moment dynamics.

    Args:
        spectrum: the task; T: horizon ≥ n_knots; m: batch size > 0.
        n_knots: knots per schedule (dense at both ends, :func:`knot_positions`).
        eta_init: start for η (constant or (T,) array in (0, eta_cap)); default eta_cap/4.
        beta_init: starting constant momentum in (0, beta_cap).
        eta_cap: cap on η (default: the SGD stability bound at m); beta_cap: cap on β, in (0, 1).
        max_iter: L-BFGS-B iterations.

    Raises:
        ValueError: on caps or starts out of range, T < n_knots, m ≤ 0.
    """
    if not 0 < beta_cap < 1:
        raise ValueError(f"beta_cap must be in (0, 1), got {beta_cap!r}")
    if not 0 < beta_init < beta_cap:
        raise ValueError(f"beta_init must be in (0, beta_cap={beta_cap}), got {beta_init!r}")
    if not (np.isfinite(m) and m > 0):
        raise ValueError(f"batch size m must be finite and > 0, got {m!r}")
    if eta_cap is None:
        eta_cap = stability_bound(spectrum.lambdas, m)
    knots = knot_positions(n_knots)
    W = interpolation_matrix(T, knots)
    e0 = np.full(int(T), eta_cap / 4) if eta_init is None else np.broadcast_to(
        np.asarray(eta_init, dtype=np.float64), (int(T),))
    if np.any(e0 <= 0) or np.any(e0 >= eta_cap):
        raise ValueError(f"eta_init must lie in (0, eta_cap={eta_cap:.6g})")
    z_eta = np.linalg.lstsq(W, logit(e0 / eta_cap), rcond=None)[0]
    z_beta = np.full(knots.size, logit(beta_init / beta_cap))
    K = knots.size
    unstable = [0]

    def objective(z):
        se, sb = expit(W @ z[:K]), expit(W @ z[K:])
        try:
            g = momentum_final_loss_and_grad(spectrum, eta_cap * se, beta_cap * sb, m)
        except FloatingPointError:
            unstable[0] += 1
            return 1e3, np.zeros_like(z)
        if not np.isfinite(g.loss) or g.loss > 1e300:
            unstable[0] += 1
            return 1e3, np.zeros_like(z)
        ge = W.T @ (g.d_eta * eta_cap * se * (1 - se)) / g.loss
        gb = W.T @ (g.d_beta * beta_cap * sb * (1 - sb)) / g.loss
        return np.log(g.loss), np.concatenate([ge, gb])

    with np.errstate(over="ignore", invalid="ignore"):
        res = minimize(objective, np.clip(np.concatenate([z_eta, z_beta]), -20, 10), jac=True, method="L-BFGS-B",
                       bounds=[(-20.0, 10.0)] * (2 * K), options={"maxiter": max_iter, "ftol": 1e-11, "gtol": 1e-9})
    eta = eta_cap * expit(W @ res.x[:K])
    beta = beta_cap * expit(W @ res.x[K:])
    return MomentumSchedule(eta, beta, float(np.exp(res.fun)), float(eta_cap), beta_cap, int(res.nit), unstable[0])
