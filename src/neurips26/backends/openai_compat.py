"""A backend for any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, …).

Configuration comes from arguments or the environment: ``base_url`` (else ``OPENAI_BASE_URL``,
else the OpenAI API), ``api_key`` (else ``OPENAI_API_KEY``; local servers usually accept any
key, so ``"EMPTY"`` is used when a ``base_url`` is given without one) and ``model``.

Retries are the ``openai`` client's own policy (``max_retries`` of them): timeouts, connection
errors, HTTP 408/409/429 and 5xx are retried; the wait before a retry is the server's
``Retry-After`` / ``retry-after-ms`` when it sends one (up to the client's two minutes; a longer
requested wait is not retried but reported), else exponential backoff (0.5 s · 2^k, capped at
8 s, with up to 25 % jitter). Other HTTP errors (400, 401, 404 …) fail at once. When retries run
out a :class:`BackendError` says how many attempts were made (counted from the client's retry
header); a successful reply records its ``attempts``. A reply the client cannot decode (not
JSON, no ``choices``, non-text content, a body that is not a chat completion) also raises
:class:`BackendError` at once, never a raw parsing error; an empty or refused reply
(``content: null``) is returned as ``""`` for the caller to count, except an empty reply cut off
by the token limit (``finish_reason: length``, typical of reasoning models with a small
``max_tokens``), which raises :class:`BackendError` so it is not scored as the model's answer. With a :class:`ReplyCache`, a repeated (messages, params) pair is answered from disk.

OpenAI's reasoning models (o-series, GPT-5) reject ``max_tokens`` and any non-default
temperature: with ``reasoning=True`` the limit is sent as ``max_completion_tokens`` (it then
includes hidden reasoning tokens) and no temperature is sent.

``ChatParams.stop`` is sent as ``stop``. A constraint and a repetition penalty depend on the
server (``constraints``): ``"openai"`` sends a JSON schema as ``response_format`` of type
``json_schema`` and refuses choices, regex and a repetition penalty (OpenAI has none of them);
``"llama.cpp"`` sends a JSON schema as llama.cpp's ``json_object`` + ``schema``, choices as a GBNF
``grammar`` and the penalty as ``repeat_penalty`` (see :mod:`neurips26.backends.constrain`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from .base import BackendError, ChatParams, ChatReply, Message, as_messages
from .cache import ReplyCache


def check_base_url(url: str) -> str:
    """Return ``url`` if it is an ``http(s)://host[:port]/…`` URL.

    Raises:
        ValueError: naming the bad URL and the expected form.
    """
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a bad port
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and url == url.strip()
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"bad base_url {url!r}; expected http(s)://host[:port]/v1 "
                         "(e.g. http://localhost:8000/v1)")
    return url


def _count(value: object) -> int:
    """A token count from a server's ``usage`` (0 when missing or not a non-negative int)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class OpenAIBackend:
    """Chat through the ``openai`` client (its retry policy, honouring ``Retry-After``), with
    attempt counting and an optional reply cache.

    Args:
        model: the model name the server expects (non-empty).
        base_url: server URL ending in ``/v1`` (default: ``OPENAI_BASE_URL`` or OpenAI's).
        api_key: key (default: ``OPENAI_API_KEY``; ``"EMPTY"`` for a custom ``base_url``).
        timeout_s: per-request timeout in seconds (> 0).
        max_retries: retries after the first attempt (>= 0), made by the ``openai`` client with
            its waits (``Retry-After`` when the server sends it, else exponential backoff).
        cache: a :class:`ReplyCache`, or ``None`` for no caching.
        reasoning: send ``max_completion_tokens`` and no temperature (reasoning models).
        constraints: ``"openai"`` or ``"llama.cpp"``: how constraints and the repetition penalty
            of :class:`ChatParams` are sent (see the module docstring).
        retry_budget_s: total wall seconds this backend may spend on calls that end in failure
            (retries and waits included) over its lifetime; once spent, every further call fails
            at once with :class:`BackendError` instead of retrying again (``None``: no budget).
            With no server, a run stops within this budget instead of retrying every call.

    Raises:
        ValueError: on an empty model, a malformed ``base_url``, bad numbers, or no API key for
            OpenAI's own endpoint.
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 4, cache: ReplyCache | None = None,
                 reasoning: bool = False, retry_budget_s: float | None = 600.0, constraints: str = "openai") -> None:
        import openai

        if constraints not in ("openai", "llama.cpp"):
            raise ValueError(f"constraints={constraints!r}; allowed: openai, llama.cpp")
        self.constraints = constraints
        if not model:
            raise ValueError("model is empty; give the server's model name (e.g. --set model=gpt-4o-mini)")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if retry_budget_s is not None and not retry_budget_s > 0:
            raise ValueError(f"retry_budget_s must be > 0 or None, got {retry_budget_s!r}")
        self.retry_budget_s = retry_budget_s
        self.failed_seconds = 0.0  # wall time spent on calls that failed
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None:
            check_base_url(base_url)
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or ("EMPTY" if base_url else None)
        if api_key is None:
            raise ValueError("no API key: set OPENAI_API_KEY, or give base_url for a local server")
        self.model = model
        self.base_url = base_url or "https://api.openai.com/v1"
        self.name = f"openai:{model}"
        self.max_retries = max_retries
        self.cache, self.reasoning = cache, reasoning
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.base_url, api_key=api_key, timeout=timeout_s,
                                     max_retries=max_retries)

    def identity(self) -> dict:
        """What distinguishes this backend's replies in the cache key (URL and model)."""
        return {"kind": "openai", "base_url": self.base_url, "model": self.model, "reasoning": self.reasoning}

    @staticmethod
    def _attempts(exc: Exception) -> int:
        """Requests sent for a failed call: the client numbers its retries in a request header."""
        request = getattr(exc, "request", None)
        try:
            return int(request.headers.get("x-stainless-retry-count", 0)) + 1
        except (AttributeError, TypeError, ValueError, RuntimeError):
            return 1

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply:
        """One chat completion (from the cache when possible).

        Raises:
            BackendError: retries exhausted, a non-retryable HTTP error, or a malformed reply
                (undecodable body, no choices, non-text content).
        """
        msgs = as_messages(messages)
        key = ReplyCache.key(self.identity(), msgs, params) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)) is not None:
            return hit
        kwargs = {"model": self.model, "messages": [m.to_dict() for m in msgs]}
        if self.reasoning:
            kwargs["max_completion_tokens"] = params.max_tokens
        else:
            kwargs.update(temperature=params.temperature, max_tokens=params.max_tokens)
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.repetition_penalty != 1.0:
            if self.constraints != "llama.cpp":
                raise ValueError("repetition_penalty is sent only to a llama.cpp server (constraints='llama.cpp'); "
                                 "OpenAI's API has no such parameter")
            kwargs.setdefault("extra_body", {})["repeat_penalty"] = params.repetition_penalty
        from .constrain import openai_constraint_kwargs

        for k, v in openai_constraint_kwargs(params, self.constraints).items():
            kwargs[k] = {**kwargs.get(k, {}), **v} if isinstance(v, dict) and k == "extra_body" else v
        if self.retry_budget_s is not None and self.failed_seconds >= self.retry_budget_s:
            raise BackendError(f"{self.name}: retry budget spent ({self.failed_seconds:.0f} s of failing calls "
                               f"to {self.base_url}, budget {self.retry_budget_s:g} s); not calling again")
        t0 = time.perf_counter()
        try:  # the client retries (Retry-After or backoff); the raw response says how often
            raw = self._client.chat.completions.with_raw_response.create(**kwargs)
            attempt = int(getattr(raw, "retries_taken", 0)) + 1
            resp = raw.parse()
        except self._openai.OpenAIError as exc:
            self.failed_seconds += time.perf_counter() - t0
            o, status = self._openai, getattr(exc, "status_code", None)
            if not (isinstance(exc, (o.APITimeoutError, o.APIConnectionError))
                    or status in (408, 409, 429) or (isinstance(status, int) and status >= 500)):
                raise BackendError(f"{self.name}: {type(exc).__name__}: {exc}") from exc  # not retried
            n = self._attempts(exc)
            response = getattr(exc, "response", None)
            retry_after = response.headers.get("retry-after") if response is not None else None
            why = f" (last Retry-After: {retry_after} s)" if retry_after else ""
            raise BackendError(f"{self.name}: gave up after {n} attempt{'s' * (n != 1)}{why}: "
                               f"{type(exc).__name__}: {exc}") from exc
        except (ValueError, TypeError, AttributeError) as exc:  # e.g. JSONDecodeError on a garbled body
            raise BackendError(f"{self.name}: malformed reply from {self.base_url}: "
                               f"{type(exc).__name__}: {exc}") from exc
        choices = getattr(resp, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise BackendError(f"{self.name}: the server returned no choices "
                               f"(got {type(resp).__name__}: {str(resp)[:80]!r})")
        message = getattr(choices[0], "message", None)
        if message is None:
            raise BackendError(f"{self.name}: the server's first choice has no message")
        text = getattr(message, "content", None)
        if text is None:  # refusal or empty reply: an empty text the agent counts as malformed
            text = ""
        if not text and getattr(choices[0], "finish_reason", None) == "length":
            # not the model's answer: the limit ran out (reasoning models spend it on hidden tokens)
            raise BackendError(f"{self.name}: the reply hit the token limit (max_tokens={params.max_tokens}) "
                               "before any visible text; raise max_tokens")
        if not isinstance(text, str):
            raise BackendError(f"{self.name}: reply content is {type(text).__name__}, not text")
        usage = getattr(resp, "usage", None)
        model = getattr(resp, "model", None)
        details = getattr(usage, "prompt_tokens_details", None)
        reply = ChatReply(text=text, prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
                          completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
                          cached_prompt_tokens=_count(getattr(details, "cached_tokens", 0)),
                          latency_s=time.perf_counter() - t0, attempts=attempt,
                          model=model if isinstance(model, str) and model else self.model)
        if self.cache:
            self.cache.put(key, reply)
        return reply
