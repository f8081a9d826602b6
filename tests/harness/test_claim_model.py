"""The claim model: kinds, sources, interval-based verdicts, seeds and honest citations."""

from __future__ import annotations

import json
import math

import pytest

from neurips26.harness import claims as C
from neurips26.harness.claims import Claim, Kind, Verdict

SRC = "inferred: test"


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_non_finite_never_holds(bad):
    # The docstring promises non-finite values never hold, for ±inf as well as NaN.
    for claim in (
        C.at_least("a", "s", measured=bad, bound=0.0, reason="r", kind="check", source=SRC),
        C.at_most("a", "s", measured=bad, bound=0.0, reason="r", kind="check", source=SRC),
        C.within("a", "s", measured=bad, low=-1e308, high=1e308, reason="r", kind="check", source=SRC),
        C.close("a", "s", measured=bad, target=0.0, abs_tol=1e308, reason="r", kind="check", source=SRC),
    ):
        assert claim.verdict is Verdict.DOES_NOT_HOLD, claim


def test_non_finite_interval_never_holds():
    c = C.at_least("a", "s", measured=1.0, bound=0.0, reason="r", kind="check", source=SRC,
                   interval=(0.5, math.inf))
    assert c.verdict is Verdict.DOES_NOT_HOLD


@pytest.mark.parametrize("interval, expected", [
    ((0.6, 0.9), Verdict.HOLDS),            # entirely above the bound
    ((0.2, 0.4), Verdict.DOES_NOT_HOLD),    # entirely below
    ((0.4, 0.6), Verdict.INCONCLUSIVE),     # straddles it
])
def test_at_least_judges_the_interval(interval, expected):
    c = C.at_least("a", "s", measured=sum(interval) / 2, bound=0.5, reason="r",
                   kind="paper", source="abstract", interval=interval)
    assert c.verdict is expected


@pytest.mark.parametrize("interval, expected", [
    ((0.1, 0.4), Verdict.HOLDS), ((0.6, 0.7), Verdict.DOES_NOT_HOLD), ((0.4, 0.6), Verdict.INCONCLUSIVE)])
def test_at_most_judges_the_interval(interval, expected):
    c = C.at_most("a", "s", measured=sum(interval) / 2, bound=0.5, reason="r", kind="check",
                  source=SRC, interval=interval)
    assert c.verdict is expected


@pytest.mark.parametrize("interval, expected", [
    ((0.95, 1.05), Verdict.HOLDS),          # inside the band 1 ± 0.1
    ((1.2, 1.3), Verdict.DOES_NOT_HOLD),    # above it
    ((0.7, 0.8), Verdict.DOES_NOT_HOLD),    # below it
    ((0.85, 1.15), Verdict.INCONCLUSIVE),   # wider than the band: cannot tell
])
def test_close_and_within_judge_the_interval(interval, expected):
    m = sum(interval) / 2
    c1 = C.close("a", "s", measured=m, target=1.0, abs_tol=0.1, reason="r", kind="check",
                 source=SRC, interval=interval)
    c2 = C.within("a", "s", measured=m, low=0.9, high=1.1, reason="r", kind="check",
                  source=SRC, interval=interval)
    assert c1.verdict is expected and c2.verdict is expected


def test_one_seed_interval_of_zero_one_is_never_a_firm_verdict():
    # A proportion measured on few trials has a wide interval: it must not give a firm verdict.
    p, (lo, hi) = C.proportion_interval(1, 2)
    c = C.at_least("a", "s", measured=p, bound=0.5, reason="r", kind="check", source=SRC,
                   interval=(lo, hi))
    assert c.verdict is Verdict.INCONCLUSIVE


def test_mean_interval_matches_student_t():
    mean, (lo, hi) = C.mean_interval([1.0, 2.0, 3.0])
    # t_{0.975, 2} = 4.3027, s = 1, n = 3 → half-width 4.3027 / sqrt(3)
    assert mean == pytest.approx(2.0)
    assert hi - mean == pytest.approx(4.302652729911275 / math.sqrt(3), rel=1e-9)
    assert mean - lo == pytest.approx(hi - mean)
    with pytest.raises(ValueError, match="at least 2"):
        C.mean_interval([1.0])
    with pytest.raises(ValueError, match="finite"):
        C.mean_interval([1.0, math.nan])


def test_proportion_interval_is_clopper_pearson():
    p, (lo, hi) = C.proportion_interval(0, 10)
    assert p == 0.0 and lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-9)  # exact upper bound for k = 0
    with pytest.raises(ValueError, match="successes=11"):
        C.proportion_interval(11, 10)


def _seed_claim(value, bound=0.5):
    return C.at_least("gain", "s", measured=value, bound=bound, reason="r", kind="paper",
                      source="abstract")


def test_over_seeds_unanimous_rule():
    held = C.over_seeds([_seed_claim(v) for v in (0.6, 0.7, 0.8)], [0, 1, 2])
    mixed = C.over_seeds([_seed_claim(v) for v in (0.6, 0.4, 0.8)], [0, 1, 2])
    none = C.over_seeds([_seed_claim(v) for v in (0.1, 0.2, 0.3)], [0, 1, 2])
    assert held.verdict is Verdict.HOLDS and held.seeds.held == 3 and held.seeds.n == 3
    assert mixed.verdict is Verdict.INCONCLUSIVE and mixed.seeds.held == 2
    assert none.verdict is Verdict.DOES_NOT_HOLD
    assert held.measured == pytest.approx(0.7) and held.interval[0] < 0.7 < held.interval[1]
    assert "held in 2 of 3 seeds" in mixed.note


def test_over_seeds_declared_minimum():
    c = C.over_seeds([_seed_claim(v) for v in (0.6, 0.4, 0.8)], [0, 1, 2], min_held=2)
    assert c.verdict is Verdict.HOLDS
    c = C.over_seeds([_seed_claim(v) for v in (0.6, 0.4, 0.3)], [0, 1, 2], min_held=2)
    assert c.verdict is Verdict.DOES_NOT_HOLD
    with pytest.raises(ValueError, match="min_held=4"):
        C.over_seeds([_seed_claim(0.6)] * 3, [0, 1, 2], min_held=4)
    with pytest.raises(ValueError, match="2 claims for 3 seeds"):
        C.over_seeds([_seed_claim(0.6)] * 2, [0, 1, 2])


def test_check_none_is_inconclusive():
    c = C.check("a", "s", measured=[1, 2], holds=None, tolerance="t", reason="r", kind="check", source=SRC)
    assert c.verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize("text", ["see brief §4 (iii)", "as in issue item 7", "by Theorem 3",
                                  "Figure 2 of the paper", "Section 4.1", "paper §5"])
def test_unread_or_unshipped_citations_are_refused(text):
    with pytest.raises(ValueError, match="cites"):
        C.at_least("a", "s", measured=1.0, bound=0.0, reason=text, kind="check", source=SRC)


def test_paper_claims_need_a_read_source_and_a_known_kind():
    with pytest.raises(ValueError, match="abstract or first page"):
        C.at_least("a", "s", measured=1.0, bound=0.0, reason="r", kind="paper", source="inferred: x")
    with pytest.raises(ValueError, match="source is empty"):
        C.at_least("a", "s", measured=1.0, bound=0.0, reason="r", kind="check", source="")
    with pytest.raises(ValueError, match="kind='theory'"):
        C.at_least("a", "s", measured=1.0, bound=0.0, reason="r", kind="theory", source=SRC)


def test_round_trip_through_json_keeps_kind_source_interval_and_seeds():
    c = C.over_seeds([_seed_claim(v) for v in (0.6, 0.4, 0.8)], [0, 1, 2])
    back = Claim.from_dict(json.loads(json.dumps(c.to_dict())))
    assert back.kind is Kind.PAPER and back.source == "abstract"
    assert back.interval == pytest.approx(c.interval)
    assert back.seeds.held == 2 and back.seeds.seeds == [0, 1, 2]
    assert back.verdict is Verdict.INCONCLUSIVE


def test_counts_by_kind_puts_paper_first():
    cs = [C.at_least("a", "s", measured=1, bound=0, reason="r", kind="check", source=SRC),
          C.at_least("b", "s", measured=1, bound=0, reason="r", kind="paper", source="abstract"),
          C.at_least("c", "s", measured=-1, bound=0, reason="r", kind="paper", source="abstract")]
    counts = C.counts_by_kind(cs)
    assert list(counts) == ["paper", "check"]
    assert counts["paper"]["holds"] == 1 and counts["paper"]["does_not_hold"] == 1
