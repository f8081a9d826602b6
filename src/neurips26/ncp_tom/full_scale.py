"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run asks a chat model (``backend``/``model``); the offline world and planner are what the
quick run checks. The dry run lists the endpoint calls it cannot make. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked  # noqa: F401 - Stage: the return type


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    return [unchecked("LLM instances", f"{config.llm_instances} instances x {len(config.settings)} settings to "
                                       f"the {config.backend} endpoint ({config.model}): needs the endpoint")]
