"""Detection tasks whose documents are fragmented: omission (AbsenceBench-style), needles
(NIAH-style), templated math.

Sources: the abstract names AbsenceBench, a NIAH-style task and math reasoning; the prompts and
scoring rules follow the public AbsenceBench benchmark (Fu et al., 2025, arXiv:2506.11440: a
recitation missing lines with probability 0.1, "list only the missing lines"; the needle variant
inserts "<name> is a character in the <series> novel series" after sampled lines and asks for
the extra lines). Inferred: which parts are fragmented — the document lines (original and
recitation alike, with the *same* draws for the same line so unchanged lines stay identical);
the question is left clean unless ``fragment_question=True``.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .corpus import poem_lines
from .perturbation import fragment

OMISSION_SYSTEM = ("You are helping a student practice memorizing poems. The user will provide a poem "
                   "and their recitation, which may be missing some lines. Your task is to identify "
                   "exactly which lines are missing from the recitation. List only the missing lines, "
                   "nothing else.")
NEEDLE_SYSTEM = ("You are helping a student practice memorizing poems. The user will provide a poem "
                 "and their recitation, which may contain some extra lines that are not in the poem. "
                 "Your task is to identify exactly which lines were added. List only the added lines, "
                 "nothing else.")
MATH_SYSTEM = "Solve the problem. Answer with the final number only."

_SYLLABLES = ("bra", "lin", "dor", "mae", "quil", "tes", "var", "nor", "ith", "pel", "zan", "cor",
              "ul", "fen", "ros", "ka", "mir", "tho", "gal", "wen")
_NEEDLE_TEMPLATES = ("{name} is a character in the {series} novel series",
                     "{name} keeps a lantern in the {series} archives",
                     "{name} once sailed from {series} with a cargo of salt")


def _line_seed(seed: int, line: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}\x01{line}".encode(), digest_size=8).digest(), "little")


@functools.lru_cache(maxsize=1 << 16)
def fragment_line(line: str, p: float, seed: int, mode: str = "random") -> str:
    """Fragment one line with draws seeded by (seed, line): the same line always reads the same.

    Memoised: sweeps show the same line in many documents at the same (p, seed)."""
    if mode == "every_k":
        raise ValueError("use mode='per_type' (matched rate) for the regularised arm of a task")
    return fragment(line, p, _line_seed(seed, line), mode=mode).text


@dataclass(frozen=True)
class DetectionItem:
    """One detection document, clean (fragmentation is applied by :func:`render`).

    Attributes:
        task: ``omission``, ``needle`` or ``sequence``.
        doc_id: stable id.
        original: the complete original lines.
        recitation: the lines shown as the recitation (missing some, or with needles added).
        targets: the lines to be found (omitted lines, or the needles), clean.
        candidates: the lines a response is scored over (original lines for omission; the
            recitation for needles).
    """

    task: str
    doc_id: str
    original: tuple[str, ...]
    recitation: tuple[str, ...]
    targets: tuple[str, ...]
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class Rendered:
    """A detection item at one insertion rate: the chat messages and what scoring needs.

    ``shown`` maps each candidate line (clean) to its fragmented form as shown to the model.
    """

    item: DetectionItem
    p: float
    messages: list[dict]
    shown: dict[str, str] = field(default_factory=dict)


def _fictional_name(rng: np.random.Generator) -> str:
    parts = rng.choice(len(_SYLLABLES), size=(2, 2))
    return " ".join("".join(_SYLLABLES[i] for i in row).capitalize() for row in parts)


def needle_line(rng: np.random.Generator) -> str:
    """One fictional needle line (names built from syllables: no real character)."""
    template = _NEEDLE_TEMPLATES[int(rng.integers(len(_NEEDLE_TEMPLATES)))]
    series = "".join(_SYLLABLES[i] for i in rng.choice(len(_SYLLABLES), 3)).capitalize()
    return template.format(name=_fictional_name(rng), series=series)


def _check_count(name: str, n: int, hi: int) -> int:
    if isinstance(n, bool) or int(n) != n or not 1 <= n <= hi:
        raise ValueError(f"{name}={n!r}; allowed: an integer in 1..{hi}")
    return int(n)


def omission_items(n: int, seed: int = 0, *, omit_p: float = 0.1, lines: Sequence[Sequence[str]] | None = None,
                   doc_lines: int = 20) -> list[DetectionItem]:
    """AbsenceBench-style documents: ``doc_lines`` lines drawn from a poem (in order), each
    omitted from the recitation with probability ``omit_p`` (at least one kept, at least one
    omitted so every document has something to find).

    Raises:
        ValueError: n outside 1..10000, omit_p outside (0, 1), or a corpus with no lines.
    """
    n = _check_count("n", n, 10_000)
    if not 0.0 < omit_p < 1.0:
        raise ValueError(f"omit_p={omit_p}; allowed: 0 < omit_p < 1")
    corpus = [list(x) for x in (lines if lines is not None else poem_lines()) if len(x) >= 2]
    if not corpus:
        raise ValueError("the corpus has no poem with at least 2 lines")
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        poem = corpus[int(rng.integers(len(corpus)))]
        m = min(doc_lines, len(poem))
        start = int(rng.integers(0, len(poem) - m + 1))
        original = poem[start:start + m]
        omit = rng.random(m) < omit_p
        if omit.all():
            omit[int(rng.integers(m))] = False
        if not omit.any():
            omit[int(rng.integers(m))] = True
        rec = [ln for ln, o in zip(original, omit) if not o]
        targets = [ln for ln, o in zip(original, omit) if o]
        items.append(DetectionItem("omission", f"omission-{seed}-{i}", tuple(original), tuple(rec),
                                   tuple(targets), tuple(original)))
    return items


def needle_items(n: int, seed: int = 0, *, n_needles: int = 2, lines: Sequence[Sequence[str]] | None = None,
                 doc_lines: int = 16) -> list[DetectionItem]:
    """NIAH-style documents: a list of ``doc_lines`` poem lines drawn across the corpus, with
    ``n_needles`` fictional needle lines inserted at random positions of the recitation.

    Raises:
        ValueError: n outside 1..10000, n_needles outside 1..doc_lines, or an empty corpus.
    """
    n = _check_count("n", n, 10_000)
    n_needles = _check_count("n_needles", n_needles, max(doc_lines, 1))
    pool = [ln for poem in (lines if lines is not None else poem_lines()) for ln in poem]
    if not pool:
        raise ValueError("the corpus has no lines")
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        idx = rng.choice(len(pool), size=min(doc_lines, len(pool)), replace=False)
        original = [pool[j] for j in idx]
        needles = [needle_line(rng) for _ in range(n_needles)]
        rec = list(original)
        for nd in needles:
            rec.insert(int(rng.integers(len(rec) + 1)), nd)
        items.append(DetectionItem("needle", f"needle-{seed}-{i}", tuple(original), tuple(rec),
                                   tuple(needles), tuple(rec)))
    return items


def sequence_items(n: int, seed: int = 0, *, length: int = 60, omit_p: float = 0.1) -> list[DetectionItem]:
    """Arithmetic sequences with omitted numbers (AbsenceBench's numerical task). Digits are not
    words, so fragmentation leaves them unchanged: a control whose curve should be flat in p."""
    n = _check_count("n", n, 10_000)
    length = _check_count("length", length, 5_000)
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        step = int(rng.choice([1, 2, 4, 7, 13]))
        start = int(rng.integers(0, 10_000))
        seq = [str(start + step * j) for j in range(length)]
        omit = rng.random(length) < omit_p
        omit[0] = False
        if not omit.any():
            omit[int(rng.integers(1, length))] = True
        rec = [s for s, o in zip(seq, omit) if not o]
        items.append(DetectionItem("sequence", f"sequence-{seed}-{i}", tuple(seq), tuple(rec),
                                   tuple(s for s, o in zip(seq, omit) if o), tuple(seq)))
    return items


def render(item: DetectionItem, p: float, seed: int = 0, *, mode: str = "random",
           fragment_question: bool = False, icl_examples: Sequence["Rendered"] = (),
           icl_answers: Sequence[str] = ()) -> Rendered:
    """Chat messages for ``item`` with its document fragmented at rate ``p``.

    Args:
        mode: ``random`` or ``per_type`` (the regularised arm at a matched rate).
        fragment_question: also fragment the instructions (inferred option; default off).
        icl_examples / icl_answers: solved examples shown first as user/assistant turns (the
            in-context-learning arm), already rendered at the same rate.

    Raises:
        ValueError: p outside [0, 1]; a mismatch between examples and answers.
    """
    if len(icl_examples) != len(icl_answers):
        raise ValueError(f"{len(icl_examples)} ICL examples but {len(icl_answers)} answers")
    frag = lambda ln: fragment_line(ln, p, seed, mode)  # noqa: E731
    shown = {ln: frag(ln) for ln in set(item.original) | set(item.recitation)}
    q = (lambda t: fragment_line(t, p, seed, mode)) if fragment_question else (lambda t: t)
    if item.task == "needle":
        system = NEEDLE_SYSTEM
        ask = "What lines did I add? Please list only the added lines, nothing else."
        lead = "Now, here is my recitation which may contain some extra lines:"
    else:
        system = OMISSION_SYSTEM
        ask = "What lines did I miss? Please list only the missing lines, nothing else."
        lead = "Now, here is my recitation which may be missing some lines:"
    user = (f"{q('Here is the complete original poem:')}\n" + "\n".join(shown[ln] for ln in item.original)
            + f"\n{q(lead)}\n" + "\n".join(shown[ln] for ln in item.recitation) + f"\n{q(ask)}")
    messages = [{"role": "system", "content": system}]
    for ex, ans in zip(icl_examples, icl_answers):
        messages += [m for m in ex.messages if m["role"] == "user"] + [{"role": "assistant", "content": ans}]
    messages.append({"role": "user", "content": user})
    return Rendered(item, float(p), messages, shown)


@dataclass(frozen=True)
class MathItem:
    """A templated word problem and its integer answer."""

    question: str
    answer: int


def math_items(n: int, seed: int = 0) -> list[MathItem]:
    """Templated GSM-style two-step problems (inferred stand-in for the paper's math task)."""
    n = _check_count("n", n, 10_000)
    rng = np.random.default_rng(seed)
    names = ("Alice", "Marcus", "Priya", "Tomas", "Yuki", "Omar")
    things = ("apples", "marbles", "stamps", "pencils", "shells")
    out = []
    for _ in range(n):
        a, b, c = (int(x) for x in rng.integers(2, 50, 3))
        who, what = names[int(rng.integers(len(names)))], things[int(rng.integers(len(things)))]
        q = (f"{who} has {a} {what}. A friend gives {who} {b} more, and then {who} gives away {c}. "
             f"How many {what} does {who} have now?")
        out.append(MathItem(q, a + b - c))
    return out


def render_math(item: MathItem, p: float, seed: int = 0, mode: str = "random") -> list[dict]:
    """Chat messages for a math item with its question fragmented at rate p."""
    return [{"role": "system", "content": MATH_SYSTEM},
            {"role": "user", "content": fragment_line(item.question, p, seed, mode)}]
