"""Bad local checkpoint folders fail in seconds, in one line naming the file, before the tiny model
is trained (a corrupt config.json was found after 2.9 min; a folder without tokenizer files loaded
a one-token tokenizer silently; a corrupt tokenizer.json gave a bare `key must be a string`)."""

import json
import time

import pytest

from neurips26.counting_readout.models import build_tiny_model


@pytest.fixture()
def folder(tmp_path, small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=4, intermediate_size=32)
    m.save_pretrained(tmp_path / "ckpt")
    small_data.tokenizer.save_pretrained(tmp_path / "ckpt")
    return tmp_path / "ckpt"


def _corrupt_config(p):
    (p / "config.json").write_text('{"model_type": "llama", ')


def _no_tokenizer(p):
    for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (p / f).exists():
            (p / f).unlink()


def _corrupt_tokenizer(p):
    tj = json.loads((p / "tokenizer.json").read_text())
    tj["model"]["vocab"] = [1, 2]                      # the tokenizers library raises a bare Exception
    (p / "tokenizer.json").write_text(json.dumps(tj))


def _truncated_tokenizer(p):
    (p / "tokenizer.json").write_text((p / "tokenizer.json").read_text()[:200])


def _config_only(p):
    for f in p.glob("*.safetensors"):
        f.unlink()


def _no_model_type(p):
    (p / "config.json").write_text(json.dumps({"hidden_size": 32}))


def _bitsandbytes(p):
    cfg = json.loads((p / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
    (p / "config.json").write_text(json.dumps(cfg))


CASES = {"corrupt config.json": (_corrupt_config, "config.json"), "no tokenizer files": (_no_tokenizer, "tokenizer"),
         "corrupt tokenizer.json": (_corrupt_tokenizer, "tokenizer.json"),
         "truncated tokenizer.json": (_truncated_tokenizer, "tokenizer.json"), "config-only": (_config_only, "weights"),
         "no model_type": (_no_model_type, "model_type")}
try:
    import bitsandbytes  # noqa: F401
except ImportError:   # refused only where it could not load: transformers would say "pip install bitsandbytes"
    CASES["bitsandbytes config without bitsandbytes"] = (_bitsandbytes, "bitsandbytes")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_folder_fails_before_training(folder, tmp_path, monkeypatch, case):
    from neurips26.counting_readout import experiment as E
    from neurips26.harness import RunContext

    edit, word = CASES[case]
    edit(folder)
    monkeypatch.setattr(E, "_metric_checks", lambda *a, **k: (_ for _ in ()).throw(AssertionError("work started")))
    cfg = E.Config(model_path=str(folder))
    for call in (lambda: E.preflight(cfg), lambda: E.run(cfg, RunContext(seed=0, out_dir=tmp_path / "out"))):
        t0 = time.perf_counter()
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert time.perf_counter() - t0 < 20 and "\n" not in msg and word in msg, msg


def test_a_good_folder_passes_the_check(folder):
    from neurips26.counting_readout.models import check_model_folder

    assert check_model_folder(folder) == folder
