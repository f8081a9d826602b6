"""Reproduction of paper 4 (tuned annealed Langevin for compositional score-based SBI).

Gaussian setting (the first author's public example code): prior N(1, Σ₀) with Σ₀ random SPD,
eigenvalues e^{N(0,1)+1}; x_j | θ ~ N(θ, 2I); VP schedule of sbi (β 0.01→10, t ∈ [1e-3, 1]).
Everything is exact there: bridging densities, constants, the tuned (h_ℓ, K_ℓ, L), and the *exact*
W2 of the sampler's output law (Gaussian recursion, no particles). The particle sampler is checked
against that exact law. Transfer: a Gaussian-mixture prior (bimodal posterior) with exact scores
and exact reference samples; hyperparameters tuned on a Gaussian moment fit; accuracy by a
debiased empirical W2 (POT) against the reference. sbi: a small NPSE trained on a linear-Gaussian
task, run through ``sample_tall_posterior`` and judged against the exact tall posterior with the
approximate-score bound evaluated at the network's measured score error.

Decision rule: INFERRED, not the paper's. The paper's exact rule for (h_ℓ, K_ℓ, L) could not be
read (only its abstract and first page were); ``tuning.tune`` inverts the chained per-level bound
of Dalalyan & Karagulyan (2019) in a way we chose (bias share r of ε, K_ℓ from the contraction,
L by the max-gap rule). Every claim made "under the decision rule" is therefore of kind
``reconstruction``: a failure may be ours, not the paper's.

``run`` reads as a table of contents: one function per claim group.
"""

from __future__ import annotations

import math
import time
from typing import Annotated

import numpy as np
import torch
from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.config import ExperimentConfig, Resources
from neurips26.harness.context import RunContext

from .composite import gauss_score, geffner_score
from .gaussian import GaussianFit, ald_output, bridge, reverse_sde_output, w2_gaussian
from .mixture_model import MixtureModel, diffused_mixture_score, single_posterior_moments
from .sampler import annealed_langevin, reverse_sde
from .schedule import VPSchedule
from .tuning import BIAS_TERMS, NotLogConcaveWarning, hand_tuned, max_step_profile, tune, tune_for_levels

KINDS = ("geffner", "linhart")
SAMPLER_CHECK_EPSILON = 0.2   # the sampler check needs a few hundred steps over several levels, not accuracy
COLOURS = {"geffner": "tab:blue", "linhart": "tab:orange", "exact": "k"}   # same colour per method in every figure
RULE_SOURCE = ("inferred: the abstract promises decision rules for the step sizes, steps per level and levels "
               "that guarantee a prescribed accuracy; the paper's rule could not be read, so the rule checked "
               "here is our inversion of the per-level Wasserstein bound of Dalalyan & Karagulyan (2019)")


class Config(ExperimentConfig):
    """Experiment configuration (quick = default; its sizes are set by a CPU budget of 45 s for the quick run).

    Upper bounds keep a typo from running for hours: each bound is about 10× the full scale."""

    dims: list[Annotated[int, Field(ge=1, le=100)]] = Field([2, 10], min_length=1, max_length=10,
                                                             description="parameter dimensions d")
    ns: list[Annotated[int, Field(ge=2, le=10_000)]] = Field([2, 10, 30, 100], min_length=1, max_length=12,
                                                              description="numbers of observations n (>= 2)")
    epsilons: list[Annotated[float, Field(ge=0.005, le=10, allow_inf_nan=False)]] = Field(
        [0.1, 0.05], min_length=1, max_length=8, description="prescribed W2 accuracies (each >= 0.005)")
    score_error: float = Field(0.02, ge=0, le=10, allow_inf_nan=False,
                               description="norm of a constant composite-score error δ (one extra run at epsilons[0])")
    bias_fraction: float = Field(0.5, gt=0, lt=1, description="share r of ε given to the stationary bias")
    rsde_steps: list[Annotated[int, Field(ge=2, le=200_000)]] = Field(
        [100, 300, 1000], min_length=2, description="reverse-SDE step counts (quick: up to 1000, set by the CPU "
                                                    "budget of the quick run; was up to 3000)")
    claim_seeds: int = Field(3, ge=3, le=50, description="seeds over which every random claim is judged")
    sampler_particles: int = Field(2000, ge=500, le=1_000_000,
                                   description="particles of the sampler-vs-exact-law check")
    transfer_ns: list[Annotated[int, Field(ge=2, le=1000)]] = Field([3, 10], min_length=1, max_length=8,
                                                                    description="n for the non-Gaussian transfer")
    transfer_epsilon: float = Field(0.2, ge=0.01, le=10, allow_inf_nan=False, description="ε for the transfer runs")
    transfer_particles: int = Field(200, ge=100, le=20_000,
                                    description="particles per transfer run (exact OT is cubic in this; quick: 200, "
                                                "set by the CPU budget of the quick run; was 500)")
    transfer_rsde_steps: int = Field(300, ge=1, le=100_000, description="reverse-SDE steps in the transfer baseline")
    sbi_simulations: int = Field(600, ge=0, le=1_000_000, description="simulations for the sbi-trained NPSE run "
                                 "(0 = skip; quick: 600, set by the CPU budget of the quick run; was 1500)")
    sbi_epochs: int = Field(15, ge=1, le=10_000, description="max training epochs for the NPSE run (quick: 15, set by "
                            "the CPU budget of the quick run; was 30)")
    sbi_n: int = Field(3, ge=2, le=1000, description="observations n for the NPSE run")
    sbi_epsilon: float = Field(0.3, ge=0.01, allow_inf_nan=False, description="ε asked of the rule in the NPSE run")
    sbi_particles: int = Field(400, ge=50, le=100_000, description="ALD particles in the NPSE run")
    sbi_fit_samples: int = Field(150, ge=10, le=100_000,
                                 description="reverse-SDE samples per observation for the Gaussian fit")
    sbi_max_total_steps: int = Field(2000, ge=1, le=10_000_000,
                                     description="cap on the rule's total Langevin steps in the NPSE run (each step is "
                                                 "a network call): ~10x the typical request (~200); a badly fitted "
                                                 "network once asked for 45,576 (23x the run's CPU time); the "
                                                 "tolerance is then computed from the capped values")

    def resources(self) -> Resources:
        """One CPU; ``hours`` is an estimate, only for the full sweep (``transfer_particles`` > 2000).

        Extrapolated from the quick run (45 s CPU budget; before the size cuts 94 s: Gaussian tuning 46 s,
        transfer 15 s, sbi 18 s) by the ratio of work: Gaussian runs 5× more settings with up to 3× more
        levels (ε = 0.02, n = 300, d = 20) ≈ 1 h; transfer with 10,000 particles (exact OT is cubic:
        ~8,000× the 500-particle OT per run, minutes each) over 4 n × 10 seeds ≈ 3 h; sbi NPSE with 20,000
        simulations and up to 1,000 epochs × 10 seeds ≈ 3 h (training scales with simulations × epochs;
        sbi's early stopping may cut it). Not measured at that scale: about 7 h on one CPU.
        """
        return Resources(num_cpus=1, hours=7.0 if self.transfer_particles > 2000 else None, on_cpu="the samplers (numpy/torch on the CPU) and sbi's score-network training (CPU)")

    @classmethod
    def full(cls) -> "Config":
        """Paper-like sweep: d up to 20, n up to 300, ε down to 0.02, 10 seeds, 10,000 transfer
        particles, a 20,000-simulation NPSE (GPU/cluster; hours on a laptop)."""
        return cls(dims=[2, 5, 10, 20], ns=[2, 5, 10, 30, 100, 300], epsilons=[0.2, 0.1, 0.05, 0.02],
                   rsde_steps=[100, 300, 1000, 3000, 10000], claim_seeds=10, sampler_particles=20000,
                   transfer_ns=[3, 10, 30, 100], transfer_epsilon=0.1, transfer_particles=10000,
                   transfer_rsde_steps=3000, sbi_simulations=20000, sbi_epochs=1000, sbi_n=10, sbi_epsilon=0.1,
                   sbi_particles=2000, sbi_fit_samples=500)


# ----------------------------------------------------------------------------- helpers

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
    """Exact W2 of ALD's output law to the tall posterior and to the last bridging density."""
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


def _emp_w2_sq(a: np.ndarray, b: np.ndarray) -> float:
    """Squared empirical W2 between two equal-weight samples (exact OT, POT)."""
    import ot

    cost = ot.dist(a, b)
    return float(ot.emd2(np.full(len(a), 1 / len(a)), np.full(len(b), 1 / len(b)), cost, numItermax=1_000_000))


def _seeds(config: Config, ctx: RunContext) -> list[int]:
    """The seeds every random claim is judged over, fixed before looking: seed, seed+1, …"""
    return [ctx.seed + k for k in range(config.claim_seeds)]


def _analytic_composite_score(kind: str, fit: GaussianFit, sch: VPSchedule):
    """Composite score built from the *exact* diffused single-posterior scores of a Gaussian fit,
    through the library's ``geffner_score``/``gauss_score`` (a path independent of ``bridge``)."""
    ms, covs = torch.tensor(fit.post_means), torch.tensor(fit.post_covs)
    mu0, s0 = torch.tensor(fit.prior_mean), torch.tensor(fit.prior_cov)
    d = fit.d
    eye = torch.eye(d, dtype=torch.float64)
    post_prec, prior_prec = torch.linalg.inv(covs), torch.linalg.inv(s0)

    cache: dict = {}

    def score(theta, t):
        a = sch.alpha(t)
        if t not in cache:          # K_ℓ steps share one level: invert once per level
            cache[t] = (torch.linalg.inv(a * covs + (1 - a) * eye), torch.linalg.inv(a * s0 + (1 - a) * eye))
        prec, prior_prec_t = cache[t]                                             # (n, d, d), (d, d)
        s = -torch.einsum("nij,bnj->bni", prec, theta[:, None, :] - np.sqrt(a) * ms)
        p = -(theta - np.sqrt(a) * mu0) @ prior_prec_t.T
        return geffner_score(s, p) if kind == "geffner" else gauss_score(s, p, post_prec, prior_prec, a)

    return score


# ----------------------------------------------------------------------------- table of contents

def run(config: Config, ctx: RunContext) -> C.Outcome:
    """Run every claim group; torch runs single-threaded here (tiny per-step tensors: thread
    hand-off costs more than it saves on a shared CPU)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(config, ctx)
    finally:
        torch.set_num_threads(threads)


def _run(config: Config, ctx: RunContext) -> C.Outcome:
    sch = VPSchedule()
    metrics: dict = {}
    figs: dict = {}
    cpu: dict = {}

    def timed(name, f, *args):
        t = time.process_time()
        out = f(*args)
        cpu[name] = round(time.process_time() - t, 1)
        return out

    problems = _gaussian_problems(config, ctx)
    if ctx.confirmation:   # only the claim tuned after a look (reverse_sde_irreducible_bias) and what it needs
        rows = _reverse_sde_rows(config, sch, problems)
        claims = _reverse_sde_bias(config, sch, problems, rows, metrics, figs)
        return C.Outcome(metrics=metrics, claims=claims, notes="Confirmation run of reverse_sde_irreducible_bias "
                         "(its control's condition was revised after a look); the other groups have no tuned claim.")
    caches: dict = {}       # per problem: bridges and level gaps tune() computed, reused by later groups
    rows = timed("tuned_gaussian_runs", _tuned_gaussian_runs, config, ctx, sch, problems, metrics, caches)
    claims = _rule_meets_epsilon(config, rows)
    claims += timed("step_sizes", _linhart_vs_geffner_step_sizes, config, sch, problems, metrics, figs)
    claims += timed("total_steps", _linhart_vs_geffner_total_steps, config, sch, problems, rows, metrics)
    claims += timed("reverse_sde", _reverse_sde_bias, config, sch, problems, rows, metrics, figs)
    claims += timed("sampler_vs_exact", _sampler_matches_exact_law, config, ctx, sch, problems, metrics, caches)
    claims += timed("transfer", _gaussian_tuning_transfers, config, ctx, sch, metrics, figs)
    claims += timed("sbi_npse", _trained_npse_within_bound, config, ctx, metrics)
    timed("figures", _figures, config, ctx, sch, problems, rows, figs, caches)
    metrics["cpu_seconds_by_claim_group"] = cpu
    notes = ("Decision rule: inferred from the per-level W2 bound (every level kept within ε; bias share r of ε; "
             "h_ℓ = min(2/(m+M), bias-limited); K_ℓ from the contraction needed; L = fewest linspace levels whose "
             "consecutive bridging densities are ε-close). Claims use exact W2 in the Gaussian case. 'lipschitz' "
             "= Dalalyan & Karagulyan's bound for M-smooth targets (1.65 M/m √(hd)); 'hessian_lipschitz' = their "
             "bound for Hessian-Lipschitz targets with H = 0 (exact for Gaussians); the transfer and the sbi run use "
             f"the latter (the Gaussian-setting rule). Random claims are judged over seeds {_seeds(config, ctx)}.")
    return C.Outcome(metrics=metrics, claims=claims, notes=notes)


# ----------------------------------------------------------------------------- Gaussian setting

def _gaussian_problems(config: Config, ctx: RunContext) -> dict:
    """One random linear-Gaussian problem per (d, n) (the authors' example)."""
    return {(d, n): _gaussian_problem(d, n, ctx.child_rng(100 * i + j))
            for i, d in enumerate(config.dims) for j, n in enumerate(config.ns)}


def _tuned_gaussian_runs(config, ctx, sch, problems, metrics, caches=None) -> list[dict]:
    """The rule's (h, K, L) for every (d, n, ε, δ, bias term, score) and the exact W2 it reaches.
    ``caches`` (optional): dict (d, n) -> tune() cache of that problem, filled here for later groups."""
    settings = [(e, 0.0) for e in config.epsilons] + ([(config.epsilons[0], config.score_error)]
                                                      if config.score_error > 0 else [])
    rows = []
    for (d, n), fit in ctx.track(list(problems.items()), "Gaussian tuning"):
        u = np.ones(d) / np.sqrt(d)
        cache = {} if caches is None else caches.setdefault((d, n), {})   # shared by its ε, δ and bias terms
        for eps, delta in settings:
            for bt in BIAS_TERMS:
                for kind in KINDS:
                    hp = tune(kind, sch, fit, eps, delta=delta, bias_fraction=config.bias_fraction, bias_term=bt,
                              cache=cache)
                    w_post, w_bridge = _exact_w2(kind, hp, sch, fit, delta * u)
                    rows.append(dict(d=d, n=n, eps=eps, delta=delta, bias_term=bt, kind=kind, L=hp.num_levels,
                                     total=hp.total_steps, h_last=float(hp.step_sizes[-1]),
                                     h_mean=float(np.exp(np.mean(np.log(hp.step_sizes)))), bound=hp.bound,
                                     w2=w_post, w2_bridge=w_bridge))
    metrics["gaussian_runs"] = rows
    return rows


def _reverse_sde_rows(config, sch, problems) -> list[dict]:
    """The tuned-ALD rows :func:`_reverse_sde_bias` compares with (Geffner, d = dims[0], smallest ε, δ = 0,
    the Lipschitz bias term, n ≥ 10): the subset of :func:`_tuned_gaussian_runs` a confirmation run needs."""
    base_d, eps = config.dims[0], min(config.epsilons)
    rows = []
    for n in [n for n in config.ns if n >= 10] or config.ns:
        fit = problems[(base_d, n)]
        hp = tune("geffner", sch, fit, eps, bias_fraction=config.bias_fraction, bias_term="lipschitz")
        rows.append(dict(d=base_d, n=n, eps=eps, delta=0.0, bias_term="lipschitz", kind="geffner",
                         w2=_exact_w2("geffner", hp, sch, fit)[0]))
    return rows


#: run seeds never used while choosing; confirmation runs judge reverse_sde_irreducible_bias only (a
#: run at seed s draws its Gaussian problems from s alone, so these share none with seed 0)
CONFIRMATION_SEEDS = (101, 102, 103)

#: minimum median gain h^L_max/h^G_max − 1 over levels t > t_min for "larger" step sizes; fixed before the
#: medians were looked at, as a step-size gain a user would notice (5%)
STEP_GAIN_DELTA = 0.05


def _rule_meets_epsilon(config, rows) -> list:
    """The rule's guarantee (W2 ≤ ε) and the chained bound, on the exact output laws."""
    ratios = [r["w2"] / r["eps"] for r in rows]
    worst = max(rows, key=lambda r: r["w2"] / r["eps"])
    meets = C.check(
        "gaussian_tuned_meets_epsilon",
        "Gaussian setting: ALD run at the decision rule's (h, K, L) reaches the prescribed W2 accuracy ε, for "
        "both composite scores, across n, d, ε and a score error δ.",
        measured={"worst W2/ε": round(max(ratios), 4), "median W2/ε": round(float(np.median(ratios)), 4),
                  "runs": len(rows), "worst run": {k: worst[k] for k in ("d", "n", "eps", "delta", "kind", "bias_term")}},
        holds=bool(max(ratios) <= 1.0), tolerance="exact W2(output law, true tall posterior) <= ε in every run",
        reason="exact W2 of the sampler's Gaussian output law (closed-form recursion), so no Monte Carlo slack "
               "is needed; ε is the guarantee the rule promises",
        paper_value="W2 <= ε (guarantee)", kind="reconstruction", object="theory", source=RULE_SOURCE,
        note="A median W2/ε far below 1 shows how conservative the bound is. Catches: a contraction count K_ℓ "
             "computed too small, or Langevin noise of the wrong scale in the exact recursion (a tempered "
             "output law misses the posterior's spread by more than ε).")
    bound = C.check(
        "chained_bound_holds",
        "The chained Wasserstein bound for ALD with approximate scores upper-bounds the sampler's exact error at "
        "the last level.",
        measured={"max W2/bound": round(max(r["w2_bridge"] / r["bound"] for r in rows), 4)},
        holds=bool(all(r["w2_bridge"] <= r["bound"] * (1 + 1e-9) for r in rows)),
        tolerance="exact W2(output, π_{t_min}) <= bound in every run",
        reason="exact W2, so any violation is a real counter-example; 1e-9 relative is float round-off",
        paper_value="bound holds", kind="reconstruction", object="theory",
        source="inferred: the abstract derives Wasserstein bounds for ALD with approximate scores; the chained "
               "form here applies Dalalyan & Karagulyan's per-level bound level by level with the triangle inequality")
    return [meets, bound]


def _linhart_vs_geffner_step_sizes(config, sch, problems, metrics, figs) -> list:
    """Two notions of "Linhart admits larger steps": the stability bound 2/(m_t+M_t) of each bridging
    density (the paper's claim, rule-free) and the step sizes our inferred rule actually picks."""
    ts = sch.levels(50)
    above = ts > ts.min()                 # levels t > t_min, where the two bridges can differ
    ratio_min, med_min, gains, medians, profiles = np.inf, np.inf, {}, {}, {}
    for (d, n), fit in problems.items():
        hg, hl = max_step_profile("geffner", ts, sch, fit), max_step_profile("linhart", ts, sch, fit)
        profiles[(d, n)] = (hg, hl)
        r = hl / hg
        ratio_min = min(ratio_min, float(np.min(r)))
        med = float(np.median(r[above]))
        med_min = min(med_min, med)
        gains[f"d={d},n={n}"] = round(float(np.max(r)), 3)
        medians[f"d={d},n={n}"] = round(med, 4)
    metrics["hmax_ratio_linhart_over_geffner_max"] = gains
    metrics["hmax_ratio_linhart_over_geffner_median_above_tmin"] = medians
    # margins of the two conditions; the claim holds when the binding (smaller) one is >= 0
    never_smaller = ratio_min - (1 - 1e-9)
    larger = med_min - (1 + STEP_GAIN_DELTA)
    admissible = C.at_least(
        "linhart_larger_step_sizes",
        "Gaussian setting: the bridging densities of Linhart et al. consistently admit larger step sizes than "
        "those of Geffner et al. Notion tested: the largest admissible step h_max(t) = 2/(m_t + M_t) of each "
        "bridging density (the condition under which the per-level bound holds), in two parts: never smaller "
        f"at any level, and larger by a factor >= 1 + δ (δ = {STEP_GAIN_DELTA}) at the median level t > t_min, "
        "for every drawn problem.",
        measured=float(min(never_smaller, larger)), bound=0.0,   # unrounded: rounding could turn −4e-7 into −0.0 ≥ 0
        paper_value="h^L_max(t) >= h^G_max(t) for all t, and larger",
        reason=f"closed-form m_t, M_t on a 50-level grid for every (d, n). Measured = min(A, B) with A = min over "
               f"levels and problems of h^L_max/h^G_max − (1 − 1e-9) (never smaller; 1e-9 is float round-off, "
               f"the two coincide at t_min) and B = min over problems of the median over levels t > t_min of "
               f"h^L_max/h^G_max − (1 + δ) (larger). δ = {STEP_GAIN_DELTA} was fixed before any median was "
               "looked at, as a step-size gain a user would notice. Deterministic given the run seed's problems "
               "(exact formulas, no sampling), so no interval within a run; over seeds the harness pools runs.",
        kind="paper", source="abstract", domain=(-math.inf, math.inf), object="theory",
        control="Geffner et al.'s bridging densities on the same 50 levels and the same drawn problems (run seed): "
                "Geffner's composite score is Linhart's with every denoising precision weight set to the identity "
                "(then Λ_t = nI + (1−n)I = I), so it removes Linhart's mechanism; judged on the paired ratio "
                "h^L_max/h^G_max at each level, m_t and M_t being the extreme eigenvalues of each bridging "
                "density's exact precision in closed form",
        note=f"A (never smaller) = {never_smaller:.3g} (min ratio {ratio_min:.6f}); B (larger) = {larger:.4g} "
             f"(min over problems of the median ratio above t_min = {med_min:.4f}); binding: "
             f"{'A' if never_smaller <= larger else 'B'}. Median ratio above t_min per (d, n): {medians}; "
             f"largest gain per (d, n): {gains}. Catches: a wrong bridging precision for either score "
             "(e.g. a dropped (n−1) prior term) — the ratio then falls below 1 at intermediate t; and Linhart's "
             "densities replaced by Geffner's (ratio 1 everywhere, B = −δ).")
    tl = sch.levels(25)
    eps = config.epsilons[0]
    frac, worst, rule_h = {}, np.inf, {}
    for (d, n), fit in problems.items():
        for bt in BIAS_TERMS:
            hg = tune_for_levels("geffner", tl, sch, fit, eps, bias_term=bt).step_sizes
            hl = tune_for_levels("linhart", tl, sch, fit, eps, bias_term=bt).step_sizes
            frac[f"d={d},n={n},{bt}"] = round(float(np.mean(hl >= hg * (1 - 1e-9))), 3)
            worst = min(worst, float(np.min(hl / hg)))
            rule_h[(d, n, bt)] = (hg, hl)
    figs["step_profiles"] = (ts, profiles, tl, rule_h)
    metrics["rule_step_fraction_linhart_ge_geffner"] = frac
    rule = C.check(
        "linhart_larger_rule_step_sizes",
        "Gaussian setting, second notion: on the same 25 levels, the step sizes h_ℓ chosen by the decision rule "
        "are at least as large for Linhart's bridging densities as for Geffner's, at every level.",
        measured={"min h^L_ℓ/h^G_ℓ": round(worst, 4), "fraction of levels with h^L >= h^G": frac},
        holds=bool(worst >= 1 - 1e-9), tolerance="h^L_ℓ >= h^G_ℓ (1 − 1e-9) at every level, problem and bias term",
        reason="deterministic step sizes of the rule; 1e-9 is float round-off",
        paper_value="larger step sizes for Linhart", kind="reconstruction", object="theory", source=RULE_SOURCE,
        note=f"ε = {eps}. Our rule also caps h_ℓ by the discretisation bias, which grows with M_ℓ/m_ℓ; where "
             "Linhart's bridge is more ill-conditioned than Geffner's the rule picks a smaller step even though "
             "its admissible step is larger. This is a statement about our rule, not the paper's.")
    return [admissible, rule]


def _linhart_vs_geffner_total_steps(config, sch, problems, rows, metrics) -> list:
    """Total Langevin steps of the rule, Linhart vs Geffner (own L each, and the same 25 levels)."""
    pairs = {}
    for r in rows:
        if r["delta"] == 0:
            pairs.setdefault((r["d"], r["n"], r["eps"], r["bias_term"]), {})[r["kind"]] = r["total"]
    fewer = {k: v["linhart"] <= v["geffner"] for k, v in pairs.items()}
    worse = {f"d={k[0]},n={k[1]},eps={k[2]},{k[3]}": f"L {v['linhart']} vs G {v['geffner']}"
             for k, v in pairs.items() if v["linhart"] > v["geffner"]}
    same_lv = {f"d={d},n={n}": [tune_for_levels(k, sch.levels(25), sch, fit, config.epsilons[0],
                                                bias_term="lipschitz").total_steps for k in KINDS]
               for (d, n), fit in problems.items()}
    metrics["same_levels_L25_total_steps_geffner_linhart"] = same_lv
    return [C.check(
        "linhart_fewer_total_steps",
        "Gaussian setting: the bridging densities of Linhart et al. require fewer total Langevin steps than those "
        "of Geffner et al., under the decision rule.",
        measured={"settings where Linhart <= Geffner": f"{sum(fewer.values())}/{len(fewer)}",
                  "exceptions": worse,
                  "median ratio G/L": round(float(np.median([v['geffner'] / v['linhart'] for v in pairs.values()])), 3)},
        holds=bool(all(fewer.values())), tolerance="total_steps(Linhart) <= total_steps(Geffner) in every setting",
        reason="integer step counts from the rule; no noise",
        paper_value="fewer steps for Linhart (consistently)", kind="reconstruction", object="theory", source=RULE_SOURCE,
        note="The abstract proves this under the paper's rule, which could not be read; the exceptions here are "
             "at small n, where both bridges are close and our rule's L or initial distance differ slightly. Same "
             f"25 levels for both (ε={config.epsilons[0]}, Geffner vs Linhart): {same_lv}.")]


def _reverse_sde_bias(config, sch, problems, rows, metrics, figs) -> list:
    """Reverse SDE on the Geffner composite score: a bias that more steps do not remove."""
    base_d = config.dims[0]
    base_ns = [n for n in config.ns if n >= 10] or config.ns
    rsde, hand = {}, {}
    for n in base_ns:
        fit = problems[(base_d, n)]
        for kind in KINDS:
            rsde[f"{kind},n={n}"] = [round(_rsde_w2(kind, s, sch, fit), 4) for s in config.rsde_steps]
            try:
                hand[f"{kind},n={n}"] = round(_exact_w2(kind, hand_tuned(kind, sch, fit), sch, fit)[0], 4)
            except ValueError:          # h = 1e-3 above 2/M_t for a large n: the hand setting diverges
                hand[f"{kind},n={n}"] = float("nan")
    metrics["reverse_sde_w2"] = {"steps": config.rsde_steps, **rsde}
    metrics["hand_tuned_ald_w2 (h=1e-3,K=5,L=25)"] = hand
    figs["rsde"] = (base_d, base_ns, rsde)
    eps_min = min(config.epsilons)
    g_final = {k: v[-1] for k, v in rsde.items() if k.startswith("geffner")}
    l_final = {k: v[-1] for k, v in rsde.items() if k.startswith("linhart")}     # the control
    tuned_g = {f"geffner,n={r['n']}": r["w2"] for r in rows
               if r["d"] == base_d and r["kind"] == "geffner" and r["eps"] == eps_min and r["delta"] == 0
               and r["bias_term"] == "lipschitz" and r["n"] in base_ns}
    return [C.check(
        "reverse_sde_irreducible_bias",
        "Sampling from the (Geffner) composite score via a reverse SDE leads to an irreducible bias, while "
        "annealed Langevin on the same score goes below it.",
        measured={"reverse SDE W2 at max steps": g_final, "control (Linhart) at max steps": l_final,
                  "tuned ALD W2": {k: round(v, 4) for k, v in tuned_g.items()},
                  "W2 per step count": rsde},
        holds=bool(all(g_final[k] > tuned_g[k] for k in g_final)
                   and all(abs(rsde[k][-1] - rsde[k][-2]) < 0.25 * rsde[k][-1] for k in g_final)
                   and all(l_final[k] <= 0.25 * g_final[k.replace("linhart", "geffner")] for k in l_final)),
        tolerance=f"W2_RSDE(max steps) > W2_ALD(ε={eps_min}) and the RSDE W2 changes < 25% between the last two "
                  "step counts; the control (the same reverse SDE on Linhart's score, which is the exact diffused "
                  "tall score here) ends at most a quarter of Geffner's W2 at the largest step count",
        tuned_after_look="the control's condition was first 'falls by > 25% between the last two step counts and "
                         "ends below Geffner's'; after seeing the control stop falling at the t_min floor "
                         "(W2 ≈ 1e-3, 100× below Geffner's) it became 'ends at most a quarter of Geffner's'",
        object="theory",
        control="the same reverse SDE, same problems and step counts, on Linhart's composite score (with exact "
                "Gaussian precisions it is the exact diffused tall-posterior score, so the composite score's "
                "mismatch — the mechanism of the bias — is removed): its W2 must keep falling where Geffner's "
                "plateaus",
        reason="exact W2 of both output laws; the 25% plateau test separates a bias from discretisation error, "
               "which falls ~3× per 3× more steps",
        paper_value="irreducible bias (qualitative)", kind="paper", source="abstract",
        note="With exact Gaussian precisions the Linhart score is the exact diffused tall score, so its reverse SDE "
             "is unbiased (W2 -> 0 as steps grow): its bias appears only with estimated precisions.")]


def _sampler_matches_exact_law(config, ctx, sch, problems, metrics, caches=None) -> list:
    """The particle sampler (``annealed_langevin`` with the library's composite scores) against the
    exact Gaussian law of the same recursion (``ald_output`` on ``bridge``), over seeds."""
    d, n = config.dims[0], min(config.ns)
    fit = problems[(d, n)]
    eps = SAMPLER_CHECK_EPSILON
    P = config.sampler_particles
    per_seed, seeds, detail = [], _seeds(config, ctx), {}
    exact = {}
    for kind in KINDS:                  # deterministic: the rule's hyperparameters and the exact output law
        hp = tune(kind, sch, fit, eps, bias_term="hessian_lipschitz",
                  cache=None if caches is None else caches.setdefault((d, n), {}))
        bs = [bridge(kind, float(t), sch, fit) for t in hp.times]
        exact[kind] = (hp, *ald_output(np.zeros(d), np.eye(d), bs, hp.step_sizes, hp.n_steps))
    for s in seeds:
        gen = torch.Generator().manual_seed(1000 * s + 3)
        worst = 0.0
        for kind in KINDS:
            hp, m_ex, c_ex = exact[kind]
            th = annealed_langevin(_analytic_composite_score(kind, fit, sch),
                                   torch.randn((P, d), generator=gen, dtype=torch.float64),
                                   hp.times, hp.step_sizes, hp.n_steps, gen).numpy()
            # Monte Carlo error of the moment-based W2 from P samples: E|m̂ − m|² = tr Σ/P and
            # E|Σ̂^½ − Σ^½|_F² ≈ tr Σ/(2P) for Gaussian samples; the claim's unit is their rms sum
            rms = float(np.sqrt(1.5 * np.trace(c_ex) / P))
            z = w2_gaussian(th.mean(0), np.cov(th.T), m_ex, c_ex) / rms
            detail[f"seed={s},{kind}"] = round(z, 2)
            worst = max(worst, z)
        per_seed.append(C.at_most(
            "sampler_matches_exact_law",
            "The particle sampler (annealed Langevin with the composite-score functions) has the output law of "
            "the exact Gaussian recursion it implements.",
            measured=worst, bound=3.0, kind="check", object="theory", domain=(0.0, math.inf),
            source="inferred: both compute the same unadjusted Langevin recursion; the closed form propagates "
                   "mean and covariance exactly, the particles sample it",
            reason=f"W2 between the particles' moments and the exact law, in units of its Monte Carlo rms "
                   f"(√(1.5 tr Σ / P), P = {P}); 3 rms keeps a false alarm rare per score and seed",
            note=f"d = {d}, n = {n}, ε = {eps}, both scores. Catches: Langevin noise √h instead of √(2h) (a "
                 "tempered law, ~30× the rms here), a wrong (1 − n) prior weight or precision weighting in the "
                 "composite scores."))
    metrics["sampler_vs_exact_law_w2_over_rms"] = detail
    return [C.over_seeds(per_seed, seeds)]


# ----------------------------------------------------------------------------- non-Gaussian transfer

def _mixture_model() -> MixtureModel:
    return MixtureModel(np.array([0.5, 0.5]), np.array([[-2.0, 0.0], [2.0, 0.5]]),
                        np.array([0.6 * np.eye(2), np.array([[0.8, 0.3], [0.3, 0.6]])]), 4.0 * np.eye(2))


def _mixture_scores(model: MixtureModel, x: np.ndarray, fit: GaussianFit, sch: VPSchedule):
    """Exact composite scores (both kinds) of the mixture-prior problem for observations ``x``."""
    n = len(x)
    singles = [model.posterior(xj[None]) for xj in x]
    W, Mu, Sg = (torch.tensor(np.array([s[i] for s in singles])) for i in range(3))
    pw, pmu, pcov = (torch.tensor(a) for a in (model.weights, model.means, model.covs))
    prec_post = torch.tensor(np.linalg.inv(fit.post_covs))
    prec_prior = torch.tensor(np.linalg.inv(fit.prior_cov))

    def make(kind):
        def score(theta, t):
            a = sch.alpha(t)
            s = diffused_mixture_score(W, Mu, Sg, a)(theta[:, None, :].expand(-1, n, -1))
            p = diffused_mixture_score(pw[None], pmu[None], pcov[None], a)(theta[:, None, :])[:, 0]
            return geffner_score(s, p) if kind == "geffner" else gauss_score(s, p, prec_post, prec_prior, a)
        return score

    return {k: make(k) for k in KINDS}


def _gaussian_tuning_transfers(config, ctx, sch, metrics, figs) -> list:
    """Gaussian-tuned ALD on a bimodal (mixture-prior) posterior, over seeds; baselines on the first."""
    model = _mixture_model()
    eps, P = config.transfer_epsilon, config.transfer_particles
    seeds = _seeds(config, ctx)
    per_seed, transfer, samples = [], {}, {}
    for s in ctx.track(seeds, "transfer (mixture prior)"):
        rng = np.random.default_rng([s, 7])
        gen = torch.Generator().manual_seed(1000 * s + 11)
        excess = {}
        for n in config.transfer_ns:
            x = model.simulate(np.array([0.0, 0.2]), n, rng)
            ref, ref2 = model.sample_posterior(x, P, rng), model.sample_posterior(x, P, rng)
            floor_sq = _emp_w2_sq(ref2, ref)
            fit = GaussianFit(*model.prior_moments(), *single_posterior_moments(model, x))
            scores = _mixture_scores(model, x, fit, sch)
            res = {"noise_floor_w2": round(float(np.sqrt(floor_sq)), 4)}
            for kind in KINDS:
                hp = tune(kind, sch, fit, eps, bias_term="hessian_lipschitz")
                th = annealed_langevin(scores[kind], torch.randn((P, 2), generator=gen, dtype=torch.float64),
                                       hp.times, hp.step_sizes, hp.n_steps, gen).numpy()
                # debiased W2²: the ALD sample and a second exact sample are both compared with the same
                # reference sample, so the finite-sample part cancels in the difference (mean 0 if exact)
                excess[(n, kind)] = _emp_w2_sq(th, ref) - floor_sq
                res[f"{kind}_tuned"] = dict(w2_sq_excess=round(excess[(n, kind)], 4), total_steps=hp.total_steps,
                                            L=hp.num_levels)
                if s == seeds[0]:
                    samples[(n, kind)] = th
                    res.update(_transfer_baselines(kind, scores[kind], sch, ref, floor_sq, P, gen, config))
            if s == seeds[0]:
                samples[(n, "ref")] = ref
            transfer[f"seed={s},n={n}"] = res
        worst = max(excess, key=excess.get)
        per_seed.append(C.at_most(
            "gaussian_tuning_transfers",
            "The tuning obtained in the Gaussian setting generalises to a non-Gaussian problem: here a bimodal "
            "Gaussian-mixture-prior posterior, tuned on its Gaussian moment fit, sampled within the asked W2 "
            "accuracy ε.",
            measured=excess[worst], bound=eps ** 2, paper_value="tuning generalises (qualitative)",
            domain=(-math.inf, math.inf),
            kind="reconstruction", object="toy",
            source="inferred: the abstract says the Gaussian tuning generalises to more complex problems; the "
                   "tuning rule and the test problem here are ours",
            reason=f"debiased squared W2 = W2²(ALD, ref) − W2²(ref', ref) with exact OT (POT) on {P} particles "
                   f"(mean 0 for an exact sampler; seed-to-seed sd ~0.01 at 500 particles), worst over n and both scores, "
                   f"against ε² = {eps ** 2:.3g}",
            note=f"worst at n = {worst[0]}, {worst[1]}. Score errors are zero here (exact mixture scores); a trained "
                 "network's score is checked in sbi_npse_tuned_accuracy. Catches: Langevin noise √h instead of "
                 "√(2h) (halves the posterior's variance: W2² excess ≈ 0.06 > ε²)."))
    metrics["transfer"] = transfer
    figs["transfer"] = samples
    return [C.over_seeds(per_seed, seeds)]


def _transfer_baselines(kind, score, sch, ref, floor_sq, P, gen, config) -> dict:
    """Hand-tuned ALD (h = 1e-3, K = 5, L = 25) and the reverse SDE on the same score (first seed)."""
    hh = hand_tuned(kind, sch)
    th = annealed_langevin(score, torch.randn((P, 2), generator=gen, dtype=torch.float64),
                           hh.times, hh.step_sizes, hh.n_steps, gen).numpy()
    out = {f"{kind}_hand": dict(w2_sq_excess=round(_emp_w2_sq(th, ref) - floor_sq, 4), total_steps=hh.total_steps)}
    th = reverse_sde(score, torch.randn((P, 2), generator=gen, dtype=torch.float64), sch,
                     config.transfer_rsde_steps, gen).numpy()
    out[f"{kind}_rsde"] = dict(w2_sq_excess=round(_emp_w2_sq(th, ref) - floor_sq, 4),
                               total_steps=config.transfer_rsde_steps)
    return out


# ----------------------------------------------------------------------------- trained sbi NPSE

def _trained_npse_within_bound(config, ctx, metrics) -> list:
    """sbi NPSE trained per seed, sampled by ``sample_tall_posterior``, judged against the bound at
    the network's measured score error."""
    statement = ("With an sbi-trained NPSE score, ALD tuned by the Gaussian rule (Linhart score) samples the tall "
                 "posterior of a linear-Gaussian task within the approximate-score Wasserstein bound (ε plus the "
                 "score error's δ/m terms, which the rule did not budget).")
    source = ("inferred: the abstract derives Wasserstein bounds for ALD with approximate scores; the bound here "
              "is our chained form evaluated at the network's measured score error")
    if config.sbi_simulations == 0:
        return [C.not_checkable(
            "sbi_npse_tuned_accuracy", statement, paper_value="W2 <= bound with approximate scores",
            reason="skipped by configuration (sbi_simulations = 0)", kind="reconstruction", object="toy", source=source,
            full_scale="trains sbi NPSE on a linear-Gaussian task and runs the tuned sampler through "
                       "sample_tall_posterior against the analytic tall posterior")]
    seeds = _seeds(config, ctx)
    per_seed, runs = [], {}
    for s in ctx.track(seeds, "sbi NPSE"):
        try:
            sb = _sbi_run(config, ctx, seed=s)
        except ValueError as err:       # a poorly trained network: inconsistent moment fit, infeasible ε
            runs[f"seed={s}"] = {"error": str(err)}
            per_seed.append(C.at_most(
                "sbi_npse_tuned_accuracy", statement, measured=float("nan"), bound=1.0, domain=(0.0, math.inf),
                paper_value="W2 <= bound with approximate scores", kind="reconstruction", object="toy", source=source,
                reason="the sampler could not run on this seed's network", note=f"seed {s}: {err}"))
            continue
        runs[f"seed={s}"] = sb
        per_seed.append(C.at_most(
            "sbi_npse_tuned_accuracy", statement,
            measured=sb["w2_over_tolerance"], bound=1.0, paper_value="W2 <= bound with approximate scores",
            kind="reconstruction", object="toy", source=source, domain=(0.0, math.inf),
            reason="W2 to the exact tall posterior divided by a heuristic tolerance: the chained bound of the "
                   "hyperparameters used, evaluated on the exact (Gaussian) bridges with the network's measured "
                   "score error δ_ℓ (95th percentile per level) + W2(π_{t_min}, π_0) (the sampler stops at t_min) + "
                   "3× the rms Monte Carlo error of the moment-based W2 from the particle count. It is NOT a "
                   "guarantee: the bound needs strongly log-concave bridging densities and a sup-norm score error, "
                   "while δ here is a 95th percentile and the curvature of the network's own composite score, "
                   "estimated by the sampler, is not positive everywhere (NotLogConcaveWarning). Judged over seeds "
                   "on the mean ratio, ≤ 1",
            note=(f"seed {s}: ε = {sb['epsilon']}, n = {sb['n']}, {sb['simulations']} simulations, ≤ {sb['epochs']} "
                  f"epochs; W2 {sb['w2_linhart']}, tolerance {sb['tolerance']}; W2/ε = {sb['w2_over_eps']} "
                  f"({'within' if sb['w2_linhart'] <= sb['epsilon'] else 'NOT within'} ε itself); bridging "
                  f"density of the network's score estimated not log-concave: {sb['not_log_concave_warned']}. The "
                  "tolerance is loose (the network's δ/m dominates), so this claim cannot catch sampler bugs "
                  "smaller than it.")))
    metrics["sbi_npse"] = runs
    ok = [r for r in runs.values() if "w2_over_eps" in r]
    if not ok:   # nothing was measured: no verdict, not even an inconclusive one
        return [C.not_checkable(
            "sbi_npse_tuned_accuracy", statement, paper_value="W2 <= bound with approximate scores",
            reason=f"the network trained at these sizes ({config.sbi_simulations} simulations, ≤ {config.sbi_epochs} "
                   f"epochs) was too poor for the tuned sampler to run on any of the {len(seeds)} seeds (first: "
                   f"{next(iter(runs.values()))['error']})", kind="reconstruction", object="toy", source=source,
            full_scale="trains sbi NPSE on 20000 simulations for up to 1000 epochs and runs the tuned sampler "
                       "through sample_tall_posterior against the analytic tall posterior")]
    claim = C.over_seeds(per_seed, seeds)
    if ok:
        claim.note = (claim.note + f" W2/ε per seed: {[r['w2_over_eps'] for r in ok]}; ratio W2/tolerance per "
                      f"seed: {[r['w2_over_tolerance'] for r in ok]}; not-log-concave warning on "
                      f"{sum(r['not_log_concave_warned'] for r in ok)} of {len(ok)} seeds.").strip()
    return [claim]


# ----------------------------------------------------------------------------- figures

def _figures(config, ctx, sch, problems, rows, figs, caches=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base_d, base_ns, rsde = figs["rsde"]
    fig, axes = plt.subplots(1, len(base_ns), figsize=(4.6 * len(base_ns), 4.2), squeeze=False,
                             constrained_layout=True)
    for ax, n in zip(axes[0], base_ns):
        fit = problems[(base_d, n)]
        for kind in KINDS:
            col = COLOURS[kind]
            pts = []
            for eps in (0.4, 0.2, 0.1, 0.05):
                hp = tune(kind, sch, fit, eps, bias_term="hessian_lipschitz",
                          cache=None if caches is None else caches.setdefault((base_d, n), {}))
                pts.append((hp.total_steps, _exact_w2(kind, hp, sch, fit)[0]))
            ax.loglog(*zip(*pts), "o-", color=col, label=f"ALD, rule ({kind})")
            hpts = []
            for L in (5, 10, 25, 50, 100, 200):
                hh = hand_tuned(kind, sch, fit, num_levels=L)
                hpts.append((hh.total_steps, _exact_w2(kind, hh, sch, fit)[0]))
            ax.loglog(*zip(*hpts), "s--", color=col, alpha=0.6, label=f"ALD, h=1e-3, K=5 ({kind})")
            ax.loglog(config.rsde_steps, rsde[f"{kind},n={n}"], "^:", color=col, label=f"reverse SDE ({kind})")
        ax.set(title=f"d={base_d}, n={n}", xlabel="total steps per particle", ylabel="exact W2 to tall posterior")
    axes[0][0].legend(fontsize=7, loc="lower left")
    ctx.save_figure("w2_vs_total_steps", fig, caption=(
        "Exact W2 to the tall posterior against total Langevin steps (Gaussian setting). Look at the dotted "
        "reverse-SDE curves: Geffner's (blue) flattens at a bias that more steps do not remove, as the abstract "
        "says, while annealed Langevin tuned by our inferred rule (solid) keeps falling; the hand-tuned "
        "h = 1e-3, K = 5 setting (dashed) needs its number of levels found by trial."))

    ts, profiles, tl, rule_h = figs["step_profiles"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    n_show = [n for n in config.ns][:4]
    for i, n in enumerate(n_show):
        hg, hl = profiles[(base_d, n)]
        axes[0].semilogy(ts, hg, "-", color=f"C{i}", label=f"Geffner n={n}")
        axes[0].semilogy(ts, hl, "--", color=f"C{i}", label=f"Linhart n={n}")
        g, lh = rule_h[(base_d, n, "hessian_lipschitz")]
        axes[1].semilogy(tl, g, "-", color=f"C{i}", label=f"Geffner n={n}")
        axes[1].semilogy(tl, lh, "--", color=f"C{i}", label=f"Linhart n={n}")
    axes[0].set(xlabel="diffusion time t", ylabel="h_max = 2/(m_t + M_t)",
                title=f"admissible step (paper's notion), d={base_d}")
    axes[1].set(xlabel="diffusion time t", ylabel="h_ℓ chosen by the rule",
                title=f"rule's step, 25 levels, ε={config.epsilons[0]}")
    axes[0].legend(fontsize=7, ncol=2)
    ctx.save_figure("step_sizes_linhart_vs_geffner", fig, caption=(
        "Left: the largest admissible Langevin step 2/(m_t+M_t) of each bridging density; the abstract predicts "
        "Linhart's (dashed) never below Geffner's (solid) of the same colour, and the gap opens at intermediate t. "
        "Right: the steps our inferred rule actually picks on 25 shared levels; these can be smaller for Linhart "
        "because the rule also caps the step by the discretisation bias."))

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.9), constrained_layout=True)
    for kind in KINDS:
        for bt, ls in (("lipschitz", "-"), ("hessian_lipschitz", "--")):
            sel = [r for r in rows if r["d"] == base_d and r["kind"] == kind and r["bias_term"] == bt
                   and r["eps"] == config.epsilons[0] and r["delta"] == 0]
            nn = [r["n"] for r in sel]
            axes[0].loglog(nn, [r["h_mean"] for r in sel], linestyle=ls, marker="o", color=COLOURS[kind],
                           label=f"{kind}, {bt}")
            axes[1].loglog(nn, [r["total"] for r in sel], linestyle=ls, marker="o", color=COLOURS[kind])
            axes[2].semilogx(nn, [r["L"] for r in sel], linestyle=ls, marker="o", color=COLOURS[kind])
    axes[0].set(xlabel="n", ylabel="geometric mean of h_ℓ", title=f"rule's step sizes (d={base_d}, ε={config.epsilons[0]})")
    axes[1].set(xlabel="n", ylabel="total Langevin steps", title="rule's total steps")
    axes[2].set(xlabel="n", ylabel="L", title="rule's number of levels")
    axes[0].legend(fontsize=7)
    ctx.save_figure("tuned_hyperparameters_vs_n", fig, caption=(
        "Hyperparameters our inferred rule picks as n grows, for the strict (solid) and the Gaussian-exact "
        "(dashed) bias term. The abstract predicts fewer total steps for Linhart (orange) than Geffner (blue); "
        "under our rule that fails at small n (see linhart_fewer_total_steps)."))

    samples = figs["transfer"]
    nt = config.transfer_ns
    fig, axes = plt.subplots(1, len(nt), figsize=(4.4 * len(nt), 4), squeeze=False, constrained_layout=True)
    for ax, n in zip(axes[0], nt):
        ax.scatter(*samples[(n, "ref")][:800].T, s=3, c=COLOURS["exact"], alpha=0.4, label="exact")
        for kind in KINDS:
            ax.scatter(*samples[(n, kind)][:800].T, s=3, c=COLOURS[kind], alpha=0.4, label=f"ALD, rule ({kind})")
        ax.set(title=f"mixture prior, n={n}", xlabel="θ1", ylabel="θ2")
    axes[0][0].legend(fontsize=7, markerscale=3, loc="best")
    ctx.save_figure("transfer_samples", fig, caption=(
        "Bimodal posterior (Gaussian-mixture prior): exact samples (black) and annealed Langevin tuned on the "
        "Gaussian moment fit, first seed. If the Gaussian tuning generalises, as the abstract says, the coloured "
        "clouds cover both modes with the exact weights."))


def _sbi_run(config: Config, ctx: RunContext, seed: int | None = None) -> dict:
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

    seed = ctx.seed if seed is None else int(seed)
    rng = np.random.default_rng([seed, 99])
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
                   summary_writer=SummaryWriter(log_dir=str(ctx.out_dir / "sbi-logs" / f"seed{seed}")))
        inf.append_simulations(theta, xs)
        est = inf.train(max_num_epochs=config.sbi_epochs, show_train_summary=False)
    train_s = time.time() - t0
    x = rng.multivariate_normal(np.ones(d), 2 * np.eye(d), size=n)
    exact = GaussianFit.linear_gaussian(np.ones(d), s0, 2 * np.eye(d), x)
    xt = torch.tensor(x, dtype=torch.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NotLogConcaveWarning)
        res = sample_tall_posterior(est, xt, prior, config.sbi_particles, eps, kind="linhart",
                                    fit_samples=config.sbi_fit_samples, max_total_steps=config.sbi_max_total_steps,
                                    generator=torch.Generator().manual_seed(1000 * seed + 5))
    not_log_concave = any(issubclass(w.category, NotLogConcaveWarning) for w in caught)
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
    g = torch.Generator().manual_seed(1000 * seed + 6)
    deltas, stable = [], True
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
                w2_over_tolerance=round(w2 / (float(e) + tail + slack), 4), not_log_concave_warned=not_log_concave,
                step_sizes_stable_on_exact_bridges=stable,
                delta_per_level_p95=[round(v, 3) for v in deltas], t_levels=[round(float(t), 4) for t in hp.times],
                w2_single_fit_error=round(fit_err, 4), total_steps=hp.total_steps,
                requested_total_steps=hp.requested_total_steps,
                score_evaluations=res.score_evaluations, train_seconds=round(train_s, 1),
                seconds=round(time.time() - t0, 1))
