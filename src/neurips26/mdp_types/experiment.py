"""Reproduction of paper 16 (method of types for stationary MDPs) at laptop scale.

The paper is a theory paper and its own experiments are unknown; only its abstract was read.
Each claim group below tests one statement of the abstract on small MDPs where the truth is
known exactly, over several independently drawn toy MDPs (seeds chosen before looking):

- exact type bounds, by enumerating every path of a 2×2 Dirichlet MDP;
- large deviations of the plug-in kernel and of the plug-in value, against importance sampling;
- coverage of the KL confidence set, with the radius that would be calibrated to exactly 1 − δ;
- pessimistic values below the truth, with a gap shrinking like √r_n, and baseline sets;
- the universal coding error exponent E(R);
- offline RL on FrozenLake 8×8 data logged by stepping gymnasium's environment.
"""

from __future__ import annotations

import math
import time

import numpy as np
from pydantic import Field, field_validator
from scipy import stats

from neurips26.harness import ExperimentConfig, Outcome, Resources, RunContext
from neurips26.harness import claims as C

from .coding import coding_error_exponent
from .large_deviations import (
    _extreme_value_on_support,
    iid_kernel_tail_rate,
    kernel_rate,
    kernel_tail_rate,
    tail_probability_is,
    value_rate,
    value_tail_probability_is,
)
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
    pessimistic_values_batch,
    set_radii,
    set_statistic,
)

ABSTRACT = "abstract"


class Config(ExperimentConfig):
    """Sizes of each claim group. ``quick()`` runs in about half a minute of CPU.

    Every size has an upper bound so that a typo cannot start a run of hours or exhaust memory.
    """

    n_states: int = Field(2, ge=2, le=4, description="states of the synthetic Dirichlet MDP")
    n_actions: int = Field(2, ge=2, le=3, description="actions of the synthetic Dirichlet MDP")
    n_seeds: int = Field(3, ge=3, le=50, description="independently drawn toy MDPs each random claim is judged over")
    enum_length: int = Field(9, ge=3, le=12, description="path length n for exact type enumeration (|Z|^n paths)")
    ldp_m: list[int] = Field([50, 100, 200, 400], min_length=2, max_length=12,
                             description="transition counts m for the LDP check")
    ldp_paths: int = Field(4000, ge=100, le=1_000_000, description="importance-sampling paths per m")
    ldp_target_rate: float = Field(0.08, gt=0, lt=1, description="rate J of the tail event used for the LDP check")
    delta: float = Field(0.05, gt=0, lt=1, description="error probability of confidence sets and tests")
    coverage_m: list[int] = Field([200, 1000], min_length=1, max_length=12, description="m for the coverage check")
    coverage_reps: int = Field(1000, ge=50, le=100_000, description="replicates for coverage")
    pess_m: list[int] = Field([2000, 8000, 32000], min_length=3, max_length=12, description="m for the pessimism check")
    pess_reps: int = Field(100, ge=20, le=20_000, description="replicates for pessimism, per toy MDP")
    gamma: float = Field(0.9, ge=0, lt=1, description="discount of the synthetic MDP")
    n_boot: int = Field(200, ge=20, le=10_000, description="bootstrap replicates per data set")
    coding_rates: int = Field(16, ge=6, le=400, description="grid size for E(R)")
    frozenlake_steps: int = Field(100_000, ge=1000, le=10_000_000,
                                  description="logged FrozenLake 8x8 transitions per data set")
    frozenlake_datasets: int = Field(3, ge=2, le=200, description="independent FrozenLake logs")
    frozenlake_gamma: float = Field(0.99, ge=0, lt=1, description="discount for FrozenLake")
    include_taxi: bool = Field(False, description="also run the offline section on Taxi-v4 (full scale)")

    @field_validator("ldp_m", "pess_m")
    @classmethod
    def _increasing_grid(cls, v: list[int]) -> list[int]:
        # the "error shrinks in m" claim and the slope fit read the grid in order
        if any(m < 10 or m > 1_000_000 for m in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"must be strictly increasing integers in [10, 1000000], got {v}")
        return v

    @field_validator("coverage_m")
    @classmethod
    def _coverage_grid(cls, v: list[int]) -> list[int]:
        if any(m < 10 or m > 1_000_000 for m in v):
            raise ValueError(f"every m must lie in [10, 1000000] transitions, got {v}")
        return v

    def resources(self) -> Resources:
        """One CPU; ``hours`` extrapolated from the quick run (inferred, not measured at full scale).

        The quick run took 31.5 CPU-s on seed 0 (2 shared cores under load ~8, so on the high side),
        split by its group timings into types 8.6 s, LDP 8.6 s, coverage 2.6 s, pessimism 3.7 s,
        coding 0.6 s, offline 7.4 s. Each part is scaled by its work ratio to the quick config
        (types: seeds × |Z|^n paths; LDP: seeds × paths × Σm; coverage: seeds × reps × Σm;
        pessimism: seeds × reps × len(m); coding: seeds × rates; offline: logs × steps, twice with
        Taxi). For ``full()`` this gives ≈ 5,000 s ≈ 1.4 h, LDP two thirds of it. Memory: the
        exact type enumeration holds |Z|^n paths with their pair counts (4^11 paths: ~3 GB peak).
        """
        q = Config()
        s = self.n_seeds / q.n_seeds
        zn, zq = self.n_states * self.n_actions, q.n_states * q.n_actions
        sec = s * (8.6 * zn ** self.enum_length / zq ** q.enum_length
                   + 8.6 * self.ldp_paths * sum(self.ldp_m) / (q.ldp_paths * sum(q.ldp_m))
                   + 2.6 * self.coverage_reps * sum(self.coverage_m) / (q.coverage_reps * sum(q.coverage_m))
                   + 3.7 * self.pess_reps * len(self.pess_m) / (q.pess_reps * len(q.pess_m))
                   + 0.6 * self.coding_rates / q.coding_rates)
        sec += 7.4 * self.frozenlake_datasets * self.frozenlake_steps / (q.frozenlake_datasets * q.frozenlake_steps) \
            * (2 if self.include_taxi else 1)
        paths = zn ** self.enum_length
        return Resources(num_cpus=1, memory_gb=max(1.0, round(paths * 700e-9, 1)), hours=max(0.01, round(sec / 3600, 2)),
                         on_cpu="type enumeration, importance sampling and convex programs (numpy and cvxpy: CPU by nature)")

    @classmethod
    def full(cls) -> "Config":
        """Paper scale (CPU cluster; no GPU needed): longer paths, more replicates and seeds, Taxi as well."""
        return cls(n_seeds=10, enum_length=11, ldp_m=[100, 200, 400, 800, 1600], ldp_paths=100_000,
                   coverage_m=[200, 1000, 5000], coverage_reps=10_000, pess_m=[2000, 8000, 32000, 128000],
                   pess_reps=1000, n_boot=1000, coding_rates=40, frozenlake_steps=1_000_000,
                   frozenlake_datasets=20, include_taxi=True)


def _toy(rng, S, A):
    """Dirichlet(1) kernel; logging policy ½ Dirichlet(1) + ½ uniform, so every pair is visited Θ(m)
    times (the covered regime the pessimism claims need; a raw Dirichlet draw can give π(a|s) ~ 1e-3)."""
    T = rng.dirichlet(np.ones(S), size=(S, A))
    pi = 0.5 * rng.dirichlet(np.ones(A), size=S) + 0.5 / A
    return T, pi


# No CONFIRMATION_SEEDS: no claim of this system is tuned after a look (the LDP claims, once judged
# against a ±20% tolerance set from a prototype run, are judged on the sign of a paired contrast with
# their control), so a confirmation run would have nothing to confirm.


class _Toy:
    """One drawn toy MDP (kernel, logging policy, reward, evaluated policy) and its seed."""

    def __init__(self, seed: int, S: int, A: int):
        self.seed = seed
        self.T, self.pi = _toy(np.random.default_rng([seed, 0]), S, A)
        self.P = pair_kernel(self.T, self.pi)
        self.mu = stationary_distribution(self.P)
        self.r = np.random.default_rng([seed, 5]).random((S, A))
        self.pi_e = np.random.default_rng([seed, 6]).dirichlet(np.ones(A), size=S)

    def rng(self, offset: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, offset])


def run(config: Config, ctx: RunContext) -> Outcome:
    """Table of contents: one function per claim group; returns metrics, claims and notes."""
    import matplotlib

    matplotlib.use("Agg")
    seeds = [ctx.seed + k for k in range(config.n_seeds)]
    toys = [_Toy(s, config.n_states, config.n_actions) for s in seeds]
    metrics: dict = {"seeds": seeds, "toy_T": [t.T.tolist() for t in toys], "toy_pi": [t.pi.tolist() for t in toys]}
    timings: dict = {}
    claims = []
    groups = (("types", _type_bounds_hold_on_every_type), ("ldp", _large_deviations_match_rates),
              ("coverage", _kl_set_covers_the_truth), ("pessimism", _pessimistic_values_are_valid),
              ("coding", _coding_exponent_shape), ("offline", _offline_rl_on_frozenlake))
    for name, group in groups:
        t0 = time.perf_counter()
        claims += group(config, ctx, toys, metrics)
        timings[name] = time.perf_counter() - t0
    metrics["timings_s"] = timings
    return Outcome(metrics=metrics, claims=claims, notes=_NOTES)


_NOTES = (
    "Only the paper's abstract was readable: every object is reconstructed from Csiszár's method of types "
    "and its Markov extensions (Csiszár 1998; Davisson, Longo & Sgarro 1981; Natarajan 1985). Each random "
    "claim is judged over n_seeds independently drawn toy MDPs with seeds run-seed + 0, 1, 2, … (chosen "
    "before looking). Defaults and why: open pair counts (the bounds count the n−1 transitions exactly; cyclic "
    "counts are an option); the KL direction KL(T̂‖T') (the type bound proves coverage for it); radius "
    "r_n = [log(1/δ) + |Z|² log(m+1)]/m (type counting) for the joint set, and an inferred per-pair radius "
    "[log(|Z|m/δ) + (k−1) log(N+1)]/N for large |Z| (FrozenLake), where |Z|² = 65536 makes r_n vacuous. "
    "Pessimistic values use the rectangular relaxation (a superset of the joint set, so still valid), solved by "
    "the per-(s,a) 1-D dual with adversary policy iteration; the joint convex program is the cross-check. The "
    "LDP threshold x is chosen so that J(x) ≈ ldp_target_rate (the event, not the tolerance). Bad inputs: "
    "unvisited pairs get the whole simplex on their support; data outside a kernel's support give infinite "
    "divergence (reported / rejected); γ ≥ 1 and rewards outside the declared range raise; non-irreducible "
    "logging chains raise or warn. Offline sections use the known support of the shipped tables (which next "
    "states are possible, not their probabilities); on Taxi (full scale) that support is a single next state, "
    "so its pessimistic value equals the true value.")


# ---------------------------------------------------------------------------- exact type bounds

def _type_bounds_hold_on_every_type(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """Exact law of the pair type (all |Z|^n paths) against the upper and lower type bounds."""
    import matplotlib.pyplot as plt

    n, m, Zn = cfg.enum_length, cfg.enum_length - 1, cfg.n_states * cfg.n_actions
    up, low, tight, per_seed = [], [], [], []
    for toy in ctx.track(toys, "exact type enumeration"):
        N, logp = exact_type_distribution(toy.P, toy.mu, n)
        b = type_probability_bounds(N, toy.P, toy.mu)
        up.append(float(np.max(logp - b.log_upper)))
        low.append(float(np.min(logp - b.log_lower)))
        tight.append(_deterministic_type_identity_error(N, logp, b.log_upper, toy.mu))
        per_seed.append({"types": len(logp), "norm_slack": [float(((logp - b.log_upper) / m).min()),
                                                             float(((logp - b.log_upper) / m).max())]})
        if toy is toys[0]:
            fig, ax = plt.subplots(figsize=(6, 4.2), constrained_layout=True)
            mD = -b.log_upper
            ax.scatter(mD, logp, s=2, alpha=0.3, label="exact log P(Q_n=Q)")
            xs = np.linspace(0, mD.max(), 50)
            ax.plot(xs, -xs, "r-", label="upper bound −mD")
            ax.plot(xs, -xs - Zn**2 * np.log(m + 1) + np.log(toy.mu.min()), "g--", label="lower bound")
            ax.set_xlabel("m D(Q‖Q₁⊗P)")
            ax.set_ylabel("log probability")
            ax.set_title(f"Pair-type bounds, |Z|={Zn}, n={n} (seed {toy.seed})")
            ax.legend(fontsize=8, loc="lower left")
            ctx.save_figure("type_bounds", fig, caption=(
                "Every dot is one pair type of a 2×2 MDP, its exact log-probability against m·D(Q‖Q₁⊗P). "
                "The abstract's finite-sample type bound predicts every dot on or below the red line "
                "−mD; the green dashed line is the polynomial lower bound (constant inferred)."))
    metrics["types"] = {"m": m, "upper_excess_log": up, "lower_margin_log": low,
                        "single_path_identity_error": tight, "per_seed": per_seed,
                        "lower_term": [float((Zn**2 * np.log(m + 1) + np.log(1 / t.mu.min())) / m) for t in toys]}
    seeds = [t.seed for t in toys]
    exact = "exact enumeration of all |Z|^n paths, so no sampling error"
    return [
        C.over_seeds([C.at_most(
            "type_upper_bound", "Finite-sample type bound: P(Q_n = Q) ≤ exp(−m D(Q‖Q_1⊗P)) for every pair type of "
            "the state–action chain, D the conditional KL relative to the true pair kernel",
            measured=u, bound=1e-9, paper_value="log P + mD ≤ 0", kind="check", object="theory",
            source="inferred: Csiszár 1998's classical bound for Markov types, evaluated by exact enumeration; it "
                   "holds by construction (on deterministic types it is attained, so the maximum is 0), so it is a "
                   "check of our enumeration and divergence, not evidence for the abstract's finite-sample bounds",
            reason=f"{exact}; 1e-9 allows float round-off in the log-sum-exp only",
            note=f"max over all types of log P(Q) + mD, n={n} (m={m}), |Z|={Zn}") for u in up], seeds),
        C.over_seeds([C.at_least(
            "type_lower_bound", "Matching lower bound up to the polynomial term: log P(Q_n = Q) ≥ −mD − |Z|² log(m+1) "
            "− log(1/min μ)", measured=lo, bound=0.0, paper_value=None, kind="reconstruction", object="theory",
            source="inferred: the polynomial constant is ours (type counting); the abstract names bounds, not constants",
            reason=f"{exact}; a bound, so any negative margin is a failure",
            note="min over all types of log P − lower bound") for lo in low], seeds),
        C.over_seeds([C.at_most(
            "type_bound_exact_on_deterministic_types", "The bound's exponent is exact on types with one successor per "
            "pair (zero conditional entropy): log P(Q_n = Q) + mD(Q‖Q_1⊗P) = log Σ μ(z_1) over the possible "
            "starting pairs z_1", measured=t, bound=1e-9, kind="check", object="theory",
            source="inferred: such a type's paths are fixed by their start, so its class has one path per start "
                   "(Csiszár 1998's type-class count)",
            reason=f"{exact}; 1e-9 for float round-off",
            note="max over all such types; catches an error in the conditional KL of pair types that keeps the "
                 "upper bound valid (dropping the row marginal Q_1 lowers D by H(Q_1) and leaves both bound "
                 "claims holding; this claim then measures ≈ m log 2)") for t in tight],
            seeds),
    ]


def _deterministic_type_identity_error(N: np.ndarray, logp: np.ndarray, log_upper: np.ndarray,
                                       mu: np.ndarray) -> float:
    """Max |log P(Q) + mD − log Σ_{starts} μ| over enumerated types with one successor per pair.

    For such a type, every path is fixed by its start pair and has probability μ(z_1) Π P^N, while
    ``mD = −Σ N log P`` (each row's conditional law is a point mass). The start is the pair whose
    out-count exceeds its in-count by one; on a closed cycle every pair of the cycle can start.
    """
    det = np.all((N > 0).sum(axis=2) <= 1, axis=1)
    err = 0.0
    for k in np.flatnonzero(det):
        out, inn = N[k].sum(axis=1), N[k].sum(axis=0)
        starts = out - inn == 1
        if not starts.any():
            starts = out > 0
        err = max(err, abs(logp[k] - log_upper[k] - np.log(mu[starts].sum())))
    return float(err)


# ---------------------------------------------------------------------------- large deviations

def _ldp_one(cfg: Config, ctx: RunContext, toy: _Toy) -> dict:
    """Kernel and value LDP on one toy MDP: exact rates and importance-sampling exponents over ``ldp_m``."""
    T, pi = toy.T, toy.pi
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
    J0 = iid_kernel_tail_rate(T, pi, s_, a_, s1, x)    # control: the same event's rate without pair types
    rng = toy.rng(1)
    est, se_k = [], []
    for mm in cfg.ldp_m:
        lp, se = tail_probability_is(T, pi, s_, a_, s1, x, mm, cfg.ldp_paths, rng, tilted=tail)
        est.append(-lp / mm)
        se_k.append(se)
    V = policy_evaluation(T, toy.r, pi=toy.pi_e, gamma=cfg.gamma)[0]
    # the largest value any kernel on T's support reaches (the rate is +inf beyond it): every level
    # probed below, the secant probe included, stays under it
    room = _extreme_value_on_support(T > 0, toy.r, toy.pi_e, cfg.gamma, 0, None, True) - V[0]
    d1 = min(0.05 * (toy.r.max() - toy.r.min()) / (1 - cfg.gamma), 0.5 * room)
    I1 = value_rate(V[0] + d1, T, pi, toy.r, cfg.gamma, toy.pi_e, 0)[0]
    dv = d1 * np.sqrt(cfg.ldp_target_rate / I1)   # quadratic growth of I_V near V: one secant step
    dv = min(dv, 0.8 * room)
    I_v, T_star = value_rate(V[0] + dv, T, pi, toy.r, cfg.gamma, toy.pi_e, 0)
    I_v0 = value_rate(V[0] + dv, T, pi, toy.r, cfg.gamma, toy.pi_e, 0, structure="iid")[0]   # control
    est_v, se_v = [], []
    for mm in cfg.ldp_m:
        lp, se = value_tail_probability_is(V[0] + dv, T, pi, toy.r, cfg.gamma, toy.pi_e, 0, mm, cfg.ldp_paths,
                                           rng, T_star=T_star)
        est_v.append(-lp / mm)
        se_v.append(se)
    est, est_v = np.array(est), np.array(est_v)
    return {"threshold": x, "s_next": s1, "J": tail.rate, "J_iid": J0, "estimates": est.tolist(), "is_rel_se": se_k,
            "rel_error": (np.abs(est - tail.rate) / tail.rate).tolist(),
            "rel_error_iid": (np.abs(est - J0) / J0).tolist(),
            "value_level": float(V[0] + dv), "V": float(V[0]), "I_V": float(I_v), "I_V_iid": float(I_v0),
            "value_estimates": est_v.tolist(), "value_is_rel_se": se_v,
            "value_rel_error": (np.abs(est_v - I_v) / I_v).tolist(),
            "value_rel_error_iid": (np.abs(est_v - I_v0) / I_v0).tolist()}


#: tolerance on the extrapolated limit, in units of the claimed rate, fixed before the 1/m fit was first run:
#: the ±20% the system used before on the estimate at the largest m (set then from a prototype that measured
#: ≈10% there, prefactor included); on the limit, where the c/m prefactor is fitted out, it is looser than
#: that prefactor error, so it is no harder than before, and the control (below) carries the discrimination
LDP_TOL = 0.2
#: a toy is checkable only when its two rates are this many standard errors of the fitted limit apart
#: (|J − J_iid|/J ≥ 3 s.e.): otherwise the importance-sampling data cannot tell J from J_iid there
LDP_SEPARATION = 3.0


def _limit_fit(m_grid, est, rel_se) -> tuple[float, float, float, float]:
    """Weighted least-squares fit ``e_m = J∞ + c/m`` of one toy's importance-sampling exponents.

    Args:
        m_grid: the transition counts m (≥ 2 increasing ints).
        est: ``e_m = −(1/m) log P̂`` at each m (nats per transition).
        rel_se: relative standard error of each ``P̂``; the s.e. of ``e_m`` is ``rel_se/m`` (delta method).

    Returns:
        ``(J∞, se(J∞), c, birge)``: the intercept, its standard error from the weighted normal equations
        scaled by ``birge = sqrt(max(1, χ²/dof))`` (the residual scatter, when the 1/m model fits worse than
        the importance-sampling errors say; 1 when dof = 0), the slope c, and that factor.
    """
    m = np.asarray(m_grid, dtype=float)
    e = np.asarray(est, dtype=float)
    se = np.maximum(np.asarray(rel_se, dtype=float) / m, 1e-15)
    X = np.stack([np.ones_like(m), 1.0 / m], axis=1)
    w = 1.0 / se ** 2
    cov = np.linalg.inv(X.T @ (X * w[:, None]))
    beta = cov @ (X.T @ (w * e))
    dof = len(m) - 2
    chi2 = float(np.sum(w * (e - X @ beta) ** 2))
    birge = math.sqrt(max(1.0, chi2 / dof)) if dof > 0 else 1.0
    return float(beta[0]), float(math.sqrt(cov[0, 0]) * birge), float(beta[1]), birge


def _limit_contrast(m_grid, est, rel_se, rate, control, tol: float = None) -> dict:
    """One toy's test of "the exponents converge to ``rate``, not to ``control``" from the 1/m fit.

    ``q = (J∞ − rate)/rate`` with 95% interval ``q ± 1.96 s.e.`` (:func:`_limit_fit`); ``d0 = (control −
    rate)/rate`` is where the control puts the limit. The claim holds when the interval lies within ±tol and
    wholly on the claimed rate's side of the midpoint ``d0/2`` (so nearer ``rate`` than ``control``, and the
    control's ``d0`` excluded); it does not hold when the interval lies wholly beyond ±tol or wholly on the
    control's side of the midpoint (estimates converging to the control fail here). To keep one rule over toys,
    the measured number is ``u = (q − centre)/half_width`` of that allowed band ``[a, b]``, judged
    ``−1 ≤ u ≤ 1``. ``checkable`` is False when ``|d0| < LDP_SEPARATION · s.e.(q)``.

    Returns:
        dict with ``q, q_interval, d0, se_q, band, u, u_interval, checkable, c, birge``.

    Raises:
        ValueError: if ``rate`` is not positive.
    """
    tol = LDP_TOL if tol is None else tol
    if not rate > 0:
        raise ValueError(f"rate must be > 0 nats per transition, got {rate}")
    J_inf, se_J, c, birge = _limit_fit(m_grid, est, rel_se)
    q, se_q, d0 = (J_inf - rate) / rate, se_J / rate, (control - rate) / rate
    half = 1.96 * se_q
    a, b = (-tol, tol)
    if abs(d0) / 2 < tol:        # the midpoint to the control lies inside ±tol: it bounds the band there
        a, b = (d0 / 2, tol) if d0 < 0 else (-tol, d0 / 2)
    centre, width = 0.5 * (a + b), 0.5 * (b - a)
    return {"q": q, "q_interval": (q - half, q + half), "d0": d0, "se_q": se_q, "band": (a, b),
            "u": (q - centre) / width, "u_interval": ((q - half - centre) / width, (q + half - centre) / width),
            "checkable": bool(abs(d0) >= LDP_SEPARATION * se_q), "c": c, "birge": birge, "J_inf": J_inf}


#: the control of the LDP claims: the same event's rate without the Markov pair-type structure, against the
#: same importance-sampling estimates of the actual (Markov) plug-in estimator
_LDP_CONTROL = ("the i.i.d. (generative-model) rate of the same event, which removes the pair-type structure: "
                "visit counts fixed at their stationary share μ(s,a)·m and independent successors, rate "
                "Σ μ(s,a) KL(T'‖T) minimised over the same event; the 1/m-extrapolated limit of the same "
                "importance-sampling estimates of the Markov plug-in estimator must land nearer the pair-type "
                "rate than this rate (paired), on toys where the two rates are ≥ 3 s.e. of the limit apart")
_LIMIT = (f"weighted least-squares fit e_m = J∞ + c/m over the m grid (weights: importance-sampling s.e. of "
          f"−(1/m) log P̂ = relative s.e./m; s.e. scaled up by the Birge ratio when the 1/m model misfits); "
          f"q = (J∞ − rate)/rate with 95% interval q ± 1.96 s.e. Holds when the interval lies within "
          f"±{LDP_TOL:.0%} (the tolerance the system used before at the largest m, fixed before this fit was run; "
          f"on the limit the c/m prefactor is fitted out) AND wholly on the claimed rate's side of the midpoint "
          f"to the control's (J_iid − rate)/rate (so the control is excluded and the limit is nearer the claimed "
          f"rate); measured = position of q in that band in units of its half-width (−1..1), so one rule "
          f"serves all toys. Fitting the limit removes the finite-m prefactor that put every estimate above both "
          f"rates, which made the previous sign tests true by construction when J > J_iid")


def _large_deviations_match_rates(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """−(1/m) log P of rare plug-in kernel and value events against the variational rates J and I_V."""
    import matplotlib.pyplot as plt

    res = [_ldp_one(cfg, ctx, toy) for toy in ctx.track(toys, "LDP importance sampling")]
    T0, pi0 = toys[0].T, toys[0].pi
    Tp = _toy(toys[0].rng(2), cfg.n_states, cfg.n_actions)[0]
    j_b, j_c = kernel_rate(Tp, T0, pi0, "bellman"), kernel_rate(Tp, T0, pi0, "convex")
    metrics["ldp"] = {"m": cfg.ldp_m, "per_seed": res, "rate_bellman": j_b, "rate_convex": j_c}
    mL = cfg.ldp_m[-1]
    contrasts = [(_limit_contrast(cfg.ldp_m, r["estimates"], r["is_rel_se"], r["J"], r["J_iid"]),
                  _limit_contrast(cfg.ldp_m, r["value_estimates"], r["value_is_rel_se"], r["I_V"], r["I_V_iid"]))
                 for r in res]
    for r, (k, v) in zip(res, contrasts):
        r["limit_fit"] = {"kernel": k, "value": v}
    src_k = "abstract (large deviation principles for learned MDP dynamics)"
    src_v = "abstract (variational rate functions for plug-in value- and Q-function estimators)"

    def rates(key, key0, err, err0):
        return "; ".join(f"seed {t.seed}: rate {r[key]:.4f}, control {r[key0]:.4f}, relative error at m={mL} "
                         f"{r[err][-1]:.3f} (control {r[err0][-1]:.3f})" for r, t in zip(res, toys))

    def pooled(cid, statement, which, source, reason, paper_value=None, note=""):
        """The per-toy limit tests of one claim, pooled over the checkable toys by over_seeds."""
        idx = 0 if which == "kernel" else 1
        fits = [c[idx] for c in contrasts]
        per_toy = "; ".join(f"seed {t.seed}: J∞/rate − 1 = {f['q']:+.3f} [{f['q_interval'][0]:+.3f}, "
                            f"{f['q_interval'][1]:+.3f}], control at {f['d0']:+.3f}, s.e. {f['se_q']:.3f}, band "
                            f"[{f['band'][0]:+.3f}, {f['band'][1]:+.3f}]"
                            + ("" if f["checkable"] else " (not checkable: rates < 3 s.e. apart)")
                            for f, t in zip(fits, toys))
        keep = [(f, t.seed) for f, t in zip(fits, toys) if f["checkable"]]
        note = (note + ". " if note else "") + "Limit fits: " + per_toy
        common = dict(kind="paper", object="theory", control=_LDP_CONTROL, source=source)
        if not keep:
            return C.not_checkable(cid, statement, paper_value=paper_value, reason="on no toy are the pair-type "
                                   "rate and the control's ≥ 3 s.e. of the fitted limit apart, so the data cannot "
                                   "tell them apart", full_scale="more importance-sampling paths (ldp_paths) and a "
                                   "longer m grid shrink the s.e. of the limit", note=note, **common)
        skipped = [t.seed for f, t in zip(fits, toys) if not f["checkable"]]
        if skipped:
            note += f". Toys {skipped} not checkable (rates < {LDP_SEPARATION:g} s.e. of the limit apart): left out"
        return C.over_seeds([C.within(cid, statement, measured=f["u"], low=-1.0, high=1.0, interval=f["u_interval"],
                                      paper_value=paper_value, reason=reason, note=note, **common)
                             for f, _ in keep], [sd for _, sd in keep])

    claims = [
        pooled("ldp_rate_largest_m", "LDP for learned dynamics: −(1/m) log P(T̂(s'|s,a) ≥ x) tends to the variational "
               "rate J = inf{D(Q‖Q_1⊗P): Q balanced, Q(s'|s,a) ≥ x}, not the rate without pair types: the 1/m "
               f"extrapolated limit J∞ of the estimates lies within ±{LDP_TOL:.0%} of J and nearer J than J_iid",
               "kernel", src_k, _LIMIT, paper_value="rate function = variational formula",
               note=f"importance-sampling relative s.e. ≤ {max(max(q['is_rel_se']) for q in res):.3f}; m grid "
                    f"{cfg.ldp_m}; per-seed relative errors to J {[[round(e, 4) for e in q['rel_error']] for q in res]}, "
                    f"to the control {[[round(e, 4) for e in q['rel_error_iid']] for q in res]} (the convergence "
                    "claim, 'the finite-m exponent converges to J', is the same limit test: one claim, not two)"),
        pooled("ldp_value_rate_largest_m", "Variational rate function of the plug-in value estimator: −(1/m) log "
               "P(V̂(s0) ≥ v) tends to I_V(v) = inf{J(T') : V^{π_e}(T')(s0) ≥ v}, not the rate without pair types: "
               f"the 1/m extrapolated limit lies within ±{LDP_TOL:.0%} of I_V and nearer I_V than I_V,iid",
               "value", src_v, _LIMIT + "; the level v is chosen so that I_V ≈ J",
               paper_value="rate = variational formula",
               note="I_V and its control found by a local solve (SLSQP), so a non-global minimum would show up as a "
                    "limit below I_V; per-seed relative errors to I_V "
                    f"{[[round(e, 4) for e in q['value_rel_error']] for q in res]}, to the control "
                    f"{[[round(e, 4) for e in q['value_rel_error_iid']] for q in res]}"),
        C.close("rate_two_solvers_agree", "The kernel rate J(T') from the per-state soft-Bellman solver equals the "
                "joint convex program's", measured=j_b, target=j_c, abs_tol=1e-5 + 1e-4 * abs(j_c), kind="check", object="theory",
                source="inferred: two independent solvers of the same convex program",
                reason="interior-point solver tolerance ≈ 1e-6 relative; 1e-4 relative leaves room for its "
                       "stopping rule, while a wrong rate formula moves J by O(1) relative",
                note=f"seed {toys[0].seed}: Bellman {j_b:.6g}, convex {j_c:.6g}"),
    ]
    for c, what in zip(claims[:2], (("J", "J_iid", "rel_error", "rel_error_iid"),
                                    ("I_V", "I_V_iid", "value_rel_error", "value_rel_error_iid"))):
        c.note = (c.note.rstrip(". ") + ". Rates: " + rates(*what) + ".").strip()
    r0 = res[0]
    fig, ax = plt.subplots(figsize=(6.5, 4), constrained_layout=True)
    ax.plot(cfg.ldp_m, r0["estimates"], "o-", color="C0", label=f"kernel: T̂({r0['s_next']}|s0,a0) ≥ {r0['threshold']:.2f}")
    ax.axhline(r0["J"], color="C0", ls="--", label="J (kernel rate)")
    ax.axhline(r0["J_iid"], color="C0", ls=(0, (1, 3)), lw=1, label="control: kernel rate without pair types")
    ax.plot(cfg.ldp_m, r0["value_estimates"], "s-", color="C1", label=f"value: V̂(s0) ≥ {r0['value_level']:.2f}")
    ax.axhline(r0["I_V"], color="C1", ls=":", label="I_V (variational rate)")
    ax.axhline(r0["I_V_iid"], color="C1", ls=(0, (1, 3)), lw=1, label="control: value rate without pair types")
    ax.set_xscale("log")
    ax.set_xlabel("transitions m")
    ax.set_ylabel("−(1/m) log P̂ (importance sampling)")
    ax.set_title(f"Large deviations of learned dynamics and values (seed {toys[0].seed})")
    ax.legend(fontsize=8, loc="upper right")
    ctx.save_figure("ldp_kernel", fig, caption=(
        "Finite-m exponents −(1/m) log P of a rare plug-in kernel event (blue) and a rare plug-in value event "
        "(orange), estimated by importance sampling. The abstract's LDPs predict each curve approaches its "
        "dashed line (the variational rate) as m grows, not its sparsely dotted control line (the same event's "
        "rate without the pair-type structure)."))
    return claims


# ---------------------------------------------------------------------------- KL set coverage

def _kl_set_covers_the_truth(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """Coverage of U_n(δ) at the type-counting radius r_n, the calibrated radius, and a coverage that can fail.

    The type-counting radius is conservative (coverage ≈ 1), so its coverage claim has no power
    against a too-large radius. The likelihood-ratio statistic ``2 m Σ Q̂_1 KL(T̂‖T)`` is
    asymptotically χ² with ``S·A·(S−1)`` degrees of freedom (Wilks 1938), so the radius
    ``χ²_{1−δ}/(2m)`` should cover with probability ≈ 1 − δ — a coverage that fails if the
    statistic is wrong.
    """
    S, A = cfg.n_states, cfg.n_actions
    Zn, df = S * A, S * A * (S - 1)
    out, typ, wil, power = [], [], [], []
    for toy in ctx.track(toys, "coverage"):
        rng = toy.rng(3)
        T_alt = toy.T.copy()   # alternative for the power check: move 0.15 of mass in row (0, 0)
        s1 = int(np.argmin(toy.T[0, 0]))
        shift = min(0.15, T_alt[0, 0, s1])
        T_alt[0, 0, s1] -= shift
        T_alt[0, 0, (s1 + 1) % S] += shift
        rows = []
        for mm in cfg.coverage_m:
            path = sample_pair_chain(toy.P, mm + 1, rng, n_chains=cfg.coverage_reps)
            Nc = counts_from_pair_counts(pair_counts(path, Zn), S, A)
            stat = np.array([np.sum(Ni.sum(axis=2) / mm * set_statistic(Ni, toy.T)) for Ni in Nc])
            r_n = kl_radius(mm, Zn, cfg.delta)
            r_wilks = stats.chi2.ppf(1 - cfg.delta, df) / (2 * mm)
            rows.append({"m": mm, "r_n": r_n, "calibrated_radius": float(np.quantile(stat, 1 - cfg.delta)),
                         "wilks_radius": float(r_wilks), "covered_r_n": int(np.sum(stat <= r_n)),
                         "covered_wilks": int(np.sum(stat <= r_wilks)), "reps": len(stat),
                         "power_vs_shift_0p15": float(np.mean([kl_test(Ni, T_alt, cfg.delta).reject for Ni in Nc]))})
        out.append(rows)
        k = sum(r["covered_r_n"] for r in rows), sum(r["reps"] for r in rows)
        q_ratio = max(r["calibrated_radius"] / r["r_n"] for r in rows)
        typ.append(C.at_most(
            "kl_set_coverage", "The type-counting radius r_n = [log(1/δ) + |Z|² log(m+1)]/m is a valid finite-sample "
            "radius for the KL set U_n(δ) = {T': Σ Q̂_1 KL(T̂‖T') ≤ r_n}: the (1 − δ)-quantile of the statistic at the "
            "true kernel, divided by r_n, is at most 1 (largest over the m grid). This measures how much of r_n the "
            "coverage uses; a value far below 1 means r_n is conservative", measured=q_ratio, bound=1.0,
            domain=(0, math.inf), paper_value=f"coverage ≥ {1 - cfg.delta}", kind="reconstruction", object="theory",
            source="abstract: 'finite-sample uncertainty-quantification guarantees based on KL uncertainty sets'; "
                   "the radius r_n (type counting) is ours, the abstract gives none",
            reason=f"the quantile of {k[1]} replicates (per m) below r_n is the guarantee P(covered) ≥ 1 − δ; the "
                   "Monte Carlo error of a 95% quantile over 1000 replicates is a few % of it",
            note=f"coverage at r_n: {k[0]} of {k[1]} replicates"))
        kw = sum(r["covered_wilks"] for r in rows)
        wil.append(C.close(
            "kl_coverage_at_calibrated_radius", "At the asymptotically calibrated radius χ²_{S·A·(S−1), 1−δ}/(2m) the "
            "same statistic covers the truth with probability 1 − δ", measured=kw / k[1], target=1 - cfg.delta,
            abs_tol=0.03, interval=C.proportion_interval(kw, k[1])[1], kind="check", object="theory", domain=(0, 1),
            source="inferred: Wilks (1938), 2m·Σ Q̂_1 KL(T̂‖T) is asymptotically χ² with S·A·(S−1) degrees of freedom",
            reason="±0.03: finite-m departure of a likelihood-ratio statistic from its χ² limit at ≥ 50 visits per "
                   "pair, plus the Clopper–Pearson interval (±0.014 at 1000 replicates)"))
        power.append([r["power_vs_shift_0p15"] for r in rows])
    seeds = [t.seed for t in toys]
    ratio = [[r["r_n"] / r["calibrated_radius"] for r in rows] for rows in out]
    metrics["coverage"] = {"m": cfg.coverage_m, "per_seed": out, "r_n_over_calibrated": ratio, "test_power": power}
    loose = f"{min(map(min, ratio)):.0f}–{max(map(max, ratio)):.0f}"
    c1 = C.over_seeds(typ, seeds)
    c1.note = (c1.note + f" r_n is {loose}× the radius calibrated to exactly 1 − δ (the empirical {1 - cfg.delta:.0%} "
               "quantile of the statistic; per m and seed in the metrics), so the guarantee holds with a wide margin "
               "and this claim fails only for a statistic that many times too large; the calibrated-radius claim "
               "below is the sensitive one. The universal test's power against a 0.15 shift in one row: "
               f"{power}").strip()
    return [c1, C.over_seeds(wil, seeds)]


# ---------------------------------------------------------------------------- pessimism

def _pessimistic_values_are_valid(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """V_low ≤ V_true over replicates, the gap's slope against √r_n, and baseline widths (first seed)."""
    import matplotlib.pyplot as plt

    S, A, Zn, s0 = cfg.n_states, cfg.n_actions, cfg.n_states * cfg.n_actions, 0
    radii = [kl_radius(mm, Zn, cfg.delta) for mm in cfg.pess_m]
    per_seed, baseline = [], {}
    for toy in ctx.track(toys, "pessimism"):
        rng = toy.rng(4)
        V_true = policy_evaluation(toy.T, toy.r, pi=toy.pi_e, gamma=cfg.gamma)[0]
        below, below_cal, gaps = [], [], []
        for k, mm in enumerate(cfg.pess_m):
            path = sample_pair_chain(toy.P, mm + 1, rng, n_chains=cfg.pess_reps)
            Nc = counts_from_pair_counts(pair_counts(path, Zn), S, A)
            # all replicates in one batched solve (the same numbers as pessimistic_values per replicate)
            V_low = pessimistic_values_batch(Nc, toy.r, gamma=cfg.gamma, pi_eval=toy.pi_e, delta=cfg.delta)[:, s0]
            below.append(int(np.sum(V_low <= V_true[s0] + 1e-12)))
            # the same sets shrunk to the calibrated (Wilks) radius χ²_{df,1−δ}/(2m): value coverage can fail there
            shrink = stats.chi2.ppf(1 - cfg.delta, S * A * (S - 1)) / (2 * mm) / radii[k]
            eps_cal = np.stack([shrink * set_radii(Ni, cfg.delta, "kl", "pair_types") for Ni in Nc])
            V_cal = pessimistic_values_batch(Nc, toy.r, gamma=cfg.gamma, pi_eval=toy.pi_e, eps=eps_cal)[:, s0]
            below_cal.append(int(np.sum(V_cal <= V_true[s0] + 1e-12)))
            gaps.append(float(np.mean(V_true[s0] - V_low)))
            if k == 0 and toy is toys[0]:
                baseline = _baselines(Nc, toy.T, toy.r, toy.pi_e, cfg, V_true[s0], s0, toy.rng(7))
        slope = float(np.polyfit(np.log(np.sqrt(radii)), np.log(gaps), 1)[0])
        local = (np.diff(np.log(gaps)) / np.diff(np.log(np.sqrt(radii)))).tolist()   # between grid neighbours
        per_seed.append({"seed": toy.seed, "below": below, "below_calibrated": below_cal, "mean_gap": gaps, "slope": slope, "local_slopes": local,
                         "V_true_s0": float(V_true[s0])})
    metrics["pessimism"] = {"m": cfg.pess_m, "r_n": radii, "reps": cfg.pess_reps, "per_seed": per_seed,
                            "baselines_first_seed": baseline}
    seeds = [t.seed for t in toys]
    n_rep = cfg.pess_reps * len(cfg.pess_m)
    valid = [C.at_least(
        "pessimism_valid", "Pessimistic value estimation: V_low = min over the KL set of V^{π_e}(T') lies below "
        "the true V^{π_e}(T) with probability ≥ 1 − δ, with the set at the calibrated radius χ²_{S·A·(S−1), 1−δ}/(2m) "
        "(where the set itself covers with probability ≈ 1 − δ, so a V_low that is too high shows)",
        measured=sum(p["below_calibrated"]) / n_rep, bound=1 - cfg.delta, domain=(0, 1),
        interval=C.proportion_interval(sum(p["below_calibrated"]), n_rep)[1], paper_value=f"≥ {1 - cfg.delta}",
        kind="reconstruction", object="theory",
        source="abstract: 'applications to pessimistic value and Q-function estimation'; the calibrated radius "
               "(Wilks 1938) and the rectangular relaxation are ours",
        reason=f"fraction of {n_rep} replicates (all m) per drawn MDP; over the drawn MDPs the Student-t interval "
               "of the mean must lie above 1 − δ",
        note=f"rectangular relaxation of the joint KL set (a superset, so more conservative). At the type-counting "
             f"radius r_n (≈ 20× the calibrated one) V_low ≤ V_true in {sum(p['below'])} of {n_rep} replicates, a "
             "coverage that cannot fail for any plausible error; that is why the verdict is taken at the calibrated "
             "radius, where a V_low too high by about √20 ≈ 4.5 times less already fails. Even there the value is "
             "covered more often than 1 − δ: one value is a single direction of the set, and the per-pair "
             "(rectangular) set is larger than the joint one, so a measured fraction near 1 is expected") for p in per_seed]
    slopes = [C.within(
        "pessimism_gap_sqrt_radius", "The pessimism gap V_true − V_low shrinks like √r_n (log-log slope 1)",
        measured=p["slope"], low=0.8, high=1.2, paper_value=None, kind="reconstruction", object="theory",
        source="inferred: first-order expansion of the KL worst case, q·v − √(2ε Var_q v), gives slope 1; the "
               "abstract states no rate",
        reason="±0.2 for the curvature of the worst case at the largest radius; each seed's slope is a fit to "
               "mean gaps whose sampling error is O(1/√m)") for p in per_seed]
    c_slope = C.over_seeds(slopes, seeds)
    c_slope.note = (c_slope.note + " Per-seed local slopes between grid neighbours: "
                    + "; ".join(f"seed {p['seed']}: {[round(x, 2) for x in p['local_slopes']]}" for p in per_seed)
                    + ". The slope is pre-asymptotic on this grid and depends on the drawn MDP (a kernel with "
                    "entries ≈ 0.03 saturates the worst case at large radii); the full configuration adds m = "
                    "128000 and more seeds.")
    p0 = per_seed[0]
    fig, axs = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for j, p in enumerate(per_seed):
        axs[0].loglog(np.sqrt(radii), p["mean_gap"], "o-", color=f"C{j}", label=f"seed {p['seed']} (slope {p['slope']:.2f})")
    axs[0].loglog(np.sqrt(radii), p0["mean_gap"][0] * np.sqrt(radii) / np.sqrt(radii[0]), "k:", label="∝ √r_n")
    axs[0].set_xlabel("√r_n")
    axs[0].set_ylabel("mean V_true − V_low")
    axs[0].set_title("pessimism gap")
    axs[0].legend(fontsize=7, loc="upper left")
    names = list(baseline["width_nominal"])
    xs_ = np.arange(len(names))
    axs[1].bar(xs_ - 0.2, [baseline["width_nominal"][k] for k in names], 0.4, label="nominal radius")
    axs[1].bar(xs_ + 0.2, [baseline["width_equal_coverage"].get(k, np.nan) for k in names], 0.4,
               label="equal (95%) set coverage")
    axs[1].set_xticks(xs_, names, rotation=25, ha="right", fontsize=7)
    axs[1].set_ylabel("mean V̂ − V_low")
    axs[1].set_title(f"interval widths, m={cfg.pess_m[0]}, seed {toys[0].seed}")
    axs[1].legend(fontsize=7)
    ctx.save_figure("pessimism", fig, caption=(
        "Left: mean gap between the true value and the pessimistic value against √r_n, one line per toy MDP; "
        "a first-order expansion of the KL worst case predicts slope 1 (dotted). Right: widths V̂ − V_low of the "
        "KL, L1, Hoeffding and bootstrap lower bounds at their nominal radius and at radii rescaled to equal 95% "
        "set coverage."))
    return [C.over_seeds(valid, seeds), c_slope]


# ---------------------------------------------------------------------------- coding exponent

def _coding_exponent_shape(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """E(R) = 0 below the entropy rate; positive, increasing and convex above it."""
    import matplotlib.pyplot as plt

    zero, shape, per_seed = [], [], []
    Zn = cfg.n_states * cfg.n_actions
    for toy in ctx.track(toys, "coding exponent"):
        H = entropy_rate(toy.P, toy.mu)
        k = cfg.coding_rates // 2
        below_R = np.linspace(0.0, H, k)
        # between H and log|Z| in proportion: a near-uniform chain leaves less than 0.02 nats of room there
        above_R = H + (np.log(Zn) - H) * np.linspace(0.05, 0.98, cfg.coding_rates - k)
        E_below, E_above = coding_error_exponent(toy.P, below_R), coding_error_exponent(toy.P, above_R)
        d1, d2 = np.diff(E_above), np.diff(E_above, 2)
        per_seed.append({"H": H, "R": np.r_[below_R, above_R].tolist(), "E": np.r_[E_below, E_above].tolist()})
        zero.append(C.at_most(
            "coding_zero_below_entropy", "Coding error exponent E(R) = 0 for every rate R ≤ H(P), the entropy rate",
            measured=float(np.max(np.abs(E_below))), bound=1e-6, paper_value=0.0, kind="check", object="theory", domain=(0, math.inf),
            source="inferred: E(R) = 0 below H follows from the formula we implement (the form of E(R) is Davisson, "
                   "Longo & Sgarro 1981's); the abstract names explicit coding error exponents",
            reason="±1e-6 is the interior-point solver's tolerance", note=f"H(P) = {H:.4f} nats"))
        shape.append(C.check(
            "coding_positive_increasing_convex", "Above the entropy rate E(R) is positive, increasing and convex",
            measured={"min_E": float(E_above.min()), "min_dE": float(d1.min()), "min_d2E": float(d2.min())},
            holds=bool(E_above.min() > 1e-6 and d1.min() > 0 and d2.min() >= -1e-6), kind="check", object="theory",
            source="inferred: E(R) is a convex program's value, convex and increasing in R (Csiszár 1998)",
            tolerance="min E > 1e-6, all first differences > 0, all second differences ≥ −1e-6 (uniform R grid)",
            reason="solver tolerance 1e-6 on second differences; a uniform grid makes second differences a "
                   "convexity test"))
    metrics["coding"] = {"per_seed": per_seed}
    fig, ax = plt.subplots(figsize=(6, 4), constrained_layout=True)
    for j, p in enumerate(per_seed):
        ax.plot(p["R"], p["E"], "o-", ms=3, color=f"C{j}", label=f"seed {toys[j].seed}")
        ax.axvline(p["H"], color=f"C{j}", ls="--", lw=0.8)
    ax.set_xlabel("rate R (nats / step)")
    ax.set_ylabel("E(R)")
    ax.set_title("Universal coding error exponent (dashed: entropy rates)")
    ax.legend(fontsize=8, loc="upper left")
    ctx.save_figure("coding_exponent", fig, caption=(
        "Error exponent E(R) of a universal fixed-rate code for the state–action chain, one curve per toy MDP. "
        "The exponent is 0 up to the chain's entropy rate (dashed) and positive, increasing and convex above it."))
    seeds = [t.seed for t in toys]
    return [C.over_seeds(zero, seeds), C.over_seeds(shape, seeds)]


# ---------------------------------------------------------------------------- offline RL on FrozenLake

def _offline_rl_on_frozenlake(cfg: Config, ctx: RunContext, toys: list[_Toy], metrics: dict) -> list:
    """Pessimistic values and policies from logged FrozenLake 8×8 data (independent logs as seeds)."""
    import matplotlib.pyplot as plt

    fl = _offline_section("FrozenLake-v1", {"map_name": "8x8"}, cfg.frozenlake_steps, cfg.frozenlake_datasets,
                          cfg.frozenlake_gamma, cfg.delta, ctx)
    maps = fl.pop("maps")
    metrics["frozenlake"] = fl
    fig, axs = plt.subplots(1, 2, figsize=(8, 3.8), constrained_layout=True)
    vmax = float(np.max(maps["V_true"]))
    for ax, key, title in ((axs[0], "V_true", "true V of π* (γ=%.2f)" % cfg.frozenlake_gamma),
                           (axs[1], "V_low", "pessimistic V_low, first log")):
        im = ax.imshow(np.asarray(maps[key]).reshape(8, 8), vmin=0, vmax=vmax, cmap="viridis")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axs, shrink=0.8)
    ctx.save_figure("frozenlake_values", fig, caption=(
        "FrozenLake 8×8: true values of the optimal policy (left) and the pessimistic lower bound from one log "
        f"of {cfg.frozenlake_steps} transitions (right, same colour scale). Pessimism predicts the right map "
        "below the left one everywhere."))
    n = cfg.frozenlake_datasets
    k = int(round(fl["fraction_below"] * n))
    claims = [C.at_least(
        "frozenlake_pessimism_valid", "Offline RL on FrozenLake 8×8 logged data: the pessimistic value of the "
        "evaluated policy at the start state lies below its true value with probability ≥ 1 − δ",
        measured=k / n, bound=1 - cfg.delta, interval=C.proportion_interval(k, n)[1], paper_value="V_low ≤ V_true",
        domain=(0, 1),
        kind="reconstruction", object="theory", source="inferred: the per-pair radius used here (the joint radius is vacuous at "
        "|Z| = 256) is ours",
        reason=f"Clopper–Pearson 95% interval over {n} independent logs must lie above 1 − δ; a handful of logs "
               "cannot establish a 95% guarantee, so all-held reads inconclusive at quick scale",
        note=f"V_true={fl['V_true']:.4f}, V_low={[round(v, 4) for v in fl['V_low']]} (V_low/V_true = "
             f"{[round(v / fl['V_true'], 3) for v in fl['V_low']]}: valid but loose). Library's vacuous flag "
             f"(V_low within 0.1% of r_min/(1−γ)): per-pair radius {fl['per_pair_vacuous']}, pair-types radius "
             f"(|Z|²={fl['n_pairs'] ** 2}) {fl['pair_types_vacuous']}.")]
    diff = np.array(fl["true_value_pessimistic_policy"]) - np.array(fl["true_value_plugin_policy"])
    shortfall = max((fl["V_star"] - v) / fl["V_star"]
                    for v in fl["true_value_pessimistic_policy"] + fl["true_value_plugin_policy"])
    mean, iv = C.mean_interval(diff)
    claims.append(C.at_least(
        "frozenlake_pessimistic_policy", "The pessimistic policy's true value is not worse than the plug-in "
        "greedy policy's", measured=mean, bound=0.0, interval=iv, paper_value=None, kind="reconstruction", object="theory",
        source="inferred: the usual motivation for pessimism in offline RL; the abstract gives no policy comparison",
        reason=f"Student-t 95% interval over {n} independent logs of true V(pessimistic) − true V(plug-in greedy)",
        note=f"true V* = {fl['V_star']:.4f}; per-log differences {[round(float(d), 4) for d in diff]}; both policies "
             f"are within {100 * shortfall:.2f}% of V* at {cfg.frozenlake_steps} steps, so the difference sits at "
             "noise level here; pessimism matters more with less data."))
    if cfg.include_taxi:
        metrics["taxi"] = taxi = _offline_section("Taxi-v4", {}, cfg.frozenlake_steps, cfg.frozenlake_datasets,
                                                  cfg.frozenlake_gamma, cfg.delta, ctx)
        taxi.pop("maps")
    return claims


def _baselines(Nc, T, r, pi_e, cfg, v_true, s0, rng) -> dict:
    """Nominal and equal-coverage widths V̂ − V_low of the KL, L1, Hoeffding sets and the bootstrap."""
    S, A, _ = T.shape
    kinds = {"KL pair-types": ("kl", "pair_types"), "KL per-pair": ("kl", "per_pair"),
             "L1 (Weissman)": ("l1", "pair_types"), "Hoeffding": ("hoeffding", "pair_types")}
    V_hat = np.array([policy_evaluation(np.where(plug_in_kernel(Ni)[1][:, :, None], plug_in_kernel(Ni)[0], T),
                                        r, pi=pi_e, gamma=cfg.gamma)[0][s0] for Ni in Nc])
    nominal, equal, cov_nominal, set_cov, mult = {}, {}, {}, {}, {}
    for name, (kind, rad) in kinds.items():
        eps = [set_radii(Ni, cfg.delta, kind, rad) for Ni in Nc]
        need = np.array([np.max(set_statistic(Ni, T, kind) / e) for Ni, e in zip(Nc, eps)])
        c_star = float(np.quantile(need, 1 - cfg.delta))
        lows = pessimistic_values_batch(Nc, r, gamma=cfg.gamma, pi_eval=pi_e, kind=kind, eps=np.stack(eps))[:, s0]
        lows_eq = pessimistic_values_batch(Nc, r, gamma=cfg.gamma, pi_eval=pi_e, kind=kind,
                                           eps=c_star * np.stack(eps))[:, s0]
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
    V_true = policy_evaluation(mdp.T, mdp.r, pi=pi_star, gamma=gamma)[0]
    s0 = int(np.argmax(mdp.initial))
    support = mdp.T > 0
    lows, pess_true, plug_true, vac, vac_pp, rate_hat = [], [], [], [], [], []
    for k in ctx.track(range(n_sets), f"{env_id} logs"):
        data = log_episodes(env_id, behaviour, n_steps, seed=int(ctx.child_rng(100 + k).integers(2**31)), **make_kwargs)
        N = transition_counts(data, S, A)
        res = pessimistic_values(N, mdp.R, gamma=gamma, pi_eval=pi_star, delta=delta, radius="per_pair",
                                 support=support, r_range=mdp.r_range)
        lows.append(float(res.V[s0]))
        vac_pp.append(bool(res.vacuous[s0]))
        ctl = pessimistic_values(N, mdp.R, gamma=gamma, pi_eval=None, delta=delta, radius="per_pair", support=support,
                                 r_range=mdp.r_range)
        pess_true.append(float(policy_evaluation(mdp.T, mdp.r, pi=ctl.policy, gamma=gamma)[0][s0]))
        T_hat, vis = plug_in_kernel(N)
        T_plug = np.where(vis[:, :, None], T_hat, support / support.sum(axis=2, keepdims=True))
        Q_plug = optimal_values(T_plug, (T_plug * mdp.R).sum(axis=2), gamma)[1]
        plug_true.append(float(policy_evaluation(mdp.T, mdp.r, pi=greedy_policy(Q_plug), gamma=gamma)[0][s0]))
        vac.append(bool(pessimistic_values(N, mdp.R, gamma=gamma, pi_eval=pi_star, delta=delta, radius="pair_types",
                                           support=support, r_range=mdp.r_range).vacuous[s0]))
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
