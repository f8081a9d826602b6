"""The chat interface every model backend implements, and its small value types.

A backend takes a list of :class:`Message` and sampling parameters and returns a
:class:`ChatReply` (text, token usage, latency, whether it came from the cache). Failures that
survive the backend's own retries raise :class:`BackendError`; callers (agents) record them as
an ``error`` outcome instead of a wrong answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Protocol, runtime_checkable

ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Message:
    """One chat message.

    Attributes:
        role: ``system``, ``user`` or ``assistant``.
        content: the text.

    Raises:
        ValueError: on an unknown role or non-string content.
    """

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Message.role {self.role!r} is not one of {ROLES}")
        if not isinstance(self.content, str):
            raise ValueError(f"Message.content must be str, got {type(self.content).__name__}")

    def to_dict(self) -> dict[str, str]:
        """``{"role": ..., "content": ...}`` (the OpenAI wire format)."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class ChatParams:
    """Sampling parameters (part of the cache key).

    Attributes:
        temperature: >= 0; 0 means greedy/deterministic where the server supports it.
        max_tokens: >= 1, the most tokens to generate.
        seed: optional sampling seed passed to servers that accept one.
        stop: strings that end the reply (the reply is cut before the first one, as OpenAI does).
        repetition_penalty: > 0; 1.0 is none. transformers' multiplicative penalty on tokens
            already in the context; sent as ``repeat_penalty`` to a llama.cpp server.
        choices: constrain the reply to exactly one of these strings.
        regex: constrain the reply to match this regular expression (transformers path only).
        json_schema: constrain the reply to JSON valid under this schema; a dict is stored as its
            canonical JSON text (subset: :data:`neurips26.backends.constrain.SCHEMA_SUBSET`).
            At most one of ``choices``, ``regex``, ``json_schema``.

    The cache key holds ``temperature``, ``max_tokens``, ``seed`` and every other field that is
    not at its default, so replies cached before these fields existed are still found.

    Raises:
        ValueError: on a negative temperature, ``max_tokens < 1``, a penalty <= 0, more than one
            constraint, or a schema that is not a JSON object.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    stop: tuple[str, ...] = ()
    repetition_penalty: float = 1.0
    choices: tuple[str, ...] = ()
    regex: str = ""
    json_schema: str = ""

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0 (1.0: none), got {self.repetition_penalty}")
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "choices", tuple(self.choices))
        if any(not isinstance(s, str) or not s for s in self.stop + self.choices):
            raise ValueError(f"stop and choices must be non-empty strings, got {self.stop!r} / {self.choices!r}")
        if isinstance(self.json_schema, dict):
            object.__setattr__(self, "json_schema", json.dumps(self.json_schema, sort_keys=True))
        if self.json_schema and not isinstance(json.loads(self.json_schema), dict):
            raise ValueError(f"json_schema must be a JSON object, got {self.json_schema[:60]!r}")
        if sum(map(bool, (self.choices, self.regex, self.json_schema))) > 1:
            raise ValueError("give at most one of choices, regex, json_schema")

    def key_dict(self) -> dict:
        """The fields that go into the reply-cache key (see the class docstring)."""
        d = asdict(self)
        base = {"temperature", "max_tokens", "seed"}
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()
                if k in base or v != _PARAM_DEFAULTS[k]}


_PARAM_DEFAULTS = {"stop": (), "repetition_penalty": 1.0, "choices": (), "regex": "", "json_schema": ""}


@dataclass
class ChatReply:
    """A backend's answer.

    Attributes:
        text: the reply text.
        prompt_tokens: tokens in the prompt (as counted by the backend; 0 if unknown).
        completion_tokens: tokens generated (0 if unknown).
        latency_s: wall seconds of the call (0.0 for a cache hit).
        cached: True when served from the reply cache (no model call).
        attempts: calls made, retries included (0 for a cache hit).
        model: the model name the backend reports.
        cached_prompt_tokens: prompt tokens the backend did not read again because it kept their
            attention cache from an earlier call (0 if none or unknown); the prompt tokens actually
            processed are ``prompt_tokens - cached_prompt_tokens``.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    model: str = ""
    cached_prompt_tokens: int = 0

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


class BackendError(RuntimeError):
    """A model call failed for good (retries exhausted, bad configuration, refused request)."""


@runtime_checkable
class ChatBackend(Protocol):
    """What agents need from a model: ``name`` and ``chat(messages, params) -> ChatReply``.

    ``chat`` raises :class:`BackendError` when no reply can be produced.
    """

    name: str

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply: ...


@dataclass
class UsageMeter:
    """Running totals of backend usage, for results files.

    Attributes:
        calls: replies received (cache hits included).
        cache_hits: replies served from the cache.
        prompt_tokens, completion_tokens: summed token counts.
        cached_prompt_tokens: summed prompt tokens served from a kept attention cache.
        latency_s: summed wall seconds of model calls.
        errors: calls that raised :class:`BackendError`.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    latency_s: float = 0.0
    errors: int = 0
    by_model: dict[str, int] = field(default_factory=dict)

    def add(self, reply: ChatReply) -> None:
        """Count one reply."""
        self.calls += 1
        self.cache_hits += reply.cached
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
        self.cached_prompt_tokens += reply.cached_prompt_tokens
        self.latency_s += reply.latency_s
        self.by_model[reply.model] = self.by_model.get(reply.model, 0) + 1

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def as_messages(messages: Sequence[Message | dict]) -> list[Message]:
    """Accept :class:`Message` objects or ``{"role", "content"}`` dicts.

    Raises:
        ValueError: on an empty list or a malformed item.
    """
    if not messages:
        raise ValueError("messages is empty; give at least one message")
    out = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, dict) and set(m) == {"role", "content"}:
            out.append(Message(m["role"], m["content"]))
        else:
            raise ValueError(f"bad message {m!r}; expected Message or {{'role': ..., 'content': ...}}")
    return out
