"""CLI behaviour a user sees: list, bad names, bad --set values (one line, no traceback)."""

from __future__ import annotations

from typer.testing import CliRunner

from neurips26.cli import app

runner = CliRunner()


def test_list_prints_all_nineteen():
    res = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for name in ("lr-schedules", "bit-mask-tuning", "mdp-types"):
        assert name in res.output


def test_unknown_system_is_a_clean_error():
    res = runner.invoke(app, ["reproduce", "no-such-system"])
    assert res.exit_code == 2
    assert "unknown system 'no-such-system'" in res.output and "Traceback" not in res.output


def test_bad_scale_is_a_clean_error():
    res = runner.invoke(app, ["reproduce", "--scale", "huge"])
    assert res.exit_code == 2 and "quick, full" in res.output


def test_report_on_missing_folder(tmp_path):
    res = runner.invoke(app, ["report", str(tmp_path / "none")])
    assert res.exit_code == 2 and "does not exist" in res.output
