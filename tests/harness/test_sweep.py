"""Sweeps: grid parsing, one result per point and seed, the table (CSV) and figure of a metric or
claim across the grid, and the CLI command."""

from __future__ import annotations

import csv

import pytest
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.harness.config import ConfigError
from neurips26.harness.runner import SystemSpec
from neurips26.harness.sweep import (
    grid_points,
    metric_value,
    parse_grid,
    run_sweep,
    split_values,
    unknown_name_line,
)

from .executor_fakes import install
from .test_cli import _patch_fake_system


@pytest.fixture(scope="module")
def alpha(tmp_path_factory):
    return install(tmp_path_factory.mktemp("fakesys"))[0]


def test_grid_parsing(alpha):
    assert split_values("1,[2,3],'a,b',x") == ["1", "[2,3]", "'a,b'", "x"]
    grid = parse_grid(["spread=0.5,2", "n=100,200", "credential=1e3"], alpha.Config, "fake")
    assert grid == {"spread": [0.5, 2], "n": [100, 200], "credential": ["1e3"]}  # a text field keeps its text
    assert grid_points({"a": [1, 2], "b": ["x"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    for bad, expect in ((["spread"], "expected key=v1,v2"), (["nope=1"], "no config key 'nope'"),
                        (["n=1,,2"], "an empty value"), (["n=1", "n=2"], "given twice")):
        with pytest.raises(ConfigError, match=expect):
            parse_grid(bad, alpha.Config, "fake")
    assert metric_value({"a": {"b": 2}, "c.d": 3}, "a.b") == 2 and metric_value({"c.d": 3}, "c.d") == 3
    assert metric_value({"a": 1}, "a.b") is None


def test_sweep_writes_one_result_per_point_and_a_table(tmp_path, alpha):
    spec = SystemSpec("fake_alpha", alpha, {"n": 2000})
    grid = {"spread": [0.5, 2.0, 8.0]}
    res = run_sweep(spec, grid, seeds=[0, 1], out=tmp_path, metric="sd", device="cpu")
    assert not res.interrupted and len(res.results) == 6
    assert len(list(tmp_path.glob("fake_alpha/*/result.json"))) == 6
    for row in res.rows:  # the sample sd tracks the swept spread (n = 2000: s.e. about 1.6 %)
        assert row.seeds == [0, 1] and row.mean == pytest.approx(row.point["spread"], rel=0.06)
        assert row.interval[0] <= row.mean <= row.interval[1]
    with res.csv_path.open() as fh:
        table = list(csv.DictReader(fh))
    assert [r["spread"] for r in table] == ["0.5", "2", "8"] and table[0]["seeds"] == "0 1"
    assert res.png_path.read_bytes()[:4] == b"\x89PNG"
    # the claim across the grid, reusing every finished point
    by_claim = run_sweep(spec, grid, seeds=[0, 1], out=tmp_path, claim="mean_near_zero", device="cpu")
    assert [r.judged for r in by_claim.rows] == [2, 2, 2] and all(r.verdict is not None for r in by_claim.rows)
    assert by_claim.csv_path.name == "sweep-spread-mean_near_zero.csv"
    with pytest.raises(ConfigError, match="no result has a metric 'nope'.*tail.max"):
        run_sweep(spec, grid, seeds=[0], out=tmp_path, metric="nope", device="cpu")


def test_unknown_metric_is_refused_before_the_runs_in_one_short_line(tmp_path, alpha):
    """Catches the metric name being checked only after every run of the grid, then reported
    as a line listing every metric of the system (2,400 characters for lr-schedules)."""
    log = tmp_path / "runs.log"
    spec = SystemSpec("fake_alpha", alpha, {"log": str(log)})
    grid = {"spread": [0.5, 2.0, 8.0]}
    with pytest.raises(ConfigError, match="closest: sd") as info:  # nothing recorded: one run tells
        run_sweep(spec, grid, seeds=[0, 1], out=tmp_path, metric="sdd", device="cpu")
    assert len(log.read_text().splitlines()) == 1
    assert len(str(info.value)) < 200
    with pytest.raises(ConfigError, match="no result has a claim 'nope'"):  # recorded: no run at all
        run_sweep(spec, grid, seeds=[0, 1], out=tmp_path, claim="nope", device="cpu")
    assert len(log.read_text().splitlines()) == 1
    many = [f"group{i // 10}.metric_number_{i}" for i in range(300)]
    line = unknown_name_line("metric", "nope", many)
    assert len(line) <= 160 and "300 metrics" in line and "more)" in line
    assert "group1.metric_number_12" in unknown_name_line("metric", "group1.metric_numbr_12", many)


def test_sweep_rejects_bad_points_before_running(tmp_path, alpha):
    spec = SystemSpec("fake_alpha", alpha, {})
    with pytest.raises(ConfigError, match="sweep point spread=-1"):
        run_sweep(spec, {"spread": [1.0, -1]}, out=tmp_path, device="cpu")
    assert not list(tmp_path.glob("*/*/result.json"))


def test_sweep_command(monkeypatch, tmp_path, alpha):
    _patch_fake_system(monkeypatch, [], lambda calls: alpha)
    runner = CliRunner()
    res = runner.invoke(app, ["sweep", "lr-schedules", "--grid", "spread=1,3", "--grid", "n=100,400",
                              "--seeds", "2", "--metric", "sd", "--out", str(tmp_path), "--executor", "pool"],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "lr-schedules: sd across spread, n" in res.output
    assert (tmp_path / "lr_schedules" / "sweep-spread-n-sd.csv").exists()
    assert len(list(tmp_path.glob("lr_schedules/*/result.json"))) == 8
    bad = runner.invoke(app, ["sweep", "lr-schedules", "--grid", "spread=1", "--set", "spread=2",
                              "--out", str(tmp_path)], env={"COLUMNS": "200"})
    assert bad.exit_code == 2 and "both give 'spread'" in bad.output
    bad = runner.invoke(app, ["sweep", "lr-schedules", "--grid", "spread=1", "--metric", "nope",
                              "--out", str(tmp_path)], env={"COLUMNS": "200"})
    assert bad.exit_code == 2 and "no result has a metric 'nope'" in bad.output
