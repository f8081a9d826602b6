"""Folder layout, loading with bad inputs, and the format audit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from PIL import Image

from neurips26.aigi_detection.data import (
    FormatShortcutWarning,
    ImageModeWarning,
    format_audit,
    load_images,
    scan_folder,
)


def _png(path, size=16, seed=0, mode="RGB", fmt="PNG", **kw):
    path.parent.mkdir(parents=True, exist_ok=True)
    a = np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)
    img = Image.fromarray(a)
    if mode != "RGB":
        img = img.convert(mode)
    img.save(path, format=fmt, **kw)
    return path


def test_layout_and_empty_generator_folder(tmp_path):
    _png(tmp_path / "real" / "a.png")
    _png(tmp_path / "fake" / "g1" / "b.png")
    (tmp_path / "fake" / "g2").mkdir()
    with pytest.raises(ValueError, match="g2.*has no images"):
        scan_folder(tmp_path)
    _png(tmp_path / "fake" / "g2" / "c.png")
    ds = scan_folder(tmp_path)
    assert sorted(ds.fake) == ["g1", "g2"] and len(ds.real) == 1
    paths, groups = ds.paths_and_groups()
    assert groups == ["real", "g1", "g2"]
    with pytest.raises(FileNotFoundError, match="nowhere"):
        scan_folder(tmp_path / "nowhere")


def test_truncated_and_garbage_files_are_skipped_and_counted(tmp_path):
    good = [_png(tmp_path / f"g{i}.png", seed=i) for i in range(3)]
    trunc = tmp_path / "trunc.png"
    trunc.write_bytes(good[0].read_bytes()[:60])
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image")
    out = load_images(good + [trunc, junk], 16, max_bad_fraction=0.5)
    assert out.images.shape == (3, 16, 16, 3) and out.index == [0, 1, 2]
    assert [p for p, _ in out.skipped] == [str(trunc), str(junk)]
    with pytest.raises(ValueError, match="2 of 5 images unreadable"):
        load_images(good + [trunc, junk], 16)  # default max_bad_fraction = 1%


def test_modes_are_converted_with_a_warning_and_small_images_upscaled(tmp_path):
    paths = [_png(tmp_path / "l.png", mode="L"), _png(tmp_path / "rgba.png", mode="RGBA"),
             _png(tmp_path / "cmyk.jpg", mode="CMYK", fmt="JPEG"), _png(tmp_path / "small.png", size=8)]
    a16 = np.full((16, 16), 65535, np.uint16)
    Image.fromarray(a16).save(tmp_path / "i16.png")
    paths.append(tmp_path / "i16.png")
    with pytest.warns(ImageModeWarning) as rec:
        out = load_images(paths, 16)
    msgs = " ".join(str(w.message) for w in rec)
    assert "'L': 1" in msgs and "'RGBA': 1" in msgs and "'CMYK': 1" in msgs and "upscaled" in msgs
    assert out.upscaled == 1 and out.images.shape == (5, 16, 16, 3)
    assert np.allclose(out.images[4], 1.0)  # 16-bit white stays white (not clipped to 255/65535)


def test_format_audit_flags_jpeg_reals_vs_png_fakes_and_passes_identical(tmp_path):
    reals_png = [_png(tmp_path / "r" / f"{i}.png", seed=i) for i in range(6)]
    fakes = [_png(tmp_path / "f" / f"{i}.png", seed=10 + i) for i in range(6)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert format_audit(reals_png, fakes).differences == []
    reals_jpg = [_png(tmp_path / "rj" / f"{i}.jpg", seed=i, fmt="JPEG", quality=90) for i in range(6)]
    with pytest.warns(FormatShortcutWarning) as rec:
        rep = format_audit(reals_jpg, fakes)
    assert any("JPEG" in d for d in rep.differences) and any("JPEG" in str(w.message) for w in rec)
    big = [_png(tmp_path / "b" / f"{i}.png", size=32, seed=i) for i in range(6)]
    with pytest.warns(FormatShortcutWarning, match="image size"):
        format_audit(big, fakes)
    with pytest.raises(ValueError, match="0 fake"):
        format_audit(reals_png, [])


def test_unknown_size_policy_is_an_error_not_a_skip(tmp_path):
    p = _png(tmp_path / "a.png")
    with pytest.raises(ValueError, match="policy='stretch'"):
        load_images([p], 16, policy="stretch")


def _smooth(size: int, seed: int) -> np.ndarray:
    """A natural-looking uint8 RGB image: a few random low-frequency waves plus mild noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[:size, :size] / size
    img = np.zeros((size, size, 3))
    for _ in range(6):
        fx, fy, ph = rng.uniform(0.5, 6, 2).tolist() + [rng.uniform(0, 6.3)]
        img += rng.uniform(0.3, 1, 3) * np.sin(2 * np.pi * (fx * x + fy * y) + ph)[..., None]
    img = 128 + 25 * img + rng.normal(0, 3, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def test_format_audit_detects_jpeg_history_behind_a_png_container_and_jpeg_quality(tmp_path):
    """Catches the audit that compares only the container (issue 33 item 6): reals saved as JPEG q75
    then re-saved as PNG, against never-compressed PNG fakes, share format, mode, size and EXIF, yet
    8×8 blockiness separates them; JPEG q75 vs JPEG q95 share the container but not the quantisation
    tables. Before the fix both pairs gave no difference. The same smooth content for both classes
    (other seeds) so only the history differs; 8 images of 96 px per class."""
    reals, fakes, q95 = [], [], []
    for i in range(8):
        a = _smooth(96, i)
        j = tmp_path / "rj" / f"{i}.jpg"
        j.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(a).save(j, quality=75)
        p = tmp_path / "r" / f"{i}.png"
        p.parent.mkdir(parents=True, exist_ok=True)
        with Image.open(j) as im:
            im.convert("RGB").save(p)                      # JPEG history, PNG container
        reals.append(p)
        f = tmp_path / "f" / f"{i}.png"
        f.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_smooth(96, 100 + i)).save(f)      # never compressed
        fakes.append(f)
        g = tmp_path / "fj" / f"{i}.jpg"
        g.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(_smooth(96, 100 + i)).save(g, quality=95)
        q95.append(g)
    with pytest.warns(FormatShortcutWarning, match="blockiness"):
        rep = format_audit(reals, fakes)
    assert rep.real["formats"] == rep.fake["formats"] == {"PNG": 8}
    assert rep.real["median_blockiness"] > rep.fake["median_blockiness"] + 0.1
    with pytest.warns(FormatShortcutWarning, match="JPEG quality ~75"):
        rep = format_audit([tmp_path / "rj" / f"{i}.jpg" for i in range(8)], q95)
    assert rep.real["jpeg_quality"] == {"~75": 8} and rep.fake["jpeg_quality"] == {"~95": 8}
    # the same history on both sides (both never compressed) passes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert format_audit(fakes[:4], fakes[4:]).differences == []


def test_blockiness_and_quality_estimate_refuse_or_read_right():
    """Catches a blockiness that runs on images too small for 8×8 statistics and a quality estimate
    off the IJG scaling (q = 50 is the unscaled standard table)."""
    from neurips26.aigi_detection.data import _IJG_LUMA, blockiness, jpeg_quality_estimate

    with pytest.raises(ValueError, match="H, W >= 32"):
        blockiness(np.zeros((16, 64)))
    assert jpeg_quality_estimate({0: _IJG_LUMA.tolist()}) == 50
    assert jpeg_quality_estimate({0: np.ceil(_IJG_LUMA * 0.5).tolist()}) in (74, 75, 76)
    assert jpeg_quality_estimate({}) is None


def _textured(size: int, seed: int) -> np.ndarray:
    """A textured uint8 RGB image: the smooth waves plus spatially correlated grain (σ 0.8 px)."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(seed)
    grain = gaussian_filter(rng.normal(0, 2.5, (size, size, 3)), (0.8, 0.8, 0))
    return np.clip(_smooth(size, seed).astype(float) + 18 * grain, 0, 255).astype(np.uint8)


def _history(tmp_path, name: str, images, quality: int | None, crop=(0, 0), side: int = 96) -> list:
    """Save each image (JPEG at ``quality`` first, if given), crop ``side`` px from offset ``crop``
    (rows, columns), then save as PNG: the same container, only the history differs."""
    import io

    out = []
    (tmp_path / name).mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(images):
        if quality is not None:
            buf = io.BytesIO()
            Image.fromarray(a).save(buf, format="JPEG", quality=quality)
            buf.seek(0)
            a = np.asarray(Image.open(buf).convert("RGB"))
        p = tmp_path / name / f"{i}.png"
        Image.fromarray(a[crop[0]:crop[0] + side, crop[1]:crop[1] + side]).save(p)
        out.append(p)
    return out


def test_format_audit_finds_jpeg_q90_history_that_a_fixed_margin_missed(tmp_path):
    """Reals JPEG q90 then PNG vs never-compressed PNG fakes; the
    blockiness statistic separates the classes perfectly but the median gap (≈ 0.08) stayed under the
    fixed 0.1 margin, so the audit said nothing. Catches an uncalibrated margin."""
    reals = _history(tmp_path, "r", [_smooth(128, i) for i in range(8)], 90)
    fakes = _history(tmp_path, "f", [_smooth(128, 100 + i) for i in range(8)], None)
    with pytest.warns(FormatShortcutWarning, match="blockiness"):
        rep = format_audit(reals, fakes)
    assert any("blockiness" in d for d in rep.differences)


def test_format_audit_finds_jpeg_history_after_a_crop_with_different_row_and_column_offsets(tmp_path):
    """JPEG q75 reals cropped by 3 rows and 5 columns before the PNG
    save. Pooling both directions into one set of 8 phases halves the statistic (1.24 → 1.09 here)
    and the audit missed it; one grid phase per axis keeps it. Catches pooled phases."""
    reals = _history(tmp_path, "r", [_textured(128, i) for i in range(8)], 75, crop=(3, 5))
    fakes = _history(tmp_path, "f", [_textured(128, 100 + i) for i in range(8)], None, crop=(3, 5))
    with pytest.warns(FormatShortcutWarning, match="blockiness"):
        rep = format_audit(reals, fakes)
    assert rep.real["median_blockiness"] > 1.15 > 1.05 > rep.fake["median_blockiness"]


def test_blockiness_has_one_grid_phase_per_axis():
    """A synthetic 8-px grid with its row edges on phase 2 and its column edges on phase 6 scores as
    high as an aligned one (pooled phases scored it about half). Catches a shared phase."""
    from neurips26.aigi_detection.data import blockiness

    rng = np.random.default_rng(0)
    base = rng.normal(128, 4, (96, 96))

    def grid(dr: int, dc: int) -> np.ndarray:
        x = base.copy()
        x[:, np.arange(96) % 8 == dc] += 10          # a step at every 8th column and row
        x[np.arange(96) % 8 == dr, :] += 10
        return x

    aligned, shifted = blockiness(grid(0, 0)), blockiness(grid(2, 6))
    assert aligned > 1.5 and abs(shifted - aligned) < 0.05 * aligned
    with pytest.raises(ValueError, match="period=1"):
        blockiness(base, period=1)


def test_format_audit_calibrated_margin_ignores_content_and_size_without_jpeg(tmp_path):
    """Guards the smaller calibrated margin against false alarms: never-compressed sets that differ in
    content (noisy texture vs smooth) and size (64 vs 256 px) move the blockiness of every period
    alike (gap ≈ 0.05 at period 8, AUC 1.0); the off-grid periods 7 and 9 absorb it. Catches a margin
    lowered without the off-grid calibration."""
    reals = _history(tmp_path, "r", [_textured(64, i) for i in range(8)], None, side=64)
    fakes = _history(tmp_path, "f", [_smooth(256, 100 + i) for i in range(8)], None, side=256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FormatShortcutWarning)   # the size difference is reported
        rep = format_audit(reals, fakes)
    assert not any("blockiness" in d for d in rep.differences)
    assert any("image size" in d for d in rep.differences)
