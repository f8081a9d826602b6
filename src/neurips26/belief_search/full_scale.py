"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run asks a vision-language model at ``base_url`` and plays episodes on synthetic videos;
the dry run lists the endpoint calls it cannot make. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked  # noqa: F401 - Stage: the return type


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    return [unchecked("VLM looks", f"{config.vlm_looks} looks over {config.vlm_videos} videos to "
                                   f"{config.base_url or config.backend} ({config.model}): needs the server"),
            unchecked("episodes", f"{len(config.seeds)} seeds x {config.videos_per_seed} videos x "
                                  f"{config.episodes_per_video} episodes: not run")]
