"""Constrained decoding: make a small model's reply match a JSON schema, a regular expression or
one of a few choices.

* On the transformers path, :class:`RegexLogitsProcessor` masks, at every step, the tokens whose
  text would take the reply out of the language of a regular expression (checked with the
  ``regex`` package's partial matching: a candidate is kept when the reply so far plus the token's
  text is a prefix of some match); end-of-sequence is allowed only once the whole reply matches.
  A JSON schema and a list of choices are first turned into a regular expression
  (:func:`schema_to_regex`, :func:`choices_to_regex`).
* On an OpenAI-compatible server, :func:`openai_constraint_kwargs` gives the request fields:
  ``response_format`` for a JSON schema (OpenAI's ``json_schema`` form, or llama.cpp's
  ``json_object`` + ``schema``) and, for llama.cpp, a GBNF ``grammar`` for a list of choices.

To stay cheap on CPU the processor checks candidates in order of score and keeps the best
``top_k`` allowed ones (64 by default; all tokens are scanned when none of the best are allowed):
greedy decoding is exact, sampling draws from the allowed tokens among the most likely ones.

Source: inferred — the technique of regex/grammar-guided generation (as in the outlines library and
llama.cpp's grammars), written here from scratch for a subset of JSON Schema.
"""

from __future__ import annotations

import json
import re

#: JSON Schema keywords :func:`schema_to_regex` understands.
SCHEMA_SUBSET = "type object (properties, all listed in order), string (enum, maxLength), integer, number, boolean, null, array (items, maxItems), enum, const"

_WS = r"[ ]?"
_STRING_CHAR = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt])'


def _literal(value) -> str:
    return re.escape(json.dumps(value))


def schema_to_regex(schema: dict, *, max_string: int = 200) -> str:
    """A regular expression whose matches are the compact JSON texts valid under ``schema``.

    Objects list every property, in the schema's order (optional ones included), separated by
    ``,`` with at most one space after ``:`` and ``,``. Strings are at most ``maxLength`` (else
    ``max_string``) characters.

    Raises:
        ValueError: a schema outside :data:`SCHEMA_SUBSET` (one line naming the keyword).
    """
    if not isinstance(schema, dict):
        raise ValueError(f"JSON schema must be an object, got {type(schema).__name__}")
    if "const" in schema:
        return _literal(schema["const"])
    if "enum" in schema:
        return "(?:" + "|".join(_literal(v) for v in schema["enum"]) + ")"
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        if not props:
            raise ValueError("JSON schema object needs 'properties' for constrained decoding")
        parts = [f"{_literal(name)}{_WS}:{_WS}{schema_to_regex(sub, max_string=max_string)}"
                 for name, sub in props.items()]
        return r"\{" + _WS + f"{_WS},{_WS}".join(parts) + _WS + r"\}"
    if kind == "string":
        n = int(schema.get("maxLength", max_string))
        return f'"{_STRING_CHAR}{{0,{n}}}"'
    if kind == "integer":
        return r"-?(?:0|[1-9][0-9]{0,17})"
    if kind == "number":
        return r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?(?:[eE][+-]?[0-9]{1,3})?"
    if kind == "boolean":
        return "(?:true|false)"
    if kind == "null":
        return "null"
    if kind == "array":
        item = schema_to_regex(schema.get("items", {"type": "string"}), max_string=max_string)
        n = int(schema.get("maxItems", 16))
        return r"\[" + _WS + f"(?:{item}(?:{_WS},{_WS}{item}){{0,{max(n - 1, 0)}}})?" + _WS + r"\]"
    raise ValueError(f"JSON schema type {kind!r} is not supported for constrained decoding; "
                     f"allowed: {SCHEMA_SUBSET}")


def choices_to_regex(choices) -> str:
    """A regular expression matching exactly one of ``choices`` (strings, taken literally)."""
    return "(?:" + "|".join(re.escape(c) for c in choices) + ")"


def choices_to_gbnf(choices) -> str:
    """A llama.cpp GBNF grammar whose only sentences are ``choices``."""
    return "root ::= " + " | ".join(json.dumps(c) for c in choices) + "\n"


def params_regex(params) -> str | None:
    """The regular expression a :class:`~neurips26.backends.base.ChatParams` asks for, or ``None``."""
    if params.choices:
        return choices_to_regex(params.choices)
    if params.json_schema:
        return schema_to_regex(json.loads(params.json_schema))
    return params.regex or None


def openai_constraint_kwargs(params, flavour: str) -> dict:
    """Request fields for an OpenAI-compatible server (``flavour`` = ``openai`` | ``llama.cpp``).

    Raises:
        ValueError: a constraint the flavour cannot express (regex anywhere; choices on OpenAI's
            own API), in one line.
    """
    if params.regex:
        raise ValueError("a regex constraint is supported on backend=transformers only; on a server use "
                         "json_schema or choices (llama.cpp)")
    if params.choices:
        if flavour != "llama.cpp":
            raise ValueError("a choices constraint needs a grammar: use constraints='llama.cpp' (a llama.cpp "
                             "server) or a json_schema with an enum")
        return {"extra_body": {"grammar": choices_to_gbnf(params.choices)}}
    if params.json_schema:
        schema = json.loads(params.json_schema)
        if flavour == "llama.cpp":
            return {"response_format": {"type": "json_object", "schema": schema}}
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "reply", "schema": schema, "strict": True}}}
    return {}


class RegexLogitsProcessor:
    """A transformers logits processor keeping the reply inside a regular expression's language.

    Args:
        pattern: the regular expression (the whole reply must match it).
        tokenizer: the model's tokenizer (token texts are taken from ``decode([id])``).
        prompt_len: the (padded) prompt length; tokens after it are the reply.
        eos_token_id: the end token, allowed only when the reply so far fully matches.
        top_k: allowed tokens kept per step (checked in score order).

    Raises:
        ValueError: an invalid regular expression (one line).
    """

    _vocab_cache: dict[int, list[str]] = {}

    def __init__(self, pattern: str, tokenizer, prompt_len: int, eos_token_id: int, top_k: int = 64) -> None:
        import regex

        try:
            self.pattern = regex.compile(pattern)
        except regex.error as exc:
            raise ValueError(f"bad regex constraint {pattern!r}: {exc}") from None
        key = id(tokenizer)
        if key not in self._vocab_cache:
            n = len(tokenizer)
            special = set(getattr(tokenizer, "all_special_ids", []) or [])
            self._vocab_cache[key] = ["" if i in special else tokenizer.decode([i]) for i in range(n)]
        self.texts = self._vocab_cache[key]
        self.tokenizer, self.prompt_len, self.eos, self.top_k = tokenizer, prompt_len, eos_token_id, top_k
        self._prefix: dict[int, str] = {}

    def _ok(self, text: str) -> bool:
        return self.pattern.fullmatch(text, partial=True) is not None

    def __call__(self, input_ids, scores):
        import torch

        out = torch.full_like(scores, float("-inf"))
        for row in range(scores.shape[0]):
            done = self.tokenizer.decode(input_ids[row, self.prompt_len:], skip_special_tokens=True)
            complete = self.pattern.fullmatch(done) is not None
            order = torch.argsort(scores[row], descending=True).tolist()
            kept = []
            for t in order:
                if t == self.eos:
                    if complete:
                        kept.append(t)
                elif t < len(self.texts) and self.texts[t] and self._ok(done + self.texts[t]):
                    kept.append(t)
                if len(kept) >= self.top_k:
                    break
            if not kept:  # nothing can extend the reply: end it
                kept = [self.eos]
            idx = torch.tensor(kept, dtype=torch.long, device=scores.device)
            out[row, idx] = scores[row, idx]
        return out


__all__ = ["schema_to_regex", "choices_to_regex", "choices_to_gbnf", "params_regex", "openai_constraint_kwargs",
           "RegexLogitsProcessor", "SCHEMA_SUBSET"]
