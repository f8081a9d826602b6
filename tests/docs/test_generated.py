"""No result in the docs is typed by hand: the generated files are current, and no page states a
count, a verdict or a benchmark ratio that the snapshot or the benchmark records do not have.

Catches: a snapshot or benchmark record updated without regenerating the pages (or a generated
page edited by hand); a system page or the README that states verdict counts by hand ("7 hold,
1 inconclusive", which went stale before); a page that calls a claim "holds" while the snapshot
says otherwise; a benchmark ratio quoted on a system page that its latest benchmark run did not
measure ("FFT shuffle 6.4×" when the run gave 3.0×); a system page without its results or its
benchmark include; a README counts block that is not the one generated from the snapshot.
"""

from __future__ import annotations

import json
import re

import pytest

from neurips26.harness import docsgen
from neurips26.harness.catalogue import PAPERS

from ._examples import ROOT

SNAPSHOT = ROOT / "docs" / "results" / "snapshot.json"
VERDICT = r"(?:holds?|do(?:es)? not hold|inconclusive|not checkable)"
# "7 hold", "1 does not hold", "16 inconclusive, 26 not checkable", "72 / 19 / 42 / 21"
COUNT = re.compile(rf"\b\d+\s+{VERDICT}\b|\b\d+ / \d+ / \d+ / \d+\b")
# a ratio: "4.17×", "3.0 ×", "12x" — but not a shape or size ("8×8", "16 × 64", "3x16x16")
RATIO = re.compile(r"(?<![\d.×x])(\d+(?:[.,]\d+)?)\s?[×x](?!\s?\d)(?![A-Za-z])")


def hand_text(path) -> str:
    """A page's text without what the generator owns (the README's counts and dry-run blocks, the
    guide's executor table) and without code blocks."""
    text = path.read_text()
    blocks = [(docsgen.EXECUTOR_BEGIN, docsgen.EXECUTOR_END)]
    if path.name == "README.md":
        blocks += [(docsgen.COUNTS_BEGIN, docsgen.COUNTS_END), (docsgen.DRYRUN_BEGIN, docsgen.DRYRUN_END)]
    for begin, end in blocks:
        i = text.find(begin[:17])
        j = text.find(end, i)
        if i >= 0 and j >= 0:
            text = text[:i] + text[j + len(end):]
    return re.sub(r"(?ms)^```.*?^```", "", text)


def hand_pages():
    """README.md and every docs page a person writes (generated results and API stubs apart)."""
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    return [p for p in pages if "results" not in p.relative_to(ROOT).parts[:2] and "api" not in p.parts]


def _ids(pages):
    return [p.relative_to(ROOT).as_posix() for p in pages]


def test_generated_files_are_what_the_generator_writes():
    """docs/results/*.md and the README's counts block equal what scripts/docs_snapshot.py writes
    from docs/results/snapshot.json and benchmarks/results/*.json."""
    stale = [p.relative_to(ROOT).as_posix() for p, text in docsgen.generated_files(ROOT).items()
             if not p.is_file() or p.read_text() != text]
    assert not stale, f"generated files out of date: {stale}; run .venv/bin/python scripts/docs_snapshot.py"


def test_snapshot_records_its_commit_date_and_counts():
    """The snapshot says where its numbers came from, and its totals add up over its systems."""
    snap = json.loads(SNAPSHOT.read_text())
    assert snap["commit"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", snap["date"]), (snap["commit"], snap["date"])
    for kind, row in snap["totals"].items():
        for verdict, n in row.items():
            per_system = sum(s["counts"].get(kind, {}).get(verdict, 0) for s in snap["systems"].values())
            assert n == per_system, f"totals[{kind}][{verdict}] = {n}, systems sum to {per_system}"
    for name, s in snap["systems"].items():
        for f in s["figures"]:
            assert (ROOT / "docs" / "results" / f["file"]).is_file(), f"{name}: figure {f['file']} missing"


def test_every_judged_paper_claim_in_the_snapshot_names_its_control():
    """Catches a paper claim judged in the main job with no control that removes its mechanism (only a
    sentence on how it could fail): the project's rule for a verdict a researcher can cite. Not-checkable
    paper claims need only their reason. Fails on the snapshot of e5ea91f (three real-model claims)."""
    snap = json.loads(SNAPSHOT.read_text())
    bare = [f"{name}/{c['id']}" for name, s in snap["systems"].items() for c in s["claims"]
            if c["kind"] == "paper" and c["verdict"] != "not_checkable" and not c.get("control")]
    assert not bare, f"judged paper claims without a control: {bare}"


@pytest.mark.parametrize("page", hand_pages(), ids=_ids(hand_pages()))
def test_no_page_states_a_count_by_hand(page):
    """Counts of verdicts live in the generated files only (they went stale every time they were typed)."""
    hits = [m.group(0) for m in COUNT.finditer(hand_text(page))]
    assert not hits, (f"{page.relative_to(ROOT)} states counts by hand: {hits}; include the generated "
                      "docs/results/<system>.md (or the README's counts block) instead")


@pytest.mark.parametrize("page", hand_pages(), ids=_ids(hand_pages()))
def test_a_verdict_named_on_a_page_is_the_snapshots(page):
    """A sentence that names a claim id (in backticks) with a verdict word has the snapshot's verdict."""
    snap = json.loads(SNAPSHOT.read_text())
    verdicts = {c["id"]: c["verdict"] for s in snap["systems"].values() for c in s["claims"]}
    words = {"holds": "holds", "does not hold": "does_not_hold", "do not hold": "does_not_hold",
             "inconclusive": "inconclusive", "not checkable": "not_checkable"}
    bad = []
    for sentence in re.split(r"(?<=[.;:])\s+", " ".join(hand_text(page).split())):
        named = [c for c in re.findall(r"`([A-Za-z0-9_]+)`", sentence) if c in verdicts]
        said = {words[w] for w in words if re.search(rf"\b{w}\b", sentence)}
        for cid in named:
            if len(said) == 1 and verdicts[cid] not in said:
                bad.append(f"`{cid}` said {said.pop()}, snapshot {verdicts[cid]}")
    assert not bad, f"{page.relative_to(ROOT)}: {bad}"


@pytest.mark.parametrize("paper", PAPERS, ids=[p.system for p in PAPERS])
def test_system_page_includes_results_and_benchmark_and_quotes_only_measured_ratios(paper):
    """Each system page has a Results and a Benchmark section that include the generated files,
    and every ratio it quotes by hand is one of its latest benchmark run's ratios."""
    page = ROOT / "docs" / "systems" / f"{paper.system}.md"
    text = page.read_text()
    assert re.search(r"(?m)^## Results$", text) and f'--8<-- "docs/results/{paper.system}.md"' in text, \
        f"{page.relative_to(ROOT)}: no '## Results' section including docs/results/{paper.system}.md"
    assert re.search(r"(?m)^## Benchmark$", text) and f'--8<-- "docs/results/{paper.system}-benchmark.md"' in text, \
        f"{page.relative_to(ROOT)}: no '## Benchmark' section including docs/results/{paper.system}-benchmark.md"
    bench = docsgen.load_json(ROOT / "benchmarks" / "results" / f"{paper.system}.json") or {"rows": []}
    measured = {docsgen.ratio_text(r["ratio"]) for r in bench["rows"]}
    body = hand_text(page)
    section = re.search(r"(?ms)^## Benchmark$(.*?)(?=^## |\Z)", body).group(1)
    quoted = [m.group(0) for m in RATIO.finditer(section)]
    wrong = [q for q in quoted if q.replace(" ", "").replace("x", "×").replace(",", ".") not in measured]
    assert not wrong, (f"{page.relative_to(ROOT)}: Benchmark section quotes {wrong}, not in "
                       f"benchmarks/results/{paper.system}.json ({sorted(measured) or 'no rows'})")


def test_ratio_pattern_tells_ratios_from_shapes():
    """The pattern above finds ratios and leaves shapes alone (else the test above could not fail
    or would fail on every '8×8')."""
    found = [m.group(0) for m in RATIO.finditer("4.17× faster, 3.0 × slower, 12x; FrozenLake 8×8, 16 × 64, 3x16x16")]
    assert found == ["4.17×", "3.0 ×", "12x"], found
    assert COUNT.search("paper claims 7 hold, 1 inconclusive")
    assert not COUNT.search("the claim holds on seed 7")


# a measured time typed by hand: "35 s CPU", "9.8 CPU-s", "795 s wall", "~15 min", "2 hours"
TIMING = re.compile(r"(?<![\w.^{])(\d+(?:[.,]\d+)?)\s?(?:ms|s|CPU-s|CPU-seconds?|CPU-minutes|CPU-hours|GPU-hours|"
                    r"min|minutes|hours?)(?:\s(?:wall|CPU))?(?![\w/])")
# a measured speed-up typed by hand: "process pool 2.0×, Ray 1.9× over sequential", "3.7× the CPU"
SPEEDUP = re.compile(RATIO.pattern + r"[^.;\n]{0,40}?(?:faster|slower|speed-?up|cheaper|over sequential|"
                     r"the CPU|the wall|as long as)")
# "the 190-task run": a task count of the full-scale plan
TASKS = re.compile(r"\b(\d+)-task\b")
#: (page, text) -> why a time on a page is not a measurement (a setting, a configuration value)
NOT_MEASURED: dict[tuple[str, str], str] = {
    ("docs/guide/seeds-sweeps-clusters.md", "10 s"): "the executor benchmark's task size (a setting of benchmarks/executor.py)",
    ("docs/systems/path_integration.md", "0.02 s"): "the simulator's time step dt (a configuration value)",
}


def prose_and_comments(path) -> str:
    """A page's hand-written text (:func:`hand_text`) plus the comments of its code blocks, where
    a timing was also typed by hand ("# one system (≈ 35 s CPU)")."""
    text = path.read_text()
    comments = [ln.split("#", 1)[1] for block in re.findall(r"(?ms)^```.*?^```", text)
                for ln in block.splitlines()[1:-1] if "#" in ln]
    body = hand_text(path)
    if "systems" in path.parts:  # the Benchmark section is the bench tables' (checked above)
        body = re.sub(r"(?ms)^## Benchmark$.*?(?=^## |\Z)", "", body)
    return body + "\n" + "\n".join(comments)


@pytest.mark.parametrize("page", hand_pages(), ids=_ids(hand_pages()))
def test_no_page_states_a_measured_time_speedup_or_task_count_by_hand(page):
    """No timing, speed-up or plan size typed by hand in the README or a docs page: they live in
    generated blocks (the README's counts and dry-run blocks, the executor table of the guide,
    the system pages' Results and Benchmark includes).

    Catches: the README's "process pool 2.0×, Ray 1.9× over sequential" and the guide's executor
    table typed from a run no file records; "(≈ 35 s CPU)" for one system and "(~15 min)" for the
    main job; lanczos-ddpm's "795 s wall / 155 s CPU with 2 threads"; the backends guide's
    hand-measured CPU-seconds; "the 190-task run" when the plan has another count.
    """
    rel = page.relative_to(ROOT).as_posix()
    text = prose_and_comments(page)
    allowed = {t for (p, t) in NOT_MEASURED if p == rel}
    found = [m.group(0).strip() for m in TIMING.finditer(text)] + [m.group(0) for m in SPEEDUP.finditer(text)]
    found = [f for f in found if not any(f.startswith(a) or a.startswith(f) for a in allowed)]
    plan = ROOT / "docs" / "results" / "dryrun-full.txt"
    total = re.search(r"(?m)^total: (\d+) tasks", plan.read_text()) if plan.is_file() else None
    found += [f"{m.group(0)} (the plan has {total.group(1) if total else '?'})" for m in TASKS.finditer(text)
              if not total or m.group(1) != total.group(1)]
    assert not found, (f"{rel} states measured numbers by hand: {found}; generate them (scripts/docs_snapshot.py) "
                       "or point to the generated table")


def test_timing_patterns_find_measurements():
    """The patterns above find the hand-typed numbers this test was written for (else it could not fail)."""
    text = "(≈ 35 s CPU), (~15 min), 795 s wall / 155 s CPU, 9.8 CPU-s; process pool 2.0×, Ray 1.9× over sequential"
    assert [m.group(0).strip() for m in TIMING.finditer(text)] == ["35 s CPU", "15 min", "795 s wall", "155 s CPU", "9.8 CPU-s"]
    assert SPEEDUP.search(text) and TASKS.search("the 190-task run")
    assert not TIMING.search("16 × 64 matrices, 8x8 digits, 3 seeds, 1e-3 steps, $s$")
