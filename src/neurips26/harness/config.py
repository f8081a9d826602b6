"""Validated experiment configs and ``--set key=value`` overrides.

Every system's ``experiment.Config`` subclasses :class:`ExperimentConfig` (a pydantic model
that forbids unknown keys) and provides ``quick()`` (default: minutes on 2 CPU cores) and
``full()`` (the paper's scale, for a GPU or a cluster).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class ConfigError(ValueError):
    """A config override names an unknown key or a value that fails validation.

    The message is one line: the key, the value and what is allowed.
    """


class ExperimentConfig(BaseModel):
    """Base of every system's ``Config``: unknown keys are errors, values are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

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
    for key, value in overrides.items():
        if key not in cls.model_fields:
            allowed = ", ".join(cls.model_fields)
            raise ConfigError(f"{system}: unknown config key {key!r}; allowed keys: {allowed}")
    try:
        return cls.model_validate({**config.model_dump(), **overrides})
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else "?"
        value = overrides.get(key, err.get("input"))
        allowed = _allowed(cls, key) if key in cls.model_fields else ""
        raise ConfigError(f"{system}: invalid value {value!r} for {key!r}: {err['msg']}"
                          + (f" (allowed: {allowed})" if allowed else "")) from None
