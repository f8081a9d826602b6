"""Encoders: tiny transformers models from a config, local-folder loading, cue order, random features."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")  # the [vision] extra
import torch  # noqa: E402

from neurips26.aigi_detection.encoder import RandomConvEncoder, build_tiny_encoder, load_encoder


def _images(n=3, size=16, seed=0):
    return np.random.default_rng(seed).uniform(0, 1, (n, size, size, 3)).astype(np.float32)


def test_cues_follow_block_depth_not_string_order():
    # 12 blocks: a string sort of module names would put block 10 before block 2
    enc = build_tiny_encoder("vit", image_size=16, patch_size=8, hidden_size=16, num_layers=12, num_heads=2)
    x = _images()
    seen = []
    hooks = [blk.register_forward_hook(lambda m, i, o: seen.append((o[0] if isinstance(o, tuple) else o)[:, 0]))
             for blk in (enc.model.layers if hasattr(enc.model, "layers") else enc.model.encoder.layer)]
    cues = enc.layer_cls(x)
    for h in hooks:
        h.remove()
    assert cues.shape == (3, 12, 16)
    for l in range(12):
        assert np.allclose(cues[:, l], seen[l].numpy(), atol=1e-6)
    assert np.allclose(enc.layer_cls(x, layers=[10, 2])[:, 0], cues[:, 9], atol=1e-6)


@pytest.mark.parametrize("kind", ["vit", "clip"])
def test_local_folder_round_trip(tmp_path, kind):
    enc = build_tiny_encoder(kind, image_size=16, patch_size=8, hidden_size=16, num_layers=2, num_heads=2, seed=3)
    enc.model.save_pretrained(tmp_path / kind)
    back = load_encoder(tmp_path / kind)
    x = _images()
    assert back.mean == enc.mean and back.image_size == 16
    assert np.allclose(back.layer_cls(x), enc.layer_cls(x), atol=1e-5)
    assert not any(p.requires_grad for p in back.model.parameters())


def test_missing_or_wrong_encoder_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such_clip"):
        load_encoder(tmp_path / "no_such_clip")
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ValueError, match="model_type='bert'"):
        load_encoder(tmp_path / "bert")


def test_bad_images_and_layers_rejected():
    enc = build_tiny_encoder(image_size=16, patch_size=8, hidden_size=16, num_layers=2, num_heads=2)
    with pytest.raises(ValueError, match="allowed: \\[N, 16, 16, 3\\]"):
        enc.layer_cls(_images(size=8))
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        enc.layer_cls(_images() * 300)
    with pytest.raises(ValueError, match="1..2"):
        enc.layer_cls(_images(), layers=[3])


def test_random_conv_encoder_deterministic_and_multiscale():
    a, b = RandomConvEncoder(16, 3, 8, seed=1), RandomConvEncoder(16, 3, 8, seed=1)
    x = _images(size=16)
    ca = a.layer_cls(x)
    assert ca.shape == (3, 3, 8) and np.array_equal(ca, b.layer_cls(x))
    assert not np.allclose(ca, RandomConvEncoder(16, 3, 8, seed=2).layer_cls(x))
    # a pixel-scale checkerboard moves the first layer's cue more than the last layer's
    chk = ((-1.0) ** np.add.outer(np.arange(16), np.arange(16)))[None, :, :, None] * 0.05
    grey = np.full((1, 16, 16, 3), 0.5, np.float32)
    d = np.abs(a.layer_cls((grey + chk).astype(np.float32)) - a.layer_cls(grey)).mean(-1)[0]
    assert d[0] > d[-1]
    with pytest.raises(ValueError, match="image_size"):
        RandomConvEncoder(8, 4, 8)


def test_full_clip_checkpoint_loads_its_vision_tower(tmp_path):
    # a user's CLIP folder holds both towers (model_type "clip"); the vision tower's cues must match
    from transformers import CLIPConfig, CLIPModel

    cfg = CLIPConfig(vision_config=dict(image_size=16, patch_size=8, hidden_size=16, num_hidden_layers=2,
                                        num_attention_heads=2, intermediate_size=32),
                     text_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=32, vocab_size=100), projection_dim=8)
    torch.manual_seed(0)
    full = CLIPModel(cfg).eval()
    full.save_pretrained(tmp_path / "clip")
    enc = load_encoder(tmp_path / "clip")
    x = _images()
    px = (torch.from_numpy(x).permute(0, 3, 1, 2) - torch.tensor(enc.mean).view(1, 3, 1, 1)) / \
        torch.tensor(enc.std).view(1, 3, 1, 1)
    with torch.no_grad():
        ref = full.vision_model(pixel_values=px, output_hidden_states=True).hidden_states
    cues = enc.layer_cls(x)
    for l in (1, 2):
        assert np.allclose(cues[:, l - 1], ref[l][:, 0].numpy(), atol=1e-5)
