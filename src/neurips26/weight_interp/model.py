"""A small GPT in the weight-sparse style of Gao et al. (2025), its checkpoints, and loading a
user's Hugging Face causal-LM folder.

Architecture (nanoGPT layout, pre-norm)::

    h0 = E[x_t] (+ P[t])                                    # token (and optional position) embedding
    a  = Attn(AbsTopK(RMSNorm(h)))                          # q, k, v each AbsTopK'd; d_head = 16
    h  = AbsTopK(h + a)                                     # block output sparsified
    m  = W_out · AbsTopK(ReLU(W_in · AbsTopK(RMSNorm(h))))
    h  = AbsTopK(h + m)
    logits = W_U · AbsTopK(RMSNorm(h))

``AbsTopK(z)`` keeps the ``k = ⌈f·dim⌉`` entries of largest ``|z|`` (f = 1/4) and zeroes the rest.
RMSNorm has no gain, so a zero weight stays zero with no gain folding (Gao et al. fold γ into
the next matrix before counting nonzeros; with no γ there is nothing to fold).

Source: Gao et al. 2025, "Weight-sparse transformers have interpretable circuits" (abstract and
the open re-implementation's notes on its recipe: AbsTopK at 1/4 after each RMSNorm, after Q, K,
V, after the MLP activation and at each block output; d_head 16). Separate q/k/v matrices (not
one fused matrix) and the optional learned positions are ours (inferred: tiny models need them).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["SparseGPTConfig", "SparseGPT", "abs_topk", "save_checkpoint", "load_checkpoint",
           "CheckpointMismatchError", "load_hf_causal_lm", "logits_function", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = "neurips26-weight-interp-gpt/1"


class CheckpointMismatchError(ValueError):
    """A checkpoint's tensors do not match its configuration (names the tensor and both shapes)."""


@dataclass(frozen=True)
class SparseGPTConfig:
    """Sizes of :class:`SparseGPT`.

    Attributes:
        vocab_size: token ids ``0..V-1``.
        ctx: longest input (positions), >= 1.
        d_model: residual width.
        n_layer: blocks.
        n_head: attention heads; ``n_head · d_head`` is the q/k/v width.
        d_head: head size (16 in Gao et al.).
        d_mlp: MLP hidden width.
        activation_topk_fraction: AbsTopK keep fraction in (0, 1]; 1 turns activation sparsity off.
        positional_embedding: learned absolute positions (Gao et al. use none in most runs).

    Raises:
        ValueError: a size < 1 or a keep fraction outside (0, 1] (names the field).
    """

    vocab_size: int
    ctx: int = 32
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4
    d_head: int = 16
    d_mlp: int = 256
    activation_topk_fraction: float = 0.25
    positional_embedding: bool = True

    def __post_init__(self) -> None:
        for f in ("vocab_size", "ctx", "d_model", "n_layer", "n_head", "d_head", "d_mlp"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"SparseGPTConfig.{f}={v!r}; must be an integer >= 1")
        if not 0.0 < self.activation_topk_fraction <= 1.0:
            raise ValueError(f"SparseGPTConfig.activation_topk_fraction={self.activation_topk_fraction}; "
                             "allowed: 0 < f <= 1")


def abs_topk(z: torch.Tensor, fraction: float) -> torch.Tensor:
    """AbsTopK: keep the ``⌈fraction·dim⌉`` entries of largest magnitude along the last axis.

    Args:
        z: float tensor ``[..., dim]``.
        fraction: keep fraction in (0, 1]; 1 returns ``z`` unchanged.

    Returns:
        Tensor of ``z``'s shape; gradients flow through the kept entries only.

    Source: Gao et al. 2025 (AbsTopK activation sparsity).
    """
    if fraction >= 1.0:
        return z
    k = max(1, math.ceil(fraction * z.shape[-1]))
    idx = z.abs().topk(k, dim=-1, sorted=False).indices
    return torch.zeros_like(z).scatter(-1, idx, z.gather(-1, idx))


def _rms_norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)   # RMSNorm without gain


class Attention(nn.Module):
    """Causal multi-head attention with AbsTopK on q, k and v (bias-free linear maps)."""

    def __init__(self, c: SparseGPTConfig) -> None:
        super().__init__()
        w = c.n_head * c.d_head
        self.c = c
        self.q, self.k, self.v = (nn.Linear(c.d_model, w, bias=False) for _ in range(3))
        self.o = nn.Linear(w, c.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        f, H, D = self.c.activation_topk_fraction, self.c.n_head, self.c.d_head
        q, k, v = (abs_topk(m(x), f).view(B, T, H, D).transpose(1, 2) for m in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)   # softmax(q kᵀ/√d + causal mask) v
        return self.o(y.transpose(1, 2).reshape(B, T, H * D))


class MLP(nn.Module):
    """``W_out · AbsTopK(ReLU(W_in · x))`` (bias-free)."""

    def __init__(self, c: SparseGPTConfig) -> None:
        super().__init__()
        self.c = c
        self.fc_in = nn.Linear(c.d_model, c.d_mlp, bias=False)
        self.fc_out = nn.Linear(c.d_mlp, c.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_out(abs_topk(F.relu(self.fc_in(x)), self.c.activation_topk_fraction))


class Block(nn.Module):
    """Pre-norm block with AbsTopK after each RMSNorm and on each block output."""

    def __init__(self, c: SparseGPTConfig) -> None:
        super().__init__()
        self.c = c
        self.attn, self.mlp = Attention(c), MLP(c)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        f = self.c.activation_topk_fraction
        h = abs_topk(h + self.attn(abs_topk(_rms_norm(h), f)), f)
        return abs_topk(h + self.mlp(abs_topk(_rms_norm(h), f)), f)


class SparseGPT(nn.Module):
    """The small GPT (see module docstring). ``forward(idx [B, T] int64) -> logits [B, T, V] float32``.

    Raises (forward):
        ValueError: ``T > ctx`` or a token id outside ``0..V-1``.
    """

    def __init__(self, config: SparseGPTConfig) -> None:
        super().__init__()
        self.config = c = config
        self.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.wpe = nn.Embedding(c.ctx, c.d_model) if c.positional_embedding else None
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        for name, p in self.named_parameters():
            nn.init.normal_(p, std=0.02 if "w" in name.split(".")[0] else 1 / math.sqrt(p.shape[-1]))

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        B, T = idx.shape
        if T > self.config.ctx:
            raise ValueError(f"input length {T} > ctx {self.config.ctx}")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.config.vocab_size):
            raise ValueError(f"token ids must lie in 0..{self.config.vocab_size - 1}; got {int(idx.min())}.."
                             f"{int(idx.max())}")
        h = self.wte(idx)
        if self.wpe is not None:
            h = h + self.wpe(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            h = blk(h)
        return self.lm_head(abs_topk(_rms_norm(h), self.config.activation_topk_fraction))

    def matrices(self) -> dict[str, nn.Linear]:
        """The linear maps whose entries are the "weights" of this study: ``name -> nn.Linear``
        (attention q, k, v, o; MLP in/out; unembedding). The embedding tables are excluded: an
        entry ``E[v, d]`` only ever acts where token ``v`` appears, which is trivially explainable."""
        return {n: m for n, m in self.named_modules() if isinstance(m, nn.Linear)}


# --------------------------------------------------------------------------- checkpoints

def save_checkpoint(model: SparseGPT, folder: str | Path, extra: dict | None = None) -> Path:
    """Write ``folder/config.json`` (format tag, :class:`SparseGPTConfig`, ``extra``) and
    ``folder/model.pt`` (the ``state_dict``). Returns the folder.

    Source: inferred (a documented, dependency-free format: JSON config + torch state dict).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format": CHECKPOINT_FORMAT, "config": asdict(model.config), "extra": extra or {}}
    (folder / "config.json").write_text(json.dumps(meta, indent=2))
    torch.save(model.state_dict(), folder / "model.pt")
    return folder


def safe_load_state_dict(path: str | Path, allowed: str) -> dict:
    """``torch.load(path, weights_only=True)`` with a one-line error naming the file.

    A file that is not a tensor state dict is refused — never unpickled with
    ``weights_only=False`` (which would run arbitrary code from the file).

    Raises:
        CheckpointMismatchError: the file is truncated, corrupt, not a torch file, holds
            something other than a dict of tensors, or needs unpickling beyond tensors.
    """
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 — torch raises many types (RuntimeError, UnpicklingError, EOFError …)
        first = " ".join(str(e).split("\n")[0].split())[:160]
        raise CheckpointMismatchError(f"{path} is not a readable tensor state dict ({type(e).__name__}: {first}); "
                                      f"allowed: {allowed}") from None
    if not isinstance(state, dict):
        raise CheckpointMismatchError(f"{path} holds a {type(state).__name__}, not a dict of tensors; allowed: {allowed}")
    return state


def load_checkpoint(folder: str | Path) -> tuple[SparseGPT, dict]:
    """Load a checkpoint written by :func:`save_checkpoint`; returns ``(model in eval mode, extra)``.

    Raises:
        FileNotFoundError: ``config.json`` or ``model.pt`` missing.
        CheckpointMismatchError: invalid JSON, unknown format tag, no or unknown config keys, a
            ``model.pt`` that is not a readable tensor state dict (:func:`safe_load_state_dict`), or a
            tensor missing, unexpected or of another shape than the config implies (names it and
            both shapes).
    """
    folder = Path(folder)
    for name in ("config.json", "model.pt"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name} not found (a checkpoint folder holds config.json and model.pt)")
    try:
        meta = json.loads((folder / "config.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointMismatchError(f"{folder}/config.json is not valid JSON: {e}") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise CheckpointMismatchError(f"{folder}: format {fmt!r}; expected {CHECKPOINT_FORMAT!r}")
    if not isinstance(meta.get("config"), dict):
        raise CheckpointMismatchError(f"{folder}/config.json has no 'config' object (the SparseGPTConfig fields)")
    allowed = {f.name for f in fields(SparseGPTConfig)}
    unknown = set(meta["config"]) - allowed
    if unknown:
        raise CheckpointMismatchError(f"{folder}: unknown config keys {sorted(unknown)}; allowed {sorted(allowed)}")
    try:
        model = SparseGPT(SparseGPTConfig(**meta["config"]))
    except (TypeError, ValueError) as e:
        raise CheckpointMismatchError(f"{folder}/config.json: the config {meta['config']} cannot build a SparseGPT "
                                      f"({' '.join(str(e).split())[:160]})") from None
    state = safe_load_state_dict(folder / "model.pt", "the model.pt written by save_checkpoint")
    want = model.state_dict()
    missing, unexpected = sorted(set(want) - set(state)), sorted(set(state) - set(want))
    if missing or unexpected:
        raise CheckpointMismatchError(f"{folder}: tensors missing {missing}, unexpected {unexpected} for config "
                                      f"{meta['config']}")
    for k, v in want.items():
        if tuple(state[k].shape) != tuple(v.shape):
            raise CheckpointMismatchError(f"{folder}: tensor {k!r} has shape {tuple(state[k].shape)}; the config "
                                          f"implies {tuple(v.shape)}")
    model.load_state_dict(state)
    return model.eval(), meta.get("extra", {})


def load_hf_causal_lm(folder: str | Path):
    """A causal LM from a local Hugging Face folder (``save_pretrained`` output; never downloads).

    Its ``nn.Linear`` and GPT-2 ``Conv1D`` modules are the weight matrices the per-weight
    pipeline can address (``Conv1D`` weights are ``[in, out]``; the pipeline handles both).

    Raises:
        FileNotFoundError: no ``config.json`` in ``folder``.
    """
    from transformers import AutoModelForCausalLM

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder}/config.json not found: give a folder written by save_pretrained")
    return AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()


def logits_function(model: nn.Module):
    """``idx [B, T] -> logits [B, T, V]``: a Hugging Face causal LM (a ``PreTrainedModel``) is called
    with ``input_ids`` and its ``.logits`` taken; any other module (:class:`SparseGPT`) is called as is."""
    import sys

    tf = sys.modules.get("transformers")    # a PreTrainedModel exists only if transformers was imported
    if tf is not None and isinstance(model, tf.PreTrainedModel):
        return lambda idx: model(input_ids=idx).logits
    return model
