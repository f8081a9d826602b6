"""Baselines for the equivalence decision, run in the same process for comparison.

* :func:`naive_canonical_equal`: canonicalise (unit-normalise, push scales forward, sort) and
  compare **without** reducing dead/hidden units and without the bottleneck steps. It decides
  the permutation/scaling orbit only, so it wrongly answers "different" for hidden-bottleneck
  moves (kept as a regression test of why the full procedure needs its extra steps).
* :func:`random_evaluation_equal`: evaluate both networks at ``n`` uniform points; "equal" when
  no gap exceeds the tolerance. A probabilistic test: a difference confined to a set of volume
  fraction ``p`` is missed with probability ``(1 − p)^n``; to reach confidence ``1 − δ`` it needs
  ``n = log δ / log(1 − p)`` points (:func:`points_for_confidence`).

Source: inferred (the two obvious alternatives to a structural decision procedure).
"""

from __future__ import annotations

import math

import numpy as np

from .equivalence import match_orbit
from .network import Box, ReluNet3

__all__ = ["naive_canonical_equal", "random_evaluation_equal", "points_for_confidence"]


def naive_canonical_equal(net: ReluNet3, other: ReluNet3, tol: float = 1e-9) -> bool:
    """True iff ``other`` is on the permutation × positive-scaling orbit of ``net`` (no reduction)."""
    return match_orbit(net, other, tol) is not None


def points_for_confidence(p: float, delta: float) -> int:
    """Uniform points needed to hit a set of volume fraction ``p`` with probability ``1 − δ``.

    Raises:
        ValueError: ``p`` or ``delta`` outside (0, 1).
    """
    if not (0 < p < 1 and 0 < delta < 1):
        raise ValueError(f"p={p}, delta={delta}; both must lie in (0, 1)")
    return int(math.ceil(math.log(delta) / math.log1p(-p)))


def random_evaluation_equal(net: ReluNet3, other: ReluNet3, box: Box, n: int, rng: np.random.Generator,
                            rtol: float = 1e-9, batch: int = 4096) -> bool:
    """True iff ``|f − f′| <= rtol (1 + |f|)`` at ``n`` uniform points of ``box`` (batched)."""
    if n < 1:
        raise ValueError(f"n={n}; need >= 1")
    left = n
    while left > 0:
        X = box.sample(min(batch, left), rng)
        fa, fb = net(X), other(X)
        if np.any(np.abs(fa - fb) > rtol * (1 + np.abs(fa))):
            return False
        left -= len(X)
    return True
