r"""Monte Carlo check of the moment dynamics: actual minibatch SGD on sampled Gaussian features.

Features ψ ~ N(0, diag λ) on the N learned modes, labels y = w*·ψ + sqrt(σ0² + R_N) z: the
unlearnable modes k > N contribute a Gaussian independent of the learned features with variance
R_N, so sampling them as one scalar is exact in distribution. With e = w − w*, one SGD step is

    e ← e − (η/m) Σ_μ ψ_μ (ψ_μ·e − sqrt(σ0² + R_N) z_μ),

and the test loss is exactly L = Σ_k λ_k e_k² + R_N. With heavy-ball momentum β_t the step is
v ← β_t v − (η/m) Σ_μ ψ_μ(ψ_μ·e − sqrt(σ0² + R_N) z_μ), e ← e + v (v_0 = 0), the dynamics whose
moments :func:`~neurips26.lr_schedules.dynamics.momentum_loss_curve` closes. All seeds run at once
(vectorised).

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), abstract (power-law random-feature model trained with SGD).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dynamics import check_schedule
from .task import Spectrum

__all__ = ["MonteCarloResult", "simulate_sgd"]


@dataclass
class MonteCarloResult:
    """Losses of independent SGD runs.

    Attributes:
        steps: (E,) evaluated steps; losses: (E, S) loss per step and seed;
        mean: (E,) mean over seeds; sem: (E,) its standard error.
    """

    steps: np.ndarray
    losses: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        return self.losses.mean(axis=1)

    @property
    def sem(self) -> np.ndarray:
        return self.losses.std(axis=1, ddof=1) / np.sqrt(self.losses.shape[1])


def simulate_sgd(spectrum: Spectrum, eta: np.ndarray, m: int | np.ndarray = 1, *, n_seeds: int = 200,
                 eval_steps: np.ndarray | None = None, rng: np.random.Generator | None = None,
                 beta: np.ndarray | float | None = None) -> MonteCarloResult:
    """Run ``n_seeds`` independent minibatch SGD runs (w_0 = 0) and record the exact test loss.

    Args:
        spectrum: the task (w*_k = sqrt(c_{0,k})).
        eta: (T,) schedule, within the stability bound (plain SGD; with momentum only η ≥ 0 is
            checked, stability being a property of the pair (η, β)).
        m: integer batch size ≥ 1, scalar or (T,).
        n_seeds: independent runs ≥ 2.
        eval_steps: steps in [0, T] at which to record (default: all).
        rng: numpy generator (default: ``np.random.default_rng(0)``).
        beta: heavy-ball momentum β_t in [0, 1), scalar or (T,); ``None`` = plain SGD.

    Returns:
        :class:`MonteCarloResult`.

    Raises:
        ValueError: bad schedule, non-integer batch, n_seeds < 2, eval steps outside [0, T], β
            outside [0, 1) or of the wrong shape.
    """
    if beta is not None:
        from .dynamics import _check_momentum

        eta_arr = np.asarray(eta, dtype=np.float64)
        b_arr = np.broadcast_to(np.asarray(beta, dtype=np.float64), eta_arr.shape)
        eta_arr, b_arr = _check_momentum(eta_arr, b_arr, float(np.min(m)))
        _, m_arr = check_schedule(spectrum, np.zeros_like(eta_arr), m)
        eta = eta_arr
    else:
        eta, m_arr = check_schedule(spectrum, eta, m)
    if np.any(m_arr != np.round(m_arr)):
        raise ValueError("Monte Carlo SGD needs integer batch sizes m >= 1")
    if int(n_seeds) != n_seeds or n_seeds < 2:
        raise ValueError(f"n_seeds must be an integer >= 2, got {n_seeds!r}")
    T = eta.size
    steps = np.arange(T + 1) if eval_steps is None else np.unique(np.asarray(eval_steps, dtype=np.int64))
    if steps.min() < 0 or steps.max() > T:
        raise ValueError(f"eval_steps must lie in [0, {T}]")
    rng = np.random.default_rng(0) if rng is None else rng
    lam, R = spectrum.lambdas, spectrum.residual
    sqrt_lam = np.sqrt(lam)
    noise_sd = np.sqrt(spectrum.noise)
    e = np.broadcast_to(-np.sqrt(spectrum.c0), (int(n_seeds), lam.size)).copy()
    v = np.zeros_like(e)
    out = np.empty((steps.size, int(n_seeds)))
    want = set(steps.tolist())
    row = 0
    for t in range(T + 1):
        if t in want:
            out[row] = (e * e) @ lam + R
            row += 1
        if t == T:
            break
        mt = int(m_arr[t])
        psi = rng.standard_normal((int(n_seeds), mt, lam.size)) * sqrt_lam
        resid = np.einsum("smn,sn->sm", psi, e) - noise_sd * rng.standard_normal((int(n_seeds), mt))
        step = (eta[t] / mt) * np.einsum("smn,sm->sn", psi, resid)
        if beta is None:
            e -= step
        else:                                           # heavy ball: v ← β v − η ĝ, e ← e + v
            v = b_arr[t] * v - step
            e += v
    return MonteCarloResult(steps, out)
