"""The perturbation: exact reversibility, rate, coupling, regularised variants, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.text_uncanny_valley import defragment, fragment, matched_k, word_spans
from neurips26.text_uncanny_valley.corpus import poem_lines

TEXT = "\n".join("\n".join(p) for p in poem_lines())


@settings(max_examples=150, deadline=None)
@given(st.text(), st.floats(0, 1), st.integers(0, 2**32 - 1), st.sampled_from(["random", "per_type"]))
def test_defragment_restores_any_text(text, p, seed, mode):
    f = fragment(text, p, seed, mode=mode)
    assert defragment(f) == text
    assert len(f.text) == len(text) + f.n_inserted


def test_rate_endpoints_and_binomial_rate():
    assert fragment(TEXT, 0.0, 3).text == TEXT
    f1 = fragment(TEXT, 1.0, 3)
    assert f1.n_inserted == f1.n_sites > 1000
    assert "w i n d" in f1.text  # every internal boundary of "wind" split
    for p in (0.1, 0.3, 0.7):
        f = fragment(TEXT, p, 5)
        se = math.sqrt(p * (1 - p) / f.n_sites)
        assert abs(f.realised_rate - p) <= 4 * se  # 4σ: a fixed-seed check with no multiple testing to speak of


def test_draws_are_coupled_across_rates():
    prev = set()
    for p in (0.0, 0.1, 0.2, 0.5, 0.9, 1.0):
        f = fragment(TEXT, p, 11)
        cuts = set((f.offsets - np.arange(f.offsets.size)).tolist())
        assert prev <= cuts
        prev = cuts


def test_words_digits_punctuation_and_contractions():
    spans = word_spans("Hello, world! don't e-mail 42 a http://x.org (wind)")
    words = ["Hello, world! don't e-mail 42 a http://x.org (wind)"[a:b] for a, b in spans]
    assert words == ["Hello", "world", "wind"]
    out = fragment("don't 1234 e-mail I", 1.0).text
    assert out == "don't 1234 e-mail I"


def test_regularised_variants():
    f = fragment("abcdefg abcdefg", 0, mode="every_k", k=3)
    assert f.text == "abc def g abc def g"
    g = fragment("window window window", 0.5, 4, mode="per_type")
    parts = g.text.split("  ") if "  " in g.text else None
    first = g.text[: g.text.index("w", 1)].strip() if g.text.count("w") > 1 else g.text
    assert g.text.count(first) == 3  # the same split at every occurrence of the type
    assert parts is None
    k = matched_k(TEXT, 0.25)
    assert abs(fragment(TEXT, 0, mode="every_k", k=k).realised_rate - 0.25) < 0.1


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), "x"])
def test_rate_outside_unit_interval_is_refused(p):
    with pytest.raises(ValueError, match="insertion rate p="):
        fragment("some words here", p)


def test_other_bad_input():
    with pytest.raises(ValueError, match="mode="):
        fragment("abc", 0.5, mode="sometimes")
    with pytest.raises(ValueError, match="k >= 1"):
        fragment("abc", 0.5, mode="every_k", k=0)
    with pytest.raises(ValueError, match="whitespace"):
        fragment("abc", 0.5, insert="x")
    with pytest.raises(TypeError, match="str"):
        fragment(b"abc", 0.5)
    with pytest.raises(ValueError, match="no word"):
        matched_k("1 2 3 !", 0.3)
    f = fragment("hello world", 1.0)
    edited = type(f)(f.text.replace(" ", "_"), f.offsets, f.n_sites, f.p, f.mode)
    with pytest.raises(ValueError, match="log does not match"):
        defragment(edited)
