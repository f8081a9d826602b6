"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the toy causal LM at its full size on PyTorch's ``meta`` device and runs a meta batch
through it. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, meta_build, on_meta, training_memory_gb, unchecked

from .task import build_model


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.bit_mask_tuning.experiment.Config`)."""

    def model() -> dict:
        import torch

        sizes = dict(hidden=config.hidden, layers=config.layers, ffn=config.ffn)
        built = meta_build({"toy LM": lambda: build_model(config.family, 0, **sizes)})
        on_meta(built["models"]["toy LM"], input_ids=torch.zeros(16, 16, dtype=torch.long, device="meta"))
        n = built["params"]["toy LM"]
        return {"params": built["params"], "peak_memory_gb": training_memory_gb(n) * 3 + 1.0,
                "note": "base, masked copy and optimizer: 3x + 1 GB for torch"}

    out = [Stage("toy LM (meta, forward)", model)]
    out.append(unchecked("checkpoint mechanics", f"model_path={config.model_path!r}: checked by the experiment's "
                         "preflight" if config.model_path else "no model_path given: the size claim on a real "
                         "checkpoint is skipped by the run"))
    out.append(unchecked("training", f"pretraining {config.pretrain_steps}, SFT {config.sft_steps}, RL "
                                     f"{config.rl_steps} steps x {config.n_seeds} seeds"))
    return out
