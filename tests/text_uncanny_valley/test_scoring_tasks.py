"""Scorer (AbsenceBench rules, three matchers), task generators and rendering."""

import pytest

from neurips26.text_uncanny_valley import (math_correct, math_items, needle_items, omission_items, render,
                                           render_math, reported, score, sequence_items)


def test_absencebench_micro_f1():
    cands = ["alpha line one", "beta line two", "gamma line three", "delta line four"]
    targets = ["beta line two", "delta line four"]
    assert score(targets, cands, "beta line two\ndelta line four", "exact").f1 == 1.0
    s = score(targets, cands, "beta line two\nalpha line one", "exact")
    assert (s.tp, s.fp, s.fn) == (1, 1, 1) and s.f1 == pytest.approx(0.5)  # 2·1/(2·1+1+1)
    assert score(targets, cands, "", "exact").f1 == 0.0
    assert score([], cands, "alpha line one", "exact").f1 == pytest.approx(0.75)  # 1 - FP/#lines
    with pytest.raises(ValueError, match="candidates"):
        score(["zeta"], cands, "", "exact")
    with pytest.raises(ValueError, match="matcher="):
        reported("a", "a", "fuzzy")


def test_fragmented_echo_pitfall():
    line = "The wind blows over the hill"
    echo = "Th e wi nd bl ows o ver the hi ll"
    assert not reported(line, echo, "exact")
    assert reported(line, echo, "normalised") and reported(line, echo, "fragment_tolerant")
    assert reported(line, "Th e wnd bl ows o ver the hi ll", "fragment_tolerant")  # a dropped letter
    assert not reported(line, "Th e wnd bl ows o ver the hi ll", "normalised")


def test_items_and_rendering():
    for it in omission_items(20, 3):
        assert it.targets and set(it.targets) <= set(it.original)
        assert len(it.recitation) + len(it.targets) == len(it.original)
    it = needle_items(1, 4, n_needles=3)[0]
    assert len(it.recitation) == len(it.original) + 3
    r = render(it, 0.5, 9)
    user = r.messages[-1]["content"]
    for ln in it.original:  # the same line reads the same in the original and the recitation
        assert user.count(r.shown[ln]) >= 2
    assert "What lines did I add?" in user  # the question stays clean by default
    icl = render(it, 0.5, 9, icl_examples=[r], icl_answers=["x"])
    assert [m["role"] for m in icl.messages] == ["system", "user", "assistant", "user"]
    seq = sequence_items(2, 0)[0]
    assert render(seq, 1.0, 0).shown[seq.original[3]] == seq.original[3]  # digits are not words


def test_math_items_and_fragmented_digits():
    it = math_items(1, 0)[0]
    assert str(it.answer) in str(it.answer)
    assert math_correct(it.answer, f"The answer is {it.answer}.")
    assert math_correct(123, "1 2 3")
    assert not math_correct(123, "12")
    assert "h a s" in render_math(it, 1.0)[1]["content"]


@pytest.mark.parametrize("n", [0, -1, 10**9, 2.5, True])
def test_bad_counts(n):
    with pytest.raises(ValueError, match="n="):
        needle_items(n)
