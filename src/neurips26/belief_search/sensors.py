"""Sensors: what one look at a few frames of a segment returns.

A look returns a :class:`SensorReply`: ``relevant`` (does this segment hold the evidence the
question needs?), a ``confidence`` in [0, 1] and an ``answer`` (an option index or ``None``).
``relevant=None`` marks a **non-informative** observation (the reply could not be parsed): the
belief update then uses likelihood 1 everywhere.

* :class:`PixelSensor` — the scripted, offline sensor for the synthetic task: it reads the flag
  box's pixels (:func:`~.synthetic.flag_scores`, :func:`~.synthetic.read_colour`), adds seeded
  Gaussian noise to the score and thresholds it; with probability ``misread`` the colour is
  misread. The noise stands in for a VLM's perception errors.
* :class:`VLMSensor` — frames as JPEG images through any chat backend (OpenAI-compatible
  endpoint, local VLM, scripted); the reply must be **strict JSON**
  ``{"relevant": "yes"|"no", "confidence": <number in [0, 1]>, "answer": <option>|null}``.

Malformed-reply rule (documented, counted): a reply is malformed if it is not exactly one JSON
object (optionally inside one ```` ```json ```` fence) with no duplicated key, or ``relevant`` is
not yes/no, or ``confidence`` is not a number in [0, 1], or ``answer`` is not one of the options
or null (case and surrounding spaces are ignored; an option wins over the null words "none",
"null", ""; a missing ``answer`` reads as null; nothing else is repaired). A malformed reply is retried up
to ``max_parse_retries`` times with the error appended to the conversation; if every attempt is
malformed — or the backend fails (:class:`~neurips26.backends.BackendError`) — the look is
non-informative. ``malformed`` and ``backend_errors`` count every such event.

Source: abstract ("treats the VLM as a noisy sensor"); the reply schema, the pixel reader and the
retry rule are inferred (the paper's prompt and parsing are unknown).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .synthetic import COLOURS, flag_scores, read_colour

__all__ = ["SensorReply", "PixelSensor", "VLMSensor", "parse_sensor_reply", "SENSOR_PROMPT"]


@dataclass(frozen=True)
class SensorReply:
    """One look's result.

    Attributes:
        relevant: True/False, or ``None`` for a non-informative (unparseable) look.
        confidence: reported confidence in [0, 1] (0.5 when non-informative).
        answer: option index, or ``None``.
        malformed: malformed replies received while producing this look.
        backend_errors: backend failures while producing it.
        calls: model calls made (0 for the pixel sensor).
    """

    relevant: bool | None
    confidence: float = 0.5
    answer: int | None = None
    malformed: int = 0
    backend_errors: int = 0
    calls: int = 0


class PixelSensor:
    """Scripted offline sensor reading the synthetic flag box.

    Args:
        noise_sd: standard deviation of the Gaussian noise added to the best frame's checker
            score (0 = a perfect reader of the pixels).
        threshold: score above which the look says ``relevant``.
        misread: probability that a reported colour is replaced by a uniformly random other one.
        confidence_slope: ``confidence = sigmoid((score − threshold) / slope)``.
        options: answer option names (colours).
        seed: seed of the sensor's own noise generator (used when ``observe`` gets no ``rng``).

    Raises:
        ValueError: negative noise, threshold outside (0, 1), misread outside [0, 1].

    Source: inferred (a controllable stand-in for a VLM's noisy perception).
    """

    def __init__(self, noise_sd: float = 0.15, threshold: float = 0.5, misread: float = 0.1,
                 confidence_slope: float = 0.1, options: Sequence[str] = tuple(COLOURS), seed: int = 0) -> None:
        if noise_sd < 0 or not 0 < threshold < 1 or not 0 <= misread <= 1 or confidence_slope <= 0:
            raise ValueError(f"PixelSensor: noise_sd={noise_sd} (>= 0), threshold={threshold} (0..1), "
                             f"misread={misread} (0..1), confidence_slope={confidence_slope} (> 0)")
        self.noise_sd, self.threshold, self.misread = noise_sd, threshold, misread
        self.slope, self.options = confidence_slope, list(options)
        self.rng = np.random.default_rng(seed)

    def read(self, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-frame pixel reads: checker scores ``float (k,)`` and colour option indices ``int (k,)``."""
        scores = flag_scores(frames)
        colours = np.array([self.options.index(read_colour(f)) for f in frames], dtype=np.int64)
        return scores, colours

    def decide(self, scores: np.ndarray, colours: np.ndarray, rng: np.random.Generator) -> SensorReply:
        """Noisy decision from per-frame reads of the frames of one look (vectorised over frames)."""
        best = int(np.argmax(scores))
        s = float(scores[best]) + self.noise_sd * float(rng.standard_normal())
        relevant = s > self.threshold
        conf = float(1.0 / (1.0 + np.exp(-(s - self.threshold) / self.slope)))
        answer = None
        if relevant:
            answer = int(colours[best])
            if rng.random() < self.misread:
                answer = int(rng.choice([o for o in range(len(self.options)) if o != answer]))
        return SensorReply(relevant, conf, answer)

    def observe(self, frames: np.ndarray, question: str = "", options: Sequence[str] = (), *,
                rng: np.random.Generator | None = None) -> SensorReply:
        """One look at ``uint8 (k, H, W, 3)`` frames (the sensor interface shared with
        :class:`VLMSensor`; the question is fixed by the task, so ``question`` is ignored and
        ``options``, if given, must be this sensor's colours). Noise comes from ``rng``, else
        from the sensor's own generator (``seed``)."""
        if options and [o.lower() for o in options] != [o.lower() for o in self.options]:
            raise ValueError(f"options={list(options)}; the pixel sensor reads {self.options}")
        return self.decide(*self.read(frames), self.rng if rng is None else rng)


SENSOR_PROMPT = (
    "You see {k} frames sampled from one segment of a video.\n"
    "Question: {question}\nOptions: {options}\n"
    "Does this segment show the evidence needed to answer the question? Reply with ONLY a JSON object, "
    'no other text: {{"relevant": "yes" or "no", "confidence": a number from 0 to 1, '
    '"answer": one of the options, or null if the frames do not show it}}')

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _no_duplicate_keys(pairs: list) -> dict:
    """``json`` hook: a key given twice (``{"relevant": "yes", "relevant": "no"}``) is ambiguous."""
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"duplicate key(s) {dup} in the reply")
    return dict(pairs)


def parse_sensor_reply(text: str, options: Sequence[str]) -> tuple[bool, float, int | None]:
    """Parse a strict JSON sensor reply.

    Returns:
        ``(relevant, confidence, answer_index_or_None)``.

    Raises:
        ValueError: naming what is wrong (not one JSON object; a duplicated key; ``relevant``
            not yes/no; ``confidence`` not a number in [0, 1]; ``answer`` not an option or null).
            An answer matching an option wins over the null words (an option may be "None");
            a missing ``answer`` key reads as null.
    """
    s = text.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1)
    try:
        obj = json.loads(s, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a JSON object ({exc.msg}): {text[:60]!r}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"not a JSON object: {text[:60]!r}")
    rel = obj.get("relevant")
    if isinstance(rel, bool):
        relevant = rel
    elif isinstance(rel, str) and rel.strip().lower() in ("yes", "no"):
        relevant = rel.strip().lower() == "yes"
    else:
        raise ValueError(f"relevant={rel!r}; allowed: 'yes' or 'no'")
    conf = obj.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= float(conf) <= 1.0:
        raise ValueError(f"confidence={conf!r}; allowed: a number in [0, 1]")
    ans = obj.get("answer")
    lowered = [o.strip().lower() for o in options]
    if isinstance(ans, str) and ans.strip().lower() in lowered:  # an option first: "None" may be one
        return relevant, float(conf), lowered.index(ans.strip().lower())
    if ans is None or (isinstance(ans, str) and ans.strip().lower() in ("", "null", "none")):
        return relevant, float(conf), None
    raise ValueError(f"answer={ans!r}; allowed: one of {list(options)} or null")


class VLMSensor:
    """A VLM as a noisy sensor through a chat backend.

    Args:
        backend: a :class:`~neurips26.backends.ChatBackend` (OpenAI-compatible, local VLM, scripted).
        max_parse_retries: re-asks after a malformed reply (>= 0).
        max_side: frames are downscaled to this longer side before JPEG encoding.
        max_tokens: reply token limit.

    Attributes:
        malformed, backend_errors, calls: running counts over all looks.
    """

    def __init__(self, backend, *, max_parse_retries: int = 1, max_side: int = 448, max_tokens: int = 128) -> None:
        if max_parse_retries < 0:
            raise ValueError(f"max_parse_retries={max_parse_retries}; allowed: >= 0")
        self.backend, self.max_parse_retries = backend, max_parse_retries
        self.max_side, self.max_tokens = max_side, max_tokens
        self.malformed = self.backend_errors = self.calls = 0

    def observe(self, frames: np.ndarray, question: str, options: Sequence[str]) -> SensorReply:
        """One look: send ``frames`` (``uint8 (k, H, W, 3)``) with the question; parse strictly.

        Never raises for a bad reply or a failed backend: the look becomes non-informative and
        is counted (see the module docstring for the rule).

        Raises:
            ValueError: fewer than two options or no frames (caller errors, before any call).
        """
        from neurips26.backends import BackendError, ChatParams, Message
        from neurips26.backends.vision import image_message

        if options is None or len(options) < 2:
            raise ValueError(f"options={options!r}: a question needs at least two answer options")
        if len(frames) < 1:
            raise ValueError("frames is empty; a look needs at least one frame")
        prompt = SENSOR_PROMPT.format(k=len(frames), question=question, options=", ".join(options))
        msgs: list = [image_message(prompt, list(frames), max_side=self.max_side)]
        bad = errs = calls = 0
        for _ in range(self.max_parse_retries + 1):
            try:
                reply = self.backend.chat(msgs, ChatParams(temperature=0.0, max_tokens=self.max_tokens))
            except BackendError:
                errs += 1
                break
            calls += 1
            try:
                rel, conf, ans = parse_sensor_reply(reply.text, options)
            except ValueError as exc:
                bad += 1
                msgs = msgs + [Message("assistant", reply.text),
                               Message("user", f"That reply was invalid ({exc}). Reply with only the JSON object.")]
                continue
            self._count(bad, errs, calls)
            return SensorReply(rel, conf, ans, bad, errs, calls)
        self._count(bad, errs, calls)
        return SensorReply(None, 0.5, None, bad, errs, calls)

    def _count(self, bad: int, errs: int, calls: int) -> None:
        self.malformed += bad
        self.backend_errors += errs
        self.calls += calls
