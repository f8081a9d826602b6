"""Input validation shared by the sublevel Flood modules (scikit-learn style precise messages)."""

from __future__ import annotations

import numpy as np

ALLOWED_DIMENSIONS = (2, 3)


def _as_real_array(values, name: str) -> np.ndarray:
    """``values`` as a float64 array; complex or non-numeric input is an error (never cast silently)."""
    raw = np.asarray(values)
    if np.iscomplexobj(raw):
        raise ValueError(f"{name} must be real-valued; got complex dtype {raw.dtype}")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got dtype {raw.dtype} that does not convert to float") from None


def check_points(points, *, name: str = "points") -> np.ndarray:
    """Return ``points`` as a C-contiguous float64 array of shape (N, d), d in {2, 3}.

    Raises:
        ValueError: if ``points`` is complex or non-numeric, not 2-D, has d not in {2, 3}, is empty, or holds NaN/inf.
    """
    x = _as_real_array(points, name)
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (N, d); got an array of shape {x.shape}")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty (shape {x.shape}); need at least d + 1 points")
    if x.shape[1] not in ALLOWED_DIMENSIONS:
        raise ValueError(f"{name} has dimension d={x.shape[1]}; the sublevel Flood bifiltration supports "
                         f"d in {ALLOWED_DIMENSIONS} (Delaunay grids grow as C(n+d, d))")
    bad = ~np.isfinite(x)
    if bad.any():
        row = int(np.argwhere(bad)[0, 0])
        raise ValueError(f"{name} contains NaN or inf ({int(bad.any(axis=1).sum())} rows, first at row {row}); "
                         "remove or impute them first")
    return np.ascontiguousarray(x)


def check_function(f, n_points: int, *, name: str = "f") -> np.ndarray:
    """Return ``f`` as a float64 vector of length ``n_points``.

    Raises:
        ValueError: if ``f`` is complex or non-numeric, not 1-D, its length is not ``n_points``, or it holds NaN/inf.
    """
    v = _as_real_array(f, name)
    if v.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of length N={n_points}; got shape {v.shape}")
    if v.shape[0] != n_points:
        raise ValueError(f"len({name})={v.shape[0]} does not match the number of points N={n_points}")
    bad = ~np.isfinite(v)
    if bad.any():
        raise ValueError(f"{name} contains {int(bad.sum())} NaN/inf values (first at index "
                         f"{int(np.argwhere(bad)[0, 0])}); the sublevel function must be finite")
    return v


def check_positive_int(value, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``.

    Raises:
        ValueError: if it is not an integer or is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    return int(value)


def check_positive_float(value, name: str) -> float:
    """Return ``value`` as a finite float > 0.

    Raises:
        ValueError: if it is not a finite positive number.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive finite number; got {value!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}")
    return v
