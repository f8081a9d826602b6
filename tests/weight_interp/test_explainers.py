"""Symbolic search, reply parsing and LLM explainers/scorers through the scripted backend."""

import numpy as np
import pytest

from neurips26.backends import BackendError, ScriptedBackend, replies
from neurips26.weight_interp import (
    ExampleSet,
    Explanation,
    ExplanationFailed,
    LLMExplainer,
    LLMScorer,
    SymbolicExplainer,
    SymbolicScorer,
    parse_explanation,
    parse_yes_no,
)
from neurips26.weight_interp.corpus import CharVocabulary

V = CharVocabulary()


def _items(n=200, seed=0):
    """Positives: the token before the item is '('; the labels are exact."""
    rng = np.random.default_rng(seed)
    alphabet = V.encode("abcdefgh(=: \n")
    win = rng.choice(alphabet, (n, 9))
    pos = rng.integers(1, 8, n)
    labels = win[np.arange(n), pos - 1] == V.encode("(")[0]
    return ExampleSet(win, pos, labels, labels.astype(float))


def test_symbolic_explainer_recovers_a_previous_token_rule():
    ex = _items()
    expl = SymbolicExplainer().explain(ex, V)
    assert expl.predicate.feature == "previous" and expl.text == "matters when the previous token is '('"
    held = _items(seed=1)
    pred = SymbolicScorer().predict(expl, held, V)
    assert (pred.astype(bool) == held.labels).all()
    with pytest.raises(ValueError, match="predicate"):
        SymbolicScorer().predict(Explanation("free text", "llm"), held, V)
    with pytest.raises(ExplanationFailed):
        SymbolicExplainer().explain(ExampleSet(held.windows, held.positions, np.ones(len(held), bool),
                                               held.importance), V)


@pytest.mark.parametrize("text, kind", [("", "empty"), ("   ", "empty"), ("I'm sorry, I can't help with that.", "refusal"),
                                         ("It is about brackets.", "malformed"), ("MATTERS WHEN:", "malformed")])
def test_unusable_explanations_are_classified(text, kind):
    with pytest.raises(ExplanationFailed) as e:
        parse_explanation(text)
    assert e.value.kind == kind


def test_parsing_good_replies():
    assert parse_explanation("Sure.\nMATTERS WHEN: the previous char is '('\nextra") == \
        "matters when the previous char is '('"
    assert [parse_yes_no(t) for t in ("Yes.", "no", "maybe", "", "I cannot")] == [1, 0, -1, -1, -1]


def test_llm_explainer_counts_failures_and_retries():
    ex = _items()
    be = ScriptedBackend(replies(["", "MATTERS WHEN: after an opening parenthesis"]))
    llm = LLMExplainer(be, retries=1)
    assert llm.explain(ex, V).text == "matters when after an opening parenthesis"
    assert llm.failures.counts["empty"] == 1 and be.calls == 2
    llm2 = LLMExplainer(ScriptedBackend(replies(["I'm sorry, I cannot do that", BackendError("down")])), retries=1)
    with pytest.raises(ExplanationFailed) as e:
        llm2.explain(ex, V)
    assert e.value.kind == "backend_error" and llm2.failures.counts["refusal"] == 1
    assert "[[" in llm.prompt(ex, V)


def test_llm_scorer_answers_and_counts_unusable_replies():
    held = _items(40, seed=2)

    def policy(msgs):
        item = msgs[-1].content
        before = item.split("[[")[0]
        if "7" in before:                                   # never: keeps the policy simple
            return "??"
        return "yes" if before.endswith("(") else "no"

    sc = LLMScorer(ScriptedBackend(policy))
    pred = sc.predict(Explanation("matters after '('", "llm"), held, V)
    assert (pred == held.labels.astype(int)).all()
    bad = LLMScorer(ScriptedBackend(replies(["maybe", "", BackendError("x")] + ["no"] * 37)))
    pred = bad.predict(Explanation("x", "llm"), held, V)
    assert (pred[:3] == -1).all() and bad.failures.total == 3
