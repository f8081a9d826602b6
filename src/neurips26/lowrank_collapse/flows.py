"""Flows of a vector field: sampling, exact log-density, reverse-KL VI and conditional flow matching.

Model: dx/dt = v_θ(x, t), x(0) = z ~ N(0, I_d), sample x(1).

Log-density (instantaneous change of variables; Chen et al. 2018, "Neural Ordinary Differential
Equations"):

    d log q(x(t))/dt = −tr ∂v_θ/∂x (x(t), t)      ⇒  log q(x(1)) = log N(z; 0, I) − ∫_0^1 tr ∂_x v dt

integrated jointly with x by ``torchdiffeq.odeint`` (or ``odeint_adjoint``, which solves the adjoint
ODE da/dt = −aᵀ ∂_{(x, log q)} f backwards instead of storing the forward graph). The trace is exact
by default: one autograd call per state dimension (cheap for the low-dimensional toys used here).
At d ≳ 100 the Hutchinson estimator (``trace="hutchinson"``; Hutchinson 1989, as used by FFJORD,
Grathwohl et al. 2019) replaces it: tr J ≈ εᵀ J ε with Rademacher ε (E[εεᵀ] = I), one
vector–Jacobian product per evaluation; ε is drawn once per sample and kept over the whole solve,
so the integrated log-density is an unbiased estimate of the exact one (variance 2 Σ_{i≠j} J_ij²
per evaluation for Rademacher probes).

Variational inference by reverse KL (target p̃ known up to a constant):

    L_VI(θ) = E_z[ log q_θ(x(1)) − log p̃(x(1)) ]

Conditional flow matching with straight-line (rectified / optimal-transport) paths (Lipman et al.
2023, "Flow Matching for Generative Modeling"; Liu et al. 2023; Tong et al. 2024):

    x_t = (1 − (1 − σ_min) t) x_0 + t x_1,   u_t = x_1 − (1 − σ_min) x_0,
    L_FM(θ) = E_{t ~ U[0,1], x_0 ~ N(0, I), x_1 ~ data} ‖v_θ(x_t, t) − u_t‖².

Written directly (a few lines) rather than through ``torchcfm``, which pulls torchvision.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

FIXED_GRID_METHODS = ("euler", "midpoint", "rk4")
ADAPTIVE_METHODS = ("dopri5", "bosh3", "adaptive_heun")


class NonFiniteError(FloatingPointError):
    """A loss, log-density or gradient became NaN or ±inf.

    Attributes:
        step: the training step at which it happened (``None`` outside a training loop).
    """

    def __init__(self, message: str, step: int | None = None):
        super().__init__(message if step is None else f"step {step}: {message}")
        self.step = step


class TooManyEvaluationsError(RuntimeError):
    """An adaptive ODE solver exceeded ``max_nfe`` field evaluations (a stiff learned field)."""


def _check_method(method: str) -> None:
    if method not in FIXED_GRID_METHODS + ADAPTIVE_METHODS:
        raise ValueError(f"method={method!r}; allowed: fixed grid {list(FIXED_GRID_METHODS)} "
                         f"or adaptive {list(ADAPTIVE_METHODS)}")


def _time_grid(n_steps: int, method: str, dtype, device) -> torch.Tensor:
    if int(n_steps) != n_steps or n_steps < 1:
        raise ValueError(f"n_steps={n_steps!r}; allowed: an integer >= 1")
    # adaptive solvers choose their own steps; the grid only names the output times
    n = int(n_steps) if method in FIXED_GRID_METHODS else 1
    return torch.linspace(0.0, 1.0, n + 1, dtype=dtype, device=device)


def sample_flow(field: Callable, z: torch.Tensor, n_steps: int = 20, method: str = "euler",
                return_path: bool = False, rtol: float = 1e-5, atol: float = 1e-5) -> torch.Tensor:
    """Integrate dx/dt = v(x, t) from x(0) = z to t = 1 with ``torchdiffeq.odeint``.

    Args:
        field: ``field(t, x) -> (B, d)``.
        z: ``(B, d)`` initial states (usually N(0, I) draws).
        n_steps: steps of a fixed-grid method (ignored by adaptive ones).
        method: ``euler``, ``midpoint``, ``rk4`` (fixed grid) or ``dopri5``, ``bosh3``,
            ``adaptive_heun`` (adaptive, tolerances ``rtol``/``atol``).
        return_path: return the states at every grid time ``(n_steps + 1, B, d)`` instead of x(1).

    Returns:
        x(1) of shape ``(B, d)`` (or the path). Differentiable unless called under ``no_grad``.

    Raises:
        ValueError: unknown method, bad ``n_steps`` or ``z`` not 2-D.
    """
    from torchdiffeq import odeint

    _check_method(method)
    if z.ndim != 2:
        raise ValueError(f"sample_flow: z has shape {tuple(z.shape)}; expected (B, d)")
    t = _time_grid(n_steps, method, z.dtype, z.device)
    opts = {"rtol": rtol, "atol": atol} if method in ADAPTIVE_METHODS else {}
    path = odeint(field, z, t, method=method, **opts)
    return path if return_path else path[-1]


def divergence(v: torch.Tensor, x: torch.Tensor, create_graph: bool = True) -> torch.Tensor:
    """Exact tr ∂v/∂x per sample: Σ_i ∂v_i/∂x_i, the d vector-Jacobian products e_iᵀ ∂v/∂x in one
    batched autograd call (``is_grads_batched``: vmapped over the d unit vectors).

    Args:
        v: ``(B, d)`` field values computed from ``x`` (``(B, d)``, requiring grad) with
            per-sample independence (row b of v depends only on row b of x).
        create_graph: keep the graph so the trace can be differentiated (training).

    Returns:
        ``(B,)`` divergences. Cost: d backward passes, batched (use for small d; at d = 2 and
        width 64 a reverse-KL training step is 1.35× faster than with d separate calls).
    """
    d = x.shape[1]
    eye = torch.eye(d, dtype=x.dtype, device=x.device).unsqueeze(1).expand(d, *x.shape)   # (d, B, d)
    g = torch.autograd.grad(v, x, eye, create_graph=create_graph, retain_graph=True, is_grads_batched=True)[0]
    return torch.diagonal(g, dim1=0, dim2=2).sum(-1)                                       # Σ_i g[i, :, i]


def divergence_hutchinson(v: torch.Tensor, x: torch.Tensor, probes: torch.Tensor,
                          create_graph: bool = True) -> torch.Tensor:
    """Hutchinson estimate of tr ∂v/∂x per sample: mean over probes ε of εᵀ (∂v/∂x) ε.

    Args:
        v: ``(B, d)`` field values computed from ``x`` (``(B, d)``, requiring grad), per-sample
            independent (row b of v depends only on row b of x).
        probes: ``(P, B, d)`` probe vectors with E[ε εᵀ] = I (Rademacher ±1 or N(0, I)); one VJP
            per probe.
        create_graph: keep the graph so the estimate can be differentiated (training).

    Returns:
        ``(B,)`` unbiased estimates of the divergence. Cost: P backward passes (independent of d).

    Raises:
        ValueError: ``probes`` not of shape ``(P, B, d)`` matching ``x``.

    Source: Hutchinson (1989); FFJORD (Grathwohl et al. 2019) for its use in continuous flows.
    """
    if probes.ndim != 3 or probes.shape[1:] != x.shape:
        raise ValueError(f"divergence_hutchinson: probes have shape {tuple(probes.shape)}; expected (P, {x.shape[0]}, "
                         f"{x.shape[1]})")
    out = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
    for eps in probes:
        g = torch.autograd.grad(v, x, eps, create_graph=create_graph, retain_graph=True)[0]   # εᵀ J
        out = out + (g * eps).sum(1)
    return out / probes.shape[0]


TRACE_ESTIMATORS = ("exact", "hutchinson")


class _AugmentedDynamics(nn.Module):
    """f(t, (x, ℓ)) = (v(x, t), −tr ∂_x v(x, t)), with a count of field evaluations; the trace is
    exact or a Hutchinson estimate with probes fixed over the solve."""

    def __init__(self, field: nn.Module, max_nfe: int, probes: torch.Tensor | None = None):
        super().__init__()
        self.field = field
        self.max_nfe = max_nfe
        self.nfe = 0
        self.probes = probes

    def forward(self, t, state):
        x, _ = state
        self.nfe += 1
        if self.nfe > self.max_nfe:
            raise TooManyEvaluationsError(f"the ODE solver needed more than max_nfe={self.max_nfe} field "
                                          "evaluations (stiff learned field?); raise max_nfe, loosen rtol/atol "
                                          "or use a fixed-grid method")
        with torch.enable_grad():
            if not x.requires_grad:
                x = x.detach().requires_grad_(True)
            v = self.field(t, x)
            if self.probes is None:
                div = divergence(v, x, create_graph=True)
            else:
                div = divergence_hutchinson(v, x, self.probes, create_graph=True)
        return v, -div


def standard_normal_log_prob(z: torch.Tensor) -> torch.Tensor:
    """log N(z; 0, I_d) = −‖z‖²/2 − (d/2) log 2π, shape ``(B,)``."""
    return -0.5 * z.pow(2).sum(1) - 0.5 * z.shape[1] * math.log(2 * math.pi)


def _check_trace(trace: str, n_probes: int) -> None:
    if trace not in TRACE_ESTIMATORS:
        raise ValueError(f"trace={trace!r}; allowed: {list(TRACE_ESTIMATORS)} (hutchinson for d >= ~100)")
    if isinstance(n_probes, bool) or int(n_probes) != n_probes or n_probes < 1:
        raise ValueError(f"n_probes={n_probes!r}; allowed: an integer >= 1")


def flow_log_density(field: nn.Module, z: torch.Tensor, n_steps: int = 20, method: str = "euler",
                     adjoint: bool = False, rtol: float = 1e-5, atol: float = 1e-5,
                     max_nfe: int = 10_000, trace: str = "exact", n_probes: int = 1,
                     generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor, int]:
    """x(1) and its model log-density log q(x(1)) by the augmented ODE (exact trace, or an
    unbiased Hutchinson estimate).

    log q(x(1)) = log N(z; 0, I) − ∫_0^1 tr ∂_x v(x(t), t) dt.

    Args:
        field: an ``nn.Module`` ``field(t, x) -> (B, d)`` (a Module so the adjoint can find its
            parameters).
        z: ``(B, d)`` base draws.
        n_steps, method, rtol, atol: as in :func:`sample_flow`.
        adjoint: use ``torchdiffeq.odeint_adjoint`` (memory O(1) in the steps; gradients by the
            backward adjoint ODE).
        max_nfe: cap on field evaluations (forward and, with the adjoint, backward).
        trace: ``"exact"`` (d autograd calls per evaluation) or ``"hutchinson"`` (``n_probes``
            Rademacher probes per sample, drawn once from ``generator`` and kept over the solve:
            log q is then unbiased, with variance falling as 1/n_probes; use at d ≳ 100).

    Returns:
        ``(x1, log_q, nfe)``: ``(B, d)``, ``(B,)``, and the number of field evaluations so far.

    Raises:
        NonFiniteError: if any log-density (or state) is NaN/inf, with the fraction affected.
        TooManyEvaluationsError: an adaptive solver exceeded ``max_nfe``.
        ValueError: bad method/shape; ``field`` not an ``nn.Module`` when ``adjoint=True``.
    """
    from torchdiffeq import odeint, odeint_adjoint

    _check_method(method)
    _check_trace(trace, n_probes)
    if z.ndim != 2:
        raise ValueError(f"flow_log_density: z has shape {tuple(z.shape)}; expected (B, d)")
    if adjoint and not isinstance(field, nn.Module):
        raise ValueError("flow_log_density: adjoint=True needs the field to be a torch.nn.Module (its "
                         f"parameters are the adjoint's), got {type(field).__name__}")
    probes = None
    if trace == "hutchinson":
        bits = torch.randint(0, 2, (int(n_probes), *z.shape), generator=generator, device="cpu")
        probes = (2 * bits - 1).to(dtype=z.dtype, device=z.device)           # Rademacher ±1
    dyn = _AugmentedDynamics(field, max_nfe, probes)
    t = _time_grid(n_steps, method, z.dtype, z.device)
    opts = {"rtol": rtol, "atol": atol} if method in ADAPTIVE_METHODS else {}
    state0 = (z, torch.zeros(z.shape[0], dtype=z.dtype, device=z.device))
    if adjoint:
        xs, ls = odeint_adjoint(dyn, state0, t, method=method, adjoint_params=tuple(field.parameters()), **opts)
    else:
        xs, ls = odeint(dyn, state0, t, method=method, **opts)
    x1 = xs[-1]
    log_q = standard_normal_log_prob(z) + ls[-1]  # ℓ(1) = −∫ tr ∂_x v dt
    bad = ~torch.isfinite(log_q) | ~torch.isfinite(x1).all(1)
    if bad.any():
        raise NonFiniteError(f"model log-density or state non-finite for {int(bad.sum())}/{len(bad)} samples "
                             f"(method={method}, n_steps={n_steps})")
    return x1, log_q, dyn.nfe


def _target_log_prob(target: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    if isinstance(target, (torch.Tensor,)) or type(target).__module__.startswith("numpy"):
        raise TypeError("variational inference by reverse KL needs the target's (unnormalised) log-density, "
                        f"got samples ({type(target).__name__} of shape {tuple(target.shape)}); pass a callable "
                        "x -> log p~(x) or an object with .log_prob, or train on samples with flow matching")
    if hasattr(target, "log_prob") and callable(target.log_prob):
        return target.log_prob
    if callable(target):
        return target
    raise TypeError(f"variational inference by reverse KL needs the target's (unnormalised) log-density: pass a "
                    f"callable x -> log p~(x) or an object with .log_prob; got {type(target).__name__}")


def reverse_kl_loss(field: nn.Module, target: Any, n_samples: int, n_steps: int = 20,
                    generator: torch.Generator | None = None, method: str = "euler", adjoint: bool = False,
                    dtype: torch.dtype | None = None, trace: str = "exact",
                    n_probes: int = 1) -> tuple[torch.Tensor, dict]:
    """Monte Carlo reverse KL up to the target's log-normaliser: mean(log q(x1) − log p̃(x1)).

    Args:
        field: the vector field (``nn.Module``), state dimension d = ``field.dim``.
        target: a callable ``x (B, d) -> log p̃(x) (B,)`` or an object with ``.log_prob``
            (e.g. :class:`~neurips26.lowrank_collapse.targets.GaussianMixture`).
        n_samples: B base draws z ~ N(0, I).
        n_steps, method, adjoint: integration (see :func:`flow_log_density`).
        dtype: of the base draws; default the field's parameter dtype (float32 without parameters).
        trace, n_probes: exact trace or Hutchinson estimate (see :func:`flow_log_density`; the
            probes are drawn from ``generator`` after z).

    Returns:
        ``(loss, info)``; ``info`` has ``x1`` (detached), ``log_q`` (detached) and ``nfe``.

    Raises:
        TypeError: the target has no log-density (samples given instead).
        NonFiniteError: model or target log-density NaN/inf (with the fraction affected); a
            target that is −inf outside its support must be clipped by the caller.
    """
    log_p = _target_log_prob(target)
    d = getattr(field, "dim", None)
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"reverse_kl_loss: field {type(field).__name__} needs an integer .dim >= 1 (the state "
                         f"dimension), got {d!r}")
    _check_trace(trace, n_probes)
    if dtype is None:
        p = next(iter(field.parameters()), None) if isinstance(field, nn.Module) else None
        dtype = p.dtype if p is not None and p.is_floating_point() else torch.float32
    z = torch.randn(int(n_samples), d, generator=generator, dtype=dtype)
    x1, log_q, nfe = flow_log_density(field, z, n_steps=n_steps, method=method, adjoint=adjoint, trace=trace,
                                      n_probes=n_probes, generator=generator)
    lp = log_p(x1)
    if lp.shape != log_q.shape:
        raise ValueError(f"reverse_kl_loss: target log-density has shape {tuple(lp.shape)}; expected ({len(z)},)")
    bad = ~torch.isfinite(lp)
    if bad.any():
        raise NonFiniteError(f"target log-density non-finite for {int(bad.sum())}/{len(lp)} samples")
    loss = (log_q - lp).mean()
    return loss, {"x1": x1.detach(), "log_q": log_q.detach(), "nfe": nfe}


def flow_matching_loss(field: Callable, x1: torch.Tensor, generator: torch.Generator | None = None,
                       sigma_min: float = 0.0, n_times: int = 1) -> torch.Tensor:
    """Conditional flow-matching loss with straight-line paths from N(0, I) to the data.

    x_t = (1 − (1 − σ_min) t) x_0 + t x_1, target u = x_1 − (1 − σ_min) x_0 (Lipman et al. 2023).

    Args:
        field: ``field(t, x)`` with per-sample times ``t`` of shape ``(B,)``.
        x1: ``(B, d)`` data batch.
        sigma_min: width of the path at t = 1 (0 = rectified flow), in [0, 1).
        n_times: independent (x_0, t) draws per data point (each adds one sample-time pair).

    Returns:
        scalar loss (mean over the B·n_times pairs of the squared error summed over d).

    Raises:
        ValueError: ``x1`` not 2-D or non-finite, ``sigma_min`` outside [0, 1), ``n_times < 1``.
    """
    if x1.ndim != 2:
        raise ValueError(f"flow_matching_loss: x1 has shape {tuple(x1.shape)}; expected (B, d)")
    if not 0.0 <= sigma_min < 1.0:
        raise ValueError(f"flow_matching_loss: sigma_min={sigma_min}; allowed: 0 <= sigma_min < 1")
    if int(n_times) != n_times or n_times < 1:
        raise ValueError(f"flow_matching_loss: n_times={n_times!r}; allowed: an integer >= 1")
    if not torch.isfinite(x1).all():
        raise ValueError("flow_matching_loss: the data batch x1 contains NaN or inf")
    if n_times > 1:
        x1 = x1.repeat_interleave(int(n_times), dim=0)
    x0 = torch.randn(x1.shape, generator=generator, dtype=x1.dtype)
    t = torch.rand(x1.shape[0], generator=generator, dtype=x1.dtype)
    xt = (1 - (1 - sigma_min) * t[:, None]) * x0 + t[:, None] * x1
    u = x1 - (1 - sigma_min) * x0
    return (field(t, xt) - u).pow(2).sum(1).mean()


def train(field: nn.Module, loss_fn: Callable[[int], torch.Tensor], steps: int, lr: float = 1e-3,
          callback: Callable[[int, float], None] | None = None, grad_clip: float | None = None) -> list[float]:
    """Adam on ``loss_fn(step)`` for ``steps`` steps; returns the loss per step.

    ``callback(step, loss)`` runs after ``backward()`` and before the optimiser step, so it sees
    this step's gradients and the weights W_step (e.g. :class:`~neurips26.lowrank_collapse.monitor.RankMonitor`).

    Raises:
        NonFiniteError: the loss (or, with ``grad_clip``, the gradient norm) is NaN/inf; the
            message and ``.step`` give the step. Errors raised inside ``loss_fn`` of that class
            are re-raised with the step number.
        ValueError: ``steps < 1`` or ``lr <= 0``.
    """
    if int(steps) != steps or steps < 1:
        raise ValueError(f"train: steps={steps!r}; allowed: an integer >= 1")
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"train: lr={lr!r}; allowed: a finite value > 0")
    opt = torch.optim.Adam(field.parameters(), lr=lr)
    losses = []
    for step in range(int(steps)):
        opt.zero_grad(set_to_none=True)
        try:
            loss = loss_fn(step)
        except NonFiniteError as err:
            raise NonFiniteError(str(err), step) from err
        value = float(loss.detach())
        if not math.isfinite(value):
            raise NonFiniteError(f"loss is {value}", step)
        loss.backward()
        if grad_clip is not None:
            norm = float(torch.nn.utils.clip_grad_norm_(field.parameters(), grad_clip))
            if not math.isfinite(norm):
                raise NonFiniteError(f"gradient norm is {norm}", step)
        if callback is not None:
            callback(step, value)
        opt.step()
        losses.append(value)
    return losses
