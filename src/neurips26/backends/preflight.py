"""One short call before any work, so a backend that does not answer stops a run in seconds.

A measurement that rests on failed model calls is never a verdict (see
:mod:`neurips26.harness.claims`): every system that uses a backend calls :func:`preflight` first,
before it trains, generates data or makes any other call.
"""

from __future__ import annotations

import time

from .base import BackendError, ChatBackend, ChatParams, Message

#: The preflight prompt: one user message asking for a one-token reply.
PREFLIGHT_MESSAGES = (Message("user", "Reply with the word ok."),)


def describe(backend: ChatBackend) -> str:
    """``kind at URL (model M)`` for messages: what was tried, in words."""
    ident = getattr(backend, "identity", None)
    info = ident() if callable(ident) else {}
    kind = info.get("kind") or type(backend).__name__
    where = info.get("base_url") or info.get("model_path") or info.get("path") or ""
    model = info.get("model") or getattr(backend, "name", "")
    return f"{kind}{' at ' + str(where) if where else ''}{f' (model {model})' if model else ''}"


def preflight(backend: ChatBackend, *, timeout_s: float = 10.0) -> float:
    """Make one tiny chat call (``max_tokens=1``; no retries and a ``timeout_s`` limit for an
    OpenAI-compatible server; the reply cache is bypassed) and return its latency in seconds.

    A reply that stops at the token limit counts as an answer: the endpoint is alive.

    Args:
        backend: any :class:`~neurips26.backends.base.ChatBackend`.
        timeout_s: seconds to wait for an OpenAI-compatible server (> 0).

    Raises:
        ValueError: ``timeout_s <= 0``.
        BackendError: the backend did not answer; one line naming its kind, URL or folder, model,
            and what failed (e.g. ``openai at http://127.0.0.1:9/v1 (model x) did not answer a
            preflight call within 10 s: APIConnectionError: Connection error.``).
    """
    if not timeout_s > 0:
        raise ValueError(f"preflight(): timeout_s={timeout_s}; allowed: > 0")
    t0 = time.perf_counter()
    client = getattr(backend, "_client", None)
    try:
        if client is not None and hasattr(client, "with_options"):  # OpenAI-compatible: no retries
            openai = backend._openai  # type: ignore[attr-defined]
            quick = client.with_options(max_retries=0, timeout=timeout_s)
            kwargs = {"model": backend.model, "messages": [m.to_dict() for m in PREFLIGHT_MESSAGES]}  # type: ignore[attr-defined]
            if getattr(backend, "reasoning", False):
                kwargs["max_completion_tokens"] = 16
            else:
                kwargs.update(max_tokens=1, temperature=0.0)
            try:
                quick.chat.completions.create(**kwargs)
            except openai.OpenAIError as exc:
                raise BackendError(f"{type(exc).__name__}: {' '.join(str(exc).split())}") from None
        else:
            cache = getattr(backend, "cache", None)
            if cache is not None:
                backend.cache = None  # type: ignore[attr-defined]
            try:
                backend.chat(list(PREFLIGHT_MESSAGES), ChatParams(max_tokens=1))
            finally:
                if cache is not None:
                    backend.cache = cache  # type: ignore[attr-defined]
    except BackendError as exc:
        first = " ".join(str(exc).split())
        raise BackendError(f"{describe(backend)} did not answer a preflight call within {timeout_s:g} s: "
                           f"{first}") from None
    except Exception as exc:  # a local model that cannot generate, a scripted policy that raises
        raise BackendError(f"{describe(backend)} failed its preflight call: {type(exc).__name__}: "
                           f"{' '.join(str(exc).split())}") from None
    return time.perf_counter() - t0


__all__ = ["preflight", "describe", "PREFLIGHT_MESSAGES"]
