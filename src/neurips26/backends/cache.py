"""An on-disk cache of model replies keyed by backend identity, messages and parameters.

Reruns of the same prompts are then free and exact: the key is the SHA-256 of the canonical
JSON of ``(backend identity, messages, params)``; each reply is one small JSON file written
atomically (``<dir>/<key[:2]>/<key>.json``), so concurrent or interrupted runs never leave a
half-written entry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from neurips26.harness.results import atomic_write_text

from .base import ChatParams, ChatReply, Message


class ReplyCache:
    """Directory-backed reply cache.

    Args:
        directory: folder for the entries (created on first write).

    Attributes:
        hits, misses: lookups served / not served since construction.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(identity: dict, messages: Sequence[Message], params: ChatParams) -> str:
        """SHA-256 hex of the canonical JSON of (identity, messages, params)."""
        blob = json.dumps({"backend": identity, "messages": [m.to_dict() for m in messages],
                           "params": params.key_dict()}, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatReply | None:
        """The cached reply (marked ``cached=True``, latency 0, attempts 0), or ``None``.

        An unreadable entry counts as a miss (it will be overwritten).
        """
        path = self._path(key)
        try:
            d = json.loads(path.read_text())
            reply = ChatReply(**{**d, "cached": True, "latency_s": 0.0, "attempts": 0})
        except (OSError, ValueError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return reply

    def put(self, key: str, reply: ChatReply) -> None:
        """Store ``reply`` under ``key`` (atomic write)."""
        atomic_write_text(self._path(key), json.dumps(reply.to_dict(), sort_keys=True))
