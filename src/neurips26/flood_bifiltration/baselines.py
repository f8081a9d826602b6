"""1-critical baseline bifiltrations on all N points, as multipers SimplexTreeMulti.

* Delaunay (Alpha) lower-star: simplices of the Alpha complex of X with grades
  (√α(σ), max_{v ∈ σ} f(v)) — the usual 1-critical stand-in for the function-Delaunay
  bifiltration (Alonso et al. 2024), whose exact computation needs the external
  ``function_delaunay`` binary that multipers calls (not available here).
* Rips co-density: the Rips complex of X up to ``max_radius`` with grades
  (diam(σ)/2, max_{v ∈ σ} f(v)), as multipers' ``RipsCodensity`` builds it (that function and the
  gudhi → multipers conversion segfault with gudhi 3.13, so we insert the simplices directly).

Both are inserted with ``insert_batch`` (one call per dimension), never by the crashing
conversion. Source: multipers ``filtrations`` module (definitions); inferred here.
"""

from __future__ import annotations

import numpy as np

from .validation import check_function, check_points, check_positive_float


def _lowerstar_to_multi(st, f: np.ndarray, scale=lambda v: v):
    """Copy a gudhi SimplexTree (filtration = first parameter) into a 1-critical SimplexTreeMulti
    with second parameter the lower-star max of f."""
    import multipers as mp

    by_dim: dict[int, tuple[list, list]] = {}
    for simplex, value in st.get_simplices():
        verts, vals = by_dim.setdefault(len(simplex) - 1, ([], []))
        verts.append(simplex)
        vals.append(value)
    out = mp.SimplexTreeMulti(num_parameters=2)
    for k in sorted(by_dim):
        verts = np.asarray(by_dim[k][0], dtype=np.int32)
        r = scale(np.asarray(by_dim[k][1], dtype=np.float64))
        t = f[verts].max(axis=1)
        out.insert_batch(np.ascontiguousarray(verts.T), np.stack([r, t], axis=1))
    return out


def delaunay_lowerstar_bifiltration(points, f):
    """Alpha-complex lower-star bifiltration (√α, max f) of all points (1-critical).

    Args:
        points: (N, d) float array, d in {2, 3}; f: (N,) finite float array.

    Returns:
        multipers.SimplexTreeMulti (num_parameters=2), radii in the units of X.

    Raises:
        ValueError: bad points or f (see :func:`check_points`, :func:`check_function`).
    """
    import gudhi

    x = check_points(points)
    fv = check_function(f, len(x))
    st = gudhi.AlphaComplex(points=x).create_simplex_tree()
    return _lowerstar_to_multi(st, fv, scale=lambda a: np.sqrt(np.maximum(a, 0.0)))


def rips_codensity_bifiltration(points, f, max_radius: float, max_dimension: int = 2):
    """Rips lower-star bifiltration (diameter/2, max f) of all points up to ``max_radius``.

    Args:
        points: (N, d) float array; f: (N,) floats; max_radius: > 0 (units of X);
        max_dimension: simplices up to this dimension.

    Returns:
        multipers.SimplexTreeMulti (num_parameters=2).

    Raises:
        ValueError: bad points, f or max_radius.
    """
    import gudhi

    x = check_points(points)
    fv = check_function(f, len(x))
    r = check_positive_float(max_radius, "max_radius")
    st = gudhi.RipsComplex(points=x, max_edge_length=2 * r).create_simplex_tree(max_dimension=max_dimension)
    return _lowerstar_to_multi(st, fv, scale=lambda v: v / 2.0)
