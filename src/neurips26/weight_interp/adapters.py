"""Adapter for checkpoints in the released circuit-sparsity format (Gao et al. 2025): a folder
with ``beeg_config.json`` (the model's configuration as a flat JSON object) and
``final_model.pt`` (a torch state dict), loaded into our own implementation of that GPT.

What the adapter implements (our code, written from the format's configuration fields): GPT-2
layout with fused ``c_attn`` (q, k, v), ``c_proj``, MLP ``c_fc``/``c_proj`` (GELU or ReLU),
RMSNorm or LayerNorm with gains (``ln_1``, ``ln_2``, ``ln_f``), learned positions added to the
token embedding, optional tied unembedding, AbsTopK at the locations named in
``afrac_loctypes`` (keep ``⌊afrac·dim⌋``), optional ReLU on the residual, optional attention
sink (a per-head logit on a zero-value slot), optional bigram logit table and
``final_logits_bias``. Concatenated position embeddings (``d_pos_emb``) are not implemented and
raise an error rather than load into a wrong model.

The per-weight pipeline addresses the raw matrices (``transformer.h.0.attn.c_attn`` …, torch
``[out, in]``); a norm gain γ scales a matrix's inputs, so a weight's attribution
``W_ij·x_j·∂L/∂y_i`` already includes it, and only a zero gain changes which weights act
(:func:`load_circuit_sparsity` warns about zero gains).

Source: inferred from the public inference code's configuration fields and checkpoint layout
(``openai/circuit_sparsity``), read for understanding; nothing is downloaded.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from .model import CheckpointMismatchError

__all__ = ["CircuitSparsityConfig", "CircuitSparsityGPT", "load_circuit_sparsity", "LOCATIONS"]

#: AbsTopK locations the format names
LOCATIONS = ("attn_in", "attn_q", "attn_k", "attn_v", "attn_out", "mlp_in", "mlp_neuron", "mlp_out",
             "resid_post_attn", "resid_post_mlp")
#: configuration keys that only steer training or kernels (accepted, ignored at inference)
_IGNORED = {"dropout", "debug_nans", "grad_checkpointing", "flash", "enable_sparse_kernels", "tokenizer_name",
            "learnable_bigram_table", "dropout_cat_pos_emb", "pfrac", "bigram_table_rank", "sinusoidal_cat_pos_emb"}


@dataclass(frozen=True)
class CircuitSparsityConfig:
    """The architecture fields of a ``beeg_config.json`` (names as in the format).

    Raises:
        ValueError: an unsupported option (``d_pos_emb`` set, ``use_tied_aux_matrix`` true), an unknown
            AbsTopK location, or inconsistent sizes.
    """

    block_size: int
    vocab_size: int
    n_layer: int
    n_head: int
    d_model: int
    d_head: int | None = None
    d_mlp: int | None = None
    bias: bool = True
    ln_bias: bool = True
    rms_norm: bool = False
    residual_activation_type: str = "identity"
    activation_type: str = "gelu"
    afrac: float | None = None
    afrac_loctypes: str = "attn_in,attn_out,mlp_in,mlp_out"
    tied_unembed: bool = True
    enable_bigram_table: bool = False
    d_pos_emb: int | None = None
    sink: bool = False

    def __post_init__(self) -> None:
        if self.d_pos_emb is not None:
            raise ValueError(f"d_pos_emb={self.d_pos_emb}: concatenated position embeddings are not implemented")
        bad = [x for x in self.afrac_loctypes.split(",") if x and x not in LOCATIONS]
        if bad:
            raise ValueError(f"afrac_loctypes has unknown locations {bad}; allowed {list(LOCATIONS)}")
        if self.residual_activation_type not in ("identity", "relu") or self.activation_type not in ("gelu", "relu"):
            raise ValueError(f"residual_activation_type={self.residual_activation_type!r} (identity|relu), "
                             f"activation_type={self.activation_type!r} (gelu|relu)")
        if self.afrac is not None and not 0 < self.afrac <= 1:
            raise ValueError(f"afrac={self.afrac}; allowed 0 < afrac <= 1 or null")

    @property
    def head(self) -> int:
        """d_head (default d_model // n_head)."""
        return self.d_head or self.d_model // self.n_head

    @property
    def mlp(self) -> int:
        """d_mlp (default 4·d_model)."""
        return self.d_mlp or 4 * self.d_model

    @classmethod
    def from_json(cls, d: dict) -> "CircuitSparsityConfig":
        """From the JSON object: ``n_mlp`` is read as ``d_mlp``; training-only keys are ignored.

        Raises:
            ValueError: ``use_tied_aux_matrix`` true, or keys neither known nor ignorable (listed).
        """
        d = dict(d)
        if "n_mlp" in d:
            d["d_mlp"] = d.pop("n_mlp")
        if d.pop("use_tied_aux_matrix", False):
            raise ValueError("use_tied_aux_matrix=true is not supported")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known - _IGNORED)
        if unknown:
            raise ValueError(f"beeg_config.json has keys this adapter does not know: {unknown}")
        return cls(**{k: v for k, v in d.items() if k in known})


def _norm(c: CircuitSparsityConfig) -> nn.Module:
    return nn.RMSNorm(c.d_model) if c.rms_norm else nn.LayerNorm(c.d_model, bias=c.ln_bias)


class _Block(nn.Module):
    def __init__(self, c: CircuitSparsityConfig) -> None:
        super().__init__()
        self.c = c
        w = c.n_head * c.head
        self.ln_1, self.ln_2 = _norm(c), _norm(c)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(c.d_model, 3 * w, bias=c.bias)
        self.attn.c_proj = nn.Linear(w, c.d_model, bias=c.bias)
        if c.sink:
            self.attn.attn_imp = nn.Module()
            self.attn.attn_imp.sink_logit = nn.Parameter(torch.zeros(c.n_head))
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(c.d_model, c.mlp, bias=c.bias)
        self.mlp.c_proj = nn.Linear(c.mlp, c.d_model, bias=c.bias)

    def sparse(self, x: torch.Tensor, loc: str) -> torch.Tensor:
        c = self.c
        if c.afrac is None or loc not in c.afrac_loctypes.split(","):
            return x
        k = int(c.afrac * x.shape[-1])                              # keep ⌊afrac·dim⌋ by |x|
        idx = x.abs().topk(k, dim=-1, sorted=False).indices
        return torch.zeros_like(x).scatter(-1, idx, x.gather(-1, idx))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        c = self.c
        B, T, _ = x.shape
        x = self.sparse(x, "attn_in")
        q, k, v = self.attn.c_attn(x).split(c.n_head * c.head, dim=2)
        q, k, v = (self.sparse(t, f"attn_{n}").view(B, T, c.n_head, c.head).transpose(1, 2)
                   for t, n in ((q, "q"), (k, "k"), (v, "v")))
        s = q @ k.transpose(-2, -1) / math.sqrt(c.head)             # scores q·k/√d_head
        s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool, device=x.device).tril(), float("-inf"))
        if c.sink:                                                   # zero-value slot with logit b_h
            b = self.attn.attn_imp.sink_logit.view(1, -1, 1, 1).expand(B, -1, T, 1)
            p = torch.softmax(torch.cat([b.to(s.dtype), s], dim=-1), dim=-1)[..., 1:]
        else:
            p = torch.softmax(s, dim=-1)
        y = (p @ v).transpose(1, 2).reshape(B, T, c.n_head * c.head)
        return self.sparse(self.attn.c_proj(y), "attn_out")

    def mlp_forward(self, x: torch.Tensor) -> torch.Tensor:
        act = F.gelu if self.c.activation_type == "gelu" else F.relu
        h = self.sparse(act(self.mlp.c_fc(self.sparse(x, "mlp_in"))), "mlp_neuron")
        return self.sparse(self.mlp.c_proj(h), "mlp_out")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        relu = self.c.residual_activation_type == "relu"
        x = x + self.attention(self.ln_1(x))
        x = self.sparse(torch.relu(x) if relu else x, "resid_post_attn")
        x = x + self.mlp_forward(self.ln_2(x))
        return self.sparse(torch.relu(x) if relu else x, "resid_post_mlp")


class CircuitSparsityGPT(nn.Module):
    """The circuit-sparsity GPT (see module docstring); ``forward(idx [B, T]) -> logits [B, T, V]``.

    Raises (forward):
        ValueError: ``T > block_size``.
    """

    def __init__(self, config: CircuitSparsityConfig) -> None:
        super().__init__()
        self.config = c = config
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(c.vocab_size, c.d_model)
        self.transformer.wpe = nn.Embedding(c.block_size, c.d_model)
        self.transformer.h = nn.ModuleList(_Block(c) for _ in range(c.n_layer))
        self.transformer.ln_f = _norm(c)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.register_buffer("final_logits_bias", torch.zeros(c.vocab_size))
        if c.enable_bigram_table:
            self.register_buffer("bigram_table", torch.zeros(c.vocab_size, c.vocab_size))
        if c.tied_unembed:
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        if T > self.config.block_size:
            raise ValueError(f"input length {T} > block_size {self.config.block_size}")
        x = self.transformer.wte(idx) + self.transformer.wpe.weight[:T]
        for blk in self.transformer.h:
            x = blk(x)
        logits = self.lm_head(self.transformer.ln_f(x)) + self.final_logits_bias
        if self.config.enable_bigram_table:
            logits = logits + self.bigram_table[idx]                 # dense bigram logits of the current token
        return logits


def load_circuit_sparsity(folder: str | Path) -> CircuitSparsityGPT:
    """Load ``folder/beeg_config.json`` + ``folder/final_model.pt`` (a local copy; never downloads).

    Prefixes ``_orig_mod.`` / ``module.`` are stripped; a missing ``final_logits_bias`` is zero;
    the causal-mask buffers ``*.attn.bias`` of the format are ignored.

    Raises:
        FileNotFoundError: a file is missing.
        CheckpointMismatchError: a tensor is missing, unexpected or of another shape than the
            configuration implies (names it), or the configuration is unsupported.
    """
    folder = Path(folder)
    for name in ("beeg_config.json", "final_model.pt"):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"{folder / name} not found (the circuit-sparsity format is beeg_config.json "
                                    "+ final_model.pt)")
    try:
        cfg = CircuitSparsityConfig.from_json(json.loads((folder / "beeg_config.json").read_text()))
    except (TypeError, ValueError) as e:
        raise CheckpointMismatchError(f"{folder}/beeg_config.json: {e}") from None
    model = CircuitSparsityGPT(cfg)
    from .model import safe_load_state_dict

    sd = safe_load_state_dict(folder / "final_model.pt", "the circuit-sparsity final_model.pt (a torch state dict)")
    if isinstance(sd, dict) and "model" in sd and isinstance(sd["model"], dict):
        sd = sd["model"]
    clean = {}
    for k, v in sd.items():
        for pre in ("_orig_mod.", "module."):
            k = k[len(pre):] if k.startswith(pre) else k
        if k.endswith(".attn.bias") and v.ndim == 4:                 # causal mask buffer, not a parameter
            continue
        clean[k] = v
    clean.setdefault("final_logits_bias", torch.zeros(cfg.vocab_size))
    want = model.state_dict()
    if cfg.tied_unembed:
        if "lm_head.weight" not in clean and "transformer.wte.weight" in clean:
            clean["lm_head.weight"] = clean["transformer.wte.weight"]
        if "transformer.wte.weight" not in clean and "lm_head.weight" in clean:
            clean["transformer.wte.weight"] = clean["lm_head.weight"]
    missing, unexpected = sorted(set(want) - set(clean)), sorted(set(clean) - set(want))
    if missing or unexpected:
        raise CheckpointMismatchError(f"{folder}: tensors missing {missing[:8]}, unexpected {unexpected[:8]} for "
                                      "the configuration in beeg_config.json")
    for k, v in want.items():
        if tuple(clean[k].shape) != tuple(v.shape):
            raise CheckpointMismatchError(f"{folder}: tensor {k!r} has shape {tuple(clean[k].shape)}; "
                                          f"beeg_config.json implies {tuple(v.shape)}")
    model.load_state_dict(clean)
    zero = [n for n, m in model.named_modules() if isinstance(m, (nn.RMSNorm, nn.LayerNorm))
            and m.weight is not None and bool((m.weight == 0).any())]
    if zero:
        warnings.warn(f"norm gains with zeros in {zero}: the weights reading those channels never act "
                      "(fold γ before counting nonzeros)", stacklevel=2)
    return model.eval()
