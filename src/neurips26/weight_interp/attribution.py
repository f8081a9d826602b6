"""Per-weight effects over token positions: gradient × weight attribution for many weights from
one forward and backward pass, and exact ablation (zero or mean) to check it.

For an edge ``w = W[i, j]`` of a linear map ``y_t = W x_t`` (torch ``[out, in]`` layout), its
contribution to ``y_{t,i}`` is ``c_t = W_ij x_{t,j}``. Removing it at position ``t`` changes the
window's summed loss ``L = Σ_s loss_s`` by, to first order,

    ΔL_t ≈ −A_t,   A_t = W_ij · x_{t,j} · ∂L/∂y_{t,i}                      (zero ablation)
    ΔL_t ≈ −A_t,   A_t = W_ij · (x_{t,j} − μ_j) · ∂L/∂y_{t,i}              (mean ablation, μ = E[x_j])

``|A_t|`` is the weight's importance at token ``t``. One backward pass gives ``x`` and
``∂L/∂y`` of every hooked matrix, so the cost per additional weight is a gather and a product.

Source: inferred: the standard first-order (attribution-patching) estimate of an edge ablation;
the abstract asks "when a given weight matters", which we read as per-token importance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["WeightRef", "linear_modules", "weight_value", "ActivationCache", "capture", "attributions",
           "ablation_effects", "sample_nonzero_weights", "ZeroWeightError"]


class ZeroWeightError(ValueError):
    """The requested weight is zero (pruned): it has no effect to explain."""


@dataclass(frozen=True, order=True)
class WeightRef:
    """One weight: ``module`` (a name from ``model.named_modules()``), ``row`` i (output unit) and
    ``col`` j (input unit) in torch's ``[out, in]`` layout (for a GPT-2 ``Conv1D`` too).

    Raises:
        TypeError: a non-integer row or column (numpy integers are accepted and converted)."""

    module: str
    row: int
    col: int

    def __post_init__(self) -> None:
        import numbers

        if not isinstance(self.module, str):
            raise TypeError(f"WeightRef.module={self.module!r}; must be a module name (str)")
        for name in ("row", "col"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError(f"WeightRef.{name}={v!r}; must be an integer index")
            object.__setattr__(self, name, int(v))              # numpy ints become plain ints

    def __str__(self) -> str:
        return f"{self.module}[{self.row},{self.col}]"


def _is_conv1d(m: nn.Module) -> bool:
    return type(m).__name__ == "Conv1D" and hasattr(m, "nf")


def linear_modules(model: nn.Module) -> dict[str, nn.Module]:
    """``name -> module`` of every ``nn.Linear`` and GPT-2 ``Conv1D`` in ``model`` (a
    :class:`~.model.SparseGPT` gives its :meth:`matrices`)."""
    if hasattr(model, "matrices"):
        return model.matrices()
    return {n: m for n, m in model.named_modules() if isinstance(m, nn.Linear) or _is_conv1d(m)}


def _weight_out_in(m: nn.Module) -> torch.Tensor:
    """The module's weight in ``[out, in]`` layout (a view for Conv1D: its weight is ``[in, out]``)."""
    return m.weight.t() if _is_conv1d(m) else m.weight


def weight_value(model: nn.Module, ref: WeightRef) -> float:
    """``W[row, col]`` of the referenced matrix.

    Raises:
        KeyError: unknown module (lists the allowed names).
        IndexError: row or column out of range (names the shape).
    """
    mods = linear_modules(model)
    if ref.module not in mods:
        raise KeyError(f"module {ref.module!r} is not a weight matrix; allowed: {sorted(mods)}")
    W = _weight_out_in(mods[ref.module])
    if not (0 <= ref.row < W.shape[0] and 0 <= ref.col < W.shape[1]):
        raise IndexError(f"{ref}: index out of range for a matrix of shape [out={W.shape[0]}, in={W.shape[1]}]")
    return float(W[ref.row, ref.col].detach())


@dataclass
class ActivationCache:
    """Inputs and output gradients of hooked matrices over a set of windows.

    Attributes:
        x: ``module -> float32 [N·T, in]`` inputs at every position.
        g: ``module -> float32 [N·T, out]`` gradient of the summed loss w.r.t. the output.
        mean_x: ``module -> float32 [in]`` mean input (for mean ablation).
        loss: float32 ``[N, T]`` per-token loss; tokens: int64 ``[N, T + 1]`` the windows.
    """

    x: dict[str, torch.Tensor]
    g: dict[str, torch.Tensor]
    mean_x: dict[str, torch.Tensor]
    loss: np.ndarray
    tokens: np.ndarray


def _token_losses(logits_fn, windows: torch.Tensor) -> torch.Tensor:
    logits = logits_fn(windows[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1),
                           reduction="none").view(windows.shape[0], -1)


def capture(model: nn.Module, windows: np.ndarray, modules: list[str] | None = None, batch: int = 128,
            logits_fn=None) -> ActivationCache:
    """One forward and backward pass per batch, recording each hooked matrix's input ``x`` and the
    gradient ``∂L/∂y`` of its output, with ``L`` the summed next-token loss of each window.

    Args:
        model: a :class:`~.model.SparseGPT` or any causal LM (``logits_fn`` maps ids to logits).
        windows: int64 ``[N, T + 1]``.
        modules: names to hook (default: all of :func:`linear_modules`).

    Raises:
        KeyError: an unknown module name (lists the allowed ones).
    """
    from .model import logits_function

    logits_fn = logits_fn or logits_function(model)
    mods = linear_modules(model)
    names = list(mods) if modules is None else list(modules)
    for n in names:
        if n not in mods:
            raise KeyError(f"module {n!r} is not a weight matrix; allowed: {sorted(mods)}")
    xs = {n: [] for n in names}
    gs = {n: [] for n in names}
    losses = []
    model.eval()
    dev = next(model.parameters()).device
    for i in range(0, len(windows), batch):
        w = torch.as_tensor(windows[i:i + batch]).to(dev)
        outs: dict[str, torch.Tensor] = {}
        hooks = []
        for n in names:
            def fwd(mod, inp, out, n=n):
                xs[n].append(inp[0].detach().reshape(-1, inp[0].shape[-1]).cpu())
                out.retain_grad()
                outs[n] = out
            hooks.append(mods[n].register_forward_hook(fwd))
        try:
            with torch.enable_grad():
                tl = _token_losses(logits_fn, w)
                model.zero_grad(set_to_none=True)
                tl.sum().backward()
        finally:
            for h in hooks:
                h.remove()
        for n in names:
            gs[n].append(outs[n].grad.detach().reshape(-1, outs[n].shape[-1]).cpu())
        losses.append(tl.detach().cpu().numpy())
    model.zero_grad(set_to_none=True)
    x = {n: torch.cat(v) for n, v in xs.items()}
    return ActivationCache(x, {n: torch.cat(v) for n, v in gs.items()}, {n: v.mean(0) for n, v in x.items()},
                           np.concatenate(losses), np.asarray(windows))


def attributions(model: nn.Module, cache: ActivationCache, refs: list[WeightRef],
                 ablation: str = "zero", mean_x: dict[str, torch.Tensor] | None = None) -> np.ndarray:
    """Gradient × weight attribution ``A [N, T, n_refs]`` (float32) of each weight at each token.

    ``−A`` estimates the change of the window's summed loss when the weight is ablated at that
    position only (see module docstring).

    Args:
        mean_x: for ``ablation="mean"``, the mean inputs to ablate to (``module -> [in]``);
            default ``cache.mean_x`` (this cache's own windows). Held-out windows must pass the
            explain windows' means, so that importance means the same ablation on both splits.

    Raises:
        ValueError: unknown ``ablation`` (allowed: zero, mean).
        ZeroWeightError: a referenced weight is zero.
        KeyError / IndexError: as :func:`weight_value`.
    """
    if ablation not in ("zero", "mean"):
        raise ValueError(f"ablation={ablation!r}; allowed: zero, mean")
    N, T = cache.loss.shape
    out = np.empty((N, T, len(refs)), dtype=np.float32)
    mods = linear_modules(model)
    by_mod: dict[str, list[int]] = {}
    for k, r in enumerate(refs):
        w = weight_value(model, r)
        if w == 0.0:
            raise ZeroWeightError(f"weight {r} is zero (pruned); only nonzero weights can be explained")
        if r.module not in cache.x:
            raise KeyError(f"module {r.module!r} was not captured; captured: {sorted(cache.x)}")
        by_mod.setdefault(r.module, []).append(k)
    with torch.no_grad():
        for name, ks in by_mod.items():
            W = _weight_out_in(mods[name]).detach().cpu()
            I = torch.tensor([refs[k].row for k in ks])
            J = torch.tensor([refs[k].col for k in ks])
            x = cache.x[name][:, J]
            if ablation == "mean":
                x = x - (cache.mean_x if mean_x is None else mean_x)[name][J]
            a = W[I, J] * x * cache.g[name][:, I]          # A_t = W_ij · x_{t,j} · ∂L/∂y_{t,i}
            out[:, :, ks] = a.reshape(N, T, len(ks)).float().numpy()
    return out


@torch.no_grad()
def ablation_effects(model: nn.Module, windows: np.ndarray, ref: WeightRef, ablation: str = "zero",
                     per_position: bool = True, mean_x: torch.Tensor | None = None, logits_fn=None,
                     clean: torch.Tensor | None = None) -> np.ndarray:
    """Exact change of each window's summed loss when ``ref`` is ablated.

    Args:
        per_position: ``True``: ablate at one position at a time, returning ``ΔL [N, T]`` (one
            forward per window and position, batched as ``T`` copies); ``False``: ablate at every
            position at once, returning ``ΔL [N]``.
        ablation: ``zero`` (remove ``W_ij x_j``) or ``mean`` (replace ``x_j`` by ``mean_x[j]``,
            which must then be given).
        clean: the windows' unablated summed losses ``[N]`` when the caller already has them
            (one forward saved per call; they must come from the same model and windows).

    Raises:
        ValueError: unknown ablation, or ``mean`` without ``mean_x``.
        ZeroWeightError, KeyError, IndexError: as :func:`attributions`.
    """
    from .model import logits_function

    if ablation not in ("zero", "mean"):
        raise ValueError(f"ablation={ablation!r}; allowed: zero, mean")
    if ablation == "mean" and mean_x is None:
        raise ValueError("mean ablation needs mean_x (the module's mean input, e.g. ActivationCache.mean_x)")
    w = weight_value(model, ref)
    if w == 0.0:
        raise ZeroWeightError(f"weight {ref} is zero (pruned); nothing to ablate")
    logits_fn = logits_fn or logits_function(model)
    mod = linear_modules(model)[ref.module]
    base_x = 0.0 if ablation == "zero" else float(mean_x[ref.col])
    dev = next(model.parameters()).device
    W = torch.as_tensor(np.asarray(windows)).to(dev)
    N, T = W.shape[0], W.shape[1] - 1
    clean = _token_losses(logits_fn, W).sum(1) if clean is None else clean
    state = {}

    def hook(m, inp, out):
        delta = w * (inp[0][..., ref.col] - base_x) * state["mask"]      # the edge's contribution
        out = out.clone()
        out[..., ref.row] -= delta
        return out

    h = mod.register_forward_hook(hook)
    try:
        if not per_position:
            state["mask"] = torch.ones(N, T, device=dev)
            return (_token_losses(logits_fn, W).sum(1) - clean).cpu().numpy()
        res = np.empty((N, T), dtype=np.float64)
        eye = torch.eye(T, device=dev)
        for n in range(N):
            state["mask"] = eye                                           # copy t ablates position t
            res[n] = (_token_losses(logits_fn, W[n].expand(T, -1)).sum(1) - clean[n]).cpu().numpy()
        return res
    finally:
        h.remove()


def sample_nonzero_weights(model: nn.Module, n: int, rng: np.random.Generator,
                           modules: list[str] | None = None) -> list[WeightRef]:
    """Sample ``n`` distinct nonzero weights, stratified by matrix (equal share per matrix, rest
    spread uniformly), in a reproducible order.

    Raises:
        ValueError: ``n < 1``, ``modules=[]`` or fewer nonzero weights than ``n``.
        KeyError: a name in ``modules`` that is not a weight matrix (lists the allowed ones).
    """
    if n < 1:
        raise ValueError(f"n={n}; must be >= 1")
    mods = linear_modules(model)
    names = list(mods) if modules is None else list(modules)
    unknown = [m for m in names if m not in mods]
    if unknown:
        raise KeyError(f"modules {unknown} are not weight matrices; allowed: {sorted(mods)}")
    if not names:
        raise ValueError("modules=[]: name at least one weight matrix (or None for all)")
    nz = {name: torch.nonzero(_weight_out_in(mods[name]).detach()).cpu().numpy() for name in names}
    total = sum(len(v) for v in nz.values())
    if total < n:
        raise ValueError(f"asked for {n} weights but the matrices {names} hold {total} nonzeros")
    share = {name: min(len(nz[name]), n // len(names)) for name in names}
    extra = n - sum(share.values())
    order = rng.permutation(len(names))
    while extra > 0:
        for k in order:
            name = names[k]
            if extra and share[name] < len(nz[name]):
                share[name] += 1
                extra -= 1
    refs = []
    for name in names:
        pick = rng.choice(len(nz[name]), size=share[name], replace=False)
        refs += [WeightRef(name, int(i), int(j)) for i, j in nz[name][np.sort(pick)]]
    return refs
