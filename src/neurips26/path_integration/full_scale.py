"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the hierarchical RNN at Sorscher scale on PyTorch's ``meta`` device, runs a meta batch of
training length through it, and simulates the analysis trajectories at full size. See
:mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

import numpy as np

from neurips26.harness.dryrun import Stage, meta_build, meta_tensor, on_meta, training_memory_gb, unchecked

from .trajectories import Arena, simulate_trajectories


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.path_integration.experiment.Config`)."""
    from .experiment import _build

    def model() -> dict:
        built = meta_build({"HRNN": lambda: _build(config, 0)})
        net = built["models"]["HRNN"]
        B, T = config.batch, config.seq_len
        on_meta(net, meta_tensor(B, T), meta_tensor(B, T), meta_tensor(B), meta_tensor(B, 2))
        n = built["params"]["HRNN"]
        # kept for backward per step: both recurrent states and the place/HD read-outs
        acts = B * T * (config.n_angular + config.n_positional + config.n_place_cells + config.n_hd_cells) * 3
        return {"params": built["params"], "peak_memory_gb": training_memory_gb(n, activations=acts) * 1.5 + 2.3,
                "note": "1.5x margin, + 1 GB for torch and 1.3 GB for the FFT shuffles of the analysis"}

    def trajectories() -> dict:
        tr = simulate_trajectories(config.n_analysis, config.seq_len, np.random.default_rng(0),
                                   arena=Arena(config.arena_side))
        return {"note": f"{config.n_analysis} x {config.seq_len} analysis steps ({type(tr).__name__})"}

    return [Stage("HRNN (meta, forward)", model), Stage("trajectories (full size)", trajectories),
            unchecked("training", f"{config.train_steps} Adam steps at batch {config.batch}: hours on one GPU")]
