"""Every verdict of a quick run of all nineteen systems agrees with its interval.

This is the product's promise, checked end to end on what the main job writes (slow: it runs the
main job, about 15 CPU-minutes; `.ci/run` runs it):

- every claim with a structured rule has the verdict the one rule gives on its interval
  (:func:`neurips26.harness.claims.rule_verdict`) — so no k-of-n vote, no hand-written verdict;
- no interval leaves the quantity's declared domain, and none has zero width over seeds that differ;
- every claim records whether it was preregistered or tuned after a look, and a tuned claim counts
  in the headline only through its confirmation seeds;
- every paper claim names its object and a control or how it could fail; the attention list
  shows exactly the counted verdicts;
- and the same over ``--seeds 0,1,2`` for mdp-types, search-agent-attacks, weight-interp and
  flood-bifiltration (the seeds summary and the report's combined rows), and over fresh seeds
  ``7,23`` for lr-schedules, feature-learning, flood-bifiltration and path-integration: no
  verdict that both single runs contradict.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from neurips26.harness.catalogue import PAPERS, load_experiment
from neurips26.harness.claims import Claim, Verdict, rule_verdict
from neurips26.harness.report import collect
from neurips26.harness.runner import SystemSpec, reproduce

pytestmark = pytest.mark.slow

MULTI_SEED = ("mdp_types", "search_agent_attacks", "weight_interp", "flood_bifiltration")
#: Systems whose two-seed runs once manufactured verdicts (zero-width intervals over identical runs,
#: each run's own interval dropped).
TWO_SEED = ("lr_schedules", "feature_learning", "flood_bifiltration", "path_integration")


def _problems(c: Claim, where: str) -> list[str]:
    out = []
    if c.rule is not None and c.verdict is not Verdict.NOT_CHECKABLE:
        expected = rule_verdict(c.rule, c.measured, c.interval)
        if expected is not None and expected is not c.verdict:
            out.append(f"{where}: verdict {c.verdict.value} but the rule gives {expected.value}")
    if c.domain is not None and c.interval is not None:
        lo, hi = c.domain
        if c.interval[0] < lo - 1e-9 * max(1, abs(lo)) or c.interval[1] > hi + 1e-9 * max(1, abs(hi)):
            out.append(f"{where}: interval {c.interval} outside domain {c.domain}")
    if c.seeds is not None and "at least" in (c.seeds.rule or ""):
        out.append(f"{where}: k-of-n seed rule {c.seeds.rule!r}")
    if c.seeds is not None and c.interval is not None and len(set(map(str, c.seeds.values))) > 1 \
            and c.interval[0] == c.interval[1]:
        out.append(f"{where}: zero-width interval over seeds that differ")
    if not c.preregistered and not c.tuned_after_look:
        out.append(f"{where}: tuned without saying what changed")
    if c.kind is not None and c.kind.value == "paper":
        if c.object is None:
            out.append(f"{where}: paper claim without object")
        if c.verdict is not Verdict.NOT_CHECKABLE and not (c.control or c.falsifiable_by):
            out.append(f"{where}: paper claim with neither a control nor a falsifiable_by sentence")
    return out


def _check_folder(out: Path) -> list[str]:
    problems = []
    for path in sorted(out.glob("*/*/result.json")):
        d = json.loads(path.read_text())
        if d["status"] != "ok":
            problems.append(f"{path.parent}: status {d['status']}: {d['error'].strip().splitlines()[-1:]}")
        for cd in d["claims"]:
            problems += _problems(Claim.from_dict(cd), f"{d['system']}/{cd['id']} seed {d['seed']}")
    for path in sorted(out.glob("*/*-seeds-summary.json")):
        s = json.loads(path.read_text())
        for cd in s["claims"]:
            problems += _problems(Claim.from_dict(cd), f"{s['system']}/{cd['id']} over seeds")
    data = collect(out)
    for sec in data.with_results:
        for row in sec.rows:
            shown = row.shown_claim
            problems += _problems(shown, f"report {sec.paper.system}/{row.claim.id}")
            if row.tuned and row.counted is not None and row.confirmation is None:
                problems.append(f"report {sec.paper.system}/{row.claim.id}: tuned claim counted without confirmation")
            seed_verdicts = {c.verdict for _, c in row.per_seed}
            if len(row.per_seed) > 1 and len(seed_verdicts) == 1 and row.verdict not in seed_verdicts:
                (v,) = seed_verdicts
                if v is not Verdict.INCONCLUSIVE or row.verdict is not Verdict.NOT_CHECKABLE:
                    problems.append(f"report {sec.paper.system}/{row.claim.id}: every seed gave {v.value}, "
                                    f"over seeds {row.verdict.value}")
            if (len(row.per_seed) > 1 and shown.interval is not None and shown.interval[0] == shown.interval[1]
                    and any(c.interval is not None and c.interval[0] < c.interval[1] for _, c in row.per_seed)):
                problems.append(f"report {sec.paper.system}/{row.claim.id}: zero-width interval over seeds "
                                "whose own intervals are not")
    att = {(r.system, r.claim.id) for r in data.attention}
    counted = {(s.paper.system, r.claim.id) for s in data.with_results for r in s.rows
               if r.counted is not None and r.counted is not Verdict.HOLDS}
    if att != counted:
        problems.append(f"attention list differs from the counted verdicts: {sorted(att ^ counted)}")
    return problems


def _specs(names):
    papers = [p for p in PAPERS if p.implemented and (names is None or p.system in names)]
    return [SystemSpec(p.system, load_experiment(p), {}) for p in papers]


def test_every_quick_verdict_agrees_with_its_interval(tmp_path):
    specs = _specs(None)
    assert len(specs) == 19
    reproduce(specs, seeds=[0], out=tmp_path, device="cpu")
    problems = _check_folder(tmp_path)
    assert not problems, "\n".join(problems)
    totals = collect(tmp_path).totals
    assert sum(totals["paper"].values()) > 0 and not math.isnan(sum(totals["paper"].values()))


def test_verdicts_over_three_seeds_agree_with_their_intervals(tmp_path):
    reproduce(_specs(MULTI_SEED), seeds=[0, 1, 2], out=tmp_path, device="cpu")
    assert len(list(tmp_path.glob("*/*-seeds-summary.json"))) == len(MULTI_SEED)
    problems = _check_folder(tmp_path)
    assert not problems, "\n".join(problems)


def test_two_fresh_seeds_never_contradict_both_single_runs(tmp_path):
    """Catches verdicts manufactured by a multi-seed run: over seeds 7 and 23 no verdict differs
    from the one both single runs gave, and no interval has zero width over runs with intervals."""
    reproduce(_specs(TWO_SEED), seeds=[7, 23], out=tmp_path, device="cpu", confirm=False)
    problems = _check_folder(tmp_path)
    assert not problems, "\n".join(problems)
