"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the whitening, TL-dynamics, grokking and VAE networks at full width on PyTorch's ``meta``
device (inputs of the digits set, and of 32 x 32 x 3 images when ``data_dir`` is given), runs a
meta batch through each, and generates the grokking data set at full size. See
:mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, meta_build, meta_tensor, on_meta, training_memory_gb, unchecked

from .data import digits, modular_addition
from .models import VAE, mlp


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.feature_learning.experiment.Config`)."""
    d_in = 3072 if config.data_dir else 64  # CIFAR-sized user arrays, else the digits

    def models() -> dict:
        built = meta_build({
            "whitening MLP": lambda: mlp(d_in, config.whiten_width, config.whiten_depth, 100, activation="gelu"),
            "TL MLP": lambda: mlp(d_in, config.tl_width, config.tl_depth, 100, activation="gelu"),
            "grokking MLP": lambda: mlp(2 * config.grok_prime, config.grok_width, 3, config.grok_prime,
                                        activation="relu"),
            "VAE": lambda: VAE(64, config.vae_hidden, config.vae_latent),
        })
        m = built["models"]
        on_meta(m["whitening MLP"], meta_tensor(128, d_in))
        on_meta(m["TL MLP"], meta_tensor(128, d_in))
        on_meta(m["grokking MLP"], meta_tensor(config.grok_batch_size, 2 * config.grok_prime))
        on_meta(m["VAE"], meta_tensor(128, 64))
        return {"params": built["params"],
                "peak_memory_gb": training_memory_gb(max(built["params"].values())) * 2 + 1.0,
                "note": "2x margin + 1 GB for torch"}

    def data() -> dict:
        split = modular_addition(config.grok_prime, 0.7, seed=0)
        d = digits(seed=0)
        return {"note": f"mod-{config.grok_prime} pairs: {len(split.X_train)} train; digits {d.X_train.shape}"}

    out = [Stage("networks (meta, forward)", models), Stage("data generators (full size)", data)]
    if not config.data_dir:
        out.append(unchecked("user data sets", "no data_dir given: the MNIST/SVHN/CIFAR parts are skipped by the run"))
    out.append(unchecked("training", f"{config.grok_epochs} grokking epochs, {config.tl_epochs} TL epochs: GPU/CPU hours"))
    return out
