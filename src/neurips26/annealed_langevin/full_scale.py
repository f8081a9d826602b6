"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run is Monte Carlo and SDE integration at larger sizes, plus an sbi posterior; the dry run
imports sbi's posterior estimator builder (the adapter's dependency) and lists the sampling it does
not run. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    def sbi_available() -> dict:
        import sbi  # noqa: F401 - the sbi part fails at import without it

        return {"note": f"sbi {getattr(sbi, '__version__', '?')} importable"}

    return [Stage("sbi importable", sbi_available),
            unchecked("samplers", f"{config.sampler_particles} particles, reverse SDE up to "
                                  f"{max(config.rsde_steps)} steps: not run"),
            unchecked("sbi training", f"{config.sbi_simulations} simulations, {config.sbi_epochs} epochs: not run")]
