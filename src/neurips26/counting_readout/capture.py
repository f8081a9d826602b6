"""Residual-stream capture at every layer of a transformers causal LM.

Two ways, returning the same thing — the *pre-norm* residual stream ``h_ℓ`` after the embedding
(ℓ = 0) and after each decoder block (ℓ = 1..L) at chosen positions:

* ``method="hooks"``: forward hooks on the embedding and on each decoder block;
* ``method="hidden_states"`` (the default; the benchmark measures it level with hooks): ``output_hidden_states=True``. transformers' last hidden state is
  the *final-normed* one (``norm(h_L)``, checked for Llama and Qwen2), so the pre-norm ``h_L``
  is taken by a pre-hook on the final norm instead; both methods then agree exactly.

Positions are the answer position (last prompt token) and the mean over the entity tokens.

Source: inferred (standard residual-stream probing practice, e.g. the logit lens; the
last-hidden-state convention was checked in transformers 5.24).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tasks import EncodedPrompts

#: Attribute paths tried, in order, for the decoder blocks of a causal LM.
LAYER_PATHS = ("model.layers", "model.model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers")
#: Attribute paths tried for the final norm applied before the unembedding.
NORM_PATHS = ("model.norm", "model.model.norm", "transformer.ln_f", "gpt_neox.final_layer_norm",
              "model.decoder.final_layer_norm")
METHODS = ("hooks", "hidden_states")


def _get(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def find_layers(model):
    """The decoder blocks (an ``nn.ModuleList``) of ``model``.

    Raises:
        ValueError: none of :data:`LAYER_PATHS` exists (the message lists them).
    """
    for p in LAYER_PATHS:
        layers = _get(model, p)
        if layers is not None and hasattr(layers, "__len__"):
            return layers
    raise ValueError(f"{type(model).__name__}: no decoder blocks found; looked for attributes {LAYER_PATHS}")


def find_final_norm(model):
    """The final norm module applied before the unembedding, or ``None`` if the model has none.

    Source: inferred (the attribute names of Llama/Qwen2/Mistral, GPT-2, Pythia, OPT).
    """
    for p in NORM_PATHS:
        m = _get(model, p)
        if m is not None:
            return m
    return None


@dataclass
class Residuals:
    """Residual-stream states of a batch of prompts.

    Attributes:
        answer: float32 tensor [L+1, n, d] — pre-norm ``h_ℓ`` at the answer position, ℓ = 0..L.
        entity_mean: float32 tensor [L+1, n, d] — mean of ``h_ℓ`` over each prompt's entity tokens.
        final_normed: float32 tensor [n, d] — ``norm(h_L)`` at the answer position (the unembedding's
            input, the *readout space*).
    """

    answer: "object"
    entity_mean: "object"
    final_normed: "object"

    @property
    def n_layers(self) -> int:
        """Number of decoder blocks L (``answer`` has L+1 entries)."""
        return int(self.answer.shape[0]) - 1


def model_device(model):
    """The device of the model's first parameter (where inputs must go)."""
    return next(model.parameters()).device


def _embedding(model):
    emb = model.get_input_embeddings()
    if emb is None:
        raise ValueError(f"{type(model).__name__}.get_input_embeddings() is None; cannot hook the embedding")
    return emb


def capture_residuals(model, batch: EncodedPrompts, *, method: str = "hidden_states", chunk: int = 128,
                      max_length: int | None = None) -> Residuals:
    """Capture ``h_ℓ`` at every layer (see the module docstring).

    Args:
        model: a transformers causal LM (eval mode is set by the caller).
        batch: tokenised prompts (:func:`~.tasks.encode_prompts`).
        method: ``"hidden_states"`` (default: transformers' ``output_hidden_states``, with a
            pre-hook on the final norm for ``h_L``) or ``"hooks"`` (forward hooks on the embedding
            and every block; the same states, 0.91× the throughput in the benchmark).
        chunk: prompts per forward pass (prompts grouped by length, each chunk cut to its longest).
        max_length: the model's context; defaults to ``config.max_position_embeddings``.

    Raises:
        ValueError: unknown ``method``; prompts longer than the context (length and context named);
            no decoder blocks / final norm found where needed.
    """
    import torch

    if method not in METHODS:
        raise ValueError(f"method={method!r}; allowed: {METHODS}")
    ctx = max_length or getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if ctx is not None and batch.input_ids.shape[1] > ctx:
        raise ValueError(f"prompts are {batch.input_ids.shape[1]} tokens, longer than the model's context of {ctx}")
    layers, norm = find_layers(model), find_final_norm(model)
    if norm is None:
        import warnings

        warnings.warn(f"{type(model).__name__}: no final norm found at {NORM_PATHS}; the readout space is taken as the "
                      "raw last residual state, which is right only if the model applies no norm before its head",
                      UserWarning, stacklevel=2)
    store: list = []
    pre_norm: list = []
    hooks = []
    if method == "hooks":
        hooks.append(_embedding(model).register_forward_hook(lambda m, i, o: store.append(o)))
        for layer in layers:
            hooks.append(layer.register_forward_hook(
                lambda m, i, o: store.append(o[0] if isinstance(o, tuple) else o)))
    if norm is not None:
        hooks.append(norm.register_forward_pre_hook(lambda m, i: pre_norm.append(i[0])))
    ans, ent, fin = [], [], []
    # chunks of prompts of similar length, each cut to its longest row (right padding carries nothing
    # a causal model's real positions see), and the head applied at one position only: the states
    # are the same as a padded full-vocabulary pass, at a fraction of the arithmetic
    lengths = batch.attention_mask.sum(1)
    order = torch.argsort(lengths, stable=True)
    kw = {"logits_to_keep": 1} if _accepts(model, "logits_to_keep") else {}
    try:
        with torch.no_grad():
            for s in range(0, len(batch), chunk):
                b = batch.subset(order[s:s + chunk])
                T = int(b.attention_mask.sum(1).max())
                b = EncodedPrompts(b.input_ids[:, :T], b.attention_mask[:, :T], b.answer_pos, b.entity_mask[:, :T],
                                   b.counts, b.lead_ids)
                store.clear()
                pre_norm.clear()
                dev = model_device(model)
                out = model(input_ids=b.input_ids.to(dev), attention_mask=b.attention_mask.to(dev),
                            output_hidden_states=method == "hidden_states", **kw)
                if method == "hooks":
                    hs = list(store)
                else:
                    hs = list(out.hidden_states)
                    if norm is not None:
                        hs[-1] = pre_norm[0]  # transformers' last hidden state is norm(h_L); keep h_L
                if len(hs) != len(layers) + 1:
                    raise ValueError(f"captured {len(hs)} states for {len(layers)} blocks (expected {len(layers) + 1})")
                H = torch.stack([h.float().cpu() for h in hs])                # [L+1, b, T, d], on CPU
                idx = torch.arange(len(b))
                ans.append(H[:, idx, b.answer_pos])                           # [L+1, b, d]
                m = b.entity_mask.float()
                ent.append(torch.einsum("lbtd,bt->lbd", H, m) / m.sum(1).clamp(min=1)[None, :, None])
                h_last = H[-1, idx, b.answer_pos]
                fin.append(norm(h_last.to(dev, hs[-1].dtype)).float().cpu() if norm is not None else h_last)
    finally:
        for h in hooks:
            h.remove()
    back = torch.argsort(order)                      # the caller's order of prompts
    return Residuals(torch.cat(ans, 1)[:, back], torch.cat(ent, 1)[:, back], torch.cat(fin, 0)[back])


def _accepts(model, name: str) -> bool:
    """Whether ``model.forward`` takes the keyword ``name`` (``logits_to_keep`` in transformers >= 4.45)."""
    import inspect

    try:
        return name in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def residuals_numpy(res: Residuals) -> dict[str, np.ndarray]:
    """``{"answer": [L+1, n, d], "entity_mean": [L+1, n, d], "final_normed": [n, d]}`` as float64 numpy."""
    return {k: getattr(res, k).double().numpy() for k in ("answer", "entity_mean", "final_normed")}
