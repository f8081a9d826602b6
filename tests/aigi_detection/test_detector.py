"""AIGIDetector on image folders, predict(paths) with bad files, save/load, and the score command."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")  # the [vision] extra
from PIL import Image

from neurips26.aigi_detection import world as W
from neurips26.aigi_detection.__main__ import main
from neurips26.aigi_detection.detector import AIGIDetector
from neurips26.aigi_detection.encoder import build_tiny_encoder, load_encoder
from neurips26.aigi_detection.heads import LossSwitches


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("aigi")
    rng = np.random.default_rng(0)
    for sub, s in (("real", W.make_reals(40, rng, 16)), ("fake/upconv_gan", W.make_fakes("upconv_gan", 40, rng, 16))):
        d = root / sub
        d.mkdir(parents=True)
        for i, im in enumerate(s.images):
            Image.fromarray((im * 255).round().astype(np.uint8)).save(d / f"{i:03d}.png")
    enc = build_tiny_encoder("vit", image_size=16, patch_size=4, hidden_size=16, num_layers=3, num_heads=2)
    enc.model.save_pretrained(root / "encoder")
    return root


def test_fit_predict_save_load_and_bad_file(folder, tmp_path):
    enc = load_encoder(folder / "encoder")
    with pytest.warns(UserWarning, match="pseudo-labels"):
        det = AIGIDetector.fit(folder, enc, LossSwitches(), epochs=30, batch_size=32)
    paths = sorted((folder / "real").glob("*.png"))[:5] + sorted((folder / "fake" / "upconv_gan").glob("*.png"))[:5]
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG garbage")
    pred = det.predict(paths + [bad])
    assert np.isnan(pred.scores[-1]) and str(bad) in pred.skipped and not pred.is_generated[-1]
    assert np.isfinite(pred.scores[:-1]).all()
    ev = det.evaluate(folder)
    assert ev["upconv_gan"]["auroc"] > 0.8  # training-set fit of an easy artifact (AUROC 1.0 with a linear probe)
    det.save(tmp_path / "head.pt")
    back = AIGIDetector.load(tmp_path / "head.pt", enc)
    assert np.array_equal(back.predict(paths).scores, det.predict(paths).scores)
    other = build_tiny_encoder("vit", image_size=16, patch_size=4, hidden_size=8, num_layers=3, num_heads=2)
    with pytest.raises(ValueError, match="width 16"):
        AIGIDetector.load(tmp_path / "head.pt", other)


def test_score_command(folder, tmp_path, capsys):
    head = tmp_path / "h.pt"
    assert main(["train", str(folder), "--encoder", str(folder / "encoder"), "--head-out", str(head), "--baseline",
                 "--epochs", "5"]) == 0
    assert "saved head" in capsys.readouterr().out
    assert main(["score", str(folder / "fake"), "--encoder", str(folder / "encoder"), "--head", str(head)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "path,score,is_generated" and len(lines) == 41
    assert all(0 <= float(ln.split(",")[1]) <= 1 for ln in lines[1:])
    assert main(["score", str(folder), "--encoder", str(tmp_path / "missing_clip"), "--head", str(head)]) == 2
    assert "missing_clip" in capsys.readouterr().err


def test_full_scale_real_data_part_runs_on_user_folders(folder, tmp_path):
    # the full configuration's path: train/ and test/ folders plus a local encoder folder
    import shutil

    from neurips26.aigi_detection.experiment import Config, _real_data
    from neurips26.harness import RunContext

    root = tmp_path / "data"
    for split in ("train", "test"):
        shutil.copytree(folder / "real", root / split / "real")
        shutil.copytree(folder / "fake", root / split / "fake")
    cfg = Config(data_root=str(root), encoder_path=str(folder / "encoder"), epochs=3)
    metrics: dict = {}
    with pytest.warns(UserWarning):
        claims = _real_data(cfg, RunContext(seed=0, out_dir=tmp_path), metrics)
    assert [c.id for c in claims] == ["real_data_map_gain"] and claims[0].kind.value == "paper"
    assert claims[0].interval is not None  # review: was a one-run sign test with no interval
    assert set(metrics["real_data"]) == {"baseline", "saafl"}
    assert "upconv_gan" in metrics["real_data"]["saafl"]


def test_score_command_bad_outputs_and_paths_with_commas(folder, tmp_path, capsys):
    # review fixes: a missing output folder or a non-head file used to end in a traceback (after the
    # work for --head-out); a path with a comma broke the CSV; --epochs 0 saved an untrained head
    import csv

    enc = str(folder / "encoder")
    assert main(["train", str(folder), "--encoder", enc, "--head-out", str(tmp_path / "no" / "h.pt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["train", str(folder), "--encoder", enc, "--head-out", str(tmp_path / "h.pt"), "--epochs", "0"]) == 2
    assert "--epochs 0" in capsys.readouterr().err
    junk = tmp_path / "junk.pt"
    junk.write_text("not a torch file")
    assert main(["score", str(folder / "real"), "--encoder", enc, "--head", str(junk)]) == 2
    assert "not a detector head" in capsys.readouterr().err
    head = tmp_path / "h.pt"
    assert main(["train", str(folder), "--encoder", enc, "--head-out", str(head), "--baseline", "--epochs", "2"]) == 0
    odd = tmp_path / "odd"
    odd.mkdir()
    Image.open(sorted((folder / "real").glob("*.png"))[0]).save(odd / 'a,b "c".png')
    capsys.readouterr()
    assert main(["score", str(odd), "--encoder", enc, "--head", str(head), "--out", str(tmp_path / "x" / "s.csv")]) == 2
    assert main(["score", str(odd), "--encoder", enc, "--head", str(head)]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0] == ["path", "score", "is_generated"] and rows[1][0].endswith('a,b "c".png') and len(rows[1]) == 3


def test_heads_fitted_on_one_encoding_match_fitting_from_the_folder(folder):
    """Encoding a folder once for several heads (the full run's baseline and SA-AFL) gives the heads
    that fitting from the folder gives, and the encoder is not called again."""
    from neurips26.aigi_detection.detector import encode_training_folder

    enc = load_encoder(folder / "encoder")
    encoded = encode_training_folder(folder, enc)
    calls = []
    original = enc.layer_cls
    enc.layer_cls = lambda *a, **k: calls.append(1) or original(*a, **k)
    from_cache = AIGIDetector.fit(folder, enc, LossSwitches.baseline(), epochs=5, seed=0, encoded=encoded)
    assert not calls
    enc.layer_cls = original
    direct = AIGIDetector.fit(folder, enc, LossSwitches.baseline(), epochs=5, seed=0)
    paths = sorted((folder / "real").glob("*.png"))[:4]
    assert np.allclose(from_cache.predict(paths).scores, direct.predict(paths).scores)


def test_score_command_never_prints_a_traceback(folder, tmp_path, capsys):
    """Catches ``python -m neurips26.aigi_detection score`` ending in a traceback (issue 33): an --out
    that is a folder raised IsADirectoryError after all images were scored; a missing head file was
    found only after the encoder loaded. Each now exits 2 with one ``error:`` line, before encoding."""
    enc = str(folder / "encoder")
    cases = [(["--head", str(tmp_path / "missing.pt")], "missing.pt"),
             (["--head", str(tmp_path), "--out", str(tmp_path)], "is a folder")]
    for extra, words in cases:
        assert main(["score", str(folder / "real"), "--encoder", enc] + extra) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
