"""Regression tests from the review: each case below was a silent wrong answer or an unclear
error before (scorer answering too few items, degenerate 'larger' claims, a refusal accepted as an
account, character ids fed to a BPE model, windows longer than the model's context …)."""

import json

import numpy as np
import pytest
import torch

from neurips26.backends import ScriptedBackend, replies
from neurips26.harness.claims import Verdict
from neurips26.weight_interp import (
    CheckpointMismatchError,
    ExplanationFailed,
    LLMExplainer,
    LLMScorer,
    PlantedModel,
    SelectionSettings,
    SparseGPT,
    SparseGPTConfig,
    SymbolicExplainer,
    SymbolicScorer,
    TrainConfig,
    WeightRef,
    explain_weights,
    interpretable_fraction,
    load_checkpoint,
    make_corpus,
    parse_explanation,
    sample_nonzero_weights,
    save_checkpoint,
)
from neurips26.weight_interp.corpus import CharVocabulary
from neurips26.weight_interp.explainers import _EXPLAIN_SYSTEM, _system
from neurips26.weight_interp.pipeline import MIN_ANSWERED

V = CharVocabulary()


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    words = ["def", "return", "self", "x", "(", ")", ":", "\n", " ", "if", "None", "=", "1", ",", "f(x):", "g():"]
    c = make_corpus("".join(rng.choice(words, 40_000)), 16, {"explain": 120, "score": 120, "train": -1}, seed=0)
    e = lambda s: int(V.encode(s)[0])
    return c, PlantedModel(V.size, e(":"), e(")"), e("Z"))


ST = SelectionSettings(n_examples=20, min_positives=3)


class _AnswersOnly:
    """A scorer that answers (correctly) only ``k`` positives and ``k`` negatives, -1 elsewhere."""

    name = "partial"

    def __init__(self, k):
        self.k = k

    def predict(self, explanation, items, vocab):
        out = np.full(len(items), -1, np.int8)
        out[np.flatnonzero(items.labels)[: self.k]] = 1
        out[np.flatnonzero(~items.labels)[: self.k]] = 0
        return out


def test_a_scorer_that_answers_few_items_is_a_scoring_failure_not_a_perfect_score(setup):
    c, m = setup
    ex = LLMExplainer(ScriptedBackend(lambda msgs: "MATTERS WHEN: after ')'"))
    rep = explain_weights(m, [m.planted], c.split("explain"), c.split("score"), ex, _AnswersOnly(1), V, ST)[0]
    # before the fix: score 1.0 from 2 answered items of 40, counted interpretable
    assert rep.status == "scoring_failed" and not rep.interpretable and "usable answers" in rep.failure
    with pytest.raises(ValueError, match="no weight reached a verdict"):
        interpretable_fraction([rep])
    dead = explain_weights(m, [m.planted], c.split("explain"), c.split("score"), ex,
                           LLMScorer(ScriptedBackend(lambda msgs: "maybe")), V, ST)[0]
    assert dead.status == "scoring_failed" and dead.unanswered > 0
    ok = explain_weights(m, [m.planted], c.split("explain"), c.split("score"), ex, _AnswersOnly(20), V, ST)[0]
    assert ok.status == "ok" and ok.score == 1.0
    summ = interpretable_fraction([ok, rep])         # the failure is counted apart, not in the denominator
    assert summ.denominator == 1 and summ.by_status == {"ok": 1, "scoring_failed": 1}
    assert 0 < MIN_ANSWERED <= 1
    with pytest.raises(ValueError, match="no weight reports"):
        interpretable_fraction([])


@pytest.mark.parametrize("text, kind", [("MATTERS WHEN: I'm sorry, I cannot determine this.", "refusal"),
                                         ("**MATTERS WHEN:**   ", "malformed")])
def test_refusal_as_the_account_and_empty_bold_label_fail(text, kind):
    with pytest.raises(ExplanationFailed) as e:
        parse_explanation(text)
    assert e.value.kind == kind


def test_markdown_and_quotes_are_not_part_of_the_account():
    assert parse_explanation("**MATTERS WHEN:** after an open paren") == "matters when after an open paren"
    assert parse_explanation('MATTERS WHEN: "the token is __init__"') == "matters when the token is __init__"
    assert parse_explanation("MATTERS WHEN: the previous char is '('") == "matters when the previous char is '('"


def test_llm_explainer_and_scorer_validate_their_settings():
    be = ScriptedBackend(replies([]))
    for kw in ({"retries": -1}, {"n_show": 0}, {"max_tokens": 0}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            LLMExplainer(be, **kw)          # retries=-1 used to make no call and fail silently
    with pytest.raises(ValueError, match="max_tokens"):
        LLMScorer(be, max_tokens=0)


def test_prompts_name_characters_only_for_the_character_vocabulary():
    assert "character-level" in _system(_EXPLAIN_SYSTEM, V)

    class Tok:
        size = 500

    assert "character" not in _system(_EXPLAIN_SYSTEM, Tok()) and "token-level" in _system(_EXPLAIN_SYSTEM, Tok())


def test_windows_are_checked_before_anything_runs(setup):
    c, _ = setup
    torch.manual_seed(0)
    m = SparseGPT(SparseGPTConfig(V.size, ctx=8, d_model=16, d_mlp=32, n_head=2))
    ref = sample_nonzero_weights(m, 1, np.random.default_rng(0))[0]
    E, S = c.split("explain"), c.split("score")
    go = lambda e, s: explain_weights(m, [ref], e, s, SymbolicExplainer(), SymbolicScorer(), V, ST)
    with pytest.raises(ValueError, match="model's context is 8"):
        go(E, S)                                           # 16 input tokens > ctx 8
    with pytest.raises(ValueError, match="explain windows: shape"):
        go(E[:0, :9], S[:, :9])                            # empty (was: torch.cat error)
    with pytest.raises(ValueError, match="score windows: shape"):
        go(E[:, :9], S[:, :9].astype(float))
    with pytest.raises(ValueError, match="explain windows: shape"):
        go(E[0, :9], S[:, :9])


def test_weight_references_and_module_names(setup):
    _, m = setup
    with pytest.raises(TypeError, match="row"):
        WeightRef("readout", 1.0, 0)
    assert WeightRef("readout", np.int64(3), np.int32(0)) == WeightRef("readout", 3, 0)
    with pytest.raises(KeyError, match="allowed"):
        sample_nonzero_weights(m, 1, np.random.default_rng(0), modules=["nope"])
    with pytest.raises(ValueError, match="modules"):
        sample_nonzero_weights(m, 1, np.random.default_rng(0), modules=[])
    with pytest.raises(ValueError, match="min_per_neuron"):
        TrainConfig(min_per_neuron=-1, target_fraction=0.1)


def test_broken_checkpoint_config_is_a_mismatch_error(tmp_path):
    m = SparseGPT(SparseGPTConfig(20, ctx=8, d_model=16, d_mlp=32, n_head=2))
    save_checkpoint(m, tmp_path / "ck")
    cfg = tmp_path / "ck" / "config.json"
    meta = json.loads(cfg.read_text())
    cfg.write_text("{not json")
    with pytest.raises(CheckpointMismatchError, match="not valid JSON"):
        load_checkpoint(tmp_path / "ck")
    cfg.write_text(json.dumps({"format": meta["format"]}))
    with pytest.raises(CheckpointMismatchError, match="no 'config'"):
        load_checkpoint(tmp_path / "ck")


def test_equal_fractions_do_not_make_the_larger_claims_hold(tmp_path, monkeypatch):
    """A scorer that always says no gives 0 vs 0: 'sparse larger than dense' must not hold."""
    from neurips26.backends import StubOpenAIServer
    from neurips26.harness import RunContext
    from neurips26.weight_interp import experiment as X

    monkeypatch.setattr(X, "_planted", lambda *a, **k: [])                    # not under test here
    monkeypatch.setattr(X, "_attribution_vs_ablation", lambda *a, **k: [])
    tiny = dict(seeds=[0, 1], corpus_chars=60_000, ctx=8, d_model=16, d_mlp=32, n_head=2, steps=20, batch=8,
                eval_every=10, val_windows=10, explain_windows=40, score_windows=40, n_weights=10, n_examples=6,
                min_positives=2, llm_weights=2, tau=1.0)
    with StubOpenAIServer(reply=lambda b: "MATTERS WHEN: x" if "MATTERS:" in b["messages"][-1]["content"] else "no",
                          max_requests=10_000) as server:
        cfg = X.Config(**tiny, backend="openai", model="stub", base_url=server.url)
        out = X.run(cfg, RunContext(seed=0, out_dir=tmp_path))
    by = {c.id: c for c in out.claims}
    llm = by["llm_sparse_vs_dense"]
    # was 'holds' (0 ≥ 0); every explanation the stub returns is unusable, so it is not checkable
    assert llm.verdict is Verdict.NOT_CHECKABLE and "usable" in llm.reason


def test_identical_fractions_do_not_confirm_the_paper_sign(tmp_path, monkeypatch):
    """Every weight dead in both models (0 % vs 0 % in every seed) must not make 'sparse larger' hold."""
    from neurips26.harness import RunContext
    from neurips26.weight_interp import experiment as X
    from neurips26.weight_interp.pipeline import WeightReport

    monkeypatch.setattr(X, "_planted", lambda *a, **k: [])
    monkeypatch.setattr(X, "_attribution_vs_ablation", lambda *a, **k: [])
    monkeypatch.setattr(X, "explain_weights", lambda model, refs, *a, **k: [WeightReport(str(r), 1.0, "dead")
                                                                            for r in refs])
    tiny = dict(seeds=[0, 1, 2], corpus_chars=60_000, ctx=8, d_model=16, d_mlp=32, n_head=2, steps=20, batch=8,
                eval_every=10, val_windows=10, explain_windows=40, score_windows=40, n_weights=10)
    out = X.run(X.Config(**tiny), RunContext(seed=0, out_dir=tmp_path))
    claim = {c.id: c for c in out.claims}["sparse_more_interpretable"]
    assert claim.measured == 0.0 and claim.verdict is Verdict.DOES_NOT_HOLD       # was 'holds' (interval ≥ 0)


def test_more_sampled_weights_than_nonzeros_fails_before_training():
    """Was a ValueError from sample_nonzero_weights after minutes of training."""
    from neurips26.harness.config import ConfigError, apply_overrides
    from neurips26.weight_interp.experiment import Config

    with pytest.raises(ConfigError, match="n_weights=100000 but the sparse model keeps"):
        apply_overrides(Config.quick(), {"n_weights": 100_000}, "weight_interp")
    apply_overrides(Config.quick(), {"n_weights": 1000}, "weight_interp")        # fits: no error
