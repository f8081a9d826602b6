"""Run systems: resolve configs, seed, skip finished runs, isolate failures, write the report.

One system failing never loses another's result: each result is written atomically as soon as
its system finishes, a failure is recorded as a ``failed`` result, and Ctrl-C stops after
keeping every finished system (the interrupted one reruns next time).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import signal
import subprocess
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.markup import escape

from .claims import Outcome
from .config import ConfigError, ExperimentConfig, apply_overrides
from .context import RunContext
from .results import RESULT_FILE, Result, load_result, to_jsonable

SCALES = ("quick", "full")
_PKG_ROOT = Path(__file__).resolve().parent.parent
# Set by the runner's SIGINT handler. Python can swallow a KeyboardInterrupt raised inside a
# weakref callback or __del__ ("Exception ignored in ..."), and a system's broad ``except`` can
# too; the flag makes such a Ctrl-C still stop the run (the interrupted system is not saved).
_SIGINT = threading.Event()


def _on_sigint(signum: int, frame: Any) -> None:
    _SIGINT.set()
    raise KeyboardInterrupt


@dataclass
class SystemSpec:
    """A system to run: its name, its ``experiment`` module and config overrides."""

    name: str
    module: ModuleType
    overrides: dict[str, Any]


def code_version(system: str) -> str:
    """A hash of the system's, the spine's and the model backends' ``.py`` sources.

    It changes whenever the code a run depends on does, so such runs are redone.
    """
    h = hashlib.sha256()
    for folder in (_PKG_ROOT / "harness", _PKG_ROOT / "backends", _PKG_ROOT / system):
        if folder.is_dir():
            for path in sorted(folder.rglob("*.py")):
                h.update(path.relative_to(_PKG_ROOT).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:12]


def git_commit() -> str:
    """The git commit of the checkout (``+dirty`` if modified), or ``""`` outside git."""
    try:
        root = _PKG_ROOT.parent.parent
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "src"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return sha + ("+dirty" if dirty and sha else "")
    except (OSError, subprocess.SubprocessError):
        return ""


def environment(device: str) -> dict[str, Any]:
    """Versions of Python and key libraries, the machine and the device."""
    versions = {}
    for pkg in ("neurips26", "numpy", "scipy", "torch", "scikit-learn", "matplotlib", "pydantic"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "device": device,
        "git_commit": git_commit(),
        "versions": versions,
    }


def default_device() -> str:
    """``cuda`` if torch sees a GPU, else ``cpu``."""
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def resolve_config(module: ModuleType, scale: str, overrides: dict[str, Any], system: str) -> ExperimentConfig:
    """The system's ``Config.quick()``/``full()`` with ``overrides`` applied and validated.

    Raises:
        ConfigError: unknown scale, unknown key or invalid value (one-line message).
    """
    if scale not in SCALES:
        raise ConfigError(f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    try:
        base = getattr(module.Config, scale)()
    except NotImplementedError as exc:
        raise ConfigError(f"{system}: no {scale} configuration ({exc})") from None
    return apply_overrides(base, overrides, system) if overrides else base


def run_key(scale: str, seed: int, config: ExperimentConfig, version: str) -> str:
    """Folder name of a run: scale, seed and a hash of (config, code version)."""
    blob = json.dumps({"config": to_jsonable(config.model_dump()), "code": version}, sort_keys=True)
    return f"{scale}-seed{seed}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def run_one(spec: SystemSpec, config: ExperimentConfig, *, scale: str, seed: int, out: Path,
            device: str, progress: Any = None, force: bool = False) -> tuple[Result, bool]:
    """Run one system (or reuse its finished run). Returns (result, reused).

    Exceptions raised by the system are caught and returned as a ``failed`` result;
    ``KeyboardInterrupt`` propagates and nothing is written for the interrupted system.
    """
    version = code_version(spec.name)
    key = run_key(scale, seed, config, version)
    run_dir = Path(out) / spec.name / key
    existing = run_dir / RESULT_FILE
    if existing.exists() and not force:
        try:
            res = load_result(existing)
            if res.status == "ok":
                return res, True
        except ValueError:
            pass
    ctx = RunContext(seed=seed, out_dir=run_dir, device=device, progress=progress)
    started, t0 = _now(), time.perf_counter()
    status, error, outcome = "ok", "", Outcome()
    try:
        outcome = spec.module.run(config, ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"{spec.name}.experiment.run returned {type(outcome).__name__}, expected Outcome")
    except KeyboardInterrupt:
        raise
    except Exception:  # one system failing must not lose the others
        status, error = "failed", traceback.format_exc()
    if _SIGINT.is_set():  # a Ctrl-C was swallowed during the run: its result is not trusted
        raise KeyboardInterrupt
    result = Result(
        system=spec.name, status=status, scale=scale, seed=seed,
        config=to_jsonable(config.model_dump()), run_key=key,
        code_version=version + (f" ({c})" if (c := git_commit()) else ""),
        started_at=started, finished_at=_now(), wall_time_s=round(time.perf_counter() - t0, 3),
        metrics=to_jsonable(outcome.metrics), claims=list(outcome.claims), notes=outcome.notes,
        figures=list(ctx.figures), environment=environment(device), error=error,
        overrides=to_jsonable(spec.overrides), captions=dict(ctx.captions),
    )
    result.save(run_dir)
    return result, False


def reproduce(specs: Sequence[SystemSpec], *, scale: str = "quick", seed: int = 0,
              out: Path = Path("results"), device: str | None = None, force: bool = False,
              console: Any = None) -> tuple[list[Result], bool]:
    """Run each system in turn, then write ``out/report.html``.

    Configs are resolved (and validated) for every system before any runs, so a bad
    ``--set`` fails fast. Returns (results of the systems that finished, interrupted?).

    Raises:
        ConfigError: if any system's config is invalid.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .report import write_report

    device = device or default_device()
    configs = [resolve_config(s.module, scale, s.overrides, s.name) for s in specs]
    results: list[Result] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    _SIGINT.clear()
    handler = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) not in (
            signal.SIG_IGN, None):
        handler = signal.signal(signal.SIGINT, _on_sigint)
    interrupted = False
    try:
        with Progress(*columns, console=console, transient=False) as progress:
            interrupted = _run_all(specs, configs, results, scale=scale, seed=seed, out=out,
                                   device=device, force=force, progress=progress)
        try:
            write_report(Path(out))
        except KeyboardInterrupt:  # the previous report.html is left intact (atomic write)
            interrupted = True
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        interrupted = interrupted or _SIGINT.is_set()
        _SIGINT.clear()
    return results, interrupted


def _run_all(specs: Sequence[SystemSpec], configs: list[ExperimentConfig], results: list[Result], *,
             scale: str, seed: int, out: Path, device: str, force: bool, progress: Any) -> bool:
    """Run the systems in turn, appending to ``results``; returns whether Ctrl-C stopped it."""
    top = progress.add_task("systems", total=len(specs))
    current = ""
    try:
        for spec, config in zip(specs, configs):
            current = spec.name
            progress.update(top, description=f"[bold]{spec.name}")
            res, reused = run_one(spec, config, scale=scale, seed=seed, out=out, device=device,
                                  progress=progress, force=force)
            results.append(res)
            current = ""
            counts = res.counts()
            tag = "reused" if reused else f"{res.wall_time_s:.1f}s"
            if res.status == "ok":
                progress.console.print(
                    f"[green]✓[/] {spec.name} ({tag}): {counts['holds']} hold, "
                    f"{counts['does_not_hold']} do not hold, {counts['not_checkable']} not checkable")
            else:
                last = res.error.strip().splitlines()[-1] if res.error.strip() else "error"
                progress.console.print(f"[red]✗[/] {spec.name} failed: {escape(last)}")
            progress.advance(top)
            if _SIGINT.is_set():
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        where = f" during {current}" if current else ""
        progress.console.print(f"[yellow]interrupted{where}; finished systems are kept; rerun to resume")
        return True
    return False


__all__ = ["SystemSpec", "reproduce", "run_one", "resolve_config", "code_version", "ConfigError"]
