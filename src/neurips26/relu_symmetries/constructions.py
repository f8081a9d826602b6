"""Constructed parameters in known strata, each with the fiber dimension our derivation predicts.

All parameters are small dyadic rationals, so exact rational ranks are cheap. Derivations (ours;
the paper's theorems were not readable):

* **Case A, n1 = 1**, ``f = ψ(σ(t)) ``, ``t = w·x + b``, ``ψ(s) = Σ_j a_j σ(v_j s + c_j) + d``; all
  three breakpoints ``t_j = −c_j/v_j ∈ {1, 2, 3}`` inside the box's range of t, no always-active
  unit. With one ``v_j < 0`` (on at ``s = 0``) the first-layer hyperplane is a visible kink
  (``s₀ ≠ 0``): f is fixed by the oriented hyperplane (n0), breakpoints and jumps (2·n2), ψ(0)
  (1) — ``s₀`` is then minus the sum of the jumps of the ``v < 0`` units — so the functional
  dimension is ``n0 + 2 n2 + 1 = 10`` of ``P = 14`` and the fiber has dimension 4 (= #hidden).
  With every ``v_j > 0``, ``s₀ = 0``: the hyperplane is hidden (only its direction matters:
  n0 − 1), functional dimension 9, fiber 5.
* **Case B, n2 = 1**, ``f = a σ(g) + d``, ``g = Σ_i v_i σ(w_i·x + b_i) + c``. On ``{g > 0}`` f is
  ``d + a g``; each first-layer unit visible there contributes its hyperplane and amplitude
  (n0 + 1); units on throughout ``{g > 0}`` merge into one affine term (n0 + 1 together; only
  the constant ``a c`` when there are none); d adds 1; units off on ``{g > 0}`` add nothing.
  (3 visible, {g ≤ 0} ≠ ∅): ``3·3 + 1 + 1 = 11``, fiber 4. (1 visible, 1 on throughout,
  1 hidden): ``3 + 3 + 1 = 7``, fiber 8.
* **Generic widths ≥ 2** (Grillo & Montúfar 2026, first page: identifiable up to permutation and
  scaling on an open set): fiber = #hidden.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .network import Box, ReluNet3

__all__ = ["Construction", "case_a", "case_b", "constructions", "generic_switching_network"]


@dataclass(frozen=True)
class Construction:
    """A constructed parameter: ``name``, the network, its box, the stratum in words and the
    predicted fiber dimension with the count behind it."""

    name: str
    net: ReluNet3
    box: Box
    stratum: str
    predicted_fiber: int
    count: str


def case_a(visible_hyperplane: bool) -> Construction:
    """Case A (3, 1, 3, 1) on ``[−3, 3]^3``; ``t = x1 + x2/2 − x3/2 + 1/2 ∈ [−5.5, 6.5]``."""
    if visible_hyperplane:
        v, c, pred, stratum = [1.0, -1.0, 2.0], [-1.0, 2.0, -6.0], 4, "3 visible breakpoints, one v < 0: s₀ ≠ 0"
        count = "P − (n0 + 2·n2 + 1) = 14 − 10"
    else:
        v, c, pred, stratum = [1.0, 2.0, 1.0], [-1.0, -4.0, -3.0], 5, "3 visible breakpoints, all v > 0: s₀ = 0"
        count = "P − ((n0 − 1) + 2·n2 + 1) = 14 − 9"
    net = ReluNet3([[1.0, 0.5, -0.5]], [0.5], np.array(v)[:, None], c, [[1.0, 2.0, -1.0]], [0.25])
    return Construction(f"A (3,1,3,1), {'visible' if visible_hyperplane else 'hidden'} first-layer hyperplane",
                        net, Box.cube(3, 3.0), stratum, pred, count)


def case_b(hidden_unit: bool) -> Construction:
    """Case B (2, 3, 1, 1) on ``[−2, 2]^2``. Units 0, 1 as below; unit 2 either visible
    (``w = (0.3, −1)``, ``v = 0.7``) or inhibitory and on only where ``x1 < −1`` while
    ``{g > 0} ⊂ {x1 > 0.5}`` (hidden). In the hidden case unit 0 (``σ(x1)``) is on throughout
    ``{g > 0}``."""
    if hidden_unit:
        w2, b2, v2, pred = [-1.0, 0.0], -1.0, -3.0, 8
        stratum, count = "1 visible, 1 on throughout {g > 0}, 1 off on {g > 0}", "P − ((n0+1) + (n0+1) + 1) = 15 − 7"
    else:
        w2, b2, v2, pred = [0.25, -1.0], 0.125, 0.75, 4
        stratum, count = "3 visible, {g ≤ 0} non-empty", "P − (3·(n0+1) + 1 + 1) = 15 − 11"
    net = ReluNet3([[1.0, 0.0], [0.5, 1.0], w2], [0.0, -0.25, b2], [[1.0, -0.75, v2]], [-0.5], [[1.5]], [0.125])
    return Construction(f"B (2,3,1,1), {'a unit hidden by the bottleneck' if hidden_unit else 'all units visible'}",
                        net, Box.cube(2, 2.0), stratum, pred, count)


def constructions() -> list[Construction]:
    """The four constructed bottleneck parameters (A visible/hidden, B visible/hidden)."""
    return [case_a(True), case_a(False), case_b(False), case_b(True)]


def generic_switching_network(architecture, box: Box, rng: np.random.Generator, n_check: int = 4000,
                              max_tries: int = 500, min_overlap: int = 40) -> ReluNet3:
    """A Gaussian network (hyperplanes through random points of the box) whose every hidden unit
    switches on ``n_check`` samples of ``box`` and every pair (first-layer unit i, second-layer unit
    j) is on together at ``min_overlap`` samples or more (rejection sampling): a candidate for
    the top stratum. (Merely switching units leave W2[j, i] free where i and j are never on
    together: a lower stratum on the box.)

    Raises:
        RuntimeError: none found in ``max_tries`` draws.
    """
    n0, n1, n2, n3 = (int(n) for n in architecture)
    X = box.sample(n_check, rng)
    for _ in range(max_tries):
        W1 = rng.normal(size=(n1, n0))
        b1 = -(W1 @ box.sample(n1, rng).T).diagonal()        # hyperplanes through random box points
        h1 = np.maximum(X @ W1.T + b1, 0)
        W2 = rng.normal(size=(n2, n1))
        b2 = -(h1[rng.integers(0, n_check, n2)] * W2).sum(1)  # bent hyperplanes through sampled points
        net = ReluNet3(W1, b1, W2, b2, rng.normal(size=(n3, n2)), rng.normal(size=n3))
        z1, z2 = net.pre_activations(X)
        D1, D2 = z1 > 0, z2 > 0
        switching = all((D.any(0) & (~D).any(0)).all() for D in (D1, D2))
        # every weight W2[j, i] must act somewhere: units i and j on together at some sample
        # (else W2[j, i] is free on the box and the parameter lies in a lower stratum)
        if switching and (D2.T.astype(int) @ D1.astype(int) >= min_overlap).all():
            return net
    raise RuntimeError(f"no all-switching network for {architecture} in {max_tries} draws")
