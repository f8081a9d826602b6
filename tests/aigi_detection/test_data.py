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
