"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run trains digits proxies and, with ``lm_experiment``, a small GPT-2 with trl; the dry run
checks that trl and transformers import and lists the rest. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    def lm_stack() -> dict:
        import transformers
        import trl

        return {"note": f"transformers {transformers.__version__}, trl {trl.__version__}"}

    out = [Stage("LM stack importable", lm_stack)] if config.lm_experiment else []
    return out + [unchecked("proxies and best-of-N", f"{config.proxy_seeds} proxy seeds, best-of-N up to "
                                                     f"{max(config.bon_ns)}, {config.train_steps} training steps")]
