"""The ``neurips26 models`` command (without installing anything) and the constraint helpers
(JSON schema / choices to a regular expression, request fields for a server, the logits
processor on a toy vocabulary)."""

from __future__ import annotations

import json

import pytest
import regex
from typer.testing import CliRunner

from neurips26.backends import ChatParams
from neurips26.backends.constrain import (
    RegexLogitsProcessor,
    choices_to_gbnf,
    choices_to_regex,
    openai_constraint_kwargs,
    schema_to_regex,
)
from neurips26.cli import app


def test_models_cli_list_path_install_errors(tmp_path, monkeypatch):
    """Catches a models command that lists nothing, prints a folder for a model that is not
    installed, or fails on an unknown id with more than one line."""
    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path))
    runner = CliRunner()
    out = runner.invoke(app, ["models", "list"], env={"COLUMNS": "200"})
    assert out.exit_code == 0 and "smollm2-135m" in out.output and "Apache-2.0" in out.output
    out = runner.invoke(app, ["models", "path", "smollm2-135m"])
    assert out.exit_code == 2 and "not installed" in out.output and "models install smollm2-135m" in out.output
    out = runner.invoke(app, ["models", "install", "gpt-9"])
    assert out.exit_code == 2 and "unknown model id 'gpt-9'" in out.output and "smollm2-135m" in out.output


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}, "age": {"type": "integer"},
                                           "ok": {"type": "boolean"}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}}


@pytest.mark.parametrize(("text", "valid"), [
    ('{"name":"Bo","age":3,"ok":true,"tags":["a"]}', True),
    ('{ "name": "Bo", "age": -12, "ok": false, "tags": [] }', True),
    ('{"name":"Bo","age":3.5,"ok":true,"tags":[]}', False),       # not an integer
    ('{"name":"toolongname","age":3,"ok":true,"tags":[]}', False),  # maxLength
    ('{"age":3,"name":"Bo","ok":true,"tags":[]}', False),          # property order is the schema's
    ('{"name":"Bo","age":3,"ok":true,"tags":["c"]}', False),       # not in the enum
])
def test_schema_regex_accepts_exactly_valid_compact_json(text, valid):
    """Catches a schema translation that admits invalid JSON or refuses valid JSON."""
    pattern = regex.compile(schema_to_regex(SCHEMA))
    assert (pattern.fullmatch(text) is not None) == valid
    if valid:
        json.loads(text)


def test_schema_regex_refuses_unsupported_types():
    with pytest.raises(ValueError, match="not supported"):
        schema_to_regex({"type": "object", "properties": {"x": {"type": "date"}}})
    assert regex.fullmatch(choices_to_regex(["a.b", "c"]), "a.b") and not regex.fullmatch(choices_to_regex(["a.b"]), "axb")
    assert choices_to_gbnf(["yes", "no"]) == 'root ::= "yes" | "no"\n'


def test_server_request_fields_per_flavour():
    """Catches constraints sent in a form the server ignores or rejects."""
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert openai_constraint_kwargs(ChatParams(json_schema=schema), "llama.cpp") == {
        "response_format": {"type": "json_object", "schema": schema}}
    assert openai_constraint_kwargs(ChatParams(json_schema=schema), "openai")["response_format"]["type"] == "json_schema"
    assert openai_constraint_kwargs(ChatParams(choices=("y", "n")), "llama.cpp") == {
        "extra_body": {"grammar": 'root ::= "y" | "n"\n'}}
    with pytest.raises(ValueError, match="grammar"):
        openai_constraint_kwargs(ChatParams(choices=("y",)), "openai")
    with pytest.raises(ValueError, match="transformers only"):
        openai_constraint_kwargs(ChatParams(regex="a+"), "llama.cpp")
    assert openai_constraint_kwargs(ChatParams(), "openai") == {}


class _Tok:
    """A toy tokenizer: token i is the i-th string; 0 is the end token."""

    vocab = ["</s>", "y", "e", "s", "no", "maybe", "ye"]
    all_special_ids = [0]

    def __len__(self):
        return len(self.vocab)

    def decode(self, ids, skip_special_tokens=False):
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join(self.vocab[i] for i in ids if not (skip_special_tokens and i == 0))


def test_logits_processor_masks_tokens_outside_the_language():
    """Catches a processor that lets the best-scoring token through when it leaves the language,
    or that allows the end token before the reply matches."""
    import torch

    tok = _Tok()
    proc = RegexLogitsProcessor(choices_to_regex(["yes", "no"]), tok, prompt_len=1, eos_token_id=0)
    scores = torch.tensor([[5.0, 1.0, 0.0, 0.0, 2.0, 9.0, 3.0]])  # "maybe" best, then </s>
    out = proc(torch.tensor([[3]]), scores)
    allowed = torch.isfinite(out[0]).nonzero().flatten().tolist()
    assert allowed == [1, 4, 6]  # y, no, ye — never "maybe" nor the end token
    out = proc(torch.tensor([[3, 6]]), scores)  # reply so far "ye": only "s" continues it
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [3]
    out = proc(torch.tensor([[3, 6, 3]]), scores)  # "yes" matches: only the end token
    assert torch.isfinite(out[0]).nonzero().flatten().tolist() == [0]


def test_chat_many_falls_back_to_one_call_each():
    """Catches chat_many dropping or reordering replies for a backend without chat_batch."""
    from neurips26.backends import Message, ScriptedBackend, chat_many

    be = ScriptedBackend(lambda msgs: msgs[-1].content.upper())
    out = chat_many(be, [[Message("user", "a")], [Message("user", "b")]])
    assert [r.text for r in out] == ["A", "B"] and be.calls == 2
