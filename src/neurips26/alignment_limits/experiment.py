"""Reproduction of paper 5 (KL-regularised alignment limits) at laptop scale.

Two tasks: a synthetic categorical "policy" (K outcomes, pi0 = softmax of N(0, s^2) logits,
r ~ N(0, 1): the research brief's setup) and a real-data task from scikit-learn's digits (base
policy uniform over the images, true reward = a classifier's log-probability of a target class,
proxies from classifiers fit on small bootstraps). Every claim is checked in code; see
``run`` for the list. The LM experiments of the paper (safety, summarisation; PPO/GRPO/BoN on
real LMs) are not checkable here; the full configuration (``lm_experiment=True``) substitutes the
same measurement on a small locally trained GPT-2 (:mod:`.lm_task`; our own trainers, trl is not
installed).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C

from .best_of_n import best_of_n
from .digits_task import build_digits_task
from .estimator import estimate_frontier
from .frontier import (
    jeffreys_divergence, max_attainable_kl, max_reward_gain, sqrt_kl_approximation, tilted_frontier,
    tilted_policy,
)
from .proxy import effective_ensemble_size, ensemble_reward, proxy_gap
from .trainers import train_policy
from .validation import BudgetExceedsMaximumWarning


class Config(ExperimentConfig):
    """Settings of the alignment-limits reproduction (quick = CPU minutes; full = larger toy)."""

    n_outcomes: int = Field(2000, ge=10, description="K, outcomes of the synthetic policy")
    logit_scale: float = Field(1.5, gt=0, description="std of the synthetic base logits")
    n_identity_betas: int = Field(40, ge=2, description="betas in [0.05, 10] for the Jeffreys identity")
    cvx_outcomes: int = Field(200, ge=5, description="K of the instance solved by cvxpy")
    cvx_budgets: list[float] = Field([0.05, 0.5, 2.0], min_length=1, description="KL budgets (nats) checked against cvxpy")
    n_random_policies: int = Field(500, ge=10, description="random feasible policies that must not beat the limit")
    random_budget: float = Field(0.5, gt=0, description="KL budget (nats) of the random-policy check")
    estimator_samples: int = Field(10_000, ge=100, description="N base samples for the estimator check")
    estimator_small_samples: int = Field(100, ge=10, description="small N whose bias is reported")
    estimator_repeats: int = Field(40, ge=5, description="independent repeats of the estimator")
    estimator_betas: list[float] = Field([1.0, 0.5, 0.25], min_length=1, description="betas of the estimator check")
    bon_ns: list[int] = Field([1, 2, 4, 8, 16, 32, 64, 128, 256], min_length=2, description="best-of-N sizes")
    bon_min_efficiency: float = Field(0.85, gt=0, le=1, description="brief's threshold: BoN gain / frontier gain")
    proxy_sigma: float = Field(1.0, gt=0, description="std of the synthetic proxy errors")
    proxy_betas: list[float] = Field([0.5, 0.25, 0.1], min_length=2, description="betas (in reward-std units) of the proxy-gap check")
    ensemble_sizes: list[int] = Field([1, 4, 16], min_length=2, description="ensemble sizes M (synthetic)")
    proxy_seeds: int = Field(100, ge=5, description="error draws averaged per (beta, M), synthetic")
    proxy_error_scales: list[float] = Field([0.25, 0.5, 1.0, 2.0], min_length=2,
                                            description="multiples of proxy_sigma for the gap-vs-error-size check")
    train_beta: float = Field(0.5, gt=0, description="KL penalty of the toy trainers")
    train_steps: int = Field(1000, ge=10, description="steps of each toy trainer")
    train_batch: int = Field(64, ge=8, description="batch size of the toy trainers")
    train_lr: float = Field(0.05, gt=0, description="Adam learning rate of the toy trainers")
    substantial_margin: float = Field(0.05, ge=0, description="efficiency margin counted as 'substantially suboptimal'")
    digits_proxies: int = Field(16, ge=2, description="bootstrap proxy reward models on digits")
    digits_train_size: int = Field(150, ge=20, description="images per bootstrap proxy fit")
    digits_target: int = Field(3, ge=0, le=9, description="target digit class")
    digits_ensemble_sizes: list[int] = Field([1, 2, 4, 8], min_length=2, description="ensemble sizes M (digits)")
    lm_experiment: bool = Field(False, description="measure best-of-N and KL-penalised PG on a small locally trained LM")
    lm_vocab: int = Field(8, ge=2, description="tokens of the tiny LM (BOS excluded)")
    lm_length: int = Field(8, ge=1, description="tokens per sequence of the tiny LM")
    lm_pretrain_steps: int = Field(300, ge=1, description="pretraining steps of the tiny LM")
    lm_base_samples: int = Field(4000, ge=20, description="base-policy samples (frontier estimate, best-of-N)")
    lm_eval_samples: int = Field(2000, ge=10, description="samples per trained policy (Monte Carlo KL and gain)")
    lm_bon_ns: list[int] = Field([1, 2, 4, 8, 16, 32], min_length=2, description="best-of-N sizes on the LM")
    lm_pg_betas: list[float] = Field([1.0, 0.3], min_length=1, description="KL penalties (x sd(r)) of the LM PG runs")
    lm_pg_steps: int = Field(200, ge=1, description="PG steps per (method, beta) on the LM")
    lm_pg_batch: int = Field(64, ge=8, description="sequences per PG step (multiple of 8)")
    lm_pg_lr: float = Field(1e-3, gt=0, description="Adam learning rate of the LM PG runs")

    @field_validator("bon_ns")
    @classmethod
    def _bon_ns(cls, v: list[int]) -> list[int]:
        if v[0] != 1 or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("must start at 1 (N = 1 is the base policy) and be strictly increasing")
        return v

    @field_validator("ensemble_sizes", "digits_ensemble_sizes")
    @classmethod
    def _sizes(cls, v: list[int], info: ValidationInfo) -> list[int]:
        if v[0] < 1 or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("must be strictly increasing ensemble sizes >= 1 (the gap is compared along M)")
        n = info.data.get("digits_proxies")
        if info.field_name == "digits_ensemble_sizes" and n is not None and v[-1] > n:
            raise ValueError(f"must be <= digits_proxies = {n} (each ensemble is a group of the fitted proxies)")
        return v

    @field_validator("proxy_betas")
    @classmethod
    def _proxy_betas(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(b) and b > 0 for b in v) or any(b >= a for a, b in zip(v, v[1:])):
            raise ValueError("must be finite, > 0 and strictly decreasing (the claim follows the gap as beta falls)")
        return v

    @field_validator("proxy_error_scales")
    @classmethod
    def _error_scales(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(c) and c > 0 for c in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("must be finite, > 0 and strictly increasing (the claim follows the gap as the error grows)")
        return v

    @field_validator("estimator_betas", "cvx_budgets")
    @classmethod
    def _positive_finite(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(x) and x > 0 for x in v):
            raise ValueError("every entry must be a finite number > 0")
        return v

    @field_validator("random_budget")
    @classmethod
    def _finite_budget(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("must be a finite KL budget in nats")
        return v

    @field_validator("train_batch", "lm_pg_batch")
    @classmethod
    def _batch(cls, v: int) -> int:
        if v % 8:
            raise ValueError("must be a multiple of 8 (the GRPO trainer's group size)")
        return v


    @classmethod
    def full(cls) -> "Config":
        """Larger toy: K = 1e5 outcomes, 2000 random policies, 200 repeats, N up to 4096, longer
        training, 64 digits proxies, and the LM measurement (:mod:`.lm_task`: best-of-N and
        KL-penalised REINFORCE/GRPO on a small locally trained GPT-2; our own trainers, as trl is not
        installed). The paper's LMs, reward models and data are not reproduced."""
        return cls(n_outcomes=100_000, cvx_outcomes=1000, n_random_policies=2000, estimator_repeats=200,
                   bon_ns=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], proxy_seeds=500,
                   train_steps=20_000, digits_proxies=64, digits_ensemble_sizes=[1, 2, 4, 8, 16, 32],
                   lm_experiment=True)


def synthetic_policy(k: int, logit_scale: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """pi0 = softmax(N(0, logit_scale^2) logits) over k outcomes and r ~ N(0, 1) (brief §4)."""
    logits = rng.normal(0.0, logit_scale, k)
    pi0 = np.exp(logits - logits.max())
    return pi0 / pi0.sum(), rng.normal(size=k)


def cvxpy_max_gain(pi0: np.ndarray, r: np.ndarray, epsilon: float) -> float:
    """max_pi E_pi r - E_pi0 r s.t. KL(pi||pi0) <= epsilon, solved by cvxpy (exponential cone).

    Written in the likelihood ratio u = pi/pi0 (max sum pi0 (r - rbar) u s.t. sum pi0 u = 1,
    sum pi0 u log u <= epsilon), which keeps Clarabel well scaled when pi0 spans orders of
    magnitude; if Clarabel still fails, the ``kl_div`` form and then SCS (at tight tolerances)
    are tried.

    Raises:
        RuntimeError: if every formulation fails.
    """
    import cvxpy as cp

    rc = r - pi0 @ r
    u = cp.Variable(pi0.size)
    x = cp.Variable(pi0.size)
    attempts = [
        (cp.Problem(cp.Maximize((pi0 * rc) @ u), [pi0 @ u == 1, pi0 @ (-cp.entr(u)) <= epsilon]),
         lambda: (pi0 * rc) @ u.value, dict(solver=cp.CLARABEL)),
        (cp.Problem(cp.Maximize(rc @ x), [cp.sum(x) == 1, cp.sum(cp.kl_div(x, pi0)) <= epsilon]),
         lambda: rc @ x.value, dict(solver=cp.CLARABEL)),
        (cp.Problem(cp.Maximize((pi0 * rc) @ u), [pi0 @ u == 1, pi0 @ (-cp.entr(u)) <= epsilon]),
         lambda: (pi0 * rc) @ u.value, dict(solver=cp.SCS, eps=1e-10, max_iters=200_000)),
    ]
    errors = []
    for prob, value, kw in attempts:
        try:
            prob.solve(**kw)
        except cp.error.SolverError as exc:
            errors.append(str(exc))
            continue
        if prob.status in ("optimal", "optimal_inaccurate"):
            return float(value())
        errors.append(prob.status)
    raise RuntimeError(f"cvxpy failed at epsilon={epsilon}: {errors}")


def random_feasible_gains(pi0: np.ndarray, r: np.ndarray, epsilon: float, n: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Gains of ``n`` random policies with KL(pi||pi0) <= epsilon (most on the boundary).

    Each is a mixture (1-l) pi0 + l q with q ∝ pi0 exp(a r + b g), a ~ U(0, 5), b ~ U(0, 2),
    g ~ N(0, I) — reward-seeking but noisy candidates — and l set by bisection so the KL equals
    ``epsilon`` (KL is convex in l and 0 at l = 0, hence monotone) or l = 1 if q is feasible.
    """
    a = rng.uniform(0, 5, n)
    b = rng.uniform(0, 2, n)
    out = np.empty(n)
    step = max(1, 4_000_000 // pi0.size)          # policies per block: bounds memory at large K
    for s in range(0, n, step):
        sl = slice(s, min(n, s + step))
        g = rng.normal(size=(sl.stop - sl.start, pi0.size))
        out[sl] = _boundary_mixture_gains(pi0, r, epsilon, a[sl, None], b[sl, None], g)
    return out


def _boundary_mixture_gains(pi0, r, epsilon, a, b, g):
    logq = np.log(pi0)[None, :] + a * r[None, :] + b * g
    q = np.exp(logq - logq.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    n = q.shape[0]

    def kl(lam: np.ndarray) -> np.ndarray:
        mix = (1 - lam) * pi0[None, :] + lam * q
        return np.sum(mix * np.log(mix / pi0[None, :]), axis=1)

    lo, hi = np.zeros((n, 1)), np.ones((n, 1))
    full_ok = kl(hi) <= epsilon
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        over = kl(mid) > epsilon
        hi = np.where(over[:, None], mid, hi)
        lo = np.where(over[:, None], lo, mid)
    lam = np.where(full_ok[:, None], 1.0, lo)
    mix = (1 - lam) * pi0[None, :] + lam * q
    return mix @ r - pi0 @ r


def bon_and_frontier(pi0: np.ndarray, r: np.ndarray, ns: list[int]) -> dict:
    """Exact best-of-N (KL, gain) and the frontier's gain at the same KL."""
    bon = best_of_n(pi0, r, np.array(ns))
    with warnings.catch_warnings():   # a BoN KL at the attainable maximum: the maximum is the answer
        warnings.simplefilter("ignore", BudgetExceedsMaximumWarning)
        frontier_gain = np.array([max_reward_gain(pi0, r, k).gain if k > 0 else 0.0 for k in bon.kl])
    eff = np.where(frontier_gain > 0, bon.gain / np.where(frontier_gain > 0, frontier_gain, 1.0), 1.0)
    return {"n": bon.n, "kl": bon.kl, "gain": bon.gain, "bound": bon.kl_bound,
            "frontier_gain": frontier_gain, "efficiency": eff}


def _frontier_curve(pi0, r, n=160):
    kl_max = max_attainable_kl(pi0, r)
    betas = np.logspace(np.log10(1e-6 * np.ptp(r)), np.log10(50 * np.std(r)), n)
    fp = tilted_frontier(pi0, r, betas)
    keep = fp.kl < kl_max
    return fp.kl[keep], fp.gain[keep]


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run every check of the issue and return the claims (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    claims: list = []
    metrics: dict = {}
    pi0, r = synthetic_policy(config.n_outcomes, config.logit_scale, ctx.child_rng(1))
    sd_r = float(np.sqrt(pi0 @ (r - pi0 @ r) ** 2))

    # 1. Jeffreys identity: Delta = beta * J, with J computed independently from pi_beta (rel_entr)
    betas = np.logspace(np.log10(0.05), 1.0, config.n_identity_betas)
    fp = tilted_frontier(pi0, r, betas)
    pols = tilted_policy(pi0, r, betas)
    j_indep = np.array([jeffreys_divergence(p, pi0) for p in pols])
    rel_err = np.abs(fp.gain - betas * j_indep) / np.abs(fp.gain)
    metrics["jeffreys_max_rel_error"] = float(rel_err.max())
    claims.append(C.close(
        "jeffreys_identity",
        "Optimal gain equals beta times the Jeffreys divergence, Delta(beta) = beta J(pi_beta, pi0) (first result)",
        measured=float(rel_err.max()), target=0.0, abs_tol=1e-9, paper_value="exact identity",
        reason="an algebraic identity; 1e-9 relative leaves room only for float64 rounding over K terms "
               "(brief: rel. tol 1e-9 for beta in [0.05, 10])",
        note=f"max relative |Delta - beta J| over {betas.size} betas in [0.05, 10], K = {pi0.size}; J summed "
             "directly from pi_beta and pi0 with scipy rel_entr."))

    # 2. closed form vs an independent solve of the constrained problem (cvxpy)
    pi0_c, r_c = synthetic_policy(config.cvx_outcomes, config.logit_scale, ctx.child_rng(2))
    diffs, cvx_vals, closed_vals = [], [], []
    for eps in config.cvx_budgets:
        closed = max_reward_gain(pi0_c, r_c, eps).gain
        solved = cvxpy_max_gain(pi0_c, r_c, eps)
        closed_vals.append(closed)
        cvx_vals.append(solved)
        diffs.append(abs(closed - solved))
    metrics.update(cvx_budgets=config.cvx_budgets, cvx_gain=cvx_vals, closed_form_gain=closed_vals)
    claims.append(C.close(
        "closed_form_equals_cvxpy",
        "Closed-form maximal gain under a KL budget equals the constrained optimum max E_pi r s.t. KL <= eps",
        measured=float(max(diffs)), target=0.0, abs_tol=1e-5, paper_value="closed form is the optimum",
        reason="brief's tolerance; Clarabel's interior-point accuracy (~1e-8 gap) is far inside it",
        note=f"K = {pi0_c.size}, budgets {config.cvx_budgets} nats; max |closed - cvxpy| reported."))

    # 3. no feasible random policy beats the limit
    eps_r = config.random_budget
    limit = max_reward_gain(pi0, r, eps_r).gain
    rand = random_feasible_gains(pi0, r, eps_r, config.n_random_policies, ctx.child_rng(3))
    metrics["random_policy_best_ratio"] = float(rand.max() / limit)
    claims.append(C.at_most(
        "no_random_policy_beats_limit",
        "No policy within the KL budget exceeds the closed-form gain",
        measured=float(rand.max() / limit), bound=1.0 + 1e-9, paper_value="<= 1",
        reason="the limit is a maximum; 1e-9 allows only rounding",
        note=f"{rand.size} reward-seeking random mixtures on the KL = {eps_r} boundary, K = {pi0.size}."))

    # 4. base-sample estimator at N = 1e4 (and the small-N bias, reported only)
    eb = np.array(config.estimator_betas)
    exact_e = tilted_frontier(pi0, r, eb).gain
    rng_e = ctx.child_rng(4)
    est, se = [], []
    small = []
    for _ in range(config.estimator_repeats):
        ys = rng_e.choice(pi0.size, size=config.estimator_samples, p=pi0)
        fe = estimate_frontier(r[ys], eb, warn_unreliable=False)
        est.append(fe.gain)
        se.append(fe.gain_se)
        ys_small = rng_e.choice(pi0.size, size=config.estimator_small_samples, p=pi0)
        small.append(estimate_frontier(r[ys_small], eb, warn_unreliable=False).gain)
    est, se, small = np.array(est), np.array(se), np.array(small)
    z_mean = (est.mean(0) - exact_e) / (se.mean(0) / np.sqrt(config.estimator_repeats))
    se_ratio = est.std(0, ddof=1) / se.mean(0)
    metrics.update(estimator_betas=eb, estimator_exact=exact_e, estimator_mean=est.mean(0),
                   estimator_se=se.mean(0), estimator_z=z_mean, estimator_se_ratio=se_ratio,
                   estimator_small_n_mean=small.mean(0), estimator_small_n_bias=small.mean(0) - exact_e)
    claims.append(C.at_most(
        "estimator_within_3se",
        f"The covariance-form estimator from base samples alone recovers the optimal gain (N = {config.estimator_samples})",
        measured=float(np.abs(z_mean).max()), bound=3.0, paper_value="unbiased estimate of Delta(beta)",
        reason="max |mean estimate - exact| in units of the standard error of the mean over repeats; "
               "3 SE (brief) — a false alarm has probability < 1% per beta",
        note=f"betas {eb.tolist()}, {config.estimator_repeats} repeats; exact {np.round(exact_e, 4).tolist()}, "
             f"mean estimate {np.round(est.mean(0), 4).tolist()}. At N = {config.estimator_small_samples} the "
             f"mean bias is {np.round(small.mean(0) - exact_e, 3).tolist()} (reported, not asserted)."))
    # the std over R repeats has relative sd ~ 1/sqrt(2 (R - 1)): allow 3 of those on the log scale
    se_band = 3.0 / np.sqrt(2 * (config.estimator_repeats - 1))
    claims.append(C.within(
        "estimator_se_calibrated",
        "The delta-method standard error matches the spread of the estimator across repeats",
        measured=float(np.max(np.abs(np.log(se_ratio)))), low=0.0, high=float(se_band),
        paper_value=None,
        reason=f"max |log(empirical std / reported SE)|; with {config.estimator_repeats} repeats the std is "
               f"known to ~{100 / np.sqrt(2 * (config.estimator_repeats - 1)):.0f}%, so 3 of those "
               f"(ratio within [{np.exp(-se_band):.2f}, {np.exp(se_band):.2f}]) is the band",
        note=f"ratios per beta: {np.round(se_ratio, 3).tolist()} (our addition: SE is not from the paper)."))

    # 5. best-of-N vs the bound and the frontier (synthetic and digits)
    bon = bon_and_frontier(pi0, r, config.bon_ns)
    metrics.update({f"bon_{k}": v for k, v in bon.items()})
    claims.append(C.at_most(
        "bon_kl_below_bound",
        "Best-of-N KL <= log N - (N-1)/N (Beirami et al. 2024; used as BoN's KL in the paper's frontier plots)",
        measured=float(np.max(bon["kl"] - bon["bound"])), bound=1e-12, paper_value="<= log N - (N-1)/N",
        reason="exact KL on a finite support; 1e-12 allows rounding only",
        note=f"max over N in {config.bon_ns} of KL - bound."))
    claims.append(C.at_most(
        "bon_below_frontier",
        "Best-of-N's gain lies at or below the KL–reward frontier at its own KL",
        measured=float(bon["efficiency"][1:].max()), bound=1.0 + 1e-9, paper_value="<= 1",
        reason="frontier is a maximum; 1e-9 allows the root-finder's rounding",
        note=f"max over N >= 2 (N = 1 is pi0 itself) of efficiency = BoN gain / frontier gain at the same KL: "
             f"{np.round(bon['efficiency'], 4).tolist()}."))
    claims.append(C.at_least(
        "bon_close_to_frontier",
        "Best-of-N closely approaches the theoretical limit (abstract; Pareto-frontier experiments)",
        measured=float(bon["efficiency"][1:].min()), bound=config.bon_min_efficiency,
        paper_value="close to the limit (LM tasks)",
        reason=f"brief's threshold for this synthetic setup: BoN gain >= {config.bon_min_efficiency} x frontier "
               "for N <= 256",
        note="min over N >= 2 of the efficiency (N = 1 is the base policy itself)."))

    # 6. proxy gap vs beta and ensemble size (synthetic: independent Gaussian errors)
    pb = np.array(config.proxy_betas) * sd_r
    fig_b = np.logspace(np.log10(0.05), np.log10(2.0), 9) * sd_r      # finer grid, figure only
    all_b = np.concatenate([pb, fig_b])
    rng_p = ctx.child_rng(5)
    seed_gaps = np.zeros((config.proxy_seeds, len(config.ensemble_sizes), all_b.size))
    for s in ctx.track(range(config.proxy_seeds), "proxy error draws"):
        errs = rng_p.normal(0.0, config.proxy_sigma, (max(config.ensemble_sizes), pi0.size))
        for i, m in enumerate(config.ensemble_sizes):
            seed_gaps[s, i] = proxy_gap(pi0, r, r + errs[:m].mean(0), all_b).gap
    all_gaps = seed_gaps.mean(0)
    gaps, fig_gaps = all_gaps[:, :pb.size], all_gaps[:, pb.size:]
    sg = seed_gaps[:, :, :pb.size]
    metrics.update(proxy_betas=pb, proxy_ensemble_sizes=config.ensemble_sizes, proxy_gap=gaps)

    def trend(diffs: np.ndarray, total: np.ndarray) -> tuple[bool, float, float]:
        """Paired differences over error draws (axis 0): no step significantly against the trend
        (mean > -2 SE each) and the end-to-end change significantly with it (mean > 3 SE)."""
        n = diffs.shape[0]
        z_steps = diffs.mean(0) / (diffs.std(0, ddof=1) / np.sqrt(n) + 1e-300)
        z_total = total.mean(0) / (total.std(0, ddof=1) / np.sqrt(n) + 1e-300)
        return bool(np.all(z_steps > -2) and np.all(z_total > 3)), float(z_steps.min()), float(z_total.min())

    grows, zs_b, zt_b = trend(np.diff(sg, axis=2), sg[:, :, -1] - sg[:, :, 0])   # betas decrease along axis 2
    claims.append(C.check(
        "proxy_gap_grows_as_beta_falls",
        "The gap between ideal and proxy alignment (reward hacking) grows when the KL penalty factor beta "
        "decreases (abstract)",
        measured={f"M={m}": np.round(g, 4).tolist() for m, g in zip(config.ensemble_sizes, gaps)},
        holds=grows,
        tolerance=f"along beta = {np.round(pb, 3).tolist()}, for every M: no step decreases by more than 2 SE "
                  "and the gap at the smallest beta exceeds that at the largest by more than 3 SE",
        paper_value="grows as beta decreases (abstract; whether the theorem states this of the gap itself or of a bound "
                    "on it is unverified)",
        reason=f"mean over {config.proxy_seeds} error draws (sigma = {config.proxy_sigma}); SEs of paired "
               "differences over the draws; the brief's range beta <= 0.5 sd(r)",
        note=f"synthetic, K = {pi0.size}, independent N(0, sigma^2) errors per outcome; min step z = {zs_b:.1f}, "
             f"min end-to-end z = {zt_b:.1f}."))
    shrinks, zs_m, zt_m = trend(-np.diff(sg, axis=1), sg[:, 0, :] - sg[:, -1, :])
    claims.append(C.check(
        "ensemble_shrinks_gap",
        "Reward ensembling mitigates reward hacking: the gap shrinks as the ensemble size M grows",
        measured={f"beta={b:.3g}": np.round(gaps[:, j], 4).tolist() for j, b in enumerate(pb)},
        holds=shrinks,
        tolerance=f"along M = {config.ensemble_sizes}, at every beta: no step increases by more than 2 SE and "
                  "the gap at the largest M is below that at M = 1 by more than 3 SE",
        paper_value="ensembling mitigates reward hacking",
        reason=f"mean over {config.proxy_seeds} error draws per M; SEs of paired differences",
        note=f"independent errors: M_eff = M; min step z = {zs_m:.1f}, min end-to-end z = {zt_m:.1f}."))

    # the gap vs the size of the reward error (same draws rescaled: paired along the scales)
    scales = np.array(config.proxy_error_scales)
    rng_s = ctx.child_rng(8)
    err_gaps = np.zeros((config.proxy_seeds, scales.size, pb.size))
    for s in range(config.proxy_seeds):
        e = rng_s.normal(0.0, config.proxy_sigma, pi0.size)
        for i, c in enumerate(scales):
            err_gaps[s, i] = proxy_gap(pi0, r, r + c * e, pb).gap
    egaps = err_gaps.mean(0)
    metrics.update(proxy_error_scales=scales, proxy_gap_vs_error=egaps)
    grows_e, zs_e, zt_e = trend(np.diff(err_gaps, axis=1), err_gaps[:, -1, :] - err_gaps[:, 0, :])
    claims.append(C.check(
        "proxy_gap_grows_with_error",
        "The gap between ideal and proxy alignment (reward hacking) grows with the magnitude of the reward "
        "error (abstract)",
        measured={f"beta={b:.3g}": np.round(egaps[:, j], 4).tolist() for j, b in enumerate(pb)},
        holds=grows_e,
        tolerance=f"along error sd = {np.round(scales * config.proxy_sigma, 3).tolist()}, at every beta: no step "
                  "decreases by more than 2 SE and the gap at the largest error exceeds that at the smallest by "
                  "more than 3 SE",
        paper_value="grows with the reward error's magnitude (abstract; exact theorem form unverified)",
        reason=f"mean over {config.proxy_seeds} error draws, each rescaled along the grid (paired differences); "
               "same SE rule as proxy_gap_grows_as_beta_falls",
        note=f"synthetic, K = {pi0.size}, e ~ N(0, sigma^2) per outcome scaled by {scales.tolist()}; min step "
             f"z = {zs_e:.1f}, min end-to-end z = {zt_e:.1f}."))

    # 7. toy trainers vs the frontier and best-of-N
    traces = {}
    for k, method in enumerate(ctx.track(("reinforce", "ppo", "grpo"), "toy trainers")):
        traces[method] = train_policy(pi0, r, config.train_beta, method=method, steps=config.train_steps,
                                      batch_size=config.train_batch, lr=config.train_lr,
                                      record_every=max(1, config.train_steps // 20),
                                      generator=ctx.torch_generator(10 + k))
    eff_train, bon_at_kl = {}, {}
    log_bon_kl = np.log(np.maximum(bon["kl"][1:], 1e-300))
    for method, tr in traces.items():
        kl_end, gain_end = float(tr.kl[-1]), float(tr.gain[-1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BudgetExceedsMaximumWarning)
            front = max_reward_gain(pi0, r, kl_end).gain
        eff_train[method] = gain_end / front if front > 0 else 1.0
        bon_at_kl[method] = float(np.interp(np.log(kl_end), log_bon_kl, bon["efficiency"][1:]))
        metrics[f"train_{method}_kl"] = kl_end
        metrics[f"train_{method}_gain"] = gain_end
        metrics[f"train_{method}_efficiency"] = eff_train[method]
        metrics[f"train_{method}_bon_efficiency_at_same_kl"] = bon_at_kl[method]
    claims.append(C.at_most(
        "trained_below_frontier",
        "Policies trained by REINFORCE / PPO / GRPO with a KL penalty land on or below the frontier",
        measured=float(max(eff_train.values())), bound=1.0 + 1e-9, paper_value="below the limit",
        reason="exact KL and gain of the trained categorical policy; the limit is a maximum",
        note="efficiency = gain / frontier gain at the same KL: "
             + ", ".join(f"{m} {e:.3f}" for m, e in eff_train.items())))
    margins = {m: bon_at_kl[m] - eff_train[m] for m in ("ppo", "grpo")}
    bon_kl_max = float(bon["kl"][-1])
    beyond = [m for m in ("ppo", "grpo") if metrics[f"train_{m}_kl"] > bon_kl_max]
    claims.append(C.check(
        "ppo_grpo_substantially_suboptimal",
        "On the LM safety and summarisation tasks, best-of-N closely approaches the theoretical limit, while PPO "
        "and GRPO remain substantially suboptimal (abstract); checked here on a toy categorical stand-in",
        measured={m: {"efficiency": round(eff_train[m], 4), "shortfall_to_limit": round(1 - eff_train[m], 4),
                      "bon_efficiency_same_kl": round(bon_at_kl[m], 4)}
                  for m in ("ppo", "grpo")},
        holds=all(v >= config.substantial_margin for v in margins.values()),
        tolerance=f"BoN efficiency (interpolated at the trainer's KL) exceeds PPO's and GRPO's by >= "
                  f"{config.substantial_margin}",
        paper_value="BoN close to the limit; PPO and GRPO substantially suboptimal (no number in the abstract; "
                    "the body is unverified)",
        reason=f"'substantially suboptimal' read against best-of-N, which the paper finds close to the limit: BoN's "
               f"efficiency exceeds the trainer's by >= {config.substantial_margin} of the frontier gain; toy "
               f"categorical policy, {config.train_steps} steps, beta = {config.train_beta}",
        note="a toy stand-in for the LM experiments: the trainers optimise a KL-regularised objective whose "
             "optimum is on the frontier, so the gap measures optimisation, not an LM's parameterisation."
             + (f" {', '.join(beyond)} spent more KL than best-of-{int(bon['n'][-1])} ({bon_kl_max:.3g} nats): "
                "BoN's efficiency there is that of the largest N (interpolation clamped)." if beyond else "")))

    # 8. digits: real, correlated proxy errors
    task = build_digits_task(config.digits_proxies, n_train=config.digits_train_size,
                             target=config.digits_target, rng=ctx.child_rng(6))
    dpi0, dr = task.pi0, task.r_true
    sd_d = float(np.std(dr))
    bon_d = bon_and_frontier(dpi0, dr, config.bon_ns)
    metrics.update({f"digits_bon_{k}": v for k, v in bon_d.items()})
    claims.append(C.at_least(
        "bon_close_to_frontier_digits",
        "Best-of-N closely approaches the limit — digits task (real classifier reward)",
        measured=float(bon_d["efficiency"][1:].min()), bound=config.bon_min_efficiency,
        paper_value="close to the limit (LM tasks)",
        reason=f"same threshold as the synthetic check ({config.bon_min_efficiency})",
        note=f"efficiencies {np.round(bon_d['efficiency'], 4).tolist()}; KL <= bound: "
             f"{bool(np.all(bon_d['kl'] <= bon_d['bound'] + 1e-12))}."))
    # estimator on digits (uniform base: i.i.d. uniform image indices)
    db = np.array(config.estimator_betas) * sd_d
    dex = tilted_frontier(dpi0, dr, db).gain
    rng_d = ctx.child_rng(7)
    dest, dse = [], []
    for _ in range(config.estimator_repeats):
        fe = estimate_frontier(dr[rng_d.integers(0, dr.size, config.estimator_samples)], db, warn_unreliable=False)
        dest.append(fe.gain)
        dse.append(fe.gain_se)
    dest, dse = np.array(dest), np.array(dse)
    dz = (dest.mean(0) - dex) / (dse.mean(0) / np.sqrt(config.estimator_repeats))
    metrics.update(digits_estimator_betas=db, digits_estimator_exact=dex, digits_estimator_mean=dest.mean(0),
                   digits_estimator_z=dz)
    claims.append(C.at_most(
        "estimator_within_3se_digits",
        f"The base-sample estimator recovers the optimal gain — digits task (N = {config.estimator_samples})",
        measured=float(np.abs(dz).max()), bound=3.0, paper_value="unbiased estimate of Delta(beta)",
        reason="as estimator_within_3se; samples are drawn with replacement from the 1797 images",
        note=f"betas {np.round(db, 3).tolist()} (= {list(config.estimator_betas)} x sd(r))."))
    # proxy gap on digits
    dpb = np.array(config.proxy_betas) * sd_d
    dall_b = np.concatenate([dpb, fig_b / sd_r * sd_d])
    errors = task.r_proxies - dr[None, :]
    dall, meff = [], []
    for m in config.digits_ensemble_sizes:
        groups = [task.r_proxies[i * m:(i + 1) * m] for i in range(config.digits_proxies // m)]
        dall.append(np.mean([proxy_gap(dpi0, dr, ensemble_reward(g), dall_b).gap for g in groups], axis=0))
        meff.append(float(np.mean([effective_ensemble_size(errors[i * m:(i + 1) * m])
                                   for i in range(config.digits_proxies // m)])))
    dall = np.array(dall)
    dgaps, dfig_gaps = dall[:, :dpb.size], dall[:, dpb.size:]
    metrics.update(digits_proxy_betas=dpb, digits_ensemble_sizes=config.digits_ensemble_sizes,
                   digits_proxy_gap=dgaps, digits_effective_M=meff,
                   digits_error_sd=float(errors.std()))
    claims.append(C.check(
        "proxy_gap_grows_as_beta_falls_digits",
        "The gap between ideal and proxy alignment (reward hacking) grows when the KL penalty factor beta "
        "decreases (abstract) — digits task (real, correlated proxy errors)",
        measured={f"M={m}": np.round(g, 4).tolist() for m, g in zip(config.digits_ensemble_sizes, dgaps)},
        holds=bool(np.all(np.diff(dgaps, axis=1) > 0)),
        tolerance=f"gap strictly increasing along beta = {np.round(dpb, 3).tolist()} (= {config.proxy_betas} x sd(r)) for every M",
        paper_value="grows as beta decreases (abstract; whether the theorem states this of the gap itself or of a bound "
                    "on it is unverified)",
        reason="same beta grid as the synthetic check in units of the reward's std; exact (no sampling noise "
               "given the fitted proxies)",
        note=f"proxy errors sd {errors.std():.3g} nats; proxies fit on {config.digits_train_size} images. On the "
             f"figure's finer grid the M = 1 gap peaks at beta = {dall_b[dpb.size:][int(np.argmax(dfig_gaps[0]))]:.3g} "
             "and falls below it: at small beta both policies concentrate on images that the true and the proxy "
             "rewards both rank top."))
    claims.append(C.check(
        "ensemble_shrinks_gap_digits",
        "Ensembling shrinks the gap — digits task (correlated errors: report the effective M)",
        measured={f"beta={b:.3g}": np.round(dgaps[:, j], 4).tolist() for j, b in enumerate(dpb)},
        holds=bool(np.all(np.diff(dgaps, axis=0) < 0)),
        tolerance=f"gap strictly decreasing along M = {config.digits_ensemble_sizes} at every beta",
        paper_value="ensembling mitigates reward hacking",
        reason="exact given the fitted proxies; averaged over disjoint groups of the proxies",
        note=f"effective M from the error correlation: {np.round(meff, 2).tolist()} for M = "
             f"{config.digits_ensemble_sizes}."))

    # 9. the LM experiments
    if config.lm_experiment:
        claims.extend(_lm_claims(config, ctx, metrics))
    claims.append(C.not_checkable(
        "lm_pareto_frontiers",
        "On safety and summarisation LM tasks, best-of-N is close to the KL–reward limit while PPO and GRPO "
        "are substantially suboptimal (Pareto-frontier experiments)",
        paper_value="BoN closely approaches the limit; PPO and GRPO remain substantially suboptimal",
        reason="needs pretrained LMs, reward models and HH/TL;DR-style data, none of which can be downloaded here",
        full_scale=("the paper's safety/summarisation LMs remain unavailable; as a substitute the full configuration "
                    "measures best-of-N and KL-penalised REINFORCE/GRPO on a small locally trained GPT-2 "
                    "(claims lm_bon_close_to_frontier and lm_pg_substantially_suboptimal; our own trainers, trl "
                    "is not installed)") if config.lm_experiment else
                   "nothing more: the full configuration only enlarges the categorical and digits stand-ins "
                   "(K = 1e5, N up to 4096, 20k trainer steps); an LM run with trl is not implemented"))

    # small-budget law vs the exact limit (sqrt(KL) is only leading order), on both tasks
    ratios = {}
    for name, (p_, r_) in {"synthetic": (pi0, r), "digits": (dpi0, dr)}.items():
        for eps in (1e-4, 1.0):
            ratios[f"{name}_eps{eps:g}"] = float(sqrt_kl_approximation(p_, r_, eps) / max_reward_gain(p_, r_, eps).gain)
    metrics["sqrt_kl_over_exact"] = ratios
    small_ok = all(abs(v - 1) <= 0.02 for k, v in ratios.items() if "eps0.0001" in k)
    large_off = abs(ratios["digits_eps1"] - 1) >= 0.05
    claims.append(C.check(
        "jeffreys_not_sqrt_kl",
        "The limit is governed by the Jeffreys term, not sqrt(KL): sqrt(2 Var(r) eps) is only its small-budget limit",
        measured=ratios, holds=bool(small_ok and large_off),
        tolerance="sqrt-law / exact within 2% at eps = 1e-4 nats on both tasks, and off by >= 5% at eps = 1 on digits",
        paper_value="Jeffreys, not sqrt(KL)",
        reason="the correction is O(sqrt(eps) x skewness): < 2% at 1e-4; 5% is a material departure",
        note="the synthetic reward is Gaussian-like, where the sqrt law stays accurate longer."))

    _figures(ctx, plt, config, pi0, r, bon, traces, est, eb, dpi0, dr, bon_d, dest, db,
             fig_gaps, fig_b, pb, dfig_gaps, dall_b[dpb.size:], dpb)
    notes = ("Synthetic setup and tolerances follow the research brief (§4). The digits task is the brief's §5 "
             "suggestion: the true reward is a logistic classifier's log-probability of the target class, so it "
             "saturates at 0 and many images nearly tie at the top. Trainers are toy categorical policies "
             "(Adam, exact KL/gain recorded). The paper's theorem statements and constants are unverified; the "
             "formulas are re-derived in the brief.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)


def _lm_claims(config: Config, ctx: RunContext, metrics: dict) -> list:
    """Best-of-N and KL-penalised PG on a small locally trained GPT-2 (full configuration only)."""
    import torch

    from .lm_task import LM_METHODS, build_lm_task, measure_lm

    def _measure(task):
        return measure_lm(task, ns=config.lm_bon_ns, pg_betas=config.lm_pg_betas, relative_betas=True,
                          methods=LM_METHODS, n_base=config.lm_base_samples, n_eval=config.lm_eval_samples,
                          pg_steps=config.lm_pg_steps, pg_batch=config.lm_pg_batch, pg_lr=config.lm_pg_lr,
                          seed=ctx.seed + 21)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)        # a 64-wide model: intra-op threads only add overhead
    try:
        task = build_lm_task(config.lm_vocab, config.lm_length, pretrain_steps=config.lm_pretrain_steps,
                             seed=ctx.seed + 20)
        m = _measure(task)
    finally:
        torch.set_num_threads(threads)
    return _lm_claims_from(config, task, m, metrics)


def _lm_claims_from(config: Config, task, m, metrics: dict) -> list:
    """The two LM claims from a :class:`.lm_task.LMMeasurement` ``m``; adds ``lm_*`` metrics."""
    metrics.update(lm_pretrain_final_loss=float(task.pretrain_loss[-1]), lm_reward_sd=m.base_reward_sd,
                   lm_bon_n=m.bon_n, lm_bon_kl=m.bon_kl, lm_bon_gain=m.bon_gain, lm_bon_efficiency=m.bon_efficiency,
                   lm_frontier_kl=m.frontier_kl, lm_frontier_gain=m.frontier_gain)
    for meth, row in m.pg.items():
        for k, v in row.items():
            metrics[f"lm_{meth}_{k}"] = v
    bon_eff = m.bon_efficiency[1:]
    out = [C.at_least(
        "lm_bon_close_to_frontier",
        "Best-of-N closely approaches the limit — small locally trained LM (substitute for the safety and "
        "summarisation LMs)",
        measured=float(bon_eff.min()), bound=config.bon_min_efficiency,
        paper_value="close to the limit (LM tasks)",
        reason=f"frontier estimated from {config.lm_base_samples} base samples (covariance form); best-of-N from "
               f"the same samples; same threshold as the synthetic check ({config.bon_min_efficiency})",
        note=f"2-layer GPT-2, V = {config.lm_vocab}, L = {config.lm_length}, pretrained {config.lm_pretrain_steps} "
             f"steps on a Markov-chain corpus; N = {m.bon_n.tolist()}, KL {np.round(m.bon_kl, 3).tolist()} nats, "
             f"efficiencies {np.round(m.bon_efficiency, 3).tolist()}; trl not used (not installed).")]
    bon_log_kl = np.log(np.maximum(m.bon_kl[1:], 1e-12))
    measured, ok = {}, True
    for meth, row in m.pg.items():
        bon_same = np.interp(np.log(np.maximum(row["kl"], 1e-12)), bon_log_kl, bon_eff)
        inr = row["in_range"].astype(bool)
        measured[meth] = {"efficiency": np.round(row["efficiency"], 4).tolist(), "kl": np.round(row["kl"], 4).tolist(),
                          "bon_efficiency_same_kl": np.round(bon_same, 4).tolist(), "in_frontier_range": inr.tolist()}
        ok = ok and bool(np.all(bon_same[inr] - row["efficiency"][inr] >= config.substantial_margin))
    n_in = sum(int(row["in_range"].sum()) for row in m.pg.values())
    ok = ok and n_in > 0
    out.append(C.check(
        "lm_pg_substantially_suboptimal",
        "KL-penalised policy-gradient fine-tuning (REINFORCE, GRPO) stays substantially below the limit while "
        "best-of-N approaches it — small locally trained LM",
        measured=measured, holds=ok,
        tolerance=f"at every beta whose trained KL is within the estimated frontier's reliable range (<= "
                  f"{m.frontier_kl[-1]:.3g} nats), BoN efficiency (interpolated at the trainer's KL) exceeds the "
                  f"trainer's by >= {config.substantial_margin}; fails if no run is in range",
        paper_value="PPO and GRPO substantially suboptimal (no number in the abstract)",
        reason=f"Monte Carlo KL (k1) and gain of {config.lm_eval_samples} samples per trained policy; "
               f"{config.lm_pg_steps} steps, betas {config.lm_pg_betas} x sd(r); efficiency = gain / estimated "
               "frontier gain at the same KL",
        note="sequence-level REINFORCE (KL-shaped reward) and GRPO (group advantages, k3 penalty), our own "
             "implementation (trl is not installed); PPO is not run on the LM."))
    return out


def _figures(ctx, plt, config, pi0, r, bon, traces, est, eb, dpi0, dr, bon_d, dest, db,
             gaps, gb, pb, dgaps, dgb, dpb):
    import matplotlib.ticker  # noqa: F401  (for the log-axis formatter below)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, (title, p_, r_, b_, e_, betas_) in zip(axes, [
            ("synthetic (K = %d)" % pi0.size, pi0, r, bon, est, eb),
            ("digits (K = %d, target %d)" % (dpi0.size, config.digits_target), dpi0, dr, bon_d, dest, db)]):
        kl, gain = _frontier_curve(p_, r_)
        ax.plot(kl, gain, "k-", lw=2, label="limit (closed form)")
        ax.plot(kl, sqrt_kl_approximation(p_, r_, kl), "k:", lw=1, label=r"$\sqrt{2\,\mathrm{Var}(r)\,\mathrm{KL}}$")
        ax.plot(b_["kl"][1:], b_["gain"][1:], "o-", color="tab:orange", label="best-of-N (exact)")
        for n_, x_, y_ in zip(b_["n"][1:], b_["kl"][1:], b_["gain"][1:]):
            ax.annotate(str(n_), (x_, y_), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ex = tilted_frontier(p_, r_, betas_)
        ax.errorbar(ex.kl, e_.mean(0), yerr=e_.std(0), fmt="s", color="tab:green", ms=5,
                    label=f"estimate from {config.estimator_samples} base samples")
        if p_ is pi0:
            for (m, tr), c in zip(traces.items(), ("tab:blue", "tab:red", "tab:purple")):
                ax.plot(tr.kl, tr.gain, "-", color=c, alpha=0.6, lw=1)
                ax.plot(tr.kl[-1], tr.gain[-1], "*", color=c, ms=12, label=f"{m} (beta={config.train_beta})")
        ax.set_xlabel("KL(pi || pi0) [nats]")
        ax.set_ylabel("reward gain")
        ax.set_title(title)
        ax.set_ylim(0, max(b_["gain"].max(), gain.max()) * 1.15)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("KL–reward frontier: closed-form limit, best-of-N, trained policies")
    ctx.save_figure("frontier", fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, (title, g_, b_, ms, cb) in zip(axes, [
            ("synthetic, independent errors", gaps, gb, config.ensemble_sizes, pb),
            ("digits, bootstrap classifiers", dgaps, dgb, config.digits_ensemble_sizes, dpb)]):
        for m, row in zip(ms, g_):
            ax.plot(b_, row, "o-", ms=3, label=f"M = {m}")
        for b in cb:
            ax.axvline(b, color="grey", ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("beta (KL penalty)")
        ax.set_ylabel("gap E_{pi_beta}[r] - E_{hat pi_beta}[r]")
        ax.set_title(title)
        ax.axhline(0, color="grey", lw=0.5)
        ax.legend(fontsize=8)
    fig.suptitle("Proxy (reward-hacking) gap vs beta for ensembles of M reward models (dotted: betas of the claims)")
    ctx.save_figure("proxy_gap", fig)
