"""The on-disk result of one system run, atomic writes and JSON conversion.

Layout: ``<out>/<system>/<run_key>/result.json`` with figures in ``figures/*.png`` beside it;
``run_key`` = ``<scale>-seed<seed>-<hash>`` where the hash covers the config and the code
version, so a rerun with the same config and code finds its finished run and skips it.

A run over two or more seeds also writes ``<out>/<system>/<scale>-seeds-summary.json`` (each
claim combined over the seeds: held in k of n, verdict by the unanimous rule); see
:func:`neurips26.harness.runner.seeds_summary` (computes it from any results) and
:func:`neurips26.harness.runner.results_by_seed` (a folder's results per system, scale and seed).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .claims import Claim, Verdict, counts_by_kind

RESULT_FILE = "result.json"
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``.

    A reader never sees a half-written file; an interrupted write leaves the old file intact.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file normal permissions
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """UTF-8 text version of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))


def to_jsonable(x: Any) -> Any:
    """Convert numpy/torch scalars and arrays, tuples, paths and enums to JSON types.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"`` (strict JSON has no
    NaN); dict keys become strings.
    """
    if isinstance(x, Verdict):
        return x.value
    if isinstance(x, Claim):
        return to_jsonable(x.to_dict())
    if isinstance(x, dict):
        return {str(k): to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, Path):
        return str(x)
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    if hasattr(x, "tolist"):  # numpy arrays/scalars, torch tensors
        return to_jsonable(x.tolist())
    if hasattr(x, "model_dump"):  # pydantic
        return to_jsonable(x.model_dump())
    return str(x)


@dataclass
class Result:
    """Everything recorded about one system run.

    Attributes:
        system: system name (``lr_schedules``).
        status: ``ok``, or ``failed`` (then ``error`` holds the traceback).
        scale: ``quick`` or ``full`` (the base config; see ``overrides``).
        seed: the run's seed.
        config: the validated config as a dict.
        run_key: the folder name (scale, seed and a hash of config + code version).
        code_version: hash of the system's and the spine's source files (+ git commit if known).
        started_at / finished_at: ISO-8601 UTC times; ``wall_time_s``: seconds.
        cpu_time_s: CPU seconds (user + system) of the task's process, child processes
            included (:class:`~neurips26.harness.context.TaskCost`); ``None`` if not measured
            (records written before it existed, a worker that died).
        peak_rss_mb: peak resident memory of the task in MiB (``None``: not measured).
        metrics, claims, notes: from the system's :class:`~neurips26.harness.claims.Outcome`.
        figures: figure file names relative to the run folder (the first is the key figure).
        captions: figure file name → caption (what to look at, what the paper predicts).
        environment: versions, machine, device.
        error: traceback text if ``status == "failed"``.
        overrides: the ``--set`` values applied on top of the scale's config (empty if none).
        role: ``development`` (a seed the user asked for) or ``confirmation`` (one of the
            experiment's ``CONFIRMATION_SEEDS``; judges the claims tuned after a look).
        backend: model-backend calls made and failed (``BackendUse`` as a dict), or ``None``.
    """

    system: str
    status: str
    scale: str
    seed: int
    config: dict[str, Any]
    run_key: str
    code_version: str
    started_at: str
    finished_at: str
    wall_time_s: float
    metrics: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    notes: str = ""
    figures: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)
    role: str = "development"
    backend: dict[str, Any] | None = None
    cpu_time_s: float | None = None
    peak_rss_mb: float | None = None

    def to_json(self) -> str:
        """Strict JSON text (no NaN)."""
        d = asdict(self)
        d["claims"] = [c.to_dict() for c in self.claims]
        return json.dumps(to_jsonable(d), indent=2, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Result":
        """Inverse of :meth:`to_json`; checks the record's fields and their types.

        Raises:
            ValueError: if the text is not a result record (one line saying what is wrong).
        """
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a neurips26 result record: invalid JSON ({exc})") from None
        if not isinstance(d, dict):
            raise ValueError(f"not a neurips26 result record: a JSON {type(d).__name__}, expected an object")
        missing = [k for k in _REQUIRED if k not in d]
        unknown = sorted(set(d) - set(_FIELD_TYPES))
        if missing or unknown:
            raise ValueError("not a neurips26 result record: "
                             + "; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                                         + ([f"unknown {', '.join(unknown)}"] if unknown else [])))
        for key, types in _FIELD_TYPES.items():
            if key in d and (not isinstance(d[key], types) or isinstance(d[key], bool) and bool not in types):
                raise ValueError(f"not a neurips26 result record: {key} is {d[key]!r:.60}")
        if d["status"] not in ("ok", "failed"):
            raise ValueError(f"not a neurips26 result record: status {d['status']!r:.40} (ok or failed)")
        bad = [f for f in d.get("figures", []) if not isinstance(f, str) or not _inside(f)]
        if bad:
            raise ValueError(f"not a neurips26 result record: figure path {bad[0]!r:.60} outside the run folder")
        try:
            d["claims"] = [Claim.from_dict(c) for c in d.get("claims", [])]
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a neurips26 result record: bad claim ({exc})") from None
        return cls(**d)

    def save(self, run_dir: Path) -> Path:
        """Atomically write ``run_dir/result.json``; returns its path."""
        path = Path(run_dir) / RESULT_FILE
        atomic_write_text(path, self.to_json())
        return path

    def counts(self) -> dict[str, int]:
        """Number of claims per verdict value."""
        out = {v.value: 0 for v in Verdict}
        for c in self.claims:
            out[c.verdict.value] += 1
        return out

    def counts_by_kind(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}``: paper claims first, then reconstruction, then checks."""
        return counts_by_kind(self.claims)


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "system": (str,), "status": (str,), "scale": (str,), "seed": (int,), "config": (dict,),
    "run_key": (str,), "code_version": (str,), "started_at": (str,), "finished_at": (str,),
    "wall_time_s": (int, float), "metrics": (dict,), "claims": (list,), "notes": (str,),
    "figures": (list,), "environment": (dict,), "error": (str,), "overrides": (dict,), "captions": (dict,),
    "role": (str,), "backend": (dict, type(None)),
    "cpu_time_s": (int, float, type(None)), "peak_rss_mb": (int, float, type(None)),
}
_REQUIRED = ("system", "status", "scale", "seed", "config", "run_key", "code_version",
             "started_at", "finished_at", "wall_time_s")


def _inside(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(parts) and not Path(rel).is_absolute() and ".." not in parts


def load_result(path: Path) -> Result:
    """Read a ``result.json``."""
    return Result.from_json(Path(path).read_text(encoding="utf-8"))


def latest_results(out_dir: Path, skipped: list[tuple[Path, str]] | None = None,
                   ) -> dict[str, tuple[Path, Result]]:
    """The most recently finished result per system under ``out_dir``.

    Returns a mapping system → (run folder, Result). Unreadable files are skipped; pass a list
    as ``skipped`` to receive (path, reason) for each.
    """
    best: dict[str, tuple[Path, Result]] = {}
    for path in sorted(Path(out_dir).glob(f"*/*/{RESULT_FILE}")):
        try:
            res = load_result(path)
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            if skipped is not None:
                skipped.append((path, str(exc)))
            continue
        cur = best.get(res.system)
        if cur is None or res.finished_at > cur[1].finished_at:
            best[res.system] = (path.parent, res)
    return best
