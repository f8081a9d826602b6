"""Scoring detection answers: micro-F1 with three line matchers.

Source: the AbsenceBench scorer (Fu et al., 2025): an original line counts as *reported* when the
response gives it; reported & target → TP, reported & not target → FP, target & not reported →
FN; F1 = 2TP / (2TP + FP + FN); a document with nothing to find scores 1 - FP / #candidates.

**Whole-line matching.** AbsenceBench tests whether the line is a *substring* of the response.
For short lines that is wrong: ``"2"`` is found inside ``"12"``, so the answer ``12`` to a list
1..20 missing ``2`` and ``12`` scored F1 0.8 instead of 0.667, and perfect answers to numeric
sequences scored below 1. Here a line is reported only when some *line* of the response equals it
(under the matcher's normalisation), after stripping a list marker (``-``, ``*``, ``•``, ``1.``,
``1)``, ``[1]``) and surrounding quotes. Blank candidate lines are never scored (they are not
lines a reader could report); a blank target is refused.

Pitfall (inferred, and the reason for three matchers): a model that echoes a *fragmented* line
(``"Th e wi nd"``) fails the exact test against the clean line, so a U-curve could be a scoring
artefact. The matchers:

* ``exact``: whole line, stripped and lower-cased (AbsenceBench's normalisation).
* ``normalised``: NFKC, case-folded, all whitespace removed on both sides, then equality.
* ``fragment_tolerant``: ``normalised``, else a fuzzy whole-line match (rapidfuzz ``ratio`` >= 90
  on the normalised strings, lines of >= 8 characters) — tolerates a dropped or doubled letter.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

MATCHERS = ("exact", "normalised", "fragment_tolerant")
_WS = re.compile(r"\s+")
_MARKER = re.compile(r"^\s*(?:[-*\u2022>]+|\(?\d+[.)]|\[\d+\])\s+")
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"
FUZZY_MIN_RATIO = 90.0
FUZZY_MIN_CHARS = 8


def normalise(text: str) -> str:
    """NFKC, case-fold, remove all whitespace."""
    return _WS.sub("", unicodedata.normalize("NFKC", text).casefold())


class _Lines:
    """A response split into lines, each in the forms the matchers compare (with and without a
    list marker and surrounding quotes)."""

    def __init__(self, response: str) -> None:
        forms = []
        for raw in (response or "").splitlines():
            if not raw.strip():
                continue
            bare = _MARKER.sub("", raw, count=1).strip().strip(_QUOTES).strip()
            forms += [raw.strip(), bare] if bare != raw.strip() else [raw.strip()]
        self.exact = {f.lower() for f in forms}
        self.norm_list = list(dict.fromkeys(normalise(f) for f in forms))
        self.norm = set(self.norm_list)

    def has(self, line: str, matcher: str) -> bool:
        if not line.strip():
            return False
        if matcher == "exact":
            return line.strip().lower() in self.exact
        a = normalise(line)
        if a in self.norm:
            return True
        if matcher == "fragment_tolerant" and len(a) >= FUZZY_MIN_CHARS and self.norm_list:
            from rapidfuzz import fuzz, process

            return process.extractOne(a, self.norm_list, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_RATIO) is not None
        return False


def reported(line: str, response: str, matcher: str = "normalised") -> bool:
    """Whether ``line`` counts as reported in ``response`` under ``matcher`` (a whole line of the
    response equals it; module docstring). A blank ``line`` is never reported.

    Raises:
        ValueError: unknown matcher.
    """
    if matcher not in MATCHERS:
        raise ValueError(f"matcher={matcher!r}; allowed: {', '.join(MATCHERS)}")
    return _Lines(response).has(line, matcher)


@dataclass(frozen=True)
class Score:
    """Counts and F1 of one answer."""

    tp: int
    fp: int
    fn: int
    f1: float


def score(targets: Sequence[str], candidates: Sequence[str], response: str, matcher: str = "normalised") -> Score:
    """AbsenceBench micro-F1 of ``response`` with whole-line matching (module docstring).

    Args:
        targets: the lines to be found (clean, non-blank).
        candidates: every line that could be reported (targets included); blank lines are ignored.
        response: the model's answer; an empty answer or a refusal is a valid empty prediction.

    Raises:
        ValueError: a blank target, a target that is not among the candidates, or an unknown matcher.
    """
    if matcher not in MATCHERS:
        raise ValueError(f"matcher={matcher!r}; allowed: {', '.join(MATCHERS)}")
    tset = set(targets)
    blank = [t for t in tset if not str(t).strip()]
    if blank:
        raise ValueError(f"target {blank[0]!r} is blank; a target must be a non-empty line")
    if not tset <= set(candidates):
        raise ValueError("every target must be one of the candidates")
    cands = {ln for ln in candidates if str(ln).strip()}
    lines = _Lines(response or "")
    hits = {ln for ln in cands if lines.has(ln, matcher)}
    tp, fp = len(hits & tset), len(hits - tset)
    fn = len(tset - hits)
    if not tset:
        return Score(0, fp, 0, 1.0 - fp / max(len(cands), 1))
    return Score(tp, fp, fn, 2 * tp / (2 * tp + fp + fn))


def math_correct(answer: int, response: str) -> bool:
    """Exact match of the last integer in ``response`` (digits may be fragmented: spaces are
    removed between digits first)."""
    nums = re.findall(r"-?\d+", re.sub(r"(?<=\d)\s+(?=\d)", "", response or ""))
    return bool(nums) and int(nums[-1]) == int(answer)
