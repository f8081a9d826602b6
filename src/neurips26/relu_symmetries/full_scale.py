"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run trains small ReLU networks and samples fibers at larger sizes; the dry run lists what
it does not run. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked  # noqa: F401 - Stage: the return type


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    return [unchecked("fibers and training", f"{config.n_seeds} seeds, {config.gd_steps:,} gradient steps, "
                                             f"widths up to {max(config.scaling_widths)}: not run")]
