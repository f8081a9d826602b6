r"""Best-of-N alignment: exact KL and reward gain on a finite support, the classical bound, and a
sampled estimate for black-box rewards.

Best-of-N draws :math:`N` outcomes from :math:`\pi_0` and keeps one of highest reward. Group the
outcomes into reward levels :math:`v_1 < \dots < v_L` with base masses :math:`p_l` and CDF
:math:`F_l = \sum_{j\le l} p_j`. The best of :math:`N` lands on level :math:`l` with probability

.. math::  q_l = F_l^N - F_{l-1}^N,

and, by symmetry, on an outcome inside the level in proportion to :math:`\pi_0`. Hence
(ties handled exactly by the grouping)

.. math::  \mathrm{KL}(\pi_{\mathrm{BoN}}\|\pi_0) = \sum_l q_l \log\frac{q_l}{p_l}
           \;\le\; \log N - \frac{N-1}{N}, \qquad
           \Delta_{\mathrm{BoN}} = \sum_l (q_l - p_l)\, v_l .

The bound is an equality only for continuous rewards (Beirami et al., 2024); the continuous
density :math:`N F(r)^{N-1}\pi_0` mis-states the KL when rewards tie. Numerics: :math:`F_l^N` is
computed as :math:`\exp(N\,\mathrm{log1p}(-S_l))` from the upper tail :math:`S_l`, and the
difference with ``expm1``, so very large :math:`N` and masses near 1 keep full precision.

References:
    Beirami et al. (2024), "Theoretical guarantees on the best-of-n alignment policy",
    arXiv:2401.01879 — the bound and the grouped (discrete) formula.
    Monteiro Paes et al. (2026), arXiv:2605.07105 — BoN measured against the KL–reward frontier.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .validation import as_positive_int, as_rewards, policy_and_rewards


@dataclass(frozen=True)
class BestOfN:
    """Exact best-of-N quantities on a finite support.

    Attributes:
        n: shape (M,), the numbers of draws N.
        kl: shape (M,), KL(pi_BoN || pi0) in nats.
        gain: shape (M,), E_BoN[r] - E_pi0[r] in reward units.
        kl_bound: shape (M,), log N - (N-1)/N in nats.
    """

    n: np.ndarray
    kl: np.ndarray
    gain: np.ndarray
    kl_bound: np.ndarray


@dataclass(frozen=True)
class SampledBestOfN:
    """Best-of-N estimated from base-policy samples of a black-box reward.

    Attributes:
        n: N, the number of draws per selection.
        gain: mean of the group maxima minus the mean of all samples (reward units).
        gain_se: standard error of ``gain`` (from the spread of the group maxima).
        kl: plug-in KL of best-of-N on the empirical distribution of the samples (nats;
            exact grouped formula, so ties in the rewards are handled).
        kl_bound: log N - (N-1)/N.
        n_groups: number of disjoint groups of N samples used for ``gain``.
    """

    n: int
    gain: float
    gain_se: float
    kl: float
    kl_bound: float
    n_groups: int


def _as_ns(n) -> tuple[np.ndarray, bool]:
    arr = np.asarray(n)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 1):
        raise ValueError(f"n must be an integer >= 1 or a non-empty 1-D array of them, got {n!r}")
    return arr.astype(np.int64), scalar


def best_of_n_kl_bound(n) -> np.ndarray | float:
    r"""The classical bound :math:`\log N - (N-1)/N` (nats) on :math:`\mathrm{KL}(\pi_{\mathrm{BoN}}\|\pi_0)`.

    Args:
        n: integer >= 1 or 1-D integer array.

    Returns:
        float for a scalar ``n``, else float64 array of the same shape.

    Raises:
        ValueError: if ``n`` is not a positive integer (array).

    Source: Beirami et al. (2024), best-of-N KL bound (an upper bound, tight for continuous rewards).
    """
    ns, scalar = _as_ns(n)
    out = np.log(ns) - (ns - 1) / ns
    return float(out[0]) if scalar else out


def _levels(pi0: np.ndarray, r: np.ndarray):
    """Reward levels (ascending), their base masses and upper-tail masses S_l = sum_{j>l} p_j."""
    keep = pi0 > 0
    values, inv = np.unique(r[keep], return_inverse=True)
    mass = np.bincount(inv, weights=pi0[keep], minlength=values.size)
    mass /= mass.sum()                                                # exact 1 for a single level
    upper = np.concatenate([np.cumsum(mass[::-1])[::-1][1:], [0.0]])   # S_l, exact at the top
    return values, mass, upper, inv, keep


def _level_probs(mass: np.ndarray, upper: np.ndarray, ns: np.ndarray) -> np.ndarray:
    """q_l = F_l^N - F_{l-1}^N for each N (shape (len(ns), L)), in log space."""
    with np.errstate(divide="ignore"):
        log_f = np.log1p(-np.minimum(upper, 1.0))                 # log F_l
        log_f_prev = np.log1p(-np.minimum(upper + mass, 1.0))     # log F_{l-1} (-inf at the bottom)
    nn = ns.astype(np.float64)[:, None]
    top = np.exp(nn * log_f[None, :])                             # F_l^N
    with np.errstate(invalid="ignore"):
        q = top * -np.expm1(nn * (log_f_prev - log_f)[None, :])   # F_l^N (1 - (F_{l-1}/F_l)^N)
    return np.where(np.isfinite(q), q, 0.0)


def best_of_n(pi0, r, n) -> BestOfN:
    r"""Exact KL and reward gain of best-of-N on a finite support (ties grouped).

    Args:
        pi0: shape (K,), base-policy probabilities.
        r: shape (K,), finite rewards (ties allowed).
        n: integer N >= 1, or a 1-D integer array of them.

    Returns:
        :class:`BestOfN` with arrays of shape (M,) (M = 1 for a scalar ``n``). ``N = 1`` and a
        constant reward give KL 0 and gain 0.

    Raises:
        ValueError: on a bad ``pi0``/``r`` or ``n``.

    Source: Beirami et al. (2024) grouped formula; vectorised over N here. Cost O(K log K + M L).
    """
    pi0, r = policy_and_rewards(pi0, r)
    ns, _ = _as_ns(n)
    values, mass, upper, _, _ = _levels(pi0, r)
    q = _level_probs(mass, upper, ns)
    kl = np.maximum(np.sum(special.rel_entr(q, mass[None, :]), axis=1), 0.0)
    vc = values - np.dot(mass, values)                             # centred levels
    gain = q @ vc
    return BestOfN(ns, kl, gain, np.log(ns) - (ns - 1) / ns)


def best_of_n_policy(pi0, r, n: int) -> np.ndarray:
    r"""The best-of-N output distribution :math:`\pi_{\mathrm{BoN}}(y) = \pi_0(y)\,q_{l(y)}/p_{l(y)}`.

    Args:
        pi0: shape (K,). r: shape (K,). n: integer N >= 1.

    Returns:
        float64 array of shape (K,) summing to 1 (zero where ``pi0`` is zero).

    Raises:
        ValueError: on a bad ``pi0``/``r`` or ``n``.

    Source: Beirami et al. (2024), grouped over tied rewards.
    """
    pi0, r = policy_and_rewards(pi0, r)
    n = as_positive_int(n, "n")
    values, mass, upper, inv, keep = _levels(pi0, r)
    q = _level_probs(mass, upper, np.array([n]))[0]
    out = np.zeros_like(pi0)
    out[keep] = pi0[keep] * (q / mass)[inv]
    return out


def sampled_best_of_n(rewards, n: int) -> SampledBestOfN:
    r"""Best-of-N from i.i.d. base-policy samples of a black-box reward.

    The samples are split, in order, into :math:`G = \lfloor M/N \rfloor` disjoint groups; the
    gain is the mean of the group maxima minus the mean of all :math:`M` samples, and its standard
    error that of the group maxima. The KL is the exact grouped formula applied to the empirical
    distribution of the samples (uniform mass :math:`1/M` each), which converges to the true KL as
    :math:`M\to\infty` and never exceeds the bound.

    Args:
        rewards: shape (M,), finite rewards of samples drawn i.i.d. from the base policy.
        n: integer N >= 1 with ``M >= 2 N`` (at least two groups).

    Returns:
        :class:`SampledBestOfN`.

    Raises:
        ValueError: on NaN/inf rewards, ``n < 1`` or fewer than ``2 n`` samples.

    Source: inferred (grouping and plug-in KL); the grouped formula is Beirami et al. (2024).
    """
    r = as_rewards(rewards, "rewards", min_len=2)
    n = as_positive_int(n, "n")
    groups = r.size // n
    if groups < 2:
        raise ValueError(f"need at least 2 groups of n={n} samples (>= {2 * n} rewards), got {r.size}")
    maxima = r[: groups * n].reshape(groups, n).max(axis=1)
    gain = float(maxima.mean() - r.mean())
    se = float(maxima.std(ddof=1) / np.sqrt(groups))
    uniform = np.full(r.size, 1.0 / r.size)
    exact = best_of_n(uniform, r, n)
    return SampledBestOfN(n, gain, se, float(exact.kl[0]), float(exact.kl_bound[0]), groups)
