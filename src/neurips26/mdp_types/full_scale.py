"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

The full run logs FrozenLake (and Taxi) transitions by stepping gymnasium's environments; the dry
run makes those environments and steps each once. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (the system's ``experiment.Config``)."""
    def environments() -> dict:
        import gymnasium as gym

        names = [("FrozenLake-v1", {"map_name": "8x8"})] + ([("Taxi-v4", {})] if config.include_taxi else [])
        for name, kw in names:
            env = gym.make(name, **kw)
            env.reset(seed=0)
            env.step(env.action_space.sample())
            env.close()
        return {"note": ", ".join(n for n, _ in names)}

    return [Stage("gymnasium environments", environments),
            unchecked("logging and large deviations", f"{config.frozenlake_steps:,} logged steps x "
                      f"{config.frozenlake_datasets} data sets, {config.ldp_paths:,} LDP paths: not run")]
