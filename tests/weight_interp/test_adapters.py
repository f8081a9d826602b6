"""The circuit-sparsity checkpoint adapter on small checkpoints written to tmp_path."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neurips26.weight_interp import (
    CheckpointMismatchError,
    CircuitSparsityConfig,
    CircuitSparsityGPT,
    SymbolicExplainer,
    SymbolicScorer,
    explain_weights,
    load_circuit_sparsity,
    make_corpus,
    sample_nonzero_weights,
)

CFG = {"block_size": 16, "vocab_size": 100, "n_layer": 2, "n_head": 2, "d_head": 8, "d_model": 16, "n_mlp": 32,
       "bias": False, "ln_bias": False, "rms_norm": True, "activation_type": "gelu", "afrac": 0.25,
       "afrac_loctypes": "attn_in,attn_q,attn_k,attn_v,attn_out,mlp_in,mlp_neuron,mlp_out", "tied_unembed": False,
       "enable_bigram_table": True, "sink": True, "dropout": 0.0, "pfrac": 0.01, "bigram_table_rank": None,
       "tokenizer_name": "tinypython_2k", "flash": True, "grad_checkpointing": True}


def _write(folder, cfg, prefix="_orig_mod.", seed=0):
    torch.manual_seed(seed)
    model = CircuitSparsityGPT(CircuitSparsityConfig.from_json(cfg))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.3)
        for _name, b in model.named_buffers():
            b.normal_(0, 0.1)
    sd = {prefix + k: v for k, v in model.state_dict().items()}
    sd[prefix + "transformer.h.0.attn.bias"] = torch.ones(1, 1, 16, 16).tril()   # the format's mask buffer
    folder.mkdir()
    (folder / "beeg_config.json").write_text(json.dumps(cfg))
    torch.save(sd, folder / "final_model.pt")
    return model


def test_round_trip_and_explain_a_weight(tmp_path):
    cfg = {**CFG, "vocab_size": 98}               # our character vocabulary (a mismatch is an error, see below)
    ref = _write(tmp_path / "m", cfg)
    model = load_circuit_sparsity(tmp_path / "m")
    x = torch.randint(0, 98, (3, 16))
    assert torch.allclose(model(x), ref(x))
    text = "".join(np.random.default_rng(0).choice(list("abc():=\n "), 20_000))
    c = make_corpus(text, 15, {"explain": 30, "score": 30, "train": -1}, seed=0)
    refs = sample_nonzero_weights(model, 2, np.random.default_rng(0), modules=["transformer.h.0.attn.c_attn"])
    reps = explain_weights(model, refs, c.split("explain"), c.split("score"), SymbolicExplainer(), SymbolicScorer(),
                           c.vocab)
    assert [r.weight for r in reps] == [str(r) for r in refs]
    other = _write(tmp_path / "v100", CFG)            # vocab 100: character ids would run but mean nothing
    with pytest.raises(ValueError, match="character vocabulary of 98 tokens but the model's vocab_size is 100"):
        explain_weights(other, refs, c.split("explain"), c.split("score"), SymbolicExplainer(), SymbolicScorer(),
                        c.vocab)


def test_attention_matches_sdpa_and_a_closed_sink_changes_nothing():
    cfg = {**CFG, "afrac": None, "enable_bigram_table": False, "n_mlp": 32}
    torch.manual_seed(0)
    with_sink = CircuitSparsityGPT(CircuitSparsityConfig.from_json(cfg))
    plain = CircuitSparsityGPT(CircuitSparsityConfig.from_json({**cfg, "sink": False}))
    sd = {k: v for k, v in with_sink.state_dict().items() if "sink_logit" not in k}
    plain.load_state_dict(sd)
    with torch.no_grad():
        for blk in with_sink.transformer.h:
            blk.attn.attn_imp.sink_logit.fill_(-1e9)                 # a sink no query attends to
    x = torch.randint(0, 100, (2, 16))
    assert torch.allclose(with_sink(x), plain(x), atol=1e-5)
    blk = plain.transformer.h[0]
    h = torch.randn(2, 16, 16)
    q, k, v = blk.attn.c_attn(h).split(16, dim=2)
    q, k, v = (t.view(2, 16, 2, 8).transpose(1, 2) for t in (q, k, v))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, 16, 16)
    assert torch.allclose(blk.attention(h), blk.attn.c_proj(ref), atol=1e-5)


def test_mismatches_are_clear_errors(tmp_path):
    _write(tmp_path / "a", CFG)
    cfg = {**CFG, "n_mlp": 48}
    (tmp_path / "a" / "beeg_config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointMismatchError, match="c_fc.weight.*shape"):
        load_circuit_sparsity(tmp_path / "a")
    (tmp_path / "a" / "beeg_config.json").write_text(json.dumps({**CFG, "d_pos_emb": 4}))
    with pytest.raises(CheckpointMismatchError, match="d_pos_emb"):
        load_circuit_sparsity(tmp_path / "a")
    (tmp_path / "a" / "beeg_config.json").write_text(json.dumps({**CFG, "mystery": 1}))
    with pytest.raises(CheckpointMismatchError, match="mystery"):
        load_circuit_sparsity(tmp_path / "a")
    (tmp_path / "a" / "beeg_config.json").write_text(json.dumps({**CFG, "sink": False}))
    with pytest.raises(CheckpointMismatchError, match="unexpected.*sink_logit"):
        load_circuit_sparsity(tmp_path / "a")
    with pytest.raises(FileNotFoundError):
        load_circuit_sparsity(tmp_path / "none")


def test_tied_unembedding_with_one_stored_copy(tmp_path):
    cfg = {**CFG, "tied_unembed": True, "enable_bigram_table": False}
    ref = _write(tmp_path / "t", cfg, prefix="")
    sd = torch.load(tmp_path / "t" / "final_model.pt")
    sd.pop("lm_head.weight")
    torch.save(sd, tmp_path / "t" / "final_model.pt")
    model = load_circuit_sparsity(tmp_path / "t")
    assert model.lm_head.weight is model.transformer.wte.weight
    x = torch.randint(0, 100, (1, 8))
    assert torch.allclose(model(x), ref(x))
