"""Per-weight interpretation of weight-sparse transformers (paper 8, ICML 2026 MI workshop /
NeurIPS 2026: *The parameters in weight-sparse transformers are interpretable*).

Only the abstract was readable: an automated LLM pipeline writes a short account of when a given
nonzero weight matters, verifies it on held-out data, and finds 17–35 % of nonzero weights of two
weight-sparse transformers interpretable vs 5–9 % for the equivalent dense model and Pythia-70m.

* :mod:`.corpus` — Python standard-library source from the local installation, character tokens,
  windows, disjoint splits.
* :mod:`.model` — :class:`SparseGPT` (AbsTopK activations, RMSNorm, d_head 16), checkpoints
  (:func:`save_checkpoint` / :func:`load_checkpoint`), :func:`load_hf_causal_lm` for a local
  Hugging Face folder; :mod:`.adapters` loads the released circuit-sparsity format
  (``beeg_config.json`` + ``final_model.pt``, a local copy).
* :mod:`.sparsity` — top-k projection with a per-neuron floor, the kept-fraction schedule,
  gradient-RMS normalisation, :func:`train_lm` (sparse, or dense with a matched-loss stop).
* :mod:`.attribution` — gradient × weight attribution for many weights per backward pass; exact
  zero/mean ablation; stratified sampling of nonzero weights.
* :mod:`.explainers` — symbolic and LLM explainers and scorers behind one interface.
* :mod:`.pipeline` — context selection, explanation, held-out verification, interpretable
  fraction, faithfulness.
* :mod:`.planted` — a hand-built model with a planted weight (pipeline test).

Example::

    import numpy as np
    from neurips26.weight_interp import (SparseGPT, SparseGPTConfig, TrainConfig, train_lm, make_corpus,
        stdlib_source_text, sample_nonzero_weights, explain_weights, SymbolicExplainer, SymbolicScorer)
    text, info = stdlib_source_text(200_000)
    corpus = make_corpus(text, 32, {"val": 50, "explain": 100, "score": 100, "train": -1}, seed=0)
    model = SparseGPT(SparseGPTConfig(corpus.vocab.size))
    train_lm(model, corpus.split("train"), corpus.split("val"), TrainConfig(steps=100, target_fraction=0.1), 0)
    refs = sample_nonzero_weights(model, 5, np.random.default_rng(0))
    for r in explain_weights(model, refs, corpus.split("explain"), corpus.split("score"),
                             SymbolicExplainer(), SymbolicScorer(), corpus.vocab):
        print(r.weight, r.status, r.explanation, r.score)
"""

from .adapters import CircuitSparsityConfig, CircuitSparsityGPT, load_circuit_sparsity
from .attribution import (
                          ActivationCache,
                          WeightRef,
                          ZeroWeightError,
                          ablation_effects,
                          attributions,
                          capture,
                          linear_modules,
                          sample_nonzero_weights,
                          weight_value,
)
from .corpus import CharVocabulary, Corpus, CorpusTooSmallError, TokenizerVocabulary, make_corpus, stdlib_source_text
from .explainers import (
                          ExampleSet,
                          Explanation,
                          ExplanationFailed,
                          LLMExplainer,
                          LLMScorer,
                          Predicate,
                          ReplyFailures,
                          SymbolicExplainer,
                          SymbolicScorer,
                          parse_explanation,
                          parse_yes_no,
)
from .model import (
                          CheckpointMismatchError,
                          SparseGPT,
                          SparseGPTConfig,
                          abs_topk,
                          load_checkpoint,
                          load_hf_causal_lm,
                          logits_function,
                          save_checkpoint,
)
from .pipeline import (
                          LeakageError,
                          SelectionSettings,
                          WeightReport,
                          check_disjoint,
                          check_vocabulary,
                          explain_from_importance,
                          explain_weights,
                          interpretable_fraction,
                          weight_importances,
)
from .planted import PlantedModel
from .sparsity import (
                          TrainConfig,
                          TrainResult,
                          kept_fraction,
                          nonzeros_target,
                          normalize_grad_rms_,
                          project_topk_,
                          topk_mask_with_floor,
                          train_lm,
                          validation_loss,
)

__all__ = [
    "CharVocabulary", "TokenizerVocabulary", "Corpus", "CorpusTooSmallError", "make_corpus", "stdlib_source_text",
    "SparseGPT", "SparseGPTConfig", "abs_topk", "save_checkpoint", "load_checkpoint", "CheckpointMismatchError",
    "load_hf_causal_lm", "logits_function", "CircuitSparsityConfig", "CircuitSparsityGPT", "load_circuit_sparsity",
    "kept_fraction", "nonzeros_target", "topk_mask_with_floor", "project_topk_", "normalize_grad_rms_",
    "TrainConfig", "TrainResult", "train_lm", "validation_loss",
    "WeightRef", "ZeroWeightError", "ActivationCache", "capture", "attributions", "ablation_effects",
    "linear_modules", "sample_nonzero_weights", "weight_value",
    "ExampleSet", "Explanation", "ExplanationFailed", "Predicate", "ReplyFailures", "SymbolicExplainer",
    "SymbolicScorer", "LLMExplainer", "LLMScorer", "parse_explanation", "parse_yes_no",
    "SelectionSettings", "WeightReport", "LeakageError", "check_disjoint", "check_vocabulary", "explain_weights",
    "explain_from_importance", "weight_importances",
    "interpretable_fraction", "PlantedModel",
]
