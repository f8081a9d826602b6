"""Functional dimension and fiber dimension at a parameter.

``dim_fun(θ) = rank J(θ)`` with ``J = ∂(f_θ(x_1), …, f_θ(x_M)) / ∂θ`` (shape ``[M·n3, P]``) at
sample points kept away from every kink, and ``dim fiber(θ) = P − dim_fun(θ)`` (the local
dimension of ``{θ′ : f_θ′ = f_θ}`` on the sampled domain, at a generic θ). The Jacobian is
analytic (backpropagation written out); finite differences across kinks give spurious ranks.

Back-propagation (per point, ``D_l = diag 1[z_l > 0]``)::

    ∂f/∂b3 = I,            ∂f/∂W3[k, j] = e_k h2_j
    δ2 = W3 D2   [n3, n2]:  ∂f/∂b2 = δ2,  ∂f/∂W2[j, i] = δ2[:, j] h1_i
    δ1 = δ2 W2 D1 [n3, n1]: ∂f/∂b1 = δ1,  ∂f/∂W1[i, l] = δ1[:, i] x_l

Rank: float SVD with the threshold ``rtol · σ_max`` (``numerical_rank``), or exact over the
rationals with sympy's ``DomainMatrix`` on the row-scaled integer matrix (``exact_rank``; python-flint's ``fmpq_mat`` when
installed). ``Matrix.rank`` is not used: it is orders of magnitude slower.

Source: fiber dimension as ``#params − rank`` is the standard notion (Grigsby, Lindsey, Meyerhoff,
Wu 2022, functional dimension); the counts predicted at bottleneck parameters are our derivation.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .network import Box, ReluNet3

__all__ = ["jacobian", "exact_jacobian", "kink_margin", "sample_away_from_kinks", "numerical_rank", "exact_rank",
           "FiberDimension", "fiber_dimension", "stratum"]


def jacobian(net: ReluNet3, X) -> np.ndarray:
    """Analytic Jacobian of ``θ ↦ (f_θ(x_1), …, f_θ(x_M))``, shape ``[M·n3, P]`` (rows ordered
    point-major, columns as :meth:`ReluNet3.flat`), float64."""
    X = net._inputs(X)
    M = len(X)
    n0, n1, n2, n3 = net.architecture
    z1 = X @ net.W1.T + net.b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ net.W2.T + net.b2
    h2 = np.maximum(z2, 0)
    D1, D2 = (z1 > 0).astype(float), (z2 > 0).astype(float)
    d2 = net.W3[None, :, :] * D2[:, None, :]                     # [M, n3, n2]
    d1 = np.einsum("mkj,ji->mki", d2, net.W2) * D1[:, None, :]   # [M, n3, n1]
    eye = np.broadcast_to(np.eye(n3), (M, n3, n3))
    blocks = [np.einsum("mki,ml->mkil", d1, X).reshape(M, n3, n1 * n0), d1,
              np.einsum("mkj,mi->mkji", d2, h1).reshape(M, n3, n2 * n1), d2,
              np.einsum("kq,mj->mkqj", np.eye(n3), h2).reshape(M, n3, n3 * n2), eye]
    return np.concatenate(blocks, axis=2).reshape(M * n3, -1)


def exact_jacobian(net: ReluNet3, X) -> list[list[Fraction]]:
    """The same Jacobian in exact rational arithmetic (every float64 is a dyadic rational), as a
    list of rows of :class:`fractions.Fraction`. Activation patterns are decided exactly too.

    Cost ``O(M · P · n)`` Fraction operations: for small networks (a few hundred rows).
    """
    X = net._inputs(X)
    n0, n1, n2, n3 = net.architecture
    F = lambda a: [[Fraction(v) for v in row] for row in np.atleast_2d(a).tolist()]  # noqa: E731
    W1, W2, W3 = F(net.W1), F(net.W2) if n1 else [[] for _ in range(n2)], F(net.W3) if n2 else [[] for _ in range(n3)]
    b1, b2 = [Fraction(v) for v in net.b1.tolist()], [Fraction(v) for v in net.b2.tolist()]
    rows = []
    for x in X.tolist():
        x = [Fraction(v) for v in x]
        z1 = [sum((w * xi for w, xi in zip(W1[i], x)), b1[i]) for i in range(n1)]
        h1 = [max(z, Fraction(0)) for z in z1]
        z2 = [sum((w * h for w, h in zip(W2[j], h1)), b2[j]) for j in range(n2)]
        h2 = [max(z, Fraction(0)) for z in z2]
        for k in range(n3):
            d2 = [W3[k][j] if z2[j] > 0 else Fraction(0) for j in range(n2)]
            d1 = [sum((d2[j] * W2[j][i] for j in range(n2)), Fraction(0)) if z1[i] > 0 else Fraction(0)
                  for i in range(n1)]
            row = [d1[i] * x[l] for i in range(n1) for l in range(n0)] + d1
            row += [d2[j] * h1[i] for j in range(n2) for i in range(n1)] + d2
            row += [h2[j] if q == k else Fraction(0) for q in range(n3) for j in range(n2)]
            row += [Fraction(1) if q == k else Fraction(0) for q in range(n3)]
            rows.append(row)
    return rows


def kink_margin(net: ReluNet3, X) -> np.ndarray:
    """Per point, the smallest distance (in input units, first order) to a kink of any unit:
    ``min_i |z1_i| / ‖w_i‖`` and ``min_j |z2_j| / ‖∇_x z2_j‖`` (shape ``[M]``)."""
    X = net._inputs(X)
    z1, z2 = net.pre_activations(X)
    n1w = np.linalg.norm(net.W1, axis=1)
    # a unit whose pre-activation does not vary with x (zero row, or all its inputs off) has
    # no kink there: margin ∞, not 0 (else whole regions, e.g. {t < 0} of a width-1 layer, are
    # never sampled and the rank misses their affine piece)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = np.where(n1w > 0, np.abs(z1) / n1w, np.inf)
    D1 = (z1 > 0).astype(float)
    grad2 = np.einsum("ji,mi,il->mjl", net.W2, D1, net.W1)       # ∇_x z2_j per point
    g = np.linalg.norm(grad2, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        m2 = np.where(g > 0, np.abs(z2) / g, np.inf)
    both = np.concatenate([m1, m2], axis=1)
    return both.min(axis=1) if both.shape[1] else np.full(len(X), np.inf)


def sample_away_from_kinks(net: ReluNet3, box: Box, n: int, rng: np.random.Generator,
                           margin: float = 1e-6, max_rounds: int = 20) -> np.ndarray:
    """``n`` uniform points of ``box`` whose :func:`kink_margin` is at least ``margin``.

    Raises:
        RuntimeError: fewer than ``n`` such points after ``max_rounds`` batches.
    """
    kept = []
    total = 0
    for _ in range(max_rounds):
        X = box.sample(2 * n, rng)
        X = X[kink_margin(net, X) >= margin]
        kept.append(X)
        total += len(X)
        if total >= n:
            return np.concatenate(kept)[:n]
    raise RuntimeError(f"only {total} of {n} points keep a kink margin >= {margin}")


def numerical_rank(J: np.ndarray, rtol: float = 1e-8) -> tuple[int, np.ndarray]:
    """Rank with threshold ``rtol · σ_max`` and the singular values (descending)."""
    s = np.linalg.svd(J, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0, s
    return int(np.sum(s > rtol * s[0])), s


def exact_rank(rows, backend: str = "auto") -> int:
    """Exact rank over ℚ of a matrix given as rows of Fractions (or floats, read exactly).

    ``backend``: ``"flint"`` (python-flint ``fmpq_mat.rref``), ``"sympy"`` (``DomainMatrix`` over
    ``QQ``) or ``"auto"`` (flint when installed).

    Raises:
        ValueError: unknown backend, or ragged rows. ImportError: ``"flint"`` not installed.
    """
    rows = [[Fraction(v) for v in r] for r in (rows.tolist() if isinstance(rows, np.ndarray) else rows)]
    if not rows:
        return 0
    ncol = len(rows[0])
    if any(len(r) != ncol for r in rows):
        raise ValueError("exact_rank: rows have different lengths")
    if backend not in ("auto", "flint", "sympy"):
        raise ValueError(f"backend={backend!r}; allowed: auto, flint, sympy")
    if backend in ("auto", "flint"):
        try:
            import flint

            M = flint.fmpq_mat(len(rows), ncol, [flint.fmpq(v.numerator, v.denominator) for r in rows for v in r])
            return int(M.rank()) if hasattr(M, "rank") else int(M.rref()[1])
        except ImportError:
            if backend == "flint":
                raise
    import math

    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    # scaling a row by the lcm of its denominators keeps the rank and makes it integral; the rank
    # over ZZ (fraction-free elimination) equals the rank over its fraction field QQ and avoids
    # the gcd normalisation of every rational entry
    ints = []
    for r in rows:
        L = math.lcm(*(v.denominator for v in r))
        ints.append([int(v * L) for v in r])
    return int(DomainMatrix(ints, (len(ints), ncol), ZZ).rank())


@dataclass(frozen=True)
class FiberDimension:
    """Result of :func:`fiber_dimension`.

    Attributes:
        n_params: P. rank: Jacobian rank (functional dimension on the samples).
        fiber: ``P − rank``. n_points: samples used. min_margin: smallest kink margin.
        gap: ``σ_rank / σ_{rank+1}`` (float mode; ∞ when exact or full rank) — a genericity check:
            a small gap means the numerical rank is not trustworthy.
        exact: whether the rank was computed over ℚ.
        stratum: :func:`stratum` of the network on the same samples (dead / always-on / switching
            units per layer): the fiber dimension depends on it, so it travels with the number
            (random θ often lands in a lower stratum, where the fiber is larger).
    """

    n_params: int
    rank: int
    fiber: int
    n_points: int
    min_margin: float
    gap: float
    exact: bool
    stratum: dict


def fiber_dimension(net: ReluNet3, box: Box, rng: np.random.Generator, n_points: int = 400,
                    exact: bool = False, rtol: float = 1e-8, margin: float = 1e-6) -> FiberDimension:
    """Fiber dimension ``P − rank J`` at ``net`` on ``box`` from ``n_points`` samples ≥ ``margin``
    away from every kink (float SVD, or exact over ℚ with ``exact=True``), with the stratum of
    ``net`` on those samples (:attr:`FiberDimension.stratum`).

    Raises:
        ValueError: box of the wrong dimension, ``n_points < 1``. RuntimeError: no kink-free points.
    """
    box.check(net)
    if n_points < 1:
        raise ValueError(f"n_points={n_points}; need >= 1")
    X = sample_away_from_kinks(net, box, n_points, rng, margin)
    J = jacobian(net, X)
    r, s = numerical_rank(J, rtol)
    gap = float(s[r - 1] / s[r]) if 0 < r < len(s) and s[r] > 0 else float("inf")
    if exact:
        r = exact_rank(exact_jacobian(net, X))
        gap = float("inf")
    return FiberDimension(net.n_params, r, net.n_params - r, len(X), float(kink_margin(net, X).min()), gap, exact,
                          stratum(net, X))


def stratum(net: ReluNet3, X) -> dict:
    """Activation statistics on sample points ``X``: per layer, how many units are dead (never
    on), always on, or switching on the samples, and the fraction of points where each
    second-layer unit is on. Report it with every fiber dimension (random θ often lands in
    lower strata)."""
    z1, z2 = net.pre_activations(X)

    def counts(z):
        on = z > 0
        return {"dead": int(np.sum(~on.any(0))), "always_on": int(np.sum(on.all(0))),
                "switching": int(np.sum(on.any(0) & ~on.all(0)))}

    return {"layer1": counts(z1), "layer2": counts(z2), "layer2_on_fraction": (z2 > 0).mean(0).round(3).tolist()}
