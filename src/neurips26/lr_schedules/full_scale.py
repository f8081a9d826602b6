"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

No neural network and no data set: the full run is numerical optimisation of schedules; the dry run
checks the config only and lists the parts it does not run. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked  # noqa: F401 - Stage: the return type


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    return [unchecked("schedule optimisation", f"{len(config.horizons)} horizons up to {max(config.horizons)} "
                                                 f"steps at N = {config.N}, {config.max_iter} iterations each: "
                                                 "CPU hours, not run"),
            unchecked("Monte Carlo", f"{config.mc_seeds} seeds x {config.mc_T} steps: not run")]
