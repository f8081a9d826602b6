"""Benchmark for path_integration: ratios against baselines measured in the same process.

* Training throughput (sequences/s) of the HRNN vs a single-module RNN with the same total number
  of recurrent units (N_A + N_P) and the same readouts, on the same pre-simulated batches (CPU,
  1 thread, process time).
* Rate maps for 4096 units: one sparse product (``rate_maps``) vs one ``numpy.histogram2d`` per
  unit (``rate_maps_loop``).
* Shuffle controls for 512 units: all circular shifts by FFT (``shuffled_statistics``) vs 200
  explicit ``np.roll`` shifts.
* Memory at full scale, on paper: BPTT activations and parameters of the full config.

Run: ``.venv/bin/python benchmarks/path_integration.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import numpy as np
import torch
from _timing import best_cpu, record

from neurips26.path_integration import (
    HRNN,
    Arena,
    HeadDirectionCells,
    PlaceCells,
    SingleModuleRNN,
    TrainingConfig,
    rate_maps,
    rate_maps_loop,
    shuffled_statistics,
    simulate_trajectories,
    train_hrnn,
)
from neurips26.path_integration.experiment import Config


def throughput(sizes=((64, 128), (256, 512)), steps=30, batch=64, seq_len=20):
    print(f"training throughput, sequences/s (batch {batch}, T = {seq_len}, {steps} steps, CPU process time)")
    print(f"{'N_A+N_P':>10} {'HRNN':>9} {'single':>9} {'HRNN/single':>12}")
    rng = np.random.default_rng(0)
    batches = [simulate_trajectories(batch, seq_len, rng) for _ in range(5)]
    cfg = TrainingConfig(steps=steps, batch=batch, seq_len=seq_len)
    for na, npos in sizes:
        hd, pc = HeadDirectionCells(32), PlaceCells(256, surround_scale=None)
        torch.manual_seed(0)
        h = HRNN(na, npos, hd, pc)
        s = SingleModuleRNN(na + npos, hd, pc)
        th, _ = best_cpu(lambda: train_hrnn(h, cfg, rng, batches=batches), repeats=1)
        ts, _ = best_cpu(lambda: train_hrnn(s, cfg, rng, batches=batches), repeats=1)
        qh, qs = steps * batch / th, steps * batch / ts
        print(f"{na:>4}+{npos:<5} {qh:9.0f} {qs:9.0f} {qh / qs:12.2f}")
        record(f"training, N_A+N_P = {na}+{npos}: HRNN vs single-module RNN", th, ts,
               note=f"{steps} steps, batch {batch}, T = {seq_len}; ratio > 1: HRNN faster")


def maps(n_units=4096, samples=10_000, bins=20):
    rng = np.random.default_rng(0)
    pos = rng.uniform(-1.1, 1.1, (samples, 2))
    act = rng.random((samples, n_units)).astype(np.float64)
    tv, a = best_cpu(lambda: rate_maps(pos, act, Arena(2.2), bins), repeats=1)
    tl, b = best_cpu(lambda: rate_maps_loop(pos, act, Arena(2.2), bins), repeats=1)
    assert np.allclose(a, b, equal_nan=True)
    print(f"\nrate maps, {n_units} units × {samples} samples, {bins}² bins: sparse product {tv:.3f} s, "
          f"histogram2d loop {tl:.3f} s, loop/vectorised = {tl / max(tv, 1e-9):.1f}")
    record(f"rate maps, {n_units} units: sparse product vs histogram2d per unit", max(tv, 1e-9), tl,
           note=f"{samples} samples, {bins}² bins")


def shuffles(n_units=512, samples=10_000, n_shuffles=200):
    rng = np.random.default_rng(0)
    heading = rng.uniform(-np.pi, np.pi, samples)
    act = rng.random((samples, n_units))
    om, v = rng.normal(size=samples), rng.random(samples)
    tf, st = best_cpu(lambda: shuffled_statistics(act, heading, om, v, rng, n_shuffles=n_shuffles), repeats=1)
    z = np.exp(1j * heading)
    shifts = rng.integers(50, samples - 50, n_shuffles)

    def loop():
        return np.quantile([np.abs(z @ np.roll(act, s, 0)) / act.sum(0) for s in shifts], 0.99, axis=0)

    tl, p99 = best_cpu(loop, repeats=1)
    print(f"shuffle controls, {n_units} units × {samples} samples: FFT (all shifts, R and two correlations) {tf:.3f} s, "
          f"{n_shuffles} np.roll shifts (R only) {tl:.3f} s, ratio = {tl / max(tf, 1e-9):.1f}")
    record(f"shuffle controls, {n_units} units: FFT (all shifts) vs {n_shuffles} np.roll shifts", max(tf, 1e-9), tl,
           note="FFT also computes two correlations; the loop only R")


def memory_on_paper():
    c = Config.full()
    n = c.n_angular + c.n_positional
    act = c.batch * c.seq_len * n * 4 * 3  # pre-activation, rate, grad per step (float32)
    params = (c.n_angular ** 2 + c.n_positional ** 2 + c.n_positional * (c.n_angular + 1) + 2 * c.n_angular
              + c.n_angular * c.n_hd_cells * 2 + c.n_positional * c.n_place_cells * 2)
    print(f"\nfull config on paper: N_A = {c.n_angular}, N_P = {c.n_positional}, batch {c.batch}, T = {c.seq_len}: "
          f"BPTT activations ≈ {act / 2**20:.0f} MiB, parameters {params / 1e6:.1f} M "
          f"(≈ {params * 16 / 2**20:.0f} MiB with Adam state and gradients)")


if __name__ == "__main__":
    torch.set_num_threads(1)
    throughput()
    maps()
    shuffles()
    memory_on_paper()
