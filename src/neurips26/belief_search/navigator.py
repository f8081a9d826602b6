"""A VLM that navigates: the baseline pattern the paper argues against.

:class:`VLMNavigator` shows a chat model the storyboard (one preview frame per segment, as
images) and a text summary of every look so far, and asks for the next move as strict JSON:
``{"action": "look", "segment": <int>}`` or ``{"action": "stop"}``. It plugs into
:func:`~.controller.navigator_search` as its ``choose`` function, so the navigator decides where
to look and when to stop while the answer is still posterior-weighted like every method's.

Malformed moves (not one JSON object, unknown action, segment out of range) are retried once
with the error appended; if still malformed, or the backend fails, the move falls back to the
next unvisited segment in storyboard order (counted in ``malformed``/``backend_errors``/``fallbacks``).

Source: inferred (the abstract contrasts its controller with approaches that "give the VLM
control over temporal navigation"; this prompt and fallback are ours).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np

from .controller import Look

__all__ = ["VLMNavigator", "NAVIGATOR_PROMPT", "parse_move"]

NAVIGATOR_PROMPT = (
    "You are searching a video split into {n} segments (0..{last}) for the evidence that answers: {question}\n"
    "Options: {options}\nThe images are the first frame of each segment, in order.\n"
    "Looks so far:\n{history}\n"
    'Reply with ONLY a JSON object: {{"action": "look", "segment": <segment number>}} to look at a segment, or '
    '{{"action": "stop"}} if you have found the evidence.')

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_move(text: str, n_segments: int) -> int | None:
    """Parse a navigator move: the segment index, or ``None`` for stop.

    Raises:
        ValueError: not one JSON object, unknown action, or a segment outside ``0..n_segments−1``.
    """
    s = text.strip()
    m = _FENCE.match(s)
    try:
        obj = json.loads(m.group(1) if m else s)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON object ({exc.msg}): {text[:60]!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"not a JSON object: {text[:60]!r}")
    action = str(obj.get("action", "")).strip().lower()
    if action == "stop":
        return None
    if action != "look":
        raise ValueError(f"action={obj.get('action')!r}; allowed: 'look' or 'stop'")
    seg = obj.get("segment")
    if isinstance(seg, bool) or not isinstance(seg, int) or not 0 <= seg < n_segments:
        raise ValueError(f"segment={seg!r}; allowed: an integer 0..{n_segments - 1}")
    return seg


def _summary(looks: Sequence[Look], options: Sequence[str]) -> str:
    if not looks:
        return "(none yet)"
    lines = []
    for lk in looks:
        r = lk.reply
        if r.relevant is None:
            lines.append(f"segment {lk.segment}: unreadable reply")
        elif r.relevant:
            ans = options[r.answer] if r.answer is not None else "unknown"
            lines.append(f"segment {lk.segment}: relevant (confidence {r.confidence:.2f}), answer {ans}")
        else:
            lines.append(f"segment {lk.segment}: not relevant (confidence {r.confidence:.2f})")
    return "\n".join(lines)


class VLMNavigator:
    """A chat model choosing the next segment (a ``choose`` for :func:`~.controller.navigator_search`).

    Args:
        backend: a chat backend (images as :class:`~neurips26.backends.vision.ImageMessage`).
        previews: ``uint8 (N, H, W, 3)`` storyboard frames (one per segment).
        question: the question; options: its answer options.
        max_parse_retries: re-asks after a malformed move (>= 0).
        max_side: storyboard frames are downscaled to this longer side.

    Attributes:
        malformed, backend_errors, fallbacks, calls: running counts.
    """

    def __init__(self, backend, previews: np.ndarray, question: str, options: Sequence[str], *,
                 max_parse_retries: int = 1, max_side: int = 224) -> None:
        from neurips26.backends.vision import encode_jpeg

        if len(previews) < 1:
            raise ValueError("previews is empty; give one frame per segment")
        self.backend, self.question, self.options = backend, question, list(options)
        self.n = len(previews)
        self.images = tuple(encode_jpeg(f, max_side=max_side) for f in previews)
        self.max_parse_retries = max_parse_retries
        self.malformed = self.backend_errors = self.fallbacks = self.calls = 0

    def __call__(self, looks: list[Look], storyboard_scores: np.ndarray) -> int | None:
        """The next segment to look at, or ``None`` to stop."""
        from neurips26.backends import BackendError, ChatParams, Message
        from neurips26.backends.vision import ImageMessage

        text = NAVIGATOR_PROMPT.format(n=self.n, last=self.n - 1, question=self.question,
                                       options=", ".join(self.options), history=_summary(looks, self.options))
        msgs: list = [ImageMessage("user", text, self.images)]
        for _ in range(self.max_parse_retries + 1):
            try:
                reply = self.backend.chat(msgs, ChatParams(temperature=0.0, max_tokens=64))
            except BackendError:
                self.backend_errors += 1
                break
            self.calls += 1
            try:
                return parse_move(reply.text, self.n)
            except ValueError as exc:
                self.malformed += 1
                msgs = msgs + [Message("assistant", reply.text),
                               Message("user", f"That reply was invalid ({exc}). Reply with only the JSON object.")]
        self.fallbacks += 1
        visited = {lk.segment for lk in looks}
        order = [int(i) for i in np.argsort(-np.asarray(storyboard_scores, float), kind="stable") if int(i) not in visited]
        return order[0] if order else None
