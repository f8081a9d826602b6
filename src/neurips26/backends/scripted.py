"""Scripted backends for tests and offline baselines: a Python policy behind the chat interface.

``ScriptedBackend(policy)`` calls ``policy(messages) -> str`` for each chat; a policy may raise
:class:`BackendError` to simulate an outage. :func:`replies` turns a fixed list into a policy
(an item that is an exception instance is raised instead of returned). Usage is counted as
whitespace-separated words so results files look like a real run's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from .base import BackendError, ChatParams, ChatReply, Message, as_messages

Policy = Callable[[list[Message]], str]


class ScriptedBackend:
    """A :class:`~neurips26.backends.base.ChatBackend` answered by a Python function.

    Args:
        policy: ``messages -> reply text``; may raise :class:`BackendError`.
        name: the backend name recorded in results.

    Attributes:
        calls: how many times ``chat`` was called.
    """

    def __init__(self, policy: Policy, name: str = "scripted") -> None:
        if not callable(policy):
            raise ValueError(f"policy must be callable, got {type(policy).__name__}")
        self.policy, self.name, self.calls = policy, name, 0

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply:
        """Call the policy; count words as tokens."""
        msgs = as_messages(messages)
        self.calls += 1
        t0 = time.perf_counter()
        text = self.policy(msgs)
        if not isinstance(text, str):
            raise BackendError(f"{self.name}: policy returned {type(text).__name__}, expected str")
        return ChatReply(text=text, prompt_tokens=sum(len(m.content.split()) for m in msgs),
                         completion_tokens=len(text.split()), latency_s=time.perf_counter() - t0,
                         model=self.name)


def replies(items: Iterable[str | BaseException]) -> Policy:
    """A policy returning ``items`` in order (raising those that are exceptions).

    Raises (from the policy):
        BackendError: when the list is used up.
    """
    queue = list(items)

    def policy(_messages: list[Message]) -> str:
        if not queue:
            raise BackendError("scripted replies exhausted")
        item = queue.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    return policy
