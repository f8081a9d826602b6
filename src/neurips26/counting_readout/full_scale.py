"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Generates the counting prompts and filler text at full size, builds the tiny causal LM at its
full size on PyTorch's ``meta`` device and runs a meta batch through it. See
:mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

import numpy as np

from neurips26.harness.dryrun import Stage, meta_build, on_meta, training_memory_gb, unchecked

from .models import build_tiny_model, make_counting_data


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.counting_readout.experiment.Config`)."""
    seen: dict = {}

    def data() -> dict:
        d = make_counting_data(np.random.default_rng(0), n_train=config.n_train, n_probe=config.n_probe,
                               n_test=config.n_test, n_text=config.n_text, max_distractors=config.max_distractors)
        seen["tokenizer"] = d.tokenizer
        return {"note": f"{config.n_train} training prompts, {config.n_text} filler texts"}

    def model() -> dict:
        import torch

        from .tasks import build_word_tokenizer

        tok = seen.get("tokenizer") or build_word_tokenizer()
        built = meta_build({"tiny LM": lambda: build_tiny_model(
            tok, arch=config.arch, hidden_size=config.hidden_size, layers=config.layers, heads=config.heads,
            intermediate_size=config.intermediate_size)})
        ids = torch.zeros(32, 48, dtype=torch.long, device="meta")
        on_meta(built["models"]["tiny LM"], input_ids=ids)
        n = built["params"]["tiny LM"]
        return {"params": built["params"], "peak_memory_gb": training_memory_gb(n) * 2 + 1.0,
                "note": "2x margin + 1 GB for torch"}

    out = [Stage("counting data (full size)", data), Stage("tiny LM (meta, forward)", model)]
    if config.model_path:
        out.append(unchecked("local checkpoint", f"{config.model_path}: checked by the experiment's preflight"))
    else:
        out.append(unchecked("local checkpoint", "no model_path given (--set model_path=...): the LLM part is "
                                                 "reported not checkable by the run"))
    out.append(unchecked("training", f"{config.train_steps} steps, LoRA repairs over {len(config.lora_seeds)} seeds"))
    return out
