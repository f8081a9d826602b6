"""The chat interface every model backend implements, and its small value types.

A backend takes a list of :class:`Message` and sampling parameters and returns a
:class:`ChatReply` (text, token usage, latency, whether it came from the cache). Failures that
survive the backend's own retries raise :class:`BackendError`; callers (agents) record them as
an ``error`` outcome instead of a wrong answer.
"""

from __future__ import annotations

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

    Raises:
        ValueError: on a negative temperature or ``max_tokens < 1``.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


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
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1
    model: str = ""

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
        latency_s: summed wall seconds of model calls.
        errors: calls that raised :class:`BackendError`.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    errors: int = 0
    by_model: dict[str, int] = field(default_factory=dict)

    def add(self, reply: ChatReply) -> None:
        """Count one reply."""
        self.calls += 1
        self.cache_hits += reply.cached
        self.prompt_tokens += reply.prompt_tokens
        self.completion_tokens += reply.completion_tokens
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
