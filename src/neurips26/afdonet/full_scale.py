"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Builds the Navier–Stokes reference network and its equal-parameter FNO, and the three Burgers
operators (AFD decoder, Fourier decoder, matched FNO) on PyTorch's ``meta`` device with a meta
CPU forward pass of 2 samples each (their forwards check input values, which meta tensors do not
have); generates 16 Burgers samples at full resolution; runs the Navier–Stokes solver
on two trajectories of full length (the full data set's size and memory are computed from the
config). See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, meta_build, training_memory_gb, unchecked

from .models import AFDOperator, FNOBaseline, ReferenceAFDONet, count_parameters, matched_fno


def stages(config) -> list[Stage]:
    """The checks of ``config`` (an :class:`~neurips26.afdonet.experiment.Config`)."""
    from .experiment import _burgers_data, _ns_velocity

    def ns_models() -> dict:
        built = meta_build({"NS reference AFDONet": ReferenceAFDONet})
        ref = built["models"]["NS reference AFDONet"]
        n_ref = count_parameters(ref)
        import torch

        with torch.device("meta"):  # matching the width builds ~60 candidates: on meta, free
            fno, width = ((FNOBaseline(2, 2, config.ns_fno_width, 12, 4), config.ns_fno_width)
                          if config.ns_fno_width > 0 else matched_fno(n_ref, 2, 2, modes=12, widths=range(8, 129, 2)))
        params = {**built["params"], "NS FNO": count_parameters(fno)}
        # the forward passes check their inputs' values (not possible on meta): 2 samples on the CPU
        torch.manual_seed(0)
        cpu_fno = FNOBaseline(2, 2, width, 12, 4)
        out = cpu_fno(torch.zeros(2, 2, 64, 64), sample=False)[0]
        if tuple(out.shape) != (2, 2, 64, 64):
            raise ValueError(f"NS FNO output of shape {tuple(out.shape)}; expected (2, 2, 64, 64)")
        # NS data: (traj, T+1, 2, 64, 64) float32, plus the float64 vorticity and the split copies
        data_gb = config.ns_trajectories * (config.ns_steps + 1) * 2 * 64 * 64 * 4 * 4 / 1e9
        return {"params": params, "peak_memory_gb": data_gb + training_memory_gb(max(params.values())) * 2 + 1.0,
                "note": f"NS data ~{data_gb:.1f} GB with copies; 2x margin on the models, + 1 GB for torch"}

    def burgers_models() -> dict:
        kw = dict(n_poles=config.n_poles, n_origin=config.n_origin, width=24, modes=16, n_layers=3, pool=16)
        built = meta_build({"Burgers AFD": lambda: AFDOperator("circle", "afd", **kw),
                            "Burgers Fourier decoder": lambda: AFDOperator("circle", "fourier", **kw)})
        import torch

        torch.manual_seed(0)
        fno, _ = matched_fno(built["params"]["Burgers AFD"], 1, 1, modes=16, n_layers=4)
        x = torch.zeros(2, 1, 64)  # 2 samples on the CPU (the forwards check their inputs' values)
        for name, m in (("AFD", AFDOperator("circle", "afd", **kw)), ("Fourier", AFDOperator("circle", "fourier", **kw)),
                        ("FNO", fno)):
            out = m(x, sample=False)[0]
            if out.shape[0] != 2:
                raise ValueError(f"Burgers {name} output of shape {tuple(out.shape)}")
        return {"params": {**built["params"], "Burgers FNO": count_parameters(fno)}}

    def burgers_data() -> dict:
        # 16 samples at the full resolution and viscosity (the cost per sample does not depend on
        # the count; all 2560 take ~40 CPU s)
        data = _burgers_data(config.model_copy(update={"burgers_train": 12, "burgers_test": 4}), 0)
        x, y = data[64]
        if x.shape[0] != 16 or y.shape != x.shape:
            raise ValueError(f"Burgers data: x {tuple(x.shape)}, y {tuple(y.shape)}; expected (16, 1, 64)")
        return {"note": f"16 of {config.burgers_train + config.burgers_test} Burgers samples at full resolution"}

    def ns_solver() -> dict:
        small = config.model_copy(update={"ns_trajectories": 2})
        vel = _ns_velocity(small, 0)
        want = (2, config.ns_steps + 1, 2, 64, 64)
        if tuple(vel.shape) != want:
            raise ValueError(f"NS velocity of shape {tuple(vel.shape)}; expected {want}")
        return {"note": f"2 of {config.ns_trajectories} trajectories at full length"}

    return [Stage("NS networks (meta; FNO forward)", ns_models), Stage("Burgers operators (forward)", burgers_models),
            Stage("Burgers data (16 samples)", burgers_data), Stage("NS solver (2 trajectories)", ns_solver),
            unchecked("sphere Allen–Cahn part", "its spherical-harmonic operators are built from solver tables: "
                      "not built on meta"),
            unchecked("training", f"{config.burgers_epochs} Burgers epochs x 3 operators x {len(config.seeds)} seeds "
                      "on the GPU")]
