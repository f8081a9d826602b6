"""Hardening tests (real-world input and the pipeline's held-out discipline): ties in the top-k
projection, zero-attribution weights re-checked by ablation, the mean used by mean ablation on
the held-out split, held-out items drawn only from the score windows, non-finite training
settings. Each test names the bug it catches."""

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from neurips26.weight_interp import (
    PlantedModel,
    SelectionSettings,
    SymbolicExplainer,
    SymbolicScorer,
    TrainConfig,
    WeightRef,
    attributions,
    capture,
    explain_weights,
    make_corpus,
)
from neurips26.weight_interp.corpus import CharVocabulary
from neurips26.weight_interp.pipeline import weight_importances
from neurips26.weight_interp.sparsity import topk_mask_with_floor

V = CharVocabulary()


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(0)
    words = ["def", "return", "self", "x", "(", ")", ":", "\n", " ", "if", "None", "=", "1", ",", "f(x):", "g():"]
    return make_corpus("".join(rng.choice(words, 40_000)), 16, {"explain": 120, "score": 120, "train": -1}, seed=0)


def test_topk_ties_are_broken_by_index():
    """Catches ties broken by torch.topk's (unspecified, device-dependent) order: |w| = (.5, .5, .5,
    .1, .2, .5) with k = 2 must keep entries 0 and 1 (topk kept [1, 5] on CPU)."""
    w = torch.tensor([[0.5, -0.5, 0.5, 0.1, 0.2, 0.5]])
    assert torch.nonzero(topk_mask_with_floor(w, 2, 0)[0]).flatten().tolist() == [0, 1]
    # the per-row floor also keeps the lower column among ties, and the fill the lower flat index
    w2 = torch.tensor([[0.3, 0.3, 0.3, 0.0], [0.0, 0.3, 0.3, 0.3]])
    m = topk_mask_with_floor(w2, 3, 1)
    assert m.tolist() == [[True, True, False, False], [False, True, False, False]]


class _ReluLM(nn.Module):
    """ids → embedding (x0 = 1, x1 = 0 for every token) → 1 ReLU unit → logits. The unit's
    pre-activation is −1·x0 + 0.3·x1 + 0.5 = −0.5: it is off everywhere, so ∂L/∂y = 0 and both of
    its input weights get attribution 0. Removing up[0, 0] (= −1) turns the unit on (loss changes);
    up[0, 1] multiplies x1 = 0 and truly does nothing."""

    def __init__(self, vocab: int):
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(vocab, 2)
        self.up = nn.Linear(2, 1)
        self.down = nn.Linear(1, vocab, bias=False)
        with torch.no_grad():
            self.emb.weight[:, 0], self.emb.weight[:, 1] = 1.0, 0.0
            self.up.weight.copy_(torch.tensor([[-1.0, 0.3]]))
            self.up.bias.fill_(0.5)
            self.down.weight.normal_()

    def forward(self, ids):
        return self.down(torch.relu(self.up(self.emb(ids))))


def test_zero_attribution_weight_is_rechecked_by_ablation_before_dead(corpus):
    """Catches labelling a weight `dead` from zero attribution alone: a weight into a ReLU unit that
    is off has attribution 0 everywhere yet changes the loss when removed (it must not be `dead`);
    a weight whose input is always 0 stays `dead`."""
    m = _ReluLM(V.size)
    refs = [WeightRef("up", 0, 0), WeightRef("up", 0, 1)]
    ew, sw = corpus.split("explain"), corpus.split("score")
    ie, _, _ = weight_importances(m, refs, ew, sw)
    assert np.all(ie == 0)                                  # the premise: first-order importance is blind
    reps = explain_weights(m, refs, ew, sw, SymbolicExplainer(), SymbolicScorer(), V, SelectionSettings())
    assert reps[0].status == "attribution_blind" and "nats" in reps[0].failure and not reps[0].interpretable
    assert reps[1].status == "dead"


def test_mean_ablation_on_heldout_uses_the_explain_mean(corpus):
    """Catches the held-out split ablating to its own mean input (the importance that chose θ on the
    explain set then means another ablation on the score set)."""
    torch.manual_seed(0)
    from neurips26.weight_interp import SparseGPT, SparseGPTConfig, sample_nonzero_weights

    m = SparseGPT(SparseGPTConfig(vocab_size=V.size, ctx=16, d_model=16, n_layer=1, n_head=2, d_head=8, d_mlp=32))
    ew = corpus.split("explain")[:40]
    sw = corpus.split("score")[:40].copy()
    sw[:, :8] = int(V.encode("x")[0])                       # a held-out split whose mean input differs
    refs = sample_nonzero_weights(m, 6, np.random.default_rng(0))
    _, is_, mean_x = weight_importances(m, refs, ew, sw, "mean")
    ce, cs = capture(m, ew), capture(m, sw)
    want = np.abs(attributions(m, cs, refs, "mean", mean_x=ce.mean_x))
    own = np.abs(attributions(m, cs, refs, "mean"))
    np.testing.assert_allclose(is_, want, rtol=0, atol=0)   # same arithmetic on the same inputs
    assert np.abs(own - want).max() > 1e-4                  # the two means really differ here
    for k in mean_x:
        assert torch.equal(mean_x[k], ce.mean_x[k])


class _RecordingScorer(SymbolicScorer):
    """A symbolic scorer that records the windows of every held-out set it is asked to score."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def predict(self, explanation, items, vocab):
        self.seen.append(np.asarray(items.windows))
        return super().predict(explanation, items, vocab)


def test_heldout_items_come_from_the_score_windows_only(corpus):
    """Catches held-out scoring on explain windows (a leak: the account would be verified on the
    contexts it was written from). Every scored item's window must be a score window and none an
    explain window (the two splits are disjoint)."""
    e = lambda s: int(V.encode(s)[0])
    m = PlantedModel(V.size, e(":"), e(")"), e("Z"))
    ew, sw = corpus.split("explain"), corpus.split("score")
    sc = _RecordingScorer()
    rep = explain_weights(m, [m.planted], ew, sw, SymbolicExplainer(), sc, V, SelectionSettings(min_positives=3))[0]
    assert rep.status == "ok" and sc.seen
    score_rows = {r.tobytes() for r in np.ascontiguousarray(sw)}
    explain_rows = {r.tobytes() for r in np.ascontiguousarray(ew)}
    for held in sc.seen:
        rows = [r.tobytes() for r in np.ascontiguousarray(held)]
        assert all(r in score_rows for r in rows)
        assert not any(r in explain_rows for r in rows)


@pytest.mark.parametrize("kw", [dict(lr=math.inf), dict(lr=math.nan), dict(adam_eps=math.inf),
                                dict(weight_decay=math.nan), dict(betas=(0.9, 1.0)), dict(stop_at_loss=math.nan)])
def test_non_finite_training_settings_fail_before_training(kw):
    """Catches TrainConfig(lr=inf) being accepted (it trained to NaN): refused at construction, in
    one line naming the setting."""
    with pytest.raises(ValueError) as e:
        TrainConfig(**kw)
    assert next(iter(kw)) in str(e.value) and "\n" not in str(e.value)


def _dead_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                      # nothing listens on it now
    return port


def test_dead_endpoint_fails_in_seconds_before_any_training(tmp_path, monkeypatch):
    """Catches a dead endpoint found only after training (8 minutes, then a `does not hold` from
    backend errors): run() and the module preflight fail in one line within seconds, before the
    corpus is even read."""
    import time

    from neurips26.backends import BackendError
    from neurips26.harness import RunContext
    from neurips26.weight_interp import experiment as E

    def no_work(*a, **k):
        raise AssertionError("work started before the endpoint was checked")

    monkeypatch.setattr(E, "_corpus", no_work)
    cfg = E.Config(backend="openai", base_url=f"http://127.0.0.1:{_dead_port()}/v1", model="x")
    for call in (lambda: E.preflight(cfg), lambda: E.run(cfg, RunContext(seed=0, out_dir=tmp_path))):
        t0 = time.perf_counter()
        with pytest.raises(BackendError) as e:
            call()
        assert time.perf_counter() - t0 < 15 and "\n" not in str(e.value) and "127.0.0.1" in str(e.value)


def test_missing_local_model_folder_fails_before_training(tmp_path, monkeypatch):
    """Catches backend=transformers with a missing model_path found after training (65 s)."""
    from neurips26.harness import RunContext
    from neurips26.weight_interp import experiment as E

    monkeypatch.setattr(E, "_corpus", lambda *a, **k: (_ for _ in ()).throw(AssertionError("work started")))
    cfg = E.Config(backend="transformers", model_path=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="nope"):
        E.run(cfg, RunContext(seed=0, out_dir=tmp_path))


@pytest.mark.parametrize("content", [b"", b"not a torch file", b"PK\x03\x04garbage" * 10])
def test_corrupt_model_pt_is_refused_in_one_line_without_unpickling_advice(tmp_path, content):
    """Catches torch's own message for a corrupt model.pt, which suggests weights_only=False (running
    arbitrary pickled code): the error names the file and what is allowed, in one line."""
    from neurips26.weight_interp import (
        CheckpointMismatchError,
        SparseGPT,
        SparseGPTConfig,
        load_checkpoint,
        save_checkpoint,
    )

    m = SparseGPT(SparseGPTConfig(vocab_size=V.size, ctx=8, d_model=16, n_layer=1, n_head=2, d_head=8, d_mlp=32))
    save_checkpoint(m, tmp_path)
    (tmp_path / "model.pt").write_bytes(content)
    with pytest.raises(CheckpointMismatchError) as e:
        load_checkpoint(tmp_path)
    msg = str(e.value)
    assert "model.pt" in msg and "\n" not in msg and "weights_only=False" not in msg


def test_importance_threshold_takes_the_top_quantile():
    """Catches a threshold from the wrong tail (quantile 1 − q): with q = 0.98 on 1000 distinct
    importances, exactly the top 2 % (20 tokens, before the relative floor) are positives."""
    from neurips26.weight_interp.pipeline import importance_threshold

    imp = np.arange(1, 1001, dtype=np.float64).reshape(50, 20)
    theta = importance_threshold(imp, SelectionSettings(quantile=0.98, rel_floor=0.0))
    assert int((imp >= theta).sum()) == 20
    # the relative floor raises θ further when it is larger
    theta = importance_threshold(imp, SelectionSettings(quantile=0.5, rel_floor=0.9))
    assert int((imp >= theta).sum()) == 101
