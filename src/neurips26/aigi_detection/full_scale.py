"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the frozen encoder at its full depth, width and image size and reads per-layer CLS
features of a few synthetic images through it (full-size shape path), and renders real and fake
images of the synthetic world at full resolution. See :mod:`neurips26.harness.dryrun`.
"""

from __future__ import annotations

import numpy as np

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (an :class:`~neurips26.aigi_detection.experiment.Config`)."""
    from . import world as W
    from .experiment import _encoder

    def encoder() -> dict:
        enc = _encoder(config, 0)
        x = W.make_reals(4, np.random.default_rng(0), config.image_size).images
        feats = enc.layer_cls(x)
        import torch

        mods = [m for m in vars(enc).values() if isinstance(m, torch.nn.Module)]
        n = sum(p.numel() for m in mods for p in m.parameters())
        train = config.n_train_real + config.n_train_fake
        # every training image's CLS vector per layer, float32, is what the heads are fitted on
        cache_gb = train * enc.num_layers * enc.hidden_size * 4 / 1e9
        return {"params": {f"frozen encoder ({config.encoder})": int(n)} if n else {},
                "peak_memory_gb": cache_gb * 3 + 1.0,
                "note": f"features {tuple(np.shape(feats))} for 4 images; cached features ~{cache_gb:.2f} GB"}

    def images() -> dict:
        rng = np.random.default_rng(0)
        r = W.make_reals(8, rng, config.image_size)
        f = W.make_fakes("upconv_gan", 8, rng, config.image_size)
        return {"note": f"reals {np.shape(r.images)}, fakes {np.shape(f.images)}"}

    out = [Stage("frozen encoder (full size, 4 images)", encoder, limit_s=40), Stage("synthetic world images", images)]
    if not getattr(config, "data_root", ""):
        out.append(unchecked("real-data part", "no data_root/encoder_path given: the run skips it"))
    out.append(unchecked("feature extraction and heads", f"{config.n_train_real + config.n_train_fake} training "
                         f"images x {config.epochs} epochs x {config.n_seeds} seeds"))
    return out
