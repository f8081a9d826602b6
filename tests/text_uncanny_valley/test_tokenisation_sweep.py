"""Tokenisation statistics with offline vocabularies; the sweep and U-test harness."""

import numpy as np
import pytest

from neurips26.backends import BackendError
from neurips26.text_uncanny_valley import (BUILTIN, entropy_profile, load_tokenizer, mode_mixture_subject,
                                           needle_items, run_sweep, u_shape_test)
from neurips26.text_uncanny_valley.corpus import poem_lines
from neurips26.text_uncanny_valley.tokenisation import Tokenizer, token_stats

TEXT = "\n".join("\n".join(p) for p in poem_lines())
RATES = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]


@pytest.mark.parametrize("name", BUILTIN)
def test_offline_vocabularies_roundtrip(name):
    tok = load_tokenizer(name)
    ids = tok.encode_batch(["Hello wor ld"])[0]
    assert "".join(tok.piece(i) for i in ids) == "Hello wor ld"


def test_unknown_or_missing_vocabulary_says_where_it_looked(tmp_path):
    with pytest.raises(LookupError, match="allowed: o200k_base"):
        load_tokenizer("llama-9")
    with pytest.raises(LookupError, match="does not exist"):
        load_tokenizer(str(tmp_path / "tokenizer.json"))


def test_entropy_definitions_on_a_hand_example():
    # ids 1,1,2,2 → type entropy 1 bit; pieces: id 1 = "a" (single char), id 2 = "bc"
    tok = Tokenizer("toy", lambda texts: [[1, 1, 2, 2] for _ in texts], {1: " a", 2: "bc"}.__getitem__)
    s = token_stats([1, 1, 2, 2], tok, [1, 1, 2, 2])
    assert s.type_entropy == pytest.approx(1.0)
    assert s.single_char_fraction == pytest.approx(0.5)  # the leading space is not counted
    assert s.mixing_entropy == pytest.approx(1.0)
    assert s.count_entropy == pytest.approx(1.0)


def test_profile_shapes_and_mixing_point():
    pr = entropy_profile(TEXT, load_tokenizer("o200k_base"), RATES, 0)
    assert np.all(np.diff(pr.n_tokens) >= 0)  # coupled draws: more splits never mean fewer tokens here
    assert pr.single_char_fraction[0] < 0.5 < pr.single_char_fraction[-1]
    assert 0.0 < pr.mixing_point < 1.0
    with pytest.raises(ValueError, match="empty"):
        entropy_profile("  ", load_tokenizer("gpt2"), RATES)
    with pytest.raises(ValueError, match="no word"):
        entropy_profile("1 2 3", load_tokenizer("gpt2"), RATES)


def test_harness_recovers_a_known_valley_and_rejects_a_flat_curve():
    items = needle_items(40, 1)
    res = run_sweep(items, mode_mixture_subject(0.4, 0.15, 0.7, seed=0), RATES)
    u = u_shape_test(res.per_doc("normalised"), RATES, seed=0)
    assert u.verdict == "u" and abs(u.p_min - 0.4) <= 0.1 + 1e-9  # one grid step
    perfect = run_sweep(items, mode_mixture_subject(0.4, 0.15, 0.0), RATES)  # depth 0: no valley
    assert u_shape_test(perfect.per_doc("normalised"), RATES).verdict == "no_u"
    # a valley at an endpoint is no U (monotone decline)
    decline = run_sweep(items, mode_mixture_subject(1.0, 0.3, 0.9), RATES)
    assert u_shape_test(decline.per_doc("normalised"), RATES).verdict == "no_u"


def test_backend_failures_are_counted_not_scored():
    calls = []

    def flaky(rendered):
        calls.append(1)
        if len(calls) % 3 == 0:
            raise BackendError("boom")
        return ""

    res = run_sweep(needle_items(6, 0), flaky, [0.0, 0.5, 1.0])
    assert res.calls == 18 and res.failures == 6
    assert np.isnan(res.f1["exact"]).sum() == 6


def test_bad_sweep_input():
    with pytest.raises(ValueError, match="rates="):
        run_sweep(needle_items(2, 0), lambda r: "", [0.5, 0.2])
    with pytest.raises(ValueError, match="items is empty"):
        run_sweep([], lambda r: "", [0.0, 1.0])
    with pytest.raises(ValueError, match="at least 3 rates"):
        u_shape_test(np.zeros((2, 8)), [0, 1])
