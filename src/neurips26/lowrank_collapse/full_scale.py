"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds every vector field of the run at its configured size on PyTorch's ``meta`` device, pushes
a meta batch through each (shape paths), and generates the largest data set (the synthetic
subspace mixture) at full size. See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

import numpy as np

from neurips26.harness.dryrun import Stage, meta_build, meta_tensor, training_memory_gb, unchecked

from .targets import subspace_mixture
from .vector_field import MLPVectorField


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.lowrank_collapse.experiment.Config`)."""

    def models() -> dict:
        built = meta_build({
            "mixture field": lambda: MLPVectorField(2, config.width, config.depth),
            "subspace field": lambda: MLPVectorField(config.ambient_dim, config.sub_width, 2, activation="silu"),
            "memorisation field": lambda: MLPVectorField(2, config.mem_width, 2, activation="silu"),
        })
        m = built["models"]
        m["mixture field"](0.5, meta_tensor(config.batch, 2))
        m["subspace field"](0.5, meta_tensor(config.batch, config.ambient_dim))
        m["memorisation field"](0.5, meta_tensor(config.batch, 2))
        # largest activations: the CNF's reverse-KL batch unrolled over ode_steps (kept for backward)
        acts = config.vi_batch * config.width * config.depth * config.ode_steps * 4
        sub = config.n_train_sub * config.ambient_dim  # the subspace data set held in memory
        peak = training_memory_gb(max(built["params"].values()), activations=acts + sub) * 1.5 + 1.0
        return {"params": built["params"], "peak_memory_gb": peak,
                "note": "1.5x margin + 1 GB for torch itself"}

    def data() -> dict:
        data = subspace_mixture(config.n_train_sub, config.ambient_dim, config.subspace_dim,
                                rng=np.random.default_rng(0))
        shape = tuple(data.x.shape)
        if shape != (config.n_train_sub, config.ambient_dim):
            raise ValueError(f"subspace_mixture returned shape {shape}")
        return {"note": f"subspace data {shape}"}

    return [Stage("fields (meta, forward)", models), Stage("subspace data (full size)", data),
            unchecked("training", f"flow matching {config.fm_steps} steps and reverse-KL {config.vi_steps} steps "
                                  "need the GPU; only shapes are checked")]
