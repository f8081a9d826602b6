"""The unembedding bottleneck in LLM counting, and Probe-Informed LoRA (paper 15, NeurIPS 2026;
title and authors unknown — only the abstract was readable).

The abstract states: counting information is computed correctly and stays linearly decodable
(signal-to-noise ratio + linear probes, a "dual-metric framework") through the final layer; the
digit-token columns of the unembedding ``W_U`` are orthogonal to the count subspace, so the count
is unreadable at the output (the *Unembedding Bottleneck*); a *Probe-Informed LoRA* on ``W_U``
restores single-digit counting by up to 80–95 % on six models with ~0.001 % of parameters while
keeping general capabilities. The SNR formula, the subspace estimator and the LoRA's form are
**inferred** (see each module).

* :mod:`.tasks` — counting prompts in several formats, answer/entity positions, digit tokens.
* :mod:`.capture` — residual stream at every layer (hooks or ``output_hidden_states``).
* :mod:`.unembedding` — W_U, the final norm folded in, tied embeddings, logit lens.
* :mod:`.probes` — per-layer probes, Fisher SNR, count subspace.
* :mod:`.geometry` — principal angles between the count subspace and the digit rows.
* :mod:`.bottleneck` — planted readout bottleneck vs planted late overwrite, the diagnosis that
  tells them apart, and the subspace-ablation causal check.
* :mod:`.lora` — Probe-Informed LoRA (peft) vs random-init LoRA vs head-only fine-tune.
* :mod:`.models` — tiny Llama/Qwen2 trained on counting; loading a local checkpoint.
* :mod:`.diagnosis` — the whole pipeline on any model: :func:`diagnose_model`.

For your own checkpoint (a ``save_pretrained`` folder; nothing is downloaded): ``model, tok =
load_local_model("/path/to/Qwen3-8B")``, then ``diagnose_model(model, tok, n_prompts=900)``.

Example (a tiny Llama trained briefly in-process)::

    import numpy as np
    import torch
    from neurips26.counting_readout import make_counting_data, build_tiny_model, train_counting_model, diagnose_model
    torch.manual_seed(0)
    data = make_counting_data(np.random.default_rng(0), n_train=400)
    model = build_tiny_model(data.tokenizer, arch="llama")
    train_counting_model(model, data, steps=50)          # far too short to count well: a demo
    report = diagnose_model(model, data.tokenizer, fit=data.probe, test=data.test, digits=data.digits)
    print(report.summary())     # per-layer probe accuracy / SNR, cos θ₁, diagnosis kind
"""

from .bottleneck import Diagnosis, diagnose, plant_late_overwrite, plant_readout_bottleneck, subspace_ablation_accuracy
from .capture import Residuals, capture_residuals, find_final_norm, find_layers
from .diagnosis import ModelDiagnosis, diagnose_model, repair_model
from .geometry import principal_angles_deg, principal_cosines, random_abs_cosine, readout_alignment
from .lora import attach_lora, head_accuracy, probe_informed_lora, train_head, trainable_lora_parameters
from .models import build_tiny_model, counting_accuracy, load_local_model, make_counting_data, train_counting_model
from .probes import LayerProbe, count_subspace, fisher_snr, probe_layers, to_db
from .tasks import (
                         FORMATS,
                         CountingPrompt,
                         DigitTokens,
                         EncodedPrompts,
                         MultiTokenDigitError,
                         build_word_tokenizer,
                         digit_tokens,
                         encode_prompts,
                         generate_counting_prompts,
                         generate_filler_text,
                         make_prompt,
)
from .unembedding import (
                         TiedEmbeddingError,
                         Unembedding,
                         find_unembedding,
                         logit_lens,
                         logits_from_readout,
                         untie_unembedding,
)

__all__ = [
    "FORMATS", "CountingPrompt", "DigitTokens", "EncodedPrompts", "MultiTokenDigitError", "build_word_tokenizer",
    "digit_tokens", "encode_prompts", "generate_counting_prompts", "generate_filler_text", "make_prompt",
    "Residuals", "capture_residuals", "find_final_norm", "find_layers",
    "TiedEmbeddingError", "Unembedding", "find_unembedding", "logit_lens", "logits_from_readout", "untie_unembedding",
    "LayerProbe", "count_subspace", "fisher_snr", "probe_layers", "to_db",
    "principal_angles_deg", "principal_cosines", "random_abs_cosine", "readout_alignment",
    "Diagnosis", "diagnose", "plant_late_overwrite", "plant_readout_bottleneck", "subspace_ablation_accuracy",
    "attach_lora", "head_accuracy", "probe_informed_lora", "train_head", "trainable_lora_parameters",
    "build_tiny_model", "counting_accuracy", "load_local_model", "make_counting_data", "train_counting_model",
    "ModelDiagnosis", "diagnose_model", "repair_model",
]
