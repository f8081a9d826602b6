"""Folder layout, loading with bad inputs, and the format audit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from PIL import Image

from neurips26.aigi_detection.data import (FormatShortcutWarning, ImageModeWarning, format_audit, load_images,
                                           scan_folder)


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
