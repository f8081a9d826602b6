"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the largest point clouds the full run uses (a noisy circle with outliers at full size) and
lists the bifiltrations it does not build. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    def clouds() -> dict:
        import numpy as np

        from .data import circle_with_outliers

        pts = circle_with_outliers(config.n_circle, config.n_outliers, np.random.default_rng(0))
        pts = pts[0] if isinstance(pts, tuple) else pts
        return {"note": f"circle with outliers {tuple(np.shape(pts))}"}

    out = [Stage("point clouds (full size)", clouds)]
    if config.million_points:
        out.append(unchecked("million-point bifiltration", "one masked build on 10^6 points (~35 s CPU per the "
                             "config): not run"))
    return out + [unchecked("scaling", f"sizes up to {max(config.scaling_sizes):,} points: not run")]
