"""The OpenAI-compatible backend retries through the openai client's own policy: a server's
``Retry-After`` on 429 sets the wait (issue 15, item 5: the former hand-written loop ignored it),
attempts are still counted and replies still cached. Waits are checked from below only (a loaded
machine can only make them longer)."""

from __future__ import annotations

import time

import pytest

from neurips26.backends import BackendError, Message, OpenAIBackend, ReplyCache, StubOpenAIServer

MSGS = [Message("user", "say hi")]


def test_retry_after_on_429_sets_the_wait_and_attempts_are_counted(tmp_path):
    with StubOpenAIServer(reply="ok", failures=[429], retry_after=1.5) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=3, cache=ReplyCache(tmp_path))
        t0 = time.perf_counter()
        r = be.chat(MSGS)
        waited = time.perf_counter() - t0
        # the client's own backoff would wait <= 0.5 s before the first retry; the server asked for 1.5 s (the former loop waited its own 1 s)
        assert waited >= 1.45, waited
        assert r.text == "ok" and r.attempts == 2 and len(server.requests) == 2
        again = be.chat(MSGS)                      # cache around the client's retries
        assert again.cached and len(server.requests) == 2


def test_without_retry_after_the_client_backs_off_exponentially():
    with StubOpenAIServer(reply="ok", failures=[500]) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=1)
        t0 = time.perf_counter()
        r = be.chat(MSGS)
        # openai's first backoff: 0.5 s minus up to 25 % jitter
        assert time.perf_counter() - t0 >= 0.37 and r.attempts == 2


def test_a_retry_after_beyond_the_clients_limit_is_reported_not_waited_for():
    with StubOpenAIServer(failures=[429] * 3, retry_after=600) as server:
        be = OpenAIBackend("m", base_url=server.url, max_retries=3)
        t0 = time.perf_counter()
        with pytest.raises(BackendError, match=r"gave up after 1 attempt \(last Retry-After: 600 s\).*RateLimit"):
            be.chat(MSGS)
        assert time.perf_counter() - t0 < 60 and len(server.requests) == 1


def test_max_retries_must_be_a_non_negative_integer():
    with pytest.raises(ValueError, match="max_retries"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", max_retries=-1)
    with pytest.raises(ValueError, match="max_retries"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", max_retries=1.5)
