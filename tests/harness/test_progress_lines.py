"""Progress that reaches a log: with output to a file, each stage prints a line
when it starts and ends and at least every ``NEURIPS26_PROGRESS_EVERY`` seconds while it runs
(stage, step/total, rate, ETA)."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neurips26.harness.context import LineProgress

_SLOW = '''
import time
from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig


class Config(ExperimentConfig):
    steps: int = 4


def run(config, ctx):
    for _ in ctx.track(range(config.steps), "slow loop"):
        time.sleep(0.6)
    return Outcome(metrics={"n": config.steps},
                   claims=[C.check("ok", "ran", measured=1, holds=True, tolerance="-", reason="r",
                                   kind="check", source="inferred: test")])
'''

_MAIN = """
import sys
sys.path.insert(0, {folder!r})
import n26slow
from neurips26.harness.runner import SystemSpec, reproduce
reproduce([SystemSpec("n26slow", n26slow, {{}})], out={out!r}, device="cpu", confirm=False)
"""


def test_a_run_written_to_a_file_shows_progress_lines(tmp_path: Path):
    """Catches a run whose output goes to a file printing nothing between "estimated …" and the
    end (progress bars only exist on a terminal)."""
    (tmp_path / "n26slow.py").write_text(_SLOW)
    log = tmp_path / "run.log"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "MPLBACKEND": "Agg",
           "NEURIPS26_PROGRESS_EVERY": "0.5"}  # the one-minute period, shortened for the test
    with log.open("w") as fh:
        proc = subprocess.run([sys.executable, "-c", _MAIN.format(folder=str(tmp_path), out=str(tmp_path / "out"))],
                              stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=300)
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "[n26slow seed 0] stage 'slow loop' started (4 steps)" in text
    running = re.findall(r"stage 'slow loop': (\d+)/4, [\d.]+ steps/s, ETA [^ ]+ s", text)
    assert len(running) >= 2, text  # at least one line per period while it ran (2.4 s, period 0.5 s)
    assert "stage 'slow loop' done: 4 steps in" in text


def test_line_progress_heartbeat_and_stats():
    """Catches a stage whose single step is long printing nothing until it ends (lines must come
    from a heartbeat, not only from steps), and a wrong rate or ETA."""
    buf = io.StringIO()
    p = LineProgress("sys seed 1", every_s=0.2, stream=buf)
    i = p.add_task("one long step", total=2)
    time.sleep(0.7)  # no step for 0.7 s: the heartbeat still writes
    p.advance(i)
    st = p.stages[i]
    assert st.steps == 1 and st.rate() == pytest.approx(1 / st.elapsed(), rel=0.05)
    assert st.eta() == pytest.approx(st.elapsed(), rel=0.2)  # one step left at one step per elapsed time
    p.remove_task(i)
    p.close()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "[sys seed 1] stage 'one long step' started (2 steps)"
    assert sum("stage 'one long step': 0/2" in ln for ln in lines) >= 2, lines
    assert lines[-1].startswith("[sys seed 1] stage 'one long step' done: 1 steps in")
    with pytest.raises(ValueError, match="every_s"):
        LineProgress(every_s=0)
