"""The local transformers backend, on a tiny randomly initialised GPT-2 saved to a tmp folder
(no download: the tokenizer is built in memory with the ``tokenizers`` library)."""

from __future__ import annotations

import pytest

from neurips26.backends import BackendError, ChatParams, Message, ReplyCache, TransformersBackend

WORDS = "system user assistant : be brief say hi hello there MOVE SEND TO DONE apple box kitchen".split()


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", "[EOS]"] + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=128, n_embd=16, n_layer=1, n_head=2,
                                       eos_token_id=1, bos_token_id=1))
    path = tmp_path_factory.mktemp("tiny_gpt2")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return path


def test_transformers_backend_generates_deterministically(tiny_model_dir, tmp_path):
    be = TransformersBackend(tiny_model_dir, cache=ReplyCache(tmp_path))
    msgs = [Message("system", "be brief"), Message("user", "say hi")]
    prompt = be.prompt_text(msgs)
    assert prompt.endswith("assistant:") and "user: say hi" in prompt  # no chat template: plain lines
    r1 = be.chat(msgs, ChatParams(temperature=0, max_tokens=4))
    assert 0 < r1.completion_tokens <= 4 and not r1.cached
    # prompt tokens: the whitespace word-level tokenizer gives one token per word ("system: be" → 2 words …)
    assert r1.prompt_tokens == len(prompt.split())
    assert all(w in WORDS + ["[UNK]", ""] for w in r1.text.split())  # words of our vocabulary only
    r2 = be.chat(msgs, ChatParams(temperature=0, max_tokens=4))
    assert r2.cached and r2.text == r1.text
    be_nocache = TransformersBackend(tiny_model_dir)
    assert be_nocache.chat(msgs, ChatParams(temperature=0, max_tokens=4)).text == r1.text  # greedy: deterministic
    s1 = be_nocache.chat(msgs, ChatParams(temperature=1.0, max_tokens=4, seed=5)).text
    s2 = be_nocache.chat(msgs, ChatParams(temperature=1.0, max_tokens=4, seed=5)).text
    assert s1 == s2  # sampling is seeded


def test_transformers_backend_bad_inputs(tiny_model_dir, tmp_path):
    with pytest.raises(ValueError, match="no config.json"):
        TransformersBackend(tmp_path)
    for config in ("{}", '{"model_type": "nonsense"}', '{"model_type": "gpt2"}'):  # no weights/tokenizer
        (tmp_path / "config.json").write_text(config)
        with pytest.raises(BackendError, match=r"^cannot load a causal LM from .*: \w+") as info:
            TransformersBackend(tmp_path)
        assert "\n" not in str(info.value)  # one line: the CLI prints a single line per failure
    be = TransformersBackend(tiny_model_dir)
    long = [Message("user", "hello " * 400)]  # longer than n_positions=128
    with pytest.raises(BackendError, match="generation failed"):
        be.chat(long, ChatParams(max_tokens=2))
