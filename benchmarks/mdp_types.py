"""Benchmark for mdp_types on FrozenLake 8×8 (|Z| = 256): per-(s,a) solvers vs joint convex programs.

Prints each measurement as a ratio against a baseline run in the same process:

* rate function J(T̂) of the logged plug-in kernel: per-state soft Bellman iteration vs the joint
  cvxpy program over the pair measure Q (support of P only);
* pessimistic value V_low: per-(s,a) 1-D dual with adversary policy iteration vs the joint cvxpy
  program (same fixed point); and vs the same dual driven by plain robust value iteration.

Run: ``.venv/bin/python benchmarks/mdp_types.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import time

import numpy as np
from _timing import record

from neurips26.mdp_types import (
    greedy_policy,
    kernel_rate,
    kl_worst_case,
    log_episodes,
    optimal_values,
    pessimistic_values,
    plug_in_kernel,
    set_radii,
    toy_text_mdp,
    transition_counts,
)


def best_of(fn, repeats=3):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    mdp = toy_text_mdp("FrozenLake-v1", map_name="8x8")
    S, A, _ = mdp.T.shape
    gamma = 0.99
    pi_star = greedy_policy(optimal_values(mdp.T, mdp.r, gamma)[1])
    behaviour = 0.5 * pi_star + 0.5 / A
    data = log_episodes("FrozenLake-v1", behaviour, 100_000, seed=0, map_name="8x8")
    N = transition_counts(data, S, A)
    support = mdp.T > 0
    print(f"FrozenLake 8x8: S={S}, A={A}, |Z|={S * A}, 100k logged transitions")

    # -- rate function of the observed plug-in kernel (logging chain made ergodic by resets)
    T_log = mdp.T.copy()
    T_log[mdp.terminal] = mdp.initial
    T_hat, vis = plug_in_kernel(N)
    T_hat = np.where(vis[:, :, None], T_hat, T_log)
    T_hat[mdp.terminal] = mdp.initial
    t_bell, j_bell = best_of(lambda: kernel_rate(T_hat, T_log, behaviour, "bellman"))
    t_cvx, j_cvx = best_of(lambda: kernel_rate(T_hat, T_log, behaviour, "convex"), repeats=1)
    print(f"rate J(T_hat): bellman {j_bell:.6f} in {t_bell:.3f}s | joint convex {j_cvx:.6f} in {t_cvx:.3f}s "
          f"| speed-up (convex / bellman) = {t_cvx / t_bell:.1f}x")
    record("rate function J(T̂): soft Bellman vs joint convex program", t_bell, t_cvx, clock="wall",
           note=f"FrozenLake 8×8, 100k logged steps; |J difference| {abs(j_bell - j_cvx):.1e}")

    # -- pessimistic value of the optimal policy
    kw = dict(delta=0.05, radius="per_pair", support=support, r_range=mdp.r_range)
    t_dual, low = best_of(lambda: pessimistic_values(N, mdp.R, gamma=gamma, pi_eval=pi_star, **kw))
    t_conv, low_c = best_of(lambda: pessimistic_values(N, mdp.R, gamma=gamma, pi_eval=pi_star, method="convex", **kw),
                            repeats=1)
    print(f"V_low(start): dual {low.V[0]:.6f} in {t_dual:.3f}s | joint convex {low_c.V[0]:.6f} in {t_conv:.3f}s "
          f"| speed-up (convex / dual) = {t_conv / t_dual:.1f}x; max |difference| = {np.max(np.abs(low.V - low_c.V)):.1e}")
    record("V_low: per-(s,a) dual vs joint convex program", t_dual, t_conv, clock="wall",
           note=f"max |difference| {np.max(np.abs(low.V - low_c.V)):.1e}")

    # -- adversary policy iteration vs plain robust value iteration (same per-(s,a) dual)
    eps = set_radii(N, 0.05, "kl", "per_pair", support)
    q = np.where(vis[:, :, None], plug_in_kernel(N)[0], 0.0).reshape(S * A, S)
    R, ef, sf = mdp.R.reshape(S * A, S), eps.reshape(-1), support.reshape(S * A, S)

    def value_iteration():
        V = np.zeros(S)
        for _ in range(100_000):
            Qv = kl_worst_case(q, R + gamma * V[None], ef, sf)[0].reshape(S, A)
            V_new = (pi_star * Qv).sum(axis=1)
            if np.max(np.abs(V_new - V)) < 1e-9 * (1 - gamma):
                return V_new
            V = V_new
        return V

    t_vi, V_vi = best_of(value_iteration, repeats=1)
    print(f"V_low(start): robust value iteration {V_vi[0]:.6f} in {t_vi:.3f}s | speed-up of adversary policy "
          f"iteration (VI / PI) = {t_vi / t_dual:.1f}x")
    record("V_low: adversary policy iteration vs robust value iteration", t_dual, t_vi, clock="wall",
           note="same per-(s,a) dual")


if __name__ == "__main__":
    main()
