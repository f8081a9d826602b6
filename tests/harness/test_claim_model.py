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
                   kind="paper", source="abstract", object="toy", falsifiable_by="t", interval=interval)
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
                      source="abstract", object="toy", falsifiable_by="t")


def test_over_seeds_judges_the_interval_of_the_seed_mean():
    """Catches a k-of-n vote as the verdict: 2 of 3 seeds above the bound with a mean interval
    that straddles it must be inconclusive, never holds; 3 of 3 seeds above the bound keep the
    verdict every run gave (the union of their points lies above the bound)."""
    tight = C.over_seeds([_seed_claim(v) for v in (0.80, 0.81, 0.82)], [0, 1, 2])
    mixed = C.over_seeds([_seed_claim(v) for v in (0.6, 0.4, 0.8)], [0, 1, 2])
    wide = C.over_seeds([_seed_claim(v) for v in (0.51, 0.9, 2.0)], [0, 1, 2])
    none = C.over_seeds([_seed_claim(v) for v in (0.1, 0.11, 0.12)], [0, 1, 2])
    assert tight.verdict is Verdict.HOLDS and tight.seeds.held == 3 and tight.seeds.n == 3
    assert mixed.verdict is Verdict.INCONCLUSIVE and mixed.seeds.held == 2
    assert wide.seeds.held == 3 and wide.verdict is Verdict.HOLDS and wide.interval == (0.51, 2.0)
    assert none.verdict is Verdict.DOES_NOT_HOLD
    assert mixed.measured == pytest.approx(0.6) and mixed.interval[0] < 0.5 < mixed.interval[1]
    assert "held on 2 of 3 seeds" in mixed.note and "stability" in mixed.note
    for c in (tight, mixed, wide, none):
        assert C.rule_verdict(c.rule, c.measured, c.interval) is c.verdict
    with pytest.raises(ValueError, match="2 claims for 3 seeds"):
        C.over_seeds([_seed_claim(0.6)] * 2, [0, 1, 2])
    with pytest.raises(TypeError):
        C.over_seeds([_seed_claim(0.6)] * 3, [0, 1, 2], min_held=2)  # k-of-n rules are gone


def test_seed_interval_stays_in_the_domain_and_is_never_zero_width_when_seeds_differ():
    """Catches intervals outside the quantity's range (a negative distance, a rate above 1) and
    zero-width intervals over seeds that differ."""
    dist = [C.at_most("w2", "s", measured=v, bound=0.5, reason="r", kind="check", source=SRC,
                      domain=(0, math.inf)) for v in (0.01, 0.02, 0.6)]
    c = C.over_seeds(dist, [0, 1, 2])
    assert c.interval[0] >= 0 and c.interval[1] > c.interval[0]
    rate = [C.at_least("r", "s", measured=v, bound=0.5, reason="r", kind="check", source=SRC,
                       domain=(0, 1)) for v in (0.99, 1.0, 0.7)]
    c = C.over_seeds(rate, [0, 1, 2])
    assert c.interval[1] <= 1 and c.interval[1] > c.interval[0]
    with pytest.raises(ValueError, match="outside the quantity's domain"):
        C.at_least("r", "s", measured=1.2, bound=0.5, reason="r", kind="check", source=SRC, domain=(0, 1))
    with pytest.raises(ValueError, match="outside the quantity's domain"):
        C.at_least("r", "s", measured=0.9, bound=0.5, reason="r", kind="check", source=SRC, domain=(0, 1),
                   interval=(0.7, 1.1))


def test_a_verdict_that_contradicts_its_interval_is_refused():
    """Catches a hand-written verdict: Claim refuses 'holds' when its interval straddles the rule."""
    with pytest.raises(ValueError, match="contradicts its rule"):
        Claim("x", "s", 1, 1.0, "t", "r", Verdict.HOLDS, kind="check", source=SRC, interval=(0.5, 2.0),
              rule={"op": "at_least", "bound": 1.0})
    ok = Claim("x", "s", 1, 1.0, "t", "r", Verdict.INCONCLUSIVE, kind="check", source=SRC,
               interval=(0.5, 2.0), rule={"op": "at_least", "bound": 1.0})
    assert ok.verdict is Verdict.INCONCLUSIVE
    with pytest.raises(TypeError, match="no interval"):
        C.check("c", "s", measured=1, holds=True, tolerance="t", reason="r", kind="check", source=SRC,
                interval=(0, 1))


def test_composite_conditions_over_seeds():
    """An invariant (kind check) must hold on every seed; a composite paper claim keeps the verdict
    every seed gave, and when seeds disagree is judged on the fraction of seeds (Clopper-Pearson)."""
    def chk(ok, kind="check", source=SRC):
        return C.check("c", "s", measured=ok, holds=ok, tolerance="t", reason="r", kind=kind, source=source,
                       object="toy", falsifiable_by="t")
    assert C.over_seeds([chk(True)] * 3, [0, 1, 2]).verdict is Verdict.HOLDS
    assert C.over_seeds([chk(True), chk(False), chk(True)], [0, 1, 2]).verdict is Verdict.DOES_NOT_HOLD
    paper = C.over_seeds([chk(True, "paper", "abstract")] * 3, [0, 1, 2])
    assert paper.verdict is Verdict.HOLDS
    mixed = C.over_seeds([chk(True, "paper", "abstract"), chk(False, "paper", "abstract"),
                          chk(True, "paper", "abstract")], [0, 1, 2])
    assert mixed.verdict is Verdict.INCONCLUSIVE and mixed.measured == pytest.approx(2 / 3)


def test_tuned_claims_are_exploratory_until_confirmed():
    """Catches a tuned claim counted as confirmation: it is exploratory on development seeds and
    only `confirmed` (role confirmation) makes it count."""
    dev = C.at_least("g", "s", measured=0.9, bound=0.5, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t",
                     tuned_after_look="bound lowered from 0.7 after a first run")
    assert not dev.preregistered and dev.exploratory
    conf = [C.at_least("g", "s", measured=v, bound=0.5, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t",
                       tuned_after_look="bound lowered from 0.7 after a first run") for v in (0.8, 0.82)]
    c = C.confirmed(dev, conf, [101, 102])
    assert c.role == "confirmation" and not c.exploratory and c.verdict is Verdict.HOLDS
    assert "101" in c.note
    back = Claim.from_dict(json.loads(json.dumps(c.to_dict())))
    assert back.role == "confirmation" and back.tuned_after_look.startswith("bound lowered")
    with pytest.raises(ValueError, match="tuned_after_look"):
        Claim("x", "s", 1, 1.0, "t", "r", Verdict.HOLDS, kind="check", source=SRC, preregistered=False)


def test_failed_backend_calls_make_claims_not_checkable():
    """Catches a verdict that rests on failed model calls."""
    cs = [C.at_least("a", "s", measured=0.0, bound=0.0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t")]
    use = C.BackendUse(calls=40, failed=40, what="openai at http://127.0.0.1:9/v1")
    out = C.unless_backend_ok(cs, use)
    assert out[0].verdict is Verdict.NOT_CHECKABLE and "40 of 40 backend calls failed" in out[0].reason
    assert use.too_many_failed
    assert C.unless_backend_ok(cs, C.BackendUse(calls=40, failed=0)) == cs
    assert not C.BackendUse(calls=100, failed=5).too_many_failed


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
        C.at_least("a", "s", measured=1.0, bound=0.0, reason="r", kind="paper", source="inferred: x", object="toy", falsifiable_by="t")
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
    assert back.verdict is Verdict.INCONCLUSIVE and back.rule == c.rule


def test_counts_by_kind_puts_paper_first():
    cs = [C.at_least("a", "s", measured=1, bound=0, reason="r", kind="check", source=SRC),
          C.at_least("b", "s", measured=1, bound=0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
          C.at_least("c", "s", measured=-1, bound=0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t")]
    counts = C.counts_by_kind(cs)
    assert list(counts) == ["paper", "check"]
    assert counts["paper"]["holds"] == 1 and counts["paper"]["does_not_hold"] == 1


def test_as_not_checkable_keeps_identity_and_drops_the_verdict():
    """Catches a precondition gate that loses what the report shows for a claim (kind, source,
    paper value, note, tuning record) or keeps a measured value behind a not-checkable verdict."""
    c = C.at_most("x", "stmt", measured=0.3, bound=1.0, reason="r", kind="reconstruction", source="inferred: s",
                  paper_value="superior", note="n", tuned_after_look="changed", domain=(0.0, 1.0))
    g = C.as_not_checkable(c, reason="model untrained", full_scale="trains longer")
    assert g.verdict is C.Verdict.NOT_CHECKABLE and g.measured is None and g.reason == "model untrained"
    assert (g.id, g.statement, g.kind, g.source, g.paper_value) == (c.id, c.statement, c.kind, c.source, c.paper_value)
    assert g.tuned_after_look == "changed" and "trains longer" in g.note and g.note.endswith("n")
    with pytest.raises(ValueError, match="full configuration"):
        C.as_not_checkable(c, reason="r", full_scale=" ")


# --------------------------------------------------------------------------- evidence and seeds (issue: verdicts a researcher can cite)

def test_a_paper_claim_says_what_it_was_tested_on_and_how_it_could_fail():
    """Catches a paper claim that could not fail slipping into the headline: without ``object``
    or without a control / falsifiable_by sentence the claim model refuses it; checks and
    reconstructions need neither; a not-checkable paper claim needs its object only."""
    with pytest.raises(ValueError, match="object="):
        C.at_least("p", "s", measured=1.0, bound=0.0, reason="r", kind="paper", source="abstract",
                   control="frozen weights")
    with pytest.raises(ValueError, match="control="):
        C.at_least("p", "s", measured=1.0, bound=0.0, reason="r", kind="paper", source="abstract", object="toy")
    with pytest.raises(ValueError, match="object='lab'"):
        C.at_least("p", "s", measured=1.0, bound=0.0, reason="r", kind="check", source=SRC, object="lab")
    ok = C.at_least("p", "s", measured=1.0, bound=0.0, reason="r", kind="paper", source="abstract",
                    object="real", control="frozen weights, same seeds")
    assert ok.object == "real" and ok.control.startswith("frozen")
    C.at_least("c", "s", measured=1.0, bound=0.0, reason="r", kind="check", source=SRC)
    nc = C.not_checkable("p", "s", paper_value=1, reason="no GPT-5 offline", full_scale="GPT-5",
                         kind="paper", source="abstract", object="real")
    gated = C.as_not_checkable(ok, reason="object missing", full_scale="more steps")
    assert nc.object == "real" and gated.control == ok.control and gated.object == "real"
    back = Claim.from_dict(json.loads(json.dumps(ok.to_dict())))
    assert back.object == "real" and back.control == ok.control
    old = ok.to_dict()
    del old["object"], old["control"], old["falsifiable_by"]
    assert Claim.from_dict(old).object is None  # older results still read


def _iv_claim(m, lo, hi, bound=0.5, cid="g"):
    return C.at_least(cid, "s", measured=m, bound=bound, interval=(lo, hi), reason="r", kind="paper",
                      source="abstract", object="toy", falsifiable_by="t")


def test_identical_runs_keep_the_single_run_verdict_and_interval():
    """Catches zero-width intervals over identical runs (a deterministic system or one that ignores
    the seed): two seeds of the same run give exactly the single-run claim, whatever its verdict;
    the over-seeds claim keeps object and control."""
    for m, lo, hi in ((0.8, 0.6, 1.0), (0.55, 0.3, 0.8), (0.2, 0.1, 0.3)):
        one = _iv_claim(m, lo, hi)
        two = C.over_seeds([_iv_claim(m, lo, hi), _iv_claim(m, lo, hi)], [7, 23])
        assert two.verdict is one.verdict and two.interval == one.interval and two.measured == one.measured
        assert "deterministic" in two.note and two.object == "toy" and two.falsifiable_by == "t"
    points = C.over_seeds([_seed_claim(0.45)] * 2, [7, 23])
    assert points.verdict is Verdict.DOES_NOT_HOLD and points.interval is None


def test_over_seeds_never_contradicts_runs_that_agree_and_keeps_each_runs_uncertainty():
    """Catches verdicts manufactured by dropping each run's own interval: two inconclusive runs
    with close means must stay inconclusive (a Student-t interval of two close means would hold);
    two runs that both hold keep holds; the pooled half-width is never below the runs' own."""
    both_unsure = C.over_seeds([_iv_claim(0.60, 0.45, 0.75), _iv_claim(0.61, 0.46, 0.76)], [7, 23])
    assert both_unsure.verdict is Verdict.INCONCLUSIVE
    assert both_unsure.interval[1] - both_unsure.interval[0] >= 0.3 - 1e-9
    both_hold = C.over_seeds([_iv_claim(2.0, 1.0, 3.0), _iv_claim(11.0, 10.0, 12.0)], [7, 23])
    assert both_hold.verdict is Verdict.HOLDS and both_hold.interval == (1.0, 12.0)
    both_fail = C.over_seeds([_iv_claim(0.1, 0.0, 0.2), _iv_claim(0.3, 0.2, 0.4)], [7, 23])
    assert both_fail.verdict is Verdict.DOES_NOT_HOLD
    lo, hi = C.pooled_interval([1.0, 1.0], [(0.5, 1.5), (0.8, 1.2)])
    assert hi - lo == pytest.approx(2 * math.sqrt((0.25 + 0.04) / 2))


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_non_finite_value_is_named_never_raised(bad):
    """Catches an exception (or a verdict) from a non-finite measurement: with a domain, one run
    gives 'does not hold … not a finite number'; over seeds the seed with the bad value is named."""
    one = C.at_least("w", "s", measured=bad, bound=0.0, reason="r", kind="check", source=SRC, domain=(0, math.inf))
    assert one.verdict is Verdict.DOES_NOT_HOLD and "not a finite number" in one.note
    per = [C.at_least("w", "s", measured=v, bound=0.0, reason="r", kind="check", source=SRC,
                      domain=(0, math.inf), interval=iv) for v, iv in ((1.0, (0.5, 1.5)), (bad, None))]
    many = C.over_seeds(per, [7, 23])
    assert many.verdict is Verdict.DOES_NOT_HOLD and "seed(s) [23]" in many.note


def test_a_non_finite_first_seed_still_fails_the_numeric_claim():
    """Catches a numeric claim judged as a composite vote when the *first* seed's value is not a
    finite number (its rule is dropped): it must read 'does not hold', naming the seed, never an
    inconclusive fraction of seeds."""
    per = [C.at_least("w", "s", measured=v, bound=0.0, reason="r", kind="check", source=SRC)
           for v in (math.nan, 1.0, 2.0)]
    many = C.over_seeds(per, [7, 8, 9])
    assert many.verdict is Verdict.DOES_NOT_HOLD and "seed(s) [7]" in many.note


def test_nested_composite_claims_combine_in_any_order():
    """Catches an order-dependent verdict when a composite claim already combined over seeds (a
    vote fraction with a rule) meets one whose seeds all agreed (a boolean): it read 'does not hold
    … not a finite number' in one order and inconclusive in the other. Composite runs that agree
    are never called deterministic."""
    def chk(ok):
        return C.check("c", "s", measured=ok, holds=ok, tolerance="t", reason="r", kind="reconstruction",
                       source="inferred: x")
    a = C.over_seeds([chk(True), chk(True), chk(False)], [0, 1, 2])
    b = C.over_seeds([chk(True)] * 3, [0, 1, 2])
    assert a.verdict is Verdict.INCONCLUSIVE and b.verdict is Verdict.HOLDS
    ab, ba = C.over_seeds([a, b], [7, 23]), C.over_seeds([b, a], [23, 7])
    assert ab.verdict is ba.verdict is Verdict.INCONCLUSIVE
    same = C.over_seeds([chk(True), chk(True)], [7, 23])
    assert same.verdict is Verdict.HOLDS and "deterministic" not in same.note


def test_results_written_before_objects_existed_still_combine(tmp_path):
    """Catches ``neurips26 report`` crashing on older results: a stored paper claim without
    ``object`` reads, and combining it over seeds or confirming it does not raise."""
    d = C.at_least("g", "s", measured=1.0, bound=0.5, reason="r", kind="paper", source="abstract",
                   object="toy", falsifiable_by="t", tuned_after_look="x").to_dict()
    del d["object"], d["control"], d["falsifiable_by"]
    old = [Claim.from_dict(d) for _ in range(3)]
    assert C.over_seeds(old, [0, 1, 2]).verdict is Verdict.HOLDS
    assert C.confirmed(old[0], old, [101, 102, 103]).role == "confirmation"
