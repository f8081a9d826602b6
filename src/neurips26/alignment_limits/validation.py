"""Input checks shared by the alignment-limits modules (scikit-learn style: precise messages).

Every public function of this package validates its inputs here, so a bad value is a
``ValueError`` naming the value and what is allowed — never a silent NaN.
"""

from __future__ import annotations

import warnings

import numpy as np

#: Tolerance on ``sum(pi0) == 1`` (a policy is renormalised within it, refused beyond it).
PROBABILITY_SUM_TOL = 1e-6


class UnreliableEstimateWarning(RuntimeWarning):
    """The base-sample estimate rests on too few effective samples to be trusted."""


class BudgetExceedsMaximumWarning(RuntimeWarning):
    """A KL budget is larger than any policy absolutely continuous w.r.t. ``pi0`` can spend."""


def as_rewards(r, name: str = "r", *, min_len: int = 1) -> np.ndarray:
    """``r`` as a finite 1-D float64 array of at least ``min_len`` entries.

    Raises:
        ValueError: if ``r`` is not 1-D, too short, or holds NaN/inf.
    """
    arr = np.asarray(r, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of rewards, got shape {arr.shape}")
    if arr.size < min_len:
        raise ValueError(f"{name} must hold at least {min_len} value(s), got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite; {name}[{i}] = {float(arr[i])!r} "
                         f"({int(bad.sum())} non-finite value(s) in total)")
    return arr


def as_policy(pi0, name: str = "pi0") -> np.ndarray:
    """``pi0`` as a 1-D float64 probability vector (non-negative, sum 1 within 1e-6).

    A sum within :data:`PROBABILITY_SUM_TOL` of 1 is renormalised exactly.

    Raises:
        ValueError: if not 1-D, empty, negative, non-finite, or not summing to 1.
    """
    p = np.asarray(pi0, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D probability vector, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} must be finite; it holds {int((~np.isfinite(p)).sum())} NaN/inf value(s)")
    if np.any(p < 0):
        i = int(np.flatnonzero(p < 0)[0])
        raise ValueError(f"{name} must be non-negative; {name}[{i}] = {float(p[i])!r}")
    s = float(p.sum())
    if abs(s - 1.0) > PROBABILITY_SUM_TOL:
        raise ValueError(f"{name} must sum to 1 (within {PROBABILITY_SUM_TOL:g}), got sum {s!r}")
    return p / s


def policy_and_rewards(pi0, r) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(pi0, r)`` of equal length.

    Raises:
        ValueError: from :func:`as_policy` / :func:`as_rewards`, or on a length mismatch.
    """
    p = as_policy(pi0)
    rr = as_rewards(r)
    if p.shape != rr.shape:
        raise ValueError(f"pi0 and r must have the same length, got {p.size} and {rr.size}")
    return p, rr


def as_betas(beta, name: str = "beta") -> tuple[np.ndarray, bool]:
    """``beta`` as a 1-D array of finite positive floats, and whether the input was a scalar.

    Raises:
        ValueError: if any beta is <= 0, NaN or inf, or the array is empty / not 0-D or 1-D.
    """
    b = np.asarray(beta, dtype=np.float64)
    scalar = b.ndim == 0
    b = np.atleast_1d(b)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"{name} must be a positive number or a non-empty 1-D array, got shape {b.shape}")
    bad = ~(np.isfinite(b) & (b > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and > 0 (the KL penalty factor); got {float(b[i])!r}")
    return b, scalar


def as_positive_int(n, name: str, minimum: int = 1) -> int:
    """``n`` as an int >= ``minimum``.

    Raises:
        ValueError: if ``n`` is not an integer or is below ``minimum``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {n!r}")
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {n!r}")
    return int(n)


def warn(message: str, category: type[Warning]) -> None:
    """Issue ``message`` pointing at the caller's caller."""
    warnings.warn(message, category, stacklevel=3)
