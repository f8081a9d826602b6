"""Tests of the shared model backends: value types, reply cache, the OpenAI-compatible backend
against a loopback stub server (bounded requests), the scripted backend and the factory."""

from __future__ import annotations

import pytest

from neurips26.backends import (
    BackendError,
    ChatBackend,
    ChatParams,
    ChatReply,
    Message,
    OpenAIBackend,
    ReplyCache,
    ScriptedBackend,
    StubOpenAIServer,
    UsageMeter,
    as_messages,
    make_backend,
    replies,
)

MSGS = [Message("system", "be brief"), Message("user", "say hi")]
FAST = 0.01  # Retry-After (s) the stub sends with error statuses, so retry tests do not wait long


def test_value_types_validate():
    with pytest.raises(ValueError, match="role"):
        Message("robot", "x")
    with pytest.raises(ValueError, match="temperature"):
        ChatParams(temperature=-0.1)
    with pytest.raises(ValueError, match="max_tokens"):
        ChatParams(max_tokens=0)
    with pytest.raises(ValueError, match="empty"):
        as_messages([])
    with pytest.raises(ValueError, match="bad message"):
        as_messages([{"role": "user"}])
    assert as_messages([{"role": "user", "content": "a"}]) == [Message("user", "a")]
    meter = UsageMeter()
    meter.add(ChatReply("a", 3, 1, 0.5, model="m"))
    meter.add(ChatReply("b", 2, 2, 0.0, cached=True, model="m"))
    assert (meter.calls, meter.cache_hits, meter.prompt_tokens, meter.completion_tokens) == (2, 1, 5, 3)


def test_cache_key_depends_on_everything_and_roundtrips(tmp_path):
    ident = {"kind": "x", "model": "m"}
    k = ReplyCache.key(ident, MSGS, ChatParams())
    assert k == ReplyCache.key(ident, list(MSGS), ChatParams())
    assert k != ReplyCache.key(ident, MSGS, ChatParams(temperature=0.5))
    assert k != ReplyCache.key({"kind": "x", "model": "n"}, MSGS, ChatParams())
    assert k != ReplyCache.key(ident, MSGS[:1], ChatParams())
    cache = ReplyCache(tmp_path)
    assert cache.get(k) is None and cache.misses == 1
    cache.put(k, ChatReply("hello", 4, 1, 0.7, model="m"))
    hit = cache.get(k)
    assert hit.text == "hello" and hit.cached and hit.latency_s == 0.0 and hit.prompt_tokens == 4
    # a corrupted entry is a miss, not a crash
    next(tmp_path.rglob("*.json")).write_text("{not json")
    assert cache.get(k) is None


def test_openai_backend_reply_usage_and_cache(tmp_path):
    with StubOpenAIServer(reply="hi there") as server:
        be = OpenAIBackend("stub-model", base_url=server.url, cache=ReplyCache(tmp_path))
        assert isinstance(be, ChatBackend)
        r = be.chat(MSGS, ChatParams(temperature=0, max_tokens=5, seed=3))
        assert r.text == "hi there" and not r.cached and r.attempts == 1
        assert (r.prompt_tokens, r.completion_tokens) == (4, 2)  # stub counts words: "be brief say hi"
        assert r.latency_s > 0
        body = server.requests[0]
        assert body["model"] == "stub-model" and body["max_tokens"] == 5 and body["seed"] == 3
        assert body["messages"] == [m.to_dict() for m in MSGS]
        again = be.chat(MSGS, ChatParams(temperature=0, max_tokens=5, seed=3))
        assert again.cached and again.text == "hi there" and len(server.requests) == 1  # free rerun
        be.chat(MSGS, ChatParams(temperature=0, max_tokens=6, seed=3))
        assert len(server.requests) == 2  # other params: a new call


def test_openai_backend_reasoning_models_get_max_completion_tokens():
    with StubOpenAIServer(reply="ok") as server:
        OpenAIBackend("gpt-5", base_url=server.url, reasoning=True).chat(MSGS, ChatParams(max_tokens=99))
        body = server.requests[0]
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body and "temperature" not in body


def test_openai_backend_retries_429_and_5xx():
    with StubOpenAIServer(reply="ok", failures=[429, 500, 503], retry_after=FAST) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=4)
        r = be.chat(MSGS)
    assert r.text == "ok" and r.attempts == 4 and len(server.requests) == 4


def test_openai_backend_gives_up_after_max_retries():
    with StubOpenAIServer(failures=[500] * 10, retry_after=FAST) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=2)
        with pytest.raises(BackendError, match="gave up after 3 attempts"):
            be.chat(MSGS)
        assert len(server.requests) == 3


def test_openai_backend_does_not_retry_client_errors():
    with StubOpenAIServer(failures=[400]) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=3)
        with pytest.raises(BackendError, match="BadRequest"):
            be.chat(MSGS)
        assert len(server.requests) == 1


def test_openai_backend_retries_timeouts():
    # first request answers after 1.5 s, the client times out at 0.3 s and retries
    with StubOpenAIServer(reply="late ok", failures=[1.5]) as server:
        be = OpenAIBackend("m", base_url=server.url, timeout_s=0.3, max_retries=1)
        r = be.chat(MSGS)
        assert r.text == "late ok" and r.attempts == 2
    with StubOpenAIServer(failures=[1.5, 1.5]) as server:
        be = OpenAIBackend("m", base_url=server.url, timeout_s=0.3, max_retries=1)
        with pytest.raises(BackendError, match="Timeout"):
            be.chat(MSGS)


def test_stub_server_bounds_requests():
    with StubOpenAIServer(max_requests=2, retry_after=FAST) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=5)
        be.chat(MSGS)
        be.chat(MSGS)
        with pytest.raises(BackendError):
            be.chat(MSGS)  # 503 forever after the limit: retries stop at max_retries
        assert len(server.requests) == 2 + 6


def test_openai_backend_config_errors(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="model is empty"):
        OpenAIBackend("")
    with pytest.raises(ValueError, match="no API key"):
        OpenAIBackend("gpt-5")
    with pytest.raises(ValueError, match="timeout_s"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", timeout_s=0)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert OpenAIBackend("m").base_url == "http://127.0.0.1:9/v1"  # env var honoured, key defaults to EMPTY


def test_scripted_backend_and_replies():
    be = ScriptedBackend(replies(["a b", BackendError("down"), "c"]), name="s")
    assert be.chat(MSGS).text == "a b"
    with pytest.raises(BackendError, match="down"):
        be.chat(MSGS)
    r = be.chat(MSGS)
    assert r.text == "c" and r.completion_tokens == 1 and r.prompt_tokens == 4
    with pytest.raises(BackendError, match="exhausted"):
        be.chat(MSGS)
    assert be.calls == 4
    with pytest.raises(BackendError, match="expected str"):
        ScriptedBackend(lambda m: 3).chat(MSGS)
    with pytest.raises(ValueError, match="callable"):
        ScriptedBackend("nope")  # type: ignore[arg-type]


def test_make_backend(tmp_path):
    with pytest.raises(ValueError, match="unknown backend kind 'llama'"):
        make_backend("llama")
    with pytest.raises(ValueError, match="model_path"):
        make_backend("transformers")
    with pytest.raises(ValueError, match="config.json"):
        make_backend("transformers", model_path=str(tmp_path))
    be = make_backend("openai", model="m", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert isinstance(be, OpenAIBackend) and be.cache is not None


def test_openai_backend_malformed_replies_are_backend_errors():
    """A server answering 200 with garbage gets a one-line BackendError at once (no retries, no raw
    JSON/attribute error); a refused reply (content null) is an empty text for the agent to count."""
    garbage = ["<html>oops</html>", "{not json", "[1, 2]", {}, {"choices": None}, {"choices": "x"},
               {"choices": [{}]}, {"choices": [{"message": {"role": "assistant", "content": 5}}]}]
    with StubOpenAIServer(failures=garbage) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=3)
        for _item in garbage:
            with pytest.raises(BackendError, match="openai:m: "):
                be.chat(MSGS)
        assert len(server.requests) == len(garbage)
    odd = [{"choices": [{"message": {"role": "assistant", "content": None, "refusal": "no"}}]},
           {"choices": [{"message": {"role": "assistant", "content": "DONE"}}], "model": 7,
            "usage": {"prompt_tokens": "abc", "completion_tokens": -3}}]
    with StubOpenAIServer(failures=odd) as server:
        be = OpenAIBackend("m", base_url=server.url)
        assert be.chat(MSGS).text == ""
        r = be.chat(MSGS)
        assert (r.text, r.prompt_tokens, r.completion_tokens, r.model) == ("DONE", 0, 0, "m")


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/v1", "http://[::1", "http://host:99999/v1", " http://h/v1",
                                 "http:///v1"])
def test_openai_backend_rejects_malformed_base_url(url):
    with pytest.raises(ValueError, match="bad base_url"):
        OpenAIBackend("m", base_url=url)
    with pytest.raises(ValueError, match="bad base_url"):
        make_backend("openai", model="m", base_url=url)


def test_openai_backend_empty_reply_at_token_limit_is_an_error():
    """A reasoning model that spends max_tokens on hidden reasoning returns content "" with
    finish_reason "length": that is a configuration problem, not a malformed answer to score."""
    cut = {"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "length"}]}
    cut_none = {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}]}
    partial = {"choices": [{"message": {"role": "assistant", "content": "MOVE"}, "finish_reason": "length"}]}
    with StubOpenAIServer(failures=[cut, cut_none, partial]) as server:
        be = OpenAIBackend("gpt-5", base_url=server.url, reasoning=True)
        for _ in range(2):
            with pytest.raises(BackendError, match=r"token limit \(max_tokens=7\).*raise max_tokens"):
                be.chat(MSGS, ChatParams(max_tokens=7))
        assert be.chat(MSGS, ChatParams(max_tokens=7)).text == "MOVE"  # visible text is returned as is
        assert len(server.requests) == 3
