"""Reproduction of paper 5 (KL-regularised alignment limits) at laptop scale.

Two tasks: a synthetic categorical "policy" (K outcomes, pi0 = softmax of N(0, s^2) logits,
r ~ N(0, 1); our choice) and a real-data task from scikit-learn's digits (base policy uniform over
the images, true reward = a classifier's log-probability of a target class, proxies from
classifiers fit on small bootstraps). ``run`` reads as a table of contents: one function per claim
group. The LM experiments of the paper (safety, summarisation; PPO/GRPO/BoN on real LMs) are not
checkable here; the full configuration (``lm_experiment=True``) substitutes the same measurement on
a small locally trained GPT-2 (:mod:`.lm_task`, trl's RLOO and GRPO trainers).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from neurips26.harness import ExperimentConfig, Outcome, Resources, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import model_label, no_model_reason, resolve_auto_backend

from .best_of_n import best_of_n
from .digits_task import build_digits_task
from .estimator import estimate_frontier
from .frontier import (
    jeffreys_divergence,
    max_attainable_kl,
    max_reward_gain,
    sqrt_kl_approximation,
    tilted_frontier,
    tilted_policy,
)
from .proxy import effective_ensemble_size, ensemble_reward, proxy_gap
from .real_lm import PROMPTS
from .trainers import train_policy
from .validation import BudgetExceedsMaximumWarning

#: the same method gets the same colour in every figure
COLOURS = {"limit": "k", "best-of-N": "tab:orange", "estimate": "tab:green", "reinforce": "tab:blue",
           "ppo": "tab:red", "grpo": "tab:purple"}


def torch_generator(seed: int):
    """A CPU ``torch.Generator`` seeded with ``seed``."""
    import torch

    return torch.Generator().manual_seed(int(seed))


class Config(ExperimentConfig):
    """Settings of the alignment-limits reproduction (quick = CPU minutes; full = larger toy).

    Upper bounds keep a typo from running for hours or exhausting memory (each ~10× full scale)."""

    claim_seeds: int = Field(3, ge=3, le=50, description="seeds over which every random claim is judged")
    estimator_rel_tol: float = Field(0.02, gt=0, le=0.5, description="accepted relative error of the estimator's mean")

    n_outcomes: int = Field(2000, le=1_000_000, ge=10, description="K, outcomes of the synthetic policy")
    logit_scale: float = Field(1.5, gt=0, description="std of the synthetic base logits")
    n_identity_betas: int = Field(40, le=10_000, ge=2, description="betas in [0.05, 10] for the Jeffreys identity")
    cvx_outcomes: int = Field(200, le=10_000, ge=5, description="K of the instance solved by cvxpy")
    cvx_budgets: list[float] = Field([0.05, 0.5, 2.0], min_length=1, description="KL budgets (nats) checked against cvxpy")
    n_random_policies: int = Field(500, le=100_000, ge=10, description="random feasible policies that must not beat the limit")
    random_budget: float = Field(0.5, gt=0, description="KL budget (nats) of the random-policy check")
    estimator_samples: int = Field(10_000, le=10_000_000, ge=100, description="N base samples for the estimator check")
    estimator_small_samples: int = Field(100, le=1_000_000, ge=10, description="small N whose bias is reported")
    estimator_repeats: int = Field(40, le=10_000, ge=5, description="independent repeats of the estimator")
    estimator_betas: list[float] = Field([1.0, 0.5, 0.25], min_length=1, description="betas of the estimator check")
    bon_ns: list[int] = Field([1, 2, 4, 8, 16, 32, 64, 128, 256], min_length=2, description="best-of-N sizes")
    bon_min_efficiency: float = Field(0.85, gt=0, le=1, description="BoN gain / frontier gain counted as 'close' (from a prototype run)")
    proxy_sigma: float = Field(1.0, gt=0, description="std of the synthetic proxy errors")
    proxy_betas: list[float] = Field([0.5, 0.25, 0.1], min_length=2, description="betas (in reward-std units) of the proxy-gap check")
    proxy_beta_sweep: list[float] = Field([1.0, 0.5, 0.25, 0.1, 0.05, 0.02, 0.01], min_length=2,
                                          description="decreasing betas (in reward-std units) along which the gap "
                                                      "must grow, down to the beta -> 0 regime")
    ensemble_sizes: list[int] = Field([1, 4, 16], min_length=2, description="ensemble sizes M (synthetic)")
    proxy_seeds: int = Field(100, le=10_000, ge=5, description="error draws averaged per (beta, M), synthetic")
    proxy_error_scales: list[float] = Field([0.25, 0.5, 1.0, 2.0], min_length=2,
                                            description="multiples of proxy_sigma for the gap-vs-error-size check")
    train_beta: float = Field(0.5, gt=0, description="KL penalty of the toy trainers")
    train_steps: int = Field(500, le=1_000_000, ge=10, description="steps of each toy trainer; 500 in the quick run "
                             "is set by its CPU budget (was 1000; the trainers were two thirds of the run)")
    train_batch: int = Field(64, le=65_536, ge=8, description="batch size of the toy trainers")
    train_lr: float = Field(0.05, gt=0, description="Adam learning rate of the toy trainers")
    substantial_margin: float = Field(0.05, ge=0, description="efficiency margin counted as 'substantially suboptimal'")
    digits_proxies: int = Field(16, le=1000, ge=2, description="bootstrap proxy reward models on digits")
    digits_train_size: int = Field(150, le=1797, ge=20, description="images per bootstrap proxy fit")
    digits_target: int = Field(3, ge=0, le=9, description="target digit class")
    digits_ensemble_sizes: list[int] = Field([1, 2, 4, 8], min_length=2, description="ensemble sizes M (digits)")
    lm_experiment: bool = Field(False, description="measure best-of-N and KL-penalised PG on a small locally trained LM")
    lm_vocab: int = Field(8, le=512, ge=2, description="tokens of the tiny LM (BOS excluded)")
    lm_length: int = Field(8, le=256, ge=1, description="tokens per sequence of the tiny LM")
    lm_pretrain_steps: int = Field(300, le=1_000_000, ge=1, description="pretraining steps of the tiny LM")
    lm_base_samples: int = Field(4000, le=10_000_000, ge=20, description="base-policy samples (frontier estimate, best-of-N)")
    lm_eval_samples: int = Field(2000, le=10_000_000, ge=10, description="samples per trained policy (Monte Carlo KL and gain)")
    lm_bon_ns: list[int] = Field([1, 2, 4, 8, 16, 32], min_length=2, description="best-of-N sizes on the LM")
    lm_pg_betas: list[float] = Field([1.0, 0.3], min_length=1, description="KL penalties (x sd(r)) of the LM PG runs")
    lm_pg_steps: int = Field(200, le=100_000, ge=1, description="PG steps per (method, beta) on the LM")
    lm_pg_batch: int = Field(64, le=4096, ge=8, description="sequences per PG step (multiple of 8)")
    lm_pg_lr: float = Field(1e-3, gt=0, description="Adam learning rate of the LM PG runs")
    model: str | None = Field(None, description="real pretrained LM for the best-of-N / frontier claims on its own "
                              "generations: a transformers folder (config.json, weights, tokenizer) or a model id "
                              "(smollm2-135m); auto (the quick default): smollm2-135m when installed, else skipped; "
                              "None = skipped")
    model_sha256: str = Field("", description="set before any work: SHA-256 of the local model's weights "
                              "(from its install manifest); part of the config hash")
    backend_auto: bool = Field(False, description="set before any work: model was auto (resolved)")
    real_prompts: int = Field(8, ge=2, le=len(PROMPTS), description="prompts of the real-model pools")
    real_k: int = Field(24, ge=4, le=4096, description="completions sampled per prompt (the pool, pi0's support)")
    real_max_new_tokens: int = Field(24, ge=1, le=512, description="max tokens per sampled completion")
    real_bon_ns: list[int] = Field([1, 2, 4, 8, 16], min_length=2, description="best-of-N sizes on the real pools")
    real_beta: float = Field(1.0, gt=0, description="KL penalty (reward units) of the real-model estimator claim")

    @field_validator("bon_ns")
    @classmethod
    def _bon_ns(cls, v: list[int]) -> list[int]:
        if v[0] != 1 or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError("must start at 1 (N = 1 is the base policy) and be strictly increasing")
        return v

    @field_validator("real_bon_ns")
    @classmethod
    def _real_bon_ns(cls, v: list[int]) -> list[int]:
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

    @field_validator("proxy_betas", "proxy_beta_sweep")
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


    def resources(self) -> Resources:
        """One CPU. ``hours`` is an estimate (inferred, not measured at full scale), extrapolated from
        the quick run (≈31 CPU-s on seed 0 under load ~7: the toy trainers ≈ 12 s, the rest ≈ 19 s):
        trainers 40× steps × 10/3 seeds with ~2× cost per step at K = 10^5 → ≈ 3,000 s; the other
        groups ~10/3 seeds × larger K, N, repeats, proxies (mostly vectorised in K) plus cvxpy at
        K = 1000 and the tiny LM (a 2-layer, 64-wide model, a few hundred steps) → ≈ 1 h. Declared
        2 h in all for ``full()``."""
        big = self.lm_experiment or self.train_steps > 5000 or self.n_outcomes > 20_000
        return Resources(num_cpus=1, memory_gb=4 if big else 1, hours=2.0 if big else 0.01, on_cpu="the proxies, best-of-N and the KL frontier (numpy and cvxpy: CPU by nature)")

    @classmethod
    def quick(cls) -> "Config":
        """The laptop configuration: ``model=auto`` (the installed smollm2-135m for the real-model
        claims, else those claims not checkable, saying how to install it)."""
        return cls(model="auto")

    @classmethod
    def full(cls) -> "Config":
        """Larger toy: K = 1e5 outcomes, 2000 random policies, 200 repeats, N up to 4096, longer
        training, 64 digits proxies, 10 seeds, and the LM measurement (:mod:`.lm_task`: best-of-N and
        KL-penalised RLOO/GRPO by trl on a small locally trained GPT-2). The paper's LMs, reward models and data
        are not reproduced."""
        return cls(n_outcomes=100_000, cvx_outcomes=1000, n_random_policies=2000, estimator_repeats=200,
                   bon_ns=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], proxy_seeds=500,
                   train_steps=20_000, digits_proxies=64, claim_seeds=10, digits_ensemble_sizes=[1, 2, 4, 8, 16, 32],
                   lm_experiment=True)


def synthetic_policy(k: int, logit_scale: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """pi0 = softmax(N(0, logit_scale^2) logits) over k outcomes and r ~ N(0, 1) (inferred: a
    categorical base policy spanning orders of magnitude, with Gaussian rewards)."""
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


#: Run seeds never used while choosing a threshold or setting: ``reproduce`` re-runs the best-of-N group
#: (whose threshold came from a prototype run) on them and pools them. A run at seed s draws instances
#: s, s+1, …, so the seeds are 100 apart and share no instance.
CONFIRMATION_SEEDS = (101, 201, 301)


def _seeds(config: Config, ctx: RunContext) -> list[int]:
    """The seeds every random claim is judged over, fixed before looking: seed, seed+1, …"""
    return [ctx.seed + k for k in range(config.claim_seeds)]


# ----------------------------------------------------------------------------- table of contents

def run(config: Config, ctx: RunContext) -> Outcome:
    """Run every claim group (one function each) and return the claims (module docstring)."""
    config = resolve_auto_backend(config)  # model=auto: the installed local model, else none (the CLI did it already)
    metrics: dict = {}
    figs: dict = {}
    pi0, r = synthetic_policy(config.n_outcomes, config.logit_scale, ctx.child_rng(1))
    if ctx.confirmation:   # confirmation seeds: the synthetic best-of-N group holds the tuned claim re-judged here
        claims = _best_of_n_against_limit(config, ctx, pi0, r, metrics, figs)
        return Outcome(metrics=metrics, claims=claims, notes="Confirmation run of the best-of-N threshold chosen "
                       "after a prototype run (bon_close_to_frontier); the other groups have no tuned claim.")
    claims = _closed_form_is_the_limit(config, ctx, pi0, r, metrics)
    claims += _estimator_from_base_samples(config, ctx, pi0, r, metrics, figs)
    claims += _best_of_n_against_limit(config, ctx, pi0, r, metrics, figs)
    claims += _proxy_gap_synthetic(config, ctx, pi0, r, metrics, figs)
    claims += _trainers_against_limit(config, ctx, pi0, r, metrics, figs)
    claims += _digits_real_rewards(config, ctx, metrics, figs)
    claims += _lm_pareto_frontiers(config, ctx, metrics)
    claims += _real_model_claims(config, ctx, metrics)
    claims += _jeffreys_not_sqrt_kl(pi0, r, figs["digits"], metrics)
    _figures(ctx, config, pi0, r, figs)
    notes = ("Synthetic setup: pi0 = softmax of N(0, 1.5^2) logits over K outcomes, r ~ N(0, 1). The digits task: "
             "the true reward is a logistic classifier's log-probability of the target class, so it saturates at 0 "
             "and many images nearly tie at the top; proxies are classifiers fit on small bootstraps. Trainers are "
             "toy categorical policies (Adam, exact KL/gain recorded). The paper's theorem statements and constants "
             "could not be read (only its abstract and first page); the formulas are re-derived from the abstract's "
             f"statements. Random claims are judged over seeds {_seeds(config, ctx)}.")
    use = None
    if "real_generate_calls" in metrics:  # the real model ran: its calls and tokens in the run's status
        use = C.BackendUse(calls=metrics["real_generate_calls"], failed=0, what=f"local model {config.model}",
                           prompt_tokens=metrics["real_prompt_tokens"],
                           completion_tokens=metrics["real_tokens_generated"], model=metrics["real_model"])
    return Outcome(metrics=metrics, claims=claims, notes=notes, backend=use)


# ----------------------------------------------------------------------------- the closed form

def _closed_form_is_the_limit(config, ctx, pi0, r, metrics) -> list:
    """Jeffreys identity, the closed form against cvxpy, and random feasible policies below it."""
    betas = np.logspace(np.log10(0.05), 1.0, config.n_identity_betas)
    fp = tilted_frontier(pi0, r, betas)
    j_indep = np.array([jeffreys_divergence(p, pi0) for p in tilted_policy(pi0, r, betas)])
    rel_err = np.abs(fp.gain - betas * j_indep) / np.abs(fp.gain)
    metrics["jeffreys_max_rel_error"] = float(rel_err.max())
    claims = [C.close(
        "jeffreys_identity",
        "The optimal reward improvement has a closed form governed by a Jeffreys divergence: "
        "Delta(beta) = beta J(pi_beta, pi0)",
        measured=float(rel_err.max()), target=0.0, abs_tol=1e-9, paper_value="exact identity",
        kind="reconstruction", object="toy",
        source="inferred: the abstract's closed form 'governed by a Jeffreys divergence "
                                      "term'; the exact form beta·J is our derivation, so this checks it",
        reason="an algebraic identity; 1e-9 relative leaves room only for float64 rounding over K terms",
        note=f"max relative |Delta - beta J| over {betas.size} betas in [0.05, 10], K = {pi0.size}; J summed "
             "directly from pi_beta and pi0 with scipy rel_entr. Catches: a wrong normaliser log Z or a KL "
             "computed in the wrong direction.")]

    pi0_c, r_c = synthetic_policy(config.cvx_outcomes, config.logit_scale, ctx.child_rng(2))
    closed_vals = [max_reward_gain(pi0_c, r_c, eps).gain for eps in config.cvx_budgets]
    cvx_vals = [cvxpy_max_gain(pi0_c, r_c, eps) for eps in config.cvx_budgets]
    metrics.update(cvx_budgets=config.cvx_budgets, cvx_gain=cvx_vals, closed_form_gain=closed_vals)
    claims.append(C.close(
        "closed_form_equals_cvxpy",
        "The closed-form maximal gain under a KL budget equals the constrained optimum max E_pi r s.t. KL <= eps",
        measured=float(max(abs(a - b) for a, b in zip(closed_vals, cvx_vals))), target=0.0, abs_tol=1e-5,
        paper_value="closed form is the optimum", kind="reconstruction", object="toy",
        source="inferred: the abstract's 'closed-form expression for the optimal reward improvement'; the closed "
               "form is our derivation, checked against a convex solver",
        reason="Clarabel's interior-point duality gap is ~1e-8; 1e-5 allows its conditioning on this instance "
               "and fails on any wrong beta(eps) (an error of 1% in beta moves the gain by ~1e-3)",
        note=f"K = {pi0_c.size}, budgets {config.cvx_budgets} nats; max |closed - cvxpy| reported."))

    eps_r = config.random_budget
    limit = max_reward_gain(pi0, r, eps_r).gain
    seeds = _seeds(config, ctx)
    per_seed = []
    for s in seeds:
        rand = random_feasible_gains(pi0, r, eps_r, config.n_random_policies, np.random.default_rng([s, 3]))
        per_seed.append(C.at_most(
            "no_random_policy_beats_limit", "No policy within the KL budget exceeds the closed-form gain",
            measured=float(rand.max() / limit), bound=1.0 + 1e-9, paper_value="<= 1", kind="check",
            object="toy", source="inferred: the closed form is a maximum, so no feasible policy may exceed it",
            reason="the limit is a maximum; 1e-9 allows only rounding",
            note=f"{rand.size} reward-seeking random mixtures per seed on the KL = {eps_r} boundary, K = {pi0.size}."))
    metrics["random_policy_best_ratio"] = [c.measured for c in per_seed]
    claims.append(C.over_seeds(per_seed, seeds))
    return claims


# ----------------------------------------------------------------------------- the estimator

def _estimator_claim(cid, label, exact_gain, exact_kl, est_gain, est_kl, betas, n_samples, rel_tol, object):
    """Relative error of the estimator's mean (gain and KL) per beta, with a Student-t interval over
    independent repeats; holds if every interval lies within ±rel_tol, does not hold if one lies
    entirely outside, inconclusive otherwise."""
    rows, worst = {}, None
    for j, b in enumerate(betas):
        for name, exact, est in (("gain", exact_gain[j], est_gain[:, j]), ("kl", exact_kl[j], est_kl[:, j])):
            mean, (lo, hi) = C.mean_interval((est - exact) / exact)
            rows[f"beta={b:.3g},{name}"] = {"rel_error": round(mean, 4), "interval": [round(lo, 4), round(hi, 4)]}
            if worst is None or max(abs(lo), abs(hi)) > max(abs(worst[1]), abs(worst[2])):
                worst = (mean, lo, hi)
    return C.within(
        cid, f"The covariance-form estimator predicts the achievable gain (and the KL it costs) from base "
             f"samples alone — {label} (N = {n_samples}): mean relative error of the row (beta, gain or KL) whose "
             "95% interval reaches furthest from 0",
        measured=worst[0], low=-rel_tol, high=rel_tol, interval=(worst[1], worst[2]),
        reason=f"±{rel_tol:g}: a prediction within {100 * rel_tol:g}% is what a practitioner needs to pick beta; the "
               f"plug-in ratio's O(1/N) bias is ~0.1% at N = {n_samples} and moderate beta, so an unbiased-enough "
               f"estimator passes and a wrong formula (a dropped log mean(w) in the KL, a weight shift that does "
               "not cancel) fails; every row's interval lies inside the band when the widest one does",
        paper_value="predicts achievable gains from base samples alone", kind="check", object=object,
        source="inferred: the abstract says the limit can be predicted from base samples; the estimator is the "
               "plug-in of our own closed form on the support it samples, so with enough samples it recovers that "
               "closed form by construction: a check of the implementation, not evidence for the paper",
        note=f"per-beta means and intervals: {rows}. Repeats: {est_gain.shape[0]}.")


def _estimator_from_base_samples(config, ctx, pi0, r, metrics, figs) -> list:
    eb = np.array(config.estimator_betas)
    ex = tilted_frontier(pi0, r, eb)
    rng_e = ctx.child_rng(4)
    est, kl, se, small = [], [], [], []
    for _ in range(config.estimator_repeats):
        fe = estimate_frontier(r[rng_e.choice(pi0.size, size=config.estimator_samples, p=pi0)], eb,
                               warn_unreliable=False)
        est.append(fe.gain)
        kl.append(fe.kl)
        se.append(fe.gain_se)
        ys_small = rng_e.choice(pi0.size, size=config.estimator_small_samples, p=pi0)
        small.append(estimate_frontier(r[ys_small], eb, warn_unreliable=False).gain)
    est, kl, se, small = (np.array(a) for a in (est, kl, se, small))
    se_ratio = est.std(0, ddof=1) / se.mean(0)
    metrics.update(estimator_betas=eb, estimator_exact=ex.gain, estimator_exact_kl=ex.kl,
                   estimator_mean=est.mean(0), estimator_kl_mean=kl.mean(0), estimator_se=se.mean(0),
                   estimator_se_ratio=se_ratio, estimator_small_n_mean=small.mean(0),
                   estimator_small_n_bias=small.mean(0) - ex.gain)
    figs["estimator"] = (est, eb)
    claims = [_estimator_claim("estimator_recovers_gain_and_kl", "synthetic task", ex.gain, ex.kl, est, kl, eb,
                               config.estimator_samples, config.estimator_rel_tol, "toy")]
    claims[0].note += (f" At N = {config.estimator_small_samples} the mean gain bias is "
                       f"{np.round(small.mean(0) - ex.gain, 3).tolist()} (reported, not judged: it is biased low).")
    # the std over R repeats has relative sd ~ 1/sqrt(2 (R - 1)): allow 3 of those on the log scale
    se_band = 3.0 / np.sqrt(2 * (config.estimator_repeats - 1))
    claims.append(C.within(
        "estimator_se_calibrated",
        "The delta-method standard error matches the spread of the estimator across repeats",
        measured=float(np.max(np.abs(np.log(se_ratio)))), low=0.0, high=float(se_band), paper_value=None,
        kind="check", object="toy", source="inferred: the standard error is our addition (delta method), not the paper's",
        reason=f"max |log(empirical std / reported SE)|; with {config.estimator_repeats} repeats the std is known "
               f"to ~{100 / np.sqrt(2 * (config.estimator_repeats - 1)):.0f}%, so 3 of those (ratio within "
               f"[{np.exp(-se_band):.2f}, {np.exp(se_band):.2f}]) is the band",
        note=f"ratios per beta: {np.round(se_ratio, 3).tolist()}."))
    return claims


# ----------------------------------------------------------------------------- best-of-N

def _best_of_n_against_limit(config, ctx, pi0, r, metrics, figs) -> list:
    bon = bon_and_frontier(pi0, r, config.bon_ns)
    metrics.update({f"bon_{k}": v for k, v in bon.items()})
    figs["bon"] = bon
    claims = [C.at_most(
        "bon_kl_below_bound", "Best-of-N KL <= log N - (N-1)/N",
        measured=float(np.max(bon["kl"] - bon["bound"])), bound=1e-12, paper_value="<= log N - (N-1)/N",
        kind="check", object="toy", source="Beirami et al. 2024 (best-of-N KL bound)",
        reason="exact KL on a finite support; 1e-12 allows rounding only",
        note=f"max over N in {config.bon_ns} of KL - bound. Catches: ties not grouped in the exact BoN law."),
        C.at_most(
        "bon_below_frontier", "Best-of-N's gain lies at or below the KL–reward frontier at its own KL",
        measured=float(bon["efficiency"][1:].max()), bound=1.0 + 1e-9, paper_value="<= 1", kind="check", object="toy",
        source="inferred: the frontier is a maximum over all policies with that KL",
        reason="frontier is a maximum; 1e-9 allows the root-finder's rounding",
        note=f"efficiency = BoN gain / frontier gain at the same KL, N >= 2: {np.round(bon['efficiency'], 4).tolist()}.")]
    seeds = _seeds(config, ctx)
    per_seed = []
    for s in seeds:
        p_s, r_s = (pi0, r) if s == seeds[0] else synthetic_policy(config.n_outcomes, config.logit_scale,
                                                                    np.random.default_rng([s, 1]))
        b_s = bon if s == seeds[0] else bon_and_frontier(p_s, r_s, config.bon_ns)
        per_seed.append(C.at_least(
            "bon_close_to_frontier",
            "Best-of-N closely approaches the theoretical limit — on a synthetic categorical stand-in for the "
            "paper's LM tasks",
            measured=float(b_s["efficiency"][1:].min()), bound=config.bon_min_efficiency,
            paper_value="close to the limit (LM tasks; no number in the abstract)", kind="reconstruction",
            object="toy",
            source="inferred: the abstract says best-of-N closely approaches the limit on LM tasks; the categorical "
                   "task and the threshold are ours",
            reason=f"'closely' read as BoN gain >= {config.bon_min_efficiency} x the frontier gain at the same KL "
                   f"for every N <= {max(config.bon_ns)}; not from the paper",
            tuned_after_look=f"the threshold {config.bon_min_efficiency} came from a prototype run on this setup "
                             "(0.91-0.98 there)",
            note="min over N >= 2 of the efficiency (N = 1 is the base policy itself); one random instance "
                 "(logits, rewards) per seed."))
    claims.append(C.over_seeds(per_seed, seeds))
    return claims


# ----------------------------------------------------------------------------- proxy rewards

def _weakest_step(diffs: np.ndarray) -> tuple[float, tuple[float, float], float, tuple]:
    """The step least in the expected direction among paired differences ``diffs`` (axis 0 = independent
    draws; every other entry one step that should be > 0).

    Returns ``(mean, 95% Student-t interval, z, index)`` of the step with the smallest z = mean / SE. Judged
    ``at_least 0`` on that interval this is the rule over all steps: it holds only if every step's interval
    lies above 0 (the weakest one does), does not hold when some step lies significantly below 0 (that step
    has the smallest z), and is inconclusive otherwise."""
    n = diffs.shape[0]
    z = diffs.mean(0) / (diffs.std(0, ddof=1) / np.sqrt(n) + 1e-300)
    k = np.unravel_index(np.argmin(z), z.shape)
    mean, iv = C.mean_interval(diffs[(slice(None),) + tuple(int(i) for i in k)])
    return float(mean), iv, float(z[k]), tuple(int(i) for i in k)


_PENALTY_READING = ("The abstract says the gap 'grows with the KL penalty factor' and does not define the factor. "
                    "pi_beta ∝ pi0 exp(r/beta) maximises E_pi[r] − beta·KL(pi‖pi0); we read the factor as the tilt "
                    "1/beta (the gap grows as the KL penalty beta decreases), the reading under which weaker "
                    "regularisation means more reward hacking. If the factor is beta itself the direction is the "
                    "opposite, so the direction is our inference and this is a reconstruction claim. ")


def rank_preserving_error(r: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The comonotone rearrangement of the error ``e`` along the reward ``r``: the same values, sorted so that
    the largest error sits on the outcome with the largest reward (ties in ``r`` keep their index order).

    ``r + c·rank_preserving_error(r, e)`` ranks the outcomes exactly as ``r`` does for every c >= 0, so a
    policy tilted by it cannot prefer a worse outcome: the control that removes reward hacking's mechanism
    (misranking) while keeping the error's values.

    Args:
        r, e: shape (K,), float.

    Returns:
        float64 array of shape (K,), a permutation of ``e``.

    Raises:
        ValueError: different lengths.
    """
    r, e = np.asarray(r, dtype=np.float64), np.asarray(e, dtype=np.float64)
    if r.shape != e.shape or r.ndim != 1:
        raise ValueError(f"r and e must be 1-D of the same length, got shapes {r.shape} and {e.shape}")
    out = np.empty_like(e)
    out[np.argsort(r, kind="stable")] = np.sort(e)
    return out


def _proxy_gap_synthetic(config, ctx, pi0, r, metrics, figs) -> list:
    """Proxy gap vs beta, ensemble size M and error size, over independent error draws (synthetic)."""
    sd_r = float(np.sqrt(pi0 @ (r - pi0 @ r) ** 2))
    pb = np.array(config.proxy_betas) * sd_r
    sweep = np.array(config.proxy_beta_sweep) * sd_r                    # decreasing: the claim's direction
    fig_b = np.logspace(np.log10(0.05), np.log10(2.0), 9) * sd_r      # finer grid, figure only
    all_b = np.concatenate([pb, sweep, fig_b])
    rng_p = ctx.child_rng(5)
    seed_gaps = np.zeros((config.proxy_seeds, len(config.ensemble_sizes), all_b.size))
    for s in ctx.track(range(config.proxy_seeds), "proxy error draws"):
        errs = rng_p.normal(0.0, config.proxy_sigma, (max(config.ensemble_sizes), pi0.size))
        for i, m in enumerate(config.ensemble_sizes):
            seed_gaps[s, i] = proxy_gap(pi0, r, r + errs[:m].mean(0), all_b).gap
    all_gaps = seed_gaps.mean(0)
    nb, ns = pb.size, sweep.size
    gaps, sweep_gaps = all_gaps[:, :nb], all_gaps[:, nb:nb + ns]
    sg, sw = seed_gaps[:, :, :nb], seed_gaps[:, :, nb:nb + ns]
    metrics.update(proxy_betas=pb, proxy_ensemble_sizes=config.ensemble_sizes, proxy_gap=gaps,
                   proxy_beta_sweep=sweep, proxy_gap_beta_sweep=sweep_gaps)
    figs["proxy_synthetic"] = (all_gaps[:, nb + ns:], fig_b, pb)
    draws = f"{config.proxy_seeds} independent error draws"

    mean_b, iv_b, z_b, k_b = _weakest_step(np.diff(sw, axis=2))       # gap(next, smaller beta) − gap(beta)
    peak = [float(config.proxy_beta_sweep[int(np.argmax(g))]) for g in sweep_gaps]
    claims = [C.at_least(
        "proxy_gap_grows_as_beta_falls",
        "The gap between ideal and proxy alignment (reward hacking) 'grows with the KL penalty factor' (abstract), "
        f"read as: it grows as the KL penalty beta decreases: along beta = {list(config.proxy_beta_sweep)} × sd(r), "
        "for every ensemble size M, each step to a smaller beta raises the mean gap (measured: the mean change at "
        "the weakest step)",
        measured=mean_b, bound=0.0, interval=iv_b,
        paper_value="grows with the KL penalty factor (no number in the abstract)", kind="reconstruction",
        object="toy",
        source="inferred: the abstract's 'grows with the KL penalty factor', with the factor read as 1/beta",
        domain=(-math.inf, math.inf),
        reason=f"paired differences over {draws} (sigma = {config.proxy_sigma}); Student-t interval of the step "
               "with the smallest z: holds only if every step rises significantly, does not hold if some step "
               "falls significantly. The grid runs from where the gap is still near 0 (beta = sd(r)) down to "
               "beta = 0.01 sd(r), where both policies sit on their own reward's best outcomes (the beta -> 0 limit)",
        note=_PENALTY_READING + f"Synthetic, K = {pi0.size}, independent N(0, sigma^2) errors per outcome. Weakest "
             f"step: M = {config.ensemble_sizes[k_b[0]]}, beta {config.proxy_beta_sweep[k_b[1]]} -> "
             f"{config.proxy_beta_sweep[k_b[1] + 1]} × sd(r), z = {z_b:.1f}. Mean gap per M along the grid: "
             + "; ".join(f"M={m}: {np.round(g, 4).tolist()}" for m, g in zip(config.ensemble_sizes, sweep_gaps))
             + f"; largest at beta = {peak} × sd(r) per M. Catches: a proxy policy tilted by the true reward "
             "(gap 0) or a gap with its sign flipped.")]

    mean_m, iv_m, z_m, k_m = _weakest_step(-np.diff(sg, axis=1))
    claims.append(C.at_least(
        "ensemble_shrinks_gap_independent_errors",
        f"With independent N(0, sigma^2) proxy errors the gap shrinks as the ensemble size M grows (along M = "
        f"{config.ensemble_sizes}, at every beta in {np.round(pb, 3).tolist()}; measured: the mean decrease at the "
        "weakest step)",
        measured=mean_m, bound=0.0, interval=iv_m, object="toy",
        paper_value="ensembling mitigates reward hacking", kind="check",
        source="inferred: with independent errors an ensemble of M proxies is exactly one proxy whose error has sd "
               "sigma/sqrt(M), so this restates proxy_gap_grows_with_error; a check of the ensemble's averaging. "
               "The paper claim, ensemble_shrinks_gap, is judged on real, correlated reward-model errors (digits)",
        reason=f"paired differences over {draws} per M; Student-t interval of the step with the smallest z "
               "(every step must shrink the gap significantly)",
        note=f"independent errors: M_eff = M; weakest step z = {z_m:.1f}. Mean gaps per beta: "
             + "; ".join(f"beta={b:.3g}: {np.round(gaps[:, j], 4).tolist()}" for j, b in enumerate(pb))
             + ". Catches: an ensemble that sums instead of averaging the proxies."))

    scales = np.array(config.proxy_error_scales)
    rng_s = ctx.child_rng(8)
    err_gaps = np.zeros((config.proxy_seeds, scales.size, pb.size))
    ctrl_gaps = np.zeros_like(err_gaps)
    for s in range(config.proxy_seeds):
        e = rng_s.normal(0.0, config.proxy_sigma, pi0.size)
        e_ranked = rank_preserving_error(r, e)
        for i, c in enumerate(scales):
            err_gaps[s, i] = proxy_gap(pi0, r, r + c * e, pb).gap
            ctrl_gaps[s, i] = proxy_gap(pi0, r, r + c * e_ranked, pb).gap
    egaps, cgaps = err_gaps.mean(0), ctrl_gaps.mean(0)
    metrics.update(proxy_error_scales=scales, proxy_gap_vs_error=egaps, proxy_gap_vs_error_rank_preserving=cgaps)
    mean_e, iv_e, z_e, _ = _weakest_step(np.diff(err_gaps, axis=1) - np.diff(ctrl_gaps, axis=1))
    mean_raw, iv_raw, _, _ = _weakest_step(np.diff(err_gaps, axis=1))
    claims.append(C.at_least(
        "proxy_gap_grows_with_error",
        "The gap between ideal and proxy alignment (reward hacking) grows with the magnitude of the reward error "
        f"(along error sd = {np.round(scales * config.proxy_sigma, 3).tolist()}, at every beta in "
        f"{np.round(pb, 3).tolist()}; measured: the gap's increase at the weakest step)",
        measured=mean_raw, bound=1e-9, interval=iv_raw,
        paper_value="grows with the reward error's magnitude", kind="paper", source="abstract", object="toy",
        control="the same error draws rearranged to rise with the true reward (the comonotone rearrangement: the "
                "same values over the outcomes, the largest on the best outcome), scaled along the same grid at the "
                "same betas: an error as large that never misranks outcomes, which a tilted policy cannot exploit. Its gap is <= 0 and never grows "
                "(Chebyshev's association inequality), so the paired difference (error − control) is at least the "
                "error's own increase; the verdict is on the error's own increase, the binding one of the two, and "
                "the paired difference is reported in the note",
        reason=f"paired differences over {draws} per step and beta (each draw rescaled along the grid); the weakest "
               "step must rise significantly, same rule as proxy_gap_grows_as_beta_falls",
        note=f"synthetic, K = {pi0.size}, e ~ N(0, sigma^2) per outcome scaled by {scales.tolist()}; "
             f"paired difference error − rank-preserving control at the weakest step: {mean_e:.4f} "
             f"[{iv_e[0]:.4f}, {iv_e[1]:.4f}] (z = {z_e:.1f}); mean gaps per beta (error; control): "
             + "; ".join(f"beta={b:.3g}: {np.round(egaps[:, j], 4).tolist()}; {np.round(cgaps[:, j], 4).tolist()}"
                         for j, b in enumerate(pb))
             + ". The control's gap is <= 0 and falls with the "
               "error's size (a rank-preserving error only sharpens the tilt toward the best outcomes)"))
    return claims


# ----------------------------------------------------------------------------- toy trainers

def _trainers_against_limit(config, ctx, pi0, r, metrics, figs) -> list:
    """REINFORCE / PPO / GRPO on the categorical toy, per seed, against the frontier and best-of-N."""
    bon = figs["bon"]
    log_bon_kl = np.log(np.maximum(bon["kl"][1:], 1e-300))
    seeds = _seeds(config, ctx)
    below, subopt, traces0 = [], [], {}
    for s in ctx.track(seeds, "toy trainers"):
        eff, bon_at = {}, {}
        for k, method in enumerate(("reinforce", "ppo", "grpo")):
            tr = train_policy(pi0, r, config.train_beta, method=method, steps=config.train_steps,
                              batch_size=config.train_batch, lr=config.train_lr,
                              record_every=max(1, config.train_steps // 20),
                              generator=torch_generator(1000 * s + 10 + k))
            if s == seeds[0]:
                traces0[method] = tr
            kl_end, gain_end = float(tr.kl[-1]), float(tr.gain[-1])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BudgetExceedsMaximumWarning)
                front = max_reward_gain(pi0, r, kl_end).gain
            eff[method] = gain_end / front if front > 0 else 1.0
            bon_at[method] = float(np.interp(np.log(max(kl_end, 1e-300)), log_bon_kl, bon["efficiency"][1:]))
            metrics.setdefault(f"train_{method}_kl", []).append(kl_end)
            metrics.setdefault(f"train_{method}_efficiency", []).append(eff[method])
            metrics.setdefault(f"train_{method}_bon_efficiency_at_same_kl", []).append(bon_at[method])
        below.append(C.at_most(
            "trained_below_frontier",
            "Policies trained by REINFORCE / PPO / GRPO with a KL penalty land on or below the frontier",
            measured=float(max(eff.values())), bound=1.0 + 1e-9, paper_value="below the limit", kind="check",
            object="toy",
            source="inferred: the frontier is a maximum, so no trained policy may exceed it",
            reason="exact KL and gain of the trained categorical policy; the limit is a maximum",
            note="efficiency = gain / frontier gain at the same KL: " + ", ".join(f"{m} {e:.3f}" for m, e in eff.items())))
        margin = min(bon_at[m] - eff[m] for m in ("ppo", "grpo"))
        subopt.append(C.at_least(
            "ppo_grpo_substantially_suboptimal",
            "Best-of-N closely approaches the limit while PPO and GRPO remain substantially suboptimal — checked on "
            "a toy categorical stand-in for the paper's LM tasks",
            measured=margin, bound=config.substantial_margin,
            paper_value="PPO and GRPO substantially suboptimal (no number in the abstract)", kind="reconstruction",
            object="toy", source="inferred: the abstract reports this on LM safety and summarisation tasks; the toy task, "
                   "trainers and margin are ours, so a failure here says nothing about the paper's LMs",
            reason=f"'substantially suboptimal' read against best-of-N, which the paper finds close to the limit: "
                   f"BoN's efficiency at the trainer's KL minus the trainer's, smaller of PPO and GRPO, must be "
                   f">= {config.substantial_margin} of the frontier gain; {config.train_steps} steps, "
                   f"beta = {config.train_beta}",
            note="a categorical softmax policy is the frontier's own parametrisation: its KL-regularised optimum is "
                 "on the frontier, so the gap measures optimisation only, not an LM's parametrisation. Efficiencies: "
                 + ", ".join(f"{m} {eff[m]:.3f} (BoN {bon_at[m]:.3f})" for m in ("ppo", "grpo"))))
    figs["traces"] = traces0
    return [C.over_seeds(below, seeds), C.over_seeds(subopt, seeds)]


# ----------------------------------------------------------------------------- digits

def _digits_real_rewards(config, ctx, metrics, figs) -> list:
    """Best-of-N, the estimator and the proxy gap with real classifier rewards (scikit-learn digits)."""
    task = build_digits_task(config.digits_proxies, n_train=config.digits_train_size,
                             target=config.digits_target, rng=ctx.child_rng(6))
    dpi0, dr = task.pi0, task.r_true
    sd_d = float(np.std(dr))
    bon_d = bon_and_frontier(dpi0, dr, config.bon_ns)
    metrics.update({f"digits_bon_{k}": v for k, v in bon_d.items()})
    claims = [C.at_least(
        "bon_close_to_frontier_digits",
        "Best-of-N closely approaches the limit — digits task (real classifier reward)",
        measured=float(bon_d["efficiency"][1:].min()), bound=config.bon_min_efficiency,
        paper_value="close to the limit (LM tasks)", kind="reconstruction", object="real",
        source="inferred: the abstract says best-of-N closely approaches the limit on LM tasks; the digits task "
               "and the threshold are ours",
        reason=f"same threshold as the synthetic check ({config.bon_min_efficiency}); exact best-of-N and frontier "
               "(the true reward does not depend on the seed)",
        tuned_after_look=f"the threshold {config.bon_min_efficiency} came from a prototype run of the synthetic check",
        note=f"efficiencies {np.round(bon_d['efficiency'], 4).tolist()}; KL <= bound: "
             f"{bool(np.all(bon_d['kl'] <= bon_d['bound'] + 1e-12))}.")]

    db = np.array(config.estimator_betas) * sd_d
    dex = tilted_frontier(dpi0, dr, db)
    rng_d = ctx.child_rng(7)
    dest, dkl = [], []
    for _ in range(config.estimator_repeats):
        fe = estimate_frontier(dr[rng_d.integers(0, dr.size, config.estimator_samples)], db, warn_unreliable=False)
        dest.append(fe.gain)
        dkl.append(fe.kl)
    dest, dkl = np.array(dest), np.array(dkl)
    metrics.update(digits_estimator_betas=db, digits_estimator_exact=dex.gain, digits_estimator_mean=dest.mean(0),
                   digits_estimator_kl_mean=dkl.mean(0), digits_estimator_exact_kl=dex.kl)
    claims.append(_estimator_claim("estimator_recovers_gain_and_kl_digits", "digits task", dex.gain, dex.kl, dest, dkl, db,
                                   config.estimator_samples, config.estimator_rel_tol, "real"))

    dpb = np.array(config.proxy_betas) * sd_d
    fine_b = np.logspace(np.log10(0.05), np.log10(2.0), 9) * sd_d
    seeds = _seeds(config, ctx)
    errors0, per_seed_gaps, meff, single_vs_ens = None, [], [], []
    m_big = config.digits_ensemble_sizes[-1]
    for s in seeds:
        t_s = task if s == seeds[0] else build_digits_task(
            config.digits_proxies, n_train=config.digits_train_size, target=config.digits_target,
            rng=np.random.default_rng([s, 6]))
        rows = []
        for m in config.digits_ensemble_sizes:
            groups = [t_s.r_proxies[i * m:(i + 1) * m] for i in range(config.digits_proxies // m)]
            rows.append(np.mean([proxy_gap(dpi0, dr, ensemble_reward(g), np.concatenate([dpb, fine_b])).gap
                                 for g in groups], axis=0))
        per_seed_gaps.append(np.array(rows))
        single = [proxy_gap(dpi0, dr, t_s.r_proxies[i], dpb).gap for i in range(m_big * (config.digits_proxies // m_big))]
        for i in range(config.digits_proxies // m_big):          # disjoint groups: paired units
            grp = t_s.r_proxies[i * m_big:(i + 1) * m_big]
            single_vs_ens.append([np.mean(single[i * m_big:(i + 1) * m_big], axis=0),
                                  proxy_gap(dpi0, dr, ensemble_reward(grp), dpb).gap])
        if s == seeds[0]:
            errors0 = t_s.r_proxies - dr[None, :]
            meff = [float(np.mean([effective_ensemble_size(errors0[i * m:(i + 1) * m])
                                   for i in range(config.digits_proxies // m)])) for m in config.digits_ensemble_sizes]
    G = np.array(per_seed_gaps)                     # (seeds, M, betas)
    single_vs_ens = np.array(single_vs_ens)         # (seeds × groups, 2, betas)
    dgaps, dfine = G[:, :, :dpb.size], G[:, :, dpb.size:]
    mean_fine = dfine.mean(0)
    peak = float(fine_b[int(np.argmax(mean_fine[0]))])
    metrics.update(digits_proxy_betas=dpb, digits_ensemble_sizes=config.digits_ensemble_sizes,
                   digits_proxy_gap=dgaps.mean(0), digits_proxy_gap_fine=mean_fine, digits_fine_betas=fine_b,
                   digits_effective_M=meff, digits_error_sd=float(errors0.std()))
    figs["digits"] = (dpi0, dr, bon_d, dest, db)
    figs["proxy_digits"] = (mean_fine, fine_b, dpb)
    # betas ascend along the last axis: growing as beta falls = decreasing along it
    falls_late = [bool(np.argmax(g[0]) > 0) for g in dfine]          # peak above the smallest beta
    per_seed_b = [C.at_least(
        "proxy_gap_grows_as_beta_falls_digits",
        "On a real reward (digits classifiers), the proxy gap grows as the KL penalty beta decreases (our reading "
        "of the abstract's 'grows with the KL penalty factor'), at "
        f"every step of the 9 betas from {fine_b[-1]:.3g} down to {fine_b[0]:.3g} and for every M (measured: the "
        "smallest rise of the gap over one step to a smaller beta)",
        measured=float(np.min(-np.diff(g, axis=1))), bound=0.0, domain=(-math.inf, math.inf),
        paper_value="grows with the KL penalty factor (the abstract does not say whether of the gap or a "
                    "bound on it)", kind="reconstruction", object="real",
        source="inferred: the abstract's statement applied to the gap itself on every reward; the paper may state "
               "it of a bound on the gap, or in expectation over reward errors",
        reason="exact gaps given the fitted proxies; seeds redraw the bootstrap proxies; over seeds the Student-t "
               "interval of the mean smallest rise must lie above 0",
        note=_PENALTY_READING + f"Mean gap (M=1) along ascending beta {np.round(fine_b, 3).tolist()}: "
             f"{np.round(mean_fine[0], 4).tolist()}; it rises as beta falls, peaks near beta = {peak:.3g} and then "
             f"falls (rises-then-falls in {sum(falls_late)}/{len(falls_late)} seeds): at small beta both the true "
             "and the proxy policy concentrate on the images that both rewards rank top, so the gap shrinks again. "
             "If the paper's statement is about an upper bound on the gap (which does grow as beta falls) or "
             "about the typical size of the error's effect, this is consistent with it; if it is about the gap "
             f"itself on every reward, this is a counterexample. Proxy errors sd {errors0.std():.3g} nats; proxies "
             f"fit on {config.digits_train_size} images.") for g in dfine]
    claims.append(C.over_seeds(per_seed_b, seeds))
    claims.append(_ensemble_against_single_proxy(config, dpb, single_vs_ens, meff))
    return claims


def _ensemble_against_single_proxy(config, dpb, single_vs_ens, meff) -> C.Claim:
    """The paper's "ensembling mitigates reward hacking" on real, correlated reward-model errors.

    ``single_vs_ens``: rows of (gap of each single proxy of a group, averaged over the group; gap of the
    group's ensemble), shape ``(units, 2, betas)``, one unit per disjoint group of the largest ensemble
    size on each seed. The control is the single-proxy policy (M = 1) built from the same proxies on the
    same seeds; the verdict is on the paired difference (single − ensemble) at the beta least favourable
    to the ensemble (:func:`_weakest_step`)."""
    diffs = single_vs_ens[:, 0, :] - single_vs_ens[:, 1, :]            # (units, betas): > 0 = ensemble helps
    mean, iv, z, k = _weakest_step(diffs)
    m_big = config.digits_ensemble_sizes[-1]
    single, ens = single_vs_ens[:, 0, :].mean(0), single_vs_ens[:, 1, :].mean(0)
    return C.at_least(
        "ensemble_shrinks_gap",
        f"Reward ensembling mitigates reward hacking — on a real reward with real, correlated reward-model errors "
        f"(digits classifiers fit on bootstrap samples): an ensemble of M = {m_big} proxies gives a smaller gap "
        f"than its single proxies (the M = 1 control on the same proxies and seeds), at every beta in "
        f"{np.round(dpb, 3).tolist()} (measured: the paired decrease at the least favourable beta)",
        measured=mean, bound=1e-9, interval=iv, domain=(-math.inf, math.inf),
        paper_value="ensembling mitigates reward hacking", kind="paper", source="abstract", object="real",
        control=f"the single-proxy policy (M = 1): each proxy of the same group alone, on the same seeds and "
                f"betas; verdict on the paired difference gap(single) − gap(ensemble of {m_big})",
        reason=f"{diffs.shape[0]} paired units ({config.claim_seeds} seeds × {config.digits_proxies // m_big} "
               f"disjoint groups of {m_big} proxies); Student-t interval of the beta with the smallest z: holds only "
               "if the ensemble lowers the gap significantly at every beta, does not hold if it raises it "
               "significantly at one. Bootstrap reward models share the images and the model class, so their "
               "errors are correlated and the ensemble is worth fewer than M independent proxies",
        note="mean gap single vs ensemble per beta: "
             + "; ".join(f"beta={b:.3g}: {s_:.4f} vs {e_:.4f}" for b, s_, e_ in zip(dpb, single, ens))
             + f"; least favourable beta {dpb[k[0]]:.3g}, z = {z:.1f}. Effective ensemble size from the error "
               f"correlation (first seed): {np.round(meff, 2).tolist()} for M = {config.digits_ensemble_sizes} "
               "(independent errors would give M). The synthetic check ensemble_shrinks_gap_independent_errors "
               "is the independent-error case, where an ensemble is one proxy with error sigma/sqrt(M).")


# ----------------------------------------------------------------------------- LM and sqrt-KL

def _lm_pareto_frontiers(config, ctx, metrics) -> list:
    claims = _lm_claims(config, ctx, metrics) if config.lm_experiment else []
    claims.append(C.not_checkable(
        "lm_pareto_frontiers",
        "On safety and summarisation LM tasks, best-of-N closely approaches the KL–reward limit while PPO and GRPO "
        "remain substantially suboptimal",
        paper_value="BoN closely approaches the limit; PPO and GRPO remain substantially suboptimal",
        reason="needs the paper's safety/summarisation reward models and data, and PPO/GRPO fine-tuning of a "
               "pretrained LM, none of which is available or affordable here (best-of-N against the limit on a real "
               "small model's own generations is judged in real_lm_bon_close_to_frontier)", kind="paper", source="abstract", object="real",
        full_scale=("the paper's LMs remain unavailable; as a substitute the full configuration measures best-of-N "
                    "and KL-penalised RLOO/GRPO (trl's trainers) on a small locally trained GPT-2 (claims "
                    "lm_bon_close_to_frontier and lm_pg_substantially_suboptimal)") if config.lm_experiment else
                   "nothing more: the full configuration only enlarges the categorical and digits stand-ins"))
    return claims


# ----------------------------------------------------------------------------- a real pretrained LM

#: the reason the real-model claims are not checkable when no model is configured
NO_MODEL = "no local model configured: --set model=<folder or smollm2-135m>"


def _model_folder(value: str | None):
    """The local transformers folder named by the config key ``model`` (``None`` when not set).

    Accepts a folder path (``~`` expanded). The id ``smollm2-135m`` is accepted once
    ``neurips26.backends.models.resolve_model`` exists (then every value goes through it).

    Raises:
        ValueError: one line naming the value when it is neither a folder nor a known id.
    """
    from pathlib import Path

    if value is None:
        return None
    try:
        from neurips26.backends.models import resolve_model  # added by another branch
    except ImportError:
        resolve_model = None
    if resolve_model is not None:
        return Path(resolve_model(value))
    path = Path(value).expanduser()
    if not path.is_dir():
        raise ValueError(f"model={value!r} is not a folder; allowed: a transformers model folder (config.json, "
                         "weights, tokenizer) or smollm2-135m once models are installed")
    return path


def preflight(config: Config) -> None:
    """Validate the configured model folder (config.json, weights, tokenizer) before any work.

    Raises:
        ValueError: one line naming the folder and what is missing.
    """
    from .real_lm import validate_model_folder

    folder = _model_folder(resolve_auto_backend(config).model)
    if folder is not None:
        validate_model_folder(folder)


def _real_model_claims(config: Config, ctx: RunContext, metrics: dict) -> list:
    """Best-of-N against the KL–reward frontier on a real pretrained LM's own sampled completions."""
    statements = {
        "real_lm_bon_close_to_frontier": "Best-of-N closely approaches the theoretical KL–reward limit — on a real "
                                         "pretrained LM's own generations",
        "real_lm_estimator_predicts_gain": "The covariance-form estimator predicts the achievable alignment gain from "
                                           "base-model samples alone — on a real pretrained LM, per prompt",
    }
    folder = _model_folder(config.model)
    if folder is None:
        return [C.not_checkable(cid, st, paper_value="see statement", reason=no_model_reason(config, NO_MODEL),
                                kind="paper",
                                source="abstract", object="real",
                                full_scale="the same measurement once a local model is configured")
                for cid, st in statements.items()]
    import time

    import torch

    from .real_lm import PROMPTS, lexicon_reward, load_model, sample_pool
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    t0 = time.process_time()
    try:
        model, tok = load_model(folder)
        load_cpu = time.process_time() - t0
        pool = sample_pool(model, tok, PROMPTS[:config.real_prompts], config.real_k, config.real_max_new_tokens,
                           seed=ctx.seed * 1000 + 7)
    finally:
        torch.set_num_threads(threads)
    del model
    name = model_label(config) if config.model_sha256 else folder.name
    metrics["real_prompt_tokens"] = int(sum(  # the chat-formatted prompt of each generate call
        tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, return_tensors="pt",
                                return_dict=True)["input_ids"].shape[1] for p in PROMPTS[:config.real_prompts]))
    rewards = np.array([[lexicon_reward(t) for t in row] for row in pool.texts])     # (P, K)
    return _real_claims_from(config, ctx, metrics, name, rewards, pool, load_cpu)


def _real_claims_from(config, ctx, metrics, name, rewards, pool, load_cpu) -> list:
    """The real-model claims from the pools' rewards ``(P, K)`` and the :class:`.real_lm.Pool`."""
    from .real_lm import blind_bon_efficiency, bootstrap_mean, tilted_gain, uniform_bon_frontier

    ns = config.real_bon_ns
    rng = np.random.default_rng([ctx.seed, 77])
    per_prompt = [uniform_bon_frontier(r_, ns) for r_ in rewards]
    used = [i for i, b in enumerate(per_prompt) if b is not None]
    eff = np.array([per_prompt[i]["efficiency"][1:].min() for i in used])
    # control: reward-blind best-of-N (same KL, selection on permuted rewards), paired per prompt and N
    blind = np.array([blind_bon_efficiency(rewards[i], ns, per_prompt[i]["frontier_gain"],
                                           np.random.default_rng([ctx.seed, 79, i]))[1:] for i in used])
    paired = np.array([(per_prompt[i]["efficiency"][1:] - b).min() for i, b in zip(used, blind)])
    kl_gap = max(float(np.max(per_prompt[i]["kl"] - per_prompt[i]["bound"])) for i in used)
    over = max(float(per_prompt[i]["efficiency"][1:].max()) for i in used)
    # the model's own probabilities as base weights (pi0 conditioned on the pool), a metric only
    lw = [uniform_bon_frontier(rewards[i], ns, np.exp(pool.logp[i] - pool.logp[i].max())) for i in used]
    eff_lp = [float(b["efficiency"][1:].min()) for b in lw if b is not None]
    rand_ratio = []
    for i in used:
        p_ = np.full(rewards.shape[1], 1.0 / rewards.shape[1])
        with warnings.catch_warnings():   # a budget above the attainable maximum: the maximum is the limit
            warnings.simplefilter("ignore", BudgetExceedsMaximumWarning)
            lim = max_reward_gain(p_, rewards[i], 0.5).gain
        g = random_feasible_gains(p_, rewards[i], 0.5, 200, np.random.default_rng([ctx.seed, 78, i]))
        rand_ratio.append(float(g.max() / lim))
    tokens = int(pool.n_tokens.sum())
    metrics.update(
        real_model=name, real_cpu_s=round(pool.cpu_s + load_cpu, 2), real_sample_cpu_s=round(pool.cpu_s, 2),
        real_load_cpu_s=round(load_cpu, 2), real_tokens_generated=tokens, real_generate_calls=len(pool.prompts),
        real_sequences=int(pool.n_tokens.size), real_logp_consistency_max_abs=float(np.max(np.abs(pool.logp - pool.gen_logp))),
        real_reward_mean=float(rewards.mean()), real_reward_sd=float(rewards.std()),
        real_rewards=rewards.tolist(), real_prompts_used=len(used),
        real_bon_efficiency_per_prompt=np.round(eff, 4).tolist(),
        real_bon_n=list(ns[1:]),
        real_bon_efficiency_by_n=np.round(np.mean([per_prompt[i]["efficiency"][1:] for i in used], 0), 4).tolist(),
        real_bon_kl_by_n=np.round(np.mean([per_prompt[i]["kl"][1:] for i in used], 0), 4).tolist(),
        real_bon_kl_bound=np.round(per_prompt[used[0]]["bound"][1:], 4).tolist(),
        real_bon_efficiency_logp_base=np.round(eff_lp, 4).tolist(), real_random_policy_best_ratio=max(rand_ratio),
        real_blind_bon_efficiency_by_n=np.round(blind.mean(0), 4).tolist(),
        real_bon_minus_blind_per_prompt=np.round(paired, 4).tolist(),
        real_example_completions=[pool.texts[i][:3] for i in range(min(2, len(pool.texts)))])
    setting = (f"{name}: {len(pool.prompts)} prompts x K = {rewards.shape[1]} completions sampled at temperature 1 "
               f"(<= {config.real_max_new_tokens} tokens; {tokens} tokens generated, {pool.cpu_s:.0f} CPU-s on one "
               "thread), pi0 = the empirical distribution of each prompt's pool, reward = positive minus negative "
               "sentiment-lexicon words (deterministic, ours)")
    mean, iv = bootstrap_mean(paired, rng)
    claims = [C.at_least(
        "real_lm_bon_close_to_frontier",
        f"Best-of-N closely approaches the theoretical KL–reward limit — on a real pretrained LM ({name})'s own "
        f"generations: (BoN gain − reward-blind BoN gain) / closed-form maximal gain at BoN's exact KL, worst N in "
        f"{ns[1:]}, mean over prompts",
        measured=mean, bound=config.bon_min_efficiency, interval=iv, paper_value="closely approaches the limit",
        kind="paper", source="abstract", object="real",
        control="reward-blind best-of-N on the same pools and N: the same selection on the rewards permuted among "
                "the completions (20 permutations per prompt from the run seed), which keeps best-of-N's exact KL "
                "and limit but selects without the reward; verdict on the paired per-prompt difference of the two "
                "efficiencies at each N, worst N",
        reason=f"'closely' read as >= {config.bon_min_efficiency} x the limit, the synthetic check's threshold, fixed "
               f"before any real-model run (not from the paper), now required of the part of BoN's gain that the "
               f"reward selection adds over the blind control; 95% percentile bootstrap over the {len(used)} "
               "prompts whose rewards are not all tied",
        note=f"{setting}. Per-prompt worst-N efficiency of BoN alone {np.round(eff, 3).tolist()} (mean "
             f"{eff.mean():.3f}); reward-blind BoN's mean efficiency by N {np.round(blind.mean(0), 3).tolist()}; "
             f"with pi0 conditioned on the pool by the model's own log-probabilities instead: "
             f"{np.round(eff_lp, 3).tolist()}. Best-of-N here draws from the pool (with replacement).")]
    # estimator: predict each prompt's gain at beta from half the pool, compare with the other half
    half = rewards.shape[1] // 2
    beta = config.real_beta
    pred = np.array([tilted_gain(rewards[i, :half], beta) for i in range(rewards.shape[0])])
    held = np.array([tilted_gain(rewards[i, half:2 * half], beta) for i in range(rewards.shape[0])])
    err_m = np.abs(pred - held)
    err_s = np.abs(np.roll(pred, 1) - held)
    d = err_s - err_m
    dm, div = bootstrap_mean(d, rng)
    metrics.update(real_estimator_pred=np.round(pred, 4).tolist(), real_estimator_heldout=np.round(held, 4).tolist(),
                   real_estimator_abs_err=float(err_m.mean()), real_estimator_abs_err_shuffled=float(err_s.mean()))
    claims.append(C.at_least(
        "real_lm_estimator_predicts_gain",
        f"The covariance-form estimator predicts the achievable alignment gain from base-model samples alone — on a "
        f"real pretrained LM ({name}): each prompt's gain at beta = {beta:g} predicted from half its pool is closer "
        "to the estimate from the held-out half than another prompt's prediction is (measured: mean paired "
        "decrease in absolute error)",
        measured=dm, bound=1e-9, interval=div, domain=(-math.inf, math.inf),
        paper_value="predicts achievable gains from base samples alone", kind="paper", source="abstract",
        object="real",
        control="the same prediction taken from another prompt's samples (prompts shifted by one, same pools and "
                "seed), which removes the per-prompt information; verdict on the paired difference of absolute errors",
        reason=f"holds only if the bootstrap interval (over {rewards.shape[0]} prompts) lies above 0, i.e. the "
               "prompt's own base samples predict its held-out gain better than a wrong prompt's; the held-out "
               "half is itself an estimate from K/2 samples, so this tests prediction, not exactness",
        note=f"{setting}. Mean |error| own prompt {err_m.mean():.3f} vs shifted prompt {err_s.mean():.3f}; predicted "
             f"gains {np.round(pred, 3).tolist()}, held-out {np.round(held, 3).tolist()}."))
    claims.append(C.check(
        "real_lm_no_policy_beats_frontier",
        f"On a real LM's pools ({name}) no policy within the KL budget beats the closed-form limit: best-of-N at its "
        "own KL and 200 random feasible policies at KL 0.5 per prompt stay at or below it, and best-of-N's exact KL "
        "is at most log N - (N-1)/N",
        measured={"max_bon_over_frontier": over, "max_random_over_limit": max(rand_ratio),
                  "max_bon_kl_minus_bound": kl_gap},
        holds=bool(over <= 1 + 1e-9 and max(rand_ratio) <= 1 + 1e-9 and kl_gap <= 1e-12),
        tolerance="ratios <= 1 + 1e-9 and KL - bound <= 1e-12 (rounding only)",
        paper_value="the limit is a maximum", kind="check", object="real",
        source="inferred: the closed form is a maximum over all policies at that KL; the BoN bound is Beirami et al.",
        reason="consequences of the closed form's optimality on this finite support; cannot fail unless the code "
               "is wrong, hence a check",
        note=f"mean BoN KL by N {np.round(np.mean([per_prompt[i]['kl'] for i in used], 0), 3).tolist()} vs bound "
             f"{np.round(per_prompt[used[0]]['bound'], 3).tolist()} (ties make it strictly smaller)."))
    return claims


def _jeffreys_not_sqrt_kl(pi0, r, digits, metrics) -> list:
    dpi0, dr = digits[0], digits[1]
    ratios = {}
    for name, (p_, r_) in {"synthetic": (pi0, r), "digits": (dpi0, dr)}.items():
        for eps in (1e-4, 1.0):
            ratios[f"{name}_eps{eps:g}"] = float(sqrt_kl_approximation(p_, r_, eps) / max_reward_gain(p_, r_, eps).gain)
    metrics["sqrt_kl_over_exact"] = ratios
    small_ok = all(abs(v - 1) <= 0.02 for k, v in ratios.items() if "eps0.0001" in k)
    large_off = abs(ratios["digits_eps1"] - 1) >= 0.05
    return [C.check(
        "jeffreys_not_sqrt_kl",
        "The limit is governed by a Jeffreys divergence term rather than sqrt(KL): sqrt(2 Var(r) eps) is only its "
        "small-budget limit",
        measured=ratios, holds=bool(small_ok and large_off),
        tolerance="sqrt-law / exact within 2% at eps = 1e-4 nats on both tasks, and off by >= 5% at eps = 1 on digits",
        paper_value="Jeffreys, not sqrt(KL)", kind="check", object="real",
        source="inferred: our closed-form frontier against its own small-budget Taylor limit; at eps = 1e-4 the "
               "two agree by construction and the departure at eps = 1 only shows that the digits reward is "
               "skewed, so this checks our frontier and says nothing the abstract's statement could fail on",
        reason="the correction is O(sqrt(eps) x skewness): < 2% at 1e-4; 5% is a material departure",
        note="the synthetic reward is Gaussian-like, where the sqrt law stays accurate longer.")]


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
        paper_value="close to the limit (LM tasks)", kind="reconstruction", object="toy",
        source="inferred: the abstract reports this on LM safety and summarisation tasks; the tiny LM, its "
               "reward and the threshold are ours",
        reason=f"frontier estimated from {config.lm_base_samples} base samples (covariance form); best-of-N from "
               f"the same samples; same threshold as the synthetic check ({config.bon_min_efficiency})",
        tuned_after_look=f"the threshold {config.bon_min_efficiency} came from a prototype run of the synthetic check",
        note=f"2-layer GPT-2, V = {config.lm_vocab}, L = {config.lm_length}, pretrained {config.lm_pretrain_steps} "
             f"steps on a Markov-chain corpus; N = {m.bon_n.tolist()}, KL {np.round(m.bon_kl, 3).tolist()} nats, "
             f"efficiencies {np.round(m.bon_efficiency, 3).tolist()}; PG by trl's RLOO and GRPO trainers.")]
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
        "KL-penalised policy-gradient fine-tuning (RLOO, GRPO) stays substantially below the limit while "
        "best-of-N approaches it — small locally trained LM",
        measured=measured, holds=ok,
        tolerance=f"at every beta whose trained KL is within the estimated frontier's reliable range (<= "
                  f"{m.frontier_kl[-1]:.3g} nats), BoN efficiency (interpolated at the trainer's KL) exceeds the "
                  f"trainer's by >= {config.substantial_margin}; fails if no run is in range",
        paper_value="PPO and GRPO substantially suboptimal (no number in the abstract)", kind="reconstruction",
        object="toy", source="inferred: the abstract reports this on LM tasks; the tiny LM, the trainers' settings and the "
               "margin are ours",
        reason=f"Monte Carlo KL (k1) and gain of {config.lm_eval_samples} samples per trained policy; "
               f"{config.lm_pg_steps} steps, betas {config.lm_pg_betas} x sd(r); efficiency = gain / estimated "
               "frontier gain at the same KL",
        note="trl's RLOOTrainer (k1 KL-shaped sequence reward, leave-one-out baseline) and GRPOTrainer (group "
             "advantages, per-token k3 penalty); PPO is not run on the LM (trl 1.16 has no PPO trainer)."))
    return out


def _figures(ctx, config, pi0, r, figs) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    est, eb = figs["estimator"]
    dpi0, dr, bon_d, dest, db = figs["digits"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    for ax, (title, p_, r_, b_, e_, betas_) in zip(axes, [
            ("synthetic (K = %d)" % pi0.size, pi0, r, figs["bon"], est, eb),
            ("digits (K = %d, target %d)" % (dpi0.size, config.digits_target), dpi0, dr, bon_d, dest, db)]):
        kl, gain = _frontier_curve(p_, r_)
        ax.plot(kl, gain, "-", color=COLOURS["limit"], lw=2, label="limit (closed form)")
        ax.plot(kl, sqrt_kl_approximation(p_, r_, kl), ":", color=COLOURS["limit"], lw=1,
                label=r"$\sqrt{2\,\mathrm{Var}(r)\,\mathrm{KL}}$")
        ax.plot(b_["kl"][1:], b_["gain"][1:], "o-", color=COLOURS["best-of-N"], label="best-of-N (exact)")
        for n_, x_, y_ in zip(b_["n"][1:], b_["kl"][1:], b_["gain"][1:]):
            ax.annotate(str(n_), (x_, y_), textcoords="offset points", xytext=(4, -10), fontsize=7)
        ex = tilted_frontier(p_, r_, betas_)
        ax.errorbar(ex.kl, e_.mean(0), yerr=e_.std(0), fmt="s", color=COLOURS["estimate"], ms=5,
                    label=f"estimate from {config.estimator_samples} base samples")
        if p_ is pi0:
            for m, tr in figs["traces"].items():
                ax.plot(tr.kl, tr.gain, "-", color=COLOURS[m], alpha=0.6, lw=1)
                ax.plot(tr.kl[-1], tr.gain[-1], "*", color=COLOURS[m], ms=12, label=f"{m} (beta={config.train_beta})")
        ax.set_xlabel("KL(pi || pi0) [nats]")
        ax.set_ylabel("reward gain")
        ax.set_title(title)
        ax.set_ylim(0, max(b_["gain"].max(), gain.max()) * 1.15)
        ax.legend(fontsize=7, loc="lower right")
    ctx.save_figure("frontier", fig, caption=(
        "KL–reward frontier. The black curve is the closed-form limit; the abstract predicts best-of-N (orange) "
        "close to it, and trained policies (stars, toy categorical trainers) below it. Green squares: the limit "
        "predicted from base samples alone, which should sit on the black curve; the dotted sqrt(KL) law departs "
        "from it at large KL on digits."))

    gaps, gb, pb = figs["proxy_synthetic"]
    dgaps, dgb, dpb = figs["proxy_digits"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.3), constrained_layout=True)
    for ax, (title, g_, b_, ms, cb) in zip(axes, [
            ("synthetic, independent errors", gaps, gb, config.ensemble_sizes, pb),
            ("digits, bootstrap classifiers", dgaps, dgb, config.digits_ensemble_sizes, dpb)]):
        for i, (m, row) in enumerate(zip(ms, g_)):
            ax.plot(b_, row, "o-", ms=3, color=plt.cm.viridis(i / max(1, len(ms) - 1)), label=f"M = {m}")
        for b in cb:
            ax.axvline(b, color="grey", ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("beta (KL penalty)")
        ax.set_ylabel(r"gap $E_{\pi_\beta}[r] - E_{\hat\pi_\beta}[r]$")
        ax.set_title(title)
        ax.axhline(0, color="grey", lw=0.5)
        ax.legend(fontsize=8)
    ctx.save_figure("proxy_gap", fig, caption=(
        "Reward-hacking gap against beta for ensembles of M proxy rewards (dotted lines: the betas the claims "
        "use). The abstract predicts a gap that grows as the policy is pushed harder (smaller beta here) and "
        "shrinks with M. Synthetic: both hold. Digits: the gap shrinks with M, but rises and then falls again as "
        "beta falls (both policies end on the images both rewards rank top)."))
