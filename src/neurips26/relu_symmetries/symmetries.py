"""Parameter symmetries of three-layer ReLU networks: maps θ ↦ θ′ with ``f_θ′ = f_θ`` on a domain.

Every generator returns a new :class:`ReluNet3` on the fiber of its input and raises
``ValueError`` (with the violated precondition) where the move would change the function.

* **Orbit of the symmetry group** (always available): hidden-unit permutations and positive
  rescalings ``(w_i, b_i) ↦ λ(w_i, b_i)``, ``W_out[:, i] ↦ W_out[:, i]/λ`` (``σ(λz) = λσ(z)``,
  λ > 0). Source: first page (Kůrková & Kainen 1994; Rolnick & Kording 2020).
* **Dead units** (inferred, holds on any domain where the unit is provably off): their outgoing
  weights and (within the dead region) their incoming ones are free.
* **Width-1 first hidden layer, n1 = 1** (our derivation; the abstract's "deeper layers hide
  or preserve geometric structure"): with ``t = w·x + b`` and ``s = σ(t)``,
  ``f = Σ_j a_j σ(v_j s + c_j) + d``.
  - *hidden first-layer hyperplane*: when every unit is off near ``s = 0`` (``c_j < 0``), f is
    flat on both sides of ``{t = 0}``, and ``b ↦ b + δ``, ``c_j ↦ c_j − v_j δ`` keeps f;
  - *flip*: ``σ(z) = z + σ(−z)`` swaps a unit with ``v_j < 0`` for its mirror plus an affine
    term, absorbed by an always-active unit (slope) and the output bias (constant);
  - *affine redistribution* between always-active units.
* **Width-1 second hidden layer, n2 = 1** (our derivation): ``f = a σ(g) + d`` with
  ``g = Σ_i v_i σ(w_i·x + b_i) + c``; a unit with ``v_i < 0`` that is off on ``{g > 0}`` can be
  made more inhibitory (``v_i ↦ (1+κ) v_i``): ``{g > 0}`` and f are unchanged.

References:
    Kůrková & Kainen (1994), Functionally equivalent feedforward neural networks.
    Rolnick & Kording (2020), Reverse-engineering deep ReLU networks.
    Grigsby, Lindsey, Rolnick (2023), Hidden symmetries of ReLU networks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .network import Box, ReluNet3

__all__ = ["permute_hidden", "rescale_hidden", "random_orbit_element", "OrbitElement", "unit_bounds",
           "UnitStatus", "unit_status", "move_dead_unit", "move_hidden_hyperplane", "flip_unit",
           "redistribute_affine", "deepen_hidden_inhibition", "first_layer_slope_at_zero"]


# --------------------------------------------------------------------------- the group

def _check_layer(net: ReluNet3, layer: int) -> int:
    if layer not in (1, 2):
        raise ValueError(f"layer={layer!r}; hidden layers are 1 and 2")
    return net.architecture[layer]


def permute_hidden(net: ReluNet3, layer: int, perm) -> ReluNet3:
    """Reorder the units of hidden ``layer`` (1 or 2): unit ``k`` of the result is unit
    ``perm[k]`` of ``net``. Exact (no arithmetic).

    Raises:
        ValueError: bad layer or ``perm`` not a permutation of ``range(n_layer)``.
    """
    n = _check_layer(net, layer)
    perm = np.asarray(perm)
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        raise ValueError(f"perm {perm.tolist()} is not a permutation of range({n})")
    if layer == 1:
        return net.replace(W1=net.W1[perm], b1=net.b1[perm], W2=net.W2[:, perm])
    return net.replace(W2=net.W2[perm], b2=net.b2[perm], W3=net.W3[:, perm])


def rescale_hidden(net: ReluNet3, layer: int, scales) -> ReluNet3:
    """Positive rescaling of hidden ``layer``: ``(w_i, b_i) ↦ λ_i (w_i, b_i)``,
    ``W_out[:, i] ↦ W_out[:, i] / λ_i`` (``σ(λz) = λσ(z)`` for λ > 0).

    Raises:
        ValueError: bad layer, wrong length, or a scale that is not finite and > 0.
    """
    n = _check_layer(net, layer)
    lam = np.asarray(scales, dtype=np.float64)
    if lam.shape != (n,) or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
        raise ValueError(f"scales {lam.tolist()}: need {n} finite positive numbers")
    if layer == 1:
        return net.replace(W1=net.W1 * lam[:, None], b1=net.b1 * lam, W2=net.W2 / lam[None, :])
    return net.replace(W2=net.W2 * lam[:, None], b2=net.b2 * lam, W3=net.W3 / lam[None, :])


@dataclass(frozen=True)
class OrbitElement:
    """A group element ``g = (π1, λ1, π2, λ2)`` and its image ``g·θ``."""

    net: ReluNet3
    perm1: np.ndarray
    scales1: np.ndarray
    perm2: np.ndarray
    scales2: np.ndarray


def random_orbit_element(net: ReluNet3, rng: np.random.Generator, scale_range=(0.1, 10.0)) -> OrbitElement:
    """A random permutation and log-uniform positive scaling of both hidden layers.

    Raises:
        ValueError: ``scale_range`` not ``0 < lo <= hi`` finite.
    """
    lo, hi = (float(v) for v in scale_range)
    if not (0 < lo <= hi < np.inf):
        raise ValueError(f"scale_range {scale_range}: need 0 < lo <= hi < inf")
    _, n1, n2, _ = net.architecture
    p1, p2 = rng.permutation(n1), rng.permutation(n2)
    s1 = np.exp(rng.uniform(np.log(lo), np.log(hi), n1))
    s2 = np.exp(rng.uniform(np.log(lo), np.log(hi), n2))
    out = rescale_hidden(permute_hidden(net, 1, p1), 1, s1)
    out = rescale_hidden(permute_hidden(out, 2, p2), 2, s2)
    return OrbitElement(out, p1, s1, p2, s2)


# --------------------------------------------------------------------------- unit status on a box

def unit_bounds(net: ReluNet3, box: Box) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sound bounds of the pre-activations over the box: ``(lo1, hi1, lo2, hi2)``.

    Layer 1 is exact (``w·c + b ∓ |w|·h``); layer 2 uses interval arithmetic on
    ``h1 ∈ [σ(lo1), σ(hi1)]``, so its bounds are valid but may be loose.

    Source: inferred (standard interval bound propagation).
    """
    box.check(net)
    lo1, hi1 = box.affine_range(net.W1, net.b1)
    hl, hh = np.maximum(lo1, 0.0), np.maximum(hi1, 0.0)
    Wp, Wn = np.maximum(net.W2, 0.0), np.minimum(net.W2, 0.0)
    lo2 = Wp @ hl + Wn @ hh + net.b2
    hi2 = Wp @ hh + Wn @ hl + net.b2
    return lo1, hi1, lo2, hi2


@dataclass(frozen=True)
class UnitStatus:
    """Per-unit status on a box: ``"dead"`` (pre-activation ≤ 0 everywhere: provably),
    ``"active"`` (≥ 0 everywhere: provably), ``"switching"`` (changes sign, layer 1 exact) or
    ``"unknown"`` (layer 2: the interval bound cannot tell). ``silent`` marks units whose
    outgoing weights are all zero (they do not reach the output)."""

    layer1: tuple[str, ...]
    layer2: tuple[str, ...]
    silent1: tuple[bool, ...]
    silent2: tuple[bool, ...]


def unit_status(net: ReluNet3, box: Box) -> UnitStatus:
    """Classify every hidden unit on ``box`` (see :class:`UnitStatus`)."""
    lo1, hi1, lo2, hi2 = unit_bounds(net, box)

    def lab(lo, hi, exact):
        return tuple("dead" if h <= 0 else "active" if l >= 0 else ("switching" if exact else "unknown")
                     for l, h in zip(lo, hi))

    s1 = lab(lo1, hi1, True)
    # a layer-2 unit all of whose live inputs are dead is constant: its bound is then exact
    s2 = lab(lo2, hi2, False)
    return UnitStatus(s1, s2, tuple(bool(v) for v in np.all(net.W2 == 0, axis=0)),
                      tuple(bool(v) for v in np.all(net.W3 == 0, axis=0)))


# --------------------------------------------------------------------------- fiber moves

def move_dead_unit(net: ReluNet3, layer: int, unit: int, box: Box, rng: np.random.Generator,
                   bias_shift: float = 1.0) -> ReluNet3:
    """Move a unit that is provably dead on ``box``: new random outgoing weights, and its bias
    lowered by ``bias_shift`` ≥ 0 (it stays dead). The function on ``box`` is unchanged.

    Raises:
        ValueError: the unit is not provably dead on the box, or a bad index/shift.
    """
    n = _check_layer(net, layer)
    if not 0 <= unit < n:
        raise ValueError(f"unit={unit}; layer {layer} has units 0..{n - 1}")
    if not (np.isfinite(bias_shift) and bias_shift >= 0):
        raise ValueError(f"bias_shift={bias_shift}; need a finite value >= 0")
    st = unit_status(net, box)
    status = (st.layer1 if layer == 1 else st.layer2)[unit]
    if status != "dead":
        raise ValueError(f"layer-{layer} unit {unit} is {status!r} on the box; only provably dead units move freely")
    if layer == 1:
        W2 = net.W2.copy()
        W2[:, unit] = rng.normal(size=W2.shape[0])
        b1 = net.b1.copy()
        b1[unit] -= bias_shift
        return net.replace(W2=W2, b1=b1)
    W3 = net.W3.copy()
    W3[:, unit] = rng.normal(size=W3.shape[0])
    b2 = net.b2.copy()
    b2[unit] -= bias_shift
    return net.replace(W3=W3, b2=b2)


def _require_bottleneck1(net: ReluNet3) -> None:
    if net.architecture[1] != 1:
        raise ValueError(f"architecture {net.architecture}: this move needs a first hidden layer of width 1")


def first_layer_slope_at_zero(net: ReluNet3) -> np.ndarray:
    """For ``n1 = 1``: the right slope ``s₀ = Σ_{j on just above s = 0} a_j v_j`` of
    ``ψ(s) = Σ_j a_j σ(v_j s + c_j) + d`` at ``s = 0`` (shape ``[n3]``). ``s₀ ≠ 0`` means the
    first-layer hyperplane ``{t = 0}`` is visible as a kink of f; ``s₀ = 0`` hides it.
    Units with ``c_j = 0`` count as on iff ``v_j > 0``.

    Source: our derivation (n1 = 1 case).
    """
    _require_bottleneck1(net)
    v, c = net.W2[:, 0], net.b2
    on = (c > 0) | ((c == 0) & (v > 0))
    return net.W3[:, on] @ v[on]


def move_hidden_hyperplane(net: ReluNet3, delta: float) -> ReluNet3:
    """For ``n1 = 1`` with every second-layer unit off at ``s = 0`` (``c_j < 0``): shift the
    first-layer bias ``b ↦ b + δ`` and ``c_j ↦ c_j − v_j δ``. For ``t ≥ max(0, −δ)`` all
    pre-activations ``v_j t + c_j`` are unchanged; elsewhere every unit stays off. So f is
    unchanged on all of ``R^n0`` while the first-layer hyperplane moves: a hidden symmetry
    outside the permutation/scaling orbit.

    Preconditions (checked): ``c_j < 0`` for all j; for ``δ > 0``, ``c_j − v_j δ ≤ 0`` (units with
    ``v_j < 0`` must stay off); for ``δ < 0``, ``|δ| ≤ −c_j / v_j`` for units with ``v_j > 0``.

    Raises:
        ValueError: ``n1 != 1``, non-finite δ, or a violated precondition (naming the unit).

    Source: our derivation (n1 = 1, hidden first-layer hyperplane).
    """
    _require_bottleneck1(net)
    if not np.isfinite(delta):
        raise ValueError(f"delta={delta}: must be finite")
    v, c = net.W2[:, 0], net.b2
    for j in range(len(c)):
        if c[j] >= 0:
            raise ValueError(f"unit {j} has c = {c[j]} >= 0: it is on at s = 0, so the first-layer hyperplane is "
                             "not hidden")
        if c[j] - v[j] * delta > 0:
            raise ValueError(f"unit {j}: c - v·δ = {c[j] - v[j] * delta} > 0 would switch it on in the flat region")
    W2 = net.W2
    return net.replace(b1=net.b1 + delta, b2=c - v * delta, W2=W2)


def flip_unit(net: ReluNet3, unit: int, absorber: int, box: Box) -> ReluNet3:
    """For ``n1 = 1, n3 = 1``: replace unit ``j`` with ``v_j < 0`` by its mirror
    ``(−v_j, −c_j)`` (same breakpoint) using ``σ(z) = z + σ(−z)``; the affine remainder
    ``a_j (v_j s + c_j)`` is absorbed by the always-active unit ``k`` (slope: ``v_k += a_j v_j / a_k``)
    and the output bias (constant: ``d += a_j c_j``); unit k must stay active on the box's range
    of ``s``.

    Raises:
        ValueError: shapes, ``v_j >= 0``, ``a_k = 0``, or the absorber not active on
            ``s ∈ [0, s_max]`` before and after (naming the values).

    Source: our derivation (a discrete change of combinatorial type).
    """
    _require_bottleneck1(net)
    if net.architecture[3] != 1:
        raise ValueError(f"architecture {net.architecture}: the flip needs one output (n3 = 1)")
    n2 = net.architecture[2]
    if not (0 <= unit < n2 and 0 <= absorber < n2 and unit != absorber):
        raise ValueError(f"unit={unit}, absorber={absorber}: need two different units in 0..{n2 - 1}")
    v, c, a = net.W2[:, 0].copy(), net.b2.copy(), net.W3[0].copy()
    if v[unit] >= 0:
        raise ValueError(f"unit {unit} has v = {v[unit]} >= 0; only units with v < 0 flip")
    if a[absorber] == 0:
        raise ValueError(f"absorber {absorber} has zero output weight")
    _, t_max = box.affine_range(net.W1, net.b1)
    s_max = max(float(t_max[0]), 0.0)
    new_v = v[absorber] + a[unit] * v[unit] / a[absorber]
    new_c = c[absorber]
    for name, vv, cc in (("before", v[absorber], c[absorber]), ("after", new_v, new_c)):
        if min(cc, vv * s_max + cc) < 0:
            raise ValueError(f"absorber {absorber} is not active on s ∈ [0, {s_max:.4g}] {name} the flip "
                             f"(v = {vv:.4g}, c = {cc:.4g})")
    d = net.b3 + a[unit] * c[unit]
    v[absorber] = new_v
    v[unit], c[unit] = -v[unit], -c[unit]
    return net.replace(W2=v[:, None], b2=c, b3=d)


def redistribute_affine(net: ReluNet3, donor: int, receiver: int, fraction: float, box: Box) -> ReluNet3:
    """For ``n1 = 1, n3 = 1``: move ``fraction`` of the always-active unit ``donor``'s affine term
    ``a_d (v_d s + c_d)`` into the always-active unit ``receiver`` (both must stay active on the
    box's range of s). Continuous: affine redistribution among always-active units.

    Raises:
        ValueError: shapes, indices, non-finite fraction, or a unit that would not stay active.

    Source: our derivation.
    """
    _require_bottleneck1(net)
    if net.architecture[3] != 1:
        raise ValueError(f"architecture {net.architecture}: needs one output (n3 = 1)")
    if not np.isfinite(fraction):
        raise ValueError(f"fraction={fraction}: must be finite")
    n2 = net.architecture[2]
    if not (0 <= donor < n2 and 0 <= receiver < n2 and donor != receiver):
        raise ValueError(f"donor={donor}, receiver={receiver}: need two different units in 0..{n2 - 1}")
    v, c, a = net.W2[:, 0].copy(), net.b2.copy(), net.W3[0].copy()
    if a[receiver] == 0:
        raise ValueError(f"receiver {receiver} has zero output weight")
    _, t_max = box.affine_range(net.W1, net.b1)
    s_max = max(float(t_max[0]), 0.0)
    dv, dc = fraction * v[donor], fraction * c[donor]
    new = {donor: (v[donor] - dv, c[donor] - dc), receiver: (v[receiver] + a[donor] * dv / a[receiver],
                                                             c[receiver] + a[donor] * dc / a[receiver])}
    for k in (donor, receiver):
        for vv, cc in ((v[k], c[k]), new[k]):
            if min(cc, vv * s_max + cc) < 0:
                raise ValueError(f"unit {k} is not active on s ∈ [0, {s_max:.4g}] (v = {vv:.4g}, c = {cc:.4g})")
    for k, (vv, cc) in new.items():
        v[k], c[k] = vv, cc
    return net.replace(W2=v[:, None], b2=c)


def deepen_hidden_inhibition(net: ReluNet3, unit: int, kappa: float, box: Box, *, verify_with=None) -> ReluNet3:
    """For ``n2 = 1``: make first-layer unit ``i`` (with ``v_i < 0``) more inhibitory,
    ``v_i ↦ (1 + κ) v_i`` with κ ≥ 0. If unit ``i`` is off on ``{g > 0}`` the function is
    unchanged: on ``{g > 0}`` g does not see unit i; elsewhere g only decreases and stays ≤ 0.

    The precondition "unit i is off wherever g > 0 on the box" is a region statement; it is
    checked with ``verify_with(net, box) -> list of (center, pattern1, pattern2)`` pieces (e.g.
    :func:`neurips26.relu_symmetries.regions.activation_cells`) when given, else by the
    sufficient interval test ``max_box(w_i·x + b_i) ≤ 0`` (i dead) — which is rarely met.

    Raises:
        ValueError: ``n2 != 1``, ``v_i >= 0``, κ < 0 / non-finite, or the precondition fails
            (naming the piece).

    Source: our derivation (n2 = 1, a first-layer unit hidden by the bottleneck).
    """
    n0, n1, n2, _ = net.architecture
    if n2 != 1:
        raise ValueError(f"architecture {net.architecture}: this move needs a second hidden layer of width 1")
    if not 0 <= unit < n1:
        raise ValueError(f"unit={unit}; layer 1 has units 0..{n1 - 1}")
    if not (np.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"kappa={kappa}: need a finite value >= 0")
    v = net.W2[0].copy()
    if v[unit] >= 0:
        raise ValueError(f"unit {unit} has v = {v[unit]} >= 0; only inhibitory units (v < 0) can be deepened")
    if verify_with is None:
        if unit_status(net, box).layer1[unit] != "dead":
            raise ValueError(f"unit {unit}: cannot show it is off on {{g > 0}} without a region check "
                             "(pass verify_with=activation_cells)")
    else:
        for cell in verify_with(net, box):
            if cell.patterns[0][1][0] and cell.patterns[0][0][unit]:
                raise ValueError(f"unit {unit} is on inside {{g > 0}} near x = {np.round(cell.center, 4).tolist()}")
    v[unit] *= 1.0 + kappa
    return net.replace(W2=v[None, :])
