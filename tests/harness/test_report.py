"""report.html and the `report`/`show`/`--version` commands: value formatting, counts by kind and
verdict, seed groups, stale/unreadable/failed results, exit codes, self-containment."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness import claims as C
from neurips26.harness.catalogue import PAPERS
from neurips26.harness.claims import Claim, Verdict
from neurips26.harness.report import (
    Run,
    _claim_rows,
    build_report,
    collect,
    counts_text,
    format_interval,
    format_number,
    format_rule,
    format_seconds,
    format_value,
    paper_link,
    scan_results,
    seed_groups,
)
from neurips26.harness.results import Result
from neurips26.harness.runner import code_version

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- formatting

@pytest.mark.parametrize("x, text", [
    (0.123456, "0.1235"), (3.0, "3"), (-0.5, "−0.5"), (12.0, "12"), (0.001234, "0.001234"),
    (123456.7, "1.235 × 10⁵"), (2.5e-05, "2.5 × 10⁻⁵"), (-2.5e-05, "−2.5 × 10⁻⁵"),
    (12345.6, "12346"), (1e-300, "1 × 10⁻³⁰⁰"), (0.0, "0"), (7, "7"), (12_345_678, "1.235 × 10⁷"),
    (float("nan"), "NaN"), (float("inf"), "∞"), (float("-inf"), "−∞"), (True, "yes"), (False, "no"),
])
def test_format_number(x, text):
    assert format_number(x) == text


def test_format_number_rejects_zero_digits():
    with pytest.raises(ValueError, match="digits=0"):
        format_number(1.0, digits=0)


def test_format_interval_widens_precision_until_the_ends_differ():
    assert format_interval((0.48123, 0.5412)) == "[0.481, 0.541]"
    assert format_interval((0.50012, 0.50034)) == "[0.5001, 0.5003]"
    assert format_interval((1.0, 1.0)) == "[1, 1]"
    assert format_interval(None) == ""
    assert format_interval([-1e-6, 2e-6]) == "[−1 × 10⁻⁶, 2 × 10⁻⁶]"


def test_format_value_lists_dicts_text_and_none():
    assert format_value(None) == "—"
    assert format_value([0.123456, 2, "nan"]) == "[0.1235, 2, NaN]"
    long = format_value(list(range(20)))
    assert long.startswith("[0, 1, 2") and "…" in long and long.endswith("19] (20 values)")
    matrix = format_value([[float(i + j) for j in range(50)] for i in range(3)])
    assert matrix == "3×50 array, range [0, 51]"
    assert format_value([[1, 2], [3, 4]]) == "[[1, 2], [3, 4]]"
    assert format_value({"a": 0.123456789, "b": None}) == "a: 0.1235; b: —"
    many = format_value({f"k{i}": i for i in range(12)})
    assert many.endswith("+4 more") and "k7: 7" in many and "k8" not in many
    assert format_value({"outer": {"x": 1}}) == "outer: {x: 1}"
    assert format_value("plain text") == "plain text"
    cut = format_value("x" * 500, max_chars=50)
    assert len(cut) == 50 and cut.endswith("…")
    assert format_value([]) == "[]"
    assert format_value([["a", "b"], [1]]) == "[[a, b], [1]]"  # ragged: no array summary


def test_counts_text_leaves_zeros_out_and_agrees_in_number():
    assert counts_text({"holds": 2, "does_not_hold": 1, "inconclusive": 0, "not_checkable": 3}) == \
        "2 hold, 1 does not hold, 3 not checkable"
    assert counts_text({"holds": 1, "does_not_hold": 2}) == "1 holds, 2 do not hold"
    assert counts_text({"holds": 0}) == "none"


def test_format_rule_seconds_and_links():
    assert format_rule("|measured - 0.5| <= 0.1 and x >= 2, y != 3") == "|measured - 0.5| ≤ 0.1 and x ≥ 2, y ≠ 3"
    assert [format_seconds(s) for s in (None, 3.21, 42.4, 190, 7200)] == ["—", "3.2 s", "42 s", "3.2 min", "2.0 h"]
    assert paper_link("arXiv:2602.04774") == "https://arxiv.org/abs/2602.04774"
    assert paper_link("OpenReview:Sx5Qth8Wmz") == "https://openreview.net/forum?id=Sx5Qth8Wmz"
    assert paper_link("not found") is None


# --------------------------------------------------------------------------- results on disk

def _claims() -> list[Claim]:
    return [
        C.close("p_holds", "The exponent is 0.5.", measured=0.52, target=0.5, abs_tol=0.1,
                reason="±0.1: finite-size bias", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.at_least("p_fails", "Accuracy is at least 0.9.", measured=0.7, bound=0.9,
                   reason="the paper's number", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.at_least("p_unsure", "The gain is positive.", measured=0.01, bound=0.0, interval=(-0.02, 0.04),
                   reason="sign of the gain", kind="paper", source="first page", object="toy", falsifiable_by="t"),
        C.not_checkable("p_big", "Works at 10^9 tokens.", paper_value="10^9", reason="no cluster here",
                        full_scale="runs 10^9 tokens", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.check("r_rule", "Our step rule is stable.", measured=1, holds=False, tolerance="stable",
                reason="inferred rule", kind="reconstruction", source="inferred: the step rule"),
        C.check("c_inv", "Grades are monotone.", measured=0, holds=True, tolerance="0 violations",
                reason="exact", kind="check", source="inferred: invariant"),
    ]


def write_result(out: Path, system: str, *, seed: int = 0, claims: list[Claim] | None = None,
                 status: str = "ok", version: str | None = None, finished: str = "2026-01-01T00:00:00+00:00",
                 config: dict | None = None, figure: bool = False, captions: dict | None = None) -> Path:
    """Write a result.json as the runner would; returns its run folder."""
    version = version or code_version(system)
    run_dir = out / system / f"quick-seed{seed}-{abs(hash((version, json.dumps(config))) % 10**6)}"
    figures = []
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(2, 1))
        ax.plot([0, 1])
        (run_dir / "figures").mkdir(parents=True, exist_ok=True)
        fig.savefig(run_dir / "figures" / "key.png")
        plt.close(fig)
        figures = ["figures/key.png"]
    res = Result(system=system, status=status, scale="quick", seed=seed, config=config or {"n": 3},
                 run_key=run_dir.name, code_version=f"{version} (abc1234)", started_at=finished,
                 finished_at=finished, wall_time_s=12.5, metrics={"loss": [0.1, 0.2]},
                 claims=claims if claims is not None else _claims(), figures=figures,
                 error="Traceback (most recent call last):\nRuntimeError: boom" if status == "failed" else "",
                 captions=captions or {})
    res.save(run_dir)
    return run_dir


def test_counts_by_kind_and_attention_order(tmp_path):
    write_result(tmp_path, "lr_schedules")
    data = collect(tmp_path)
    s = next(s for s in data.sections if s.paper.system == "lr_schedules")
    assert s.counts["paper"] == {"holds": 1, "does_not_hold": 1, "inconclusive": 1, "not_checkable": 1}
    assert s.counts["reconstruction"]["does_not_hold"] == 1 and s.counts["check"]["holds"] == 1
    assert data.totals["paper"]["holds"] == 1
    # does not hold first (paper before reconstruction), then inconclusive, then not checkable
    assert [r.claim.id for r in data.attention] == ["p_fails", "r_rule", "p_unsure", "p_big"]
    reasons = {r.claim.id: r.reason_line() for r in data.attention}
    assert reasons["p_fails"] == "ours 0.7; needs measured ≥ 0.9"
    assert reasons["p_unsure"] == "ours 0.01, interval [−0.02, 0.04] straddles measured ≥ 0"
    assert reasons["p_big"] == "no cluster here"
    assert len(data.sections) == len(PAPERS) and data.n_implemented == sum(p.implemented for p in PAPERS)


def test_page_has_every_catalogue_row_and_links_that_resolve(tmp_path):
    write_result(tmp_path, "lr_schedules", figure=True, captions={"figures/key.png": "Look at the slope."})
    html = build_report(tmp_path)
    for p in PAPERS:
        assert f'id="row-{p.system}"' in html
    assert f"of {len(PAPERS)} papers implemented" in html
    ids = set(re.findall(r'id="([^"]+)"', html))
    targets = set(re.findall(r'href="#([^"]+)"', html))
    assert targets <= ids, targets - ids
    assert 'href="#c-lr_schedules--p_fails"' in html
    assert "Figure 1 (key figure).</b> Look at the slope." in html
    assert "https://arxiv.org/abs/2602.04774" in html
    # self-contained: no external resources (links to the papers are fine)
    assert not re.search(r'<(img|script|link)[^>]+(src|href)="(https?:)?//', html)
    assert "data:image/png;base64," in html
    # raw metrics only inside <details>
    pre = html.index('"loss"')
    assert html.rfind("<details>", 0, pre) > html.rfind("</details>", 0, pre)


def test_seed_groups_and_per_claim_stability(tmp_path):
    def claim(measured):
        return [C.at_least("gain", "Gain positive.", measured=measured, bound=0.0, reason="sign",
                           kind="paper", source="abstract", object="toy", falsifiable_by="t"),
                C.check("inv", "Invariant.", measured=0, holds=True, tolerance="0", reason="exact",
                        kind="check", source="inferred: x"),
                C.not_checkable("big", "Big.", paper_value=1, reason="no GPU", full_scale="GPU run",
                                kind="paper", source="abstract", object="toy", falsifiable_by="t") if measured > 0.15 else
                C.at_least("big", "Big.", measured=1, bound=0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t")]

    for seed, m in ((0, 0.1), (1, -0.1), (2, 0.2)):
        write_result(tmp_path, "mdp_types", seed=seed, claims=claim(m), finished=f"2026-01-01T00:00:0{seed}+00:00")
    # another config and an older run: not in the group
    write_result(tmp_path, "mdp_types", seed=0, claims=claim(0.3), config={"n": 4}, finished="2025-01-01T00:00:00+00:00")
    runs, bad = scan_results(tmp_path)
    assert len(runs) == 4 and not bad
    group, left_out = seed_groups(runs)["mdp_types"]
    assert [r.result.seed for r in group] == [0, 1, 2] and left_out == 1
    s = next(s for s in collect(tmp_path).sections if s.paper.system == "mdp_types")
    rows = {r.claim.id: r for r in s.rows}
    assert rows["gain"].verdict is Verdict.INCONCLUSIVE and rows["gain"].held == (2, 3)
    line = rows["gain"].reason_line()  # the interval of the seed mean decides; votes are stability
    assert "(mean of 3 seeds), interval" in line and "straddles measured ≥ 0; held on 2 of 3 seeds" in line
    assert rows["inv"].verdict is Verdict.HOLDS and rows["inv"].held == (3, 3)
    assert rows["big"].verdict is Verdict.NOT_CHECKABLE  # not checkable in one seed: not checkable
    assert rows["big"].held is None
    never = [C.at_least("never", "Never.", measured=-1.0 - 0.1 * seed, bound=0, reason="r", kind="paper",
                        source="abstract", object="toy", falsifiable_by="t") for seed in range(3)]
    row = _claim_rows("x", [Run(tmp_path, Result(**{**s.runs[i].result.__dict__, "claims": [never[i]]}))
                            for i in range(3)])[0]
    assert row.verdict is Verdict.DOES_NOT_HOLD and row.held == (0, 3)
    assert row.reason_line().startswith("ours −1.1 (mean of 3 seeds) [−1.")
    assert row.reason_line().endswith("needs measured ≥ 0; held on 0 of 3 seeds")
    html = build_report(tmp_path)
    assert "held on 2 of 3 seeds" in html and "seeds 0, 1, 2" in html
    assert "1 other run of this system" in html


def test_seed_record_inside_a_claim_is_shown(tmp_path):
    per_seed = [C.at_least("g", "Gain positive.", measured=m, bound=0, reason="sign", kind="paper",
                           source="abstract", object="toy", falsifiable_by="t") for m in (0.1, -0.1, 0.2)]
    write_result(tmp_path, "mdp_types", claims=[C.over_seeds(per_seed, [0, 1, 2])])
    html = build_report(tmp_path)
    assert "held on 2 of 3 seeds" in html and 'title="seed 1: does not hold"' in html


def test_stale_unreadable_failed_and_unclassified_are_visible(tmp_path):
    write_result(tmp_path, "lr_schedules", version="0123456789ab")  # older code
    write_result(tmp_path, "mdp_types", status="failed", claims=[])
    old = Claim("legacy", "An older claim.", 1, 1, "x", "y", Verdict.HOLDS)  # no kind, no source
    write_result(tmp_path, "flood_bifiltration", claims=[old])
    broken = write_result(tmp_path, "lanczos_ddpm")
    (broken / "result.json").write_text((broken / "result.json").read_text()[:100])
    older = write_result(tmp_path, "ncp_tom")
    record = json.loads((older / "result.json").read_text())
    record["verdict_counts"] = {}  # a field this version does not know: an older/other format
    (older / "result.json").write_text(json.dumps(record))

    runs, unreadable = scan_results(tmp_path)
    stale = {r.result.system: r.stale for r in runs}
    assert stale == {"lr_schedules": True, "mdp_types": False, "flood_bifiltration": False}
    assert sorted(p.parent.parent.name for p, _ in unreadable) == ["lanczos_ddpm", "ncp_tom"]
    html = build_report(tmp_path)
    assert "Stale results" in html and "current code " + code_version("lr_schedules") in html
    assert "Unreadable results" in html and "lanczos_ddpm/" in html and "unknown verdict_counts" in html
    assert "Runs that failed" in html and "RuntimeError: boom" in html
    assert "<summary>traceback</summary>" in html
    assert "k-unclassified" in html and "Unclassified" in html


def test_report_command_exit_codes_and_out_option(tmp_path):
    write_result(tmp_path, "lr_schedules")
    res = runner.invoke(app, ["report", "--out", str(tmp_path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert (tmp_path / "report.html").exists()
    assert runner.invoke(app, ["report", str(tmp_path)]).exit_code == 0  # positional form
    other = tmp_path / "other"
    other.mkdir()
    res = runner.invoke(app, ["report", str(tmp_path), "--out", str(other)], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "two results folders" in res.output
    broken = write_result(tmp_path, "mdp_types")
    (broken / "result.json").write_text("{not json")
    (tmp_path / "report.html").unlink()
    res = runner.invoke(app, ["report", "--out", str(tmp_path)], env={"COLUMNS": "200"})
    assert res.exit_code == 1 and "could not be read" in res.output
    assert "Unreadable results" in (tmp_path / "report.html").read_text()  # still written


def test_version_and_help_state_the_implemented_count():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and re.fullmatch(r"neurips26 \S+\n", res.output)
    n = sum(p.implemented for p in PAPERS)
    res = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert f"{n} of the {len(PAPERS)} catalogue papers" in res.output


def test_readme_and_package_description_state_the_implemented_count():
    """The count a reader sees first must be the catalogue's, not a hope."""
    n = sum(p.implemented for p in PAPERS)
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
             9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen",
             15: "fifteen", 16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen"}
    claimed = rf"\b({n}|{words[n]}) of (the )?(19|nineteen)\b"
    head = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:12])
    assert re.search(claimed, head, re.IGNORECASE), "README's first lines must say how many are implemented"
    description = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["description"]
    assert re.search(claimed, description, re.IGNORECASE), description


def test_show_formats_claims(monkeypatch, tmp_path):
    write_result(tmp_path, "mdp_types")
    res = runner.invoke(app, ["show", "mdp-types", "--out", str(tmp_path)], env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    out = res.output
    assert "paper claims: 1 holds, 1 does not hold, 1 inconclusive, 1 not checkable" in out
    assert "reconstruction claims: 1 does not hold" in out
    assert "0.01 [−0.02, 0.04]" in out and "p_fails: ours 0.7; needs measured ≥ 0.9" in out
    assert "None" not in out


def test_a_sentence_repeated_under_many_claims_is_said_once_and_reasons_are_one_line(tmp_path):
    """Catches the same caveat printed under ten claims, and attention rows that end in a
    truncated dump of a dict instead of a reason."""
    shared = "Quick scale: 200 steps instead of 10000."
    claims = [C.at_least(f"c{i}", f"Claim {i}.", measured=1.0 * i, bound=2.0, reason="from noise",
                         kind="paper", source="abstract", object="toy", falsifiable_by="t", note=f"{shared} Own note {i}.") for i in range(4)]
    claims.append(C.check("d", "Dict claim.", measured={"a": list(range(50)), "b": {"c": 1}}, holds=False,
                          tolerance="all a below 10", reason="the invariant of the method", kind="check",
                          source="inferred: x", note=shared))
    write_result(tmp_path, "mdp_types", claims=claims)
    s = next(s for s in collect(tmp_path).sections if s.paper.system == "mdp_types")
    assert s.common_note == shared
    assert [s.row_note(r) for r in s.rows][:2] == ["Own note 0.", "Own note 1."]
    html = build_report(tmp_path)
    assert html.count(shared) == 1 + len(claims)  # once in the header, then only in the raw JSON
    row = next(r for r in s.rows if r.claim.id == "d")
    assert row.reason_line() == "fails: all a below 10 — the invariant of the method"
