"""Benchmark for afdonet: ratios against baselines measured in the same process (CPU seconds).

* Maximal selection cost against the number of candidate poles (radii × angles), vectorised
  (one batched FFT over the polar grid) vs a loop over candidates (one quadrature each); the
  loop is timed only up to a few thousand candidates and its cost extrapolated linearly beyond.
* AFD-mode AFDONet (TM decoder) vs an equal-parameter FNO (neuraloperator) on 1-D Burgers-sized
  inputs: training and inference CPU seconds per sample at N = 64 and N = 256.
* Reference AFDONet (released architecture, 4.1 M parameters) vs FNO at ~equal parameters on
  64×64 two-channel fields: inference seconds per sample.

Run: ``.venv/bin/python benchmarks/afdonet.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from _timing import best_cpu, record

from neurips26.afdonet import (
    AFDOperator,
    ReferenceAFDONet,
    boundary_points,
    count_parameters,
    default_radii,
    fit,
    inference_seconds_per_sample,
    matched_fno,
    maximal_selection,
    maximal_selection_loop,
)


def selection_scaling(m=2048):
    z = boundary_points(m)
    g = 1 / (1 - 0.9 * z) + 0.5 / (1 - 0.8j * z) ** 2
    print(f"maximal selection, M = {m} boundary samples (CPU s)")
    print(f"{'candidates':>11} {'vectorised':>11} {'loop':>10} {'loop/vec':>9}")
    rows = []
    loop_rate = None
    for n_rad, n_ang in ((4, 64), (8, 128), (16, 256), (32, 512), (64, 1024), (64, 2048)):
        radii = default_radii(0.99, n_rad)
        tv, (a_v, _) = best_cpu(lambda: maximal_selection(g, radii, n_ang, refine_rounds=0))
        n_c = n_rad * n_ang
        if n_c <= 2048:
            ang = 2 * math.pi * torch.arange(n_ang, dtype=torch.float64) / n_ang
            cands = torch.polar(radii[:, None].expand(-1, n_ang), ang[None].expand(n_rad, -1)).flatten()
            tl, (a_l, _) = best_cpu(lambda: maximal_selection_loop(g, cands), 1)
            assert abs(a_l - a_v) < 1e-12
            loop_rate = tl / n_c
            est = ""
            record(f"maximal selection, {n_c} candidate poles (M = {m}): batched FFT vs loop over candidates", tv, tl,
                   note=f"{n_rad} radii × {n_ang} angles; same maximiser (checked to 1e-12)")
        else:
            tl, est = loop_rate * n_c, " (extrapolated)"
        rows.append((n_c, tv, tl))
        print(f"{n_c:11d} {tv:11.4f} {tl:10.3f} {tl / tv:9.1f}{est}")
    slope = np.polyfit(np.log([r[0] for r in rows]), np.log([max(r[1], 1e-6) for r in rows]), 1)[0]
    print(f"log-log slope of vectorised time vs candidates: {slope:.2f} (loop: 1 by construction; extrapolated rows "
          "are printed, not recorded)\n")


def operator_cost():
    torch.manual_seed(0)
    afd = AFDOperator("circle", "afd", n_poles=8, n_origin=8, width=24, modes=16, n_layers=3, pool=16)
    fno, width = matched_fno(count_parameters(afd), 1, modes=16)
    print(f"AFD mode vs FNO at equal parameters ({count_parameters(afd)} vs {count_parameters(fno)}, FNO width {width})")
    print(f"{'N':>5} {'model':>6} {'train s/sample':>15} {'infer s/sample':>15}")
    for n in (64, 256):
        x = torch.randn(128, 1, n)
        y = torch.randn(128, 1, n)
        res = {}
        for name, mdl in (("afd", afd), ("fno", fno)):
            rep = fit(mdl, x, y, epochs=2, batch_size=32, lr=1e-3, seed=0)
            res[name] = (rep.seconds_per_sample, inference_seconds_per_sample(mdl, x))
            print(f"{n:5d} {name:>6} {res[name][0]:15.2e} {res[name][1]:15.2e}")
        print(f"{n:5d} ratio afd/fno: train {res['afd'][0] / res['fno'][0]:.2f}, "
              f"inference {res['afd'][1] / res['fno'][1]:.2f}")
        for k, what in ((0, "training"), (1, "inference")):
            record(f"{what} per sample, 1-D N = {n}: AFD-mode AFDONet vs FNO at equal parameters", res["afd"][k],
                   res["fno"][k], note=f"{count_parameters(afd)} vs {count_parameters(fno)} parameters; ratio > 1: "
                                       "AFDONet faster")
    ref = ReferenceAFDONet()
    fno2, w2 = matched_fno(count_parameters(ref), 2, 2, modes=12, widths=range(16, 129, 4))
    x = torch.randn(32, 2, 64, 64)
    tr, tf = inference_seconds_per_sample(ref, x), inference_seconds_per_sample(fno2, x)
    print(f"\nreference ({count_parameters(ref)} params) vs FNO width {w2} ({count_parameters(fno2)} params), 64×64×2: "
          f"inference {tr:.2e} vs {tf:.2e} s/sample, ratio {tr / tf:.2f}")
    record("inference per sample, 64×64×2 fields: reference AFDONet vs FNO at ~equal parameters", tr, tf,
           note=f"{count_parameters(ref)} vs {count_parameters(fno2)} parameters (FNO width {w2}); ratio > 1: "
                "AFDONet faster")


if __name__ == "__main__":
    torch.set_num_threads(1)
    selection_scaling()
    operator_cost()
