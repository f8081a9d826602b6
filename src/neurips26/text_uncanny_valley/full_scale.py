"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run scores texts at larger sizes; the dry run checks the config and lists the scoring it
does not run. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked  # noqa: F401 - Stage: the return type


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    return [unchecked("scoring", "text generation and scoring at the full sizes: not run")]
