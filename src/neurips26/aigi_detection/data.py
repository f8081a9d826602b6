"""Folder layout, image loading with explicit bad-input handling, and the real/fake format audit.

Layout (the field's convention, e.g. UniversalFakeDetect / GenImage)::

    root/real/*.png|jpg|...            real images
    root/fake/<generator>/*.png|...     generated images, one folder per generator

Bad-input policy (chosen and documented here):

* unreadable or truncated files are **skipped and counted** (``LoadedImages.skipped`` names each
  with the reason); if more than ``max_bad_fraction`` (default 1%) of the files are bad, loading
  raises ``ValueError`` naming the first ones — a silent drop of many files would bias results;
* grayscale, palette, alpha, CMYK and 16-bit images are converted to 8-bit RGB with a
  :class:`ImageModeWarning` counting each mode (alpha is dropped); EXIF orientation is applied;
* images smaller than the encoder's input are upscaled (bicubic) with a warning — resizing
  destroys high-frequency artifacts, so the default policy for larger images is a centre crop;
* a generator folder with no images is a ``ValueError`` naming it;
* real and fake files differing in format, JPEG compression history (quality read from the
  quantisation tables; 8×8 blockiness that survives re-saving as PNG), size, colour mode or EXIF
  raise a :class:`FormatShortcutWarning` naming the difference (:func:`format_audit`): a detector
  can learn the encoding instead of the generator (the JPEG-real / PNG-fake shortcut).
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
SIZE_POLICIES = ("center_crop", "resize")


class FormatShortcutWarning(UserWarning):
    """Real and generated files differ in encoding, size, colour mode or EXIF."""


class ImageModeWarning(UserWarning):
    """Images were converted to RGB, or upscaled to the encoder's input size."""


@dataclass
class FolderDataset:
    """Image paths of a ``real/`` + ``fake/<generator>/`` folder.

    Attributes:
        root: the folder. real: real image paths (sorted). fake: ``{generator: paths}`` (sorted).
    """

    root: Path
    real: list[Path]
    fake: dict[str, list[Path]]

    def paths_and_groups(self) -> tuple[list[Path], list[str]]:
        """All paths with their group (``"real"`` or the generator name), reals first."""
        paths = list(self.real)
        groups = ["real"] * len(self.real)
        for g, ps in self.fake.items():
            paths += ps
            groups += [g] * len(ps)
        return paths, groups


def _images_in(folder: Path) -> list[Path]:
    """Image files under ``folder`` (recursive, sorted), skipping hidden files and folders
    (``.ipynb_checkpoints`` copies, macOS ``._name`` resource forks), which would otherwise
    duplicate images or count as unreadable."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def scan_folder(root: str | Path, require_fake: bool = True) -> FolderDataset:
    """Read the ``real/`` + ``fake/<generator>/`` layout.

    Raises:
        FileNotFoundError: ``root`` or ``root/real`` missing (named).
        ValueError: ``real/`` has no images; ``fake/`` missing or empty when ``require_fake``; a
            generator folder with no images (named); images directly in ``fake/`` (they need a
            generator folder). Hidden files and folders (names starting with ".") are ignored.
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {str(root)!r} not found")
    if not (root / "real").is_dir():
        raise FileNotFoundError(f"{str(root / 'real')!r} not found; layout: real/ and fake/<generator>/")
    real = _images_in(root / "real")
    if not real:
        raise ValueError(f"{str(root / 'real')!r} has no images (extensions {IMAGE_EXTENSIONS})")
    fake: dict[str, list[Path]] = {}
    fdir = root / "fake"
    if fdir.is_dir():
        loose = [p for p in fdir.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS
                 and not p.name.startswith(".")]
        if loose:
            raise ValueError(f"{len(loose)} image(s) directly in {str(fdir)!r} (e.g. {loose[0].name!r}); put them in "
                             "fake/<generator>/")
        for gdir in sorted(p for p in fdir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            ps = _images_in(gdir)
            if not ps:
                raise ValueError(f"generator folder {str(gdir)!r} has no images (extensions {IMAGE_EXTENSIONS})")
            fake[gdir.name] = ps
    if require_fake and not fake:
        raise ValueError(f"no generator folders under {str(fdir)!r}; layout: fake/<generator>/*.png")
    return FolderDataset(root, real, fake)


@dataclass
class LoadedImages:
    """Decoded images and what happened on the way.

    Attributes:
        images: ``float32 [N, S, S, 3]`` in [0, 1] (the readable files, in input order).
        paths: the N paths that were read. index: their positions in the input list.
        skipped: ``[(path, reason)]`` for unreadable or truncated files.
        converted: ``{original mode: count}`` of images converted to RGB.
        upscaled: number of images smaller than S that were upscaled.
    """

    images: np.ndarray
    paths: list[Path]
    index: list[int]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    converted: dict[str, int] = field(default_factory=dict)
    upscaled: int = 0


def _to_rgb_array(img) -> tuple[np.ndarray, str | None]:
    """8-bit RGB array of a PIL image and the mode it was converted from (None if already RGB)."""
    mode = img.mode
    if mode == "RGB":
        return np.asarray(img, np.uint8), None
    if mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        a = np.asarray(img, np.float64)
        if not np.isfinite(a).all():
            raise ValueError(f"mode {mode} image has NaN or infinite pixels")
        if mode == "F" and a.size and a.min() >= 0 and a.max() <= 1:
            hi = 1.0  # a float image in [0, 1] (dividing by 255 would turn it black)
        else:
            hi = 65535.0 if mode.startswith("I;16") or a.max() > 255 else 255.0
        a = np.clip(a / hi * 255.0, 0, 255).astype(np.uint8)
        return np.repeat(a[..., None], 3, axis=2), mode
    return np.asarray(img.convert("RGB"), np.uint8), mode


def load_image(path: str | Path, size: int, policy: str = "center_crop") -> tuple[np.ndarray, str | None, bool]:
    """Decode one image to ``float32 [size, size, 3]`` in [0, 1].

    Returns:
        ``(array, converted_from_mode or None, upscaled)``.

    16-bit and 32-bit integer images are scaled from their range (65535, or 255 when the values
    fit in 8 bits); float (mode ``F``) images in [0, 1] are taken as is, others as 0..255.

    Raises:
        OSError / ValueError (from Pillow): unreadable or truncated file; NaN pixels in a float image.
        ValueError: unknown ``policy`` (allowed :data:`SIZE_POLICIES`) or ``size`` not an integer >= 1.
    """
    from PIL import Image, ImageOps

    if policy not in SIZE_POLICIES:
        raise ValueError(f"policy={policy!r}; allowed: {SIZE_POLICIES}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size={size!r}; allowed: an integer >= 1 (the encoder's input side in pixels)")
    with Image.open(path) as img:
        img.load()  # truncated files raise here
        img = ImageOps.exif_transpose(img)
        arr, conv = _to_rgb_array(img)
    pil = Image.fromarray(arr)
    up = min(pil.size) < size
    if policy == "resize":
        pil = pil.resize((size, size), Image.BICUBIC)
    else:
        if up:
            scale = size / min(pil.size)
            pil = pil.resize((max(size, round(pil.width * scale)), max(size, round(pil.height * scale))), Image.BICUBIC)
        left, top = (pil.width - size) // 2, (pil.height - size) // 2
        pil = pil.crop((left, top, left + size, top + size))
    return np.asarray(pil, np.float32) / 255.0, conv, up



def _check_load_arguments(max_bad_fraction: float, policy: str, size: int) -> None:
    """The argument checks :func:`load_images` and :func:`encode_files` share (``ValueError``)."""
    if not 0.0 <= max_bad_fraction <= 1.0:
        raise ValueError(f"max_bad_fraction={max_bad_fraction}; allowed: 0..1")
    if policy not in SIZE_POLICIES:
        raise ValueError(f"policy={policy!r}; allowed: {SIZE_POLICIES}")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size={size!r}; allowed: an integer >= 1 (the encoder's input side in pixels)")

def load_images(paths: Iterable[str | Path], size: int, policy: str = "center_crop",
                max_bad_fraction: float = 0.01) -> LoadedImages:
    """Decode many images, skipping and counting unreadable or truncated ones (module docstring).

    Raises:
        ValueError: more than ``max_bad_fraction`` of the files unreadable (names the first five),
            no readable file at all, ``max_bad_fraction`` outside [0, 1], an unknown ``policy``, or
            ``size`` not an integer >= 1.
    """
    _check_load_arguments(max_bad_fraction, policy, size)
    paths = [Path(p) for p in paths]
    arrs, kept, idx, skipped, conv, up = _decode(paths, size, policy)
    _check_and_warn(len(paths), len(arrs), skipped, conv, up, size, max_bad_fraction)
    return LoadedImages(np.stack(arrs), kept, idx, skipped, dict(conv), up)


def _decode(paths: list[Path], size: int, policy: str, offset: int = 0):
    """Decode ``paths``; bad files are collected in ``skipped`` (positions counted from ``offset``)."""
    arrs, kept, idx, skipped = [], [], [], []
    conv: Counter = Counter()
    up = 0
    for i, p in enumerate(paths):
        try:
            a, c, u = load_image(p, size, policy)
        except (OSError, ValueError, SyntaxError) as exc:  # PIL raises these for bad/truncated data
            skipped.append((str(p), f"{type(exc).__name__}: {exc}"))
            continue
        arrs.append(a)
        kept.append(p)
        idx.append(offset + i)
        conv.update([c] if c else [])
        up += u
    return arrs, kept, idx, skipped, conv, up


def _check_and_warn(n_paths: int, n_ok: int, skipped: list, conv: Counter, up: int, size: int,
                    max_bad_fraction: float) -> None:
    """The bad-file rule and the conversion / upscaling warnings of :func:`load_images`."""
    if n_paths and len(skipped) > max_bad_fraction * n_paths:
        first = "; ".join(f"{p} ({r})" for p, r in skipped[:5])
        raise ValueError(f"{len(skipped)} of {n_paths} images unreadable or truncated (> max_bad_fraction="
                         f"{max_bad_fraction}): {first}")
    if not n_ok:
        raise ValueError(f"no readable image among {n_paths} path(s)")
    if conv:
        alpha = " (alpha dropped)" if any(m in ("RGBA", "RGBa", "LA", "La", "PA") for m in conv) else ""
        warnings.warn(f"converted to 8-bit RGB: {dict(conv)} image(s) by original mode{alpha}",
                      ImageModeWarning, stacklevel=3)
    if up:
        warnings.warn(f"{up} image(s) smaller than {size} px were upscaled (bicubic): resizing smooths away "
                      "high-frequency artifacts", ImageModeWarning, stacklevel=3)


def encode_files(paths: Iterable[str | Path], encode, size: int, policy: str = "center_crop",
                 max_bad_fraction: float = 0.01, chunk_size: int = 256) -> tuple[np.ndarray, LoadedImages]:
    """Decode and encode image files chunk by chunk, so that only ``chunk_size`` decoded images
    (``float32 [chunk, size, size, 3]``: 150 MB at 224 px and 256 images) are in memory at once,
    never the whole folder. Same bad-file policy and warnings as :func:`load_images`, applied to
    all files together.

    Args:
        paths: image files. encode: ``images [n, size, size, 3] -> cues [n, ...]`` (e.g. an
            encoder's ``layer_cls``). size, policy, max_bad_fraction: as in :func:`load_images`.
        chunk_size: images decoded at once (>= 1).

    Returns:
        ``(cues, loaded)``: the cues of the readable files in input order (``float32``) and a
        :class:`LoadedImages` whose ``images`` is empty (``[0, size, size, 3]``) but whose
        ``paths``, ``index``, ``skipped``, ``converted`` and ``upscaled`` are filled in.

    Raises:
        ValueError: as :func:`load_images`, or ``chunk_size < 1``.

    Source: inferred (memory: a folder of 10^5 images at 224 px is 60 GB as float32).
    """
    _check_load_arguments(max_bad_fraction, policy, size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size}; allowed: >= 1")
    paths = [Path(p) for p in paths]
    cues, kept, idx, skipped, conv, up = [], [], [], [], Counter(), 0
    for s in range(0, len(paths), chunk_size):
        a, k, i, sk, c, u = _decode(paths[s:s + chunk_size], size, policy, offset=s)
        skipped += sk
        if a:
            cues.append(np.asarray(encode(np.stack(a)), np.float32))
        kept += k
        idx += i
        conv.update(c)
        up += u
    _check_and_warn(len(paths), len(kept), skipped, conv, up, size, max_bad_fraction)
    return np.concatenate(cues), LoadedImages(np.empty((0, size, size, 3), np.float32), kept, idx, skipped,
                                              dict(conv), up)


@dataclass
class AuditReport:
    """What :func:`format_audit` compared.

    Attributes:
        real, fake: per class ``{"formats": {...}, "modes": {...}, "exif_rate": float,
            "median_size": (w, h), "jpeg_quality": {"~75": n, "none": n, ...},
            "median_blockiness": float or None}``.
        differences: one sentence per shortcut found (also emitted as warnings).
    """

    real: dict
    fake: dict
    differences: list[str]


# IJG (libjpeg) standard luminance quantisation table, natural (row-major) order; quality q scales it
# by S = 5000/q (q < 50) or 200 − 2q (q ≥ 50), in percent (Independent JPEG Group, jcparam.c).
_IJG_LUMA = np.array([16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
                      14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
                      92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99], np.float64)
BLOCKINESS_MIN_SIDE = 32        # at least 4 blocks per row/column, else the statistic is noise
BLOCKINESS_SAMPLE = 1000        # files per class decoded for the blockiness statistic (evenly spaced)
#: The JPEG grid's period first, then two off-grid periods whose class gap measures how much of a
#: period-8 gap comes from content or size rather than a compression history (:func:`format_audit`).
BLOCKINESS_PERIODS = (8, 7, 9)
#: Default excess of the period-8 median gap over the largest off-grid gap. Calibrated on
#: never-compressed sets of different content and size (smooth vs noisy texture, 48–256 px: excess
#: ≤ 0.001, since content and size move all periods alike) against JPEG q90 behind PNG (excess ≈ 0.06
#: on smooth content, with or without a crop); halfway is 0.03.
BLOCKINESS_MARGIN = 0.03


def jpeg_quality_estimate(quantization: dict) -> int | None:
    """IJG quality (1..100) whose scaled standard luminance table best matches a JPEG's table 0.

    Args:
        quantization: Pillow's ``img.quantization`` (``{table id: 64 values}``); values in
            natural or zig-zag order give the same estimate (the ratio uses sums).

    Returns:
        the quality, or None when there is no table 0. Non-IJG tables (camera or Photoshop) get
        the IJG quality of equal mean step, a comparable number.

    Source: IJG libjpeg scaling rule (jcparam.c ``jpeg_quality_scaling``); inverse ours.
    """
    if not quantization or 0 not in quantization:
        return None
    q = np.asarray(list(quantization[0]), np.float64)
    scale = 100.0 * q.sum() / _IJG_LUMA.sum()                     # percent of the standard table
    quality = (200.0 - scale) / 2.0 if scale <= 100.0 else 5000.0 / scale
    return int(np.clip(round(quality), 1, 100))


def blockiness(image: np.ndarray, period: int = 8) -> float:
    """Block-boundary strength of an image at ``period`` (8: a JPEG grid), a trace of JPEG
    compression that survives re-saving.

    On the luminance, mean |horizontal| neighbour differences are grouped by their column modulo
    ``period`` and mean |vertical| ones by their row modulo ``period``; **each axis gets its own
    grid phase** (a crop may shift rows and columns by different offsets). Per axis the statistic
    is the strongest phase's mean over the mean of the other phases; the result is the mean of the
    two axes: ≈ 1 for an image never JPEG-compressed, > 1 for one that was (≈ 1.1 at quality 90,
    1.2–2 at quality 75 on smooth content), whatever the container it was saved in afterwards. The
    maximum over phases makes it slightly above 1 for uncompressed content too, by an amount that
    depends on content and size — so classes are compared with each other, and the same
    statistic at periods 7 and 9 (where no JPEG grid lies) measures that part
    (:func:`format_audit`).

    Args:
        image: ``uint8`` or float array ``[H, W]`` or ``[H, W, C]`` (C ≥ 3: RGB; luminance
            0.299R + 0.587G + 0.114B), H, W ≥ :data:`BLOCKINESS_MIN_SIDE`.
        period: block size in pixels, 2..16 (8 for JPEG; 7 and 9 as off-grid references).

    Returns:
        float ≥ 1 (nan for a flat image, where no difference is non-zero).

    Raises:
        ValueError: fewer than :data:`BLOCKINESS_MIN_SIDE` pixels on a side, not 2-D/3-D, or
            ``period`` outside 2..16.

    Source: the blocking-artifact measure family of Wang, Bovik & Evans (2000) (boundary vs
    within-block differences); this per-axis phase-ratio form is ours.
    """
    if isinstance(period, bool) or not isinstance(period, (int, np.integer)) or not 2 <= period <= 16:
        raise ValueError(f"period={period!r}; allowed: an integer in 2..16 (8 for a JPEG grid)")
    x = np.asarray(image, np.float64)
    if x.ndim == 3:
        x = x[..., 0] if x.shape[2] < 3 else x[..., :3] @ np.array([0.299, 0.587, 0.114])
    if x.ndim != 2 or min(x.shape) < BLOCKINESS_MIN_SIDE:
        raise ValueError(f"blockiness needs a [H, W(, C)] image with H, W >= {BLOCKINESS_MIN_SIDE}, got shape "
                         f"{np.shape(image)}")
    ratios = []
    # columns of horizontal differences, rows of vertical ones: positions along each axis
    for d in (np.abs(np.diff(x, axis=1)), np.abs(np.diff(x, axis=0)).T):
        phase = np.arange(d.shape[1]) % period
        m = np.bincount(phase, weights=d.sum(0), minlength=period) / np.bincount(phase, minlength=period)
        k = int(np.argmax(m))
        rest = (m.sum() - m[k]) / (period - 1)
        ratios.append(m[k] / rest if rest > 0 else float("nan"))
    return float(np.mean(ratios))


def _describe(paths: list[Path]) -> tuple[dict, list[int], list[float]]:
    from PIL import Image

    formats: Counter = Counter()
    modes: Counter = Counter()
    quality: Counter = Counter()
    exif = 0
    sizes, blocky = [], []
    sample = set(np.linspace(0, len(paths) - 1, min(len(paths), BLOCKINESS_SAMPLE)).round().astype(int).tolist())
    for i, p in enumerate(paths):
        try:
            with Image.open(p) as img:
                formats[img.format or "?"] += 1
                modes[img.mode] += 1
                exif += bool(img.getexif())
                sizes.append(img.size)
                q = jpeg_quality_estimate(getattr(img, "quantization", None)) if img.format == "JPEG" else None
                quality[f"~{q}" if q is not None else "none"] += 1
                if i in sample and min(img.size) >= BLOCKINESS_MIN_SIDE:
                    a = np.asarray(img.convert("RGB"))
                    b = [blockiness(a, p) for p in BLOCKINESS_PERIODS]   # the JPEG grid and two off-grid
                    if all(v == v for v in b):
                        blocky.append(b)
        except (OSError, ValueError, SyntaxError):
            formats["unreadable"] += 1
    wh = np.array(sizes) if sizes else np.zeros((1, 2))
    return ({"formats": dict(formats), "modes": dict(modes), "exif_rate": exif / max(1, len(paths)),
             "median_size": (int(np.median(wh[:, 0])), int(np.median(wh[:, 1]))), "jpeg_quality": dict(quality),
             "median_blockiness": float(np.median([b[0] for b in blocky])) if blocky else None},
            [w * h for w, h in sizes], blocky)


def format_audit(real_paths: Iterable[str | Path], fake_paths: Iterable[str | Path], tolerance: float = 0.2,
                 blockiness_margin: float = BLOCKINESS_MARGIN) -> AuditReport:
    """Compare file format, compression history, colour mode, EXIF presence and pixel count between
    reals and fakes.

    A difference is reported when

    * the share of any file format or colour mode, or the EXIF rate, differs by more than
      ``tolerance`` between the classes;
    * the share of any estimated JPEG quality (:func:`jpeg_quality_estimate`, read from the
      quantisation tables; "none" for non-JPEG files) differs by more than ``tolerance`` (JPEG
      q75 reals vs JPEG q95 fakes share the container, not the history);
    * the 8×8 :func:`blockiness` (grid phase per axis) separates the classes: Mann–Whitney AUC
      ≥ 0.9 or ≤ 0.1, and the gap between the class medians exceeds the largest gap the same
      images show at the off-grid periods 7 and 9 by at least ``blockiness_margin`` (a calibrated
      margin: differences of content or size move every period alike, a JPEG grid only period 8).
      Catches reals once saved as JPEG (q90 included) and re-saved as PNG vs PNG fakes that were
      never compressed, also after crops with different row and column offsets. Needs ≥ 3 images
      per class of side ≥ :data:`BLOCKINESS_MIN_SIDE`; at most :data:`BLOCKINESS_SAMPLE` files per
      class are decoded;
    * a two-sample Kolmogorov–Smirnov test on pixel counts has p < 0.01 with different medians.

    Each difference is a :class:`FormatShortcutWarning`; the fix is to re-encode both classes
    identically (for a compression history: JPEG-compress both at one quality).

    Raises:
        ValueError: either list empty, ``tolerance`` outside (0, 1) or ``blockiness_margin`` ≤ 0.

    Source: the field's known format shortcut (JPEG reals vs lossless fakes); compression
    history from quantisation tables and 8×8 blockiness (see :func:`blockiness`); thresholds inferred.
    """
    from scipy.stats import ks_2samp, mannwhitneyu

    real, fake = [Path(p) for p in real_paths], [Path(p) for p in fake_paths]
    if not real or not fake:
        raise ValueError(f"format_audit needs real and fake files, got {len(real)} real and {len(fake)} fake")
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance={tolerance}; allowed: 0 < tolerance < 1")
    if not blockiness_margin > 0:
        raise ValueError(f"blockiness_margin={blockiness_margin}; allowed: > 0")
    r, rs, rb = _describe(real)
    f, fs, fb = _describe(fake)
    diffs = []
    for key, what in (("formats", "file format"), ("modes", "colour mode"), ("jpeg_quality", "JPEG quality")):
        for k in sorted(set(r[key]) | set(f[key])):
            pr, pf = r[key].get(k, 0) / len(real), f[key].get(k, 0) / len(fake)
            if abs(pr - pf) > tolerance:
                diffs.append(f"{what} {k}: {pr:.0%} of real vs {pf:.0%} of fake files")
    if len(rb) >= 3 and len(fb) >= 3:
        rb_, fb_ = np.asarray(rb), np.asarray(fb)                   # [n, 3]: periods 8, 7, 9
        auc = float(mannwhitneyu(rb_[:, 0], fb_[:, 0]).statistic) / (len(rb_) * len(fb_))
        gaps = np.median(rb_, axis=0) - np.median(fb_, axis=0)
        off_grid = float(np.max(np.abs(gaps[1:])))
        if (auc >= 0.9 or auc <= 0.1) and abs(gaps[0]) - off_grid >= blockiness_margin:
            diffs.append(f"8×8 blockiness (JPEG compression history): median {np.median(rb_[:, 0]):.2f} real vs "
                         f"{np.median(fb_[:, 0]):.2f} fake (AUC {auc:.2f}; off-grid gap {off_grid:.3f}; ≈ 1 means "
                         "never JPEG-compressed)")
    if abs(r["exif_rate"] - f["exif_rate"]) > tolerance:
        diffs.append(f"EXIF present in {r['exif_rate']:.0%} of real vs {f['exif_rate']:.0%} of fake files")
    if rs and fs and np.median(rs) != np.median(fs) and (len(rs) < 2 or len(fs) < 2 or ks_2samp(rs, fs).pvalue < 0.01
                                                         or len(set(rs)) == len(set(fs)) == 1):
        diffs.append(f"image size: median real {r['median_size']} vs fake {f['median_size']} pixels")
    for d in diffs:
        warnings.warn(f"possible real/fake shortcut — {d}; re-encode both classes identically",
                      FormatShortcutWarning, stacklevel=2)
    return AuditReport(r, f, diffs)
