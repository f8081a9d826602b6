"""Input checks shared by the alignment-limits modules (scikit-learn style: precise messages).

Every public function of this package validates its inputs here, so a bad value is a
``ValueError`` naming the value and what is allowed — never a silent NaN.
"""

from __future__ import annotations

import warnings

import numpy as np

#: Tolerance on ``sum(pi0) == 1`` (a policy is renormalised within it, refused beyond it).
PROBABILITY_SUM_TOL = 1e-6

#: Rewards larger than this in magnitude are rescaled by a power of two inside the solvers
#: (exact in floating point), so squares and products of rewards never overflow.
_RESCALE_ABOVE = 2.0**256


class UnreliableEstimateWarning(RuntimeWarning):
    """The base-sample estimate rests on too few effective samples to be trusted."""


class BudgetExceedsMaximumWarning(RuntimeWarning):
    """A KL budget is larger than any policy absolutely continuous w.r.t. ``pi0`` can spend."""


def _as_float_array(x, name: str, what: str) -> np.ndarray:
    """``x`` as a float64 array; complex or non-numeric input is a ``ValueError`` (not a silent cast)."""
    try:
        raw = np.asarray(x)
        if np.iscomplexobj(raw):
            raise ValueError(f"{name} must be real {what}, got complex values")
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if "complex" in str(exc) and str(exc).startswith(name):
            raise
        shown = repr(x)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise ValueError(f"{name} must be {what} (real numbers), got {shown}") from None


def as_rewards(r, name: str = "r", *, min_len: int = 1) -> np.ndarray:
    """``r`` as a finite 1-D float64 array of at least ``min_len`` entries.

    Raises:
        ValueError: if ``r`` is not 1-D, too short, complex / non-numeric, or holds NaN/inf.
    """
    arr = _as_float_array(r, name, "a 1-D array of rewards")
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
    p = _as_float_array(pi0, name, "a 1-D probability vector")
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
    b = _as_float_array(beta, name, "a positive number or a 1-D array of them (the KL penalty factor)")
    scalar = b.ndim == 0
    b = np.atleast_1d(b)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"{name} must be a positive number or a non-empty 1-D array, got shape {b.shape}")
    bad = ~(np.isfinite(b) & (b > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and > 0 (the KL penalty factor); got {float(b[i])!r}")
    return b, scalar


def as_positive_float(x, name: str, *, minimum: float = 0.0) -> float:
    """``x`` as a finite float > ``minimum``.

    Raises:
        ValueError: if ``x`` is not a real number, is NaN/inf, or is <= ``minimum``.
    """
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a finite number > {minimum:g}, got {x!r}")
    v = float(x)
    if not (np.isfinite(v) and v > minimum):
        raise ValueError(f"{name} must be a finite number > {minimum:g}, got {x!r}")
    return v


def reward_scale(r: np.ndarray) -> float:
    """A power of two ``s`` with ``max|r| / s`` of order 1 when ``max|r| > 2**256``, else 1.0.

    The KL-regularised quantities depend on rewards only through ``r / beta``, so solving with
    ``(r / s, beta / s)`` and multiplying gains (and betas) back by ``s`` is exact: a power of
    two only shifts the exponent. Huge rewards then never overflow (``r**2``, ``r * w``).
    """
    m = float(np.max(np.abs(r))) if r.size else 0.0
    if not m > _RESCALE_ABOVE:
        return 1.0
    return float(2.0 ** np.floor(np.log2(m)))


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
