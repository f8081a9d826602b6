r"""Estimate the achievable gain — and the whole KL–reward frontier — from base-policy samples alone.

The paper's covariance form of the optimal gain,

.. math::  \Delta(\beta) = \frac{\mathrm{Cov}_{\pi_0}(r, e^{r/\beta})}{\mathbb{E}_{\pi_0}[e^{r/\beta}]},

needs only rewards :math:`r_1..r_N` of samples :math:`y_i\sim\pi_0`. With weights
:math:`w_i = e^{(r_i - r_{\max})/\beta}` (the shift by :math:`r_{\max}` cancels and prevents overflow)

.. math::  \hat\Delta(\beta) = \frac{\overline{r w} - \bar r\,\bar w}{\bar w}, \qquad
           \widehat{\mathrm{KL}}(\beta) = \frac{\sum_i \hat w_i r_i - r_{\max}}{\beta} - \log \bar w,

with :math:`\hat w_i = w_i/\sum_j w_j`. Both are smooth functions of sample means, so their
standard errors follow from the delta method (influence functions
:math:`\psi_i = w_i(r_i-\hat\mu_\beta)/\bar w - (r_i - \bar r)` for the gain). The estimate is
trustworthy only while the weights' effective sample size
:math:`\mathrm{ESS} = (\sum w)^2 / \sum w^2` is large; it collapses as :math:`\beta\to 0`, where
the estimator is biased low (it cannot see rewards beyond the sample maximum).

Samples from another policy :math:`q` can be used with log importance weights
:math:`\log(\pi_0(y_i)/q(y_i))`; every mean above then becomes a self-normalised weighted mean.

All betas are handled at once: the per-beta sums are matrix products of
:math:`[e^{(r_i-r_{\max})/\beta_b}]_{b,i}` (and its square) with a few per-sample columns, in blocks.

References:
    Monteiro Paes et al. (2026), arXiv:2605.07105 — covariance form and base-sample estimator.
    Kong (1992) / Owen (2013, ch. 9) — effective sample size of importance weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import UnreliableEstimateWarning, as_betas, as_positive_float, as_rewards, reward_scale, warn

#: Below this effective sample size the estimate is flagged unreliable (inferred: a common rule of
#: thumb for self-normalised importance sampling; the weights then rest on a few samples).
DEFAULT_MIN_ESS = 30.0
_BLOCK_ELEMENTS = 4_000_000
# tiles of (betas x samples) small enough to stay in L2 cache: exp and the two skinny matrix
# products then run on hot data (measured ~4x faster than whole-row blocks for 1e6 x 100)
_TILE_ELEMENTS = 200_000
_TILE_BETAS = 128


@dataclass(frozen=True)
class FrontierEstimate:
    """Base-sample estimate of the KL–reward frontier at a set of betas.

    Attributes:
        beta: shape (B,), KL penalty factors.
        gain: shape (B,), estimated optimal gain (reward units).
        gain_se: shape (B,), delta-method standard error of ``gain``.
        kl: shape (B,), estimated KL(pi_beta || pi0) (nats).
        kl_se: shape (B,), delta-method standard error of ``kl``.
        ess: shape (B,), effective sample size of the tilting weights.
        reliable: shape (B,), bool, ``ess >= min_ess``.
        n_samples: N, the number of base samples used.
    """

    beta: np.ndarray
    gain: np.ndarray
    gain_se: np.ndarray
    kl: np.ndarray
    kl_se: np.ndarray
    ess: np.ndarray
    reliable: np.ndarray
    n_samples: int


def estimate_frontier(rewards, beta, *, log_importance_weights=None,
                      min_ess: float = DEFAULT_MIN_ESS, warn_unreliable: bool = True) -> FrontierEstimate:
    r"""Estimate :math:`\Delta(\beta)` and :math:`\mathrm{KL}(\pi_\beta\|\pi_0)` from base samples.

    Args:
        rewards: shape (N,), finite rewards of N >= 2 samples drawn from the base policy
            (or from ``q`` when ``log_importance_weights`` is given).
        beta: a scalar > 0 or shape (B,), each > 0 (reward units per nat).
        log_importance_weights: optional shape (N,), finite :math:`\log \pi_0(y_i)/q(y_i)`.
        min_ess: effective sample size below which a beta is flagged unreliable (> 1).
        warn_unreliable: issue an :class:`UnreliableEstimateWarning` if any beta is unreliable.

    Returns:
        :class:`FrontierEstimate` with arrays of shape (B,). Constant rewards give gain 0 and
        KL 0 with zero standard errors.

    Raises:
        ValueError: if fewer than 2 samples, NaN/inf rewards or weights, a weight vector whose
            length differs from ``rewards``, ``beta <= 0``, or ``min_ess <= 1``.

    Source: abstract (covariance form / base-sample estimator); standard errors and ESS inferred.
    """
    r = as_rewards(rewards, "rewards", min_len=2)
    betas_in, _ = as_betas(beta)
    min_ess = as_positive_float(min_ess, "min_ess", minimum=1.0)
    # huge rewards: estimate on r / scale (exact power of two); gains and their SEs scale back
    scale = reward_scale(r)
    # a tiny beta can underflow to 0 (or a subnormal whose inverse is inf) after rescaling, and then
    # 0 * inf = NaN in the tilt of the top samples: floor it at the smallest normal float. That is
    # exact for the weights up to reward gaps below ~1.6e-305 (in rescaled units) — the beta -> 0+
    # limit, all weight on the sample maximum, which tilted_frontier also returns
    r, betas = r / scale, np.maximum(betas_in / scale, np.finfo(np.float64).tiny)
    n = r.size
    if log_importance_weights is None:
        omega = np.ones(n)
    else:
        lw = as_rewards(log_importance_weights, "log_importance_weights")
        if lw.size != n:
            raise ValueError(f"log_importance_weights must have the same length as rewards, "
                             f"got {lw.size} and {n}")
        omega = np.exp(lw - lw.max())
    c = omega.mean()
    rbar = float(np.dot(omega, r) / omega.sum())
    x = r - rbar                       # centred rewards (precision of the moment expansions)
    xmax = float(x.max())
    d = x - xmax                       # <= 0: exp(d / beta) never overflows

    B = betas.size
    if np.ptp(r) == 0.0:               # constant reward: pi_beta = pi0, gain 0, not NaN
        zeros = np.zeros(B)
        ess = np.full(B, omega.sum() ** 2 / np.dot(omega, omega))
        return FrontierEstimate(betas_in, zeros, zeros.copy(), zeros.copy(), zeros.copy(), ess,
                                ess >= min_ess, n)

    # per-beta sums as matrix products: sum_i w_i f_i = t @ (omega f), sum_i w_i^2 f_i = t^2 @ (omega^2 f).
    # Moments of the tilt are taken in d = x - x_max (0 on the top samples), not x: as beta -> 0 the
    # weight sits on the top samples, where d - E_pb[d] is then exactly 0 — in x the same quantities
    # are differences of nearly equal numbers divided by beta**2 (NaN or a nonsense SE).
    o2 = omega**2
    f1 = np.stack([omega, omega * d, o2, o2 * d, o2 * x, o2 * d * x], axis=1)  # (N, 6)
    f2 = np.stack([o2, o2 * d, o2 * d * d], axis=1)                          # (N, 3)
    m1, m2 = _tiled_moments(d, betas, f1, f2)
    s_w, s_wd, s_wo, s_wod, s_wox, s_wodx = m1.T  # sums of w, w d, w omega, w omega d, w omega x, w omega d x
    s_w2, s_w2d, s_w2d2 = m2.T                    # sums of w^2, w^2 d, w^2 d^2

    b = s_w / n                                 # mean(w)
    dmu = s_wd / s_w                            # E_{pi_beta}[d] <= 0 (self-normalised)
    mu = xmax + dmu                             # E_{pi_beta}[x]
    gain = mu                                   # Delta = E_pb[r] - E_p0[r] = E_pb[x]
    kl = dmu / betas - np.log(b) + np.log(c)    # E_pb[r]/beta - log Z, shifted by r_max

    # delta method. gain: psi_i = w_i (x_i - mu)/b - omega_i x_i / c, with x_i - mu = d_i - dmu
    w2_dmu2 = s_w2d2 - 2 * dmu * s_w2d + dmu**2 * s_w2                # sum w^2 (x - mu)^2
    t1, t2, t3 = w2_dmu2 / b**2, 2 * (s_wodx - dmu * s_wox) / (b * c), np.dot(o2, x * x) / c**2
    s_psi_gain = t1 - t2 + t3
    # KL: psi_i = w_i g_i / b + omega_i / c, g_i = (d_i - dmu)/beta - 1 (mean zero by construction)
    # (.. / beta) / beta, not / beta**2: beta**2 underflows to 0 for beta < ~1e-154 (0/0 = NaN)
    u1 = ((w2_dmu2 / betas) / betas - 2 * (s_w2d - dmu * s_w2) / betas + s_w2) / b**2
    u2 = 2 * ((s_wod - dmu * s_wo) / betas - s_wo) / (b * c)
    u3 = np.dot(omega, omega) / c**2
    s_psi_kl = u1 + u2 + u3
    # the expansions cancel catastrophically when the tilt is tiny (beta >> reward spread):
    # evaluate those rows directly instead
    lossy = (s_psi_gain < 1e-6 * (t1 + np.abs(t2) + t3)) | (s_psi_kl < 1e-6 * (u1 + np.abs(u2) + u3))
    if lossy.any():
        s_psi_gain[lossy], s_psi_kl[lossy] = _influence_sums_direct(
            d, x, omega, betas[lossy], b[lossy], c, dmu[lossy])
    gain_se = np.sqrt(np.maximum(s_psi_gain, 0.0) / (n * (n - 1)))
    kl_se = np.sqrt(np.maximum(s_psi_kl, 0.0) / (n * (n - 1)))

    ess = s_w**2 / s_w2
    reliable = ess >= min_ess
    if warn_unreliable and not reliable.all():
        bad = betas_in[~reliable]
        warn(f"base-sample frontier estimate unreliable for {bad.size} of {B} beta value(s) "
             f"(largest such beta = {bad.max():.4g}): effective sample size of the tilting weights "
             f"is below {min_ess:g} (min ESS = {ess.min():.3g} of N = {n}); the estimate is biased low "
             f"there -- draw more base samples or use a larger beta", UnreliableEstimateWarning)
    return FrontierEstimate(betas_in, gain * scale, gain_se * scale, np.maximum(kl, 0.0), kl_se, ess, reliable, n)


_CONTROLLER = None


def _one_blas_thread():
    """Context limiting BLAS to one thread: the skinny tile products gain nothing from threads,
    and threaded BLAS on a busy machine was measured up to ~15x slower."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def _tiled_moments(d, betas, f1, f2):
    """sum_i t_bi f1_i and sum_i t_bi^2 f2_i with t_bi = exp(d_i / beta_b), in cache-sized tiles."""
    n, B = d.size, betas.size
    inv_beta = 1.0 / betas
    m1 = np.zeros((B, f1.shape[1]))
    m2 = np.zeros((B, f2.shape[1]))
    with _one_blas_thread():
        for bs in range(0, B, _TILE_BETAS):
            rows = slice(bs, min(B, bs + _TILE_BETAS))
            nb = rows.stop - rows.start
            cols = min(n, max(256, _TILE_ELEMENTS // nb))
            buf = np.empty((nb, cols))
            for s in range(0, n, cols):
                c = min(cols, n - s)
                t = buf[:, :c]
                np.multiply.outer(inv_beta[rows], d[s:s + c], out=t)
                np.exp(t, out=t)                                  # entries in (0, 1]
                m1[rows] += t @ f1[s:s + c]
                np.square(t, out=t)
                m2[rows] += t @ f2[s:s + c]
    return m1, m2


def _influence_sums_direct(d, x, omega, betas, b, c, dmu):
    """(sum psi_gain^2, sum psi_KL^2) evaluated sample by sample (precise for tiny tilts); ``dmu`` = E_pb[d]."""
    n = x.size
    g_out, k_out = np.empty(betas.size), np.empty(betas.size)
    step = max(1, _BLOCK_ELEMENTS // n)
    for s in range(0, betas.size, step):
        sl = slice(s, min(betas.size, s + step))
        bt = betas[sl, None]
        # w/b - omega/c without cancellation: omega * (t/mean_t - 1) / c, t/mean_t - 1 via expm1
        a = d[None, :] / bt
        log_tbar = np.log(b[sl] / c)[:, None]          # b/c = weighted mean of t (exact identity)
        rel = omega[None, :] * np.expm1(a - log_tbar) / c  # w/b - omega/c
        wb = rel + omega[None, :] / c                       # w/b
        psi_g = rel * x[None, :] - wb * (x.max() + dmu[sl, None])   # w(x - mu)/b - omega x / c
        psi_k = wb * (d[None, :] - dmu[sl, None]) / bt - rel         # w g / b + omega / c
        g_out[sl] = np.sum(psi_g**2, axis=1)
        k_out[sl] = np.sum(psi_k**2, axis=1)
    return g_out, k_out
