"""Benchmark of the rank diagnostics (paper 10): ratios against a training step run here.

1. Cost of one layer's rank diagnostics relative to one flow-matching training step (forward,
   backward, Adam) of the field that owns the layer: exact SVD vs randomised SVD (top 32) of the
   hidden (width × width) gradient, for widths 64–1024, and which one ``method="auto"`` picks.
2. RankMonitor's overhead on a training loop (all layers, every 50 and every 10 steps; exact, and
   randomised for the widest field): time with the monitor / time without.

Medians of single calls (robust to preemption on a shared machine); one torch thread.
Run: ``.venv/bin/python benchmarks/lowrank_collapse.py`` (about a minute).
"""

from __future__ import annotations

import time

import torch
from _timing import median_wall, record

from neurips26.lowrank_collapse import MLPVectorField, RankMonitor, flow_matching_loss, rank_summary, train
from neurips26.lowrank_collapse.diagnostics import choose_svd_method


def diagnostics_vs_step(dim: int = 32, batch: int = 256) -> None:
    print("1. rank diagnostics of the hidden layer / one training step (FM, d = 32, batch 256)")
    print("   (exact/rand > 1: randomised faster; RankMonitor's default method='auto' picks the column 'auto')")
    print(f"{'width':>6} {'step ms':>8} {'exact/step':>11} {'rand/step':>10} {'exact/rand':>11} {'top-8 rel err':>14} "
          f"{'auto':>11} {'auto speed':>10}")
    g = torch.Generator().manual_seed(0)
    for width in (64, 128, 256, 512, 1024):
        torch.manual_seed(0)
        field = MLPVectorField(dim, width, 2)
        opt = torch.optim.Adam(field.parameters(), 1e-3)
        x1 = torch.randn(batch, dim, generator=g)

        def step():
            opt.zero_grad()
            flow_matching_loss(field, x1, g).backward()
            opt.step()

        t_step = median_wall(step, 7)
        G = field.linear_layers[1].weight.grad.detach().clone()
        t_exact = median_wall(lambda: rank_summary(G, "exact"), 7)
        t_rand = median_wall(lambda: rank_summary(G, "randomized", k=32), 7)
        ex, ra = rank_summary(G, "exact").top, rank_summary(G, "randomized", k=32).top
        err = max(abs(a - b) / ex[0] for a, b in zip(ex, ra))
        auto = choose_svd_method(tuple(G.shape))
        # speed of the automatic choice relative to the other method (>= 1: auto picked the faster)
        speed = (t_rand / t_exact) if auto == "exact" else (t_exact / t_rand)
        print(f"{width:>6} {1e3 * t_step:>8.2f} {t_exact / t_step:>11.2f} {t_rand / t_step:>10.2f} "
              f"{t_exact / t_rand:>11.2f} {err:>14.1e} {auto:>11} {speed:>9.2f}x")
        record(f"rank diagnostics at width {width}: randomised SVD (top 32) vs exact SVD", t_rand, t_exact,
               clock="wall", note=f"top-8 relative error {err:.1e}; method='auto' picks {auto}")


def monitor_overhead(steps: int = 200, dim: int = 2, batch: int = 256) -> None:
    print(f"2. RankMonitor overhead on a {steps}-step flow-matching loop (d = {dim}, batch {batch}, all layers)")
    print(f"{'width':>6} {'method':>11} {'every':>6} {'plain s':>8} {'monitored/plain':>16}")
    for width, method in ((64, "exact"), (256, "exact"), (512, "exact"), (512, "randomized")):
        for every in (50, 10):
            times = {}
            for monitored in (False, True):
                torch.manual_seed(0)
                g = torch.Generator().manual_seed(0)
                field = MLPVectorField(dim, width, 2)
                cb = RankMonitor(field, every=every, method=method) if monitored else None
                data = torch.randn(batch, dim, generator=g)
                t0 = time.perf_counter()
                train(field, lambda s: flow_matching_loss(field, data, g), steps, 1e-3, callback=cb)
                times[monitored] = time.perf_counter() - t0
            print(f"{width:>6} {method:>11} {every:>6} {times[False]:>8.2f} {times[True] / times[False]:>16.2f}")


if __name__ == "__main__":
    torch.set_num_threads(1)
    diagnostics_vs_step()
    monitor_overhead()
