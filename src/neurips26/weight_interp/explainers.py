"""Explainers and scorers behind one interface.

An :class:`Explainer` reads an :class:`ExampleSet` (token positions where a weight matters,
labelled positive, and positions where it does not, labelled negative) and writes a short
human-readable :class:`Explanation` ("matters when …"). A :class:`Scorer` reads an explanation
and held-out items and predicts, per item, whether the weight matters there (1), not (0), or
gives no usable answer (-1: counted, never scored).

* :class:`SymbolicExplainer` / :class:`SymbolicScorer` — offline: search predicates
  "feature ∈ S" over tokens at offsets, the next token, bigrams and positions; keep the one with
  the best balanced accuracy on the explain set; score by evaluating it.
* :class:`LLMExplainer` / :class:`LLMScorer` — any :class:`~neurips26.backends.ChatBackend`
  (OpenAI-compatible endpoint, local transformers model, scripted in tests). Empty replies,
  refusals and malformed replies are counted by kind in :class:`ReplyFailures`.

Source: the abstract (an LLM writes a short account of when a weight matters and it is verified
on held-out data); the detection-style yes/no scorer follows Delphi (Paulo et al. 2024); the
symbolic search is ours (inferred: an offline, deterministic stand-in with the same interface).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .corpus import CharVocabulary

__all__ = ["ExampleSet", "Explanation", "Predicate", "Explainer", "Scorer", "ExplanationFailed", "ReplyFailures",
           "SymbolicExplainer", "SymbolicScorer", "LLMExplainer", "LLMScorer", "token_features", "render_item",
           "parse_explanation", "parse_yes_no", "FEATURES"]

#: feature name -> how it reads in an explanation
FEATURES = {
    "current": "the current token is",
    "previous": "the previous token is",
    "back2": "the token two before is",
    "back3": "the token three before is",
    "next": "the next token (the one being predicted) is",
    "bigram": "the previous and current tokens are",
    "next_bigram": "the current and next tokens are",
    "position": "the position in the context is",
}


@dataclass
class ExampleSet:
    """Token positions with labels.

    Attributes:
        windows: int64 ``[n, T + 1]`` the window of each item (inputs ``[:T]``, item's target at ``t+1``).
        positions: int64 ``[n]`` the item's position t in ``0..T-1``.
        labels: bool ``[n]`` True where the weight matters (positive).
        importance: float ``[n]`` the weight's ``|A_t|`` there.

    Raises:
        ValueError: lengths differ or a position is out of range.
    """

    windows: np.ndarray
    positions: np.ndarray
    labels: np.ndarray
    importance: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.positions)
        if not (len(self.windows) == len(self.labels) == len(self.importance) == n):
            raise ValueError(f"ExampleSet: windows {len(self.windows)}, positions {n}, labels {len(self.labels)}, "
                             f"importance {len(self.importance)}: lengths must agree")
        T = self.windows.shape[1] - 1 if self.windows.ndim == 2 else 0
        if n and (self.positions.min() < 0 or self.positions.max() >= T):
            raise ValueError(f"ExampleSet: positions must lie in 0..{T - 1}")

    def __len__(self) -> int:
        return len(self.positions)


@dataclass(frozen=True)
class Predicate:
    """``feature ∈ values`` over :func:`token_features` (``values`` are feature codes)."""

    feature: str
    values: tuple[int, ...]

    def __call__(self, feats: dict[str, np.ndarray]) -> np.ndarray:
        """Bool array: does the predicate hold at each item."""
        return np.isin(feats[self.feature], np.asarray(self.values, dtype=np.int64))


@dataclass
class Explanation:
    """A short account of when a weight matters.

    Attributes:
        text: one sentence ("matters when …").
        explainer: the explainer's name (model identity for LLMs).
        predicate: the symbolic predicate, when the explainer produced one (else ``None``).
    """

    text: str
    explainer: str
    predicate: Predicate | None = None


class ExplanationFailed(RuntimeError):
    """No usable explanation: ``kind`` is ``empty``, ``refusal``, ``malformed`` or ``backend_error``."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"explanation failed ({kind}): {detail[:200]}")
        self.kind = kind


@dataclass
class ReplyFailures:
    """Counts of unusable model replies by kind (kept out of every score)."""

    counts: dict[str, int] = field(default_factory=lambda: {"empty": 0, "refusal": 0, "malformed": 0,
                                                            "backend_error": 0})

    def add(self, kind: str) -> None:
        """Count one failure of ``kind``."""
        self.counts[kind] = self.counts.get(kind, 0) + 1

    @property
    def total(self) -> int:
        """All failures."""
        return sum(self.counts.values())


class Explainer(Protocol):
    """``explain(examples, vocab) -> Explanation``; raises :class:`ExplanationFailed`."""

    name: str

    def explain(self, examples: ExampleSet, vocab: CharVocabulary) -> Explanation: ...


class Scorer(Protocol):
    """``predict(explanation, items, vocab) -> int8 [n]`` with 1 (matters), 0 (does not), -1 (no answer)."""

    name: str

    def predict(self, explanation: Explanation, items: ExampleSet, vocab: CharVocabulary) -> np.ndarray: ...


# --------------------------------------------------------------------------- features

def token_features(windows: np.ndarray, positions: np.ndarray, vocab_size: int) -> dict[str, np.ndarray]:
    """Integer feature codes of each item (``PAD = vocab_size`` before the window's start).

    Returns ``name -> int64 [n]`` for the names in :data:`FEATURES`; bigram codes are
    ``a·(V+1) + b``.
    """
    V1 = vocab_size + 1
    n = len(positions)
    rows = np.arange(n)
    pad = np.full((n, 3), vocab_size, dtype=np.int64)
    w = np.concatenate([pad, np.asarray(windows, dtype=np.int64)], axis=1)   # shift by 3: w[:, t+3] = window[t]
    p = np.asarray(positions, dtype=np.int64) + 3
    cur, prev, b2, b3, nxt = (w[rows, p + d] for d in (0, -1, -2, -3, 1))
    return {"current": cur, "previous": prev, "back2": b2, "back3": b3, "next": nxt,
            "bigram": prev * V1 + cur, "next_bigram": cur * V1 + nxt, "position": p - 3}


def _describe_value(feature: str, code: int, vocab: CharVocabulary) -> str:
    V1 = vocab.size + 1

    def tok(c: int) -> str:
        return "<start>" if c == vocab.size else repr(vocab.show(c))[1:-1]

    if feature in ("bigram", "next_bigram"):
        return f"'{tok(code // V1)}{tok(code % V1)}'"
    if feature == "position":
        return str(code)
    return f"'{tok(code)}'"


def describe(predicate: Predicate, vocab: CharVocabulary) -> str:
    """The predicate as an English sentence ("matters when the current token is one of ':', ')'")."""
    vals = ", ".join(_describe_value(predicate.feature, v, vocab) for v in predicate.values)
    one = len(predicate.values) == 1
    return f"matters when {FEATURES[predicate.feature]} {'' if one else 'one of '}{vals}"


def balanced_accuracy(pred: np.ndarray, labels: np.ndarray) -> float:
    """``(TPR + TNR) / 2`` over items with a prediction (``pred >= 0``); NaN if a class is absent."""
    ok = pred >= 0
    p, y = pred[ok].astype(bool), labels[ok].astype(bool)
    if y.all() or not y.any():
        return float("nan")
    return 0.5 * (float(p[y].mean()) + float((~p[~y]).mean()))


@dataclass
class SymbolicExplainer:
    """Best single predicate ``feature ∈ S`` (|S| ≤ ``max_values``) by balanced accuracy on the
    explain set; values enter S in order of smoothed precision, the best prefix is kept.

    Cost per weight: one ``bincount`` per feature (vectorised).

    Source: inferred (an offline stand-in for the LLM explainer; see module docstring).
    """

    max_values: int = 6
    features: tuple[str, ...] = tuple(FEATURES)
    name: str = "symbolic"

    def explain(self, examples: ExampleSet, vocab: CharVocabulary) -> Explanation:
        """Search the predicates; raises :class:`ExplanationFailed` (``malformed``) without both classes."""
        y = examples.labels.astype(bool)
        n_p, n_n = int(y.sum()), int((~y).sum())
        if n_p == 0 or n_n == 0:
            raise ExplanationFailed("malformed", f"need positives and negatives, got {n_p} and {n_n}")
        feats = token_features(examples.windows, examples.positions, vocab.size)
        best = (-1.0, 0, None)
        for rank, f in enumerate(self.features):
            vals, inv = np.unique(feats[f], return_inverse=True)     # codes can be huge (bigrams of a BPE vocab)
            cp = np.bincount(inv[y], minlength=len(vals))
            cn = np.bincount(inv[~y], minlength=len(vals))
            cand = np.flatnonzero(cp)
            prec = (cp[cand] + 0.5) / (cp[cand] + cn[cand] + 1.0)
            order = cand[np.lexsort((cand, -cp[cand], -prec))][: self.max_values]
            ba = 0.5 * (np.cumsum(cp[order]) / n_p + 1.0 - np.cumsum(cn[order]) / n_n)   # BA of each prefix
            k = int(np.argmax(ba))
            key = (float(ba[k]), -(k + 1) - rank * 1e-3)
            if key > (best[0], best[1]):
                best = (key[0], key[1], Predicate(f, tuple(int(c) for c in vals[order[: k + 1]])))
        pred = best[2]
        return Explanation(describe(pred, vocab), self.name, pred)


@dataclass
class SymbolicScorer:
    """Evaluates an explanation's predicate on the items (needs ``explanation.predicate``)."""

    name: str = "symbolic"

    def predict(self, explanation: Explanation, items: ExampleSet, vocab: CharVocabulary) -> np.ndarray:
        """1 where the predicate holds, else 0.

        Raises:
            ValueError: the explanation carries no predicate (an LLM's free text needs :class:`LLMScorer`).
        """
        if explanation.predicate is None:
            raise ValueError("SymbolicScorer needs an explanation with a predicate; score free text with LLMScorer")
        feats = token_features(items.windows, items.positions, vocab.size)
        return explanation.predicate(feats).astype(np.int8)


# --------------------------------------------------------------------------- LLM

_REFUSAL = re.compile(r"\b(I can(?:no|')t|I'm sorry|I am sorry|I am unable|I'm unable|as an AI)\b", re.IGNORECASE)
_MATTERS = re.compile(r"MATTERS WHEN\s*:\s*(.+)", re.IGNORECASE)


def render_item(window: np.ndarray, t: int, vocab, left: int = 24) -> str:
    """One item as text: up to ``left`` tokens of context, the token at ``t`` in ``[[ ]]`` and the
    next token (the prediction target) after ``→``. Newlines and tabs show as ``\\n`` and ``\\t``."""
    show = lambda ids: vocab.decode(ids).replace("\n", "\\n").replace("\t", "\\t")
    return f"{show(window[max(0, t - left):t])}[[{show(window[t:t + 1])}]]  → next: {show(window[t + 1:t + 2])!r}"


def parse_explanation(text: str) -> str:
    """The sentence after ``MATTERS WHEN:``.

    Markdown bold (``**MATTERS WHEN:**``) and quotes around the sentence are removed.

    Raises:
        ExplanationFailed: ``empty`` (blank reply), ``refusal`` (a refusal phrase and no
            explanation, or a refusal phrase as the explanation), ``malformed`` (no
            ``MATTERS WHEN:`` line or nothing after it).
    """
    if not text or not text.strip():
        raise ExplanationFailed("empty")
    m = _MATTERS.search(text.replace("**", ""))     # markdown bold around the label (underscores are code)
    body = (m.group(1).strip().splitlines() or [""])[0].strip(" *") if m is not None else ""
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'":   # a quoted sentence
        body = body[1:-1].strip()
    if not body:
        raise ExplanationFailed("refusal" if _REFUSAL.search(text) else "malformed", text)
    if _REFUSAL.search(body):                     # "MATTERS WHEN: I'm sorry, I cannot tell" is no account
        raise ExplanationFailed("refusal", text)
    return "matters when " + body


def parse_yes_no(text: str) -> int:
    """1 for a reply starting with yes, 0 for no, -1 otherwise (empty, refusal, anything else)."""
    words = re.findall(r"[a-z]+", (text or "").lower())
    if words and words[0] in ("yes", "no"):
        return int(words[0] == "yes")
    return -1


_EXPLAIN_SYSTEM = ("You interpret one weight of a {level} language model. You see "
                   "token positions where the weight strongly affects the loss (MATTERS) and positions where it "
                   "does not (DOES NOT MATTER). The token at the position is in [[ ]]; the {unit} the model "
                   "predicts there follows the arrow. Reply with exactly one line: 'MATTERS WHEN: <short "
                   "description of when the weight matters>'.")
_SCORE_SYSTEM = ("You predict where one weight of a {level} language model matters, from a description. "
                 "The token at the position is in [[ ]]; the {unit} predicted there follows the arrow. Answer "
                 "with one word: yes or no.")


def _system(template: str, vocab) -> str:
    """The system prompt for ``vocab``: character tokens (our corpus) or a tokenizer's tokens."""
    char = isinstance(vocab, CharVocabulary)
    return template.format(level="character-level" if char else "token-level",
                           unit="character" if char else "token")


@dataclass
class LLMExplainer:
    """Explanation by a chat model: ``n_show`` positives and negatives in one prompt; up to
    ``retries`` extra calls after an unusable reply (each failure counted in ``failures``).

    Raises:
        ValueError: ``n_show < 1``, ``retries < 0`` or ``max_tokens < 1`` (names it)."""

    backend: object
    n_show: int = 20
    retries: int = 1
    max_tokens: int = 120
    failures: ReplyFailures = field(default_factory=ReplyFailures)

    def __post_init__(self) -> None:
        for name, low in (("n_show", 1), ("retries", 0), ("max_tokens", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"LLMExplainer.{name}={v!r}; must be an integer >= {low}")

    @property
    def name(self) -> str:
        """``llm:<backend name>``."""
        return f"llm:{getattr(self.backend, 'name', 'backend')}"

    def prompt(self, examples: ExampleSet, vocab: CharVocabulary) -> str:
        """The user message (positives first, strongest first; then negatives)."""
        y = examples.labels.astype(bool)
        pos = np.flatnonzero(y)[np.argsort(-examples.importance[y], kind="stable")][: self.n_show]
        neg = np.flatnonzero(~y)[: self.n_show]
        lines = ["MATTERS:"] + [render_item(examples.windows[i], int(examples.positions[i]), vocab) for i in pos]
        lines += ["", "DOES NOT MATTER:"] + [render_item(examples.windows[i], int(examples.positions[i]), vocab)
                                             for i in neg]
        return "\n".join(lines)

    def explain(self, examples: ExampleSet, vocab: CharVocabulary) -> Explanation:
        """Ask the model; raises :class:`ExplanationFailed` with the last failure kind."""
        from neurips26.backends import BackendError, ChatParams, Message

        msgs = [Message("system", _system(_EXPLAIN_SYSTEM, vocab)), Message("user", self.prompt(examples, vocab))]
        last = ExplanationFailed("malformed")
        for _ in range(1 + self.retries):
            try:
                reply = self.backend.chat(msgs, ChatParams(temperature=0.0, max_tokens=self.max_tokens))
                return Explanation(parse_explanation(reply.text), self.name)
            except ExplanationFailed as e:
                last = e
            except BackendError as e:
                last = ExplanationFailed("backend_error", str(e))
            self.failures.add(last.kind)
        raise last


@dataclass
class LLMScorer:
    """Detection scorer: one chat call per item (no batching, so items cannot leak into each
    other); an unusable reply gives -1 and is counted in ``failures``.

    Raises:
        ValueError: ``max_tokens < 1``."""

    backend: object
    max_tokens: int = 4
    failures: ReplyFailures = field(default_factory=ReplyFailures)

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"LLMScorer.max_tokens={self.max_tokens!r}; must be an integer >= 1")

    @property
    def name(self) -> str:
        """``llm:<backend name>``."""
        return f"llm:{getattr(self.backend, 'name', 'backend')}"

    def predict(self, explanation: Explanation, items: ExampleSet, vocab: CharVocabulary) -> np.ndarray:
        """One yes/no call per item."""
        from neurips26.backends import BackendError, ChatParams, Message

        out = np.full(len(items), -1, dtype=np.int8)
        for k in range(len(items)):
            user = (f"Description: the weight {explanation.text}\n"
                    f"Position: {render_item(items.windows[k], int(items.positions[k]), vocab)}\n"
                    "Does the weight matter at this position?")
            try:
                text = self.backend.chat([Message("system", _system(_SCORE_SYSTEM, vocab)), Message("user", user)],
                                         ChatParams(temperature=0.0, max_tokens=self.max_tokens)).text
            except BackendError:
                self.failures.add("backend_error")
                continue
            out[k] = parse_yes_no(text)
            if out[k] < 0:
                self.failures.add("empty" if not text.strip() else
                                  "refusal" if _REFUSAL.search(text) else "malformed")
        return out
