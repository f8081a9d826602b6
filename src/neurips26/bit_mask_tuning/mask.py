"""The deletion mask: a learnable keep/zero mask over every MLP gate projection.

    W'_gate = W_gate ⊙ (1 − Z),   Z ∈ {0, 1}^shape,   ‖Z‖₀ ≤ k = ρ·N            (abstract: binary keep/zero mask)

The base weight ``W_gate`` is never written: the mask is a :mod:`torch.nn.utils.parametrize`
parametrisation whose only trainable tensor is a real score ``S`` of the weight's shape. ``Z``
marks the top-k scores over *all* gate projections together that also exceed a threshold τ,
so ``S₀ = 0 ≤ τ`` deletes nothing (start from the identity).

Estimators (inferred from predecessors; the paper's estimator was not readable):

* ``"ste"`` (default) — straight-through: forward uses the hard ``Z``, backward passes
  ``∂L/∂S := ∂L/∂Z = −(∂L/∂W') ⊙ W``. Gradient descent on ``S`` therefore raises the score of
  a weight when ``g·w > 0``, i.e. where zeroing it lowers the loss to first order. Source:
  the straight-through top-k score mask of Mask Fine-Tuning (Zhang et al. 2025, arXiv
  2503.22764) and edge-popup (Ramanujan et al. 2020), turned into a *deletion* mask.
* ``"hard_concrete"`` — ``S`` are log-α of Louizos et al. (2018) hard-concrete gates
  ``z̃ = clip(σ((log u − log(1−u) + log α)/β)(ζ−γ) + γ, 0, 1)``, a fresh ``u`` per optimiser
  step in train mode, the deterministic ``σ(log α)(ζ−γ)+γ`` in eval mode; the hard mask is the
  top-k of ``z̃`` among ``z̃ > ½``; the straight-through gradient flows through ``z̃``.

Budget ``k = ⌊ρ·N⌋`` with N stated: ``denominator="model"`` (all parameters of the base model,
the abstract's "fewer than 0.05 % of its weights") or ``"gate"`` (gate-projection entries only).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Iterator, Literal

import torch
from torch import nn
from torch.nn.utils import parametrize

Estimator = Literal["ste", "hard_concrete"]
Denominator = Literal["model", "gate"]

#: Hard-concrete stretch limits and temperature (Louizos, Welling & Kingma 2018, their defaults).
HC_GAMMA, HC_ZETA, HC_BETA = -0.1, 1.1, 2.0 / 3.0


class NoGateProjectionError(ValueError):
    """The model has no (unfused, unquantised) MLP gate projection to mask."""


class BudgetError(ValueError):
    """ρ or the resulting budget k is outside what the model allows."""


# --------------------------------------------------------------------------- finding the gates

_QUANTISED_TYPES = ("Linear4bit", "Linear8bitLt", "QuantLinear", "QLinear", "FP8Linear", "HQQLinear")
#: Weight dtypes a mask may be attached to (FP8 and integer weights are quantised storage).
_DENSE_FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def find_gate_projections(model: nn.Module, target: str = "mlp.gate_proj") -> dict[str, nn.Linear]:
    """All ``nn.Linear`` modules whose qualified name ends with ``target`` (exact path suffix).

    Args:
        model: any torch module (a transformers causal LM).
        target: the path suffix to match; ``"mlp.gate_proj"`` matches Llama/Qwen2/Mistral/Gemma
            blocks and never an MoE router ``mlp.gate``.

    Returns:
        ``{qualified name: module}`` in model order, at least one entry.

    Raises:
        NoGateProjectionError: nothing matches (the message lists the MLP-like modules that were
            found, e.g. GPT-2's ``c_fc``), a match is a fused ``gate_up_proj``, a match is
            quantised (4/8-bit or FP8 weights: the mask's indices refer to a dense float
            tensor), or a match is not an ``nn.Linear`` (or transformers' ``Conv1D``, GPT-2's
            ``mlp.c_fc``) with a float32/bfloat16/float16/float64 weight matrix.

    Source: inferred: the abstract masks "the gate projection of transformer blocks"; the
    module names are those of the transformers implementations.
    """
    found: dict[str, nn.Linear] = {}
    fused, mlp_like = [], []
    for name, mod in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("gate_up_proj",):
            fused.append(name)
        if isinstance(mod, nn.Linear) or type(mod).__name__ in _QUANTISED_TYPES or leaf in ("c_fc", "fc1", "fc_in",
                                                                                              "up_proj", "dense_h_to_4h"):
            if ".mlp." in f".{name}." or "mlp" in name or "ffn" in name or "feed_forward" in name:
                mlp_like.append(f"{name} ({type(mod).__name__})")
        if name == target or name.endswith("." + target):
            kind = type(mod).__name__
            # transformers' Conv1D (GPT-2's c_fc/c_proj) is a dense linear map with a transposed weight
            dense = isinstance(mod, nn.Linear) or (kind == "Conv1D" and isinstance(getattr(mod, "weight", None),
                                                                                    torch.Tensor))
            if kind in _QUANTISED_TYPES or not dense:
                raise NoGateProjectionError(f"{name} is a {kind}, not a dense nn.Linear: quantised or custom gate "
                                            "projections are refused (dequantise the model first; mask indices "
                                            "refer to the dense float weight)")
            if mod.weight.dtype not in _DENSE_FLOAT_DTYPES or mod.weight.dim() != 2:
                raise NoGateProjectionError(f"{name}.weight has dtype {mod.weight.dtype} and shape "
                                            f"{tuple(mod.weight.shape)}: quantised (integer/FP8) or non-matrix "
                                            "weights are refused; load the model in float32/bfloat16/float16")
            found[name] = mod
    if fused and not found:
        raise NoGateProjectionError(f"fused gate/up projections found ({fused[:4]}{' …' if len(fused) > 4 else ''}): "
                                    "masking a slice of a fused gate_up_proj is not supported; unfuse the model "
                                    "or pass target= naming an unfused projection")
    if not found:
        leaf = target.rsplit(".", 1)[-1]
        suffixed = [n for n, _ in model.named_modules() if n == leaf or n.endswith("." + leaf)]
        if suffixed and leaf != target:
            raise NoGateProjectionError(f"no module path ends with {target!r}, but {len(suffixed)} end with {leaf!r} "
                                        f"(e.g. {suffixed[:3]}; an MoE's experts or shared expert?): pass "
                                        f"target={leaf!r} to mask all of them, or a longer exact suffix")
        seen = mlp_like[:8] or sorted({type(m).__name__ for m in model.modules()})[:12]
        raise NoGateProjectionError(f"no module path ends with {target!r}: this model has no gated MLP (found "
                                    f"{seen}); BMT masks the gate projection of gated (SwiGLU/GeGLU) MLPs. "
                                    "Pass target= an existing projection (e.g. 'mlp.c_fc') to mask another one")
    return found


def budget(rho: float, n_model: int, n_gate: int, denominator: Denominator = "model") -> int:
    """The deletion budget ``k = ⌊ρ·N⌋``.

    Args:
        rho: the deleted fraction ρ, strictly between 0 and 1.
        n_model: parameter count of the whole base model.
        n_gate: number of gate-projection entries (the maskable ones).
        denominator: ``"model"`` (N = n_model, the abstract's reading) or ``"gate"`` (N = n_gate).

    Returns:
        k, an int with ``1 ≤ k ≤ n_gate``.

    Raises:
        BudgetError: ρ not in (0, 1) or not finite, an unknown denominator, k < 1, or k > n_gate.
    """
    if not isinstance(rho, numbers.Real) or isinstance(rho, bool) or not math.isfinite(rho) or not 0 < rho < 1:
        raise BudgetError(f"rho={rho!r}: the deleted fraction must be a number strictly between 0 and 1 "
                          "(e.g. 0.0005 for 0.05 %)")
    if denominator not in ("model", "gate"):
        raise BudgetError(f"denominator={denominator!r}; allowed: 'model' (all parameters) or 'gate' "
                          "(gate-projection entries)")
    n = n_model if denominator == "model" else n_gate
    k = int(math.floor(float(rho) * n))
    if k < 1:
        raise BudgetError(f"rho={rho} of N={n} ({denominator}) gives k={k} < 1 deletion; raise rho")
    if k > n_gate:
        raise BudgetError(f"rho={rho} of N={n} ({denominator}) gives k={k} > {n_gate} gate-projection entries")
    return k


# --------------------------------------------------------------------------- the parametrisation

class DeletionMask(nn.Module):
    """Parametrisation ``W ↦ W ⊙ (1 − Z)`` of one gate-projection weight.

    Attributes:
        scores: trainable ``S`` (float32, the weight's shape); log-α for ``hard_concrete``.
        deleted: bool buffer, the current hard ``Z`` (set by :meth:`BitMask.refresh`).

    The forward returns a tensor of the weight's dtype; entries with ``Z = 1`` are exactly
    ``+0.0`` (also for a negative or infinite base weight: never ``−0.0`` or ``inf·0 = NaN``), the
    others bitwise equal to the base weight — the same bytes :func:`~.codec.apply_mask` writes.
    """

    def __init__(self, owner: "BitMask", shape: torch.Size, init: float):
        super().__init__()
        self.scores = nn.Parameter(torch.full(tuple(shape), float(init)))
        self.register_buffer("deleted", torch.zeros(tuple(shape), dtype=torch.bool), persistent=False)
        self.register_buffer("noise", torch.empty(0), persistent=False)
        object.__setattr__(self, "_owner", owner)  # not a submodule (avoids a reference cycle in modules())

    def soft_gate(self) -> torch.Tensor:
        """The differentiable deletion signal: ``S`` (ste) or the hard-concrete gate ``z̃`` (in [0, 1])."""
        if self._owner.estimator == "ste":
            return self.scores
        la = self.scores
        if self.training and self.noise.numel():
            u = self.noise
            s = torch.sigmoid((torch.log(u) - torch.log1p(-u) + la) / HC_BETA)       # relaxed Bernoulli
        else:
            s = torch.sigmoid(la)                                                      # its deterministic mean
        return torch.clamp(s * (HC_ZETA - HC_GAMMA) + HC_GAMMA, 0.0, 1.0)              # stretch and clip

    def forward(self, weight: torch.Tensor) -> torch.Tensor:
        """``W ⊙ (1 − Z)`` with the straight-through term when scores need gradients (same shape/dtype)."""
        self._owner.refresh_if_stale()
        out = weight.masked_fill(self.deleted, 0.0)                                    # W' = W ⊙ (1 − Z), deleted = +0.0
        if self.scores.requires_grad and torch.is_grad_enabled():
            # straight-through: the value is unchanged (the added term is exactly ±0, and x − ±0 = x,
            # +0 − ±0 = +0), the gradient is ∂W'/∂g = −W (0 where W is not finite)
            g = self.soft_gate()
            out = out - (g - g.detach()).to(weight.dtype) * torch.nan_to_num(weight, posinf=0.0, neginf=0.0)
        return out


def top_k_stable(values: torch.Tensor, k: int) -> torch.Tensor:
    """Bool mask of the first ``k`` entries of a stable descending sort of the 1-D ``values``
    (ties broken by position), without the full sort: every entry above the k-th largest value,
    then the first positions equal to it. Equals ``sort(values, descending=True, stable=True)
    .indices[:k]`` as a set (tests/bit_mask_tuning/test_fast_paths.py); ``values`` without NaN."""
    t = torch.topk(values, k, sorted=False).values.min()                               # the k-th largest
    chosen = values > t
    need = k - int(chosen.sum())
    if need > 0:
        chosen[torch.nonzero(values == t).flatten()[:need]] = True
    return chosen


@dataclass
class BitMask:
    """A deletion mask attached to a model (returned by :func:`attach_bit_mask`).

    Attributes:
        model: the model carrying the parametrisations.
        names: qualified names of the masked modules (``model.layers.0.mlp.gate_proj`` …).
        k: the budget (at most k entries are zero at any time).
        rho, denominator, n_model, n_gate: how k was computed (N = n_model or n_gate).
        estimator: ``"ste"`` or ``"hard_concrete"``.
        threshold: τ — a score must exceed it to be deleted (ste); ½ on z̃ for hard-concrete.
    """

    model: nn.Module
    names: list[str]
    k: int
    rho: float
    denominator: str
    n_model: int
    n_gate: int
    estimator: str
    threshold: float
    masks: list[DeletionMask] = field(default_factory=list, repr=False)
    _key: tuple = field(default=(), repr=False)
    _seed: int = 0
    _refreshes: int = 0

    def parameters(self) -> Iterator[nn.Parameter]:
        """The trainable score tensors (hand these to the optimiser)."""
        return (m.scores for m in self.masks)

    def modules(self) -> dict[str, nn.Module]:
        """``{name: masked nn.Linear}``."""
        mods = dict(self.model.named_modules())
        return {n: mods[n] for n in self.names}

    def refresh_if_stale(self) -> None:
        """Recompute Z when a score tensor changed (its version counter moved) or the mode changed.

        Raises:
            RuntimeError: the mask was detached (:meth:`detach`).
        """
        if not self.masks:
            raise RuntimeError("this BitMask was detached (detach() removed its parametrisations); its deletions "
                               "live on only in the baked weights")
        if self._state_key() != self._key:
            self.refresh()

    def _state_key(self) -> tuple:
        """What Z depends on: the score versions, and for hard-concrete also the mode (ste's Z is
        the same in train and eval mode, so a mode switch alone does not re-sort)."""
        key = tuple(m.scores._version for m in self.masks)
        return key + (self.masks[0].training,) if self.estimator != "ste" else key

    @torch.no_grad()
    def refresh(self) -> None:
        """Recompute the hard masks: the global top-k of the soft gates above the threshold.

        Ties are broken by position (stable sort), so the result is deterministic. Cost: one
        sort over all gate entries (fine up to ~10⁸ entries; at 8B scale call it every n steps).
        """
        if self.estimator == "hard_concrete" and self.masks[0].training:
            gen = torch.Generator().manual_seed(self._seed + self._refreshes)
            for m in self.masks:
                m.noise = torch.rand(m.scores.shape, generator=gen).clamp_(1e-6, 1 - 1e-6).to(m.scores.device)
        self._refreshes += 1
        gates = [m.soft_gate().detach().float().flatten() for m in self.masks]
        flat = torch.cat(gates)
        eligible = flat > self.threshold
        chosen = torch.zeros_like(eligible)
        n_el = int(eligible.sum())
        if n_el <= self.k:
            chosen = eligible
        else:
            chosen = top_k_stable(torch.where(eligible, flat, torch.full_like(flat, -math.inf)), self.k)
        start = 0
        for m, g in zip(self.masks, gates):
            m.deleted.copy_(chosen[start:start + g.numel()].view_as(m.deleted))
            start += g.numel()
        self._key = self._state_key()

    def deleted(self) -> dict[str, torch.Tensor]:
        """``{name: bool Z}`` (current hard masks, after a refresh)."""
        self.refresh_if_stale()
        return {n: m.deleted.clone() for n, m in zip(self.names, self.masks)}

    def n_deleted(self) -> int:
        """‖Z‖₀ over all gate projections."""
        self.refresh_if_stale()
        return int(sum(int(m.deleted.sum()) for m in self.masks))

    def l0_penalty(self) -> torch.Tensor:
        """Expected number of open hard-concrete gates, ``Σ σ(log α − β log(−γ/ζ))`` (Louizos et al.
        2018); for ``ste`` the sum of positive scores. A scalar tensor with gradient."""
        if self.estimator == "hard_concrete":
            shift = HC_BETA * math.log(-HC_GAMMA / HC_ZETA)
            return sum(torch.sigmoid(m.scores - shift).sum() for m in self.masks)
        return sum(torch.relu(m.scores).sum() for m in self.masks)

    def base_weights(self) -> dict[str, torch.Tensor]:
        """``{name: base W}`` — the untouched original tensors (views, do not modify)."""
        return {n: mod.parametrizations.weight.original for n, mod in self.modules().items()}

    def detach(self, bake: bool = True) -> None:
        """Remove the parametrisations. ``bake=True`` writes ``W ⊙ (1 − Z)`` into the weights (the
        deletions become permanent); ``bake=False`` restores the base weights."""
        self.refresh_if_stale()
        for mod in self.modules().values():
            parametrize.remove_parametrizations(mod, "weight", leave_parametrized=bake)
        self.masks.clear()


def count_parameters(model: nn.Module) -> int:
    """Number of parameters of the base model (parametrised weights counted once, scores not)."""
    n = 0
    for name, p in model.named_parameters():
        if ".parametrizations." in name and not name.endswith(".original"):
            continue
        n += p.numel()
    return n


def attach_bit_mask(model: nn.Module, rho: float, *, denominator: Denominator = "model",
                    estimator: Estimator = "ste", threshold: float | None = None, target: str = "mlp.gate_proj",
                    freeze_base: bool = True, seed: int = 0) -> BitMask:
    """Attach a deletion mask to every gate projection of ``model`` (in place).

    Args:
        model: a transformers causal LM (or any module with ``…mlp.gate_proj`` linears).
        rho: deleted fraction ρ ∈ (0, 1); ``k = ⌊ρ·N⌋`` (see :func:`budget`).
        denominator: N = ``"model"`` (all base parameters) or ``"gate"`` (gate entries only).
        estimator: ``"ste"`` (scores start at 0) or ``"hard_concrete"``
            (log-α start at −6, threshold ½ on the gate; nothing deleted in eval mode at start).
        threshold: τ; default 0 for ste (a weight is deleted once its accumulated saliency is positive)
            and ½ on the gate for hard-concrete.
        target: module path suffix of the projections to mask.
        freeze_base: set ``requires_grad=False`` on every base parameter (the mask trains alone).
        seed: seed of the hard-concrete noise.

    Returns:
        :class:`BitMask`; its :meth:`BitMask.parameters` are the scores to optimise.

    Raises:
        NoGateProjectionError: see :func:`find_gate_projections`.
        BudgetError: see :func:`budget`; also if the model is already masked.
        ValueError: unknown estimator, or a threshold that would delete weights at the start
            (ste: τ < 0; hard-concrete: τ outside (0, 1)) or is not finite.
    """
    if estimator not in ("ste", "hard_concrete"):
        raise ValueError(f"estimator={estimator!r}; allowed: 'ste' (straight-through) or 'hard_concrete'")
    if threshold is not None:
        ok = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool) and math.isfinite(threshold)
        if not ok or not (threshold >= 0 if estimator == "ste" else 0 < threshold < 1):
            allowed = "a finite τ ≥ 0" if estimator == "ste" else "τ strictly between 0 and 1 (on the gate z̃)"
            raise ValueError(f"threshold={threshold!r} for estimator={estimator!r}; allowed: {allowed} (a lower τ "
                             "would delete weights before any training: the mask must start from the identity)")
    gates = find_gate_projections(model, target)
    for name, mod in gates.items():
        if parametrize.is_parametrized(mod, "weight"):
            raise BudgetError(f"{name}.weight is already parametrised (a mask is attached); detach it first")
    n_model = count_parameters(model)
    n_gate = sum(m.weight.numel() for m in gates.values())
    k = budget(rho, n_model, n_gate, denominator)
    tau = threshold if threshold is not None else (0.0 if estimator == "ste" else 0.5)
    if freeze_base:
        for p in model.parameters():
            p.requires_grad_(False)
    bm = BitMask(model, list(gates), k, float(rho), denominator, n_model, n_gate, estimator, float(tau), _seed=seed)
    init = 0.0 if estimator == "ste" else -6.0
    for mod in gates.values():
        dm = DeletionMask(bm, mod.weight.shape, init).to(mod.weight.device)
        dm.train(model.training)
        parametrize.register_parametrization(mod, "weight", dm, unsafe=True)
        bm.masks.append(dm)
    bm.refresh()
    return bm
