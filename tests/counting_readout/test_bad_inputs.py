"""Regression tests for bad inputs that once gave silent wrong answers (found by a review):
each must now raise a ValueError naming the value and what is allowed."""

import math
import time

import numpy as np
import pytest
import torch

from neurips26.counting_readout import (
    attach_lora,
    build_tiny_model,
    diagnose,
    diagnose_model,
    generate_counting_prompts,
    plant_readout_bottleneck,
    subspace_ablation_accuracy,
    to_db,
)
from neurips26.counting_readout.experiment import Config


@pytest.fixture()
def model(small_data):
    return build_tiny_model(small_data.tokenizer, hidden_size=32, layers=1, heads=4, intermediate_size=32).eval()


def test_fractional_counts_are_refused():
    # was: count 1.5 passed the 1..9 check and produced a prompt whose true count is 1
    with pytest.raises(ValueError, match="integer in 1..9"):
        generate_counting_prompts(5, np.random.default_rng(0), counts=(1.5,))


def test_repeated_words_and_negative_distractors_are_refused():
    with pytest.raises(ValueError, match="not distinct"):
        generate_counting_prompts(5, np.random.default_rng(0), words=("cat", "cat"))
    with pytest.raises(ValueError, match="max_distractors"):
        generate_counting_prompts(5, np.random.default_rng(0), max_distractors=-1)


def test_diagnose_refuses_nan_probe_accuracy_and_bad_threshold():
    # was: a NaN probe accuracy passed the [0, 1] check and gave 'not_computed'; high=0 gave 'reads_out'
    with pytest.raises(ValueError, match="no NaN"):
        diagnose([0.5, math.nan], 0.5)
    with pytest.raises(ValueError, match="high=0"):
        diagnose([0.5, 0.95], 0.2, high=0)


def test_negative_digit_id_does_not_edit_the_wrong_row(model):
    # was: id -1 indexed the last vocabulary row and edited it silently
    w = model.lm_head.weight.detach().clone()
    with pytest.raises(ValueError, match="outside the vocabulary"):
        plant_readout_bottleneck(model, np.eye(32)[:, :2], [-1])
    assert torch.equal(w, model.lm_head.weight)
    with pytest.raises(ValueError, match="not distinct"):
        plant_readout_bottleneck(model, np.eye(32)[:, :2], [5, 5])


def test_ablation_refuses_nan_states_and_counts_outside_digits(model):
    ids = list(range(4, 13))
    Q = np.eye(32)[:, :2]
    with pytest.raises(ValueError, match="finite"):  # was: NaN states gave accuracy 1/9
        subspace_ablation_accuracy(model, torch.full((9, 32), math.nan), np.arange(1, 10), ids, Q)
    with pytest.raises(ValueError, match="1..9"):  # was: count 10 was scored as wrong, silently
        subspace_ablation_accuracy(model, torch.randn(9, 32), np.arange(2, 11), ids, Q)


def test_to_db_refuses_nan_and_negative():
    # was: to_db(nan) = -inf (looks like "no signal")
    with pytest.raises(ValueError, match="snr=nan"):
        to_db(math.nan)
    with pytest.raises(ValueError, match="snr=-1"):
        to_db(-1.0)
    assert to_db(0.0) == -math.inf and to_db(10.0) == pytest.approx(10.0)


def test_lora_rank_above_width_and_chunk_zero_are_clear(model, small_data):
    with pytest.raises(ValueError, match="rank=100"):
        attach_lora(model, 100, init="random", digit_ids=list(small_data.digits.ids))
    with pytest.raises(ValueError, match="chunk=0"):
        diagnose_model(model, small_data.tokenizer, n_prompts=90, chunk=0)
    with pytest.raises(ValueError, match="high=1.5"):
        diagnose_model(model, small_data.tokenizer, n_prompts=90, high=1.5)


def test_config_fails_fast_on_missing_checkpoint_and_bad_width(tmp_path):
    from neurips26.counting_readout.experiment import run
    from neurips26.harness import RunContext

    with pytest.raises(ValueError, match="multiple of heads"):  # was: failed only after the run started
        Config(hidden_size=65)
    t0 = time.process_time()
    with pytest.raises(ValueError, match="config.json"):  # was: raised after the tiny model's training
        run(Config(model_path=str(tmp_path / "nope")), RunContext(seed=0, out_dir=tmp_path))
    assert time.process_time() - t0 < 5  # before any training (quick training is ~60 s CPU)


def test_fractional_prompt_count_and_empty_model_are_refused(small_data):
    # was: n=2.5 failed inside range() with a TypeError; layers=0 built a model with no blocks
    with pytest.raises(ValueError, match="n=2.5"):
        generate_counting_prompts(2.5, np.random.default_rng(0))
    for bad in ({"layers": 0}, {"heads": 0}, {"hidden_size": 32.0}):
        with pytest.raises(ValueError, match="allowed: an integer >= 1"):
            build_tiny_model(small_data.tokenizer, **{"hidden_size": 32, "heads": 4, **bad})
