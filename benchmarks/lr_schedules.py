"""Speed of lr_schedules' method, each number a ratio against a baseline run in the same process.

1. Loss + exact gradient (adjoint) for T = 10⁴ steps and N = 10⁴ modes, against one forward pass.
2. Adjoint gradient against central finite differences and against torch autograd (float64),
   at T = 300, N = 1000 (finite differences need 2T forward passes).
3. Optimiser time to converge (optimal 24-knot schedule, T = 2000, N = 500) against tuning the
   best constant learning rate.
4. Deterministic dynamics against Monte Carlo SGD to equal accuracy (1 % relative standard error
   of the final loss), N = 200, T = 1000.

Times are CPU seconds (the smallest of repeated calls: not inflated by other processes on a shared
machine); each row is recorded through ``record()``.

Run: ``.venv/bin/python benchmarks/lr_schedules.py`` (about a minute on an idle core).
"""

from __future__ import annotations

import time

import numpy as np
import torch
from _timing import record

from neurips26.lr_schedules import (
    PowerLawTask,
    final_loss_and_grad,
    loss_curve,
    loss_curve_torch,
    optimal_schedule,
    simulate_sgd,
    stability_bound,
    tune_family,
)


def timed(fn, repeat: int = 1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def main() -> None:
    torch.set_num_threads(1)
    rows = []

    sp = PowerLawTask(1.5, 1.0, 10_000, 100_000, 0.05).spectrum()
    T = 10_000
    eta = np.full(T, 0.3 * stability_bound(sp.lambdas))
    t_fwd, _ = timed(lambda: loss_curve(sp, eta, validate=False))
    t_grad, _ = timed(lambda: final_loss_and_grad(sp, eta, validate=False))
    rows.append(("loss+gradient, T=1e4, N=1e4 (adjoint)", t_grad, "one forward pass", t_fwd,
                 "1 / ratio = cost of loss + gradient in forward passes"))

    sp = PowerLawTask(1.5, 1.0, 1000, 10_000, 0.05).spectrum()
    T = 300
    eta = 0.3 * stability_bound(sp.lambdas) * (1 + 0.5 * np.cos(np.arange(T) / 30))
    t_adj, (_, g) = timed(lambda: final_loss_and_grad(sp, eta, validate=False), repeat=3)
    h = 1e-6

    def fd():
        E = np.eye(T)
        return np.array([(loss_curve(sp, eta + h * E[t], validate=False)[-1]
                          - loss_curve(sp, eta - h * E[t], validate=False)[-1]) / (2 * h) for t in range(T)])

    t_fd, g_fd = timed(fd)
    lam, c0 = torch.tensor(sp.lambdas), torch.tensor(sp.c0)

    def autograd():
        te = torch.tensor(eta, requires_grad=True)
        loss_curve_torch(lam, c0, sp.residual, sp.sigma0_sq, te)[-1].backward()
        return te.grad.numpy()

    t_ag, g_ag = timed(autograd, repeat=3)
    err_fd = np.max(np.abs(g_fd - g)) / np.max(np.abs(g))
    err_ag = np.max(np.abs(g_ag - g)) / np.max(np.abs(g))
    rows.append((f"adjoint gradient, T=300, N=1000 (rel. diff to FD {err_fd:.1e})", t_adj, "finite differences", t_fd,
                 "finite differences: 2T forward passes"))
    rows.append((f"adjoint gradient, T=300, N=1000 (rel. diff to autograd {err_ag:.1e})", t_adj, "torch autograd",
                 t_ag, "autograd in float64"))

    sp = PowerLawTask(1.5, 0.25, 500, 5000, 0.05).spectrum()
    t_const, const = timed(lambda: tune_family(sp, 2000, "constant"))
    t_opt, opt = timed(lambda: optimal_schedule(sp, 2000, eta_init=const.eta[0]))
    rows.append((f"optimal schedule T=2000 ({opt.n_iter} L-BFGS-B its, L={opt.loss:.4g})", t_opt,
                 f"best-constant tuning (L={const.loss:.4g})", t_const,
                 "1 / ratio = cost of the optimal schedule in best-constant tunings"))

    sp = PowerLawTask(1.5, 1.5, 200, 2000, 0.05).spectrum()
    T = 1000
    eta = np.full(T, 0.2 * stability_bound(sp.lambdas))
    t_det, curve = timed(lambda: loss_curve(sp, eta), repeat=3)
    pilot = 100
    t_mc, mc = timed(lambda: simulate_sgd(sp, eta, 1, n_seeds=pilot, eval_steps=[T], rng=np.random.default_rng(0)))
    rel_se = float(mc.sem[0] / mc.mean[0])
    need = pilot * (rel_se / 0.01) ** 2
    rows.append((f"deterministic dynamics (exact; MC needs {need:.0f} runs for 1% s.e.)", t_det,
                 "Monte Carlo SGD at equal accuracy", t_mc * need / pilot,
                 f"Monte Carlo time extrapolated from a {pilot}-run pilot"))

    print(f"{'measurement':<72} {'CPU [s]':>9} {'baseline':<40} {'CPU [s]':>9} {'ratio':>9}")
    for name, t, base, tb, note in rows:
        print(f"{name:<72} {t:9.3f} {base:<40} {tb:9.3f} {tb / t:8.1f}x")
        record(f"{name} vs {base}", t, tb, note=note)
    print("ratio = baseline time / measured time (> 1: ours is faster). Row 1: 1/ratio = cost of loss+gradient in "
          "forward passes; optimiser row: 1/ratio = its cost in best-constant tunings")


if __name__ == "__main__":
    main()
