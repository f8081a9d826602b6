"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Reads the full training corpus (``corpus_chars`` of the standard library's sources) and builds
its windows, then builds the sparse transformer at full size on PyTorch's ``meta`` device and
runs a meta batch through it. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, meta_build, training_memory_gb, unchecked

from .corpus import make_corpus, stdlib_source_text
from .model import SparseGPT


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.weight_interp.experiment.Config`)."""
    from .experiment import _model_config

    seen: dict = {}

    def corpus() -> dict:
        text, info = stdlib_source_text(config.corpus_chars)
        short = len(text) < config.corpus_chars
        c = make_corpus(text, config.ctx, {"val": config.val_windows, "explain": config.explain_windows,
                                           "score": config.score_windows, "train": -1}, 0, info=info)
        seen["vocab"] = c.vocab.size
        out = {"note": f"{len(text):,} characters, vocabulary {c.vocab.size}"}
        if short:  # the run goes on with what there is: a smaller corpus than configured
            out["warning"] = (f"corpus_chars={config.corpus_chars:,} but this Python's standard library has "
                              f"{len(text):,} characters of sources: the run trains on the smaller corpus")
        return out

    def model() -> dict:
        import torch

        mc = _model_config(config, seen.get("vocab", 256))
        built = meta_build({"sparse GPT": lambda: SparseGPT(mc)})
        n = built["params"]["sparse GPT"]
        # its forward checks token ids (data-dependent: not on meta): 2 windows on the CPU, full size
        torch.manual_seed(0)
        out = SparseGPT(mc)(torch.zeros(2, config.ctx, dtype=torch.long))
        if tuple(out.shape) != (2, config.ctx, mc.vocab_size):
            raise ValueError(f"logits of shape {tuple(out.shape)}; expected (2, {config.ctx}, {mc.vocab_size})")
        # activations kept for backward: per layer ~ (attention scores + 8 d_model-wide tensors)
        acts = config.batch * config.n_layer * (config.n_head * config.ctx ** 2
                                                 + config.ctx * (8 * config.d_model + 2 * config.d_mlp))

        return {"params": {"sparse GPT (x2 twins)": n},
                "peak_memory_gb": 2 * training_memory_gb(n, activations=acts) * 1.5 + 1.0,
                "note": "two twins in memory, 1.5x margin + 1 GB for torch"}

    return [Stage("corpus (full size)", corpus, limit_s=60), Stage("model (meta; forward of 2 windows)", model),
            unchecked("training and explanations", f"{config.steps} steps per twin on the GPU, and "
                      f"~{config.llm_weights * 2 * 81:,} calls to the {config.backend} endpoint")]
