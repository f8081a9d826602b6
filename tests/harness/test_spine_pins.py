"""Spine behaviours that no other test pinned: each test fails on the
wrong version a developer might plant by mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from neurips26.harness import executor as ex
from neurips26.harness import results as R
from neurips26.harness import task
from neurips26.harness.config import Resources
from neurips26.harness.runner import SystemSpec, make_task, reproduce


def test_interrupted_atomic_write_leaves_no_tmp_file(tmp_path: Path, monkeypatch):
    """Catches: the atomic write cleaning its temporary file on ``Exception`` only, so a Ctrl-C
    (KeyboardInterrupt) during the write leaves ``.result.json.XXXX.tmp`` behind; the old file
    must stay intact."""
    target = tmp_path / "result.json"
    target.write_text("old")

    def interrupted_fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(R.os, "fsync", interrupted_fsync)
    with pytest.raises(KeyboardInterrupt):
        R.atomic_write_text(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]
    assert target.read_text() == "old"


def test_editing_a_backend_changes_every_systems_code_version(tmp_path: Path, monkeypatch):
    """Catches: ``code_version`` hashing only the system's and the harness's sources, so a fix in
    ``backends/`` (model clients used by the model-backed systems) reuses stale results."""
    root = tmp_path / "pkg"
    for folder in ("harness", "backends", "sysx"):
        (root / folder).mkdir(parents=True)
        (root / folder / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(task, "_PKG_ROOT", root)
    before = task.code_version("sysx")
    (root / "backends" / "m.py").write_text("x = 2  # a backend fix\n")
    assert task.code_version("sysx") != before


def test_truncated_result_in_a_run_folder_is_rerun_on_resume(tmp_path: Path, make_fake):
    """Catches: resume reading a truncated ``result.json`` (a run killed mid-write by an older
    version, a full disk) and crashing instead of rerunning that task."""
    calls: list = []
    spec = SystemSpec("fake", make_fake(calls), {})
    out = tmp_path / "out"
    (first,), _ = reproduce([spec], out=out, seed=0, device="cpu")
    path = out / "fake" / first.run_key / "result.json"
    path.write_text(path.read_text()[:57])  # cut mid-record: invalid JSON
    (again,), interrupted = reproduce([spec], out=out, seed=0, device="cpu")
    assert not interrupted and again.status == "ok" and len(calls) == 2
    assert R.load_result(path).status == "ok"  # rewritten, complete


class _Conn:
    def __init__(self, live: list, log: list) -> None:
        self.polls, self.live, self.log = 0, live, log

    def poll(self) -> bool:
        self.polls += 1
        return self.polls >= 2

    def recv(self):
        return "error", "fake worker"

    def close(self) -> None:
        pass


class _Proc:
    exitcode = 0
    sentinel = None

    def is_alive(self) -> bool:
        return True

    def join(self, timeout=None) -> None:
        pass


def test_pool_never_starts_a_task_beside_one_that_fills_the_cores(tmp_path: Path, make_fake, monkeypatch):
    """Catches: the pool's admission test starting a 1-CPU task beside a running 2-CPU task on
    2 cores (3 CPUs of work on 2 cores: oversubscribed), or two 2-CPU tasks at once."""
    spec = SystemSpec("fake", make_fake([]), {})
    cfg = spec.module.Config()
    tasks = []
    for i, cpus in enumerate((2, 1, 2, 1, 1)):
        t = make_task(spec, cfg, scale="quick", seed=i, commit="")
        t.resources = Resources(num_cpus=cpus)
        tasks.append(t)
    pool = ex.PoolExecutor(workers=2)
    peaks: list[float] = []

    def fake_start(task, device):
        pool._live.append(ex._Live(task, _Proc(), _Conn(pool._live, peaks), float(task.resources.num_cpus), 0.0))
        peaks.append(sum(lv.cpus for lv in pool._live))

    monkeypatch.setattr(pool, "_start", fake_start)
    monkeypatch.setattr(ex, "_wait", lambda *a, **k: None)
    done = list(pool.run(tasks, out=tmp_path, device="cpu"))
    assert len(done) == 5 and len(peaks) == 5
    assert max(peaks) <= 2, peaks  # never more CPUs busy than the pool's cores
    assert peaks[0] == 2 and peaks.count(2) >= 3  # the two 1-CPU tasks at the end do share the cores


_TWICE = """
import sys
sys.path.insert(0, {fakes!r})
import n26fake_alpha
from neurips26.harness.runner import SystemSpec, reproduce
spec = SystemSpec("n26fake_alpha", n26fake_alpha, {{"log": {log!r}, "sleep": 1.0}})
results, interrupted = reproduce([spec], seeds=[0, 1, 2], out={out!r}, device="cpu", confirm=False)
assert not interrupted and all(r.status == "ok" for r in results), results
"""


def test_two_commands_into_one_folder_run_each_task_once(tmp_path: Path):
    """Catches two ``reproduce`` commands into the same ``--out`` both running (and writing) every
    task: with the per-task lock the second waits and reuses the first's results."""
    import subprocess
    import sys

    from .executor_fakes import install

    install(tmp_path / "fakes")
    log, out = tmp_path / "runs.log", tmp_path / "out"
    code = _TWICE.format(fakes=str(tmp_path / "fakes"), log=str(log), out=str(out))
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "MPLBACKEND": "Agg"}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    runs = log.read_text().splitlines()
    assert sorted(runs) == ["n26fake_alpha 0", "n26fake_alpha 1", "n26fake_alpha 2"], (runs, outputs)
    assert len(list(out.glob("n26fake_alpha/*/result.json"))) == 3
