"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the image benchmark's diffusers UNet and its KID feature network at full size on
PyTorch's ``meta`` device with a meta forward pass each, and loads the digits images at the
benchmark's resolution. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, meta_build, meta_tensor, on_meta, training_memory_gb, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.lanczos_ddpm.experiment.Config`)."""
    # the Lanczos test holds a d x d float64 covariance, its eigenvectors and a product at once
    lanczos_gb = 4 * config.lanczos_dim ** 2 * 8 / 1e9

    def image_models() -> dict:
        from .image_benchmark import FeatureNet, small_unet

        built = meta_build({"UNet": lambda: small_unet(config.image_size, 1, config.image_unet_width),
                            "KID feature net": FeatureNet})
        import torch

        x = meta_tensor(64, 1, config.image_size, config.image_size)
        out = on_meta(built["models"]["UNet"], x, torch.zeros(64, dtype=torch.long, device="meta")).sample
        if tuple(out.shape) != tuple(x.shape):
            raise ValueError(f"UNet output {tuple(out.shape)} for input {tuple(x.shape)}")
        on_meta(built["models"]["KID feature net"], meta_tensor(128, 1, config.image_size, config.image_size))
        n = built["params"]["UNet"]
        acts = 64 * config.image_unet_width * config.image_size ** 2 * 16  # a generous count per image
        return {"params": built["params"],
                "peak_memory_gb": max(lanczos_gb, training_memory_gb(n, activations=acts)) * 1.5 + 1.0,
                "note": f"Lanczos test at d = {config.lanczos_dim}: ~{lanczos_gb:.2f} GB; 1.5x margin + 1 GB"}

    def images() -> dict:
        from .image_benchmark import digit_images

        x, y = digit_images(config.image_size)
        return {"note": f"digits images {tuple(x.shape)}"}

    out = []
    if config.image_benchmark:
        out += [Stage("UNet and feature net (meta, forward)", image_models), Stage("digits images (full size)", images)]
    else:
        out.append(unchecked("image benchmark", "image_benchmark=False: not run"))
    out += [unchecked("Lanczos accuracy", f"{len(config.lanczos_kappas)} QR decompositions at d = "
                                          f"{config.lanczos_dim} (minutes of CPU): not run"),
            unchecked("training", f"UNet {config.image_unet_steps} steps, epsilon-MLP {config.train_steps} steps")]
    return out
