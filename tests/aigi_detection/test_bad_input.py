"""Regression tests for bad inputs found in review: each used to give a silent wrong answer, a
traceback after the work was done, or an error that did not name the value."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from PIL import Image

from neurips26.aigi_detection.data import ImageModeWarning, load_image, load_images, scan_folder
from neurips26.aigi_detection.diagnostics import contribution_entropy, detection_metrics, per_generator_metrics
from neurips26.aigi_detection.encoder import RandomConvEncoder
from neurips26.aigi_detection.heads import LossSwitches, train_detector


def _cues(n=40, K=4, D=6, seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)].astype(np.int64)
    x = rng.normal(size=(n, K, D)).astype(np.float32)
    x[:, 0, 0] += 2 * y
    return x, y


def test_nan_cues_are_an_error_not_nan_scores():
    # used to train silently and return NaN for every image
    x, y = _cues()
    bad = x.copy()
    bad[3, 1, 2] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite \(first rows \[3\]\)"):
        train_detector(bad, y, LossSwitches.baseline(), epochs=1)
    bad[3, 1, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        train_detector(bad, y, LossSwitches.baseline(), epochs=1)
    det = train_detector(x, y, LossSwitches.baseline(), epochs=1)
    with pytest.raises(ValueError, match="NaN or infinite"):
        det.scores(bad)


def test_training_length_and_switch_types_are_validated():
    # epochs <= 0 used to return an untrained head; batch_size=0 a ZeroDivisionError
    x, y = _cues()
    for kw in ({"epochs": 0}, {"epochs": -5}, {"batch_size": 0}):
        with pytest.raises(ValueError, match="allowed: both >= 1"):
            train_detector(x, y, LossSwitches.baseline(), **kw)
    with pytest.raises(ValueError, match="adversarial='no'"):  # a non-empty string was truthy: adversary on
        LossSwitches(adversarial="no")
    with pytest.raises(ValueError, match="n_drop=1.5"):
        LossSwitches(n_drop=1.5)


def test_cue_removal_index_is_validated():
    # drop_cues=[-1] used to drop the last cue silently; [9] was an IndexError
    x, y = _cues()
    det = train_detector(x, y, LossSwitches.baseline(), epochs=1)
    for bad in ([-1], [4], [1.0]):
        with pytest.raises(ValueError, match=r"drop_cues=.*allowed: integer cue indices in 0..3"):
            det.logits(x, drop_cues=bad)
    assert np.allclose(det.logits(x) - det.logits(x, drop_cues=[3]), det.contributions(x)[:, 3], atol=1e-5)


def test_metrics_reject_mismatched_lengths_and_bad_threshold():
    with pytest.raises(ValueError, match="one label per score"):  # was an IndexError
        per_generator_metrics(np.zeros(5), ["real"] * 3 + ["g"] * 3)
    with pytest.raises(ValueError, match="threshold=50"):  # was accepted (every image "real")
        detection_metrics(np.array([0, 1]), np.array([0.2, 0.8]), threshold=50)


def test_contribution_entropy_of_nothing_is_an_error_not_zero():
    # all-zero or NaN contributions used to give entropy -0.0 ("fully collapsed")
    with pytest.raises(ValueError, match="every contribution is 0"):
        contribution_entropy(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="finite"):
        contribution_entropy(np.array([[np.nan, 1.0, 1.0]]))
    assert contribution_entropy(np.ones((4, 3))) == pytest.approx(1.0)


def test_encoder_rejects_fractional_layers_and_non_real_images():
    enc = RandomConvEncoder(16, 2, 4)
    imgs = np.random.default_rng(0).random((2, 16, 16, 3))
    with pytest.raises(ValueError, match=r"layers=\[1.7\]"):  # was truncated to block 1
        enc.layer_cls(imgs, layers=[1.7])
    with pytest.raises(ValueError, match="dtype complex"):  # imaginary part was dropped silently
        enc.layer_cls(imgs.astype(complex))
    with pytest.raises(ValueError, match="divide by 255"):
        enc.layer_cls((imgs * 255).astype(np.uint8))
    assert enc.layer_cls(imgs, layers=[np.int64(2)]).shape == (2, 1, 4)


def test_float_image_in_unit_range_is_not_turned_black(tmp_path):
    # a mode-F TIFF in [0, 1] used to be divided by 255 (all pixels 0)
    a = np.random.default_rng(0).random((16, 16)).astype(np.float32)
    Image.fromarray(a, mode="F").save(tmp_path / "f.tif")
    arr, mode, _ = load_image(tmp_path / "f.tif", 16)
    assert mode == "F" and abs(arr.mean() - a.mean()) < 0.01  # 8-bit quantisation error <= 1/510
    b = (a * 255).astype(np.float32)  # a float image on the 0..255 scale stays on it
    Image.fromarray(b, mode="F").save(tmp_path / "g.tif")
    assert abs(load_image(tmp_path / "g.tif", 16)[0].mean() - a.mean()) < 0.01


def test_alpha_only_mentioned_for_alpha_modes_and_size_validated(tmp_path):
    a = np.random.default_rng(0).integers(0, 256, (16, 16, 3), dtype=np.uint8)
    Image.fromarray(a).convert("L").save(tmp_path / "l.png")
    with pytest.warns(ImageModeWarning) as rec:
        load_images([tmp_path / "l.png"], 16)
    assert "alpha" not in str(rec[0].message)
    Image.fromarray(a).convert("RGBA").save(tmp_path / "a.png")
    with pytest.warns(ImageModeWarning, match="alpha dropped"):
        load_images([tmp_path / "a.png"], 16)
    with pytest.raises(ValueError, match="size=0"):  # used to return [1, 0, 0, 3] images
        load_images([tmp_path / "l.png"], 0)


def test_hidden_folders_and_files_are_not_images(tmp_path):
    # .ipynb_checkpoints copies used to be counted twice; ._name resource forks as bad files
    a = np.random.default_rng(0).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    for p in ("real/a.png", "real/.ipynb_checkpoints/a.png", "real/._a.png", "fake/g/b.png", "fake/.cache/x/c.png"):
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(a).save(tmp_path / p)
    ds = scan_folder(tmp_path)
    assert [p.name for p in ds.real] == ["a.png"] and list(ds.fake) == ["g"]


def test_config_rejects_repeated_generators_and_missing_real_data_fails_fast(tmp_path):
    from neurips26.aigi_detection.experiment import Config, run
    from neurips26.harness import RunContext

    with pytest.raises(ValueError, match="repeats a generator"):
        Config(train_generators=["upconv_gan", "upconv_gan"])
    cfg = Config(data_root=str(tmp_path / "nodata"), encoder_path=str(tmp_path / "noclip"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(FileNotFoundError, match="noclip"):  # before the synthetic part, not minutes later
            run(cfg, RunContext(seed=0, out_dir=tmp_path / "out"))


def test_files_are_encoded_in_chunks_with_the_same_result_and_bad_file_rule(tmp_path):
    # review: fit/predict used to decode a whole folder into memory at once (60 GB for 10^5
    # images at 224 px); encode_files holds one chunk and must give the same cues and skips
    from neurips26.aigi_detection.data import encode_files

    rng = np.random.default_rng(0)
    paths = []
    for i in range(7):
        p = tmp_path / f"{i}.png"
        Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(p)
        paths.append(p)
    (tmp_path / "bad.png").write_bytes(b"junk")
    paths.insert(3, tmp_path / "bad.png")
    paths.insert(4, tmp_path / "bad2.png")  # missing file
    enc = RandomConvEncoder(16, 2, 4)
    batches = []

    def encode(im):
        batches.append(len(im))
        return enc.layer_cls(im)

    cues, info = encode_files(paths, encode, 16, max_bad_fraction=0.5, chunk_size=2)
    ref = load_images(paths, 16, max_bad_fraction=0.5)
    assert max(batches) <= 2 and sum(batches) == 7
    # batch size changes float32 summation order in the convolutions: equal to a few ulp
    assert np.allclose(cues, enc.layer_cls(ref.images), rtol=1e-5, atol=1e-6)
    assert info.index == ref.index == [0, 1, 2, 5, 6, 7, 8]
    assert [p for p, _ in info.skipped] == [str(tmp_path / "bad.png"), str(tmp_path / "bad2.png")]
    with pytest.raises(ValueError, match="2 of 9 images unreadable"):  # the rule counts all chunks together
        encode_files(paths, encode, 16, chunk_size=2)
    with pytest.raises(ValueError, match="chunk_size=0"):
        encode_files(paths, encode, 16, chunk_size=0)


def test_detector_passes_its_device_to_the_encoder(tmp_path):
    # review: fit/predict always encoded on the CPU, so the full configuration never used the GPU
    from neurips26.aigi_detection import world as W
    from neurips26.aigi_detection.detector import AIGIDetector

    class Recording(RandomConvEncoder):
        seen: set = set()

        def layer_cls(self, images, batch_size=512, layers=None, device="cpu"):
            Recording.seen.add(device)
            return super().layer_cls(images, batch_size, layers)

    rng = np.random.default_rng(0)
    for sub, s in (("real", W.make_reals(12, rng, 16)), ("fake/g", W.make_fakes("upconv_gan", 12, rng, 16))):
        (tmp_path / sub).mkdir(parents=True)
        for i, im in enumerate(s.images):
            Image.fromarray((im * 255).round().astype(np.uint8)).save(tmp_path / sub / f"{i}.png")
    det = AIGIDetector.fit(tmp_path, Recording(16, 2, 4), LossSwitches.baseline(), device="gpu-x", epochs=1)
    det.predict(sorted((tmp_path / "real").glob("*.png")))
    assert Recording.seen == {"gpu-x"} and det.device == "gpu-x"


def test_unreadable_images_under_data_root_fail_before_any_work(tmp_path, monkeypatch):
    """Catches unreadable images found only after the synthetic part (71 s) and the encoding
    (issue 33): ``preflight`` opens every file of data_root/train and data_root/test first and
    refuses more than 1 % unreadable in one line naming one of them; run() calls it before any work
    (the implementation checks are replaced by a tripwire here)."""
    pytest.importorskip("transformers")
    from neurips26.aigi_detection import experiment as E
    from neurips26.aigi_detection.encoder import build_tiny_encoder
    from neurips26.harness.context import RunContext

    rng = np.random.default_rng(0)
    for split in ("train", "test"):
        for sub in ("real", "fake/g1"):
            d = tmp_path / "data" / split / sub
            d.mkdir(parents=True)
            for i in range(3):
                Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(d / f"{i}.png")
    (tmp_path / "data" / "test" / "real" / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n not really")
    build_tiny_encoder("vit", 16, 4, 16, 2, 2).model.save_pretrained(tmp_path / "enc")
    cfg = E.Config(data_root=str(tmp_path / "data"), encoder_path=str(tmp_path / "enc"))
    with pytest.raises(ValueError, match=r"1 of 7 images under .*test' are unreadable.*bad\.png"):
        E.preflight(cfg)

    def tripwire(*a, **k):
        raise AssertionError("work started before the inputs were checked")

    monkeypatch.setattr(E, "_checks", tripwire)
    monkeypatch.setattr(E, "_synthetic", tripwire)
    with pytest.raises(ValueError, match="unreadable"):
        E.run(cfg, RunContext(0, tmp_path / "out"))
    (tmp_path / "data" / "test" / "real" / "bad.png").unlink()
    E.preflight(cfg)                                     # a clean folder passes
