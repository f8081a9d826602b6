"""Activation cells: the common refinement, inside a box, of the linear regions of one or more
three-layer ReLU networks. On each cell every network is affine, ``f(x) = J x + o``.

Construction (inferred; standard for piecewise-linear networks): split the box by every
first-layer hyperplane ``{w_i·x + b_i = 0}`` of every network; inside each resulting cell the
first-layer pattern ``D1`` is fixed, so every second-layer pre-activation is affine,
``z2 = W2 D1 (W1 x + b1) + b2``, and the cell is split again by those "bent" hyperplanes. A split
keeps a side when its Chebyshev ball (largest inscribed ball, one LP) has radius > ``eps``.

Cost: at most ``Σ_{k ≤ n0} C(m, k)`` cells for ``m`` hyperplanes — polynomial in the widths for
fixed input dimension ``n0`` but exponential in ``n0``; ``max_cells`` guards it.

References:
    Boyd & Vandenberghe (2004), Convex Optimization, Chebyshev center of a polyhedron.
    Zaslavsky (1975), counting regions of hyperplane arrangements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog

from .network import Box, ReluNet3

__all__ = ["Cell", "CellBudgetExceeded", "activation_cells", "affine_on_cell", "chebyshev_center"]


class CellBudgetExceeded(RuntimeError):
    """More cells than ``max_cells``: the enumeration stopped (never a silent truncation)."""


@dataclass
class Cell:
    """One full-dimensional cell ``{x : A x ≤ b}`` of the refinement.

    Attributes:
        A, b: inequality constraints (box plus the sides of the splitting hyperplanes).
        center, radius: Chebyshev center and radius (an interior point at distance ``radius``
            from every facet).
        patterns: per network, ``(D1 [n1] bool, D2 [n2] bool)`` activation patterns on the cell.
    """

    A: np.ndarray
    b: np.ndarray
    center: np.ndarray
    radius: float
    patterns: list = field(default_factory=list)


def chebyshev_center(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """Largest ball inside ``{x : A x ≤ b}``: ``max r s.t. A x + ‖A_i‖ r ≤ b`` (one LP, HiGHS).

    Returns ``(center [n], radius)``; radius ``-inf`` when the polyhedron is empty.
    """
    n = A.shape[1]
    norms = np.linalg.norm(A, axis=1)
    res = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.c_[A, norms], b_ub=b,
                  bounds=[(None, None)] * n + [(0, None)], method="highs")
    if res.status != 0:
        return np.full(n, np.nan), -np.inf
    return res.x[:n], float(res.x[n])


def _dedupe(rows: np.ndarray, offs: np.ndarray, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Drop zero rows and hyperplanes equal (up to sign and positive scale) to an earlier one."""
    keep_r, keep_o, seen = [], [], []
    for a, c in zip(rows, offs):
        nrm = np.linalg.norm(a)
        if nrm == 0:
            continue
        key = np.r_[a, c] / nrm
        k = int(np.argmax(np.abs(key[:-1]) > 0))
        key = key * np.sign(key[k])
        if any(np.max(np.abs(key - s)) <= tol for s in seen):
            continue
        seen.append(key)
        keep_r.append(a)
        keep_o.append(c)
    n = rows.shape[1]
    return np.asarray(keep_r).reshape(-1, n), np.asarray(keep_o)


def _split(cells: list[Cell], rows: np.ndarray, offs: np.ndarray, eps: float, stats: dict,
           max_cells: int) -> list[Cell]:
    for a, c in zip(rows, offs):
        out = []
        for cell in cells:
            sides = []
            for sgn in (1.0, -1.0):  # sgn·(a·x + c) <= 0
                A = np.vstack([cell.A, sgn * a])
                b = np.r_[cell.b, -sgn * c]
                ctr, r = chebyshev_center(A, b)
                stats["lps"] += 1
                if r > eps:
                    sides.append(Cell(A, b, ctr, r))
                elif r > 0:
                    stats["slivers"] += 1
                    stats["min_sliver"] = min(stats["min_sliver"], r)
            if len(sides) == 2:
                out += sides
            else:
                out.append(cell)
            if len(out) > max_cells:
                raise CellBudgetExceeded(f"more than max_cells = {max_cells} activation cells")
        cells = out
    return cells


def activation_cells(net: ReluNet3, box: Box, others=(), *, eps: float = 1e-9, max_cells: int = 20000,
                     stats: dict | None = None) -> list[Cell]:
    """The common refinement of the linear regions of ``net`` and ``others`` inside ``box``.

    Args:
        net, others: networks with the box's input dimension.
        eps: minimum Chebyshev radius of a kept cell, in the box's units. Thinner pieces
            ("slivers") are counted in ``stats`` — they mean a near-degenerate arrangement.
        max_cells: budget; exceeded → :class:`CellBudgetExceeded`.
        stats: optional dict that receives ``lps`` (LPs solved), ``slivers``, ``min_sliver``.

    Returns:
        list of :class:`Cell`, each with ``patterns[k] = (D1, D2)`` for network ``k``
        (``net`` first).

    Raises:
        ValueError: a network's input width differs from the box's dimension.
        CellBudgetExceeded: more than ``max_cells`` cells.
    """
    nets = [net, *others]
    for m in nets:
        box.check(m)
    st = {"lps": 0, "slivers": 0, "min_sliver": np.inf}
    n0 = box.dim
    A0 = np.vstack([np.eye(n0), -np.eye(n0)])
    b0 = np.r_[box.high, -box.low]
    ctr, r = chebyshev_center(A0, b0)
    cells = [Cell(A0, b0, ctr, r)]
    rows, offs = _dedupe(np.vstack([m.W1 for m in nets]), np.concatenate([m.b1 for m in nets]))
    cells = _split(cells, rows, offs, eps, st, max_cells)
    refined = []
    for cell in cells:
        r2, o2 = [], []
        for m in nets:
            D1 = (m.W1 @ cell.center + m.b1) > 0
            r2.append(m.W2 @ (D1[:, None] * m.W1))
            o2.append(m.W2 @ (D1 * m.b1) + m.b2)
        rr, oo = _dedupe(np.vstack(r2), np.concatenate(o2))
        refined += _split([cell], rr, oo, eps, st, max_cells)
        if len(refined) > max_cells:
            raise CellBudgetExceeded(f"more than max_cells = {max_cells} activation cells")
    for cell in refined:
        cell.patterns = []
        for m in nets:
            z1 = m.W1 @ cell.center + m.b1
            z2 = m.W2 @ np.maximum(z1, 0) + m.b2
            cell.patterns.append((z1 > 0, z2 > 0))
    if stats is not None:
        stats.update(st)
    return refined


def affine_on_cell(net: ReluNet3, D1: np.ndarray, D2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(J [n3, n0], o [n3])`` with ``f(x) = J x + o`` on a cell with patterns ``D1, D2``:
    ``J = W3 D2 W2 D1 W1``, ``o = W3 D2 (W2 D1 b1 + b2) + b3``."""
    M2 = net.W3 * D2[None, :]
    M1 = net.W2 * D1[None, :]
    return M2 @ M1 @ net.W1, M2 @ (M1 @ net.b1 + net.b2) + net.b3
