"""Three-layer ReLU networks as plain parameter tuples, their domains, exact evaluation and
conversion from and to ``torch.nn.Sequential``.

A network of architecture ``(n0, n1, n2, n3)`` is ``θ = (W1, b1, W2, b2, W3, b3)`` with the
torch convention ``W_l`` of shape ``[out, in]``::

    z1 = W1 x + b1,   h1 = σ(z1)          # first hidden layer, n1 units
    z2 = W2 h1 + b2,  h2 = σ(z2)          # second hidden layer, n2 units
    f_θ(x) = W3 h2 + b3                    # n3 outputs;  σ = ReLU

"Three-layer" counts the three affine maps (two hidden layers), as on the paper's first page.

References:
    Gegenfurtner, Grillo, Montúfar, *The Symmetries of Three-Layer ReLU Networks* (NeurIPS 2026),
    abstract and first page (setting and notation).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = ["ReluNet3", "Box", "random_network", "to_sequential", "from_sequential", "exact_forward",
           "exact_forward_fractions"]


def _as_matrix(name: str, a, shape: tuple[int, ...] | None = None) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} has shape {arr.shape}; expected {shape} (torch convention [out, in])")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name}{tuple(int(i) for i in bad)} = {arr[tuple(bad)]}: parameters must be finite")
    return arr


@dataclass(frozen=True, eq=False)
class ReluNet3:
    """Parameters ``θ = (W1, b1, W2, b2, W3, b3)`` of a three-layer ReLU network (float64).

    Shapes: ``W1 [n1, n0]``, ``b1 [n1]``, ``W2 [n2, n1]``, ``b2 [n2]``, ``W3 [n3, n2]``, ``b3 [n3]``.
    ``n0, n3 >= 1``; hidden widths may be 0 (an emptied layer after removing dead units gives a
    constant network). Arrays are copied and made read-only.

    Raises:
        ValueError: a shape that does not chain (naming the array, its shape and the expected
            one), a matrix that is not 2-D, a non-finite entry (naming its index), or n0/n3 = 0.

    Source: the paper's setting (first page); the [out, in] convention is torch's.
    """

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    W3: np.ndarray
    b3: np.ndarray

    def __post_init__(self) -> None:
        W1 = np.asarray(self.W1, dtype=np.float64)
        if W1.ndim != 2:
            raise ValueError(f"W1 has shape {W1.shape}; expected a matrix [n1, n0]")
        n1, n0 = W1.shape
        W2 = np.asarray(self.W2, dtype=np.float64)
        if W2.ndim != 2:
            raise ValueError(f"W2 has shape {W2.shape}; expected a matrix [n2, n1]")
        n2 = W2.shape[0]
        W3 = np.asarray(self.W3, dtype=np.float64)
        if W3.ndim != 2:
            raise ValueError(f"W3 has shape {W3.shape}; expected a matrix [n3, n2]")
        n3 = W3.shape[0]
        if n0 < 1 or n3 < 1:
            raise ValueError(f"architecture {(n0, n1, n2, n3)}: input and output widths must be >= 1")
        arrays = {"W1": _as_matrix("W1", W1, (n1, n0)), "b1": _as_matrix("b1", self.b1, (n1,)),
                  "W2": _as_matrix("W2", W2, (n2, n1)), "b2": _as_matrix("b2", self.b2, (n2,)),
                  "W3": _as_matrix("W3", W3, (n3, n2)), "b3": _as_matrix("b3", self.b3, (n3,))}
        for k, v in arrays.items():
            v = v.copy()
            v.flags.writeable = False
            object.__setattr__(self, k, v)

    # ------------------------------------------------------------------ shape
    @property
    def architecture(self) -> tuple[int, int, int, int]:
        """``(n0, n1, n2, n3)``."""
        return (self.W1.shape[1], self.W1.shape[0], self.W2.shape[0], self.W3.shape[0])

    @property
    def n_params(self) -> int:
        """Number of parameters ``n1(n0+1) + n2(n1+1) + n3(n2+1)``."""
        n0, n1, n2, n3 = self.architecture
        return n1 * (n0 + 1) + n2 * (n1 + 1) + n3 * (n2 + 1)

    @property
    def n_hidden(self) -> int:
        """Number of hidden units ``n1 + n2`` (the dimension of the positive-scaling group)."""
        return self.W1.shape[0] + self.W2.shape[0]

    def params(self) -> tuple[np.ndarray, ...]:
        """``(W1, b1, W2, b2, W3, b3)`` (read-only views)."""
        return (self.W1, self.b1, self.W2, self.b2, self.W3, self.b3)

    def replace(self, **arrays) -> "ReluNet3":
        """A copy with some of ``W1 … b3`` replaced (validated again)."""
        kw = dict(zip(("W1", "b1", "W2", "b2", "W3", "b3"), self.params()))
        unknown = set(arrays) - set(kw)
        if unknown:
            raise ValueError(f"unknown parameter names {sorted(unknown)}; allowed: {list(kw)}")
        kw.update(arrays)
        return ReluNet3(**kw)

    # ------------------------------------------------------------------ flat vector
    def flat(self) -> np.ndarray:
        """θ as one float64 vector ``[vec W1, b1, vec W2, b2, vec W3, b3]`` (row-major)."""
        return np.concatenate([a.ravel() for a in self.params()])

    @classmethod
    def from_flat(cls, architecture, theta) -> "ReluNet3":
        """Inverse of :meth:`flat` for ``architecture = (n0, n1, n2, n3)``.

        Raises:
            ValueError: wrong architecture length or vector length.
        """
        arch = tuple(int(n) for n in architecture)
        if len(arch) != 4:
            raise ValueError(f"architecture {architecture!r}: a three-layer network needs 4 widths (n0, n1, n2, n3)")
        n0, n1, n2, n3 = arch
        shapes = [(n1, n0), (n1,), (n2, n1), (n2,), (n3, n2), (n3,)]
        sizes = [int(np.prod(s)) for s in shapes]
        theta = np.asarray(theta, dtype=np.float64).ravel()
        if theta.size != sum(sizes):
            raise ValueError(f"parameter vector has {theta.size} entries; architecture {arch} needs {sum(sizes)}")
        parts, k = [], 0
        for s, m in zip(shapes, sizes):
            parts.append(theta[k:k + m].reshape(s))
            k += m
        return cls(*parts)

    # ------------------------------------------------------------------ evaluation
    def pre_activations(self, x) -> tuple[np.ndarray, np.ndarray]:
        """``(z1 [N, n1], z2 [N, n2])`` at inputs ``x [N, n0]`` (float64)."""
        x = self._inputs(x)
        z1 = x @ self.W1.T + self.b1
        z2 = np.maximum(z1, 0.0) @ self.W2.T + self.b2
        return z1, z2

    def __call__(self, x) -> np.ndarray:
        """``f_θ(x)`` of shape ``[N, n3]`` for ``x [N, n0]`` (a single point ``[n0]`` gives ``[n3]``).

        Raises:
            ValueError: wrong input width or non-finite inputs.
        """
        single = np.ndim(x) == 1
        _, z2 = self.pre_activations(np.atleast_2d(np.asarray(x, dtype=np.float64)))
        out = np.maximum(z2, 0.0) @ self.W3.T + self.b3
        return out[0] if single else out

    def _inputs(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        n0 = self.W1.shape[1]
        if x.ndim != 2 or x.shape[1] != n0:
            raise ValueError(f"inputs have shape {x.shape}; expected [N, {n0}]")
        if not np.all(np.isfinite(x)):
            raise ValueError("inputs must be finite")
        return x

    def __repr__(self) -> str:
        return f"ReluNet3(architecture={self.architecture})"


def _dyadic(a: np.ndarray) -> tuple[np.ndarray, int]:
    """Exact integer numerators ``N`` (object array of Python ints) and ``e`` with ``a = N / 2^e``.

    Every finite float64 is ``m · 2^k`` with an integer ``m`` of at most 53 bits."""
    a = np.asarray(a, dtype=np.float64)
    m, k = np.frexp(a)                                   # a = m · 2^k, 0.5 <= |m| < 1 (or 0)
    mant = (m * 2.0 ** 53).astype(np.int64)              # exact: m has a 53-bit significand
    shift = 53 - k.astype(np.int64)                      # a = mant / 2^shift
    e = int(shift.max()) if shift.size else 0
    N = np.empty(a.shape, dtype=object)
    flat_m, flat_s = mant.ravel().tolist(), shift.ravel().tolist()
    N.ravel()[:] = [mi << (e - si) for mi, si in zip(flat_m, flat_s)] if a.size else []
    return N, e


def exact_forward(net: ReluNet3, x) -> list[Fraction]:
    """``f_θ(x)`` in exact rational arithmetic at one point ``x`` (shape ``[n0]``).

    Every float64 is a dyadic rational ``m / 2^k``, and sums, products and ReLU of dyadic
    rationals stay dyadic: each layer is computed on integer numerators over one common power
    of two (Python big integers, no gcd per operation), so the result is the exact value of
    the network at the exact point with the exact stored parameters. Cost ``O(n1 n0 + n2 n1 +
    n3 n2)`` big-integer operations.

    Returns:
        list of ``n3`` :class:`fractions.Fraction`.

    Raises:
        ValueError: ``x`` not of shape ``[n0]`` or not finite.

    Source: inferred: non-equivalence witnesses must not depend on float rounding.
    """
    x = np.asarray(x, dtype=np.float64)
    n0 = net.architecture[0]
    if x.shape != (n0,) or not np.all(np.isfinite(x)):
        raise ValueError(f"x has shape {x.shape} (finite: {bool(np.all(np.isfinite(x)))}); expected finite [{n0}]")
    H, eh = _dyadic(x)
    for W, b, relu in ((net.W1, net.b1, True), (net.W2, net.b2, True), (net.W3, net.b3, False)):
        NW, ew = _dyadic(W)
        NB, eb = _dyadic(b)
        prod = NW.dot(H) if W.size else np.zeros(W.shape[0], dtype=object)
        e = max(ew + eh, eb)
        Z = np.array([int(p) << (e - ew - eh) for p in prod], dtype=object) + \
            np.array([int(q) << (e - eb) for q in NB], dtype=object)
        if relu:
            Z = np.array([z if z > 0 else 0 for z in Z], dtype=object)
        H, eh = Z, e
    return [Fraction(int(z), 1 << eh) for z in H]


def exact_forward_fractions(net: ReluNet3, x) -> list[Fraction]:
    """Reference implementation of :func:`exact_forward` with one :class:`Fraction` per
    operation (slow: a gcd per operation); kept to cross-check the dyadic one."""
    x = np.asarray(x, dtype=np.float64)
    h = [Fraction(float(v)) for v in x]
    for W, b, relu in ((net.W1, net.b1, True), (net.W2, net.b2, True), (net.W3, net.b3, False)):
        out = []
        for row, bias in zip(W.tolist(), b.tolist()):
            z = Fraction(bias)
            for w, v in zip(row, h):
                if w != 0.0 and v != 0:
                    z += Fraction(w) * v
            out.append(max(z, Fraction(0)) if relu else z)
        h = out
    return h


@dataclass(frozen=True, eq=False)
class Box:
    """The input domain ``[low_1, high_1] × … × [low_n0, high_n0]`` (float64, ``low < high``).

    Fibers depend on the domain: a unit can be dead on a box and alive on ``R^n0``.

    Raises:
        ValueError: shapes differ, not 1-D, non-finite, or some ``low >= high``.

    Source: inferred: equivalence and fibers are always of the restriction to a domain.
    """

    low: np.ndarray
    high: np.ndarray

    def __post_init__(self) -> None:
        lo = np.asarray(self.low, dtype=np.float64).ravel()
        hi = np.asarray(self.high, dtype=np.float64).ravel()
        if lo.shape != hi.shape or lo.size == 0:
            raise ValueError(f"Box: low {lo.shape} and high {hi.shape} must be non-empty vectors of one length")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError("Box: bounds must be finite")
        if np.any(lo >= hi):
            i = int(np.argmax(lo >= hi))
            raise ValueError(f"Box: low[{i}] = {lo[i]} >= high[{i}] = {hi[i]}; need low < high")
        lo.flags.writeable = False
        hi.flags.writeable = False
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)

    @classmethod
    def cube(cls, n0: int, radius: float) -> "Box":
        """``[-radius, radius]^n0``."""
        if n0 < 1 or not radius > 0:
            raise ValueError(f"Box.cube: n0={n0}, radius={radius}; need n0 >= 1 and radius > 0")
        return cls(np.full(n0, -float(radius)), np.full(n0, float(radius)))

    @classmethod
    def around(cls, X, margin: float = 0.0) -> "Box":
        """The bounding box of data ``X [N, n0]``, widened by ``margin`` on every side."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or len(X) == 0:
            raise ValueError(f"Box.around: X has shape {X.shape}; expected [N >= 1, n0]")
        return cls(X.min(0) - margin, X.max(0) + margin)

    @property
    def dim(self) -> int:
        """``n0``."""
        return self.low.size

    @property
    def center(self) -> np.ndarray:
        return 0.5 * (self.low + self.high)

    @property
    def half_width(self) -> np.ndarray:
        return 0.5 * (self.high - self.low)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` uniform points ``[n, n0]``."""
        return rng.uniform(self.low, self.high, size=(int(n), self.dim))

    def affine_range(self, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact-in-real-arithmetic range ``(min, max)`` of ``w_i·x + b_i`` over the box for rows
        ``w [m, n0]``, ``b [m]`` (float rounding only): ``w·c + b ∓ |w|·h``."""
        mid = w @ self.center + b
        rad = np.abs(w) @ self.half_width
        return mid - rad, mid + rad

    def check(self, net: ReluNet3) -> None:
        """Raise ValueError if the box's dimension differs from the network's input width."""
        if self.dim != net.architecture[0]:
            raise ValueError(f"domain has dimension {self.dim}; the network's input width is {net.architecture[0]}")


def random_network(architecture, rng: np.random.Generator, scale: float = 1.0) -> ReluNet3:
    """A Gaussian network: weights ``N(0, scale²/fan_in)``, biases ``N(0, scale²)``.

    Random Gaussian parameters often land in lower strata (dead or always-active units); report
    the stratum with any number computed at them.

    Raises:
        ValueError: architecture not four positive widths.
    """
    arch = tuple(int(n) for n in architecture)
    if len(arch) != 4 or min(arch) < 1:
        raise ValueError(f"architecture {architecture!r}: need 4 positive widths (n0, n1, n2, n3)")
    n0, n1, n2, n3 = arch
    g = lambda *s: rng.normal(size=s)  # noqa: E731
    return ReluNet3(scale * g(n1, n0) / np.sqrt(n0), scale * g(n1), scale * g(n2, n1) / np.sqrt(n1), scale * g(n2),
                    scale * g(n3, n2) / np.sqrt(n2), scale * g(n3))


def to_sequential(net: ReluNet3, dtype=None):
    """``torch.nn.Sequential(Linear, ReLU, Linear, ReLU, Linear)`` holding θ (default float64).

    Source: torch's ``Linear`` stores ``weight [out, in]``, the convention used here.
    """
    import torch
    from torch import nn

    dtype = torch.float64 if dtype is None else dtype
    n0, n1, n2, n3 = net.architecture
    seq = nn.Sequential(nn.Linear(n0, n1), nn.ReLU(), nn.Linear(n1, n2), nn.ReLU(), nn.Linear(n2, n3)).to(dtype)
    with torch.no_grad():
        for lin, (W, b) in zip((seq[0], seq[2], seq[4]), ((net.W1, net.b1), (net.W2, net.b2), (net.W3, net.b3))):
            lin.weight.copy_(torch.as_tensor(np.array(W), dtype=dtype))
            lin.bias.copy_(torch.as_tensor(np.array(b), dtype=dtype))
    return seq


def from_sequential(seq) -> ReluNet3:
    """θ from ``Sequential(Linear, ReLU, Linear, ReLU, Linear)`` (weights copied as float64).

    Raises:
        ValueError: any other layer pattern (naming the layers found), a Linear without bias, or
            non-finite weights. Leaky-ReLU and other activations are not supported.
    """
    from torch import nn

    mods = list(seq.children()) if isinstance(seq, nn.Module) else list(seq)
    kinds = [type(m).__name__ for m in mods]
    pattern = ["Linear", "ReLU", "Linear", "ReLU", "Linear"]
    if kinds != pattern or not all(isinstance(m, t) for m, t in zip(mods, (nn.Linear, nn.ReLU) * 2 + (nn.Linear,))):
        raise ValueError(f"layers {kinds}: a three-layer ReLU network is exactly {pattern}")
    arrays = []
    for i, lin in enumerate(mods[::2]):
        if lin.bias is None:
            raise ValueError(f"Linear layer {i + 1} has no bias; bias-free networks have a different symmetry group")
        arrays += [lin.weight.detach().cpu().double().numpy(), lin.bias.detach().cpu().double().numpy()]
    return ReluNet3(*arrays)
