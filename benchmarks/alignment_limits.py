"""Speed of the alignment-limits method, as ratios against baselines run in the same process.

1. Base-sample frontier estimator, 1e6 samples x 100 betas (target: well under 1 s), against a
   straightforward per-beta loop (scipy logsumexp weights, same estimates, no standard errors).
2. Exact best-of-N KL and gain on 1e6 outcomes (ties grouped), against one ``np.sort`` of the
   rewards — a lower bound for any exact method, which must order the rewards.
3. Closed-form maximal gain under a KL budget (Brent on log beta), against the constrained
   problem solved by cvxpy/Clarabel, K = 200 and K = 2000.

Times are CPU seconds (the smallest of repeated calls: not inflated by other processes on a shared
machine); each comparison is recorded through ``record()``.

Run: ``.venv/bin/python benchmarks/alignment_limits.py``
"""

from __future__ import annotations

import numpy as np
from _timing import best_cpu, record
from scipy import special

from neurips26.alignment_limits import best_of_n, estimate_frontier, max_reward_gain
from neurips26.alignment_limits.experiment import cvxpy_max_gain, synthetic_policy


def best_time(fn, repeats: int = 3) -> float:
    """Smallest CPU time of ``repeats`` calls (seconds)."""
    return best_cpu(fn, repeats)[0]


def naive_estimator(r: np.ndarray, betas: np.ndarray) -> np.ndarray:
    """Per-beta loop: normalised weights via logsumexp, gain = E_w[r] - mean(r)."""
    out = np.empty(betas.size)
    for i, b in enumerate(betas):
        logw = r / b
        w = np.exp(logw - special.logsumexp(logw))
        out[i] = w @ r - r.mean()
    return out


def main() -> None:
    rng = np.random.default_rng(0)
    print("alignment_limits benchmark (CPU seconds; ratios: baseline time / our time; > 1 means we are faster)")

    r = rng.normal(size=1_000_000)
    betas = np.logspace(-1, 1, 100)
    ours = estimate_frontier(r, betas, warn_unreliable=False)
    assert np.allclose(ours.gain, naive_estimator(r, betas), rtol=1e-9, atol=1e-12)
    t_ours = best_time(lambda: estimate_frontier(r, betas, warn_unreliable=False))
    t_naive = best_time(lambda: naive_estimator(r, betas))
    print(f"estimator 1e6 samples x 100 betas (with SEs, ESS): {t_ours:.3f} s; "
          f"naive per-beta loop (gain only): {t_naive:.3f} s; ratio {t_naive / t_ours:.2f}x")
    record("frontier estimator, 1e6 samples × 100 betas: ours (with SEs, ESS) vs naive per-beta logsumexp loop",
           t_ours, t_naive, note="same gains to 1e-9; the loop computes the gain only")

    k = 1_000_000
    pi0 = rng.dirichlet(np.ones(k))
    rk = np.round(rng.normal(size=k), 3)                   # ~7000 tied reward levels
    t_bon = best_time(lambda: best_of_n(pi0, rk, [4, 16, 64, 256]))
    t_sort = best_time(lambda: np.sort(rk))
    print(f"exact best-of-N KL+gain, 1e6 outcomes, 4 values of N: {t_bon:.3f} s; "
          f"one np.sort: {t_sort:.3f} s; ratio (sort / ours) {t_sort / t_bon:.2f}x")
    record("exact best-of-N KL and gain, 1e6 outcomes, 4 values of N: ours vs one np.sort of the rewards", t_bon,
           t_sort, note="the sort is a lower bound for any exact method (it must order the rewards)")

    for kk in (200, 2000):
        p, rr = synthetic_policy(kk, 1.5, np.random.default_rng(1))
        t_closed = best_time(lambda: max_reward_gain(p, rr, 0.5))
        t_cvx = best_time(lambda: cvxpy_max_gain(p, rr, 0.5), repeats=2)
        diff = abs(max_reward_gain(p, rr, 0.5).gain - cvxpy_max_gain(p, rr, 0.5))
        print(f"closed form vs cvxpy (K = {kk}, eps = 0.5): {t_closed * 1e3:.2f} ms vs {t_cvx * 1e3:.1f} ms CPU; "
              f"ratio {t_cvx / t_closed:.0f}x; |difference| {diff:.1e}")
        record(f"maximal gain under a KL budget, K = {kk}, eps = 0.5: closed form (Brent) vs cvxpy/Clarabel",
               t_closed, t_cvx, note=f"|difference| {diff:.1e}")


if __name__ == "__main__":
    main()
