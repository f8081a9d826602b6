"""Benchmark: cost to reach a target W2 accuracy — tuned ALD vs hand-tuned ALD defaults vs the
reverse SDE — and batched vs per-observation network calls. Ratios within one process.

Gaussian setting (d = 2, n = 10, the authors' example); accuracy is the *exact* W2 of each sampler's
output law (closed form), wall-clock is measured on PARTICLES = 1000 particles with the analytic score.
Run: .venv/bin/python benchmarks/annealed_langevin.py
"""

from __future__ import annotations

import time

import numpy as np
import torch
from _timing import best_cpu, record

from neurips26.annealed_langevin import (
    VPSchedule,
    ald_output,
    annealed_langevin,
    bridge,
    composite_score_fn,
    hand_tuned,
    reverse_sde,
    reverse_sde_output,
    tune,
    w2_gaussian,
)
from neurips26.annealed_langevin.experiment import _gaussian_problem

torch.set_num_threads(1)
SCH = VPSchedule()
D, N, EPS, PARTICLES = 2, 10, 0.1, 1000


def single_scores(fit):
    ms, covs = torch.tensor(fit.post_means), torch.tensor(fit.post_covs)

    def f(theta, t):                       # one batched call for all n observations
        a = SCH.alpha(t)
        prec = torch.linalg.inv(a * covs + (1 - a) * torch.eye(fit.d, dtype=torch.float64))
        th = theta[:, None, :] if theta.ndim == 2 else theta
        return -torch.einsum("nij,bnj->bni", prec, th - np.sqrt(a) * ms)

    return f


def exact_ald(kind, hp, fit):
    bs = [bridge(kind, float(t), SCH, fit) for t in hp.times]
    m, c = ald_output(np.zeros(fit.d), np.eye(fit.d), bs, hp.step_sizes, hp.n_steps)
    return w2_gaussian(m, c, *fit.tall_posterior())


def exact_rsde(kind, steps, fit):
    bs = [bridge(kind, float(t), SCH, fit) for t in np.linspace(SCH.t_max, SCH.t_min, steps + 1)]
    m, c = reverse_sde_output(np.zeros(fit.d), np.eye(fit.d), bs, SCH)
    return w2_gaussian(m, c, *fit.tall_posterior())


def timed(fn, repeats=2):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    fit = _gaussian_problem(D, N, np.random.default_rng(0))
    single = single_scores(fit)
    prior = (torch.tensor(fit.prior_mean), torch.tensor(fit.prior_cov))
    precs = torch.tensor(np.linalg.inv(fit.post_covs))
    print(f"Gaussian example d={D}, n={N}, target exact W2 <= {EPS}, {PARTICLES} particles\n")
    for kind in ("linhart", "geffner"):
        score = composite_score_fn(kind, single, N, *prior, SCH, precs if kind == "linhart" else None)
        theta0 = lambda: torch.randn(PARTICLES, D, dtype=torch.float64)  # noqa: E731
        hp = tune(kind, SCH, fit, EPS, bias_term="hessian_lipschitz")
        w_t = exact_ald(kind, hp, fit)
        t_t = timed(lambda: annealed_langevin(score, theta0(), hp.times, hp.step_sizes, hp.n_steps), 1)
        rows = [("tuned ALD (rule)", hp.total_steps, w_t, t_t)]
        # hand-tuned defaults h=1e-3, K=5: smallest L (doubling) reaching ε
        L, hh = 25, None
        while L <= 6400:
            hh = hand_tuned(kind, SCH, fit, num_levels=L)
            if exact_ald(kind, hh, fit) <= EPS:
                break
            L *= 2
        w_h = exact_ald(kind, hh, fit)
        t_h = timed(lambda: annealed_langevin(score, theta0(), hh.times, hh.step_sizes, hh.n_steps), 1)
        rows.append((f"hand-tuned ALD h=1e-3,K=5 (L={L})", hh.total_steps, w_h, t_h))
        # reverse SDE: smallest step count (doubling) reaching ε, else its floor
        s, w_r = 50, None
        while s <= 6400:
            w_r = exact_rsde(kind, s, fit)
            if w_r <= EPS:
                break
            s *= 2
        steps_r = min(s, 6400)
        t_r = timed(lambda: reverse_sde(score, theta0(), SCH, steps_r), 1)
        rows.append((f"reverse SDE ({steps_r} steps){'' if w_r <= EPS else ' NEVER reaches eps'}", steps_r, w_r, t_r))
        print(f"[{kind} composite score]")
        print(f"  {'sampler':48s} {'score evals/particle':>20s} {'exact W2':>9s} {'wall s':>8s} "
              f"{'evals ratio':>11s} {'time ratio':>10s}")
        for name, steps, w, t in rows:
            print(f"  {name:48s} {N * steps:20d} {w:9.4f} {t:8.2f} {steps / hp.total_steps:11.2f} {t / t_t:10.2f}")
        for name, steps, w, _t in rows[1:]:
            record(f"{kind} score: tuned ALD vs {name}", N * hp.total_steps, N * steps, unit="evals", clock="count",
                   note=f"score evaluations per particle to reach W2 ≤ {EPS}; exact W2 {w:.4f} vs tuned {w_t:.4f}")
        print()

    # batching: the product's batched call for the n observations (chunked rows) vs a Python loop
    # over them vs one call on all rows; CPU time (wall time is meaningless on a shared machine)
    from neurips26.annealed_langevin.sbi_adapter import BATCH_ROWS, single_scores_from_estimator

    class MLPEstimator(torch.nn.Module):
        """An MLP score network with sbi's estimator call signature."""

        condition_shape = (D,)

        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(2 * D + 1, 64), torch.nn.SiLU(), torch.nn.Linear(64, 64),
                                           torch.nn.SiLU(), torch.nn.Linear(64, D))

        def forward(self, input, condition, time):
            inp, cond = torch.broadcast_tensors(input, condition.expand(*input.shape[:-1], D))
            return self.net(torch.cat([inp, cond, time.expand(*inp.shape[:-1], 1)], -1))

    est = MLPEstimator()
    x = torch.randn(N, D)
    th = torch.randn(PARTICLES, D, dtype=torch.float64)
    ours = single_scores_from_estimator(est, x)
    one_call = single_scores_from_estimator(est, x, batch_rows=PARTICLES * N)

    def looped():
        with torch.no_grad():
            return [est(input=th.float(), condition=x[j], time=torch.tensor(0.5)) for j in range(N)]

    tb = best_cpu(lambda: [ours(th, 0.5) for _ in range(20)], 3)[0]
    t1 = best_cpu(lambda: [one_call(th, 0.5) for _ in range(20)], 3)[0]
    tl = best_cpu(lambda: [looped() for _ in range(20)], 3)[0]
    print("Note: the rule guarantees eps a priori (and overshoots: its exact W2 is far below eps); the hand-tuned\n"
          "and reverse-SDE settings were found here by searching with the exact-W2 oracle, unavailable in practice.\n")
    print(f"[MLP score net, {PARTICLES} particles x n={N}, CPU time] per-observation loop / our batched call "
          f"(chunks of ~{BATCH_ROWS} rows): {tl / tb:.2f}x; loop / one call on all {PARTICLES * N} rows: {tl / t1:.2f}x")
    record("MLP score net: batched call (chunked rows) vs per-observation loop", tb, tl,
           note=f"{PARTICLES} particles × n = {N}; one call on all rows: {tl / t1:.2f}× the loop")
    print("Where each wins: with the Linhart (GAUSS) score the reverse SDE reaches eps in far fewer evaluations "
          "than any ALD here (its composition is the exact diffused score in the Gaussian setting); with Geffner's "
          "the reverse SDE has a bias floor above eps and tuned ALD is the sampler that reaches it, at fewer "
          "evaluations than hand-tuned ALD (rows above).")


if __name__ == "__main__":
    main()
