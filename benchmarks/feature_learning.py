"""Benchmark of the feature-learning system (paper 11): ratios against baselines in the same run.

1. Tracker overhead: a training step with a :class:`FeatureRecorder` attached (H, G_H, G_Z on
   every layer) against the same step without hooks; a full :meth:`LinearityTracker.measure` on
   the digits training set against one training epoch.
2. Polar factor: quintic Newton–Schulz (10 steps) against the SVD at widths 256–1024 (``--wide``
   adds 2048 and 4096; minutes on CPU), float32, with the Newton–Schulz orthogonality error.
3. Target Linearity on wide features (n = 4000, p = 2048): randomised-PCA path against the exact
   least squares, time ratio and the TL difference.

Times are medians of single calls (polar factor: best CPU time of 3), one torch/BLAS thread.
Run: ``.venv/bin/python benchmarks/feature_learning.py [--wide]``.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import torch
from _timing import best_cpu, record
from torch.nn import functional as F

from neurips26.feature_learning import (
    FeatureRecorder,
    LinearityTracker,
    mlp,
    polar_factor_newton_schulz,
    polar_factor_svd,
    target_linearity_details,
)
from neurips26.feature_learning.data import digits
from neurips26.feature_learning.whitening import resolve_method


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def tracker_overhead() -> None:
    d = digits()
    X, y = torch.from_numpy(d.X_train), torch.from_numpy(d.y_train)
    torch.manual_seed(0)
    model = mlp(64, 256, 4, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xb, yb = X[:64], y[:64]

    def step():
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()

    plain = median_time(step, 200)
    with FeatureRecorder(model):
        hooked = median_time(step, 200)
    epoch = median_time(lambda: [step() for _ in range(len(X) // 64)], 3)
    tracker = LinearityTracker(model)
    measure = median_time(lambda: tracker.measure(X, labels=y), 3)
    print("== tracker overhead (digits, MLP 4×256, batch 64) ==")
    print(f"training step {plain * 1e3:.2f} ms; with recorder hooks {hooked * 1e3:.2f} ms "
          f"(ratio {hooked / plain:.2f}×)")
    print(f"one epoch {epoch * 1e3:.0f} ms; TL+surrogate+NC1 of 5 layers on 1437 rows {measure * 1e3:.0f} ms "
          f"(ratio {measure / epoch:.2f}× an epoch)")
    record("training step: with FeatureRecorder hooks vs without", hooked, plain, clock="wall",
           note="digits, MLP 4×256, batch 64; ratio < 1: the hooks cost time")
    record("LinearityTracker.measure (5 layers) vs one training epoch", measure, epoch, clock="wall",
           note="TL + surrogate + NC1 on 1437 rows")


def polar(widths: list[int]) -> None:
    print("== polar factor of W1 W2ᵀ: Newton–Schulz (10 steps) vs SVD, float32, wide W (q × 4q); CPU seconds ==")
    print("   whiten_update/GramWhitening default method='auto' = SVD on CPU, Newton–Schulz on an accelerator")
    print(f"{'q':>5} {'NS ms':>9} {'SVD ms':>9} {'NS/SVD':>7} {'default':>8} {'max|QᵀQ−I| NS':>15}")
    g = torch.Generator().manual_seed(0)
    for q in widths:
        W1 = torch.randn(q, 4 * q, generator=g) / (4 * q) ** 0.5
        W2 = W1 - 0.01 * torch.randn(q, 4 * q, generator=g) / (4 * q) ** 0.5
        M = W1 @ W2.T
        reps = 3 if q <= 1024 else 1
        t_ns, Q = best_cpu(lambda: polar_factor_newton_schulz(M), reps)
        t_svd, _ = best_cpu(lambda: polar_factor_svd(M), reps)
        err = float((Q.T @ Q - torch.eye(q)).abs().max())
        # speed of the default path relative to the other one (≥ 1 means the default is the faster)
        print(f"{q:>5} {t_ns * 1e3:>9.1f} {t_svd * 1e3:>9.1f} {t_ns / t_svd:>7.2f} {resolve_method('auto', 'cpu'):>8} "
              f"{err:>15.2e}")
        record(f"polar factor at q = {q}: Newton–Schulz (10 steps) vs SVD", t_ns, t_svd,
               note=f"float32; max |QᵀQ−I| {err:.1e}; CPU default: {resolve_method('auto', 'cpu')}")


def tl_pca() -> None:
    rng = np.random.default_rng(0)
    n, p = 4000, 2048
    Z = rng.normal(size=(n, 64))
    H = np.tanh(Z @ rng.normal(size=(64, p)) / 8) + 0.1 * rng.normal(size=(n, p))
    Y = np.eye(10)[(Z[:, :3] @ rng.normal(size=3) > 0).astype(int) + 2 * (Z[:, 3] > 0)]
    Y = Y[:, :4]
    t_exact = median_time(lambda: target_linearity_details(H, Y, pca_threshold=10**6, intercept=True, warn=False), 1)
    t_pca = median_time(lambda: target_linearity_details(H, Y, pca_threshold=1000, pca_components=256, warn=False), 1)
    exact = target_linearity_details(H, Y, pca_threshold=10**6, intercept=True, warn=False).value
    pca = target_linearity_details(H, Y, pca_threshold=1000, pca_components=256, warn=False).value
    print("== Target Linearity on wide features (n = 4000, p = 2048) ==")
    print(f"exact {t_exact:.2f} s (TL {exact:.4f}); PCA-256 {t_pca:.2f} s (TL {pca:.4f}); "
          f"speed-up {t_exact / t_pca:.1f}×; TL difference {exact - pca:+.4f}")
    record("Target Linearity, n = 4000, p = 2048: PCA-256 path vs exact least squares", t_pca, t_exact,
           clock="wall", note=f"TL difference {exact - pca:+.4f}")


def main() -> None:
    from threadpoolctl import threadpool_limits

    # one thread for torch and BLAS: on a shared 2-core machine more threads oversubscribe and the
    # ratios then measure contention, not the code
    torch.set_num_threads(1)
    with threadpool_limits(limits=1):
        tracker_overhead()
        polar([256, 512, 1024] + ([2048, 4096] if "--wide" in sys.argv else []))
        tl_pca()


if __name__ == "__main__":
    main()
