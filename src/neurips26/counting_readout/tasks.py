"""Counting prompts: generators in several formats, tokenisation with the answer and entity
positions marked, and the digit tokens a model answers with.

A prompt lists items and asks how often one of them (the *target*) occurs::

    space   : "cat dog cat bird cat\\nHow many times does cat appear? Answer:"   → " 3"
    comma   : "cat, dog, cat, bird, cat\\nHow many times does cat appear? Answer:" → " 3"
    newline : "cat\\ndog\\ncat\\nbird\\ncat\\nHow many times does cat appear? Answer:" → " 3"

The *answer position* is the last prompt token (the model's next token is the count); the
*entity positions* are the tokens of the target's occurrences in the list. Only single-digit
counts 1–9 are in scope (the paper's setting, abstract); counts ≥ 10 raise.

Digits are looked up once per tokenizer (:func:`digit_tokens`) from the answer as written,
``"Answer: d"``. Either ``" d"`` is one token for every digit (GPT-2, Llama-3 style), or the
tokenizer splits the space off (cl100k/o200k, the Qwen2 pre-tokenizer, Llama-2's ``'▁'``): then
the same whitespace token(s) come first for every digit and the digit is read **after** them —
the prompt is extended by that lead (:attr:`DigitTokens.lead_ids`, appended by
:func:`encode_prompts`), never read at the ``":"`` where the model would write the space. Any
other split raises :class:`MultiTokenDigitError` unless ``first_token=True``, which scores the
first token and requires the first tokens of the nine digits to be distinct.

Source: prompt design after Garcia, "The Right Answer, the Wrong Direction" (arXiv 2605.03258:
target word among distractors, single-digit split) and the repeated-token / line-break
counting formats of arXiv 2605.09239 and counting_manifolds; inferred: the exact wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FORMATS = ("space", "comma", "newline")
_SEPARATORS = {"space": " ", "comma": ", ", "newline": "\n"}
QUESTION = "\nHow many times does {target} appear? Answer:"
ENTITY_WORDS = ("cat", "dog", "bird", "fish", "cow", "fox", "owl", "bee")
DIGITS = tuple(range(1, 10))
# General ("filler") text for the held-out loss; digits also occur here, as in natural text where
# most digits are not answers to counting questions.
_FILLER_SUBJECTS = ("the man", "a woman", "the child", "my friend", "the farmer", "a teacher")
_FILLER_VERBS = ("sees", "buys", "finds", "likes", "feeds", "draws")
_FILLER_PLACES = ("in the park", "at home", "near the river", "on the hill", "by the road")


class MultiTokenDigitError(ValueError):
    """A digit answer is more than one token for this tokenizer (and ``first_token`` is off)."""


@dataclass(frozen=True)
class CountingPrompt:
    """One counting question.

    Attributes:
        text: the prompt, ending just before the answer (``"... Answer:"``).
        count: the true count, an int in 1..9.
        target: the counted word.
        items: the listed words, in order.
        format: one of :data:`FORMATS`.
        entity_spans: ``(start, end)`` character spans in ``text`` of the target's occurrences.
    """

    text: str
    count: int
    target: str
    items: tuple[str, ...]
    format: str
    entity_spans: tuple[tuple[int, int], ...] = field(default=())


def make_prompt(items: list[str] | tuple[str, ...], target: str, fmt: str = "space") -> CountingPrompt:
    """Build the prompt asking how often ``target`` occurs in ``items``.

    Raises:
        ValueError: unknown ``fmt``; ``target`` absent or occurring ≥ 10 times (single-digit
            counts 1–9 only); an item containing the separator.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} unknown; allowed: {FORMATS}")
    sep = _SEPARATORS[fmt]
    count = sum(1 for it in items if it == target)
    if not 1 <= count <= 9:
        raise ValueError(f"target {target!r} occurs {count} times; allowed: 1..9 (single-digit counting; "
                         "counts >= 10 are out of scope)")
    if any(not it or sep.strip(" ") and sep.strip(" ") in it or " " in it or "\n" in it for it in items):
        raise ValueError(f"items must be single words without separators, got {list(items)!r}")
    spans, pos, parts = [], 0, []
    for i, it in enumerate(items):
        if i:
            parts.append(sep)
            pos += len(sep)
        if it == target:
            spans.append((pos, pos + len(it)))
        parts.append(it)
        pos += len(it)
    text = "".join(parts) + QUESTION.format(target=target)
    return CountingPrompt(text, count, target, tuple(items), fmt, tuple(spans))


def generate_counting_prompts(n: int, rng: np.random.Generator, *, formats: tuple[str, ...] = FORMATS,
                              words: tuple[str, ...] = ENTITY_WORDS, max_distractors: int = 6,
                              counts: tuple[int, ...] = DIGITS) -> list[CountingPrompt]:
    """``n`` prompts with counts balanced over ``counts`` (cycled, then shuffled).

    Each prompt draws a target and 0..``max_distractors`` distractor words (other words of
    ``words``), shuffles them and uses a format drawn from ``formats``.

    Raises:
        ValueError: ``n < 1``, fewer than 2 or repeated words, an unknown format, a count that is
            not an integer in 1..9, a negative ``max_distractors``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n={n!r}; allowed: an integer >= 1")
    if len(words) < 2:
        raise ValueError(f"need >= 2 words (a target and a distractor), got {words!r}")
    bad = [c for c in counts if isinstance(c, (bool, str)) or not float(c).is_integer() or not 1 <= int(c) <= 9]
    if bad or not len(counts):
        raise ValueError(f"counts {list(counts)!r}; allowed: non-empty, each an integer in 1..9")
    counts = tuple(int(c) for c in counts)
    if isinstance(max_distractors, bool) or int(max_distractors) != max_distractors or max_distractors < 0:
        raise ValueError(f"max_distractors={max_distractors!r}; allowed: an integer >= 0")
    if len(set(words)) != len(words):
        raise ValueError(f"words {words!r} are not distinct (a repeated word would change the true count)")
    cs = np.resize(np.asarray(counts), n)
    rng.shuffle(cs)
    out = []
    for c in cs:
        t = int(rng.integers(len(words)))
        others = [w for i, w in enumerate(words) if i != t]
        k = int(rng.integers(0, max_distractors + 1))
        items = [words[t]] * int(c) + [others[j] for j in rng.integers(len(others), size=k)]
        rng.shuffle(items)
        out.append(make_prompt(items, words[t], formats[int(rng.integers(len(formats)))]))
    return out


def generate_filler_text(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` short general sentences (held-out loss text), about half containing a digit.

    Example: ``"the man sees 4 cat in the park ."``. Source: inferred (a stand-in for general
    text at toy scale; the real configuration uses the user's text).
    """
    out = []
    for _ in range(n):
        s, v, p = (a[int(rng.integers(len(a)))] for a in (_FILLER_SUBJECTS, _FILLER_VERBS, _FILLER_PLACES))
        w = ENTITY_WORDS[int(rng.integers(len(ENTITY_WORDS)))]
        obj = f"{int(rng.integers(1, 10))} {w}" if rng.random() < 0.5 else f"a {w}"
        out.append(f"{s} {v} {obj} {p} .")
    return out


def build_word_tokenizer(extra_words: tuple[str, ...] = ()):
    """A word-level ``PreTrainedTokenizerFast`` covering the prompts and filler text.

    Splits on whitespace and punctuation (``tokenizers`` ``Whitespace`` pre-tokenizer), so
    ``" 3"`` and ``"3"`` are the same single token; ids 0–3 are ``[PAD] [BOS] [EOS] [UNK]``; the
    BOS token is prepended. Save it with ``save_pretrained`` next to a tiny model.
    """
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    words = ["[PAD]", "[BOS]", "[EOS]", "[UNK]"] + [str(d) for d in range(10)] + list(ENTITY_WORDS)
    text = " ".join(_FILLER_SUBJECTS + _FILLER_VERBS + _FILLER_PLACES) + " " + QUESTION + " , . a " + " ".join(extra_words)
    for w in pre_tokenizers.Whitespace().pre_tokenize_str(text):
        if w[0] not in words:
            words.append(w[0])
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="[BOS] $A", special_tokens=[("[BOS]", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="[BOS]", eos_token="[EOS]",
                                   pad_token="[PAD]", unk_token="[UNK]")


@dataclass(frozen=True)
class DigitTokens:
    """The token each digit 1..9 is answered with.

    Attributes:
        ids: token ids for digits 1..9 (``ids[c-1]`` answers count c), distinct.
        prefix: the text before the digit in the answer (``" "``).
        first_token_only: True when a digit is several tokens and its first token is scored.
        pieces: each digit's tokens after the prompt, as strings, for the report.
        lead_ids: whitespace token(s) the tokenizer writes between the prompt and every digit
            (``(id of ' ',)`` for cl100k/o200k/Qwen2, ``()`` when ``" d"`` is one token). The
            digit is read after them: :func:`encode_prompts` appends them to every prompt.
    """

    ids: tuple[int, ...]
    prefix: str
    first_token_only: bool
    pieces: dict[int, list[str]]
    lead_ids: tuple[int, ...] = ()


def digit_tokens(tokenizer, prompt: str = "Answer:", *, first_token: bool = False) -> DigitTokens:
    """Resolve the answer token of each digit 1..9 in ``prompt + " " + d`` (in context, so merges
    with the prompt's last characters are seen).

    Three cases, never a guess:

    - every ``" d"`` is exactly one new token → those tokens, ``lead_ids = ()``;
    - the tokenizer writes the space as its own token(s) (``prompt + " "`` encodes as the prompt
      plus a lead, and every ``" d"`` starts with that lead: ``' 3'`` → ``[' ', '3']``) and one
      digit token follows → the digit tokens, read after that lead (``lead_ids``);
    - otherwise :class:`MultiTokenDigitError` naming each digit's pieces, unless
      ``first_token=True`` and the first new tokens (after the lead, if any) are distinct.

    Raises:
        MultiTokenDigitError: as above, or a digit that is not in the vocabulary.
    """
    base = list(tokenizer(prompt, add_special_tokens=False)["input_ids"])
    prefix = " "
    pieces, news, merged = {}, {}, False
    for d in DIGITS:
        full = list(tokenizer(prompt + prefix + str(d), add_special_tokens=False)["input_ids"])
        if full[:len(base)] != base:
            merged = True
            pieces[d] = ["<merges with the prompt>"]
            continue
        news[d] = full[len(base):]
        pieces[d] = tokenizer.convert_ids_to_tokens(news[d])
    if not merged and all(len(v) == 1 for v in news.values()):
        ids = tuple(news[d][0] for d in DIGITS)
        if len(set(ids)) == 9:
            return DigitTokens(ids, prefix, False, pieces)
    spaced = list(tokenizer(prompt + prefix, add_special_tokens=False)["input_ids"])
    lead = tuple(spaced[len(base):]) if spaced[:len(base)] == base else ()
    rest = news
    if not merged and lead and all(tuple(v[:len(lead)]) == lead for v in news.values()):
        rest = {d: v[len(lead):] for d, v in news.items()}     # the answer as written: lead, then the digit
        ids = tuple(rest[d][0] if rest[d] else -1 for d in DIGITS)
        if all(len(v) == 1 for v in rest.values()) and len(set(ids)) == 9:
            return DigitTokens(ids, prefix, False, pieces, lead_ids=lead)
    else:
        lead = ()
    if first_token and not merged and all(rest.values()):
        ids = tuple(rest[d][0] for d in DIGITS)
        if len(set(ids)) == 9:
            return DigitTokens(ids, prefix, True, pieces, lead_ids=lead)
    raise MultiTokenDigitError(
        f"digits 1..9 after {prompt!r} + ' ' are not one token each, nor one shared whitespace token then one digit "
        "token, for this tokenizer: " + ", ".join(f"{d}->{v if v else '(no token: not in the vocabulary)'}"
                                                  for d, v in pieces.items())
        + " (pass first_token=True to score each digit's first token when those are distinct)")


@dataclass
class EncodedPrompts:
    """Token ids of a batch of prompts, right-padded, with positions marked.

    Attributes:
        input_ids: int64 tensor [n, T].
        attention_mask: int64 tensor [n, T] (1 = real token).
        answer_pos: int64 tensor [n], index of the last prompt token (its next token is the count).
        entity_mask: bool tensor [n, T], True at tokens of the target's occurrences.
        counts: int64 tensor [n], the true counts 1..9.
        lead_ids: the whitespace token(s) appended to every prompt (``encode_prompts``'s
            ``lead_ids``); :func:`~.models.counting_accuracy` refuses digits read after another lead.
    """

    input_ids: "object"
    attention_mask: "object"
    answer_pos: "object"
    entity_mask: "object"
    counts: "object"
    lead_ids: tuple[int, ...] = ()

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])

    def subset(self, idx) -> "EncodedPrompts":
        """Rows ``idx`` (a slice, index list or tensor)."""
        return EncodedPrompts(self.input_ids[idx], self.attention_mask[idx], self.answer_pos[idx],
                              self.entity_mask[idx], self.counts[idx], self.lead_ids)


def encode_prompts(tokenizer, prompts: list[CountingPrompt], *, max_length: int | None = None,
                   lead_ids: tuple[int, ...] = ()) -> EncodedPrompts:
    """Tokenise prompts (with the tokenizer's special tokens), right-pad, mark positions.

    ``lead_ids`` (:attr:`DigitTokens.lead_ids`: the whitespace token the tokenizer writes before
    a digit) are appended to every prompt, so the answer position is the one whose next token is
    the digit itself.

    Entity positions come from the fast tokenizer's offset mapping: a token is an entity token
    if its character span overlaps a target occurrence.

    Raises:
        ValueError: empty ``prompts``; a slow tokenizer (no offset mapping); a prompt longer
            than ``max_length`` (the model's context; name and length given); a target occurrence
            that maps to no token.
    """
    import torch

    if not prompts:
        raise ValueError("encode_prompts(): no prompts")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is a slow tokenizer; entity positions need a fast tokenizer "
                         "(offset mapping): load it with use_fast=True")
    batch = tokenizer([p.text for p in prompts], return_offsets_mapping=True)   # one call: same ids as per prompt
    lead = [int(i) for i in lead_ids]
    enc = [{"input_ids": list(i) + lead, "offset_mapping": list(o) + [(0, 0)] * len(lead)}
           for i, o in zip(batch["input_ids"], batch["offset_mapping"])]
    lengths = [len(e["input_ids"]) for e in enc]
    if max_length is not None and max(lengths) > max_length:
        i = int(np.argmax(lengths))
        raise ValueError(f"prompt {i} is {lengths[i]} tokens, longer than the model's context of {max_length} "
                         "tokens; shorten the lists (max_distractors) or use a longer-context model")
    T = max(lengths)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = np.full((len(prompts), T), pad, dtype=np.int64)
    ent = np.zeros((len(prompts), T), dtype=bool)
    for i, (p, e) in enumerate(zip(prompts, enc)):
        ids[i, :lengths[i]] = e["input_ids"]
        for (s, t) in p.entity_spans:
            hit = [j for j, (a, b) in enumerate(e["offset_mapping"]) if b > a and a < t and b > s]
            if not hit:
                raise ValueError(f"prompt {i}: target occurrence at characters {s}..{t} maps to no token")
            ent[i, hit] = True
    n = torch.tensor(lengths)
    mask = (torch.arange(T)[None, :] < n[:, None]).long()
    counts = torch.tensor([p.count for p in prompts], dtype=torch.long)
    return EncodedPrompts(torch.from_numpy(ids), mask, n - 1, torch.from_numpy(ent), counts, tuple(lead))
