r"""A real-data alignment task from scikit-learn's bundled digits (no download).

Outcomes are the 1797 digit images; the base policy is uniform over them. The *true* reward of an
image is a logistic-regression classifier's log-probability of a target class,
:math:`r(y) = \log p_{\mathrm{true}}(c^\star\mid x_y)`, the classifier being fit on all images.
*Proxy* rewards are the same quantity from classifiers fit on small bootstrap samples, so their
errors :math:`e_m = \hat r_m - r` are real, heterogeneous and correlated across the ensemble
(they share the images and the model class) — the case where ensembling helps less than 1/M.

Source: inferred (a real reward with real, correlated proxy errors that ships with scikit-learn);
not from the paper.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import as_positive_int


@dataclass(frozen=True)
class DigitsTask:
    """The digits alignment task.

    Attributes:
        pi0: shape (K,), the base policy (uniform over the K = 1797 images).
        r_true: shape (K,), log-probability of ``target`` under the full-data classifier (nats, <= 0).
        r_proxies: shape (M, K), the same from M classifiers fit on bootstraps of ``n_train`` images.
        target: the target digit class.
        n_train: bootstrap size used for each proxy.
    """

    pi0: np.ndarray
    r_true: np.ndarray
    r_proxies: np.ndarray
    target: int
    n_train: int


def build_digits_task(n_proxies: int, *, n_train: int = 150, target: int = 3, C: float = 1.0,
                      rng: np.random.Generator | None = None) -> DigitsTask:
    r"""Build the digits task with ``n_proxies`` bootstrap proxy rewards.

    Args:
        n_proxies: number M of proxy reward models (>= 1).
        n_train: images per bootstrap fit (>= 20; draws are with replacement and re-drawn
            until every class appears).
        target: target class, 0..9.
        C: inverse L2 regularisation of the logistic regressions (> 0).
        rng: numpy generator for the bootstraps (default: seed 0).

    Returns:
        :class:`DigitsTask`.

    Raises:
        ValueError: on ``n_proxies < 1``, ``n_train < 20``, a target outside 0..9 or ``C <= 0``.

    Source: inferred (our construction); scikit-learn ``load_digits`` and ``LogisticRegression``.
    """
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    n_proxies = as_positive_int(n_proxies, "n_proxies")
    n_train = as_positive_int(n_train, "n_train", 20)
    if isinstance(target, bool) or not isinstance(target, (int, np.integer)) or not 0 <= target <= 9:
        raise ValueError(f"target must be a digit class 0..9, got {target!r}")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0, got {C!r}")
    rng = rng if rng is not None else np.random.default_rng(0)

    X, y = load_digits(return_X_y=True)
    X = X / 16.0                                     # pixel intensities 0..16 -> [0, 1]
    k = X.shape[0]

    def reward_of(fit_idx: np.ndarray) -> np.ndarray:
        clf = LogisticRegression(C=C, max_iter=2000)
        clf.fit(X[fit_idx], y[fit_idx])
        col = int(np.flatnonzero(clf.classes_ == target)[0])
        return clf.predict_log_proba(X)[:, col]

    # one BLAS thread: these fits are tiny, and threaded BLAS on a busy machine is ~50x slower
    with threadpool_limits(limits=1):
        r_true = reward_of(np.arange(k))
        proxies = np.empty((n_proxies, k))
        for m in range(n_proxies):
            while True:
                idx = rng.integers(0, k, size=n_train)
                if np.unique(y[idx]).size == 10:
                    break
            proxies[m] = reward_of(idx)
    return DigitsTask(np.full(k, 1.0 / k), r_true, proxies, int(target), n_train)
