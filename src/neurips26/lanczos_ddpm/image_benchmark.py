"""Image benchmark at small scale: a small diffusers UNet on digits, KID with a self-trained feature net.

The paper reports FID on standard image benchmarks; Inception weights and those data sets are
not available offline. The substitute (full configuration only, ``Config.image_benchmark``):

1. data: scikit-learn digits (1797 images, 8×8, pixels 0..16) mapped to [-1, 1] and, for
   ``image_size`` > 8, bilinearly upscaled to image_size × image_size;
2. :func:`train_unet`: a small ``diffusers.UNet2DModel`` built from a config (no hub download, no
   attention so forward-mode JVPs work), ε-prediction on the VP schedule of :mod:`.schedule`;
3. :func:`train_feature_net`: a small CNN digit classifier; its penultimate layer is the feature map
   (the role Inception-pool3 plays for FID/KID);
4. :func:`kid`: Kernel Inception Distance (Bińkowski, Sutherland, Arbel, Gretton 2018, "Demystifying
   MMD GANs", ICLR) — the unbiased MMD² with kernel k(x, y) = (xᵀy/d + 1)³, averaged over subsets;
5. :func:`image_benchmark`: DDPM samples with covariance β̃_t I, the exact diagonal of Σ*_t and LGS
   k = 3 (via :func:`.sampler.ddpm_sample`) at several T, KID to held-out digits per method.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch

from .sampler import ddpm_sample
from .schedule import spaced_timesteps, vp_alphas_cumprod

IMAGE_METHODS = (("beta_tilde", "beta_tilde", 1), ("diagonal", "diagonal", 1), ("lanczos3", "lanczos", 3))


def digit_images(size: int = 16) -> tuple[torch.Tensor, np.ndarray]:
    """scikit-learn digits as images in [-1, 1].

    Args:
        size: side length ≥ 8; 8 keeps the native resolution, larger sizes upscale bilinearly.

    Returns:
        (images float32 (1797, 1, size, size) in [-1, 1], labels int64 (1797,)).

    Raises:
        ValueError: size < 8.
    """
    from sklearn.datasets import load_digits

    if isinstance(size, bool) or int(size) != size or size < 8:
        raise ValueError(f"size must be an integer >= 8, got {size!r}")
    d = load_digits()
    x = torch.as_tensor(d.images / 8.0 - 1.0, dtype=torch.float32)[:, None]
    if size > 8:
        x = torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False).clamp(-1, 1)
    return x, np.asarray(d.target, dtype=np.int64)


def small_unet(sample_size: int, channels: int = 1, width: int = 32):
    """A small attention-free ``UNet2DModel`` (two resolutions, widths (width, 2·width)).

    Raises:
        ValueError: sample_size not divisible by 2 (one downsampling), or width not divisible by 8
            (GroupNorm with 8 groups).
    """
    import diffusers

    if sample_size % 2 or width % 8:
        raise ValueError(f"need even sample_size and width divisible by 8, got {sample_size}, {width}")
    return diffusers.UNet2DModel(sample_size=sample_size, in_channels=channels, out_channels=channels,
                                 layers_per_block=1, block_out_channels=(width, 2 * width),
                                 down_block_types=("DownBlock2D", "DownBlock2D"),
                                 up_block_types=("UpBlock2D", "UpBlock2D"), norm_num_groups=8,
                                 add_attention=False)


def train_unet(images: torch.Tensor, steps: int, *, num_train_steps: int = 1000, batch_size: int = 64,
               lr: float = 2e-4, width: int = 32, seed: int = 0, device: str | torch.device = "cpu",
               progress: Callable | None = None):
    """Train a small UNet ε-predictor with the DDPM loss E‖ε_θ(√ᾱ_t x0 + √(1-ᾱ_t) ε, t) − ε‖².

    Args:
        images: float tensor (N, C, H, W) in [-1, 1], H = W even.
        steps: Adam steps (≥ 1). num_train_steps: training grid N (ᾱ from :func:`.schedule.vp_alphas_cumprod`).
        batch_size, lr, width, seed, device: training settings (cosine learning-rate decay).
        progress: optional ``iterable -> iterable`` wrapper.

    Returns:
        (model ``(x, t) -> ε̂`` for :func:`.sampler.ddpm_sample`, the UNet (eval mode),
         alphas_cumprod float64 (num_train_steps,), mean loss of the last ≤ 100 steps).

    Raises:
        ValueError: images not 4-D with H = W, or steps < 1.
    """
    if images.ndim != 4 or images.shape[2] != images.shape[3]:
        raise ValueError(f"images must have shape (N, C, H, H), got {tuple(images.shape)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    unet = small_unet(images.shape[2], images.shape[1], width).to(device)
    ac = vp_alphas_cumprod(num_train_steps)
    a = torch.as_tensor(ac, dtype=torch.float32)
    X = images.float()
    opt = torch.optim.Adam(unet.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    losses = []
    it = range(steps) if progress is None else progress(range(steps))
    unet.train()
    for _ in it:
        idx = torch.randint(len(X), (batch_size,), generator=g)
        t = torch.randint(num_train_steps, (batch_size,), generator=g)
        eps = torch.randn(X[idx].shape, generator=g)
        ab = a[t].view(-1, 1, 1, 1)
        xt = ab.sqrt() * X[idx] + (1 - ab).sqrt() * eps
        loss = ((unet(xt.to(device), t.to(device)).sample - eps.to(device)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    unet.eval()
    for p in unet.parameters():
        p.requires_grad_(False)

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return unet(x, t).sample

    return model, unet, ac, float(np.mean(losses[-100:]))


class FeatureNet(torch.nn.Module):
    """Small CNN classifier; ``features(x)`` (penultimate layer, dim ``feature_dim``) is the KID feature map."""

    def __init__(self, channels: int = 1, num_classes: int = 10, feature_dim: int = 64):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(channels, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(),
            torch.nn.Linear(256, feature_dim), torch.nn.ReLU())
        self.head = torch.nn.Linear(feature_dim, num_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def train_feature_net(images: torch.Tensor, labels, steps: int = 1000, *, batch_size: int = 128,
                      lr: float = 1e-3, feature_dim: int = 64, noise: float = 0.05, seed: int = 0):
    """Train :class:`FeatureNet` as a classifier (cross-entropy, Adam; small Gaussian input noise).

    Args:
        images: (N, C, H, W) float in [-1, 1]. labels: (N,) integer classes in 0..9.
        steps: Adam steps (≥ 1). noise: std of the input noise (robustness to sampler noise).

    Returns:
        (FeatureNet in eval mode, training accuracy on ``images``).

    Raises:
        ValueError: mismatched lengths, or steps < 1.
    """
    y = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    if len(y) != len(images) or images.ndim != 4:
        raise ValueError(f"need images (N, C, H, W) and labels (N,), got {tuple(images.shape)}, {tuple(y.shape)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    net = FeatureNet(images.shape[1], int(y.max()) + 1, feature_dim)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for _ in range(steps):
        idx = torch.randint(len(images), (batch_size,), generator=g)
        x = images[idx] + noise * torch.randn(images[idx].shape, generator=g)
        loss = torch.nn.functional.cross_entropy(net(x), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        acc = float((net(images).argmax(1) == y).float().mean())
    return net, acc


def kid(features_a, features_b, *, num_subsets: int = 100, subset_size: int = 1000,
        seed: int = 0) -> tuple[float, float]:
    """Kernel Inception Distance: unbiased MMD² with k(x, y) = (xᵀy/d + 1)³, averaged over subsets.

    Per subset (m rows drawn without replacement from each set; Bińkowski et al. 2018, eq. 4)::

        MMD²_u = Σ_{i≠j} k(x_i,x_j)/(m(m-1)) + Σ_{i≠j} k(y_i,y_j)/(m(m-1)) − 2 Σ_{i,j} k(x_i,y_j)/m²

    Unbiased: its expectation is 0 when both sets come from the same law (it can be negative).

    Args:
        features_a, features_b: arrays (n_a, d), (n_b, d). num_subsets: ≥ 1.
        subset_size: m, capped at min(n_a, n_b) (as in torchmetrics / clean-fid).
        seed: subset sampling seed.

    Returns:
        (mean over subsets, standard deviation over subsets).

    Raises:
        ValueError: non-2-D inputs, different feature dimensions, fewer than 2 rows, or non-finite values.
    """
    a = np.asarray(features_a, dtype=np.float64)
    b = np.asarray(features_b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"need (n_a, d) and (n_b, d) features, got {a.shape}, {b.shape}")
    if min(len(a), len(b)) < 2:
        raise ValueError("need at least 2 rows in each feature set")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("features must be finite")
    d = a.shape[1]
    m = min(subset_size, len(a), len(b))
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(max(1, num_subsets)):
        x = a[rng.choice(len(a), m, replace=False)]
        y = b[rng.choice(len(b), m, replace=False)]
        kxx = (x @ x.T / d + 1) ** 3
        kyy = (y @ y.T / d + 1) ** 3
        kxy = (x @ y.T / d + 1) ** 3
        vals.append((kxx.sum() - np.trace(kxx)) / (m * (m - 1)) + (kyy.sum() - np.trace(kyy)) / (m * (m - 1))
                    - 2 * kxy.mean())
    return float(np.mean(vals)), float(np.std(vals))


def _features(net: FeatureNet, x: torch.Tensor, chunk: int = 1000) -> np.ndarray:
    with torch.no_grad():
        return torch.cat([net.features(x[i:i + chunk].float().cpu()) for i in range(0, len(x), chunk)]).numpy()


def image_benchmark(config, ctx) -> dict:
    """Train UNet + feature net on digits, sample with β̃ I / diagonal / LGS-3 at ``config.image_T``, KID each.

    Reads ``config.image_size``, ``image_unet_steps``, ``image_unet_width``, ``image_feature_steps``,
    ``image_samples``, ``image_T``, ``image_batch``, ``num_train_steps``; uses ``ctx.seed``,
    ``ctx.torch_generator`` and ``ctx.track``. Runs on CUDA when available.

    Data split: 80 % of the digits train both networks, the held-out 20 % is the KID reference.
    Samples of all methods share their noise (same generator seed per T and chunk).

    Returns:
        dict with "T", "kid" {method: [KID per T]}, "kid_std" (std over subsets), "kid_train_vs_test"
        (KID of real training vs held-out digits: the noise floor), "unet_loss", "feature_accuracy_test",
        "jvps" {method: [JVPs per T]}, "samples_first_T" {method: (≤16, C, H, W) numpy}.

    Raises:
        ValueError: see :func:`digit_images`, :func:`train_unet`, :func:`.sampler.ddpm_sample`.
    """
    device = ctx.device  # the requested device (--device), not whatever GPU happens to be visible
    X, y = digit_images(config.image_size)
    perm = ctx.child_rng(50).permutation(len(X))
    n_test = len(X) // 5
    te, tr = torch.as_tensor(perm[:n_test]), torch.as_tensor(perm[n_test:])
    model, unet, ac, loss = train_unet(X[tr], config.image_unet_steps, num_train_steps=config.num_train_steps,
                                       width=config.image_unet_width, seed=ctx.seed, device=device,
                                       progress=lambda it: ctx.track(it, "image benchmark: train UNet"))
    fnet, _ = train_feature_net(X[tr], y[tr.numpy()], config.image_feature_steps, seed=ctx.seed)
    with torch.no_grad():
        acc = float((fnet(X[te]).argmax(1).numpy() == y[te.numpy()]).mean())
    f_test = _features(fnet, X[te])
    floor = kid(_features(fnet, X[tr]), f_test, seed=ctx.seed)[0]
    B, shape = config.image_samples, tuple(X.shape[1:])
    out = {"T": list(config.image_T), "kid": {}, "kid_std": {}, "jvps": {}, "samples_first_T": {}}
    for name, _, _ in IMAGE_METHODS:
        out["kid"][name], out["kid_std"][name], out["jvps"][name] = [], [], []
    for T in ctx.track(config.image_T, "image benchmark: sampling"):
        ts = spaced_timesteps(config.num_train_steps, T)
        for name, cov, k in IMAGE_METHODS:
            xs, jv = [], 0
            for c, i in enumerate(range(0, B, config.image_batch)):
                n = min(config.image_batch, B - i)
                x, st = ddpm_sample(model, (n, *shape), ac, ts, prediction_type="epsilon", covariance=cov, k=k,
                                    generator=ctx.torch_generator(500 + 1000 * T + c), device=device)
                xs.append(x.detach().cpu().clamp(-1, 1))
                jv += st.jvp
            x = torch.cat(xs)
            km, ks = kid(_features(fnet, x), f_test, seed=ctx.seed)
            out["kid"][name].append(km)
            out["kid_std"][name].append(ks)
            out["jvps"][name].append(jv)
            if T == config.image_T[0]:
                out["samples_first_T"][name] = x[:16].numpy()
    out.update(kid_train_vs_test=floor, unet_loss=loss, feature_accuracy_test=acc,
               image_size=config.image_size, samples=B)
    return out
