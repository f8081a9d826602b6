"""Scorer (AbsenceBench rules, three matchers), task generators and rendering."""

import pytest

from neurips26.text_uncanny_valley import (
    math_correct,
    math_items,
    needle_items,
    omission_items,
    render,
    render_math,
    reported,
    score,
    sequence_items,
)


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


def test_whole_line_matching():
    """Catches substring matching (issue 33 item 2): "2" was found inside "12", so answering "12" to a
    list 1..20 missing 2 and 12 scored F1 0.800 (right: 2·1/(2·1+0+1) = 0.667) under every matcher,
    and 38 of 500 perfect answers to sequence_items(500, seed=0) scored below 1."""
    cands = [str(i) for i in range(1, 21)]
    for m in ("exact", "normalised", "fragment_tolerant"):
        assert score(["2", "12"], cands, "12", m).f1 == pytest.approx(2 / 3)
        for it in sequence_items(500, seed=0):
            assert score(it.targets, it.candidates, "\n".join(it.targets), m).f1 == 1.0
        for it in omission_items(50, 1) + needle_items(50, 2):
            assert score(it.targets, it.candidates, "\n".join(it.targets), m).f1 == 1.0
    # list markers and quotes around a reported line are not part of it
    assert score(["beta line"], ["alpha line", "beta line"], "- beta line", "exact").f1 == 1.0
    assert score(["beta line"], ["alpha line", "beta line"], '1. "beta line"', "normalised").f1 == 1.0
    # a line inside a longer response line is not reported
    assert not reported("beta line", "alpha line, beta line and more", "normalised")


def test_blank_candidate_lines_are_never_reported():
    """Catches the exact matcher reporting a blank candidate line ('' is a substring of anything):
    a stanza break among the candidates must not count as a false positive."""
    s = score([], ["alpha", "", "   ", "beta"], "alpha\n\nbeta", "exact")
    assert (s.tp, s.fp) == (0, 2) and s.f1 == 0.0  # 1 - FP / #non-blank candidates = 1 - 2/2
    assert score([], ["alpha", "", "beta"], "", "exact").f1 == 1.0
    assert score(["alpha"], ["alpha", ""], "something\n\n", "exact").fp == 0
    with pytest.raises(ValueError, match="blank"):
        score([" "], [" ", "x"], "x", "exact")


class _CharLM:
    """A fake local model: one token per character, surprisal 5 inside ``hot`` text, else 1."""

    def __init__(self, hot: str) -> None:
        self.hot = hot

    def chat_prompt(self, messages):
        return "\n".join(m["content"] for m in messages) + "\nassistant:"

    def token_surprisal(self, text):
        hot = [False] * len(text)
        start = text.rfind(self.hot)
        for i in range(start, start + len(self.hot)):
            hot[i] = True
        return [(i, i + 1) for i in range(1, len(text))], [5.0 if hot[i] else 1.0 for i in range(1, len(text))]


def test_surprisal_subject_answers_the_most_surprising_recitation_line():
    """Catches a per-line surprisal readout that maps tokens to the wrong lines (e.g. to the
    original poem's copy instead of the recitation, or off by one line)."""
    from neurips26.text_uncanny_valley.subjects import SurprisalSubject
    from neurips26.text_uncanny_valley.tasks import needle_items, render

    item = needle_items(1, 3, n_needles=1, doc_lines=6)[0]
    for p in (0.0, 0.5, 1.0):
        r = render(item, p, 0)
        needle = r.shown[item.targets[0]]
        sub = SurprisalSubject(_CharLM(needle))
        assert sub(r) == needle
        sur = sub.line_surprisal(r)
        assert max(range(len(sur)), key=sur.__getitem__) == list(item.recitation).index(item.targets[0])
