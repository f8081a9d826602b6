"""Neural vector fields v_θ(x, t) for continuous-time generative models.

A field maps a state x ∈ R^d and a time t ∈ [0, 1] to a velocity in R^d; the flow
dx/dt = v_θ(x, t) from x(0) = z ~ N(0, I) to x(1) defines the model (neural ODE / continuous
normalising flow: Chen et al. 2018, "Neural Ordinary Differential Equations"; Grathwohl et al. 2019,
"FFJORD"; flow matching: Lipman et al. 2023).

The field is a plain MLP on the concatenation [x, t]: its weight matrices W_l are the objects whose
gradient rank the diagnostics measure (each ``torch.nn.Linear`` is one layer).
"""

from __future__ import annotations

import torch
from torch import nn

ACTIVATIONS = {"tanh": nn.Tanh, "silu": nn.SiLU, "softplus": nn.Softplus, "elu": nn.ELU}


class MLPVectorField(nn.Module):
    """v_θ(x, t) = W_L σ(… σ(W_1 [x, t] + b_1) …) + b_L, an MLP on the state and the time.

    Args:
        dim: state dimension d (≥ 1).
        width: hidden width (≥ 1).
        depth: number of hidden layers (≥ 1); the field has ``depth + 1`` Linear layers.
        activation: one of ``tanh``, ``silu``, ``softplus``, ``elu`` (smooth, so the Jacobian
            trace used by the log-density is differentiable; ReLU is not offered for that reason).
        time_input: feed t as an extra input (default). Without it the field is autonomous.
        final_scale: the last layer's weights are multiplied by this at init (small values start
            the flow close to the identity map).

    Call: ``field(t, x)`` with ``t`` a scalar tensor/float or a ``(B,)``/``(B, 1)`` tensor and
    ``x`` of shape ``(B, d)`` (float32 or float64) returns ``(B, d)`` — the argument order of
    ``torchdiffeq.odeint``.

    Raises:
        ValueError: non-positive sizes or an unknown activation (names the allowed ones).

    Source: inferred (the paper's architectures are unknown; an MLP on [x, t] is the common toy
    field of neural-ODE and flow-matching papers).
    """

    def __init__(self, dim: int, width: int = 64, depth: int = 2, activation: str = "tanh",
                 time_input: bool = True, final_scale: float = 1.0):
        super().__init__()
        for name, value in (("dim", dim), ("width", width), ("depth", depth)):
            if int(value) != value or value < 1:
                raise ValueError(f"MLPVectorField: {name}={value!r}; allowed: an integer >= 1")
        if activation not in ACTIVATIONS:
            raise ValueError(f"MLPVectorField: activation={activation!r}; allowed: {sorted(ACTIVATIONS)}")
        self.dim, self.width, self.depth, self.time_input = int(dim), int(width), int(depth), bool(time_input)
        sizes = [self.dim + int(self.time_input)] + [self.width] * self.depth + [self.dim]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(ACTIVATIONS[activation]())
        self.net = nn.Sequential(*layers)
        with torch.no_grad():
            self.net[-1].weight.mul_(final_scale)
            self.net[-1].bias.mul_(final_scale)

    @property
    def linear_layers(self) -> list[nn.Linear]:
        """The field's Linear layers, input to output (W_1 … W_L)."""
        return [m for m in self.net if isinstance(m, nn.Linear)]

    def forward(self, t, x: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"MLPVectorField: x has shape {tuple(x.shape)}; expected (B, {self.dim})")
        if not self.time_input:
            return self.net(x)
        t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
        t = t.reshape(-1, 1).expand(x.shape[0], 1) if t.numel() == 1 else t.reshape(x.shape[0], 1)
        return self.net(torch.cat([x, t], dim=1))


class LinearVectorField(nn.Module):
    """v(x) = A x, the linear field whose flow map is x(1) = e^A z (so q = N(0, e^A e^{Aᵀ})).

    Args:
        dim: d ≥ 1.
        init: optional ``(d, d)`` initial A (default zeros — the case where the low-rank
            invariance of reverse-KL VI is exact).

    Call: ``field(t, x)`` with ``x`` of shape ``(B, d)`` returns ``x Aᵀ``. ``dim`` is the state
    dimension (read by :func:`~neurips26.lowrank_collapse.flows.reverse_kl_loss`); A is float64
    unless ``init`` has another dtype.

    Source: inferred (the linear-field case is the solvable model in which a rank bound on the
    VI gradient can be stated exactly).
    """

    def __init__(self, dim: int, init: torch.Tensor | None = None):
        super().__init__()
        if int(dim) != dim or dim < 1:
            raise ValueError(f"LinearVectorField: dim={dim!r}; allowed: an integer >= 1")
        A = torch.zeros(dim, dim, dtype=torch.float64) if init is None else torch.as_tensor(init).clone()
        if A.shape != (dim, dim):
            raise ValueError(f"LinearVectorField: init has shape {tuple(A.shape)}; expected ({dim}, {dim})")
        self.dim = int(dim)
        self.A = nn.Parameter(A)

    def forward(self, t, x: torch.Tensor) -> torch.Tensor:
        return x @ self.A.T
