"""Word-boundary corruption: whitespace inserted *inside* words, seeded, logged and reversible.

Source: the abstract ("inserting whitespace characters within words to break them into
fragments"; "regularizing the perturbation substantially reduces the U-shape"). The exact rule
was not readable; ours (inferred, documented here):

* A *word* is a whitespace-delimited chunk whose core — the chunk without leading/trailing
  punctuation — is purely alphabetic (``str.isalpha``) and at least 2 characters long. Digits,
  punctuation, hyphenated or apostrophe words (``don't``, ``e-mail``), URLs and code are left
  alone, as are single letters. The core's internal boundaries (between characters ``i-1`` and
  ``i``) are the insertion sites; a word of length L has L - 1 of them.
* **Random** (default): each site gets a space independently with probability p, from one
  uniform draw per site (``u < p``). Draws are coupled across rates — the same seed gives the
  same u's — so the insertions at p are a subset of those at any p' > p (common random numbers:
  a sweep over p compares like with like).
* **Regularised** (``every_k``): a space every k characters inside each word; its realised rate
  is about 1/k. (``per_type``): random positions drawn once per word *type* (seeded by the word)
  and reused at every occurrence, at rate p.
* p = 1 gives ``w o r d``. The log records the offsets, in the perturbed text, of every
  inserted character, so :func:`defragment` restores the input byte for byte.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass

import numpy as np

#: punctuation stripped from a chunk's ends before deciding whether its core is a word
_EDGE_PUNCT = string.punctuation + "“”‘’«»„‚…—–"
_CHUNK = re.compile(r"\S+")
MODES = ("random", "every_k", "per_type")


@dataclass(frozen=True)
class Fragmented:
    """A perturbed text and the log that undoes it.

    Attributes:
        text: the perturbed text.
        offsets: sorted offsets (in ``text``) of the inserted characters, int64 array.
        n_sites: number of insertion sites in the input (internal boundaries of words).
        p: the requested rate (``nan`` for ``every_k``).
        mode: ``random``, ``every_k`` or ``per_type``.
        insert: the inserted character.
    """

    text: str
    offsets: np.ndarray
    n_sites: int
    p: float
    mode: str
    insert: str = " "

    @property
    def n_inserted(self) -> int:
        """Number of characters inserted."""
        return int(self.offsets.size)

    @property
    def realised_rate(self) -> float:
        """Inserted / sites (``nan`` when the text has no site)."""
        return self.n_inserted / self.n_sites if self.n_sites else float("nan")


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every fragmentable word core in ``text``, in order.

    A core is a whitespace-delimited chunk without its edge punctuation, purely alphabetic and
    at least 2 characters long (see the module docstring).

    Raises:
        TypeError: if ``text`` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    spans = []
    for m in _CHUNK.finditer(text):
        a, b = m.span()
        while a < b and text[a] in _EDGE_PUNCT:
            a += 1
        while b > a and text[b - 1] in _EDGE_PUNCT:
            b -= 1
        if b - a >= 2 and text[a:b].isalpha():
            spans.append((a, b))
    return spans


def _check_rate(p: float) -> float:
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise ValueError(f"insertion rate p={p!r}; allowed: a number in [0, 1]") from None
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"insertion rate p={p}; allowed: 0 <= p <= 1")
    return p


def _type_seed(word: str, seed: int) -> int:
    return int.from_bytes(hashlib.blake2b(f"{seed}\x00{word}".encode(), digest_size=8).digest(), "little")


def _apply(text: str, cuts: np.ndarray, insert: str) -> tuple[str, np.ndarray]:
    """Insert ``insert`` before each input offset in sorted ``cuts``; offsets in the output."""
    if cuts.size == 0:
        return text, np.zeros(0, dtype=np.int64)
    pieces, prev = [], 0
    for c in cuts.tolist():
        pieces.append(text[prev:c])
        prev = c
    pieces.append(text[prev:])
    out_offsets = cuts.astype(np.int64) + np.arange(cuts.size, dtype=np.int64)  # shifted by earlier inserts
    return insert.join(pieces), out_offsets


def site_offsets(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Every insertion site of ``text``: (offset in text, index of its word), int64 arrays."""
    spans = word_spans(text)
    if not spans:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    lengths = np.array([b - a for a, b in spans], dtype=np.int64)
    n_sites = lengths - 1
    word_idx = np.repeat(np.arange(len(spans)), n_sites)
    within = np.arange(n_sites.sum()) - np.repeat(np.cumsum(n_sites) - n_sites, n_sites) + 1
    return np.repeat(starts, n_sites) + within, word_idx


def fragment(text: str, p: float, seed: int = 0, *, mode: str = "random", k: int | None = None,
             insert: str = " ") -> Fragmented:
    """Insert ``insert`` inside words of ``text``.

    Args:
        text: any text (str).
        p: rate in [0, 1] for ``random`` and ``per_type``; ignored for ``every_k``.
        seed: seed of the site draws (``random``) or of the per-type positions (``per_type``).
        mode: ``random`` | ``every_k`` | ``per_type`` (module docstring).
        k: split period for ``every_k`` (>= 1; 1 = every boundary).
        insert: the inserted character; must be whitespace (default a space).

    Returns:
        :class:`Fragmented` with the perturbed text and its log.

    Raises:
        ValueError: p outside [0, 1]; unknown mode; missing or bad k; non-whitespace ``insert``.
        TypeError: non-str text.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}; allowed: {', '.join(MODES)}")
    if not (isinstance(insert, str) and len(insert) == 1 and insert.isspace()):
        raise ValueError(f"insert={insert!r}; allowed: one whitespace character such as ' '")
    sites, word_idx = site_offsets(text)
    if mode == "every_k":
        if k is None or isinstance(k, bool) or int(k) != k or k < 1:
            raise ValueError(f"every_k needs k >= 1 (an integer), got k={k!r}")
        spans = word_spans(text)
        starts = np.array([a for a, _ in spans], dtype=np.int64)[word_idx] if spans else sites
        pos = sites - starts  # 1..L-1 within the word
        cuts = sites[pos % int(k) == 0]
        p_req = float("nan")
    elif mode == "random":
        p_req = _check_rate(p)
        u = np.random.default_rng(seed).random(sites.size)
        cuts = sites[u < p_req]
    else:  # per_type: the same positions at every occurrence of a word type
        p_req = _check_rate(p)
        spans = word_spans(text)
        keep = np.zeros(sites.size, dtype=bool)
        first = 0
        for (a, b) in spans:
            n = b - a - 1
            u = np.random.default_rng(_type_seed(text[a:b], seed)).random(n)
            keep[first:first + n] = u < p_req
            first += n
        cuts = sites[keep]
    out, offsets = _apply(text, cuts, insert)
    return Fragmented(out, offsets, int(sites.size), p_req, mode, insert)


def defragment(fragmented: Fragmented) -> str:
    """Undo :func:`fragment` exactly, using its log.

    Raises:
        ValueError: if a logged offset does not hold the inserted character (the text was
            edited after fragmenting).
    """
    text, offs = fragmented.text, fragmented.offsets
    if offs.size == 0:
        return text
    chars = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    if offs.max() >= chars.size or np.any(chars[offs] != ord(fragmented.insert)):
        raise ValueError("log does not match the text: an offset does not hold the inserted "
                         f"character {fragmented.insert!r} (was the text edited after fragmenting?)")
    keep = np.ones(chars.size, dtype=bool)
    keep[offs] = False
    return chars[keep].tobytes().decode("utf-32-le")


def every_k_rate(text: str, k: int) -> float:
    """Realised rate of ``every_k`` splitting at period ``k`` on ``text`` (sites cut / sites)."""
    return fragment(text, 0.0, mode="every_k", k=k).realised_rate


def matched_k(text: str, p: float, k_max: int = 32) -> int:
    """The period k whose ``every_k`` rate on ``text`` is closest to ``p`` (regularised arm at a
    matched rate). ``p = 0`` gives ``k_max`` (almost no splits).

    Raises:
        ValueError: p outside [0, 1], or a text without insertion sites.
    """
    p = _check_rate(p)
    if site_offsets(text)[0].size == 0:
        raise ValueError("text has no word with an internal boundary to split (no word of >= 2 letters)")
    rates = np.array([every_k_rate(text, k) for k in range(1, k_max + 1)])
    return int(np.argmin(np.abs(rates - p))) + 1
