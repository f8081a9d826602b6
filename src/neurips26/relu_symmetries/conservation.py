"""Conservation laws along gradient flow and a tracker of their drift under gradient descent.

A one-parameter symmetry with generator field ``ξ(θ)`` keeps the loss: ``∇L·ξ = 0``. When
``ξ = ∇Q`` the quantity ``Q`` is conserved along gradient flow ``θ̇ = −∇L``
(``dQ/dt = −∇Q·∇L = 0``). Linear actions ``θ ↦ e^{tA} θ`` with symmetric ``A`` qualify with
``Q = ½ θᵀ A θ``:

* **per-neuron scaling law** (always; Du, Hu, Lee 2018; Kunin et al. 2021):
  ``Q_i = ‖w_in,i‖² + b_i² − ‖w_out,i‖²``;
* **local GL law** (our derivation): for a block of first-layer units that are on at *every*
  training point the block acts linearly on the data, ``GL(m)`` acts on it, and
  ``Q = M Mᵀ − W_outᵀ W_out`` (``M = [W_in | b]``, m×m) is conserved while that pattern holds;
  its off-diagonal entries are the extra, local laws. For a unit that switches on the data the
  off-diagonal entry is not conserved;
* **non-gradient generators give no law** (our explanation of the abstract's "others do not"):
  e.g. the bias trade of a width-1 bottleneck is not curl-free.
* dead units get zero gradient: their parameters are frozen (not a symmetry-induced law).

Gradient descent with step ``lr`` conserves these only to ``O(lr)`` over a fixed time horizon.

Source: abstract ("some of these symmetries induce local conservation laws along gradient flow,
while others do not"); Kunin et al. (2021) Neural mechanics; Marcotte, Gribonval, Peyré (2023)
Abide by the law and follow the flow.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fibers import jacobian
from .network import ReluNet3

__all__ = ["per_neuron_invariants", "local_gl_invariant", "mse_gradient", "GDTrack", "train_gd", "scaling_generator",
           "bias_trade_generator", "generator_curl"]


def per_neuron_invariants(net: ReluNet3) -> np.ndarray:
    """``Q_i = ‖w_in,i‖² + b_i² − ‖w_out,i‖²`` for every hidden unit, layer 1 then layer 2
    (shape ``[n1 + n2]``)."""
    q1 = (net.W1 ** 2).sum(1) + net.b1 ** 2 - (net.W2 ** 2).sum(0)
    q2 = (net.W2 ** 2).sum(1) + net.b2 ** 2 - (net.W3 ** 2).sum(0)
    return np.r_[q1, q2]


def local_gl_invariant(net: ReluNet3, units) -> np.ndarray:
    """``Q = M Mᵀ − W_outᵀ W_out`` for first-layer ``units`` (``M = [W1 | b1]`` rows,
    ``W_out = W2[:, units]``), shape ``[m, m]``. Conserved along gradient flow while every unit
    of the block is on at every training point; the diagonal repeats the per-neuron laws."""
    u = np.asarray(units, dtype=int)
    if u.ndim != 1 or len(u) == 0 or u.min() < 0 or u.max() >= net.architecture[1]:
        raise ValueError(f"units {np.asarray(units).tolist()}: need first-layer indices in 0..{net.architecture[1] - 1}")
    M = np.c_[net.W1[u], net.b1[u]]
    Wo = net.W2[:, u]
    return M @ M.T - Wo.T @ Wo


def mse_gradient(net: ReluNet3, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Loss ``L = (1/2N) Σ ‖f(x_n) − y_n‖²`` and its gradient as a flat vector (analytic).

    ``y`` is ``[N, n3]`` (or ``[N]`` for n3 = 1). Raises ValueError on any other shape (a
    broadcast ``[N] − [N, 1]`` would silently give an ``[N, N]`` residual).
    """
    f = net(X)
    y = np.asarray(y, dtype=np.float64)
    if y.size != f.size or y.shape[0] != f.shape[0]:
        raise ValueError(f"targets have shape {y.shape}; need [{f.shape[0]}, {f.shape[1]}]")
    r = (f - y.reshape(f.shape)).reshape(-1)
    J = jacobian(net, X)
    return 0.5 * float(r @ r) / len(X), J.T @ r / len(X)


@dataclass
class GDTrack:
    """Recorded trajectory of :func:`train_gd`.

    Attributes:
        steps: recorded step indices. loss: loss at those steps.
        per_neuron: ``[T, n1 + n2]`` per-neuron invariants.
        gl: ``[T, m, m]`` local GL matrix of ``block`` (empty if no block).
        always_on: per first-layer unit, whether it was on at every training point at *every*
            step (the premise of the local law for a block of such units); ``on_fraction``
            ``[T, n1]`` at the recorded steps.
        frozen_max_change: largest change of any parameter of a unit dead on the data at the start.
        final: the trained network.
    """

    steps: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    per_neuron: list = field(default_factory=list)
    gl: list = field(default_factory=list)
    always_on: list = field(default_factory=list)
    on_fraction: list = field(default_factory=list)
    frozen_max_change: float = 0.0
    final: ReluNet3 | None = None

    def drift(self) -> dict:
        """Max absolute drift from the start: per-neuron laws, and each GL entry ``[m, m]``."""
        pn = np.asarray(self.per_neuron)
        out = {"per_neuron": float(np.max(np.abs(pn - pn[0]))) if len(pn) else 0.0}
        if self.gl and np.size(self.gl[0]):
            g = np.asarray(self.gl)
            out["gl"] = np.max(np.abs(g - g[0]), axis=0).tolist()
        return out


def train_gd(net: ReluNet3, X, y, lr: float, steps: int, block=(), record_every: int = 100) -> GDTrack:
    """Full-batch gradient descent on the MSE, recording the conserved quantities.

    Args:
        net: the starting network. X ``[N, n0]``, y ``[N, n3]`` (or ``[N]`` for n3 = 1).
        lr: step size > 0. steps: number of steps ≥ 1.
        block: first-layer units whose local GL matrix is tracked.
        record_every: record every k steps (and the last step).

    Raises:
        ValueError: bad shapes, non-finite data, ``lr <= 0``, ``steps < 1``; FloatingPointError
            if training diverges (non-finite loss).
    """
    X = net._inputs(X)
    y = np.asarray(y, dtype=np.float64)
    if y.size != len(X) * net.architecture[3] or y.shape[0] != len(X) or not np.all(np.isfinite(y)):
        raise ValueError(f"targets have shape {y.shape}, need finite [{len(X)}, {net.architecture[3]}]")
    y = y.reshape(len(X), -1)
    if not (np.isfinite(lr) and lr > 0) or steps < 1 or record_every < 1:
        raise ValueError(f"lr={lr}, steps={steps}, record_every={record_every}: need lr > 0, steps >= 1, record_every >= 1")
    arch = net.architecture
    block = list(block)
    W1, b1, W2, b2, W3, b3 = (np.array(a) for a in net.params())
    N = len(X)
    dead1 = ~((X @ W1.T + b1) > 0).any(0)
    always = np.ones(arch[1], dtype=bool)
    track = GDTrack()
    for t in range(steps + 1):
        # forward
        z1 = X @ W1.T + b1
        on1 = z1 > 0
        h1 = np.where(on1, z1, 0.0)
        z2 = h1 @ W2.T + b2
        h2 = np.maximum(z2, 0.0)
        r = h2 @ W3.T + b3 - y                      # residual [N, n3]
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported just below
            loss = 0.5 * float(np.sum(r * r)) / N
        if not np.isfinite(loss):
            raise FloatingPointError(f"loss became {loss} at step {t} (lr={lr} too large?)")
        always &= on1.all(0)
        if t % record_every == 0 or t == steps:
            cur = ReluNet3(W1, b1, W2, b2, W3, b3)
            track.steps.append(t)
            track.loss.append(loss)
            track.per_neuron.append(per_neuron_invariants(cur))
            track.gl.append(local_gl_invariant(cur, block) if block else np.zeros((0, 0)))
            track.on_fraction.append(on1.mean(0))
        if t == steps:
            break
        # backward: ∂L/∂W3 = rᵀh2/N, δ2 = (r W3) ⊙ 1[z2 > 0], δ1 = (δ2 W2) ⊙ 1[z1 > 0]
        d2 = (r @ W3) * (z2 > 0)
        d1 = (d2 @ W2) * on1
        gW3, gb3 = r.T @ h2 / N, r.sum(0) / N
        gW2, gb2 = d2.T @ h1 / N, d2.sum(0) / N
        gW1, gb1 = d1.T @ X / N, d1.sum(0) / N
        W1 = W1 - lr * gW1
        b1 = b1 - lr * gb1
        W2 = W2 - lr * gW2
        b2 = b2 - lr * gb2
        W3 = W3 - lr * gW3
        b3 = b3 - lr * gb3
    cur = ReluNet3(W1, b1, W2, b2, W3, b3)
    start = net
    if dead1.any():
        track.frozen_max_change = float(max(np.max(np.abs(cur.W1[dead1] - start.W1[dead1])),
                                            np.max(np.abs(cur.b1[dead1] - start.b1[dead1])),
                                            np.max(np.abs(cur.W2[:, dead1] - start.W2[:, dead1]))))
    track.always_on = always.tolist()
    track.final = cur
    return track


def scaling_generator(net: ReluNet3, layer: int, unit: int) -> np.ndarray:
    """Flat generator ``ξ`` of the rescaling of one hidden unit: ``+`` its incoming weights and
    bias, ``−`` its outgoing weights. ``ξ = ∇Q_i / 2`` (linear, symmetric): a gradient field."""
    n0, n1, n2, n3 = net.architecture
    if layer not in (1, 2) or not 0 <= unit < (n1 if layer == 1 else n2):
        raise ValueError(f"layer={layer}, unit={unit}: not a hidden unit of {net.architecture}")
    parts = [np.zeros_like(a) for a in net.params()]
    if layer == 1:
        parts[0][unit], parts[1][unit], parts[2][:, unit] = net.W1[unit], net.b1[unit], -net.W2[:, unit]
    else:
        parts[2][unit], parts[3][unit], parts[4][:, unit] = net.W2[unit], net.b2[unit], -net.W3[:, unit]
    return np.concatenate([p.ravel() for p in parts])


def bias_trade_generator(net: ReluNet3, unit: int) -> np.ndarray:
    """For ``n2 = 1``: the generator ``ξ_c = 1``, ``ξ_{b_i} = −1/v_i`` that trades the bottleneck
    bias ``c`` against the bias of a first-layer unit ``i`` that is on wherever the bottleneck is
    (``g`` unchanged there). Our derivation.

    Raises:
        ValueError: ``n2 != 1``, bad unit, or ``v_i = 0``.
    """
    n0, n1, n2, n3 = net.architecture
    if n2 != 1 or not 0 <= unit < n1:
        raise ValueError(f"bias trade needs n2 = 1 and a first-layer unit; got {net.architecture}, unit={unit}")
    v = net.W2[0, unit]
    if v == 0:
        raise ValueError(f"unit {unit} has v = 0: it does not reach the bottleneck")
    parts = [np.zeros_like(a) for a in net.params()]
    parts[3][0] = 1.0
    parts[1][unit] = -1.0 / v
    return np.concatenate([p.ravel() for p in parts])


def generator_curl(generator, net: ReluNet3, h: float = 1e-6) -> float:
    """``max |∂ξ_a/∂θ_b − ∂ξ_b/∂θ_a|`` by central differences: 0 for a gradient field
    ``ξ = ∇Q`` (a conserved quantity can then exist), > 0 when the symmetry induces no law of
    that form (Poincaré lemma).

    ``generator(net) -> flat ξ``. Source: inferred (standard; Marcotte, Gribonval, Peyré 2023).
    """
    theta = net.flat()
    arch = net.architecture
    P = theta.size
    D = np.empty((P, P))
    for k in range(P):
        e = np.zeros(P)
        e[k] = h
        D[:, k] = (generator(ReluNet3.from_flat(arch, theta + e)) - generator(ReluNet3.from_flat(arch, theta - e))) / (2 * h)
    return float(np.max(np.abs(D - D.T)))
