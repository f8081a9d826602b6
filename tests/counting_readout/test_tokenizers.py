"""Real tokenizers: where ``" 3"`` is two tokens ``[' ', '3']`` (cl100k/o200k, the Qwen2 pre-tokenizer,
Llama-2's ``'▁'``), the digit must be read after the space token, never right after ``":"``.

The tokenizer is a byte-level BPE trained in-process with the tokenizers library and the Qwen2
pre-tokenizer pattern (digits are isolated, a space before a digit is its own token)."""

import numpy as np
import pytest

from neurips26.counting_readout.models import make_counting_data
from neurips26.counting_readout.tasks import (
    DIGITS,
    MultiTokenDigitError,
    digit_tokens,
    encode_prompts,
    generate_counting_prompts,
)

# the pre-tokenizer regex of Qwen2/2.5/3 (public tokenizer.json): \p{N} takes one digit, so " 3" is " " + "3"
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                 r"\s*[\r\n]+|\s+(?!\S)|\s+")


@pytest.fixture(scope="module")
def split_space_tok():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(0)
    texts = [p.text + f" {p.count}" for p in generate_counting_prompts(300, rng)]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def test_premise_the_space_before_a_digit_is_its_own_token(split_space_tok):
    pieces = split_space_tok.convert_ids_to_tokens(split_space_tok("Answer: 3")["input_ids"])
    assert pieces[-2:] == ["Ġ", "3"]


def test_digits_are_read_after_the_space_token(split_space_tok):
    """Catches reading the digit logits right after ':' (the empty-prefix guess), where such a
    model writes the space token: the digits must come with the space token as their lead."""
    t = split_space_tok
    d = digit_tokens(t)
    space = t.convert_tokens_to_ids("Ġ")
    assert d.lead_ids == (space,) and not d.first_token_only
    assert t.convert_ids_to_tokens(list(d.ids)) == [str(k) for k in DIGITS]
    # every encoded prompt ends with the space token, and the answer position is that token
    data = make_counting_data(np.random.default_rng(1), n_train=20, n_probe=90, n_test=45, n_text=50, tokenizer=t)
    for b in (data.train, data.probe, data.test):
        last = b.input_ids[np.arange(len(b)), b.answer_pos]
        assert (last == space).all()
        # the answer position's next token in the written answer is the digit: prompt + lead + digit
        p = generate_counting_prompts(3, np.random.default_rng(2))
        enc = encode_prompts(t, p, lead_ids=d.lead_ids)
        for i, q in enumerate(p):
            written = t(q.text + " " + str(q.count))["input_ids"]
            n = int(enc.answer_pos[i]) + 1
            assert enc.input_ids[i, :n].tolist() == written[:n] and written[n] == d.ids[q.count - 1]


class _MixedTok:
    """Duck-typed tokenizer: ' 1'..' 4' are single tokens, ' 5'..' 9' are [' ', digit]."""

    def __call__(self, text, add_special_tokens=False):
        out, i = [], 0
        while i < len(text):
            if text[i] == " " and i + 1 < len(text) and text[i + 1] in "1234":
                out.append(1000 + int(text[i + 1]))
                i += 2
            else:
                out.append(ord(text[i]))
                i += 1
        return {"input_ids": out}

    def convert_ids_to_tokens(self, ids):
        return [f"<{i}>" for i in ids]


def test_inconsistent_digit_splits_are_refused_not_guessed():
    """Catches a silent guess when digits split inconsistently (some ' d' one token, others two)."""
    with pytest.raises(MultiTokenDigitError, match="5->"):
        digit_tokens(_MixedTok())


def test_counting_accuracy_refuses_prompts_encoded_without_the_lead(split_space_tok):
    """Catches encode_prompts with its default lead_ids=() followed by counting_accuracy silently
    reading the digit logits at ':' (where this tokenizer writes the space token)."""
    import torch

    from neurips26.counting_readout.models import build_tiny_model, counting_accuracy

    t = split_space_tok
    d = digit_tokens(t)
    model = build_tiny_model(t, hidden_size=16, layers=1, heads=2, intermediate_size=16, seed=0).eval()
    p = generate_counting_prompts(9, np.random.default_rng(3))
    with torch.no_grad(), pytest.raises(ValueError, match="lead_ids=digits.lead_ids"):
        counting_accuracy(model, encode_prompts(t, p), d)
    with pytest.raises(ValueError, match="lead_ids"):        # a subset keeps what it was encoded with
        counting_accuracy(model, encode_prompts(t, p).subset(slice(0, 3)), d)
    acc = counting_accuracy(model, encode_prompts(t, p, lead_ids=d.lead_ids), d)   # the agreeing pair runs
    assert 0.0 <= acc["digit_restricted"] <= 1.0
