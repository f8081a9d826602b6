"""Resume is keyed on the code version (issue 28, item 4): editing a system's source must make the
next ``reproduce`` rerun it, while an unchanged rerun is skipped."""

from __future__ import annotations

from pathlib import Path

from neurips26.harness import task
from neurips26.harness.runner import SystemSpec, reproduce


def test_editing_a_systems_source_reruns_it(tmp_path: Path, make_fake, monkeypatch):
    root = tmp_path / "pkg"
    (root / "fake").mkdir(parents=True)
    source = root / "fake" / "method.py"
    source.write_text("def f():\n    return 1\n")
    monkeypatch.setattr(task, "_PKG_ROOT", root)          # code_version hashes <root>/fake/*.py
    calls: list = []
    spec = SystemSpec("fake", make_fake(calls), {})
    first, _ = reproduce([spec], out=tmp_path / "out", seed=0, device="cpu")
    reproduce([spec], out=tmp_path / "out", seed=0, device="cpu")
    assert len(calls) == 1                                   # same code and config: resumed
    source.write_text("def f():\n    return 2   # edited\n")
    again, _ = reproduce([spec], out=tmp_path / "out", seed=0, device="cpu")
    assert len(calls) == 2 and again[0].run_key != first[0].run_key
