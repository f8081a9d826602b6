"""One task and how it runs: the picklable :class:`Task`, its run folder name and :func:`execute`.

The bottom of the spine: the executors (:mod:`neurips26.harness.executor`) run tasks through
:func:`execute`, the runner (:mod:`neurips26.harness.runner`) makes and schedules them, the report
(:mod:`neurips26.harness.report`) reads :func:`code_version`. This module imports none of them, so
the spine has no import circle (runner → executor → task; runner → report → task). Every name is
also importable from :mod:`neurips26.harness.runner`, where it lived before.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import json
import os
import platform
import subprocess
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from .claims import Outcome
from .config import ConfigError, ExperimentConfig, Resources
from .context import LineProgress, RunContext, progress_lines_wanted
from .results import Result, to_jsonable

SCALES = ("quick", "full")
EXECUTORS = ("local", "pool", "ray")
_PKG_ROOT = Path(__file__).resolve().parent.parent
# Set by the runner's SIGINT handler. Python can swallow a KeyboardInterrupt raised inside a
# weakref callback or __del__ ("Exception ignored in ..."), and a system's broad ``except`` can
# too; the flag makes such a Ctrl-C still stop the run (the interrupted system is not saved).
_SIGINT = threading.Event()


@dataclass
class SystemSpec:
    """A system to run: its name, its ``experiment`` module and config overrides."""

    name: str
    module: ModuleType
    overrides: dict[str, Any]


@dataclass
class Task:
    """One (system, seed, scale) run: everything a worker needs, and picklable.

    Attributes:
        system: system name (``lr_schedules``).
        module_name: importable name of its experiment module (a worker imports it).
        config: the validated config (pickled as its field values; a worker re-validates them
            with the module's ``Config``).
        overrides: the ``--set``/grid values applied on top of the scale's config.
        scale: ``quick`` or ``full``.
        seed: the run's seed.
        version: :func:`code_version` of the system on the driver.
        commit: the driver's git commit (``""`` outside git).
        run_key: the run folder's name (:func:`run_key`).
        resources: what the run needs (the config's ``resources()``).
        label: how progress lines name the task (``lr-schedules seed 1``).
        index: position in the run's task list (results are returned in this order).
        module: the module object on the driver (not pickled; the local executor uses it, so
            in-process test modules need not be importable).
        role: ``development`` (a seed a user asked for) or ``confirmation`` (one of the
            experiment's ``CONFIRMATION_SEEDS``, run to confirm claims tuned after a look).
    """

    system: str
    module_name: str
    config: Any
    overrides: dict[str, Any]
    scale: str
    seed: int
    version: str
    commit: str
    run_key: str
    resources: Resources = field(default_factory=Resources)
    label: str = ""
    index: int = 0
    module: ModuleType | None = field(default=None, repr=False, compare=False)
    role: str = "development"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["module"] = None
        if isinstance(self.config, ExperimentConfig):
            state["config"] = self.config.model_dump()
        return state

    def load(self) -> tuple[ModuleType, ExperimentConfig]:
        """The experiment module (imported by name in a worker) and the validated config."""
        module = self.module or importlib.import_module(self.module_name)
        config = self.config
        if not isinstance(config, ExperimentConfig):
            config = module.Config.model_validate(config)
        return module, config


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


def environment(device: str, commit: str | None = None) -> dict[str, Any]:
    """Versions of Python and key libraries, the machine and the device.

    ``commit``: the git commit to record (default: ask git here; a worker gets the driver's).
    """
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
        "git_commit": git_commit() if commit is None else commit,
        "versions": versions,
    }


def default_device() -> str:
    """``cuda`` if torch sees a GPU, else ``cpu``."""
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def config_resources(config: ExperimentConfig, system: str) -> Resources:
    """``config.resources()``, checked to be a :class:`Resources`.

    Raises:
        ConfigError: if the system's ``resources()`` returns something else or raises.
    """
    try:
        res = config.resources()
    except Exception as exc:  # a system's own method: report it as one line
        raise ConfigError(f"{system}: Config.resources() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(res, Resources):
        raise ConfigError(f"{system}: Config.resources() returned {type(res).__name__}, expected Resources")
    return res


def run_key(scale: str, seed: int, config: ExperimentConfig, version: str, role: str = "development") -> str:
    """Folder name of a run: scale, seed and a hash of (config, code version); a confirmation run
    is ``<scale>-confirm-seed<N>-<hash>``."""
    blob = json.dumps({"config": to_jsonable(config.model_dump()), "code": version}, sort_keys=True)
    tag = "-confirm" if role == "confirmation" else ""
    return f"{scale}{tag}-seed{seed}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"


def make_task(spec: SystemSpec, config: ExperimentConfig, *, scale: str, seed: int, index: int = 0,
              label: str = "", commit: str | None = None, role: str = "development") -> Task:
    """The :class:`Task` that runs ``spec`` with ``config`` at ``scale`` and ``seed`` (``role``:
    ``development`` or ``confirmation``)."""
    version = code_version(spec.name)
    default_label = f"{spec.name.replace('_', '-')} {'confirmation ' if role == 'confirmation' else ''}seed {seed}"
    return Task(system=spec.name, module_name=spec.module.__name__, config=config,
                overrides=dict(spec.overrides), scale=scale, seed=int(seed), version=version,
                commit=git_commit() if commit is None else commit,
                run_key=run_key(scale, seed, config, version, role),
                resources=config_resources(config, spec.name),
                label=label or default_label, index=index, module=spec.module, role=role)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _result(task: Task, config: Any, *, status: str, error: str, outcome: Outcome, started: str,
            wall: float, figures: Sequence[str] = (), captions: dict | None = None, device: str = "") -> Result:
    cfg = config.model_dump() if isinstance(config, ExperimentConfig) else config
    return Result(
        system=task.system, status=status, scale=task.scale, seed=task.seed,
        config=to_jsonable(cfg), run_key=task.run_key,
        code_version=task.version + (f" ({task.commit})" if task.commit else ""),
        started_at=started, finished_at=_now(), wall_time_s=round(wall, 3),
        metrics=to_jsonable(outcome.metrics), claims=list(outcome.claims), notes=outcome.notes,
        figures=list(figures), environment=environment(device, task.commit) if device else {}, error=error,
        overrides=to_jsonable(task.overrides), captions=dict(captions or {}),
        role=getattr(task, "role", "development"),
        backend=outcome.backend.to_dict() if outcome.backend is not None else None,
    )


def execute(task: Task, run_dir: Path, *, device: str | None = None, progress: Any = None) -> Result:
    """Run one task with ``run_dir`` as its folder (figures land there); returns its result.

    Does not write ``result.json`` (the driver does). Exceptions raised by the system (or by
    importing it) become a ``failed`` result with the traceback; ``KeyboardInterrupt``
    propagates. ``device=None`` takes this machine's default (cuda if torch sees a GPU).
    Without a progress display, when stderr is not a terminal (a log), the run's stages print
    plain progress lines (:class:`~neurips26.harness.context.LineProgress`: a line per stage and
    at least every ``NEURIPS26_PROGRESS_EVERY`` seconds, default 60).
    """
    device = device or default_device()
    lines = None
    if progress is None and progress_lines_wanted():  # a log: a line per stage and at least every minute
        lines = progress = LineProgress(task.label or task.system, every_s=_progress_every())
    ctx = RunContext(seed=task.seed, out_dir=Path(run_dir), device=device, progress=progress,
                     confirmation=getattr(task, "role", "development") == "confirmation")
    started, t0 = _now(), time.perf_counter()
    status, error, outcome = "ok", "", Outcome()
    config: Any = task.config
    try:
        module, config = task.load()
        outcome = module.run(config, ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"{task.system}.experiment.run returned {type(outcome).__name__}, expected Outcome")
    except KeyboardInterrupt:
        raise
    except Exception:  # one system failing must not lose the others
        status, error, outcome = "failed", traceback.format_exc(), Outcome()
    else:
        use = outcome.backend
        if use is not None and use.too_many_failed:  # a verdict never rests on a dead backend
            status = "failed"
            error = (f"backend failed: {use.failed} of {use.calls} calls failed (allowed: at most "
                     f"{use.max_failed_fraction:.0%}){' — ' + use.what if use.what else ''}")
    finally:
        if lines is not None:
            lines.close()
    if _SIGINT.is_set():  # a Ctrl-C was swallowed during the run: its result is not trusted
        raise KeyboardInterrupt
    return _result(task, config, status=status, error=error, outcome=outcome, started=started,
                   wall=time.perf_counter() - t0, figures=ctx.figures, captions=ctx.captions, device=device)


def _progress_every() -> float:
    """Seconds between progress lines of a running stage in a log (``NEURIPS26_PROGRESS_EVERY``,
    default 60)."""
    try:
        v = float(os.environ.get("NEURIPS26_PROGRESS_EVERY", "60"))
    except ValueError:
        return 60.0
    return v if v > 0 else 60.0


def failed_result(task: Task, error: str) -> Result:
    """A ``failed`` result for a task whose worker died or could not return (``error``: why)."""
    now = _now()
    return _result(task, task.config, status="failed", error=error, outcome=Outcome(), started=now, wall=0.0)


__all__ = ["SystemSpec", "Task", "code_version", "git_commit", "environment", "default_device",
           "config_resources", "run_key", "make_task", "execute", "failed_result", "SCALES", "EXECUTORS"]
