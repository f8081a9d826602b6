"""Counting prompts, tokenisation positions and digit tokens."""

import numpy as np
import pytest

from neurips26.counting_readout.tasks import (
    FORMATS,
    MultiTokenDigitError,
    build_word_tokenizer,
    digit_tokens,
    encode_prompts,
    generate_counting_prompts,
    make_prompt,
)


@pytest.fixture(scope="module")
def tok():
    return build_word_tokenizer()


@pytest.mark.parametrize("fmt", FORMATS)
def test_prompt_spans_and_count(fmt):
    p = make_prompt(["cat", "dog", "cat", "bird", "cat"], "cat", fmt)
    assert p.count == 3 and len(p.entity_spans) == 3
    assert all(p.text[s:e] == "cat" for s, e in p.entity_spans)
    assert p.text.endswith("How many times does cat appear? Answer:")


def test_bad_prompts_raise():
    with pytest.raises(ValueError, match="1..9"):
        make_prompt(["cat"] * 10, "cat")
    with pytest.raises(ValueError, match="1..9"):
        make_prompt(["dog"], "cat")
    with pytest.raises(ValueError, match="allowed"):
        make_prompt(["cat"], "cat", "tsv")
    with pytest.raises(ValueError, match="counts"):
        generate_counting_prompts(5, np.random.default_rng(0), counts=(3, 12))


def test_counts_are_balanced_and_formats_mixed():
    ps = generate_counting_prompts(900, np.random.default_rng(0))
    counts = np.bincount([p.count for p in ps], minlength=10)[1:]
    assert (counts == 100).all()
    assert {p.format for p in ps} == set(FORMATS)


def test_encode_marks_answer_and_entity_positions(tok):
    ps = generate_counting_prompts(40, np.random.default_rng(1))
    enc = encode_prompts(tok, ps)
    for i, p in enumerate(ps):
        ids = enc.input_ids[i]
        # every target occurrence in the list is exactly one entity token, and only those
        assert int(enc.entity_mask[i].sum()) == p.count
        assert set(ids[enc.entity_mask[i]].tolist()) == {tok.convert_tokens_to_ids(p.target)}
        assert tok.convert_ids_to_tokens(int(ids[enc.answer_pos[i]])) == ":"
        assert int(enc.attention_mask[i].sum()) == int(enc.answer_pos[i]) + 1


def test_prompt_longer_than_context_is_refused(tok):
    ps = [make_prompt(["cat"] * 9 + ["dog"] * 30, "cat")]
    with pytest.raises(ValueError, match="context of 16 tokens"):
        encode_prompts(tok, ps, max_length=16)


def test_digit_tokens_single(tok):
    d = digit_tokens(tok)
    assert len(set(d.ids)) == 9 and not d.first_token_only
    assert [tok.convert_ids_to_tokens(i) for i in d.ids] == [str(k) for k in range(1, 10)]


class _CharTok:
    """Duck-typed tokenizer: one id per character, each digit written as two tokens."""

    def __init__(self, shared_first: bool):
        self.shared_first = shared_first

    def _ids(self, ch):
        if ch.isdigit():
            return [500, 600 + int(ch)] if self.shared_first else [600 + int(ch), 500]
        return [ord(ch)]

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [i for ch in text for i in self._ids(ch)]}

    def convert_ids_to_tokens(self, ids):
        return [f"<{i}>" for i in ids]


def test_multi_token_digits_raise_or_use_first_token():
    with pytest.raises(MultiTokenDigitError, match="first_token=True"):
        digit_tokens(_CharTok(shared_first=False))
    d = digit_tokens(_CharTok(shared_first=False), first_token=True)
    assert d.first_token_only and d.ids == tuple(600 + k for k in range(1, 10))
    # first tokens shared by all digits cannot tell them apart: still an error
    with pytest.raises(MultiTokenDigitError):
        digit_tokens(_CharTok(shared_first=True), first_token=True)
