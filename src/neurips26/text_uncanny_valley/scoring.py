"""Scoring detection answers: micro-F1 with three line matchers.

Source: the AbsenceBench scorer (Fu et al., 2025): an original line counts as *reported* iff its
stripped, lower-cased text is a substring of the lower-cased response; reported & target → TP,
reported & not target → FP, target & not reported → FN; F1 = 2TP / (2TP + FP + FN); a document
with nothing to find scores 1 - FP / #candidates.

Pitfall (inferred, and the reason for three matchers): a model that echoes a *fragmented* line
(``"Th e wi nd"``) fails the exact test against the clean line, so a U-curve could be a scoring
artefact. The matchers:

* ``exact``: AbsenceBench's rule, against the clean line.
* ``normalised``: NFKC, case-folded, all whitespace removed on both sides, then substring.
* ``fragment_tolerant``: ``normalised``, else a fuzzy partial match (rapidfuzz
  ``partial_ratio`` >= 90 on the normalised strings) — tolerates a dropped or doubled letter.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

MATCHERS = ("exact", "normalised", "fragment_tolerant")
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, case-fold, remove all whitespace."""
    return _WS.sub("", unicodedata.normalize("NFKC", text).casefold())


def reported(line: str, response: str, matcher: str = "normalised") -> bool:
    """Whether ``line`` counts as reported in ``response`` under ``matcher``.

    Raises:
        ValueError: unknown matcher.
    """
    if matcher == "exact":
        return line.strip().lower() in response.lower()
    if matcher not in MATCHERS:
        raise ValueError(f"matcher={matcher!r}; allowed: {', '.join(MATCHERS)}")
    a, b = normalise(line), normalise(response)
    if not a:
        return False
    if a in b:
        return True
    if matcher == "fragment_tolerant" and len(a) >= 8:
        from rapidfuzz import fuzz

        return fuzz.partial_ratio(a, b) >= 90
    return False


@dataclass(frozen=True)
class Score:
    """Counts and F1 of one answer."""

    tp: int
    fp: int
    fn: int
    f1: float


def score(targets: Sequence[str], candidates: Sequence[str], response: str, matcher: str = "normalised") -> Score:
    """AbsenceBench micro-F1 of ``response`` (module docstring).

    Args:
        targets: the lines to be found (clean).
        candidates: every line that could be reported (targets included).
        response: the model's answer; an empty answer or a refusal is a valid empty prediction.

    Raises:
        ValueError: a target that is not among the candidates, or an unknown matcher.
    """
    tset = set(targets)
    if not tset <= set(candidates):
        raise ValueError("every target must be one of the candidates")
    hits = {ln for ln in set(candidates) if reported(ln, response or "", matcher)}
    tp, fp = len(hits & tset), len(hits - tset)
    fn = len(tset - hits)
    if not tset:
        return Score(0, fp, 0, 1.0 - fp / max(len(set(candidates)), 1))
    return Score(tp, fp, fn, 2 * tp / (2 * tp + fp + fn))


def math_correct(answer: int, response: str) -> bool:
    """Exact match of the last integer in ``response`` (digits may be fragmented: spaces are
    removed between digits first)."""
    nums = re.findall(r"-?\d+", re.sub(r"(?<=\d)\s+(?=\d)", "", response or ""))
    return bool(nums) and int(nums[-1]) == int(answer)
