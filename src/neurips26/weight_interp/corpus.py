"""Corpus: Python standard-library source text read from the local installation, a character
vocabulary, fixed-length windows and disjoint splits (train / validation / explain / score).

Gao et al. (2025) trained on Python code; the standard library is the offline stand-in (the
local installation is read, nothing is downloaded). Characters are the tokens, so every token a
predicate or an explanation talks about is a readable character.

Source: inferred: a character-level offline substitute for the paper's Python corpus.
"""

from __future__ import annotations

import string
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CharVocabulary", "TokenizerVocabulary", "stdlib_source_text", "Corpus", "make_corpus", "CorpusTooSmallError"]

#: printable ASCII plus tab/newline; anything else maps to the unknown token ``¤``.
_ALPHABET = "\n\t" + "".join(ch for ch in string.printable if ch not in "\n\t\r\x0b\x0c")
UNKNOWN = "¤"


class CorpusTooSmallError(ValueError):
    """The corpus has too few windows for the requested disjoint splits."""


@dataclass(frozen=True)
class CharVocabulary:
    """Character vocabulary: ids ``0..V-1`` for printable ASCII, tab, newline and ``¤`` (unknown).

    Source: inferred (character tokens keep every explained token human-readable).
    """

    symbols: tuple[str, ...] = tuple(_ALPHABET) + (UNKNOWN,)

    @property
    def size(self) -> int:
        """Number of token ids V."""
        return len(self.symbols)

    def encode(self, text: str) -> np.ndarray:
        """Token ids (int64, shape ``[len(text)]``); characters outside the alphabet map to ``¤``."""
        lut = np.full(256, self.size - 1, dtype=np.int64)
        for i, ch in enumerate(self.symbols[:-1]):
            lut[ord(ch)] = i
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        out = np.full(codes.shape, self.size - 1, dtype=np.int64)
        small = codes < 256
        out[small] = lut[codes[small]]
        return out

    def decode(self, ids) -> str:
        """Text of a sequence of ids.

        Raises:
            ValueError: an id outside ``0..V-1``.
        """
        ids = np.asarray(ids).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.size):
            bad = ids[(ids < 0) | (ids >= self.size)][0]
            raise ValueError(f"token id {int(bad)} out of range; allowed 0..{self.size - 1}")
        return "".join(self.symbols[int(i)] for i in ids)

    def show(self, token_id: int) -> str:
        """A readable name of one token (``'\\n'`` for newline, ``'␠'`` for space)."""
        s = self.symbols[int(token_id)]
        return {"\n": "\\n", "\t": "\\t", " ": "␠"}.get(s, s)


def stdlib_source_text(max_chars: int, root: str | Path | None = None) -> tuple[str, dict]:
    """Concatenated ``*.py`` files of the Python standard library, in sorted path order.

    Args:
        max_chars: stop after this many characters (> 0).
        root: library folder (default: this interpreter's ``stdlib`` path). ``site-packages`` and
            ``test`` folders are skipped (third-party code; test data with odd encodings).

    Returns:
        ``(text, info)``; ``info`` names the root, the Python version and the files read.

    Raises:
        ValueError: ``max_chars <= 0`` or no readable ``.py`` file under ``root``.
    """
    if max_chars <= 0:
        raise ValueError(f"max_chars={max_chars}; must be > 0")
    root = Path(root or sysconfig.get_paths()["stdlib"])
    parts, n, files = [], 0, 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).parts
        if any(p in ("site-packages", "test", "tests", "idlelib") for p in rel):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parts.append(text)
        n += len(text)
        files += 1
        if n >= max_chars:
            break
    if not parts:
        raise ValueError(f"no readable .py file under {root}")
    info = {"root": str(root), "python": sys.version.split()[0], "files": files}
    return "".join(parts)[:max_chars], info


@dataclass
class Corpus:
    """Token windows and their disjoint splits.

    Attributes:
        windows: int64 ``[n_windows, ctx + 1]`` (inputs are ``[:, :-1]``, targets ``[:, 1:]``).
        splits: ``name -> int64 array of window ids``; the ids of different splits are disjoint.
        vocab: the :class:`CharVocabulary` or a :class:`TokenizerVocabulary`.
        info: provenance (root, Python version, files, characters).
    """

    windows: np.ndarray
    splits: dict[str, np.ndarray]
    vocab: CharVocabulary
    info: dict

    def split(self, name: str) -> np.ndarray:
        """Windows ``[n, ctx + 1]`` of one split.

        Raises:
            KeyError: an unknown split name (the message lists the names).
        """
        if name not in self.splits:
            raise KeyError(f"split {name!r}; allowed: {sorted(self.splits)}")
        return self.windows[self.splits[name]]


def make_corpus(text: str, ctx: int, sizes: dict[str, int], seed: int, vocab=None,
                info: dict | None = None) -> Corpus:
    """Cut ``text`` into non-overlapping windows of ``ctx + 1`` tokens, drop repeated windows, and
    deal them into splits (disjoint in window ids and in content).

    Args:
        text: the corpus text.
        ctx: context length (>= 2).
        sizes: windows per split, e.g. ``{"train": 2000, "val": 100, "explain": 200, "score": 200}``;
            ``-1`` for one split takes all remaining windows.
        seed: permutation seed.
        vocab: :class:`CharVocabulary` (default) or :class:`TokenizerVocabulary`.

    Raises:
        ValueError: ``ctx < 2`` or a negative size other than -1.
        CorpusTooSmallError: fewer windows than the splits ask for (names both numbers).
    """
    if ctx < 2:
        raise ValueError(f"ctx={ctx}; must be >= 2")
    if any(v < -1 or v == 0 for v in sizes.values()) or list(sizes.values()).count(-1) > 1:
        raise ValueError(f"sizes={sizes}; each must be >= 1, or -1 for at most one split (the rest)")
    vocab = vocab or CharVocabulary()
    ids = vocab.encode(text)
    n = len(ids) // (ctx + 1)
    need = sum(v for v in sizes.values() if v > 0) + (1 if -1 in sizes.values() else 0)
    if n < need:
        raise CorpusTooSmallError(f"corpus of {len(ids)} tokens gives {n} windows of {ctx + 1}; the splits "
                                  f"{sizes} need {need}: give more text or smaller splits")
    windows = ids[: n * (ctx + 1)].reshape(n, ctx + 1)
    _, first = np.unique(windows, axis=0, return_index=True)      # drop repeated windows (licence headers…)
    windows = windows[np.sort(first)]                             # so that splits are disjoint in content too
    n = len(windows)
    if n < need:
        raise CorpusTooSmallError(f"corpus gives {n} distinct windows of {ctx + 1} tokens; the splits {sizes} "
                                  f"need {need}: give more text or smaller splits")
    perm = np.random.default_rng(seed).permutation(n)
    splits, at = {}, 0
    for name, size in sizes.items():
        if size == -1:
            continue
        splits[name] = np.sort(perm[at: at + size])
        at += size
    for name, size in sizes.items():
        if size == -1:
            splits[name] = np.sort(perm[at:])
    return Corpus(windows, splits, vocab, {**(info or {}), "characters": len(text), "windows": n})


class TokenizerVocabulary:
    """A Hugging Face tokenizer (``transformers`` or ``tokenizers``) behind the vocabulary
    interface (``size``, ``encode``, ``decode``, ``show``), for a user's model with its own tokens.

    Args:
        tokenizer: an object with ``encode(text)`` and ``decode(ids)``; ``len(tokenizer)`` or
            ``get_vocab_size()`` gives the vocabulary size.

    Source: inferred (lets :func:`make_corpus` and the explainers work on BPE models such as Pythia).
    """

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.size = int(tokenizer.get_vocab_size() if hasattr(tokenizer, "get_vocab_size") else len(tokenizer))

    def encode(self, text: str) -> np.ndarray:
        """Token ids (int64), no special tokens added."""
        try:
            ids = self.tokenizer.encode(text, add_special_tokens=False)
        except TypeError:
            ids = self.tokenizer.encode(text)
        return np.asarray(getattr(ids, "ids", ids), dtype=np.int64)

    def decode(self, ids) -> str:
        """Text of a sequence of ids."""
        return self.tokenizer.decode([int(i) for i in np.asarray(ids).reshape(-1)])

    def show(self, token_id: int) -> str:
        """A readable name of one token (spaces as ``␠``, newlines as ``\\n``)."""
        return self.decode([token_id]).replace(" ", "␠").replace("\n", "\\n").replace("\t", "\\t")
