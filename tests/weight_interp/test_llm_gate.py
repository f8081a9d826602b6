"""The LLM arm's claim is not judged from explanations that never came (a real 135M model's
replies were all malformed and the claim read "does not hold" with 0.0)."""

from neurips26.backends import StubOpenAIServer
from neurips26.harness import RunContext
from neurips26.harness.claims import Verdict
from neurips26.weight_interp.experiment import Config, llm_claim, run

TINY = dict(seeds=[0, 1], corpus_chars=120_000, ctx=16, d_model=32, d_mlp=64, n_head=2, steps=40, batch=8,
            eval_every=10, val_windows=20, explain_windows=60, score_windows=60, n_weights=20, n_examples=12,
            min_positives=3, n_ablation_weights=2, ablation_windows=1, planted_windows=150)

KW = dict(kind="reconstruction", source="inferred: test", object="real")


def _arm(fraction, **by_status):
    return {"fraction": fraction, "by_status": by_status, "explainer_failures": {"malformed": 2}}


def test_zero_usable_explanations_is_not_checkable_with_counts():
    """Catches: every explanation malformed (0 usable per arm) read as 'does not hold' with 0.0."""
    cfg = Config(**TINY, llm_weights=4, llm_min_usable=2)
    c = llm_claim(cfg, {"sparse": _arm(0.0, explanation_failed=3, dead=1),
                        "dense": _arm(0.0, explanation_failed=2, rare=2)}, "s", **KW)
    assert c.verdict is Verdict.NOT_CHECKABLE
    assert "sparse 0, dense 0" in c.reason and "llm_min_usable = 2" in c.reason


def test_one_arm_below_the_minimum_is_not_checkable():
    """Catches: a gate on the total instead of on each arm (3 usable sparse, 1 dense)."""
    cfg = Config(**TINY, llm_weights=4, llm_min_usable=2)
    c = llm_claim(cfg, {"sparse": _arm(0.75, ok=3, dead=1), "dense": _arm(0.0, ok=1, explanation_failed=3)},
                  "s", **KW)
    assert c.verdict is Verdict.NOT_CHECKABLE and "sparse 3, dense 1" in c.reason


def test_enough_usable_explanations_are_judged():
    """Catches: a gate that blocks every verdict (equal fractions over enough usable weights do not hold)."""
    cfg = Config(**TINY, llm_weights=4, llm_min_usable=2)
    same = llm_claim(cfg, {"sparse": _arm(0.5, ok=4), "dense": _arm(0.5, ok=4)}, "s", **KW)
    assert same.verdict is Verdict.DOES_NOT_HOLD
    more = llm_claim(cfg, {"sparse": _arm(0.75, ok=4), "dense": _arm(0.25, ok=2, dead=2)}, "s", **KW)
    assert more.verdict is Verdict.HOLDS


def test_malformed_replies_end_to_end_are_not_checkable(tmp_path):
    """Catches the reported case end to end: an explainer whose every reply is malformed (no
    'MATTERS WHEN:' line) gave llm_sparse_vs_dense a verdict."""
    with StubOpenAIServer(reply="I think this weight is about code.") as server:
        cfg = Config(**TINY, backend="openai", model="stub", base_url=server.url, llm_weights=2)
        out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    claim = {c.id: c for c in out.claims}["llm_sparse_vs_dense"]
    assert claim.verdict is Verdict.NOT_CHECKABLE, (claim.verdict, claim.note)
    assert "usable explanations" in claim.reason
