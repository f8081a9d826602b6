"""The unembedding W_U, the final norm folded in, and the logit lens.

Logits are ``z = W_U h̃ (+ b)`` with the readout-space state ``h̃ = norm(h_L)`` — for RMSNorm
``h̃ = γ ⊙ h_L / rms(h_L)``, for LayerNorm including its bias. All geometry here is done in the
readout space, so the digit *rows* of ``W_U`` (HF ``lm_head.weight`` is ``[V, d]``; the paper's
"columns" of ``W_U ∈ R^{d×V}``) are compared with count directions of ``h̃``; the final norm's γ
and bias are thereby folded in exactly (``W_U · norm(h_L)`` reproduces the model's logits).

Tied embeddings (``lm_head.weight is embed_tokens.weight``) are detected and reported; any edit
of W_U here refuses a tied head unless ``untie=True`` is given, which gives the head its own copy
first (the input embedding is never edited silently).

Source: abstract (digit columns of W_U vs the count subspace); inferred: folding the final norm
and the tied-embedding policy (PEFT's ``ensure_weight_tying`` discussion).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Attribute names looked for when ``get_output_embeddings()`` gives nothing.
UNEMBEDDING_ATTRS = ("lm_head", "embed_out", "output_projection")


class TiedEmbeddingError(ValueError):
    """An edit of W_U was asked for on a model whose head shares its weight with the input embedding."""


@dataclass
class Unembedding:
    """The model's output projection.

    Attributes:
        module: the ``nn.Linear`` producing logits (``lm_head``).
        weight: its weight, tensor [V, d].
        bias: its bias [V] or ``None``.
        tied: True when the weight is the input embedding's.
        name: the attribute it was found under.
    """

    module: object
    weight: object
    bias: object
    tied: bool
    name: str


def find_unembedding(model) -> Unembedding:
    """Locate W_U (``get_output_embeddings()``, else one of :data:`UNEMBEDDING_ATTRS`).

    Raises:
        ValueError: no recognised unembedding; the message names the attributes looked for.
    """
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    name = "get_output_embeddings()"
    if head is None:
        for a in UNEMBEDDING_ATTRS:
            if getattr(model, a, None) is not None:
                head, name = getattr(model, a), a
                break
    if head is None or not hasattr(head, "weight"):
        raise ValueError(f"{type(model).__name__}: no recognised unembedding; looked for get_output_embeddings() "
                         f"and attributes {UNEMBEDDING_ATTRS}")
    emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    tied = emb is not None and getattr(emb, "weight", None) is not None and \
        emb.weight.data_ptr() == head.weight.data_ptr()
    return Unembedding(head, head.weight, getattr(head, "bias", None), bool(tied), name)


def untie_unembedding(model) -> Unembedding:
    """Give ``lm_head`` its own copy of the tied weight (input embedding unchanged) and record
    ``tie_word_embeddings=False`` in the config. A no-op for an untied model."""
    import torch

    u = find_unembedding(model)
    if u.tied:
        u.module.weight = torch.nn.Parameter(u.weight.detach().clone())
        for cfg in (model.config, getattr(model.config, "text_config", None)):
            if cfg is not None and hasattr(cfg, "tie_word_embeddings"):
                cfg.tie_word_embeddings = False
    return find_unembedding(model)


def logits_from_readout(model, h_tilde):
    """Logits ``W_U h̃ + b`` from readout-space states ``h̃`` [n, d] (float tensor [n, V]).

    Applies a Gemma-style ``final_logit_softcapping`` when the config has one.
    """
    import torch

    u = find_unembedding(model)
    z = h_tilde.to(u.weight.device, u.weight.dtype) @ u.weight.T
    if u.bias is not None:
        z = z + u.bias
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        z = cap * torch.tanh(z / cap)
    return z.float().cpu()


def logit_lens(model, h):
    """Apply the final norm and the unembedding to residual states ``h`` [..., d] of any layer."""
    from .capture import find_final_norm

    norm = find_final_norm(model)
    import torch

    with torch.no_grad():
        w = find_unembedding(model).weight
        hn = norm(h.to(w.device, w.dtype)) if norm is not None else h
        return logits_from_readout(model, hn.reshape(-1, hn.shape[-1])).reshape(*h.shape[:-1], -1)


def digit_rows(model, digit_ids) -> "object":
    """The digit rows of W_U as float64 numpy [k, d] (``k = len(digit_ids)``), readout space.

    Raises:
        ValueError: a digit id outside the vocabulary.
    """
    u = find_unembedding(model)
    ids = check_digit_ids(digit_ids, u.weight.shape[0])
    return u.weight.detach()[ids].double().cpu().numpy()


def check_digit_ids(digit_ids, vocab_size: int) -> list[int]:
    """``digit_ids`` as a list of distinct ints in ``0..vocab_size-1``.

    Raises:
        ValueError: empty, a non-integer, a duplicate, or an id outside the vocabulary (a negative
            id would otherwise index from the end of W_U and edit/score the wrong row silently).
    """
    ids = list(digit_ids) if digit_ids is not None else []
    if not ids:
        raise ValueError("digit_ids is empty; give the token id of each digit 1..9")
    if any(isinstance(i, float) and not float(i).is_integer() for i in ids):
        raise ValueError(f"digit token ids {ids} must be integers")
    ids = [int(i) for i in ids]
    bad = [i for i in ids if not 0 <= i < vocab_size]
    if bad:
        raise ValueError(f"digit token ids {bad} outside the vocabulary of size {vocab_size} (allowed: 0..{vocab_size - 1})")
    if len(set(ids)) != len(ids):
        raise ValueError(f"digit token ids {ids} are not distinct")
    return ids
