"""Top-k projection with a per-neuron floor, the schedule, gradient RMS, training invariants,
AbsTopK, checkpoints and corpus splits."""

import json

import numpy as np
import pytest
import torch

from neurips26.weight_interp import (
    CheckpointMismatchError,
    CorpusTooSmallError,
    SparseGPT,
    SparseGPTConfig,
    TrainConfig,
    abs_topk,
    kept_fraction,
    load_checkpoint,
    make_corpus,
    nonzeros_target,
    normalize_grad_rms_,
    save_checkpoint,
    topk_mask_with_floor,
    train_lm,
)

TINY = SparseGPTConfig(vocab_size=20, ctx=8, d_model=16, n_layer=1, n_head=1, d_head=16, d_mlp=32)


def test_topk_mask_keeps_exact_count_and_floor_per_row():
    g = torch.Generator().manual_seed(0)
    w = torch.randn(12, 30, generator=g)
    w[3] *= 1e-3                                   # a weak row: only the floor keeps entries there
    for k, j in [(20, 4), (100, 4), (5, 0), (48, 4)]:
        m = topk_mask_with_floor(w, k, j)
        assert int(m.sum()) == max(k, 12 * j)      # exact, no ties with continuous weights
        assert int(m.sum(1).min()) >= j
    m = topk_mask_with_floor(w, 60, 4)
    assert int(m[3].sum()) == 4                    # the weak row keeps exactly its floor
    rest = w.abs().masked_fill(~m, -1)             # every kept entry outside the floors beats every dropped one
    assert float(w.abs()[~m].max()) <= float(rest.max())
    with pytest.raises(ValueError, match="matrix"):
        topk_mask_with_floor(torch.ones(3), 1, 0)
    with pytest.raises(ValueError, match="k="):
        topk_mask_with_floor(w, 0, 1)


def test_kept_fraction_schedule_and_errors():
    f = [kept_fraction(s, 200, 0.05) for s in range(200)]
    assert f[:2] == [1.0, 1.0] and f[100:] == [0.05] * 100
    assert all(b <= a for a, b in zip(f, f[1:]))
    assert kept_fraction(50, 200, 0.05, shape="exp") < 1.0
    for kw in [dict(target=0.0), dict(target=1.5), dict(target=0.1, start=0.6, end=0.5), dict(target=0.1, shape="x")]:
        with pytest.raises(ValueError):
            kept_fraction(1, 10, **kw)
    assert nonzeros_target((10, 3), 0.01, 4) == 30   # floor capped by the row length


def test_gradient_rms_is_one_after_normalisation():
    p = [torch.nn.Parameter(torch.zeros(5, 5)), torch.nn.Parameter(torch.zeros(7))]
    p[0].grad, p[1].grad = torch.randn(5, 5) * 30, torch.randn(7) * 0.1
    assert normalize_grad_rms_(p) == pytest.approx(1.0, abs=1e-6)


def test_sparse_training_keeps_invariants_and_learns():
    rng = np.random.default_rng(0)
    data = np.tile(np.arange(20), 200)[: 9 * 300].reshape(300, 9)      # a cyclic sequence: easy to learn
    data = (data + rng.integers(0, 20, (300, 1))) % 20
    torch.manual_seed(0)
    m = SparseGPT(TINY)
    cfg = TrainConfig(steps=60, batch=8, lr=0.03, target_fraction=0.1, eval_every=20)
    r = train_lm(m, data[:250], data[250:], cfg, seed=0)
    assert r.invariant_violations == 0
    for name, lin in m.matrices().items():
        assert int((lin.weight != 0).sum()) == nonzeros_target(tuple(lin.weight.shape), 0.1, 4), name
    assert r.history[-1][1] < np.log(20) - 0.5        # clearly below the uniform loss (tolerance: 0.5 nats)
    assert max(abs(x - 1) for x in r.grad_rms) < 1e-4


def test_abs_topk_keeps_largest_magnitudes():
    z = torch.tensor([[0.1, -3.0, 2.0, 0.5, -0.2, 1.0, 0.0, 4.0]])
    out = abs_topk(z, 0.25)
    assert out.tolist() == [[0, -3.0, 0, 0, 0, 0, 0, 4.0]]
    assert abs_topk(z, 1.0) is z


def test_model_rejects_bad_config_and_ids():
    with pytest.raises(ValueError, match="d_model"):
        SparseGPTConfig(vocab_size=10, d_model=0)
    with pytest.raises(ValueError, match="activation_topk_fraction"):
        SparseGPTConfig(vocab_size=10, activation_topk_fraction=0)
    m = SparseGPT(TINY)
    with pytest.raises(ValueError, match="token ids"):
        m(torch.tensor([[0, 25]]))
    with pytest.raises(ValueError, match="ctx"):
        m(torch.zeros(1, 9, dtype=torch.long))


def test_checkpoint_round_trip_and_mismatch(tmp_path):
    torch.manual_seed(1)
    m = SparseGPT(TINY)
    save_checkpoint(m, tmp_path / "ck", extra={"note": "x"})
    m2, extra = load_checkpoint(tmp_path / "ck")
    x = torch.randint(0, 20, (2, 8))
    assert torch.equal(m(x), m2(x)) and extra == {"note": "x"}
    meta = json.loads((tmp_path / "ck" / "config.json").read_text())
    meta["config"]["d_mlp"] = 48                                     # config no longer matches the tensors
    (tmp_path / "ck" / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointMismatchError, match="fc_in.weight.*shape"):
        load_checkpoint(tmp_path / "ck")
    meta["config"]["d_mlp"] = 32
    meta["format"] = "other"
    (tmp_path / "ck" / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointMismatchError, match="format"):
        load_checkpoint(tmp_path / "ck")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "nothing")


def test_corpus_splits_are_disjoint_and_small_corpus_is_an_error():
    text = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(400))
    c = make_corpus(text, 16, {"val": 10, "explain": 20, "score": 20, "train": -1}, seed=0)
    ids = [set(v.tolist()) for v in c.splits.values()]
    assert all(not (a & b) for i, a in enumerate(ids) for b in ids[i + 1:])
    assert c.vocab.decode(c.vocab.encode("a:\n")) == "a:\n" and c.vocab.decode(c.vocab.encode("é")) == "¤"
    with pytest.raises(CorpusTooSmallError, match="windows"):
        make_corpus(text[:500], 16, {"explain": 20, "score": 20}, seed=0)
    with pytest.raises(ValueError, match="out of range"):
        c.vocab.decode([999])
