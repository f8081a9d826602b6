r"""Proxy rewards: the reward-hacking gap and reward ensembles.

Aligning to a proxy :math:`\hat r = r + e` instead of the true reward :math:`r` gives the tilted
policy :math:`\hat\pi_\beta \propto \pi_0 e^{\hat r/\beta}`. The gap between ideal and proxy
alignment, measured in the *true* reward, is

.. math::  G(\beta) = \mathbb{E}_{\pi_\beta}[r] - \mathbb{E}_{\hat\pi_\beta}[r].

It is usually positive (:math:`\pi_\beta` maximises :math:`\mathbb{E}_\pi r - \beta\,\mathrm{KL}`), but
not always: :math:`\hat\pi_\beta` may spend more KL than :math:`\pi_\beta` and so earn more true
reward. The paper shows :math:`G` grows as the KL penalty :math:`\beta` falls and as the error
:math:`e` grows (for errors unrelated to the reward; see the digits task for a counter-case).

An ensemble of :math:`M` proxies :math:`\bar r_M = \frac1M\sum_m \hat r_m` has error
:math:`\bar e_M = \frac1M\sum_m e_m`; with independent, equal-variance errors its variance is
:math:`\sigma^2/M`, so the gap shrinks. Correlated errors limit the benefit; we report the
effective ensemble size

.. math::  M_{\mathrm{eff}} = \frac{\frac1M\sum_m \mathrm{Var}(e_m)}{\mathrm{Var}(\bar e_M)}
           = \frac{M}{1 + (M-1)\bar\rho}\quad\text{(equal variances, mean correlation }\bar\rho),

with variances taken under :math:`\pi_0` over outcomes: :math:`M_{\mathrm{eff}}=M` for
independent errors, :math:`1` for perfectly correlated ones.

References:
    Monteiro Paes et al. (2026), arXiv:2605.07105 — proxy gap and ensembling results.
    Coste et al. (2024); Eisenstein et al. (2023) — reward-model ensembles in practice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .frontier import tilted_policy
from .validation import as_betas, as_policy, as_rewards, policy_and_rewards


@dataclass(frozen=True)
class ProxyGap:
    """Ideal vs proxy alignment at a set of betas, all measured in the true reward.

    Attributes:
        beta: shape (B,).
        ideal_gain: shape (B,), E_{pi_beta}[r] - E_{pi0}[r] (aligned to the true reward).
        proxy_gain: shape (B,), E_{hat pi_beta}[r] - E_{pi0}[r] (aligned to the proxy).
        gap: shape (B,), ``ideal_gain - proxy_gain`` (usually, not always, >= 0).
    """

    beta: np.ndarray
    ideal_gain: np.ndarray
    proxy_gain: np.ndarray
    gap: np.ndarray


def _as_reward_matrix(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty (M, K) array (M reward models, K outcomes), "
                         f"got shape {np.shape(x)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it holds {int((~np.isfinite(arr)).sum())} NaN/inf value(s)")
    return arr


def proxy_gap(pi0, r_true, r_proxy, beta) -> ProxyGap:
    r"""The reward-hacking gap :math:`G(\beta) = \mathbb{E}_{\pi_\beta}[r] - \mathbb{E}_{\hat\pi_\beta}[r]`.

    Args:
        pi0: shape (K,), base probabilities.
        r_true: shape (K,), the true reward.
        r_proxy: shape (K,), the proxy the policy is aligned to (e.g. an ensemble mean).
        beta: scalar or shape (B,), each > 0.

    Returns:
        :class:`ProxyGap` with arrays of shape (B,).

    Raises:
        ValueError: on NaN/inf, mismatched lengths, a bad ``pi0`` or ``beta <= 0``.

    Source: abstract (proxy reward setting); exact on a finite support.
    """
    pi0, r = policy_and_rewards(pi0, r_true)
    rp = as_rewards(r_proxy, "r_proxy")
    if rp.size != r.size:
        raise ValueError(f"r_proxy must have the same length as r_true, got {rp.size} and {r.size}")
    betas, _ = as_betas(beta)
    rc = r - np.dot(pi0, r)
    ideal = np.atleast_2d(tilted_policy(pi0, r, betas)) @ rc
    proxy = np.atleast_2d(tilted_policy(pi0, rp, betas)) @ rc
    return ProxyGap(betas, ideal, proxy, ideal - proxy)


def ensemble_reward(r_proxies) -> np.ndarray:
    r"""The ensemble reward :math:`\bar r_M = \frac1M \sum_m \hat r_m`.

    Args:
        r_proxies: shape (M, K), M proxy rewards over K outcomes (a 1-D array is M = 1).

    Returns:
        float64 array of shape (K,).

    Raises:
        ValueError: on a wrong shape or NaN/inf.

    Source: abstract (reward ensembling); mean aggregation.
    """
    return _as_reward_matrix(r_proxies, "r_proxies").mean(axis=0)


def effective_ensemble_size(errors, pi0=None) -> float:
    r"""Effective number of independent reward models, :math:`M_{\mathrm{eff}} = \overline{\mathrm{Var}(e_m)} / \mathrm{Var}(\bar e_M)`.

    Args:
        errors: shape (M, K), reward errors :math:`e_m = \hat r_m - r` of M models on K outcomes.
        pi0: optional shape (K,), the weights of the outcomes (default uniform).

    Returns:
        a float, ``M`` for uncorrelated errors and 1 for identical ones; above ``M`` for negatively
        correlated errors, and ``inf`` when they cancel exactly in the mean (the ensemble has no
        error left). ``nan`` is never returned — all-zero errors give ``float(M)``.

    Raises:
        ValueError: on a wrong shape, NaN/inf, or a ``pi0`` of the wrong length.

    Source: inferred (with correlated errors the ensemble is worth fewer than M independent proxies).
    """
    e = _as_reward_matrix(errors, "errors")
    m, k = e.shape
    w = np.full(k, 1.0 / k) if pi0 is None else as_policy(pi0)
    if w.size != k:
        raise ValueError(f"pi0 must have one entry per outcome ({k}), got {w.size}")
    ec = e - (e @ w)[:, None]
    cov = (ec * w[None, :]) @ ec.T                  # (M, M) error covariance under pi0
    mean_var = float(np.trace(cov)) / m
    var_mean = float(cov.sum()) / m**2
    if mean_var == 0.0:
        return float(m)
    # errors that cancel in the mean: no error variance left, infinitely many effective models
    if var_mean <= 1e-12 * mean_var:
        return float("inf")
    return mean_var / var_mean
