"""The package installs like a library: a built wheel, only the light core, a fresh venv.

Catches: a module of the core (harness, command line) that imports a heavy library (torch, scipy,
matplotlib…) at import time although ``pyproject.toml`` puts it in an extra; a template or data
file missing from the wheel (the report's Jinja template); a console script that does not start.

Nothing comes from a package index: the wheel is built here (``pip wheel --no-deps
--no-build-isolation``), installed with ``--no-deps`` into a fresh venv, and the core
dependencies are made visible to that venv from the test's own environment, one package
folder each (a ``.pth`` file listing a folder of links) — so torch and the other extras are
really absent there.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ._examples import ROOT

pytestmark = pytest.mark.slow  # builds a wheel and a venv: about a minute


def _core_requirements() -> list[str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0] for d in deps]


def _closure(names: list[str]) -> set[str]:
    """The distributions ``names`` need, transitively, as installed in this environment."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for req in md.requires(name) or []:
            if "extra ==" in req:
                continue
            todo.append(re.split(r"[<>=!~\[; (]", req, maxsplit=1)[0])
    return seen


def _top_levels(dist: str) -> set[str]:
    """Top-level import folders/modules of an installed distribution (from its RECORD)."""
    out = set()
    for f in md.files(dist) or []:
        head = f.parts[0]
        if head.endswith((".dist-info", ".data")) or head == "..":
            continue
        out.add(head if len(f.parts) > 1 else f.name)
    return out


def test_wheel_installs_with_only_the_core(tmp_path):
    """Build the wheel, install it without dependencies into a fresh venv that sees only the core
    dependencies, then import the package and run the command line."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(wheels), str(ROOT)], check=True, timeout=300, env=env, cwd=tmp_path)
    (wheel,) = wheels.glob("neurips26-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=env)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300, env=env, cwd=tmp_path)
    # the core's dependencies, linked from this environment (no index, no torch)
    site = Path(md.distribution("numpy").locate_file(""))
    links = tmp_path / "core-deps"
    links.mkdir()
    deps = _closure(_core_requirements())
    assert "torch" not in deps and "scipy" not in deps, f"core dependencies pull a heavy library: {sorted(deps)}"
    for dist in deps:
        for top in _top_levels(dist):
            if (site / top).exists() and not (links / top).exists():
                (links / top).symlink_to(site / top)
    venv_site = next((venv / "lib").glob("python3.*/site-packages"))
    (venv_site / "core-deps.pth").write_text(str(links) + "\n")
    code = ("import importlib.util, neurips26, neurips26.harness.report, neurips26.harness.docsgen, neurips26.cli;"
            "assert importlib.util.find_spec('torch') is None, 'torch visible: the venv is not core-only';"
            "print(neurips26.__file__)")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert str(venv) in out.stdout, f"imported from elsewhere: {out.stdout}"
    cli = subprocess.run([str(venv / "bin" / "neurips26"), "list"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert "mdp-types" in cli.stdout, cli.stdout[-2000:]
