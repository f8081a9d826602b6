"""Planting and telling apart two failures of counting readout, and a causal check.

* :func:`plant_readout_bottleneck` — the *unembedding bottleneck*: the digit rows of W_U are
  projected off the count subspace, ``W_D ← W_D (I − Q_C Q_Cᵀ)``, each row rescaled to its old
  norm. The hidden states are untouched, so probes still decode the count while the digit logits
  no longer depend on it (inferred construction; the paper's models fail this way naturally).
* :func:`plant_late_overwrite` — the competing account (arXiv 2605.09239: a late block overwrites
  the count): an appended decoder block mean-ablates the count subspace,
  ``h ← h − Q Qᵀ (h − μ)``, so the count is decodable at layer L and gone at L+1.
* :func:`diagnose` — which of the two (or neither) a model shows, from per-layer probe accuracy
  and the model's accuracy: count decodable at the final layer but not output → readout
  bottleneck; decodable earlier but lost in the last blocks → late overwrite.
* :func:`subspace_ablation_accuracy` — probe ≠ mediator check (arXiv 2605.29126): mean-ablate the
  count subspace in the readout space of the *unbroken* model and measure the accuracy drop,
  against a random subspace of the same rank.

Source: abstract (bottleneck; causal validation); inferred: the constructions and thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .geometry import orthonormal_basis
from .unembedding import TiedEmbeddingError, check_digit_ids, find_unembedding, untie_unembedding


def plant_readout_bottleneck(model, Q_count, digit_ids, *, untie: bool = False) -> np.ndarray:
    """Project the digit rows of W_U off the count subspace, in place; return the old rows [k, d].

    ``W_D ← W_D (I − Q Qᵀ)``, then each row rescaled to its previous norm.

    Raises:
        TiedEmbeddingError: the head is tied to the input embedding and ``untie`` is False
            (editing it would silently edit the input embedding too).
        ValueError: ``Q_count`` not [d, r]; a digit id outside the vocabulary or repeated.
    """
    import torch

    u = find_unembedding(model)
    if u.tied:
        if not untie:
            raise TiedEmbeddingError("lm_head shares its weight with the input embedding; pass untie=True to give "
                                     "the head its own copy before editing it")
        u = untie_unembedding(model)
    Q = orthonormal_basis(Q_count, "Q_count")
    if Q.shape[0] != u.weight.shape[1]:
        raise ValueError(f"Q_count has ambient dimension {Q.shape[0]}, the model has d = {u.weight.shape[1]}")
    ids = check_digit_ids(digit_ids, u.weight.shape[0])
    with torch.no_grad():
        old = u.weight[ids].double().clone()
        new = old - (old @ torch.from_numpy(Q)) @ torch.from_numpy(Q).T          # W_D (I − Q Qᵀ)
        new = new * (old.norm(dim=1) / new.norm(dim=1).clamp(min=1e-12))[:, None]  # keep row norms
        u.weight[ids] = new.to(u.weight.dtype)
    return old.numpy()


def _overwrite_block(Q, mu):
    import torch

    class _Block(torch.nn.Module):
        """A planted decoder block: ``h ← h − Q Qᵀ (h − μ)`` (mean-ablates the count subspace)."""

        def __init__(self):
            super().__init__()
            self.register_buffer("Q", Q)
            self.register_buffer("mu", mu)

        def forward(self, hidden_states, *args, **kwargs):
            h = hidden_states
            return h - (((h.float() - self.mu) @ self.Q) @ self.Q.T).to(h.dtype)

    return _Block()


class OverwriteHandle:
    """Undo handle of :func:`plant_late_overwrite` (``.remove()`` takes the planted block out)."""

    def __init__(self, model, layers, n_old: int, layer_types):
        self.model, self.layers, self.n_old, self.layer_types = model, layers, n_old, layer_types

    def remove(self) -> None:
        """Remove the planted block and restore the config."""
        if len(self.layers) > self.n_old:
            del self.layers[self.n_old]
            self.model.config.num_hidden_layers = self.n_old
            if self.layer_types is not None:
                self.model.config.layer_types = self.layer_types


def plant_late_overwrite(model, Q_count, mean) -> OverwriteHandle:
    """Append a decoder block that mean-ablates the count subspace, ``h ← h − Q Qᵀ (h − μ)``, at
    every position: the competing account in which a late block overwrites a correctly computed
    count. Returns a handle whose ``.remove()`` undoes it.

    ``Q_count`` [d, r] and ``mean`` [d] live in the pre-norm residual space of the last block's
    output. The block is appended to the decoder ``ModuleList`` and ``config.num_hidden_layers``
    (and ``config.layer_types`` where present) grow by one, so hooks see it as layer L+1. Tested
    on Llama and Qwen2 (decoder blocks that return a tensor); capture it with ``method="hooks"``.
    """
    import torch

    from .capture import find_layers

    Q = torch.from_numpy(orthonormal_basis(Q_count, "Q_count")).float()
    mu = torch.as_tensor(np.asarray(mean), dtype=torch.float32)
    layers = find_layers(model)
    n_old = len(layers)
    types = getattr(model.config, "layer_types", None)
    layers.append(_overwrite_block(Q, mu))
    model.config.num_hidden_layers = n_old + 1
    if types:
        model.config.layer_types = list(types) + [types[-1]]
    return OverwriteHandle(model, layers, n_old, list(types) if types else None)


@dataclass
class Diagnosis:
    """Verdict of :func:`diagnose`.

    Attributes:
        kind: ``"reads_out"`` (the model counts), ``"readout_bottleneck"``, ``"late_overwrite"``
            or ``"not_computed"`` (the count is never decodable).
        overwrite_layer: for ``late_overwrite``, the first layer after the peak whose probe
            accuracy fell below ``high``; else ``None``.
        final_probe_accuracy, peak_probe_accuracy, model_accuracy: the inputs that decided it.
    """

    kind: str
    overwrite_layer: int | None
    final_probe_accuracy: float
    peak_probe_accuracy: float
    model_accuracy: float


def diagnose(probe_accuracy, model_accuracy: float, *, high: float = 0.9) -> Diagnosis:
    """Readout bottleneck vs late overwrite from per-layer probe accuracy [L+1] and the model's.

    Rule (inferred, fixed before use): model ≥ high → reads out; final-layer probe ≥ high →
    readout bottleneck; some earlier layer ≥ high → late overwrite; else not computed.

    Raises:
        ValueError: empty accuracies, a value outside [0, 1] or NaN, or ``high`` outside (0, 1].
    """
    acc = np.asarray(probe_accuracy, np.float64)
    if acc.ndim != 1 or len(acc) == 0 or not np.all((acc >= 0) & (acc <= 1)) or not 0 <= model_accuracy <= 1:
        raise ValueError(f"probe_accuracy must be a non-empty 1-D array in [0, 1] (no NaN) and model_accuracy in "
                         f"[0, 1]; got {acc.tolist()} and {model_accuracy}")
    if not 0 < high <= 1:
        raise ValueError(f"high={high}; allowed: 0 < high <= 1 (the accuracy regarded as 'decodable')")
    final, peak = float(acc[-1]), float(acc.max())
    if model_accuracy >= high:
        kind, at = "reads_out", None
    elif final >= high:
        kind, at = "readout_bottleneck", None
    elif peak >= high:
        p = int(np.argmax(acc >= high))
        later = np.nonzero(acc[p:] < high)[0]
        kind, at = "late_overwrite", int(p + later[0])
    else:
        kind, at = "not_computed", None
    return Diagnosis(kind, at, final, peak, float(model_accuracy))


def subspace_ablation_accuracy(model, h_tilde, counts, digit_ids, Q_count, mean=None) -> float:
    """Digit-restricted accuracy after mean-ablating span(Q) in the readout space:
    ``h̃ ← h̃ − Q Qᵀ (h̃ − μ)`` (μ = mean of ``h_tilde`` unless given), logits ``W_U h̃``.

    Args:
        h_tilde: readout-space states [n, d] (torch or numpy); counts [n] in 1..9.

    Raises:
        ValueError: non-finite or mis-shaped ``h_tilde``; ``counts`` not [n] or outside
            1..len(digit_ids); bad digit ids.
    """
    import torch

    from .unembedding import logits_from_readout

    H = torch.as_tensor(np.asarray(h_tilde), dtype=torch.float64)
    y = np.asarray(counts)
    ids = check_digit_ids(digit_ids, find_unembedding(model).weight.shape[0])
    if H.ndim != 2 or not torch.isfinite(H).all():
        raise ValueError(f"h_tilde must be a finite [n, d] array; got shape {tuple(H.shape)}"
                         + ("" if H.ndim != 2 else " with non-finite values"))
    if y.shape != (H.shape[0],) or not np.all((y >= 1) & (y <= len(ids))) or not np.all(y == np.round(y)):
        raise ValueError(f"counts must be [{H.shape[0]}] integers in 1..{len(ids)} (one digit id per count); got "
                         f"shape {y.shape}, values {np.unique(y)[:10].tolist()}")
    Q = torch.from_numpy(orthonormal_basis(Q_count, "Q_count"))
    mu = H.mean(0) if mean is None else torch.as_tensor(np.asarray(mean), dtype=torch.float64)
    Ha = H - ((H - mu) @ Q) @ Q.T
    with torch.no_grad():
        z = logits_from_readout(model, Ha.float())[:, ids]
    return float((z.argmax(-1).numpy() + 1 == y).mean())
