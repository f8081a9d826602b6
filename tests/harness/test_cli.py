"""CLI behaviour a user sees: list, bad names, bad --set values (one line, no traceback)."""

from __future__ import annotations

import sys

import pytest
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


def _patch_fake_system(monkeypatch, calls, make_fake):
    """Make the CLI see one implemented system, 'lr_schedules', backed by the fake module."""
    import neurips26.cli as cli
    from neurips26.harness.catalogue import get_paper

    paper = get_paper("lr_schedules")
    monkeypatch.setattr(cli, "implemented_papers", lambda: [paper])
    monkeypatch.setattr(cli, "load_experiment", lambda p: make_fake(calls))
    monkeypatch.setattr(type(paper), "implemented", property(lambda self: self.system == "lr_schedules"))


def test_reproduce_and_set_through_the_cli(monkeypatch, tmp_path, make_fake):
    calls: list = []
    _patch_fake_system(monkeypatch, calls, make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "eta=0.12", "--seed", "2"])
    assert res.exit_code == 0, res.output
    assert calls[0].eta == 0.12 and (tmp_path / "report.html").exists()
    bad = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "eta=-3"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    line = [ln for ln in bad.output.splitlines() if "error" in ln][0]
    assert "'eta'" in line and "-3" in line and "gt=0" in line
    unknown = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "bogus=1"])
    assert unknown.exit_code == 2 and "no selected system has a config key 'bogus'" in unknown.output
    assert len(calls) == 1  # neither bad invocation ran anything
    rebuilt = runner.invoke(app, ["report", str(tmp_path)])
    assert rebuilt.exit_code == 0 and "report.html" in rebuilt.output


def test_error_messages_keep_bracketed_values(monkeypatch, tmp_path, make_fake):
    """rich markup must not eat a value such as [nan] from the one-line error."""
    _patch_fake_system(monkeypatch, [], make_fake)
    res = runner.invoke(app, ["reproduce", "--out", str(tmp_path), "--set", "eta=[nan]"])
    assert res.exit_code == 2 and "[nan]" in res.output, res.output


@pytest.mark.parametrize("argv, needle", [
    (["reproduce", "mdp-types", "--seed", "abc"], "'--seed'"),
    (["reproduce", "mdp-types", "--seed=abc"], "(got 'abc')"),   # the value is named, not only the option
    (["reproduce", "--bogus"], "--bogus"),
    (["nosuch"], "'nosuch'"),
])
def test_usage_errors_are_one_line_with_exit_code_2(argv, needle, monkeypatch, capsys):
    """Catches Click's boxed multi-line panel (or a traceback) for a usage error such as
    ``--seed abc``: the script's entry point prints one ``error:`` line naming the option or the
    command and exits 2, before any work, like every other refusal."""
    from neurips26.cli import main

    monkeypatch.setattr(sys, "argv", ["neurips26", *argv])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], lines
