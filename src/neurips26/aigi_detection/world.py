"""A synthetic "GAMC world": procedurally drawn real images and generators that each leave
their own mixture of artifacts, all passed through the identical final encoding.

Everything here is **inferred** (the paper was not readable beyond its abstract): it is a test
bed built to make the abstract's statements measurable on a CPU. The abstract's Generative
Artifact Manifold Clustering (GAMC) hypothesis — "generative artifacts are multi-dimensional,
and different generators occupy distinct distributions along these dimensions" — is built in
on purpose: five artifact dimensions, each generator a vector of strengths over them with one
prominent dimension and weaker shared ones.

Images are ``float32`` arrays ``[N, H, W, 3]`` in ``[0, 1]`` after the final encoding (sensor
noise, uint8 quantisation = what a lossless PNG stores). Content classes (the "semantics")::

    0 discs, 1 stripes, 2 blobs

Artifact dimensions (strength ``s`` per image, see :data:`ARTIFACTS`)::

    upsampling   nearest 2x upsampling of a 2x-pooled image, mixed in: x <- (1-0.3s) x + 0.3s up(pool(x))
                 plus a transposed-convolution checkerboard 0.01 s (-1)^(i+j) (spectral peak at N/2)
    smoothing    high-frequency deficit: x <- (1-s) x + s G_2 * x
    grid         periodic spectral grid at N/4: x <- x + 0.12 s cos(pi i/2 + phi) cos(pi j/2 + psi)
    colour       colour statistics: chroma scaled by 1 + s about the per-pixel luminance
    residual     diffusion-like denoise-and-renoise: x <- (1-s) x + s (G_0.8 * x + 0.08 n), n iid per channel
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

CONTENT_CLASSES = ("discs", "stripes", "blobs")
ARTIFACTS = ("upsampling", "smoothing", "grid", "colour", "residual")
#: Artifact amplitudes, set in a pilot so that each generator alone is linearly detectable from
#: the encoder cues but (except the upsampling one) not trivially; fixed before the claims ran.
CHECKER_AMP, GRID_AMP, SMOOTH_SIGMA, UP_MIX, RESIDUAL_NOISE = 0.01, 0.12, 2.0, 0.3, 0.08

#: Generators as strength vectors over :data:`ARTIFACTS` (inferred test bed; the per-image
#: strength is this value times U(0.5, 1)). Each has one prominent dimension; the weaker ones
#: are shared, which is what a detector that "retains richer and more shared generative
#: features" can transfer.
GENERATORS: dict[str, tuple[float, ...]] = {
    "upconv_gan":   (1.0, 0.0, 0.0, 0.3, 0.3),
    "bilinear_gan": (0.0, 1.0, 0.0, 0.3, 0.3),
    "grid_vae":     (0.0, 0.0, 1.0, 0.3, 0.3),
    "colour_diff":  (0.0, 0.3, 0.0, 1.0, 0.0),
    "ddpm_like":    (0.3, 0.0, 0.0, 0.0, 1.0),
    "mixed_ldm":    (0.4, 0.4, 0.4, 0.0, 0.0),
}


@dataclass
class ImageSet:
    """Images with labels.

    Attributes:
        images: ``float32 [N, H, W, 3]`` in ``[0, 1]``.
        label: ``int64 [N]``, 1 = generated (fake), 0 = real.
        content: ``int64 [N]``, index into :data:`CONTENT_CLASSES`.
        generator: ``list[str]`` of length N, ``"real"`` for real images.
    """

    images: np.ndarray
    label: np.ndarray
    content: np.ndarray
    generator: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.label)

    def subset(self, idx: np.ndarray) -> "ImageSet":
        """Rows ``idx`` (an index array or boolean mask) as a new :class:`ImageSet`."""
        idx = np.arange(len(self))[idx] if np.asarray(idx).dtype == bool else np.asarray(idx)
        return ImageSet(self.images[idx], self.label[idx], self.content[idx], [self.generator[i] for i in idx])

    @staticmethod
    def concat(parts: list["ImageSet"]) -> "ImageSet":
        """Concatenate image sets (same image size)."""
        return ImageSet(np.concatenate([p.images for p in parts]), np.concatenate([p.label for p in parts]),
                        np.concatenate([p.content for p in parts]), sum((p.generator for p in parts), []))


def _pink_noise(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """1/f^alpha noise, alpha ~ U(1.5, 2.5), each image scaled to [0, 1]: ``[n, size, size]``."""
    f = np.fft.fftfreq(size)
    r = np.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    r[0, 0] = 1.0
    alpha = rng.uniform(1.5, 2.5, size=(n, 1, 1))
    spec = (rng.normal(size=(n, size, size)) + 1j * rng.normal(size=(n, size, size))) / r[None] ** (alpha / 2)
    spec[:, 0, 0] = 0
    x = np.fft.ifft2(spec).real
    x -= x.min(axis=(1, 2), keepdims=True)
    return x / (x.max(axis=(1, 2), keepdims=True) + 1e-12)


def render_content(content: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Procedural scenes of the given content classes: ``float32 [N, size, size, 3]`` in [0, 1].

    Background: coloured 1/f noise; foreground: 1–3 soft discs, oriented sinusoidal stripes
    (period 6–12 px) or a sum of Gaussian blobs. Source: inferred (a procedural stand-in for
    natural images with a controllable semantic class).
    """
    n = len(content)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    base = _pink_noise(n, size, rng)
    tint = rng.uniform(0.3, 0.8, size=(n, 1, 1, 3))
    img = 0.6 * base[..., None] * tint + 0.2 * tint
    for i in range(n):
        colour = rng.uniform(0.1, 0.95, size=3)
        if content[i] == 0:  # discs
            mask = np.zeros((size, size))
            for _ in range(rng.integers(1, 4)):
                cy, cx = rng.uniform(0.2, 0.8, 2) * size
                rad = rng.uniform(0.12, 0.3) * size
                mask = np.maximum(mask, np.clip(rad - np.hypot(yy - cy, xx - cx) + 0.5, 0, 1))
        elif content[i] == 1:  # stripes
            th = rng.uniform(0, np.pi)
            period = rng.uniform(6, 12)
            mask = 0.5 + 0.5 * np.sin(2 * np.pi * (np.cos(th) * xx + np.sin(th) * yy) / period + rng.uniform(0, 6.3))
        else:  # blobs
            mask = np.zeros((size, size))
            for _ in range(rng.integers(3, 6)):
                cy, cx = rng.uniform(0, 1, 2) * size
                sig = rng.uniform(0.05, 0.15) * size
                mask += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sig ** 2))
            mask = np.clip(mask, 0, 1)
        img[i] = img[i] * (1 - 0.8 * mask[..., None]) + 0.8 * mask[..., None] * colour
    return img.astype(np.float32)


def _blur(x: np.ndarray, sigma: float) -> np.ndarray:
    return ndimage.gaussian_filter(x, sigma=(0, sigma, sigma, 0), mode="reflect")


def apply_artifacts(x: np.ndarray, strengths: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Apply the five artifact dimensions with per-image strengths.

    Args:
        x: ``float [N, H, W, 3]`` in [0, 1], H and W divisible by 4.
        strengths: ``float [N, 5]`` >= 0, columns in :data:`ARTIFACTS` order.

    Returns:
        ``float32 [N, H, W, 3]`` (not clipped; the final encoding clips).

    Source: inferred (the module docstring gives each operation).
    """
    n, h, w, _ = x.shape
    s = [strengths[:, k].reshape(n, 1, 1, 1) for k in range(len(ARTIFACTS))]
    x = x.astype(np.float64)
    # upsampling: nearest up(avg-pool 2x2) mix + checkerboard (-1)^(i+j) (transposed-conv artifact)
    pooled = x.reshape(n, h // 2, 2, w // 2, 2, 3).mean(axis=(2, 4))
    up = pooled.repeat(2, axis=1).repeat(2, axis=2)
    checker = ((-1.0) ** (np.add.outer(np.arange(h), np.arange(w))))[None, :, :, None]
    x = (1 - UP_MIX * s[0]) * x + UP_MIX * s[0] * up + CHECKER_AMP * s[0] * checker
    # smoothing: high-frequency deficit
    x = (1 - s[1]) * x + s[1] * _blur(x, SMOOTH_SIGMA)
    # grid: spectral peaks at N/4
    phi, psi = rng.uniform(0, 2 * np.pi, (2, n, 1, 1, 1))
    ii, jj = np.arange(h)[None, :, None, None], np.arange(w)[None, None, :, None]
    x = x + GRID_AMP * s[2] * np.cos(np.pi * ii / 2 + phi) * np.cos(np.pi * jj / 2 + psi)
    # colour: chroma scaled about luminance
    lum = x.mean(axis=3, keepdims=True)
    x = lum + (1 + s[3]) * (x - lum)
    # residual: denoise and re-noise with channel-independent noise
    x = (1 - s[4]) * x + s[4] * (_blur(x, 0.8) + RESIDUAL_NOISE * rng.normal(size=x.shape))
    return x.astype(np.float32)


def final_encoding(x: np.ndarray, rng: np.random.Generator, noise: float = 0.01) -> np.ndarray:
    """The identical last step of every image, real or fake: channel-correlated sensor noise of
    std ``noise``, clipping and uint8 quantisation (what a lossless PNG stores), back to float32.

    Source: inferred (same encoding for both classes so that format cannot be a shortcut).
    """
    n, h, w, _ = x.shape
    lum_noise = rng.normal(size=(n, h, w, 1))
    x = x + noise * (0.8 * lum_noise + 0.2 * rng.normal(size=x.shape))
    return (np.round(np.clip(x, 0, 1) * 255) / 255).astype(np.float32)


def make_reals(n: int, rng: np.random.Generator, size: int = 32,
               content_probs: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)) -> ImageSet:
    """``n`` real images: procedural content, camera-like optical blur (sigma 0.5), final encoding.

    Raises:
        ValueError: ``n < 1``, ``size`` not a positive multiple of 4, or ``content_probs`` not
            three non-negative numbers summing to 1.
    """
    _check_common(n, size, content_probs)
    content = rng.choice(3, size=n, p=np.asarray(content_probs))
    x = _blur(render_content(content, size, rng), 0.5)
    return ImageSet(final_encoding(x, rng), np.zeros(n, np.int64), content.astype(np.int64), ["real"] * n)


def make_fakes(generator: str, n: int, rng: np.random.Generator, size: int = 32,
               content_probs: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)) -> ImageSet:
    """``n`` images of ``generator``: the real pipeline plus that generator's artifacts
    (per-image strength = the generator's vector x U(0.5, 1)), then the same final encoding.

    Raises:
        ValueError: unknown ``generator`` (lists the allowed names) or bad sizes/probabilities.
    """
    if generator not in GENERATORS:
        raise ValueError(f"generator={generator!r}; allowed: {sorted(GENERATORS)}")
    _check_common(n, size, content_probs)
    content = rng.choice(3, size=n, p=np.asarray(content_probs))
    x = _blur(render_content(content, size, rng), 0.5)
    strengths = np.asarray(GENERATORS[generator])[None, :] * rng.uniform(0.5, 1.0, size=(n, 1))
    x = apply_artifacts(x, strengths, rng)
    return ImageSet(final_encoding(x, rng), np.ones(n, np.int64), content.astype(np.int64), [generator] * n)


def _check_common(n: int, size: int, probs) -> None:
    if int(n) < 1:
        raise ValueError(f"n={n}; allowed: an integer >= 1")
    if size < 8 or size % 4:
        raise ValueError(f"size={size}; allowed: a multiple of 4, >= 8")
    p = np.asarray(probs, dtype=float)
    if p.shape != (3,) or (p < 0).any() or abs(p.sum() - 1) > 1e-6:
        raise ValueError(f"content_probs={probs}; allowed: 3 non-negative numbers summing to 1 "
                         f"(classes {CONTENT_CLASSES})")


def biased_probs(bias: float, favoured: int = 0) -> tuple[float, float, float]:
    """Content distribution with ``bias`` mass on class ``favoured`` and the rest split evenly.

    Raises:
        ValueError: ``bias`` outside [0, 1] or ``favoured`` not in 0..2.
    """
    if not 0.0 <= bias <= 1.0 or favoured not in (0, 1, 2):
        raise ValueError(f"bias={bias}, favoured={favoured}; allowed: bias in [0, 1], favoured in 0..2")
    p = [(1 - bias) / 2] * 3
    p[favoured] = bias
    return tuple(p)  # type: ignore[return-value]
