r"""Joint learning-rate and batch-size schedules (paper: "joint optimisation of learning rate and batch
size").

Degeneracy (inferred from the moment dynamics): per step the drift is −2η_t λ_k c_k and the SGD noise
(η_t²/m_t) λ_k (L + σ0²). Counting samples s = Σ m instead of steps, a step of m samples is, to
leading order in ηλ, m steps of size η/m: the loss at a fixed sample budget depends on (η, m)
only through η/m. The optimum over (η(s), m(s)) is therefore a valley, not a point; discrete-time
corrections O(ηλ_1) break the tie.

Batch ramp: given the optimal single-sample schedule η*(s), play a fixed learning rate η_c with
a growing batch m(s) = max(1, round(η_c / η*(s))), so η_c/m(s) ≈ η*(s). In the easy phase η*
falls with s, so the batch grows and the number of *steps* (wall-clock with parallel samples)
falls below the number of samples.

References:
    Bordelon & Mori, arXiv:2602.04774 (2026), batch-size section; S. L. Smith et al., "Don't decay
    the learning rate, increase the batch size", ICLR 2018.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dynamics import loss_curve, stability_bound
from .task import Spectrum

__all__ = ["BatchRamp", "batch_ramp", "samples_to_steps"]


@dataclass
class BatchRamp:
    """A fixed-LR, growing-batch schedule equivalent (per sample) to a single-sample schedule.

    Attributes:
        eta: (J,) learning rate per step (all η_c); m: (J,) integer batch sizes;
        samples: total samples Σ m (≥ the budget); steps: J; loss: L after the last step;
        loss_curve_steps: (J+1,) losses per step.
    """

    eta: np.ndarray
    m: np.ndarray
    samples: int
    steps: int
    loss: float
    loss_curve_steps: np.ndarray


def samples_to_steps(eta_per_sample: np.ndarray, eta_c: float, max_batch: int | None = None) -> np.ndarray:
    """Integer batch sizes m_j ≥ 1 that consume the per-sample schedule with a fixed η_c.

    Walks the sample axis: at sample s the batch is m = max(1, round(η_c / η*(s))) (capped at
    ``max_batch``), the step consumes samples s … s+m−1.

    Args:
        eta_per_sample: (S,) single-sample schedule η*(s) > 0.
        eta_c: fixed learning rate > 0.
        max_batch: optional cap on m.

    Returns:
        (J,) int batch sizes with Σ m ≥ S.

    Raises:
        ValueError: if eta_c ≤ 0 or the schedule is not positive and finite.
    """
    e = np.asarray(eta_per_sample, dtype=np.float64)
    if e.ndim != 1 or e.size == 0 or np.any(~np.isfinite(e)) or np.any(e <= 0):
        raise ValueError("eta_per_sample must be a non-empty 1-d array of finite values > 0")
    if not (np.isfinite(eta_c) and eta_c > 0):
        raise ValueError(f"eta_c must be finite and > 0, got {eta_c!r}")
    want = np.maximum(1, np.round(eta_c / e)).astype(np.int64)
    if max_batch is not None:
        want = np.minimum(want, int(max_batch))
    ms = []
    s = 0
    while s < e.size:
        ms.append(int(want[s]))
        s += ms[-1]
    return np.asarray(ms, dtype=np.int64)


def batch_ramp(spectrum: Spectrum, eta_per_sample: np.ndarray, eta_c: float,
               max_batch: int | None = None) -> BatchRamp:
    """Evaluate the batch ramp of :func:`samples_to_steps` on the SGD moment dynamics.

    Raises:
        ValueError: if η_c is above the stability bound at the ramp's smallest batch, or as
            :func:`samples_to_steps`.
    """
    ms = samples_to_steps(eta_per_sample, eta_c, max_batch)
    cap = stability_bound(spectrum.lambdas, float(ms.min()))
    if eta_c > cap:
        raise ValueError(f"eta_c={eta_c:.6g} is above the stability bound {cap:.6g} at batch {ms.min()}")
    eta = np.full(ms.size, float(eta_c))
    curve = loss_curve(spectrum, eta, ms.astype(np.float64))
    return BatchRamp(eta, ms, int(ms.sum()), int(ms.size), float(curve[-1]), curve)
