r"""Baseline schedule families, tuned the same way as the optimum (grid start, then L-BFGS-B on
log L_T with the adjoint gradient chained through the family's Jacobian).

    constant          η_t = η_0                                  (paper: best constant η ∝ T^{-ξ})
    power law         η_t = η_0 (t + 1)^{-χ}                     (paper: T^{-ξ} t^{-χ})
    cosine            η_t = η_0 · ½ (1 + cos(π t / T))
    WSD               η_t = η_0 · min(1, (T − t)/(f T))          (warmup-free stable–decay, linear decay over fraction f)

η_0 = η_max σ(z) stays below the stability bound; χ ∈ [0, 2]; f = σ(y) ∈ (0, 1).

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), abstract (optimal constant and power-law baselines); I. Loshchilov, F. Hutter, SGDR (2017)
    for cosine; Hu et al., MiniCPM (2024) for warmup-stable-decay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .dynamics import final_loss_and_grad, loss_curve, stability_bound
from .task import Spectrum

__all__ = ["FAMILIES", "TunedSchedule", "tune_family", "family_schedule"]


def _constant(theta, T, eta_max):
    s = expit(theta[0])
    eta = np.full(T, eta_max * s)
    return eta, (eta * (1 - s))[:, None]


def _power_law(theta, T, eta_max):
    s, chi = expit(theta[0]), theta[1]
    logt = np.log(np.arange(1, T + 1, dtype=np.float64))
    eta = eta_max * s * np.exp(-chi * logt)
    return eta, np.stack([eta * (1 - s), -logt * eta], axis=1)


def _cosine(theta, T, eta_max):
    s = expit(theta[0])
    shape = 0.5 * (1 + np.cos(np.pi * np.arange(T) / T))
    eta = eta_max * s * shape
    return eta, (eta * (1 - s))[:, None]


def _wsd(theta, T, eta_max):
    s, f = expit(theta[0]), expit(theta[1])
    r = (T - np.arange(T)) / (f * T)
    shape = np.minimum(1.0, r)
    eta = eta_max * s * shape
    dshape_df = np.where(r < 1.0, -r / f, 0.0)
    return eta, np.stack([eta * (1 - s), eta_max * s * dshape_df * f * (1 - f)], axis=1)


#: name -> (schedule(theta, T, eta_max) -> (eta (T,), d eta/d theta (T, P)), start grid, bounds)
FAMILIES: dict[str, tuple[Callable, list[np.ndarray], list[tuple[float, float]]]] = {
    "constant": (_constant, [np.linspace(-8, 4, 13)], [(-20.0, 10.0)]),
    "power_law": (_power_law, [np.linspace(-6, 4, 6), np.linspace(0.0, 1.0, 4)], [(-20.0, 10.0), (0.0, 2.0)]),
    "cosine": (_cosine, [np.linspace(-8, 4, 13)], [(-20.0, 10.0)]),
    "wsd": (_wsd, [np.linspace(-6, 4, 6), np.array([-2.5, 0.0, 2.5])], [(-20.0, 10.0), (-8.0, 8.0)]),
}


@dataclass
class TunedSchedule:
    """A baseline family tuned for one horizon.

    Attributes:
        family: one of :data:`FAMILIES`; theta: its tuned parameters; eta: (T,) schedule;
        loss: L_T; eta_max: stability bound used; params: readable parameters (η_0, χ, f).
    """

    family: str
    theta: np.ndarray
    eta: np.ndarray
    loss: float
    eta_max: float
    params: dict


def family_schedule(family: str, theta: np.ndarray, T: int, eta_max: float) -> np.ndarray:
    """The (T,) schedule of a family at parameters theta.

    Raises:
        ValueError: if the family is unknown or T < 1.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown schedule family {family!r}; allowed: {', '.join(FAMILIES)}")
    if int(T) != T or T < 1:
        raise ValueError(f"horizon T must be an integer >= 1, got {T!r}")
    return FAMILIES[family][0](np.asarray(theta, dtype=np.float64), int(T), eta_max)[0]


def tune_family(spectrum: Spectrum, T: int, family: str, *, m: float = 1.0, max_iter: int = 200) -> TunedSchedule:
    """Tune a baseline family for horizon T: best grid point, then L-BFGS-B on log L_T.

    Args:
        spectrum: the task; T: horizon ≥ 1; family: a key of :data:`FAMILIES`; m: batch size.

    Returns:
        :class:`TunedSchedule`.

    Raises:
        ValueError: unknown family, T < 1 or m ≤ 0.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown schedule family {family!r}; allowed: {', '.join(FAMILIES)}")
    if int(T) != T or T < 1:
        raise ValueError(f"horizon T must be an integer >= 1, got {T!r}")
    fn, grid, bounds = FAMILIES[family]
    eta_max = stability_bound(spectrum.lambdas, m)
    T = int(T)

    def objective(theta):
        eta, jac = fn(theta, T, eta_max)
        L, g = final_loss_and_grad(spectrum, eta, m, validate=False)
        return np.log(L), jac.T @ g / L

    best = min((np.array(p) for p in product(*grid)),
               key=lambda th: np.log(loss_curve(spectrum, fn(th, T, eta_max)[0], m, validate=False)[-1]))
    res = minimize(objective, best, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": max_iter, "ftol": 1e-10, "gtol": 1e-7})
    theta = res.x if res.fun <= objective(best)[0] else best
    eta = fn(theta, T, eta_max)[0]
    params = {"eta0": float(eta_max * expit(theta[0]))}
    if family == "power_law":
        params["chi"] = float(theta[1])
    if family == "wsd":
        params["decay_fraction"] = float(expit(theta[1]))
    return TunedSchedule(family, theta, eta, float(loss_curve(spectrum, eta, m, validate=False)[-1]),
                         eta_max, params)
