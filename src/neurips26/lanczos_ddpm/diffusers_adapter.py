"""Use the Lanczos sampler with a diffusers ``UNet2DModel`` + ``DDPMScheduler`` pair.

diffusers' ``DDPMScheduler.step`` only supports isotropic variances (``fixed_small``,
``fixed_large``) or a learned diagonal (``learned``/``learned_range``). This adapter reuses the
scheduler's ᾱ grid, timestep subset and prediction type, and runs :func:`.sampler.ddpm_sample`
with any covariance — including the full posterior covariance via LGS.

Example (no downloads; any trained UNet works the same way)::

    from diffusers import DDPMScheduler, UNet2DModel
    from neurips26.lanczos_ddpm import sample_with_diffusers

    unet = UNet2DModel.from_pretrained(my_local_folder)           # or UNet2DModel(**config)
    scheduler = DDPMScheduler.from_pretrained(my_local_folder)
    images, stats = sample_with_diffusers(unet, scheduler, batch_size=16, num_inference_steps=20,
                                          covariance="lanczos", k=3)
    print(stats.forward, stats.jvp)                                 # 20 forwards, 57 JVPs (last step: mean)
"""

from __future__ import annotations

import numpy as np
import torch

from .covariance import COVARIANCES, SamplerStats, check_prediction_type
from .sampler import ddpm_sample


def diffusers_model(unet, scheduler, prediction_type: str | None = None):
    """Wrap a diffusers UNet as ``model(x, t) -> prediction`` plus its schedule.

    Args:
        unet: a ``UNet2DModel`` (or any module called as ``unet(x, t).sample``).
        scheduler: a ``DDPMScheduler`` (uses ``alphas_cumprod`` and ``config.prediction_type``).
        prediction_type: optional; must equal the scheduler's (the network was trained for it).

    Returns:
        (model, alphas_cumprod as float64 numpy (N,), prediction_type).

    Raises:
        ValueError: a prediction type that does not match the scheduler's, an unsupported one,
            or a learned-variance UNet (output channels ≠ input channels).
    """
    sched_pt = scheduler.config.prediction_type
    check_prediction_type(sched_pt)
    if prediction_type is not None and prediction_type != sched_pt:
        raise ValueError(f"prediction_type {prediction_type!r} does not match the network's scheduler "
                         f"({sched_pt!r}); converting with the wrong one gives wrong samples")
    cfg = getattr(unet, "config", None)
    if cfg is not None and getattr(cfg, "out_channels", None) != getattr(cfg, "in_channels", None):
        raise ValueError(f"UNet has out_channels={cfg.out_channels} != in_channels={cfg.in_channels} "
                         "(a learned-variance head?); only the mean prediction is supported")
    ac = scheduler.alphas_cumprod.detach().cpu().double().numpy()

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return unet(x, t).sample

    return model, ac, sched_pt


def sample_with_diffusers(unet, scheduler, *, batch_size: int, num_inference_steps: int,
                          covariance: str = "lanczos", k: int = 3, symmetrize: bool = False,
                          denoise_last: bool = True, generator: torch.Generator | None = None,
                          prediction_type: str | None = None) -> tuple[torch.Tensor, SamplerStats]:
    """DDPM sampling of a diffusers UNet with any reverse covariance.

    The timestep subset comes from ``scheduler.set_timesteps(num_inference_steps)``; β of every
    step is recomputed from ᾱ of the actual previous step (correct under skipping).

    Args:
        unet, scheduler: see :func:`diffusers_model`.
        batch_size: number of images. num_inference_steps: T.
        covariance, k, symmetrize, denoise_last, generator: see :func:`.sampler.ddpm_sample`.
        prediction_type: optional check against the scheduler's.

    Returns:
        (images of shape (B, C, H, W), :class:`.covariance.SamplerStats`).

    Raises:
        ValueError: batch_size or num_inference_steps not a positive integer (more steps than the
            scheduler's training grid: diffusers' own ValueError); see :func:`diffusers_model` and
            :func:`.sampler.ddpm_sample`.
    """
    if covariance not in COVARIANCES:
        raise ValueError(f"covariance {covariance!r} is not one of {COVARIANCES}")
    for name, v in (("batch_size", batch_size), ("num_inference_steps", num_inference_steps)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    model, ac, pt = diffusers_model(unet, scheduler, prediction_type)
    scheduler.set_timesteps(num_inference_steps)
    ts = np.asarray(scheduler.timesteps.cpu().numpy(), dtype=int)
    cfg = unet.config
    size = cfg.sample_size if isinstance(cfg.sample_size, (tuple, list)) else (cfg.sample_size, cfg.sample_size)
    param = next(unet.parameters())
    shape = (batch_size, cfg.in_channels, *size)
    return ddpm_sample(model, shape, ac, ts, prediction_type=pt, covariance=covariance, k=k,
                       symmetrize=symmetrize, denoise_last=denoise_last, generator=generator,
                       dtype=param.dtype, device=param.device)
