"""Benchmark for relu_symmetries: ratios against baselines run in the same process.

* Equivalence decision vs dense random evaluation "to the same confidence", against hidden width
  n ∈ {16 … 1024} for (3, n, n, 1): our decision gives a certificate (orbit proof or exact witness);
  random evaluation needs ``log δ / log(1 − p)`` points to hit a difference on a volume fraction
  p = 1e-3 with miss probability δ = 1e-6 (13 809 points) and certifies nothing. Prints CPU times,
  the ratio random/decision, and the log-log slopes of both.
* Exact rank over ℚ (sympy ``DomainMatrix`` on the row-scaled integer matrix, and python-flint's
  ``fmpq_mat`` when installed) vs float SVD with a
  tolerance, on Jacobians of the constructed bottleneck parameters (both give the same rank) and
  of one random-float (3,4,3,1) network: random floats carry ~100-bit dyadic denominators and
  fraction-free elimination grows them, so exact ranks are for small networks (a 600×113 random
  case ran for minutes).
* The cell step (LPs) vs the orbit step on one pair: the price of the general fallback.

Each comparison is recorded through ``record()`` (CPU seconds).
Run: ``.venv/bin/python benchmarks/relu_symmetries.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import numpy as np
from _timing import best_cpu, record

from neurips26.relu_symmetries import (
    Box,
    equivalent,
    exact_jacobian,
    exact_rank,
    jacobian,
    numerical_rank,
    points_for_confidence,
    random_evaluation_equal,
    random_network,
    random_orbit_element,
    sample_away_from_kinks,
)
from neurips26.relu_symmetries.constructions import constructions, generic_switching_network


def decision_vs_width(widths=(16, 32, 64, 128, 256, 512, 1024)):
    rng = np.random.default_rng(0)
    box = Box.cube(3, 3.0)
    n_rand = points_for_confidence(1e-3, 1e-6)
    print(f"decision vs random evaluation ({n_rand} points for p = 1e-3, δ = 1e-6); CPU seconds")
    print(f"{'width':>6} {'orbit pair':>11} {'perturbed':>10} {'random':>9} {'random/orbit':>13} {'random/pert':>12}")
    rows = []
    for n in widths:
        net = random_network((3, n, n, 1), rng)
        moved = random_orbit_element(net, rng).net
        b3 = net.b3 + 1e-3
        pert = net.replace(b3=b3)
        te, d = best_cpu(lambda: equivalent(net, moved, box))
        tp, p = best_cpu(lambda: equivalent(net, pert, box))
        tr, _ = best_cpu(lambda: random_evaluation_equal(net, moved, box, n_rand, rng), 1)
        assert d.is_equivalent is True and p.is_equivalent is False
        rows.append((n, te, tp, tr))
        print(f"{n:6d} {te:11.4f} {tp:10.4f} {tr:9.4f} {tr / max(te, 1e-9):13.1f} {tr / max(tp, 1e-9):12.1f}")
        for t, what in ((te, "orbit pair (equivalent)"), (tp, "perturbed pair (not equivalent)")):
            record(f"(3, {n}, {n}, 1), {what}: certified decision vs random evaluation at {n_rand} points", max(t, 1e-9),
                   tr, note="random evaluation: p = 1e-3, δ = 1e-6, certifies nothing")
    w = np.log([r[0] for r in rows])
    for k, name in ((1, "orbit pair"), (2, "perturbed"), (3, "random")):
        slope = np.polyfit(w, np.log(np.maximum([r[k] for r in rows], 1e-6)), 1)[0]
        print(f"  log-log slope, {name}: {slope:.2f}")


def exact_vs_float_rank():
    try:
        import flint  # noqa: F401

        backends = ("sympy", "flint")
    except ImportError:
        backends = ("sympy",)
    print("\nexact rank over Q (" + " / ".join(backends) + ") vs float SVD (tolerance 1e-8·σ_max); CPU seconds")
    print(f"{'construction':<48} {'rows×P':>9} {'exact':>6} {'svd':>4} " + " ".join(f"{'t_' + b:>8}" for b in backends)
          + f" {'t_svd':>8} " + " ".join(f"{b + '/svd':>10}" for b in backends))
    rng = np.random.default_rng(1)
    box = Box.cube(3, 3.0)
    cases = [(con.name, con.net, con.box, 300) for con in constructions()]
    cases.append(("generic (3,4,3,1), random float parameters", generic_switching_network((3, 4, 3, 1), box, rng),
                  box, 150))
    for name, net, bx, m in cases:
        X = sample_away_from_kinks(net, bx, m, rng)
        E, J = exact_jacobian(net, X), jacobian(net, X)
        times, ranks = [], set()
        for b in backends:
            t, r = best_cpu(lambda: exact_rank(E, backend=b))
            times.append(t)
            ranks.add(r)
        ts, (rs, _) = best_cpu(lambda: numerical_rank(J))
        assert len(ranks) == 1
        for b, t in zip(backends, times):
            record(f"Jacobian rank, {name} ({len(E)}×{J.shape[1]}): exact over Q ({b}) vs float SVD", t, max(ts, 1e-9),
                   note="same rank; ratio < 1: the price of an exact rank")
        print(f"{name:<48} {len(E):>4}×{J.shape[1]:<4} {ranks.pop():6d} {rs:4d} " + " ".join(f"{t:8.4f}" for t in times)
              + f" {ts:8.5f} " + " ".join(f"{t / max(ts, 1e-9):10.0f}" for t in times))


def cells_vs_orbit():
    print("\ncell step (activation cells, LPs) vs orbit step on one pair; CPU seconds")
    rng = np.random.default_rng(2)
    for n in (3, 6, 9):
        box = Box.cube(2, 2.0)
        net = generic_switching_network((2, n, n, 1), box, rng, min_overlap=1)
        moved = random_orbit_element(net, rng).net
        t_orbit, d = best_cpu(lambda: equivalent(net, moved, box))
        # a duplicated first-layer unit with its weight split in half: same function, off the orbit
        W2 = np.c_[net.W2, 0.5 * net.W2[:, :1]]
        W2[:, 0] *= 0.5
        dup = net.replace(W1=np.r_[net.W1, net.W1[:1]], b1=np.r_[net.b1, net.b1[:1]], W2=W2)
        t_cells, c = best_cpu(lambda: equivalent(net, dup, box), 1)
        print(f"  (2,{n},{n},1): orbit {t_orbit:.4f} s ({d.proof}); cells {t_cells:.3f} s ({c.proof}, "
              f"{c.evidence.get('n_cells')} cells, {c.evidence.get('lps')} LPs); ratio {t_cells / max(t_orbit, 1e-9):.0f}")
        record(f"equivalence of (2, {n}, {n}, 1) pairs: cell step (LPs) vs orbit step", t_cells, max(t_orbit, 1e-9),
               note=f"{c.evidence.get('n_cells')} cells, {c.evidence.get('lps')} LPs; ratio < 1: the price of the "
                    "general fallback (duplicated unit, off the orbit)")


if __name__ == "__main__":
    decision_vs_width()
    exact_vs_float_rank()
    cells_vs_orbit()
