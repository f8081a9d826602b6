"""Real-world input: byte-exact deletions (+0.0, never −0.0 or NaN), trl keyword overrides, and
bad checkpoint folders / settings refused in seconds, in one line, before any training."""

import json
import time

import pytest
import torch

from neurips26.bit_mask_tuning import apply_mask, attach_bit_mask, bitwise_equal, export_mask, mask_to_bytes


def _gate(model):
    return model.model.layers[0].mlp.gate_proj


def test_bitwise_equal_tells_signed_zeros_apart():
    assert torch.equal(torch.tensor([0.0]), torch.tensor([-0.0]))          # value-equal …
    assert not bitwise_equal(torch.tensor([0.0]), torch.tensor([-0.0]))    # … not byte-equal
    assert bitwise_equal(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]))


def test_live_and_applied_masks_are_byte_equal_even_for_negative_and_infinite_weights(base):
    """Catches W ⊙ (1 − Z) in the live mask: a deleted negative weight became −0.0 (apply_mask writes
    +0.0, so the claim 'bitwise' was only value-equality) and a deleted +inf weight became NaN."""
    import copy

    ref = copy.deepcopy(base)
    with torch.no_grad():
        _gate(base).weight[0, :4] = torch.tensor([float("inf"), -float("inf"), -0.5, 0.25])
        _gate(ref).weight.copy_(_gate(base).weight)
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():                                   # delete exactly the four planted entries
        for m in bm.masks:
            m.scores.zero_()
        bm.masks[0].scores[0, :4] = 1.0
    live = _gate(base).weight.detach()
    assert live[0, :4].tolist() == [0.0, 0.0, 0.0, 0.0] and not torch.isnan(live).any()
    assert (torch.signbit(live[0, :4]) == 0).all()          # +0.0, not −0.0
    data = mask_to_bytes(export_mask(bm))
    apply_mask(ref, data)
    for n in bm.names:
        a = dict(ref.named_modules())[n].weight
        b = dict(base.named_modules())[n].weight.detach()
        assert bitwise_equal(a, b), n


def test_straight_through_gradient_and_value_unchanged_in_training(base):
    """The rewritten forward keeps the value bit-exact with gradients on and ∂W'/∂S = −W·∂L/∂W'."""
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():
        bm.masks[0].scores[0, 0] = 1.0
    w = _gate(base).parametrizations.weight.original
    with torch.enable_grad():
        out = _gate(base).weight
        eval_out = out.detach().clone()
        (out * 2.0).sum().backward()
    with torch.no_grad():
        assert bitwise_equal(eval_out, _gate(base).weight)
    torch.testing.assert_close(bm.masks[0].scores.grad, -2.0 * w, rtol=0, atol=0)


def test_grpo_trainer_accepts_a_documented_beta(pretrained, tmp_path):
    """Catches `dict() got multiple values for keyword argument 'beta'` for the documented beta."""
    pytest.importorskip("trl")
    from transformers import AutoModelForCausalLM

    from neurips26.bit_mask_tuning.trl_adapters import (
        bmt_grpo_trainer,
        exact_match_reward,
        save_toy_model,
        toy_datasets,
        toy_tokenizer,
    )

    path = save_toy_model(pretrained, tmp_path / "base")
    model = AutoModelForCausalLM.from_pretrained(path)
    ds, _ = toy_datasets(16, seed=0)
    trainer, _ = bmt_grpo_trainer(model, 0.01, exact_match_reward, ds, toy_tokenizer(), tmp_path / "o", max_steps=1,
                                  batch_size=8, num_generations=8, beta=0.1)
    assert trainer.args.beta == 0.1


# ----------------------------------------------------------------------------- bad checkpoints


def _folder(tmp_path, model=None, **config_edits):
    from neurips26.bit_mask_tuning.task import build_model
    from neurips26.bit_mask_tuning.trl_adapters import save_toy_model

    path = save_toy_model(model if model is not None else build_model("llama", hidden=32, layers=1, ffn=64),
                          tmp_path / "ckpt")
    if config_edits:
        cfg = json.loads((path / "config.json").read_text())
        cfg.update(config_edits)
        (path / "config.json").write_text(json.dumps(cfg))
    return path


def _gpt2_folder(tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    m = GPT2LMHeadModel(GPT2Config(n_embd=32, n_layer=1, n_head=2, vocab_size=16, n_positions=16))
    return _folder(tmp_path, m)


def _bad_inputs():
    def corrupt_config(p):
        (p / "config.json").write_text("{not json")

    def no_weights(p):
        for f in p.glob("*.safetensors"):
            f.unlink()

    def corrupt_weights(p):
        (p / "model.safetensors").write_bytes(b"\x00" * 5)

    def quantised(p):
        cfg = json.loads((p / "config.json").read_text())
        cfg["quantization_config"] = {"quant_method": "bitsandbytes", "load_in_4bit": True}
        (p / "config.json").write_text(json.dumps(cfg))

    def missing(p):
        import shutil

        shutil.rmtree(p)

    return {"corrupt config.json": (corrupt_config, "config.json"), "config-only folder": (no_weights, "weights"),
            "corrupt safetensors": (corrupt_weights, "model.safetensors"),
            "bitsandbytes quantization_config": (quantised, "bitsandbytes"), "missing folder": (missing, "ckpt")}


@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_bad_checkpoint_folders_fail_in_seconds_before_training(tmp_path, monkeypatch, case):
    """Catches a bad model_path found only after minutes of toy training (config-only folder: 3.8 min;
    a bitsandbytes config reached transformers and got 'pip install bitsandbytes')."""
    from neurips26.bit_mask_tuning import experiment as E
    from neurips26.harness import RunContext

    path = _folder(tmp_path)
    edit, word = _bad_inputs()[case]
    edit(path)
    monkeypatch.setattr(E, "_runs_for_seed", lambda *a, **k: (_ for _ in ()).throw(AssertionError("work started")))
    cfg = E.Config(model_path=str(path))
    for call in (lambda: E.preflight(cfg), lambda: E.run(cfg, RunContext(seed=0, out_dir=tmp_path / "out"))):
        t0 = time.perf_counter()
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert time.perf_counter() - t0 < 20 and "\n" not in msg and word in msg, msg


def test_a_folder_without_a_gated_mlp_is_refused_with_advice_the_cli_can_follow(tmp_path, monkeypatch):
    """Catches GPT-2 (no gate_proj) failing after 93 s with advice to pass target=, which the CLI
    could not set: refused at once, and --set target=mlp.c_fc now exists and works."""
    from neurips26.bit_mask_tuning import experiment as E

    path = _gpt2_folder(tmp_path)
    with pytest.raises(ValueError) as e:
        E.preflight(E.Config(model_path=str(path)))
    assert "gate_proj" in str(e.value) and "--set target=" in str(e.value) and "\n" not in str(e.value)
    E.preflight(E.Config(model_path=str(path), target="mlp.c_fc"))          # accepted: the advice works


@pytest.mark.parametrize("hidden", [63, 60, 36])
def test_hidden_sizes_the_model_cannot_take_are_refused_by_the_config(hidden):
    """Catches --set hidden=63 crashing inside torch (4 heads, even rotary head size: a multiple of 8)."""
    from pydantic import ValidationError

    from neurips26.bit_mask_tuning.experiment import Config

    with pytest.raises(ValidationError, match="multiple of 8"):
        Config(hidden=hidden)


@pytest.mark.parametrize("verify", ["fast", "sha256"])
def test_both_base_checks_refuse_one_changed_entry_and_an_applied_base(base, verify):
    """The fast default (XXH3-64) must refuse exactly what SHA-256 refuses: one entry changed by
    1e-3, and a base the mask was already applied to."""
    import copy

    from neurips26.bit_mask_tuning import MaskMismatchError
    from neurips26.bit_mask_tuning.codec import mask_from_bytes

    plain = copy.deepcopy(base)
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.uniform_(-1, 1)
    data = mask_to_bytes(export_mask(bm))
    entries, _ = mask_from_bytes(data)
    assert all(e.xxh3 for e in entries)                     # xxhash is installed with the [llm] extra
    other = copy.deepcopy(plain)
    with torch.no_grad():
        _gate(other).weight[3, 5] += 1e-3
    with pytest.raises(MaskMismatchError, match="XXH3-64" if verify == "fast" else "SHA-256"):
        apply_mask(other, data, verify=verify)
    ok = copy.deepcopy(plain)
    apply_mask(ok, data, verify=verify)
    with pytest.raises(MaskMismatchError):
        apply_mask(ok, data, verify=verify)                  # already applied: the base bytes changed


def test_a_mask_file_without_a_fast_digest_is_checked_with_sha256(base):
    """Files written before the XXH3 field (or without xxhash) still apply, checked by SHA-256."""
    import copy

    from neurips26.bit_mask_tuning import MaskMismatchError

    plain = copy.deepcopy(base)
    bm = attach_bit_mask(base, 0.01)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.uniform_(-1, 1)
    entries = export_mask(bm)
    for e in entries:
        e.xxh3 = ""
    data = mask_to_bytes(entries)
    assert b"xxh3" not in data[:4000]
    other = copy.deepcopy(plain)
    with torch.no_grad():
        _gate(other).weight[0, 0] += 1e-3
    with pytest.raises(MaskMismatchError, match="SHA-256"):
        apply_mask(other, data)
    apply_mask(copy.deepcopy(plain), data)
    with pytest.raises(ValueError, match="verify"):
        apply_mask(copy.deepcopy(plain), data, verify="md5")


def test_refresh_keeps_the_k_largest_scores_when_more_are_eligible(base):
    """Catches a top-k taken from the wrong end (the k smallest eligible scores deleted): with every
    score positive and distinct, exactly the k largest are deleted."""
    bm = attach_bit_mask(base, 0.01)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.copy_(torch.rand(m.scores.shape, generator=g) + 0.1)      # all eligible (> τ = 0)
    flat = torch.cat([m.scores.detach().flatten() for m in bm.masks])
    z = torch.cat([m.flatten() for m in bm.deleted().values()])
    assert int(z.sum()) == bm.k
    assert flat[z].min() > flat[~z].max()
