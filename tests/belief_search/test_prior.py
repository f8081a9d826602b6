"""The frozen CLIP prior from a local folder, on a tiny randomly initialised CLIP built in-process."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.belief_search import ClipPrior, prior_from_scores


@pytest.fixture(scope="module")
def tiny_clip_dir(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate("[UNK] [EOS] [PAD] in the forest snow scene what colour is flag ?".split())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[PAD]")
    proc = CLIPProcessor(image_processor=CLIPImageProcessor(size={"shortest_edge": 28},
                                                            crop_size={"height": 28, "width": 28}), tokenizer=fast)
    cfg = CLIPConfig(text_config=dict(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, max_position_embeddings=32, eos_token_id=1, pad_token_id=2),
                     vision_config=dict(hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                                        image_size=28, patch_size=14), projection_dim=8)
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_clip")
    CLIPModel(cfg).save_pretrained(path)
    proc.save_pretrained(path)
    return path


def test_clip_prior_scores_are_cosines_and_batch_invariant(tiny_clip_dir):
    rng = np.random.default_rng(0)
    previews = rng.integers(0, 255, (7, 60, 80, 3), dtype=np.uint8)
    s1 = ClipPrior(tiny_clip_dir, batch_size=3)(previews, "in the forest scene")
    s2 = ClipPrior(tiny_clip_dir, batch_size=32)(previews, "in the forest scene")
    assert s1.shape == (7,) and np.all(np.abs(s1) <= 1 + 1e-6)
    assert np.allclose(s1, s2, atol=1e-5)  # float32 batching noise only
    assert not np.allclose(s1, ClipPrior(tiny_clip_dir)(previews, "snow scene ?"), atol=1e-6)  # the text matters
    p = prior_from_scores(s1)
    assert p.sum() == pytest.approx(1.0)


def test_clip_prior_bad_inputs(tiny_clip_dir, tmp_path):
    with pytest.raises(ValueError, match="config.json"):
        ClipPrior(tmp_path)
    prior = ClipPrior(tiny_clip_dir)
    with pytest.raises(ValueError, match="uint8"):
        prior(np.zeros((2, 8, 8), np.float32), "q")
    with pytest.raises(ValueError, match="question is empty"):
        prior(np.zeros((2, 8, 8, 3), np.uint8), " ")
