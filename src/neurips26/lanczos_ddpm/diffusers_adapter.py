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


def scheduler_x0_transform(scheduler):
    """The scheduler's own treatment of the predicted x_0 in ``DDPMScheduler.step``, or ``None``.

    diffusers applies, in this order of precedence: ``thresholding=True`` — dynamic thresholding
    (per sample, s = the ``dynamic_thresholding_ratio`` quantile of |x̂_0|, clamped to
    [1, ``sample_max_value``]; x̂_0 ← clamp(x̂_0, −s, s)/s); else ``clip_sample=True`` (diffusers'
    default) — x̂_0 ← clamp(x̂_0, −r, r) with r = ``clip_sample_range``. Same arithmetic as
    diffusers' ``_threshold_sample`` and ``step``.

    Returns:
        ``f(x0 (B, ...)) -> (B, ...)`` or ``None`` when the scheduler does neither.

    Raises:
        ValueError: a non-finite or non-positive clip range or threshold settings out of range.
    """
    cfg = scheduler.config
    if getattr(cfg, "thresholding", False):
        ratio, vmax = float(cfg.dynamic_thresholding_ratio), float(cfg.sample_max_value)
        if not (0 < ratio <= 1 and np.isfinite(vmax) and vmax >= 1):
            raise ValueError(f"thresholding needs 0 < dynamic_thresholding_ratio <= 1 and sample_max_value >= 1, "
                             f"got {ratio!r} and {vmax!r}")

        def threshold(x0: torch.Tensor) -> torch.Tensor:
            flat = x0.reshape(x0.shape[0], -1)
            s = torch.quantile(flat.abs().float() if flat.dtype not in (torch.float32, torch.float64)
                               else flat.abs(), ratio, dim=1)
            s = torch.clamp(s, min=1, max=vmax).to(flat.dtype).unsqueeze(1)
            return (torch.clamp(flat, -s, s) / s).reshape(x0.shape)

        return threshold
    if getattr(cfg, "clip_sample", False):
        r = float(cfg.clip_sample_range)
        if not (np.isfinite(r) and r > 0):
            raise ValueError(f"clip_sample_range must be a finite number > 0, got {r!r}")
        return lambda x0: x0.clamp(-r, r)
    return None


def sample_with_diffusers(unet, scheduler, *, batch_size: int, num_inference_steps: int,
                          covariance: str = "lanczos", k: int = 3, symmetrize: bool = False,
                          denoise_last: bool = True, generator: torch.Generator | None = None,
                          prediction_type: str | None = None) -> tuple[torch.Tensor, SamplerStats]:
    """DDPM sampling of a diffusers UNet with any reverse covariance.

    The timestep subset comes from ``scheduler.set_timesteps(num_inference_steps)``; β of every
    step is recomputed from ᾱ of the actual previous step (correct under skipping). The scheduler's
    ``clip_sample`` (True by default in diffusers) and ``thresholding`` are honoured as its own
    ``step`` does: the predicted x_0 is clipped or thresholded before the mean is formed
    (:func:`scheduler_x0_transform`); the covariance (e.g. LGS) uses the network's unclipped
    Jacobian. Step arithmetic: the step coefficients are computed in float64 from ᾱ (diffusers'
    ``step`` uses the scheduler's float32 tensors), so results agree with diffusers' loop to float32
    round-off, not bit for bit; the images themselves are in the UNet's dtype.

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
                       dtype=param.dtype, device=param.device, x0_transform=scheduler_x0_transform(scheduler))
