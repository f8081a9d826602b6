"""Benchmark of the sublevel Flood bifiltration (paper 6): construction time, grades and peak memory
against N and L, with ratios against baselines run in this process.

Baselines: the exact mode of the same construction; (a) the Alpha/Delaunay lower-star
bifiltration of all N points (1-critical stand-in for function-Delaunay, whose binary is not
available here); (b) a Rips co-density bifiltration (multipers' RipsCodensity segfaults with
gudhi 3.13, so we build it with gudhi + insert_batch); (c) the authors' ``sublevel-flood`` package
when installed (``pip install --no-deps sublevel-flood``; it runs on our pinned multipers).

Times are CPU seconds of this process (not inflated by other processes on a shared machine), the
smallest of 2 calls; each comparison with a baseline is recorded through ``record()``. Peak memory
is tracemalloc's peak in one more call (numpy allocations; C++ allocations inside gudhi/multipers
are not seen).

Run: ``.venv/bin/python benchmarks/flood_bifiltration.py`` (N up to 10^4, under a minute of CPU);
``--full`` adds N = 3·10^4 and 10^5 in 2-D (several minutes).
"""

from __future__ import annotations

import importlib.util
import sys
import time
import tracemalloc
import warnings

import numpy as np
from _timing import record

from neurips26.flood_bifiltration import sublevel_flood_bifiltration
from neurips26.flood_bifiltration.baselines import delaunay_lowerstar_bifiltration, rips_codensity_bifiltration
from neurips26.flood_bifiltration.features import codensity

warnings.simplefilter("ignore", UserWarning)


def cloud(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    half = n // 2
    v = rng.normal(size=(half, d))
    x = np.vstack([v / np.linalg.norm(v, axis=1, keepdims=True) + 0.05 * rng.normal(size=(half, d)),
                   rng.uniform(-1.5, 1.5, (n - half, d))])
    return x, codensity(x, "dtm", dtm_mass=min(0.01, 50 / n))


def timed(fn, *args, trace: bool = True, repeats: int = 2, **kw):
    """(result, CPU seconds, peak MB): the smallest CPU time of ``repeats`` untraced calls, and the
    peak of one more call under tracemalloc when ``trace`` (``nan`` otherwise; tracing slows
    Python-side allocations, so no time is taken from the traced call)."""
    peak = float("nan")
    if trace:
        tracemalloc.start()
        fn(*args, **kw)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn(*args, **kw)
        best = min(best, time.process_time() - t0)
    return out, best, peak


def slope(ns, ts) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def main() -> None:
    import gudhi
    import multipers  # noqa: F401  (import cost outside the timings)

    full = "--full" in sys.argv
    print("== sublevel Flood bifiltration: scaling in N (L = 64; CPU seconds) ==")
    print(f"{'d':>2} {'N':>7} {'mode':>7} {'time s':>8} {'simplices':>9} {'grades':>8} {'peak MB':>8}")
    summary = {}
    # by default both stop at 10^4 (under a minute of CPU); --full: 2-D goes to 10^5 with the exact
    # mode stopping at 3·10^4; measured once at 10^5 on this machine (loaded, wall):
    # 3-D masked 75 s, 2-D exact 43 s.
    grid = (((2, 12, (1000, 3000, 10000, 30000, 100000)), (3, 5, (1000, 3000, 10000))) if full else
            ((2, 12, (1000, 3000, 10000)), (3, 5, (1000, 3000, 10000))))
    for d, ppe, sizes in grid:
        for mode in ("masked", "exact"):
            ts = []
            for n in sizes:
                if mode == "exact" and n > 30000:
                    continue
                x, f = cloud(n, d)
                b, dt, peak = timed(sublevel_flood_bifiltration, x, f, 64, points_per_edge=ppe,
                                    exact=mode == "exact", memory_limit_mb=128)
                ts.append(dt)
                summary[(d, n, mode)] = dt
                print(f"{d:>2} {n:>7} {mode:>7} {dt:8.3f} {b.num_simplices:>9} {b.num_grades:>8} {peak:8.1f}")
            print(f"   log-log slope of time vs N ({d}-D, {mode}): {slope(sizes[:len(ts)], ts):.2f}")
    for d, _, sizes in grid:
        n = max(sizes)
        print(f"ratio exact/masked time, {d}-D, N={n}: {summary[(d, n, 'exact')] / summary[(d, n, 'masked')]:.1f}x")
        record(f"sublevel Flood bifiltration, {d}-D, N = {n}, L = 64: masked (default) vs exact mode",
               summary[(d, n, "masked")], summary[(d, n, "exact")], note="same points, landmarks and grid")

    n_l = 10000 if full else 3000
    print(f"\n== scaling in the number of landmarks L (2-D, N = {n_l}, masked) ==")
    x, f = cloud(n_l, 2)
    Ls, ts = (32, 64, 128, 256), []
    for L in Ls:
        b, dt, _ = timed(sublevel_flood_bifiltration, x, f, L, points_per_edge=12, trace=False)
        ts.append(dt)
        print(f"L={L:>4}: {dt:7.3f} s, {b.num_simplices} simplices, {b.num_grades} grades")
    print(f"   log-log slope of time vs L: {slope(Ls, ts):.2f}")

    print("\n== against baselines on identical inputs (masked SLF, L = 64) ==")
    pairs = ((2, 1000), (2, 10000), (2, 100000), (3, 1000), (3, 10000)) if full else \
        ((2, 1000), (2, 10000), (3, 1000), (3, 10000))
    for d, n in pairs:
        x, f = cloud(n, d)
        t_slf = summary[(d, n, "masked")]  # same inputs, L and grid as in the scaling table above
        st, t_alpha, _ = timed(delaunay_lowerstar_bifiltration, x, f, trace=False)
        _, t_gudhi, _ = timed(lambda p: gudhi.AlphaComplex(points=p).create_simplex_tree(), x, trace=False)
        print(f"{d}-D N={n:>6}: SLF {t_slf:.3f} s | Alpha lower-star {t_alpha:.3f} s "
              f"({st.num_simplices} simplices) -> ratio alpha/SLF = {t_alpha / t_slf:.1f}x "
              f"(gudhi Alpha build alone {t_gudhi:.3f} s -> {t_gudhi / t_slf:.1f}x; the rest is the "
              "Python copy into multipers)")
        record(f"{d}-D, N = {n}: sublevel Flood (masked, L = 64) vs Alpha/Delaunay lower-star bifiltration",
               t_slf, t_alpha, note=f"{st.num_simplices} simplices in the baseline; 1-critical stand-in for "
                                    "function-Delaunay")
        record(f"{d}-D, N = {n}: sublevel Flood (masked, L = 64) vs gudhi Alpha complex build alone", t_slf, t_gudhi,
               note="the baseline without its copy into multipers")
    for n in (1000, 1500):
        x, f = cloud(n, 2)
        _, t_slf, _ = timed(sublevel_flood_bifiltration, x, f, 64, points_per_edge=12, trace=False)
        st, t_rips, _ = timed(rips_codensity_bifiltration, x, f, 0.1, trace=False)
        print(f"2-D N={n:>6}: SLF {t_slf:.3f} s | Rips co-density (r <= 0.1) {t_rips:.3f} s "
              f"({st.num_simplices} simplices) -> ratio rips/SLF = {t_rips / t_slf:.1f}x")
        record(f"2-D, N = {n}: sublevel Flood (masked, L = 64) vs Rips co-density bifiltration (r ≤ 0.1)", t_slf,
               t_rips, note=f"{st.num_simplices} simplices in the baseline (gudhi + insert_batch)")

    print(f"\n== downstream: Hilbert signed measure on a 50 x 50 grid (2-D, N = {n_l}) ==")
    import multipers as mp

    from neurips26.flood_bifiltration.features import hilbert_signed_measure

    x, f = cloud(n_l, 2)
    b = sublevel_flood_bifiltration(x, f, 64, points_per_edge=12)
    rg, tg = np.linspace(0, 1.0, 50), np.linspace(0, 1, 50)
    _, t_sm, _ = timed(hilbert_signed_measure, b, rg, tg, (0, 1), trace=False)
    st = delaunay_lowerstar_bifiltration(x, f)
    _, t_alpha_sm, _ = timed(lambda: mp.signed_measure(st.grid_squeeze(filtration_grid=[rg, tg]), degrees=[0, 1],
                                                       invariant="hilbert"), trace=False)
    print(f"SLF {t_sm:.3f} s | Alpha lower-star {t_alpha_sm:.3f} s -> ratio {t_alpha_sm / t_sm:.1f}x")
    record(f"Hilbert signed measure, 50 × 50 grid, 2-D, N = {n_l}: on sublevel Flood vs on Alpha lower-star",
           t_sm, t_alpha_sm, note="degrees 0 and 1")

    if importlib.util.find_spec("slflood") is None:
        print("\n(c) the authors' sublevel-flood is not installed (pip install --no-deps sublevel-flood): skipped")
        return
    import slflood
    import torch

    print("\n== (c) ours vs the authors' sublevel-flood, same points, f and landmarks (L = 64, 20 points per edge) ==")
    print(f"{'N':>7} {'mode':>7} {'ours s':>8} {'theirs s':>9} {'theirs/ours':>11} {'ours MB':>8} {'theirs MB':>9}")
    for n in (1000, 10000, 100000) if full else (1000, 10000):
        x, f = cloud(n, 2)
        for exact in (False, True):
            if exact and n > 10000:
                continue   # exact mode at 10^5 points takes minutes in both implementations
            ours, t_ours, m_ours = timed(sublevel_flood_bifiltration, x, f, 64, points_per_edge=20, exact=exact)
            lm = torch.tensor(np.asarray(ours.landmark_indices), dtype=torch.long)
            _, t_theirs, m_theirs = timed(slflood.slflood_bifiltration, torch.tensor(x), lm, torch.tensor(f),
                                          points_per_edge=20, exact=exact)
            print(f"{n:>7} {'exact' if exact else 'masked':>7} {t_ours:>8.2f} {t_theirs:>9.2f} "
                  f"{t_theirs / t_ours:>11.2f} {m_ours:>8.1f} {m_theirs:>9.1f}")
            record(f"2-D, N = {n}, {'exact' if exact else 'masked'}: ours vs the authors' sublevel-flood", t_ours,
                   t_theirs, note="same points, f and landmarks; L = 64, 20 points per edge")
    print("(peak MB is tracemalloc's: numpy allocations are seen, torch's C++ allocations are not)")


if __name__ == "__main__":
    main()
