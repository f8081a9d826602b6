"""The tiny model's training recipe: length-sorted micro-batches give the batch's own gradient (less
padding, same training), and bad recipe settings fail in one line."""

import copy

import pytest
import torch

from neurips26.counting_readout.models import build_tiny_model, train_counting_model


def test_micro_batches_train_exactly_like_one_batch(small_data):
    """Catches a micro-batched step that is not the batch's mean loss (e.g. each part's mean summed: a
    gradient 4x too large, or the trimmed parts reading the digit at the wrong position): the same seed
    gives the same losses and weights with 1 and 4 micro-batches."""
    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=4, intermediate_size=32, seed=0)
    a, b = copy.deepcopy(m), copy.deepcopy(m)
    kw = dict(steps=3, batch_size=36, lr=1e-2, seed=5, balanced=True, text_every=2)
    la = train_counting_model(a, small_data, micro_batches=1, **kw)
    lb = train_counting_model(b, small_data, micro_batches=4, **kw)
    # float32 rounding of a sum taken in another order; a wrong normalisation is off by a factor
    assert la == pytest.approx(lb, rel=1e-5)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.allclose(pa, pb, atol=1e-5)


@pytest.mark.parametrize("kw,match", [({"micro_batches": 0}, "micro_batches=0"),
                                      ({"decay_frac": 0.0}, "decay_frac=0.0"),
                                      ({"text_every": 0}, "text_every=0"),
                                      ({"balanced": True, "batch_size": 8}, "batch_size >= 9")])
def test_bad_training_settings_fail_before_training(small_data, kw, match):
    """Catches a recipe setting that would train silently wrong (no micro-batch, a schedule without
    decay, the text loss never taken, a 'balanced' batch with no prompt of some count)."""
    m = build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=4, intermediate_size=32)
    with pytest.raises(ValueError, match=match):
        train_counting_model(m, small_data, steps=2, **{"batch_size": 36, **kw})
