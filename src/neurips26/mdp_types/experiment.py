"""Reproduction of paper 16 (method of types for stationary MDPs) at laptop scale.

Sections (brief §4; the paper's own experiments are unknown — it is a theory paper):

a. exact type bounds on a 2×2 Dirichlet MDP by enumerating every path;
b. the LDP of the plug-in kernel against importance-sampling estimates;
c. coverage of the KL uncertainty set (and the universal test's level and power);
d. pessimistic values below the truth, with a gap shrinking like √r_n; L1 / Hoeffding /
   bootstrap baselines in the same run, widths reported at nominal and at equal coverage;
e. the coding error exponent E(R);
f. real input: FrozenLake 8×8 data logged by stepping gymnasium's environment.
"""

from __future__ import annotations

import time

import numpy as np
from pydantic import Field, field_validator

from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C

from .coding import coding_error_exponent
from .large_deviations import kernel_rate, kernel_tail_rate, tail_probability_is, value_rate, value_tail_probability_is
from .mdp import (
    greedy_policy,
    log_episodes,
    optimal_values,
    pair_kernel,
    policy_evaluation,
    sample_pair_chain,
    stationary_distribution,
    toy_text_mdp,
)
from .pair_types import (
    counts_from_pair_counts,
    entropy_rate,
    exact_type_distribution,
    pair_counts,
    plug_in_kernel,
    transition_counts,
    type_probability_bounds,
)
from .uncertainty import (
    bootstrap_lower_bound,
    kl_radius,
    kl_test,
    pessimistic_values,
    set_radii,
    set_statistic,
)


class Config(ExperimentConfig):
    """Sizes of each section. ``quick()`` runs in about a minute on 2 CPU cores."""

    n_states: int = Field(2, ge=2, le=4, description="states of the synthetic Dirichlet MDP")
    n_actions: int = Field(2, ge=2, le=3, description="actions of the synthetic Dirichlet MDP")
    enum_length: int = Field(9, ge=3, le=12, description="path length n for exact type enumeration (|Z|^n paths)")
    ldp_m: list[int] = Field([50, 100, 200, 400], min_length=2, description="transition counts m for the LDP check")
    ldp_paths: int = Field(4000, ge=100, description="importance-sampling paths per m")
    ldp_target_rate: float = Field(0.08, gt=0, lt=1, description="rate J of the tail event used for the LDP check")
    delta: float = Field(0.05, gt=0, lt=1, description="error probability of confidence sets and tests")
    coverage_m: list[int] = Field([200, 1000], min_length=1, description="m for the coverage check")
    coverage_reps: int = Field(1000, ge=50, description="replicates for coverage")
    pess_m: list[int] = Field([2000, 8000, 32000], min_length=3, description="m for the pessimism check")
    pess_reps: int = Field(200, ge=20, description="replicates for pessimism")
    gamma: float = Field(0.9, ge=0, lt=1, description="discount of the synthetic MDP")
    n_boot: int = Field(200, ge=20, description="bootstrap replicates per data set")
    coding_rates: int = Field(16, ge=6, description="grid size for E(R)")
    frozenlake_steps: int = Field(100_000, ge=1000, description="logged FrozenLake 8x8 transitions per data set")
    frozenlake_datasets: int = Field(3, ge=1, description="independent FrozenLake logs")
    frozenlake_gamma: float = Field(0.99, ge=0, lt=1, description="discount for FrozenLake")
    include_taxi: bool = Field(False, description="also run the offline section on Taxi-v4 (full scale)")

    @field_validator("ldp_m", "pess_m")
    @classmethod
    def _increasing_grid(cls, v: list[int]) -> list[int]:
        # the "error shrinks in m" claim and the slope fit read the grid in order
        if any(m < 10 for m in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"must be strictly increasing integers >= 10, got {v}")
        return v

    @field_validator("coverage_m")
    @classmethod
    def _coverage_grid(cls, v: list[int]) -> list[int]:
        if any(m < 10 for m in v):
            raise ValueError(f"every m must be >= 10 transitions, got {v}")
        return v


    @classmethod
    def full(cls) -> "Config":
        """Paper scale (CPU cluster; no GPU needed): longer paths, more replicates, Taxi as well."""
        return cls(enum_length=11, ldp_m=[100, 200, 400, 800, 1600], ldp_paths=100_000,
                   coverage_m=[200, 1000, 5000], coverage_reps=10_000, pess_m=[2000, 8000, 32000, 128000],
                   pess_reps=2000, n_boot=1000, coding_rates=40, frozenlake_steps=1_000_000,
                   frozenlake_datasets=20, include_taxi=True)


def _toy(rng, S, A):
    """Dirichlet(1) kernel; logging policy ½ Dirichlet(1) + ½ uniform, so every pair is visited Θ(m)
    times (the covered regime the pessimism claims need; a raw Dirichlet draw can give π(a|s) ~ 1e-3)."""
    T = rng.dirichlet(np.ones(S), size=(S, A))
    pi = 0.5 * rng.dirichlet(np.ones(A), size=S) + 0.5 / A
    return T, pi


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run every section; return metrics, claims and notes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = config
    S, A = cfg.n_states, cfg.n_actions
    Zn = S * A
    T, pi = _toy(ctx.child_rng(0), S, A)
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    metrics: dict = {"toy_T": T.tolist(), "toy_pi": pi.tolist()}
    claims = []
    timings = {}

    # ---------------------------------------------------------------- a. exact type bounds
    t0 = time.perf_counter()
    n = cfg.enum_length
    N, logp = exact_type_distribution(P, mu, n)
    b = type_probability_bounds(N, P, mu)
    m = n - 1
    up_excess = float(np.max(logp - b.log_upper))
    low_slack = float(np.min(logp - b.log_lower))
    norm_slack = (logp - b.log_upper) / m
    metrics.update(enum_types=len(logp), enum_m=m, upper_excess_log=up_excess, lower_margin_log=low_slack,
                   normalised_slack_range=[float(norm_slack.min()), float(norm_slack.max())],
                   lower_term=float((Zn**2 * np.log(m + 1) + np.log(1 / mu.min())) / m))
    claims.append(C.at_most(
        "type_upper_bound", "Finite-sample type bound: P(Q_n = Q) ≤ exp(−m D(Q‖Q_1⊗P)) for every pair type "
        "(abstract; brief §2 'Type bounds')", measured=up_excess, bound=1e-9, paper_value="log P − (−mD) ≤ 0",
        reason="exact enumeration of all |Z|^n paths; 1e-9 allows float round-off in log-sum-exp only",
        note=f"{len(logp)} types, |Z|={Zn}, n={n} (m={m}); max over types of log P(Q) + m D"))
    claims.append(C.at_least(
        "type_lower_bound", "Matching lower bound up to the polynomial term: log P(Q_n = Q) ≥ −mD − |Z|² log(m+1) "
        "− log(1/min μ) (brief §2; constant inferred)", measured=low_slack, bound=0.0,
        paper_value="slack within |Z|² log(m+1) + log(1/min μ)",
        reason="exact enumeration; the bound is a theorem, so any negative margin is a failure",
        note=f"min over types of log P − lower bound; normalised slack (log P + mD)/m in "
             f"[{norm_slack.min():.3f}, {norm_slack.max():.3f}] against the term {metrics['lower_term']:.3f}"))
    fig, ax = plt.subplots(figsize=(5, 4))
    mD = -b.log_upper
    ax.scatter(mD, logp, s=2, alpha=0.3, label="exact log P(Q_n=Q)")
    xs = np.linspace(0, mD.max(), 50)
    ax.plot(xs, -xs, "r-", label="upper: −mD")
    ax.plot(xs, -xs - Zn**2 * np.log(m + 1) + np.log(mu.min()), "g--", label="lower bound")
    ax.set_xlabel("m D(Q‖Q₁⊗P)")
    ax.set_ylabel("log probability")
    ax.set_title(f"Pair-type bounds, |Z|={Zn}, n={n}")
    ax.legend(fontsize=7)
    ctx.save_figure("type_bounds", fig)
    timings["types"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- b. LDP of T̂ by importance sampling
    t0 = time.perf_counter()
    s_, a_ = 0, 0
    s1 = int(np.argmin(T[s_, a_]))   # raise the smaller transition probability
    lo_x, hi_x = float(T[s_, a_, s1]), 0.999
    for _ in range(14):  # pick the threshold x whose rate is ldp_target_rate (the event, not the tolerance)
        mid = 0.5 * (lo_x + hi_x)
        if kernel_tail_rate(T, pi, s_, a_, s1, mid).rate < cfg.ldp_target_rate:
            lo_x = mid
        else:
            hi_x = mid
    x = 0.5 * (lo_x + hi_x)
    tail = kernel_tail_rate(T, pi, s_, a_, s1, x)
    rng = ctx.child_rng(1)
    est, rel_se = [], []
    for mm in ctx.track(cfg.ldp_m, "LDP importance sampling"):
        lp, se = tail_probability_is(T, pi, s_, a_, s1, x, mm, cfg.ldp_paths, rng, tilted=tail)
        est.append(-lp / mm)
        rel_se.append(se)
    est = np.array(est)
    err = np.abs(est - tail.rate) / tail.rate
    metrics.update(ldp_threshold=x, ldp_rate=tail.rate, ldp_m=cfg.ldp_m, ldp_estimates=est.tolist(),
                   ldp_rel_error=err.tolist(), ldp_is_rel_se=rel_se)
    # J two ways (cross-check of the per-state Bellman solver against the joint convex program)
    Tp = _toy(ctx.child_rng(2), S, A)[0]
    j_b, j_c = kernel_rate(Tp, T, pi, "bellman"), kernel_rate(Tp, T, pi, "convex")
    metrics.update(rate_bellman=j_b, rate_convex=j_c)
    claims.append(C.at_most(
        "ldp_rate_largest_m", "LDP for learned dynamics: −(1/m) log P(T̂(s'|s,a) ≥ x) → J = inf{D(Q‖Q_1⊗P): "
        "Q balanced, Q(s'|s,a) ≥ x} (abstract; brief §4(b))", measured=float(err[-1]), bound=0.2,
        paper_value="rate function = variational formula",
        reason="brief §4(b): within 20% at the largest m; the gap is the O(log m / m) polynomial prefactor",
        note=f"m={cfg.ldp_m[-1]}, J={tail.rate:.4f}, estimate {est[-1]:.4f}; IS relative s.e. {rel_se[-1]:.3f}; "
             f"event T̂({s1}|0,0) ≥ {x:.3f} chosen so that J ≈ {cfg.ldp_target_rate}. The finite-m error is "
             "the polynomial prefactor, ≈ c/(mJ), so the 20% rule at fixed m depends on how rare the event is: "
             "in review (same seed, IS as here) J = 0.02 / 0.04 / 0.15 gave relative errors 0.30 / 0.17 / 0.045 "
             "at m = 400 (J = 0.02 would not hold), all roughly halving per doubling of m as the LDP predicts"))
    claims.append(C.check(
        "ldp_error_shrinks", "The relative error of the finite-m exponent shrinks as m grows (LDP convergence)",
        measured=[round(float(e), 4) for e in err], holds=bool(np.all(np.diff(err) < 0)),
        tolerance="relative errors strictly decreasing over the m grid",
        reason="brief §4(b); IS standard errors (≤ a few %) are far below the differences between grid points",
        note=f"m grid {cfg.ldp_m}"))
    # plug-in value estimator: I_V(v) = inf{J(T') : V^{π_e}(T')(s0) ≥ v}, level v with I_V ≈ target
    r_toy = ctx.child_rng(5).random((S, A))
    pi_e = ctx.child_rng(6).dirichlet(np.ones(A), size=S)
    V_toy = policy_evaluation(T, r_toy, pi_e, cfg.gamma)[0]
    d1 = 0.05 * (r_toy.max() - r_toy.min()) / (1 - cfg.gamma)
    I1 = value_rate(V_toy[0] + d1, T, pi, r_toy, cfg.gamma, pi_e, 0)[0]
    dv = d1 * np.sqrt(cfg.ldp_target_rate / I1)   # quadratic growth of I_V near V: one secant step
    I_v, T_star = value_rate(V_toy[0] + dv, T, pi, r_toy, cfg.gamma, pi_e, 0)
    est_v, se_v = [], []
    for mm in ctx.track(cfg.ldp_m, "value LDP importance sampling"):
        lp, se = value_tail_probability_is(V_toy[0] + dv, T, pi, r_toy, cfg.gamma, pi_e, 0, mm, cfg.ldp_paths,
                                           rng, T_star=T_star)
        est_v.append(-lp / mm)
        se_v.append(se)
    est_v = np.array(est_v)
    err_v = np.abs(est_v - I_v) / I_v
    metrics.update(value_ldp_level=float(V_toy[0] + dv), value_ldp_V=float(V_toy[0]), value_ldp_rate=I_v,
                   value_ldp_estimates=est_v.tolist(), value_ldp_rel_error=err_v.tolist(), value_ldp_is_rel_se=se_v)
    claims.append(C.at_most(
        "ldp_value_rate_largest_m", "Variational rate function of the plug-in value estimator: −(1/m) log "
        "P(V̂(s0) ≥ v) → I_V(v) = inf{J(T') : V^{π_e}(T')(s0) ≥ v} (abstract; brief §2)",
        measured=float(err_v[-1]), bound=0.2, paper_value="rate = variational formula",
        reason="same rule as the kernel LDP (brief §4(b)): within 20% at the largest m",
        note=f"m={cfg.ldp_m[-1]}, V={V_toy[0]:.4f}, level v={V_toy[0] + dv:.4f}, I_V={I_v:.4f}, estimate "
             f"{est_v[-1]:.4f} (IS relative s.e. {se_v[-1]:.3f}); I_V found by a local solve (SLSQP), so a "
             "non-global minimum would show up here as an estimate below I_V"))
    claims.append(C.check(
        "ldp_value_error_shrinks", "The value estimator's finite-m exponent approaches I_V as m grows",
        measured=[round(float(e), 4) for e in err_v], holds=bool(np.all(np.diff(err_v) < 0)),
        tolerance="relative errors strictly decreasing over the m grid",
        reason="LDP convergence; IS standard errors are a few % of the estimate"))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(cfg.ldp_m, est, "o-", label=f"kernel: T̂({s1}|s0,a0) ≥ {x:.2f}")
    ax.axhline(tail.rate, color="C0", ls="--", label="J (kernel rate)")
    ax.plot(cfg.ldp_m, est_v, "s-", color="C1", label=f"value: V̂(s0) ≥ {V_toy[0] + dv:.2f}")
    ax.axhline(I_v, color="C1", ls=":", label="I_V (variational rate)")
    ax.set_xscale("log")
    ax.set_xlabel("m")
    ax.set_ylabel("−(1/m) log P̂ (importance sampling)")
    ax.set_title("Large deviations of learned dynamics and values")
    ax.legend(fontsize=7)
    ctx.save_figure("ldp_kernel", fig)
    timings["ldp"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- c. coverage and the test
    t0 = time.perf_counter()
    rng = ctx.child_rng(3)
    cov_joint, cov_rect, q95_ratio, power = [], [], [], []
    # alternative for the power check: move 0.15 of mass in row (0,0)
    T_alt = T.copy()
    shift = min(0.15, T_alt[0, 0, s1])
    T_alt[0, 0, s1] -= shift
    T_alt[0, 0, (s1 + 1) % S] += shift
    for mm in cfg.coverage_m:
        path = sample_pair_chain(P, mm + 1, rng, n_chains=cfg.coverage_reps)
        Nc = counts_from_pair_counts(pair_counts(path, Zn), S, A)
        stat = np.array([np.sum(Ni.sum(axis=2) / mm * set_statistic(Ni, T)) for Ni in Nc])
        r_n = kl_radius(mm, Zn, cfg.delta)
        cov_joint.append(float(np.mean(stat <= r_n)))
        rect = [np.all(set_statistic(Ni, T) <= set_radii(Ni, cfg.delta, "kl", "per_pair")) for Ni in Nc]
        cov_rect.append(float(np.mean(rect)))
        q95_ratio.append(float(np.quantile(stat, 1 - cfg.delta) / r_n))
        power.append(float(np.mean([kl_test(Ni, T_alt, cfg.delta).reject for Ni in Nc])))
    metrics.update(coverage_m=cfg.coverage_m, coverage_joint=cov_joint, coverage_per_pair=cov_rect,
                   smallest_radius_over_r_n=q95_ratio, test_power_vs_shift_0p15=power)
    claims.append(C.at_least(
        "kl_set_coverage", "Finite-sample UQ: the KL set U_n(δ) = {T': Σ Q̂_1 KL(T̂‖T') ≤ r_n} covers the true "
        "kernel with probability ≥ 1 − δ (abstract; brief §2)", measured=min(cov_joint), bound=1 - cfg.delta,
        paper_value=f"≥ {1 - cfg.delta}",
        reason=f"{cfg.coverage_reps} replicates per m; the radius is conservative so coverage near 1 is expected",
        note=f"m={cfg.coverage_m}: coverage {cov_joint}; rectangular per-pair radius: {cov_rect}; the radius "
             f"that would give exactly 95% is {[round(v, 4) for v in q95_ratio]} × r_n (loose by that factor); "
             f"the universal test (type-I error = 1 − coverage) has power {power} against a 0.15 shift"))
    timings["coverage"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- d. pessimism and baselines
    t0 = time.perf_counter()
    rng = ctx.child_rng(4)
    r = ctx.child_rng(5).random((S, A))
    pi_e = ctx.child_rng(6).dirichlet(np.ones(A), size=S)
    V_true = policy_evaluation(T, r, pi_e, cfg.gamma)[0]
    s0 = 0
    below, gaps, radii = [], [], []
    baseline = {}
    for k, mm in enumerate(ctx.track(cfg.pess_m, "pessimism")):
        path = sample_pair_chain(P, mm + 1, rng, n_chains=cfg.pess_reps)
        Nc = counts_from_pair_counts(pair_counts(path, Zn), S, A)
        V_low = np.array([pessimistic_values(Ni, r, cfg.gamma, pi_e, cfg.delta).V[s0] for Ni in Nc])
        below.append(float(np.mean(V_low <= V_true[s0] + 1e-12)))
        gaps.append(float(np.mean(V_true[s0] - V_low)))
        radii.append(kl_radius(mm, Zn, cfg.delta))
        if k == 0:
            baseline = _baselines(Nc, T, r, pi_e, cfg, V_true[s0], s0, ctx.child_rng(7))
    slope = float(np.polyfit(np.log(np.sqrt(radii)), np.log(gaps), 1)[0])
    local = (np.diff(np.log(gaps)) / np.diff(np.log(np.sqrt(radii)))).tolist()   # slope between grid neighbours
    metrics.update(pess_m=cfg.pess_m, pess_fraction_below=below, pess_mean_gap=gaps, pess_r_n=radii,
                   pess_gap_slope_vs_sqrt_r=slope, pess_gap_local_slopes=local, V_true_s0=float(V_true[s0]),
                   baselines=baseline)
    claims.append(C.at_least(
        "pessimism_valid", "Pessimistic value estimation: V_low = min_{T'∈U_n} V^{π_e}(T') ≤ V^{π_e}(T) "
        "(abstract; brief §4(d))", measured=min(below), bound=0.95, paper_value="≥ 95% of replicates",
        reason=f"brief §4(d); {cfg.pess_reps} replicates per m, rectangular relaxation (a superset, so more "
               "conservative than the joint set)", note=f"fraction below per m {cfg.pess_m}: {below}"))
    claims.append(C.within(
        "pessimism_gap_sqrt_radius", "The pessimism gap V_true − V_low shrinks like √r_n (brief §4(d))",
        measured=slope, low=0.8, high=1.2, paper_value="slope 1 of log gap vs log √r_n",
        reason="first-order expansion of the KL worst case, q·v − √(2ε Var_q v), gives slope 1; ±0.2 for the "
               "curvature at the largest radius and the O(1/√m) sampling error of V̂",
        note=f"mean gaps {[round(g, 4) for g in gaps]} at r_n {[round(x, 4) for x in radii]}. Logging policy "
             "½ Dirichlet + ½ uniform, so every pair is visited Θ(m) times. Our first run used a raw Dirichlet "
             "policy (seed 0: π(1|1) ≈ 4e-4, one pair seen O(1) times, radius ≈ ∞ there) and measured slope 0.34 "
             "(does not hold): the √r_n rate needs the evaluated policy's pairs to be well covered. "
             f"Local slopes between grid neighbours: {[round(x, 3) for x in local]}. The slope is pre-asymptotic "
             "at this grid and depends on the drawn toy MDP: in review, seeds 0–11 (same ½-uniform logging, "
             "60 replicates) gave 0.39–1.20 (seed 10: 1.20, seed 11: 0.39, a kernel with entries ≈ 0.03 whose "
             "worst case saturates at large radii), and for seeds 10 and 11 the local slope tends to 1 when m "
             "grows to 512k (1.03 and 0.91). So this verdict supports the √r_n rate only at this seed; the "
             "asymptotic statement is better tested at full scale."))
    fig, axs = plt.subplots(1, 2, figsize=(9, 3.5))
    axs[0].loglog(np.sqrt(radii), gaps, "o-", label="mean V_true − V_low")
    axs[0].loglog(np.sqrt(radii), gaps[0] * np.sqrt(radii) / np.sqrt(radii[0]), "k:", label="∝ √r_n")
    axs[0].set_xlabel("√r_n")
    axs[0].set_title(f"pessimism gap (slope {slope:.2f})")
    axs[0].legend(fontsize=7)
    names = list(baseline["width_nominal"])
    xs_ = np.arange(len(names))
    axs[1].bar(xs_ - 0.2, [baseline["width_nominal"][k] for k in names], 0.4, label="nominal radius")
    axs[1].bar(xs_ + 0.2, [baseline["width_equal_coverage"].get(k, np.nan) for k in names], 0.4,
               label="equal (95%) set coverage")
    axs[1].set_xticks(xs_, names, rotation=20, fontsize=7)
    axs[1].set_ylabel("mean V̂ − V_low")
    axs[1].set_title(f"interval widths, m={cfg.pess_m[0]}")
    axs[1].legend(fontsize=7)
    ctx.save_figure("pessimism", fig)
    timings["pessimism"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- e. coding exponent
    t0 = time.perf_counter()
    H = entropy_rate(P, mu)
    k = cfg.coding_rates // 2
    below_R = np.linspace(0.0, H, k)
    above_R = np.linspace(H + 0.02, 0.98 * np.log(Zn), cfg.coding_rates - k)
    E_below = coding_error_exponent(P, below_R)
    E_above = coding_error_exponent(P, above_R)
    d1 = np.diff(E_above)
    d2 = np.diff(E_above, 2)
    metrics.update(entropy_rate=H, coding_R=np.r_[below_R, above_R].tolist(), coding_E=np.r_[E_below, E_above].tolist())
    claims.append(C.at_most(
        "coding_zero_below_entropy", "Coding error exponent E(R) = 0 for R ≤ H(P), the entropy rate (abstract; brief §2)",
        measured=float(np.max(np.abs(E_below))), bound=1e-6, paper_value=0.0,
        reason="brief §4(e): ±1e-6 = interior-point solver tolerance", note=f"H(P) = {H:.4f} nats"))
    claims.append(C.check(
        "coding_positive_increasing_convex", "Above the entropy rate E(R) is positive, increasing and convex",
        measured={"min_E": float(E_above.min()), "min_dE": float(d1.min()), "min_d2E": float(d2.min())},
        holds=bool(E_above.min() > 1e-6 and d1.min() > 0 and d2.min() >= -1e-6),
        tolerance="min E > 1e-6, all first differences > 0, all second differences ≥ −1e-6 (uniform R grid)",
        reason="solver tolerance 1e-6 on second differences; a uniform grid makes second differences a convexity test"))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(np.r_[below_R, above_R], np.r_[E_below, E_above], "o-")
    ax.axvline(H, color="r", ls="--", label="entropy rate H(P)")
    ax.set_xlabel("rate R (nats / step)")
    ax.set_ylabel("E(R)")
    ax.set_title("Universal coding error exponent")
    ax.legend(fontsize=7)
    ctx.save_figure("coding_exponent", fig)
    timings["coding"] = time.perf_counter() - t0

    # ---------------------------------------------------------------- f. real input: FrozenLake 8x8
    t0 = time.perf_counter()
    fl = _offline_section("FrozenLake-v1", {"map_name": "8x8"}, cfg.frozenlake_steps, cfg.frozenlake_datasets,
                          cfg.frozenlake_gamma, cfg.delta, ctx)
    maps = fl.pop("maps")
    metrics["frozenlake"] = fl
    fig, axs = plt.subplots(1, 2, figsize=(8, 3.6))
    vmax = float(np.max(maps["V_true"]))
    for ax, key, title in ((axs[0], "V_true", "true V of π* (γ=%.2f)" % cfg.frozenlake_gamma),
                           (axs[1], "V_low", "pessimistic V_low, first log")):
        im = ax.imshow(np.asarray(maps[key]).reshape(8, 8), vmin=0, vmax=vmax, cmap="viridis")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axs, shrink=0.8)
    ctx.save_figure("frozenlake_values", fig)
    claims.append(C.at_least(
        "frozenlake_pessimism_valid", "Offline RL on FrozenLake 8×8 logged data: the pessimistic value of the "
        "evaluated policy at the start state lies below its true value", measured=fl["fraction_below"], bound=1.0,
        paper_value="V_low ≤ V_true", reason=f"{cfg.frozenlake_datasets} independent logs; each fails with "
        f"probability ≤ δ={cfg.delta}, so all should hold at this count",
        note=f"V_true={fl['V_true']:.4f}, V_low={fl['V_low']} (V_low/V_true = "
             f"{[round(v / fl['V_true'], 3) for v in fl['V_low']]}: valid but loose), per-pair radius, known grid "
             f"support. Library's vacuous flag (V_low within 0.1% of the a-priori range (r_max−r_min)/(1−γ) of "
             f"r_min/(1−γ)): per-pair radius {fl['per_pair_vacuous']}, pair-types radius "
             f"(|Z|²={fl['n_pairs'] ** 2}) {fl['pair_types_vacuous']}; at γ={cfg.frozenlake_gamma} that range is "
             f"{fl['a_priori_value_range']:.0f}, far above FrozenLake's values (≤ 1), so the "
             "flag is coarse here"))
    shortfall = max((fl["V_star"] - v) / fl["V_star"]
                    for v in fl["true_value_pessimistic_policy"] + fl["true_value_plugin_policy"])
    claims.append(C.at_least(
        "frozenlake_pessimistic_policy", "The pessimistic policy's true value is not worse than the plug-in "
        "greedy policy's (pessimism in offline RL; our check, the paper's numbers are unknown)",
        measured=float(np.mean(np.array(fl["true_value_pessimistic_policy"]) - np.array(fl["true_value_plugin_policy"]))),
        bound=0.0, paper_value=None, reason="mean over logs of true V(pessimistic) − true V(plug-in greedy)",
        note=f"true V* = {fl['V_star']:.4f}; pessimistic {fl['true_value_pessimistic_policy']}; plug-in "
             f"{fl['true_value_plugin_policy']}; per-log differences "
             f"{[round(a - b, 4) for a, b in zip(fl['true_value_pessimistic_policy'], fl['true_value_plugin_policy'])]}"
             f"; both policies are within {100 * shortfall:.2f}% of V* at {cfg.frozenlake_steps} steps, so with few "
             "logs the sign can sit at noise level: in review, --seed 11 gave per-log differences +0.0007, −0.0033, "
             "−0.0009 (does not hold). A weak check; pessimism matters more with less data"))
    if cfg.include_taxi:
        metrics["taxi"] = taxi = _offline_section("Taxi-v4", {}, cfg.frozenlake_steps, cfg.frozenlake_datasets,
                                           cfg.frozenlake_gamma, cfg.delta, ctx)
        taxi.pop("maps")
    timings["offline"] = time.perf_counter() - t0
    metrics["timings_s"] = timings

    notes = (
        "The paper's text was not reachable: all objects are reconstructed from Csiszár's method of types and "
        "its Markov extensions (research brief p16). Defaults and why: open pair counts (the bounds count the "
        "n−1 transitions exactly; cyclic counts are an option); the KL direction KL(T̂‖T') (the type bound "
        "proves coverage for it); radius r_n = [log(1/δ) + |Z|² log(m+1)]/m (type counting) for the joint set, "
        "and an inferred per-pair radius [log(|Z|m/δ) + (k−1) log(N+1)]/N for large |Z| (FrozenLake), where "
        "|Z|² = 65536 makes r_n vacuous. Pessimistic values use the rectangular relaxation (a superset of the "
        "joint set, so still valid), solved by the per-(s,a) 1-D dual with adversary policy iteration; the joint "
        "convex program is the cross-check. The LDP threshold x is chosen so that J(x) ≈ ldp_target_rate "
        "(the event, not the tolerance). Bad inputs: unvisited pairs get the whole simplex on their support; "
        "data outside a kernel's support give infinite divergence (reported / rejected); γ ≥ 1 and rewards "
        "outside the declared range raise; non-irreducible logging chains raise or warn. Offline sections use the "
        "known support of the shipped tables (which next states are possible, not their probabilities); on Taxi "
        "(full scale) that support is a single next state, so its pessimistic value equals the true value.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)


def _baselines(Nc, T, r, pi_e, cfg, v_true, s0, rng) -> dict:
    """Nominal and equal-coverage widths V̂ − V_low of the KL, L1, Hoeffding sets and the bootstrap."""
    S, A, _ = T.shape
    kinds = {"KL pair-types": ("kl", "pair_types"), "KL per-pair": ("kl", "per_pair"),
             "L1 (Weissman)": ("l1", "pair_types"), "Hoeffding": ("hoeffding", "pair_types")}
    V_hat = np.array([policy_evaluation(np.where(plug_in_kernel(Ni)[1][:, :, None], plug_in_kernel(Ni)[0], T),
                                        r, pi_e, cfg.gamma)[0][s0] for Ni in Nc])
    nominal, equal, cov_nominal, set_cov, mult = {}, {}, {}, {}, {}
    for name, (kind, rad) in kinds.items():
        eps = [set_radii(Ni, cfg.delta, kind, rad) for Ni in Nc]
        need = np.array([np.max(set_statistic(Ni, T, kind) / e) for Ni, e in zip(Nc, eps)])
        c_star = float(np.quantile(need, 1 - cfg.delta))
        lows = np.array([pessimistic_values(Ni, r, cfg.gamma, pi_e, kind=kind, eps=e).V[s0] for Ni, e in zip(Nc, eps)])
        lows_eq = np.array([pessimistic_values(Ni, r, cfg.gamma, pi_e, kind=kind, eps=c_star * e).V[s0]
                            for Ni, e in zip(Nc, eps)])
        nominal[name] = float(np.mean(V_hat - lows))
        equal[name] = float(np.mean(V_hat - lows_eq))
        cov_nominal[name] = float(np.mean(lows <= v_true + 1e-12))
        set_cov[name] = float(np.mean(need <= 1))
        mult[name] = c_star
    boot = np.array([bootstrap_lower_bound(Ni, r, cfg.gamma, pi_e, cfg.delta, cfg.n_boot, rng)[s0] for Ni in Nc])
    nominal["bootstrap"] = float(np.mean(V_hat - boot))
    cov_nominal["bootstrap"] = float(np.mean(boot <= v_true + 1e-12))
    return {"width_nominal": nominal, "width_equal_coverage": equal, "value_coverage_nominal": cov_nominal,
            "set_coverage_nominal": set_cov, "radius_multiplier_for_95pct": mult}


def _offline_section(env_id, make_kwargs, n_steps, n_sets, gamma, delta, ctx) -> dict:
    """Log data in the real environment (behaviour = ½ optimal + ½ uniform), return pessimistic bounds."""
    mdp = toy_text_mdp(env_id, **make_kwargs)
    S, A, _ = mdp.T.shape
    V_star, Q_star = optimal_values(mdp.T, mdp.r, gamma)
    pi_star = greedy_policy(Q_star)
    behaviour = 0.5 * pi_star + 0.5 / A
    V_true = policy_evaluation(mdp.T, mdp.r, pi_star, gamma)[0]
    s0 = int(np.argmax(mdp.initial))
    support = mdp.T > 0
    lows, pess_true, plug_true, vac, vac_pp, rate_hat = [], [], [], [], [], []
    for k in ctx.track(range(n_sets), f"{env_id} logs"):
        data = log_episodes(env_id, behaviour, n_steps, seed=int(ctx.child_rng(100 + k).integers(2**31)), **make_kwargs)
        N = transition_counts(data, S, A)
        res = pessimistic_values(N, mdp.R, gamma, pi_star, delta, radius="per_pair", support=support,
                                 r_range=mdp.r_range)
        lows.append(float(res.V[s0]))
        vac_pp.append(bool(res.vacuous[s0]))
        ctl = pessimistic_values(N, mdp.R, gamma, None, delta, radius="per_pair", support=support,
                                 r_range=mdp.r_range)
        pess_true.append(float(policy_evaluation(mdp.T, mdp.r, ctl.policy, gamma)[0][s0]))
        T_hat, vis = plug_in_kernel(N)
        T_plug = np.where(vis[:, :, None], T_hat, support / support.sum(axis=2, keepdims=True))
        Q_plug = optimal_values(T_plug, (T_plug * mdp.R).sum(axis=2), gamma)[1]
        plug_true.append(float(policy_evaluation(mdp.T, mdp.r, greedy_policy(Q_plug), gamma)[0][s0]))
        vac.append(bool(pessimistic_values(N, mdp.R, gamma, pi_star, delta, radius="pair_types", support=support,
                                           r_range=mdp.r_range).vacuous[s0]))
        if k == 0:
            maps = {"V_true": V_true.tolist(), "V_low": res.V.tolist()}
            # rate of the observed estimate under the truth, with the logging chain made ergodic by resets
            T_log = mdp.T.copy()
            T_log[mdp.terminal] = mdp.initial
            T_hat_log = np.where(vis[:, :, None], T_hat, T_log)
            T_hat_log[mdp.terminal] = mdp.initial
            rate_hat.append(kernel_rate(T_hat_log, T_log, behaviour, "bellman"))
    return {"V_true": float(V_true[s0]), "V_star": float(V_star[s0]), "V_low": lows,
            "fraction_below": float(np.mean(np.array(lows) <= V_true[s0] + 1e-12)),
            "true_value_pessimistic_policy": pess_true, "true_value_plugin_policy": plug_true,
            "pair_types_vacuous": vac, "per_pair_vacuous": vac_pp, "n_pairs": S * A,
            "a_priori_value_range": (mdp.r_range[1] - mdp.r_range[0]) / (1 - gamma), "rate_of_observed_kernel": rate_hat,
            "n_steps": n_steps, "maps": maps}
