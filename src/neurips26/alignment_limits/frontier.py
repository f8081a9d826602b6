r"""The exact KL–reward frontier of KL-regularised alignment on a finite outcome set.

For a base policy :math:`\pi_0` over outcomes :math:`y = 1..K` and a reward :math:`r(y)`, the
KL-regularised problem :math:`\max_\pi \mathbb{E}_\pi[r] - \beta\,\mathrm{KL}(\pi\|\pi_0)` is
solved by the *tilted* policy (Gibbs variational principle)

.. math::  \pi_\beta(y) = \pi_0(y)\, e^{r(y)/\beta} / Z_\beta,\qquad Z_\beta = \mathbb{E}_{\pi_0}[e^{r/\beta}].

Its reward gain :math:`\Delta(\beta) = \mathbb{E}_{\pi_\beta}[r] - \mathbb{E}_{\pi_0}[r]` obeys the
Jeffreys identity (the abstract's first result, in our derivation): since :math:`\log(\pi_\beta/\pi_0) = r/\beta - \log Z_\beta`,

.. math::  J(\pi_\beta,\pi_0) = \mathrm{KL}(\pi_\beta\|\pi_0) + \mathrm{KL}(\pi_0\|\pi_\beta)
           = \Delta(\beta)/\beta \quad\Longrightarrow\quad \Delta(\beta) = \beta\, J(\pi_\beta, \pi_0).

The KL spent, :math:`\kappa(\beta) = \mathrm{KL}(\pi_\beta\|\pi_0) = \mathbb{E}_{\pi_\beta}[r]/\beta - \log Z_\beta`,
decreases monotonically in :math:`\beta`; so the largest gain under a budget
:math:`\mathrm{KL}(\pi\|\pi_0)\le\varepsilon` is :math:`\Delta^*(\varepsilon) = \beta(\varepsilon)\,J(\pi_{\beta(\varepsilon)},\pi_0)`
with :math:`\kappa(\beta(\varepsilon)) = \varepsilon` (Lagrange duality). For small budgets
:math:`\Delta^* \approx \sqrt{2\,\mathrm{Var}_{\pi_0}(r)\,\varepsilon}` — the prior art's
:math:`\sqrt{\mathrm{KL}}` law is only this leading term.

Numerics: everything is computed in log space on rewards centred at :math:`\bar r = \mathbb{E}_{\pi_0} r`,
with :math:`\log Z` from ``logsumexp`` (or ``log1p(E[expm1(x)])`` when every ``|x| < 0.5`` so that the
tiny-tilt regime keeps full relative precision). Outcomes with :math:`\pi_0(y)=0` keep
:math:`\pi_\beta(y)=0` and are ignored.

References:
    Monteiro Paes, Mackraz, Theobald, Danieli (2026), "Theoretical Limits of Language Model
    Alignment", arXiv:2605.07105 — closed form, Jeffreys identity (exact theorem numbering
    unverified; the formulas here are our re-derivation of the abstract's statements).
    Korbak et al. (2022), "RL with KL penalties is better viewed as Bayesian inference".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .validation import (
    BudgetExceedsMaximumWarning,
    as_betas,
    as_policy,
    policy_and_rewards,
    reward_scale,
    warn,
)

# rows x outcomes handled per block when many betas are evaluated at once (bounds memory)
_BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class FrontierPoints:
    r"""Exact (KL, gain) of tilted policies for a set of betas.

    Attributes:
        beta: shape (B,), the KL penalty factors (reward units per nat).
        kl: shape (B,), :math:`\mathrm{KL}(\pi_\beta\|\pi_0)` in nats.
        gain: shape (B,), :math:`\Delta(\beta)` in reward units.
        jeffreys: shape (B,), :math:`J(\pi_\beta,\pi_0)` in nats (computed as ``gain / beta``
            is *not* used here: it is :math:`\sum(\pi_\beta-\pi_0)\log(\pi_\beta/\pi_0)`).
    """

    beta: np.ndarray
    kl: np.ndarray
    gain: np.ndarray
    jeffreys: np.ndarray


@dataclass(frozen=True)
class BudgetSolution:
    r"""The optimal policy under a KL budget, :math:`\max \mathbb{E}_\pi r` s.t. :math:`\mathrm{KL}(\pi\|\pi_0)\le\varepsilon`.

    Attributes:
        epsilon: the budget asked for (nats).
        beta: :math:`\beta(\varepsilon)`; ``inf`` for a zero budget, ``0.0`` when saturated.
        kl: KL actually spent (nats); equals ``epsilon`` unless saturated.
        gain: the maximal gain :math:`\Delta^*(\varepsilon)` (reward units).
        jeffreys: :math:`J(\pi_{\beta},\pi_0)` (nats); ``inf`` when saturated on a strict subset.
        saturated: True when ``epsilon`` >= the attainable maximum KL, :math:`-\log\pi_0(\arg\max r)`;
            the solution is then :math:`\pi_0` restricted to the reward's argmax set.
    """

    epsilon: float
    beta: float
    kl: float
    gain: float
    jeffreys: float
    saturated: bool


def _support(pi0: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(log pi0, r - rbar) on the support of pi0, and rbar = E_pi0[r] (exact zeros if r is constant)."""
    keep = pi0 > 0
    p, rr = pi0[keep], r[keep]
    rbar = float(np.dot(p, rr))
    rc = rr - rbar if np.ptp(rr) > 0 else np.zeros_like(rr)
    return np.log(p), rc, rbar


def _tilt_block(log_p: np.ndarray, rc: np.ndarray, beta: np.ndarray):
    r"""log(pi_beta / pi0) and pi_beta for a block of betas (shapes (B, K)).

    With :math:`x = (r - \bar r)/\beta`: rows whose tilt is tiny (all :math:`|x| < 0.5`) use
    :math:`\log Z = \mathrm{log1p}(\sum \pi_0\,\mathrm{expm1}(x))` (full relative precision);
    the others shift :math:`x` by its maximum first, so the log-ratios of the likely outcomes are
    O(1) numbers even when :math:`x` is huge (no cancellation, no overflow).
    """
    top = rc == rc.max()
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        x = rc[None, :] / beta[:, None]                                  # may be +-inf for a tiny beta
        # shift before dividing (never inf - inf); an overflow gives -inf: pi_beta = 0 there exactly.
        # The maxima get exactly 0, also when beta underflowed to 0 after rescaling huge rewards
        # (the beta -> 0+ limit: all mass on argmax r, never 0/0 = NaN).
        shifted = np.where(top[None, :], 0.0, (rc - rc.max())[None, :] / beta[:, None])
    small = np.max(np.abs(x), axis=1) < 0.5
    xs = np.where(small[:, None], x, shifted)
    log_z = special.logsumexp(log_p[None, :] + xs, axis=1)
    if small.any():
        log_z[small] = np.log1p(np.expm1(x[small]) @ np.exp(log_p))
    log_ratio = xs - log_z[:, None]
    return log_ratio, np.exp(log_p[None, :] + log_ratio)


def _blocks(n_beta: int, k: int):
    step = max(1, _BLOCK_ELEMENTS // max(k, 1))
    for s in range(0, n_beta, step):
        yield slice(s, min(n_beta, s + step))


def tilted_policy(pi0, r, beta) -> np.ndarray:
    r"""The KL-optimal policy :math:`\pi_\beta(y) = \pi_0(y) e^{r(y)/\beta} / Z_\beta`.

    Args:
        pi0: shape (K,), base-policy probabilities (non-negative, summing to 1).
        r: shape (K,), finite rewards.
        beta: KL penalty factor > 0 (reward units per nat), a scalar or shape (B,).

    Returns:
        float64 array of shape (K,) for a scalar ``beta``, else (B, K); rows sum to 1.
        Outcomes with ``pi0 == 0`` get probability 0.

    Raises:
        ValueError: on a bad ``pi0``, ``r`` (NaN/inf, length mismatch) or ``beta <= 0``.

    Source: abstract (the optimal KL-regularised policy; Gibbs variational principle).
    """
    pi0, r = policy_and_rewards(pi0, r)
    betas, scalar = as_betas(beta)
    scale = reward_scale(r)              # 1.0 unless |r| > 2**256: pi_beta depends on r/beta only
    r, betas = r / scale, betas / scale
    keep = pi0 > 0
    log_p, rc, _ = _support(pi0, r)
    out = np.zeros((betas.size, pi0.size))
    for sl in _blocks(betas.size, log_p.size):
        out[sl, keep] = _tilt_block(log_p, rc, betas[sl])[1]
    return out[0] if scalar else out


def kl_divergence(p, q) -> float:
    r""":math:`\mathrm{KL}(p\|q) = \sum_y p(y)\log(p(y)/q(y))` in nats (``inf`` if p is not ≪ q).

    Args:
        p, q: shape (K,), probability vectors.

    Raises:
        ValueError: if either is not a probability vector or their lengths differ.

    Source: standard; ``scipy.special.rel_entr``.
    """
    p, q = as_policy(p, "p"), as_policy(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    return float(np.sum(special.rel_entr(p, q)))


def jeffreys_divergence(p, q) -> float:
    r"""Jeffreys divergence :math:`J(p,q) = \mathrm{KL}(p\|q) + \mathrm{KL}(q\|p)` in nats.

    Raises:
        ValueError: as :func:`kl_divergence`.

    Source: Jeffreys (1946); the paper's first result writes the optimal gain with it.
    """
    return kl_divergence(p, q) + kl_divergence(q, p)


def tilted_frontier(pi0, r, beta) -> FrontierPoints:
    r"""Exact KL, reward gain and Jeffreys divergence of :math:`\pi_\beta` for many betas at once.

    .. math::  \kappa(\beta) = \mathbb{E}_{\pi_\beta}[x] - \log\mathbb{E}_{\pi_0}[e^{x}],\quad
               \Delta(\beta) = \beta\,\mathbb{E}_{\pi_\beta}[x],\quad x = (r - \bar r)/\beta.

    Args:
        pi0: shape (K,), base probabilities.
        r: shape (K,), finite rewards.
        beta: scalar or shape (B,), each > 0.

    Returns:
        :class:`FrontierPoints` with arrays of shape (B,) (B = 1 for a scalar beta).
        A constant reward gives exactly zero KL, gain and Jeffreys (never NaN).

    Raises:
        ValueError: on a bad ``pi0``, ``r`` or ``beta``.

    Source: abstract (closed form governed by a Jeffreys divergence), computed in log space.
    """
    pi0, r = policy_and_rewards(pi0, r)
    betas_in, _ = as_betas(beta)
    scale = reward_scale(r)              # 1.0 unless |r| > 2**256 (then exact power-of-two rescaling)
    r, betas = r / scale, betas_in / scale
    log_p, rc, _ = _support(pi0, r)
    kl = np.zeros(betas.size)
    gain = np.zeros(betas.size)
    jeff = np.zeros(betas.size)
    if np.ptp(rc) == 0.0:  # constant reward: pi_beta = pi0 exactly
        return FrontierPoints(betas_in, kl, gain, jeff)
    p = np.exp(log_p)
    for sl in _blocks(betas.size, log_p.size):
        log_ratio, pb = _tilt_block(log_p, rc, betas[sl])
        with np.errstate(invalid="ignore"):                               # 0 * -inf where pi_beta = 0
            kl[sl] = np.maximum(np.sum(np.where(pb > 0, pb * log_ratio, 0.0), axis=1), 0.0)  # KL(pi_beta||pi0)
        gain[sl] = pb @ rc                                                # E_pb[r] - E_p0[r]
        jeff[sl] = np.maximum(np.sum((pb - p[None, :]) * log_ratio, axis=1), 0.0)  # J, directly
    return FrontierPoints(betas_in, kl, gain * scale, jeff)


def max_attainable_kl(pi0, r) -> float:
    r"""The largest KL a tilted policy can spend: :math:`-\log \pi_0(\{y: r(y) = \max r\})` (nats).

    Any budget at or above it is slack: the best policy is :math:`\pi_0` restricted to the argmax set.

    Raises:
        ValueError: on a bad ``pi0`` or ``r``.

    Source: inferred (limits on a finite support: all mass on the best outcomes).
    """
    pi0, r = policy_and_rewards(pi0, r)
    keep = pi0 > 0
    top = r[keep].max()
    return max(float(-np.log(pi0[keep][r[keep] == top].sum())), 0.0) + 0.0   # + 0.0: never -0.0


def max_attainable_gain(pi0, r) -> float:
    r"""The largest gain any policy ≪ :math:`\pi_0` can reach: :math:`\max_{\pi_0>0} r - \mathbb{E}_{\pi_0} r`.

    Raises:
        ValueError: on a bad ``pi0`` or ``r``.

    Source: inferred (:math:`\Delta^* \le \max r - \mathbb{E}_{\pi_0} r` on a finite support).
    """
    pi0, r = policy_and_rewards(pi0, r)
    scale = reward_scale(r)
    _, rc, _ = _support(pi0, r / scale)
    return float(rc.max()) * scale


def beta_for_budget(pi0, r, epsilon: float) -> float:
    r"""Solve :math:`\kappa(\beta) = \mathrm{KL}(\pi_\beta\|\pi_0) = \varepsilon` for :math:`\beta`.

    :math:`\kappa` is monotone decreasing, so the root is bracketed and found by Brent's method
    on :math:`u = \log\beta` against :math:`\log\kappa(e^u) - \log\varepsilon` (relative accuracy
    ~1e-13 even for tiny budgets).

    Args:
        pi0: shape (K,), base probabilities. r: shape (K,), finite rewards.
        epsilon: KL budget in nats, >= 0.

    Returns:
        beta > 0; ``inf`` for ``epsilon == 0``; ``0.0`` (with a
        :class:`BudgetExceedsMaximumWarning`) when ``epsilon >= max_attainable_kl``.

    Raises:
        ValueError: if ``epsilon`` is negative or not finite, or on a bad ``pi0``/``r``.

    Source: abstract (closed-form gain for a fixed KL budget); solver choice inferred.
    """
    return max_reward_gain(pi0, r, epsilon).beta


def max_reward_gain(pi0, r, epsilon: float) -> BudgetSolution:
    r"""Closed-form maximal reward gain under a KL budget, :math:`\Delta^*(\varepsilon) = \beta(\varepsilon)\,J(\pi_{\beta(\varepsilon)},\pi_0)`.

    Args:
        pi0: shape (K,), base-policy probabilities.
        r: shape (K,), finite rewards (any scale: everything is in log space, no overflow).
        epsilon: KL budget in nats, >= 0 (finite).

    Returns:
        :class:`BudgetSolution`. A budget at or above the attainable maximum returns the
        maximum (``saturated=True``) with a :class:`BudgetExceedsMaximumWarning`; a zero budget
        or a constant reward returns gain 0.

    Raises:
        ValueError: if ``epsilon < 0`` or not finite, or on a bad ``pi0``/``r``.

    Source: abstract, first result (closed form governed by a Jeffreys divergence).
    """
    pi0, r = policy_and_rewards(pi0, r)
    try:
        if isinstance(epsilon, (bool, np.bool_)) or np.ndim(epsilon) != 0:
            raise TypeError                   # one budget per call (a bool is not a budget)
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a finite number >= 0 (a KL budget in nats), got {epsilon!r}") from None
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"epsilon must be a finite number >= 0 (a KL budget in nats), got {epsilon!r}")
    # huge rewards: solve on r / scale (an exact power of two); beta and gain scale back linearly
    scale = reward_scale(r)
    r = r / scale
    kl_max = max_attainable_kl(pi0, r)
    if eps == 0.0:
        return BudgetSolution(eps, math.inf, 0.0, 0.0, 0.0, False)
    if eps >= kl_max:
        warn(f"KL budget epsilon={eps:g} is at or beyond the attainable maximum {kl_max:g} nats "
             f"(-log pi0(argmax r)); returning the maximal gain", BudgetExceedsMaximumWarning)
        gain = max_attainable_gain(pi0, r) * scale
        return BudgetSolution(eps, 0.0, kl_max, gain, math.inf if kl_max > 0 else 0.0, True)

    log_p, rc, _ = _support(pi0, r)
    var = float(np.dot(np.exp(log_p), rc**2))
    spread = float(np.ptp(rc))

    def log_kappa_minus(u: float) -> float:
        fp = tilted_frontier(pi0, r, math.exp(u))
        return math.log(max(float(fp.kl[0]), 1e-300)) - math.log(eps)

    # small-budget scale beta ~ sqrt(Var / (2 eps)); expand the bracket geometrically
    u_hi = math.log(max(math.sqrt(var / (2 * eps)), spread, 1e-300)) + 1.0
    while log_kappa_minus(u_hi) > 0:
        u_hi += 2.0
    u_lo = u_hi - 2.0
    floor = math.log(spread) - 700.0
    while log_kappa_minus(u_lo) < 0:
        u_lo -= 2.0
        if u_lo < floor:  # budget within rounding of kl_max: treat as saturated
            warn(f"KL budget epsilon={eps:g} is within rounding of the attainable maximum "
                 f"{kl_max:g} nats; returning the maximal gain", BudgetExceedsMaximumWarning)
            return BudgetSolution(eps, 0.0, kl_max, max_attainable_gain(pi0, r) * scale, math.inf, True)
    u = optimize.brentq(log_kappa_minus, u_lo, u_hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    beta = math.exp(u)
    fp = tilted_frontier(pi0, r, beta)
    return BudgetSolution(eps, beta * scale, float(fp.kl[0]), float(fp.gain[0]) * scale,
                          float(fp.jeffreys[0]), False)


def sqrt_kl_approximation(pi0, r, epsilon) -> np.ndarray:
    r"""The prior art's leading-order law :math:`\Delta \approx \sqrt{2\,\mathrm{Var}_{\pi_0}(r)\,\varepsilon}`.

    Args:
        pi0, r: shape (K,). epsilon: scalar or array of budgets (nats), >= 0.

    Returns:
        array shaped like ``epsilon`` (reward units).

    Raises:
        ValueError: on a bad ``pi0``/``r`` or a negative / non-finite budget.

    Source: Gao et al. (2023); Mroueh (2024); the paper contrasts it with the Jeffreys form.
    """
    pi0, r = policy_and_rewards(pi0, r)
    eps = np.asarray(epsilon, dtype=np.float64)
    if not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    _, rc, _ = _support(pi0, r)
    var = float(np.dot(pi0[pi0 > 0], rc**2))
    return np.sqrt(2.0 * var * eps)
