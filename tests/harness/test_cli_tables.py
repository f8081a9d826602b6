"""``neurips26 show`` and ``list`` as a user reads them: a corrupt
result is named, the summary lines agree with the table, and tables stay readable at 80 columns
and in a file."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness import claims as C
from neurips26.harness.results import Result
from neurips26.harness.task import code_version

runner = CliRunner()


def _claims(confirmation: bool) -> list:
    """Four preregistered claims (3 hold, 1 inconclusive) and one tuned claim that holds on the
    development seed but not on the confirmation seed."""
    out = [C.at_least(f"claim_with_a_rather_long_identifier_{i}", f"Claim {i}.", measured=2.0, bound=1.0,
                      reason="r", kind="paper", source="abstract", object="toy",
                      falsifiable_by="the measured value could fall below the bound",
                      paper_value="a long paper value that needs folding at eighty columns, really") for i in range(3)]
    out.append(C.at_least("undecided", "Undecided.", measured=1.0, bound=1.0, interval=(0.5, 1.5), reason="r",
                          kind="paper", source="abstract", object="toy", falsifiable_by="the interval"))
    out.append(C.at_least("tuned", "Tuned claim.", measured=0.0 if confirmation else 2.0, bound=1.0, reason="r",
                          kind="paper", source="abstract", object="toy", falsifiable_by="the value",
                          tuned_after_look="the bound was chosen after a look"))
    return out


def _write(out: Path, system: str, seed: int, role: str) -> Path:
    version = code_version(system)
    key = f"quick{'-confirm' if role == 'confirmation' else ''}-seed{seed}-0123456789"
    res = Result(system=system, status="ok", scale="quick", seed=seed, config={"n": 3}, run_key=key,
                 code_version=f"{version} (abc1234)", started_at="2026-01-01T00:00:00+00:00",
                 finished_at="2026-01-01T00:00:00+00:00", wall_time_s=1.0,
                 claims=_claims(role == "confirmation"), role=role)
    res.save(out / system / key)
    return out / system / key


def test_show_names_a_corrupt_result_instead_of_no_results(tmp_path):
    """Catches ``show`` saying "no results yet" when the only result file is corrupt."""
    run = _write(tmp_path, "lr_schedules", 0, "development")
    (run / "result.json").write_text('{"system": "lr_sch')
    res = runner.invoke(app, ["show", "lr-schedules", "--out", str(tmp_path)], env={"COLUMNS": "200"})
    assert res.exit_code == 1, res.output
    assert "no results" not in res.output and "corrupt" in res.output and "result.json" in res.output


def test_show_summary_counts_the_rows_of_its_own_table(tmp_path):
    """Catches the summary line counting the tuned claim's confirmed verdict (does not hold)
    while the table showed its development verdict (holds): 4 hold above 3 holds rows."""
    _write(tmp_path, "lr_schedules", 0, "development")
    for seed in (101, 102, 103):  # three confirmation seeds: the fewest that confirm
        _write(tmp_path, "lr_schedules", seed, "confirmation")
    res = runner.invoke(app, ["show", "lr-schedules", "--out", str(tmp_path)], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    summary = re.search(r"paper claims: (.*)", res.output).group(1)
    rows = [ln for ln in res.output.splitlines() if ln.startswith("│")]
    verdicts = [ln.rstrip("│ ").rsplit("│", 1)[-1].strip() for ln in rows]
    n_hold = sum(v.startswith("holds") for v in verdicts)
    n_not = sum(v.startswith("does not hold") for v in verdicts)
    assert f"{n_hold} hold" in summary and f"{n_not} does not hold" in summary, (summary, verdicts)
    assert n_hold == 3 and n_not == 1


def test_show_and_list_are_readable_at_80_columns_and_in_a_file(tmp_path):
    """Catches a value column shrunk to a few characters (``p…``) and ids cut at 80 columns, on a
    terminal and when the output goes to a file (no terminal: rich's 80-column default)."""
    _write(tmp_path, "lr_schedules", 0, "development")
    for env in ({"COLUMNS": "80"}, {}):
        res = runner.invoke(app, ["show", "lr-schedules", "--out", str(tmp_path)], env=env)
        assert res.exit_code == 0, res.output
        text = res.output
        assert all(len(ln) <= 80 for ln in text.splitlines()), max(text.splitlines(), key=len)
        for i in range(3):
            assert f"claim_with_a_rather_long_identifier_{i}" in text  # ids whole, on one line
        flat = " ".join(text.split())
        assert "a long paper value that needs folding at eighty columns" in flat  # wrapped, not cut
        assert "…" not in "".join(ln for ln in text.splitlines() if "paper:" in ln or "ours:" in ln)
        listed = runner.invoke(app, ["list"], env=env)
        assert listed.exit_code == 0
        lines = listed.output.splitlines()
        assert all(len(ln) <= 80 for ln in lines)
        for name in ("text-uncanny-valley", "search-agent-attacks", "OpenReview:Sx5Qth8Wmz", "arXiv:2606.31916"):
            assert name in listed.output, name  # never cut
        flat = " ".join(" ".join(ln.strip("│┃ ").split("│")) for ln in lines)
        assert "(NCP-ExploreToM)" in "".join(listed.output.split()).replace("│", "")


def test_the_dry_run_plan_is_readable_at_80_columns():
    """Catches the dry-run plan's eleven-column table cut to one or two characters per column at 80
    columns (headers 't…', a column squeezed to nothing): narrow output prints one labelled block per
    system, with every value whole."""
    res = runner.invoke(app, ["reproduce", "relu-symmetries", "--scale", "full", "--dry-run"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(lines, key=len)
    flat = " ".join(res.output.split())
    for label in ("tasks", "CPUs", "GPUs", "h/task", "GPU-h", "parameters", "stages", "result"):
        assert f" {label} " in flat, label
    assert "relu-symmetries:" in flat and "…" not in res.output
