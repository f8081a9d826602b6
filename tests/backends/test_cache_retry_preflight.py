"""Behaviours of the backends' reply cache, retry budget and preflight that no other test pins
(each test names the planted mistake it catches)."""

from __future__ import annotations

import pytest

from neurips26.backends import (
    BackendError,
    ChatParams,
    Message,
    OpenAIBackend,
    ReplyCache,
    StubOpenAIServer,
    TransformersBackend,
    preflight,
)
from neurips26.backends.preflight import PREFLIGHT_MESSAGES

MSGS = [Message("user", "say hi")]


def test_reply_cache_is_not_shared_by_two_models_on_one_server(tmp_path):
    """Catches a cache key without the model: model b would get model a's cached reply."""
    cache = ReplyCache(tmp_path)
    with StubOpenAIServer(reply=lambda body: f"I am {body['model']}") as server:
        a = OpenAIBackend("model-a", base_url=server.url, cache=cache)
        b = OpenAIBackend("model-b", base_url=server.url, cache=cache)
        assert a.chat(MSGS).text == "I am model-a"
        rb = b.chat(MSGS)
        assert rb.text == "I am model-b" and not rb.cached
        assert a.chat(MSGS).cached and len(server.requests) == 2


def _tiny_checkpoint(folder, seed):
    """A one-layer GPT-2 with a word-level tokenizer, weights drawn from ``seed``, saved to ``folder``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = "system user assistant : say hi hello there a b c d e f g".split()
    vocab = {w: i for i, w in enumerate(["[UNK]", "[EOS]"] + words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]")
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=64, n_embd=8, n_layer=1, n_head=2,
                                       eos_token_id=1, bos_token_id=1))
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def test_reply_cache_is_not_shared_by_checkpoints_in_folders_of_the_same_name(tmp_path):
    """Catches a transformers cache key built from the folder's name (``final`` twice) or from its
    path alone (a checkpoint retrained in place would be answered with the old model's replies)."""
    a = _tiny_checkpoint(tmp_path / "runs" / "a" / "final", seed=0)
    b = _tiny_checkpoint(tmp_path / "runs" / "b" / "final", seed=1)
    cache = ReplyCache(tmp_path / "cache")
    be_a = TransformersBackend(a, cache=cache, threads=1)
    be_b = TransformersBackend(b, cache=cache, threads=1)
    ka = ReplyCache.key(be_a.identity(), MSGS, ChatParams())
    kb = ReplyCache.key(be_b.identity(), MSGS, ChatParams())
    assert ka != kb
    be_a.chat(MSGS, ChatParams(max_tokens=3))
    assert not be_b.chat(MSGS, ChatParams(max_tokens=3)).cached
    _tiny_checkpoint(a, seed=2)  # retrained in place: same path, new weights
    again = TransformersBackend(a, cache=cache, threads=1)
    assert again.identity()["weights"] != be_a.identity()["weights"]
    assert not again.chat(MSGS, ChatParams(max_tokens=3)).cached


def test_retry_budget_is_spent_over_the_backends_life_not_per_call():
    """Catches a budget reset at every call: with a budget worth several failing calls, calls
    must stop reaching the server once the failures together exceed it (retries never stop
    otherwise). Each failing call is one 0.1 s timeout (max_retries=0); budget 0.35 s, so the
    4th failure spends it (0.4 s ≥ 0.35 s) and the 5th call sends nothing. Timing slack: a
    timeout takes at least 0.1 s, so at most 4 requests can fit before the budget is spent."""
    with StubOpenAIServer(failures=[1.0] * 20) as server:
        be = OpenAIBackend("m", base_url=server.url, timeout_s=0.1, max_retries=0, retry_budget_s=0.35)
        gave_up = 0
        for _ in range(10):
            try:
                be.chat(MSGS)
            except BackendError as exc:
                if "retry budget spent" in str(exc):
                    break
                gave_up += 1
        else:
            pytest.fail("the retry budget never stopped the calls")
        assert gave_up >= 2  # the budget is larger than one failure
        sent = len(server.requests)
        with pytest.raises(BackendError, match="retry budget spent"):
            be.chat(MSGS)
        assert len(server.requests) == sent == gave_up <= 4


def test_preflight_is_not_answered_from_the_reply_cache_local(tmp_path):
    """Catches a preflight served from the cache: a local model that cannot generate any more
    must fail preflight even though its preflight reply is cached."""
    folder = _tiny_checkpoint(tmp_path / "m", seed=0)
    cache = ReplyCache(tmp_path / "cache")
    be = TransformersBackend(folder, cache=cache, threads=1)
    preflight(be)
    be.chat(list(PREFLIGHT_MESSAGES), ChatParams(max_tokens=1))  # the preflight reply is now cached
    assert be.chat(list(PREFLIGHT_MESSAGES), ChatParams(max_tokens=1)).cached

    def broken(*args, **kwargs):
        raise RuntimeError("weights on a device that is gone")

    be.model.generate = broken
    with pytest.raises(BackendError, match="preflight"):
        preflight(be)
    assert be.cache is cache  # restored afterwards


def test_preflight_is_not_answered_from_the_reply_cache_openai(tmp_path):
    """Catches a preflight served from the cache on the OpenAI path: a dead server must fail it."""
    cache = ReplyCache(tmp_path)
    with StubOpenAIServer(reply="ok") as server:
        url = server.url
        be = OpenAIBackend("m", base_url=url, cache=cache, max_retries=0)
        for params in (ChatParams(max_tokens=1), ChatParams(max_tokens=1, temperature=0.0)):
            be.chat(list(PREFLIGHT_MESSAGES), params)
    dead = OpenAIBackend("m", base_url=url, cache=cache, max_retries=0, timeout_s=1)
    assert dead.chat(list(PREFLIGHT_MESSAGES), ChatParams(max_tokens=1)).cached
    with pytest.raises(BackendError, match="did not answer a preflight call"):
        preflight(dead, timeout_s=1)


def test_preflight_sends_max_completion_tokens_to_a_reasoning_model():
    """Catches a preflight that sends ``max_tokens``/``temperature`` to a reasoning model (which
    rejects them); an ordinary model gets ``max_tokens=1`` and temperature 0."""
    with StubOpenAIServer(reply="ok") as server:
        preflight(OpenAIBackend("o-model", base_url=server.url, reasoning=True))
        preflight(OpenAIBackend("plain", base_url=server.url))
        reasoning, plain = server.requests
    assert "max_completion_tokens" in reasoning and "max_tokens" not in reasoning and "temperature" not in reasoning
    assert plain["max_tokens"] == 1 and plain["temperature"] == 0.0 and "max_completion_tokens" not in plain


def test_chat_params_new_fields_keep_old_cache_keys():
    """Catches a cache key that changed for every existing entry when stop/penalty/constraint
    fields were added: at their defaults the key is the one computed from (temperature,
    max_tokens, seed) alone."""
    import hashlib
    import json

    ident = {"kind": "x"}
    old = json.dumps({"backend": ident, "messages": [m.to_dict() for m in MSGS],
                      "params": {"temperature": 0.0, "max_tokens": 512, "seed": None}},
                     sort_keys=True, separators=(",", ":"))
    assert ReplyCache.key(ident, MSGS, ChatParams()) == hashlib.sha256(old.encode()).hexdigest()
    assert ReplyCache.key(ident, MSGS, ChatParams(stop=("\n",))) != ReplyCache.key(ident, MSGS, ChatParams())
    assert ReplyCache.key(ident, MSGS, ChatParams(choices=("a", "b"))) != ReplyCache.key(ident, MSGS, ChatParams())


def test_chat_params_validate_constraints():
    with pytest.raises(ValueError, match="at most one"):
        ChatParams(choices=("a",), regex="a")
    with pytest.raises(ValueError, match="repetition_penalty"):
        ChatParams(repetition_penalty=0)
    with pytest.raises(ValueError, match="JSON object"):
        ChatParams(json_schema="[1]")
    assert ChatParams(stop="\n").stop == ("\n",)
    assert ChatParams(json_schema={"type": "object", "properties": {"a": {"type": "integer"}}}).json_schema.startswith("{")
