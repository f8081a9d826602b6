"""Model backends shared by the LLM/VLM-based systems: one small chat interface, three kinds.

A backend maps chat messages to a reply with token usage and latency; an endpoint or a local
model answers through the same ``chat`` as the scripted one here.

Example::

    from neurips26.backends import ChatParams, Message, ScriptedBackend, replies
    backend = ScriptedBackend(replies(["Paris."]))   # or make_backend("openai", ...), TransformersBackend(...)
    reply = backend.chat([Message("system", "Answer in one word."), Message("user", "The capital of France?")],
                         ChatParams(temperature=0))
    print(reply.text, reply.prompt_tokens, reply.completion_tokens, reply.cached)   # Paris. 8 1 False
    print(f"{reply.latency_s:.3f} s")                # wall time of the call

* :class:`OpenAIBackend` — any OpenAI-compatible server through the ``openai`` client (base URL,
  model, key from arguments or ``OPENAI_BASE_URL``/``OPENAI_API_KEY``); the client's own retries on
  timeouts, connection errors, 408/409/429 and 5xx (waiting the server's ``Retry-After`` when
  sent, else exponential backoff), attempts counted; optional on-disk :class:`ReplyCache`
  keyed by (backend, messages, params) so reruns are free and exact.
* :class:`TransformersBackend` — a local causal LM loaded from a user's folder or a known model id
  (:mod:`neurips26.backends.models`: real models shipped in registry packages, converted once;
  never downloads), reusing the attention cache across turns; :meth:`~TransformersBackend.chat_batch`
  generates independent prompts together.
* :class:`LlamaServer` (:mod:`neurips26.backends.server`) — llama.cpp's real OpenAI-compatible
  server on 127.0.0.1 for the same weights, started and stopped around a run or a test.
* Constrained decoding (:mod:`neurips26.backends.constrain`): ``ChatParams(choices=…, regex=…,
  json_schema=…)`` as a logits processor on the transformers path, a grammar / JSON schema on a
  llama.cpp server.
* :class:`ScriptedBackend` — a Python policy (tests, offline baselines); :func:`replies` scripts
  a fixed sequence of replies and failures. :class:`StubOpenAIServer` serves a scripted
  OpenAI-compatible endpoint on loopback for tests.

Failures that survive retries raise :class:`BackendError`; callers record them as an ``error``
outcome, kept out of success rates. :func:`preflight` makes one short call (no retries, a few
seconds) before any work, so a dead endpoint stops a run at once, in one line. :class:`UsageMeter` totals usage for results files.
:func:`make_backend` builds one from config strings (``kind`` = ``openai`` | ``transformers``).
"""

from __future__ import annotations

from pathlib import Path

from .base import BackendError, ChatBackend, ChatParams, ChatReply, Message, UsageMeter, as_messages
from .cache import ReplyCache
from .local import TransformersBackend
from .models import MODELS
from .openai_compat import OpenAIBackend
from .preflight import describe, preflight
from .scripted import ScriptedBackend, replies
from .stub import StubOpenAIServer

BACKEND_KINDS = ("openai", "transformers")


def chat_many(backend: ChatBackend, conversations, params: ChatParams = ChatParams()) -> list[ChatReply]:
    """Replies to independent conversations, in order: one batch where the backend can generate
    several at once (:meth:`TransformersBackend.chat_batch`), else one call each.

    Raises:
        BackendError: as the backend's ``chat``/``chat_batch``.
    """
    batch = getattr(backend, "chat_batch", None)
    if callable(batch):
        return batch(conversations, params)
    return [backend.chat(c, params) for c in conversations]


def make_backend(kind: str, *, model: str = "", base_url: str = "", api_key: str = "", model_path: str = "",
                 cache_dir: str | Path | None = None, device: str = "cpu", timeout_s: float = 60.0,
                 max_retries: int = 4, reasoning: bool = False, retry_budget_s: float | None = 600.0,
                 constraints: str = "openai", threads: int | None = None) -> ChatBackend:
    """Build a backend from plain config values.

    Args:
        kind: ``openai`` (uses ``model``, ``base_url``, ``api_key``, ``reasoning``,
            ``retry_budget_s``: total seconds of failing calls before it stops retrying) or
            ``transformers`` (uses ``model_path``, else ``model``: a folder or a known model id such
            as ``smollm2-135m``, installed on first use; ``device``; ``threads``).
        cache_dir: folder for a :class:`ReplyCache` (``None``: no cache).
        constraints: for ``openai``: ``openai`` or ``llama.cpp`` (how constraints are sent).

    Raises:
        ValueError: unknown ``kind`` or a missing required value (the message names it).
    """
    cache = ReplyCache(cache_dir) if cache_dir else None
    if kind == "openai":
        return OpenAIBackend(model, base_url=base_url or None, api_key=api_key or None, cache=cache,
                             timeout_s=timeout_s, max_retries=max_retries, reasoning=reasoning,
                             retry_budget_s=retry_budget_s, constraints=constraints)
    if kind == "transformers":
        target = model_path or model
        if not target:
            raise ValueError("backend 'transformers' needs model_path (a folder written by save_pretrained or a "
                             f"model id: {', '.join(sorted(MODELS))})")
        return TransformersBackend(target, device=device, cache=cache, threads=threads)
    raise ValueError(f"unknown backend kind {kind!r}; allowed: {', '.join(BACKEND_KINDS)}")


__all__ = ["BackendError", "ChatBackend", "ChatParams", "ChatReply", "Message", "UsageMeter", "as_messages",
           "ReplyCache", "OpenAIBackend", "TransformersBackend", "ScriptedBackend", "replies", "make_backend",
           "StubOpenAIServer", "preflight", "describe",
           "BACKEND_KINDS"]
