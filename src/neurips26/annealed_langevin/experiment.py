"""Reproduction of paper 4 (tuned annealed Langevin for compositional score-based SBI).

Gaussian setting (the authors' example): prior N(1, Σ₀) with Σ₀ random SPD, eigenvalues
e^{N(0,1)+1}; x_j | θ ~ N(θ, 2I); VP schedule of sbi (β 0.01→10, t ∈ [1e-3, 1]). Everything is exact:
bridging densities, constants, the tuned (h_ℓ, K_ℓ, L), and the *exact* W2 of the sampler's
output law (Gaussian recursion, no particles). Transfer: a Gaussian-mixture prior (bimodal
posterior) with exact scores and exact reference samples; hyperparameters tuned on a Gaussian
moment fit; accuracy by empirical W2 (POT) against the reference, with a reference-vs-reference
noise floor. sbi: a small NPSE (quick: 3000 simulations, ≤ 60 epochs, ~15 s on one CPU thread)
trained on a linear-Gaussian task, run through ``sample_tall_posterior`` and judged against the
exact tall posterior with the approximate-score bound evaluated at the network's measured score
error (``_sbi_run``).

Decision rule: INFERRED, not the paper's. The brief could not read the paper's exact rule for
(h_ℓ, K_ℓ, L); ``tuning.tune`` inverts the chained per-level bound (DK19 Thm 4/5) in a way we
chose (bias share r of ε, K_ℓ from the contraction, L by the max-gap rule). Every claim that says
"under the decision rule" is checked under this inferred rule, so a failure may be ours, not the
paper's.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from typing import Annotated

from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.config import ExperimentConfig
from neurips26.harness.context import RunContext

from .composite import gauss_score, geffner_score
from .gaussian import GaussianFit, ald_output, bridge, reverse_sde_output, w2_gaussian
from .mixture_model import MixtureModel, diffused_mixture_score, single_posterior_moments
from .sampler import annealed_langevin, reverse_sde
from .schedule import VPSchedule
from .tuning import BIAS_TERMS, hand_tuned, max_step_profile, tune, tune_for_levels


class Config(ExperimentConfig):
    """Experiment configuration (quick = default)."""

    dims: list[Annotated[int, Field(ge=1)]] = Field([2, 10], min_length=1, description="parameter dimensions d")
    ns: list[Annotated[int, Field(ge=2)]] = Field([2, 10, 30, 100], min_length=1, description="numbers of observations n (>= 2)")
    epsilons: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field([0.1, 0.05], min_length=1, description="prescribed W2 accuracies")
    score_error: float = Field(0.02, ge=0, allow_inf_nan=False, description="norm of a constant composite-score error δ (one extra run at epsilons[0])")
    bias_fraction: float = Field(0.5, gt=0, lt=1, description="share r of ε given to the stationary bias")
    rsde_steps: list[Annotated[int, Field(ge=2)]] = Field([100, 300, 1000, 3000], min_length=2, description="reverse-SDE step counts")
    transfer_ns: list[Annotated[int, Field(ge=2)]] = Field([3, 10], min_length=1, description="n for the non-Gaussian transfer")
    transfer_epsilon: float = Field(0.2, gt=0, allow_inf_nan=False, description="ε for the transfer runs")
    transfer_particles: int = Field(800, ge=100, description="particles per transfer run")
    transfer_rsde_steps: int = Field(300, ge=1, description="reverse-SDE steps in the transfer baseline")
    sbi_simulations: int = Field(3000, ge=0, description="simulations for the sbi-trained NPSE run (0 = skip)")
    sbi_epochs: int = Field(60, ge=1, description="max training epochs for the NPSE run")
    sbi_n: int = Field(3, ge=2, description="observations n for the NPSE run")
    sbi_epsilon: float = Field(0.3, gt=0, allow_inf_nan=False, description="ε asked of the rule in the NPSE run")
    sbi_particles: int = Field(400, ge=50, description="ALD particles in the NPSE run")
    sbi_fit_samples: int = Field(150, ge=10, description="reverse-SDE samples per observation for the Gaussian fit")


    @classmethod
    def full(cls) -> "Config":
        return cls(dims=[2, 5, 10, 20], ns=[2, 5, 10, 30, 100, 300], epsilons=[0.2, 0.1, 0.05, 0.02],
                   rsde_steps=[100, 300, 1000, 3000, 10000], transfer_ns=[3, 10, 30, 100],
                   transfer_epsilon=0.1, transfer_particles=10000, transfer_rsde_steps=3000, sbi_simulations=20000, sbi_epochs=1000,
                   sbi_n=10, sbi_epsilon=0.1, sbi_particles=2000, sbi_fit_samples=500)


def _random_prior_cov(d: int, rng: np.random.Generator) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return q @ np.diag(np.exp(rng.standard_normal(d) + 1)) @ q.T


def _gaussian_problem(d: int, n: int, rng: np.random.Generator) -> GaussianFit:
    mu0 = np.ones(d)
    s0 = _random_prior_cov(d, rng)
    theta = rng.multivariate_normal(mu0, s0)
    x = rng.multivariate_normal(theta, 2 * np.eye(d), size=n)
    return GaussianFit.linear_gaussian(mu0, s0, 2 * np.eye(d), x)


def _exact_w2(kind, hp, sch, fit, bias=None):
    bs = [bridge(kind, float(t), sch, fit) for t in hp.times]
    m, c = ald_output(np.zeros(fit.d), np.eye(fit.d), bs, hp.step_sizes, hp.n_steps, bias)
    mn, sn = fit.tall_posterior()
    return w2_gaussian(m, c, mn, sn), w2_gaussian(m, c, bs[-1].mean, bs[-1].cov)


def _rsde_w2(kind, steps, sch, fit):
    ts = np.linspace(sch.t_max, sch.t_min, steps + 1)
    bs = [bridge(kind, float(t), sch, fit) for t in ts]
    m, c = reverse_sde_output(np.zeros(fit.d), np.eye(fit.d), bs, sch)
    mn, sn = fit.tall_posterior()
    return w2_gaussian(m, c, mn, sn)


def _emp_w2(a: np.ndarray, b: np.ndarray) -> float:
    import ot

    cost = ot.dist(a, b)
    return float(np.sqrt(ot.emd2(np.full(len(a), 1 / len(a)), np.full(len(b), 1 / len(b)), cost,
                                 numItermax=1_000_000)))


def run(config: Config, ctx: RunContext) -> C.Outcome:
    """Run every claim's experiment (see module docstring); torch runs single-threaded here (tiny
    per-step tensors: thread hand-off costs more than it saves on a shared CPU)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(config, ctx)
    finally:
        torch.set_num_threads(threads)


def _run(config: Config, ctx: RunContext) -> C.Outcome:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sch = VPSchedule()
    metrics: dict = {}
    claims = []
    t_start = time.time()
    timings = {}

    # ---------------------------------------------------------------- Gaussian: tuned rule
    rows = []
    problems = {}
    for i, d in enumerate(config.dims):
        for j, n in enumerate(config.ns):
            if n < 2:
                raise ValueError(f"ns must be >= 2 (n = 1 needs no composition), got {n}")
            problems[(d, n)] = _gaussian_problem(d, n, ctx.child_rng(100 * i + j))
    settings = [(e, 0.0) for e in config.epsilons] + ([(config.epsilons[0], config.score_error)]
                                                      if config.score_error > 0 else [])
    for (d, n), fit in ctx.track(list(problems.items()), "Gaussian tuning"):
        u = np.ones(d) / np.sqrt(d)
        for eps, delta in settings:
            for bt in BIAS_TERMS:
                for kind in ("geffner", "linhart"):
                    hp = tune(kind, sch, fit, eps, delta=delta, bias_fraction=config.bias_fraction, bias_term=bt)
                    w_post, w_bridge = _exact_w2(kind, hp, sch, fit, delta * u)
                    rows.append(dict(d=d, n=n, eps=eps, delta=delta, bias_term=bt, kind=kind, L=hp.num_levels,
                                     total=hp.total_steps, h_last=float(hp.step_sizes[-1]),
                                     h_mean=float(np.exp(np.mean(np.log(hp.step_sizes)))), bound=hp.bound,
                                     w2=w_post, w2_bridge=w_bridge))
    metrics["gaussian_runs"] = rows
    timings["gaussian"] = round(time.time() - t_start, 1)
    ratios = [r["w2"] / r["eps"] for r in rows]
    worst = max(rows, key=lambda r: r["w2"] / r["eps"])
    claims.append(C.check(
        "gaussian_tuned_meets_epsilon",
        "Gaussian setting: ALD run at the decision rule's (h, K, L) reaches the prescribed W2 accuracy ε "
        "(abstract; Gaussian section), for both composite scores, across n, d, ε and a score error δ.",
        measured={"worst W2/ε": round(max(ratios), 4), "median W2/ε": round(float(np.median(ratios)), 4),
                  "runs": len(rows), "worst run": {k: worst[k] for k in ("d", "n", "eps", "delta", "kind", "bias_term")}},
        holds=bool(max(ratios) <= 1.0), tolerance="exact W2(output law, true tall posterior) <= ε in every run",
        reason="exact W2 of the sampler's Gaussian output law (closed-form recursion), so no Monte Carlo slack "
               "is needed; ε is the paper's guarantee",
        paper_value="W2 <= ε (guarantee)",
        note="Our rule is inferred from the per-level bound (the exact rule in the paper was not readable); "
             "L by the max-gap rule. A median W2/ε far below 1 shows how conservative the bound is."))
    bound_ok = all(r["w2_bridge"] <= r["bound"] * (1 + 1e-9) for r in rows)
    claims.append(C.check(
        "chained_bound_holds",
        "The chained Wasserstein bound for ALD with approximate scores upper-bounds the sampler's error "
        "(main theorem, with Dalalyan–Karagulyan's per-level bound).",
        measured={"max W2/bound": round(max(r["w2_bridge"] / r["bound"] for r in rows), 4)},
        holds=bool(bound_ok), tolerance="exact W2(output, π_{t_min}) <= bound in every run",
        reason="exact W2, so any violation is a real counter-example", paper_value="bound holds"))

    # ------------------------------------------------------ step sizes and total steps (L vs G)
    ts = sch.levels(50)
    ratio_min, gains = np.inf, {}
    for (d, n), fit in problems.items():
        hg, hl = max_step_profile("geffner", ts, sch, fit), max_step_profile("linhart", ts, sch, fit)
        ratio_min = min(ratio_min, float(np.min(hl / hg)))
        gains[f"d={d},n={n}"] = round(float(np.max(hl / hg)), 3)
    metrics["hmax_ratio_linhart_over_geffner_max"] = gains
    claims.append(C.at_least(
        "linhart_larger_step_sizes",
        "Gaussian setting: Linhart's bridging densities admit step sizes at least as large as Geffner's at every "
        "level, h_max = 2/(m_t + M_t) (abstract; Gaussian section theorem).",
        measured=ratio_min, bound=1 - 1e-9, paper_value="h^L_max(t) >= h^G_max(t) for all t",
        reason="closed-form m_t, M_t on a 50-level grid for every (d, n); 1e-9 is float round-off",
        note=f"largest gain h^L/h^G per (d, n): {gains}"))
    pairs = {}
    for r in rows:
        if r["delta"] == 0:
            pairs.setdefault((r["d"], r["n"], r["eps"], r["bias_term"]), {})[r["kind"]] = r["total"]
    fewer = {k: v["linhart"] <= v["geffner"] for k, v in pairs.items()}
    worse = {f"d={k[0]},n={k[1]},eps={k[2]},{k[3]}": f"L {v['linhart']} vs G {v['geffner']}"
             for k, v in pairs.items() if v["linhart"] > v["geffner"]}
    same_lv = {}
    for (d, n), fit in problems.items():
        tl = sch.levels(25)
        same_lv[f"d={d},n={n}"] = [tune_for_levels(k, tl, sch, fit, config.epsilons[0], bias_term="lipschitz").total_steps
                                   for k in ("geffner", "linhart")]
    metrics["same_levels_L25_total_steps_geffner_linhart"] = same_lv
    claims.append(C.check(
        "linhart_fewer_total_steps",
        "Gaussian setting: the bridging densities of Linhart et al. consistently require fewer total Langevin "
        "steps than those of Geffner et al. (abstract, proved in the Gaussian section); checked here under our "
        "inferred decision rule, not the paper's.",
        measured={"settings where Linhart <= Geffner": f"{sum(fewer.values())}/{len(fewer)}",
                  "exceptions": worse,
                  "median ratio G/L": round(float(np.median([v['geffner'] / v['linhart'] for v in pairs.values()])), 3)},
        holds=bool(all(fewer.values())), tolerance="total_steps(Linhart) <= total_steps(Geffner) in every setting",
        reason="integer step counts from the rule; no noise",
        paper_value="fewer steps for Linhart (always)",
        note="With our inferred rule the exceptions are at small n, where both bridges are close and the rule's "
             f"L or the initial distance differ slightly. Same 25 levels for both (ε={config.epsilons[0]}): {same_lv}."))

    # ------------------------------------------------------------------- baselines (Gaussian)
    base_d = config.dims[0]
    base_ns = [n for n in config.ns if n >= 10] or config.ns
    rsde, hand = {}, {}
    for n in base_ns:
        fit = problems[(base_d, n)]
        for kind in ("geffner", "linhart"):
            rsde[f"{kind},n={n}"] = [round(_rsde_w2(kind, s, sch, fit), 4) for s in config.rsde_steps]
            hp = hand_tuned(kind, sch, fit)
            try:
                hand[f"{kind},n={n}"] = round(_exact_w2(kind, hp, sch, fit)[0], 4)
            except ValueError:
                hand[f"{kind},n={n}"] = float("nan")
    metrics["reverse_sde_w2"] = {"steps": config.rsde_steps, **rsde}
    metrics["hand_tuned_ald_w2 (h=1e-3,K=5,L=25)"] = hand
    eps_min = min(config.epsilons)
    g_final = {k: v[-1] for k, v in rsde.items() if k.startswith("geffner")}
    tuned_g = {f"geffner,n={r['n']}": r["w2"] for r in rows
               if r["d"] == base_d and r["kind"] == "geffner" and r["eps"] == eps_min and r["delta"] == 0
               and r["bias_term"] == "lipschitz" and r["n"] in base_ns}
    claims.append(C.check(
        "reverse_sde_irreducible_bias",
        "A reverse SDE driven by the (Geffner) composite score keeps a bias that more steps do not remove, while "
        "tuned ALD on the same score goes below it (abstract, introduction).",
        measured={"reverse SDE W2 at max steps": g_final, "tuned ALD W2": {k: round(v, 4) for k, v in tuned_g.items()},
                  "W2 per step count": rsde},
        holds=bool(all(g_final[k] > tuned_g[k] for k in g_final)
                   and all(abs(rsde[k][-1] - rsde[k][-2]) < 0.25 * rsde[k][-1] for k in g_final)),
        tolerance=f"W2_RSDE(max steps) > W2_ALD(ε={eps_min}) and the RSDE W2 changes < 25% between the last two step counts",
        reason="exact W2 of both output laws; the 25% plateau test separates bias from discretisation error",
        paper_value="irreducible bias (qualitative)",
        note="With exact Gaussian precisions the Linhart score is the exact diffused tall score, so its reverse SDE "
             "is unbiased (W2 -> 0 as steps grow): its bias appears only with estimated precisions."))

    # ------------------------------------------------------------- transfer (non-Gaussian)
    model = MixtureModel(np.array([0.5, 0.5]), np.array([[-2.0, 0.0], [2.0, 0.5]]),
                         np.array([0.6 * np.eye(2), np.array([[0.8, 0.3], [0.3, 0.6]])]), 4.0 * np.eye(2))
    transfer = {}
    floor = None
    rng_t = ctx.child_rng(7)
    gen = ctx.torch_generator(11)
    samples_for_fig = {}
    for n in ctx.track(config.transfer_ns, "transfer (mixture prior)"):
        theta_true = np.array([0.0, 0.2])
        x = model.simulate(theta_true, n, rng_t)
        ref = model.sample_posterior(x, config.transfer_particles, rng_t)
        ref2 = model.sample_posterior(x, config.transfer_particles, rng_t)
        floor_n = _emp_w2(ref, ref2)
        pm, pc = model.prior_moments()
        ms, ss = single_posterior_moments(model, x)
        fit = GaussianFit(pm, pc, ms, ss)
        singles = [model.posterior(xj[None]) for xj in x]
        W = torch.tensor(np.array([s[0] for s in singles]))
        Mu = torch.tensor(np.array([s[1] for s in singles]))
        Sg = torch.tensor(np.array([s[2] for s in singles]))
        pw, pmu, pcov = (torch.tensor(a) for a in (model.weights, model.means, model.covs))
        prec_post = torch.tensor(np.linalg.inv(ss))
        prec_prior = torch.tensor(np.linalg.inv(pc))

        def make_score(kind):
            def score(theta, t):
                a = sch.alpha(t)
                s = diffused_mixture_score(W, Mu, Sg, a)(theta[:, None, :].expand(-1, n, -1))
                p = diffused_mixture_score(pw[None], pmu[None], pcov[None], a)(theta[:, None, :])[:, 0]
                return geffner_score(s, p) if kind == "geffner" else gauss_score(s, p, prec_post, prec_prior, a)
            return score

        res = {"noise_floor": round(floor_n, 4)}
        for kind in ("geffner", "linhart"):
            hp = tune(kind, sch, fit, config.transfer_epsilon, bias_term="hessian_lipschitz")
            t0 = time.time()
            th = annealed_langevin(make_score(kind), torch.randn((config.transfer_particles, 2), generator=gen,
                                                                 dtype=torch.float64),
                                   hp.times, hp.step_sizes, hp.n_steps, gen).numpy()
            res[f"{kind}_tuned"] = dict(w2=round(_emp_w2(th, ref), 4), total_steps=hp.total_steps, L=hp.num_levels,
                                        seconds=round(time.time() - t0, 2))
            samples_for_fig[(n, kind)] = th
            hh = hand_tuned(kind, sch)
            th = annealed_langevin(make_score(kind), torch.randn((config.transfer_particles, 2), generator=gen,
                                                                 dtype=torch.float64),
                                   hh.times, hh.step_sizes, hh.n_steps, gen).numpy()
            res[f"{kind}_hand"] = dict(w2=round(_emp_w2(th, ref), 4), total_steps=hh.total_steps)
            steps = config.transfer_rsde_steps
            th = reverse_sde(make_score(kind), torch.randn((config.transfer_particles, 2), generator=gen,
                                                           dtype=torch.float64), sch, steps, gen).numpy()
            res[f"{kind}_rsde"] = dict(w2=round(_emp_w2(th, ref), 4), total_steps=steps)
        samples_for_fig[(n, "ref")] = ref
        transfer[f"n={n}"] = res
    metrics["transfer"] = transfer
    timings["transfer"] = round(time.time() - t_start, 1)
    worst_t = max(max(v[f"{k}_tuned"]["w2"] - v["noise_floor"] for k in ("geffner", "linhart"))
                  for v in transfer.values())
    claims.append(C.at_most(
        "gaussian_tuning_transfers",
        "Hyperparameters tuned in the Gaussian setting carry over to a non-Gaussian problem (abstract; "
        "experiments): here a bimodal Gaussian-mixture-prior posterior, tuned on its Gaussian moment fit.",
        measured=worst_t, bound=config.transfer_epsilon, paper_value="tuning generalises (qualitative)",
        reason="empirical W2 (exact OT, POT) between ALD samples and exact reference samples, minus the "
               "reference-vs-reference W2 of the same sample size (the finite-sample noise floor); ε is the "
               "accuracy the rule was asked for",
        note=f"Per-n results (W2, total steps): {transfer}. Score errors are zero here (exact mixture scores); "
             "a trained sbi NPSE score is checked in sbi_npse_tuned_accuracy."))

    # ----------------------------------------------------------------- optional sbi NPSE run
    if config.sbi_simulations > 0:
        sb = _sbi_run(config, ctx)
        metrics["sbi_npse"] = sb
        claims.append(C.at_most(
            "sbi_npse_tuned_accuracy",
            "With an sbi-trained NPSE score, ALD tuned by the Gaussian rule (Linhart score) samples the tall "
            "posterior of a linear-Gaussian task within the approximate-score Wasserstein bound (main theorem: "
            "ε is met up to the score error's δ/m terms, which the rule did not budget).",
            measured=sb["w2_linhart"], bound=sb["tolerance"], paper_value="W2 <= bound with approximate scores",
            reason="exact tall posterior; tolerance = the chained bound of the hyperparameters used, evaluated on "
                   "the exact bridges with the network's measured score error δ_ℓ (95th percentile per level) + "
                   "W2(π_{t_min}, π_0) (sampler stops at t_min) + 3× the rms Monte Carlo error of the moment-based "
                   "W2 from the particle count",
            note=(f"ε = {sb['epsilon']}, n = {sb['n']}, {sb['simulations']} simulations, ≤ {sb['epochs']} epochs "
                  f"({sb['train_seconds']} s training); W2/ε = {sb['w2_over_eps']} "
                  f"({'within' if sb['w2_linhart'] <= sb['epsilon'] else 'NOT within'} ε itself); "
                  f"bound with measured δ {sb['bound_with_measured_delta']}, δ_ℓ (p95) {sb['delta_per_level_p95']}; "
                  f"step sizes stable on the exact bridges: {sb['step_sizes_stable_on_exact_bridges']}.")))
    else:
        claims.append(C.not_checkable(
            "sbi_npse_tuned_accuracy",
            "With an sbi-trained NPSE score, ALD tuned by the Gaussian rule (Linhart score) samples the tall "
            "posterior of a linear-Gaussian task within the approximate-score Wasserstein bound.",
            paper_value="W2 <= bound with approximate scores", reason="skipped by configuration (sbi_simulations = 0)",
            full_scale="trains sbi NPSE on a linear-Gaussian task and runs the tuned sampler through "
                       "sample_tall_posterior against the analytic tall posterior"))

    # ----------------------------------------------------------------------------- figures
    fig, axes = plt.subplots(1, len(base_ns), figsize=(5.2 * len(base_ns), 4), squeeze=False)
    for ax, n in zip(axes[0], base_ns):
        fit = problems[(base_d, n)]
        for kind, col in (("geffner", "C0"), ("linhart", "C1")):
            pts = []
            for eps in (0.4, 0.2, 0.1, 0.05):
                hp = tune(kind, sch, fit, eps, bias_term="hessian_lipschitz")
                pts.append((hp.total_steps, _exact_w2(kind, hp, sch, fit)[0]))
            ax.loglog(*zip(*pts), "o-", color=col, label=f"ALD tuned ({kind})")
            hpts = []
            for L in (5, 10, 25, 50, 100, 200):
                hh = hand_tuned(kind, sch, fit, num_levels=L)
                hpts.append((hh.total_steps, _exact_w2(kind, hh, sch, fit)[0]))
            ax.loglog(*zip(*hpts), "s--", color=col, alpha=0.6, label=f"ALD h=1e-3,K=5 ({kind})")
            ax.loglog(config.rsde_steps, rsde[f"{kind},n={n}"], "^:", color=col, label=f"reverse SDE ({kind})")
        ax.set(title=f"Gaussian, d={base_d}, n={n} (exact W2)", xlabel="total steps (score calls per particle / n)",
               ylabel="W2 to tall posterior")
        ax.legend(fontsize=7)
    ctx.save_figure("w2_vs_total_steps", fig)

    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for kind, col in (("geffner", "C0"), ("linhart", "C1")):
        for bt, ls in (("lipschitz", "-"), ("hessian_lipschitz", "--")):
            sel = [r for r in rows if r["d"] == base_d and r["kind"] == kind and r["bias_term"] == bt
                   and r["eps"] == config.epsilons[0] and r["delta"] == 0]
            nn = [r["n"] for r in sel]
            axes[0].loglog(nn, [r["h_mean"] for r in sel], linestyle=ls, marker="o", color=col, label=f"{kind}, {bt}")
            axes[1].loglog(nn, [r["total"] for r in sel], linestyle=ls, marker="o", color=col)
            axes[2].semilogx(nn, [r["L"] for r in sel], linestyle=ls, marker="o", color=col)
    axes[0].set(xlabel="n", ylabel="geometric mean of h_ℓ over levels",
                title=f"tuned step sizes (d={base_d}, ε={config.epsilons[0]})")
    axes[1].set(xlabel="n", ylabel="total Langevin steps", title="tuned total steps")
    axes[2].set(xlabel="n", ylabel="L", title="tuned number of levels")
    axes[0].legend(fontsize=7)
    ctx.save_figure("tuned_hyperparameters_vs_n", fig)

    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, n in enumerate(config.ns):
        fit = problems[(base_d, n)]
        ax.semilogy(ts, max_step_profile("geffner", ts, sch, fit), "-", color=f"C{i}", label=f"Geffner n={n}")
        ax.semilogy(ts, max_step_profile("linhart", ts, sch, fit), "--", color=f"C{i}", label=f"Linhart n={n}")
    ax.set(xlabel="diffusion time t", ylabel="h_max = 2/(m_t+M_t)", title=f"stability bound, d={base_d}")
    ax.legend(fontsize=7, ncol=2)
    ctx.save_figure("max_step_size_profile", fig)

    nt = config.transfer_ns
    fig, axes = plt.subplots(1, len(nt), figsize=(4.5 * len(nt), 4), squeeze=False)
    for ax, n in zip(axes[0], nt):
        ax.scatter(*samples_for_fig[(n, "ref")][:800].T, s=3, c="k", alpha=0.4, label="exact")
        ax.scatter(*samples_for_fig[(n, "geffner")][:800].T, s=3, c="C0", alpha=0.4, label="ALD tuned (Geffner)")
        ax.scatter(*samples_for_fig[(n, "linhart")][:800].T, s=3, c="C1", alpha=0.4, label="ALD tuned (Linhart)")
        ax.set(title=f"mixture prior, n={n}", xlabel="θ1", ylabel="θ2")
        ax.legend(fontsize=7, markerscale=3)
    ctx.save_figure("transfer_samples", fig)

    timings["total"] = round(time.time() - t_start, 1)
    metrics["cumulative_seconds"] = timings
    notes = ("Decision rule: inferred from the per-level W2 bound (every level kept within ε; bias share r of ε; "
             "h_ℓ = min(2/(m+M), bias-limited); K_ℓ from the contraction needed; L = fewest linspace levels whose "
             "consecutive bridging densities are ε-close). Claims use exact W2 in the Gaussian case. 'lipschitz' "
             "= DK19 Thm 4 (1.65 M/m √(hd)); 'hessian_lipschitz' = DK19 Thm 5 with H = 0 (exact for Gaussians); "
             "the transfer uses the latter (the Gaussian-setting rule).")
    return C.Outcome(metrics=metrics, claims=claims, notes=notes)


def _sbi_run(config: Config, ctx: RunContext) -> dict:
    """Train sbi NPSE on x | θ ~ N(θ, 2I), θ ~ N(1, Σ₀) (d = 2), run the tuned sampler
    (``sample_tall_posterior``, Linhart score) for ``sbi_n`` observations, and measure everything the
    approximate-score bound needs against the exact (analytic) tall posterior:

    * W2 of the output: Gaussian W2 between the samples' moments and the exact tall posterior;
    * δ_ℓ: the network's composite-score error at each level, ‖ŝ_ℓ(θ) − ∇log π_ℓ(θ)‖ at 256 draws
      from the exact bridge π_ℓ (Linhart with exact precisions = diffused tall posterior), 95th
      percentile (the bound needs a bound on the error, not its mean);
    * the chained bound of the hyperparameters actually used, on the exact bridges, with δ_ℓ in
      place of 0 (``tuning.level_bound``), plus W2(π_{t_min}, π_0) (the sampler stops at t_min).
    """
    import warnings

    from sbi.inference import NPSE

    from .sbi_adapter import composite_score_fn, sample_tall_posterior, single_scores_from_estimator
    from .tuning import level_bound, max_step_size

    rng = ctx.child_rng(99)
    d, n, eps = 2, config.sbi_n, config.sbi_epsilon
    s0 = _random_prior_cov(d, rng)
    t0 = time.time()
    prior = torch.distributions.MultivariateNormal(torch.ones(d), torch.tensor(s0, dtype=torch.float32))
    torch.manual_seed(int(rng.integers(2**31)))
    theta = prior.sample((config.sbi_simulations,))
    xs = theta + np.sqrt(2) * torch.randn(theta.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # sbi's "not converged" at the epoch cap is expected here
        from torch.utils.tensorboard import SummaryWriter

        # sbi's default writer logs to ./sbi-logs in the caller's folder; keep it in the run folder
        inf = NPSE(prior=prior, sde_type="vp", show_progress_bars=False,
                   summary_writer=SummaryWriter(log_dir=str(ctx.out_dir / "sbi-logs")))
        inf.append_simulations(theta, xs)
        est = inf.train(max_num_epochs=config.sbi_epochs, show_train_summary=False)
    train_s = time.time() - t0
    x = rng.multivariate_normal(np.ones(d), 2 * np.eye(d), size=n)
    exact = GaussianFit.linear_gaussian(np.ones(d), s0, 2 * np.eye(d), x)
    xt = torch.tensor(x, dtype=torch.float32)
    res = sample_tall_posterior(est, xt, prior, config.sbi_particles, eps, kind="linhart",
                                fit_samples=config.sbi_fit_samples, generator=ctx.torch_generator(5))
    hp = res.hyperparameters
    mn, sn = exact.tall_posterior()
    s = res.samples.numpy()
    w2 = w2_gaussian(s.mean(0), np.cov(s.T), mn, sn)
    # measured composite-score error per level, against the exact bridge the sampler should track
    sch = VPSchedule.from_sbi(est)
    sch = VPSchedule(sch.beta_min, sch.beta_max, float(hp.times[-1]), sch.t_max)
    score = composite_score_fn("linhart", single_scores_from_estimator(est, xt), n, prior.mean.double(),
                               prior.covariance_matrix.double(), sch,
                               torch.as_tensor(np.linalg.inv(res.fit.post_covs)))
    g = ctx.torch_generator(6)
    deltas, bound, stable = [], None, True
    e = None
    bs = [bridge("linhart", float(t), sch, exact) for t in hp.times]
    for i, (b, h, k) in enumerate(zip(bs, hp.step_sizes, hp.n_steps)):
        cov = np.linalg.inv(b.precision)
        z = torch.randn((256, d), generator=g, dtype=torch.float64)
        th = torch.as_tensor(b.mean) + z @ torch.linalg.cholesky(torch.as_tensor(cov)).T
        true = -(th - torch.as_tensor(b.mean)) @ torch.as_tensor(b.precision).T
        err = torch.linalg.norm(score(th, float(b.t)) - true, dim=1).numpy()
        deltas.append(float(np.quantile(err, 0.95)))
        w_in = (w2_gaussian(np.zeros(d), np.eye(d), b.mean, cov) if i == 0
                else e + w2_gaussian(bs[i - 1].mean, np.linalg.inv(bs[i - 1].precision), b.mean, cov))
        stable &= bool(h <= max_step_size(b.m, b.M) * (1 + 1e-9))
        e = level_bound(w_in, float(h), int(k), b.m, b.M, d, deltas[-1], "hessian_lipschitz")
    tail = w2_gaussian(bs[-1].mean, np.linalg.inv(bs[-1].precision), mn, sn)
    # Monte Carlo slack of the moment-based W2 from P samples: E‖m̂ − m‖² = tr Σ/P and
    # E‖Σ̂^½ − Σ^½‖_F² ≈ tr Σ/(2P) for Gaussian samples; 3× the rms of their sum.
    slack = 3 * float(np.sqrt(1.5 * np.trace(sn) / config.sbi_particles))
    fit_err = max(w2_gaussian(a, b_, c, e_) for a, b_, c, e_ in zip(res.fit.post_means, res.fit.post_covs,
                                                                  exact.post_means, exact.post_covs))
    return dict(epsilon=eps, n=n, simulations=config.sbi_simulations, epochs=config.sbi_epochs,
                w2_linhart=round(w2, 4), w2_over_eps=round(w2 / eps, 3),
                bound_with_measured_delta=round(float(e), 4), w2_tmin_to_posterior=round(tail, 4),
                mc_slack=round(slack, 4), tolerance=round(float(e) + tail + slack, 4),
                step_sizes_stable_on_exact_bridges=stable,
                delta_per_level_p95=[round(v, 3) for v in deltas], t_levels=[round(float(t), 4) for t in hp.times],
                w2_single_fit_error=round(fit_err, 4), total_steps=hp.total_steps,
                score_evaluations=res.score_evaluations, train_seconds=round(train_s, 1),
                seconds=round(time.time() - t0, 1))
