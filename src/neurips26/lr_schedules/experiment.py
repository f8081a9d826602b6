"""Reproduction of Bordelon & Mori (arXiv:2602.04774): optimal LR schedules for the power-law
random-feature model — easy/hard phase, baselines, batch ramps, momentum, Monte Carlo and digits.

Every number comes from the deterministic moment dynamics (:mod:`dynamics`) optimised with the
adjoint gradient, except the Monte Carlo check (sampled Gaussian features) and the real-data
check (actual SGD on digits random features). Only the paper's abstract and first page were read:
claims of kind ``paper`` restate the abstract; the rest are about our reconstruction or are checks,
and each says where its threshold came from.
"""

from __future__ import annotations

import math
import time
from typing import Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources
from neurips26.harness.context import RunContext

from . import real_data as _real_data
from .baselines import tune_family
from .batch import batch_ramp
from .dynamics import loss_curve, stability_bound
from .momentum import optimal_momentum_schedule
from .monte_carlo import simulate_sgd
from .optimal import fit_exponent, optimal_schedule, phase_label, pontryagin_schedule, schedule_shape
from .task import PowerLawTask, Spectrum

BASELINES = ("constant", "power_law", "cosine", "wsd")
#: Seeds do not change the verdicts of this system: every paper claim (and every reconstruction of
#: the moment dynamics) is computed from the deterministic per-mode loss recursion optimised by
#: L-BFGS-B, which draws nothing. The Monte Carlo check and the digits SGD runs draw from the run
#: seed, but each is judged on its own interval over its independent runs (``mc_seeds`` SGD runs,
#: ``real_repeats`` runs per schedule), so one seed is already a complete measurement; a run over
#: several seeds repeats the paper claims' numbers and must not count as replication.
DETERMINISTIC = True
# No CONFIRMATION_SEEDS: the two claims tuned after a look (optimal_beats_baselines_loss, momentum_hard_exponent)
# come from the deterministic moment dynamics, which do not depend on the seed, so a confirmation seed would
# repeat the same number and confirm nothing; they stay exploratory in the headline.


class Config(ExperimentConfig):
    """Configuration of the lr_schedules reproduction (quick: sizes set by a CPU budget of 50 s for the quick run)."""

    alpha: float = Field(1.5, gt=1.0, le=10.0, description="spectral decay α of λ_k = k^-α (> 1), easy phase")
    beta_easy: float = Field(1.5, gt=0.0, le=10.0, description="source exponent β of the easy-phase task")
    sigma0_sq: float = Field(0.05, ge=0.0, le=100.0, description="label-noise variance σ0², easy phase")
    N: int = Field(500, ge=10, le=100_000, description="learned features N, easy phase")
    mode_factor: int = Field(10, ge=10, le=1000, description="mode truncation M = mode_factor·N (M >= 10 N keeps "
                             "the truncated tail negligible)")
    alpha_hard: float = Field(2.0, gt=1.0, le=10.0, description="spectral decay α of the hard-phase task")
    beta_hard: float = Field(0.25, gt=0.0, le=10.0, description="source exponent β of the hard-phase task")
    sigma0_sq_hard: float = Field(0.0, ge=0.0, le=100.0, description="label noise of the hard-phase task (0: the "
                                  "plateau is set by the slow modes alone)")
    N_hard: int = Field(1000, ge=10, le=100_000, description="learned features of the hard-phase task")
    hard_residual_free: bool = Field(True, description="hard phase: the target lies in the N learned features "
                                     "(R_N = 0), so no residual floor acts as label noise")
    horizons: list[int] = Field([125, 250, 500, 1000], min_length=3,
                                description="horizons T (>= 3, increasing) for exponent fits (quick: 125–1000, set "
                                            "by the CPU budget of the quick run; was 500–4000)")
    n_knots: int = Field(24, ge=4, le=1000, description="knots of the optimal-schedule parametrisation")
    knot_placement: Literal["both_ends", "end"] = Field("both_ends", description="knot placement: Chebyshev "
                                                        "(dense at start and end) or dense near T only")
    max_iter: int = Field(300, ge=1, le=100_000, description="L-BFGS-B iterations for the optimal schedule")
    flat_exponent: float = Field(0.1, gt=0.0, le=1.0, description="|exponent| counted as flat for the phase label")
    momentum_N: int = Field(200, ge=10, le=100_000, description="learned features for the momentum comparison")
    momentum_batch: int = Field(1, ge=1, le=4096, description="batch size m of the momentum claim's verdict")
    momentum_extra_batches: list[int] = Field([], description="further batch sizes of the momentum comparison, "
                                              "measured and reported (not in the verdict)")
    momentum_horizons: list[int] = Field([50, 71, 100, 141, 200], min_length=3,
                                         description="horizons for momentum (5: three degrees of freedom for the "
                                                     "exponent fit; 3 left one, t-quantile 12.7; quick: 50–200, set "
                                                     "by the CPU budget of the quick run; was 200–800)")
    momentum_knots: int = Field(8, ge=4, le=1000, description="knots per schedule (η and β) for momentum")
    momentum_max_iter: int = Field(80, ge=1, le=100_000, description="L-BFGS-B iterations for the momentum schedules")
    batch_sizes: list[int] = Field([1, 2, 4], min_length=2, description="batch sizes at a fixed sample budget")
    batch_budget: int = Field(2000, ge=100, le=10_000_000, description="sample budget for the degeneracy check")
    compute_budgets: list[int] = Field([4**6, 4**7, 4**8, 4**9], min_length=3,
                                       description="compute budgets C = N·T (increasing) of the compute-optimal fit")
    compute_N_grid: list[int] = Field([4, 6, 8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512], min_length=5,
                                      description="feature counts N tried at each budget (increasing)")
    compute_grid_cells: int = Field(40, ge=10, le=100_000, description="time cells of the optimal-control "
                                    "schedule in the compute-optimal fit")
    compute_sweeps: int = Field(50, ge=1, le=100_000, description="forward-backward sweeps per schedule there (at "
                                "most; quick: 50, set by the CPU budget of the quick run; was 100)")
    mc_N: int = Field(100, ge=2, le=100_000, description="learned features in the Monte Carlo check")
    mc_T: int = Field(1000, ge=10, le=1_000_000, description="SGD steps in the Monte Carlo check")
    mc_seeds: int = Field(200, ge=10, le=100_000, description="independent SGD runs in the Monte Carlo check")
    mc_checkpoints: int = Field(10, ge=2, le=1000, description="log-spaced steps compared in the Monte Carlo check")
    pontryagin_grid: int = Field(200, ge=10, le=100_000, description="grid cells of the continuous-time sweep")
    pontryagin_sweeps: int = Field(300, ge=1, le=100_000, description="forward-backward sweeps")
    real_features: int = Field(256, ge=8, le=16_384, description="random features on digits")
    real_T: int = Field(1000, ge=10, le=1_000_000, description="SGD steps on digits")
    real_batch: int = Field(1, ge=1, le=1437, description="batch size on digits (at most the training set)")
    real_repeats: int = Field(40, ge=4, le=100_000, description="independent real SGD runs per schedule")
    real_groups: int = Field(4, ge=2, le=100, description="independent groups the real runs are split into for "
                             "the intervals (runs per group = real_repeats // real_groups)")
    sweep_horizons: list[int] = Field([], description="horizons of the digits-MLP horizon sweep (empty: skip)")
    sweep_model: Literal["mlp", "cnn"] = Field("mlp", description="network of the horizon sweep: mlp or cnn")
    sweep_base_lrs: list[float] = Field([0.01, 0.03, 0.1, 0.3, 1.0], min_length=2,
                                        description="base LRs tried per horizon in the sweep")
    make_figures: bool = Field(True, description="draw the report's figures (off only to save time in tests)")

    @field_validator("horizons", "momentum_horizons", "compute_budgets", "compute_N_grid")
    @classmethod
    def _increasing(cls, v: list[int]) -> list[int]:
        if any(t < 2 for t in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"must be strictly increasing integers >= 2, got {v}")
        if max(v) > 10_000_000:
            raise ValueError(f"values up to 10_000_000 allowed (larger runs for hours in the numpy loops), got {max(v)}")
        return v

    @field_validator("alpha", "beta_easy", "beta_hard", "alpha_hard", "sigma0_sq", "sigma0_sq_hard", "flat_exponent")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError(f"must be a finite number, got {v!r}")
        return v

    @field_validator("sweep_base_lrs")
    @classmethod
    def _base_lrs(cls, v: list[float]) -> list[float]:
        if any(not (math.isfinite(x) and x > 0) for x in v):
            raise ValueError(f"base learning rates must be finite and > 0, got {v}")
        return v

    @field_validator("momentum_extra_batches")
    @classmethod
    def _extra_batches(cls, v: list[int]) -> list[int]:
        if any(b < 1 for b in v):
            raise ValueError(f"batch sizes must be integers >= 1, got {v}")
        return v

    # T smaller than the schedule's resolution: refused here, before anything runs (cross-field checks on the
    # later field, so the one-line error names it)
    @field_validator("n_knots")
    @classmethod
    def _knots_fit(cls, v: int, info: ValidationInfo) -> int:
        hs = info.data.get("horizons")
        if hs and v > hs[0]:
            raise ValueError(f"n_knots={v} exceeds the shortest horizon {hs[0]}; allowed: n_knots <= min(horizons)")
        return v

    @field_validator("momentum_knots")
    @classmethod
    def _momentum_knots_fit(cls, v: int, info: ValidationInfo) -> int:
        hs = info.data.get("momentum_horizons")
        if hs and v > hs[0]:
            raise ValueError(f"momentum_knots={v} exceeds the shortest momentum horizon {hs[0]}; "
                             "allowed: momentum_knots <= min(momentum_horizons)")
        return v

    @field_validator("batch_budget")
    @classmethod
    def _budget_fits(cls, v: int, info: ValidationInfo) -> int:
        bs = info.data.get("batch_sizes")
        if bs and v // bs[-1] < 10:
            raise ValueError(f"batch_budget={v} leaves fewer than 10 steps at batch size {bs[-1]}; "
                             "allowed: batch_budget >= 10 * max(batch_sizes)")
        return v

    @field_validator("batch_sizes")
    @classmethod
    def _batches(cls, v: list[int]) -> list[int]:
        if v[0] != 1 or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"batch_sizes must start at 1 and increase, got {v}")
        return v


    def resources(self) -> Resources:
        """One CPU; ``hours`` is an estimate, only for the paper-like scale (``N`` >= 5000).

        Extrapolated from the quick run (50 s CPU budget; before the size cuts 129 s: easy 23 s, hard 39 s,
        momentum 37 s, compute-optimal 10 s) by the ratio of work: the moment dynamics cost ∝ steps × modes
        once N is large (the quick run's N ≤ 1000 is dominated by per-step numpy overhead, ~10× less per
        step than N = 10⁴); full has 17× the steps of the old quick horizons at 20× the modes (≈ 10× per
        step) and a 3× higher L-BFGS cap: easy + hard ≈ 4 h, momentum (N = 5000, 14× the steps) ≈ 3 h,
        compute-optimal, Pontryagin, Monte Carlo, real data ≈ 2 h, the digits-CNN horizon sweep (6
        horizons up to 8000 steps × 8 base LRs) ≈ 1 h. Not measured at that scale: about 10 h on one CPU.
        """
        return Resources(num_cpus=1, hours=10.0 if self.N >= 5000 else None, on_device="the Monte Carlo SGD runs of the schedules (torch_adapter, tensors on ctx.device)", on_cpu="the schedule optimisation (numpy/scipy on the closed-form loss curves; CPU by nature)")

    @classmethod
    def full(cls) -> "Config":
        """Paper-like scale (cluster/GPU hours in pure numpy loops): N = 10⁴ modes, T to 6.4·10⁴."""
        return cls(N=10_000, N_hard=10_000, horizons=[1000, 2000, 4000, 8000, 16000, 32000, 64000], n_knots=48,
                   max_iter=1000, momentum_N=5000, momentum_horizons=[1000, 2000, 4000, 8000, 16000], momentum_knots=16,
                   momentum_max_iter=400, momentum_extra_batches=[8], batch_sizes=[1, 2, 4, 8, 16], batch_budget=16000,
                   compute_budgets=[4**7, 4**8, 4**9, 4**10, 4**11],
                   compute_N_grid=sorted({int(round(2 ** (j / 4))) for j in range(8, 53)}), compute_grid_cells=200,
                   compute_sweeps=400, mc_N=1000,
                   mc_T=10_000, mc_seeds=2000, pontryagin_grid=2000, pontryagin_sweeps=2000,
                   real_features=1024, real_T=10_000, real_repeats=200,
                   sweep_horizons=[250, 500, 1000, 2000, 4000, 8000], sweep_model="cnn",
                   sweep_base_lrs=[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0])


# ------------------------------------------------------------------------------------- parts

def _phase_sweep(spectrum: Spectrum, cfg: Config, ctx: RunContext, name: str) -> dict:
    """Optimal schedule and tuned baselines at each horizon, plus the fitted exponents."""
    out: dict = {"T": list(cfg.horizons), "opt": [], "base": {f: [] for f in BASELINES}, "shape": []}
    for T in ctx.track(cfg.horizons, f"{name} phase horizons"):
        base = {f: tune_family(spectrum, T, f, max_iter=cfg.max_iter) for f in BASELINES}
        start = min(base.values(), key=lambda b: b.loss).eta  # best baseline as the starting schedule
        opt = optimal_schedule(spectrum, T, n_knots=cfg.n_knots, max_iter=cfg.max_iter,
                               knot_placement=cfg.knot_placement, eta_init=np.clip(start, 1e-6 * base["constant"].eta_max, 0.98 * base["constant"].eta_max))
        out["opt"].append(opt)
        out["shape"].append(schedule_shape(opt.eta))
        for f in BASELINES:
            out["base"][f].append(base[f])
    T = np.array(cfg.horizons, dtype=float)
    R = spectrum.residual
    out["xi_peak"] = fit_exponent(T, [s.peak for s in out["shape"]])
    out["decay_fraction_fit"] = fit_exponent(T, [s.decay_fraction for s in out["shape"]])
    out["xi_const"] = fit_exponent(T, [b.params["eta0"] for b in out["base"]["constant"]])
    out["loss_exp"] = {"optimal": fit_exponent(T, [o.loss - R for o in out["opt"]])}
    for f in BASELINES:
        out["loss_exp"][f] = fit_exponent(T, [b.loss - R for b in out["base"][f]])
    out["label"] = phase_label(out["xi_peak"], out["decay_fraction_fit"], cfg.flat_exponent)
    return out


def _task_spectrum(cfg: Config, phase: str, N: int | None = None) -> tuple[PowerLawTask, Spectrum]:
    """The easy- or hard-phase task and its spectrum (hard: R_N = 0 when ``hard_residual_free``)."""
    if phase == "easy":
        N = cfg.N if N is None else N
        task = PowerLawTask(cfg.alpha, cfg.beta_easy, N, cfg.mode_factor * N, cfg.sigma0_sq)
        return task, task.spectrum()
    N = cfg.N_hard if N is None else N
    task = PowerLawTask(cfg.alpha_hard, cfg.beta_hard, N, cfg.mode_factor * N, cfg.sigma0_sq_hard)
    sp = task.spectrum()
    if cfg.hard_residual_free:
        sp = Spectrum(sp.lambdas, sp.c0, 0.0, sp.sigma0_sq)
    return task, sp


def _momentum_part(cfg: Config, ctx: RunContext, m: int | None = None) -> dict:
    """SGD vs heavy ball, both with optimised schedules, on the hard-phase task at batch size m."""
    m = cfg.momentum_batch if m is None else m
    _, sp = _task_spectrum(cfg, "hard", cfg.momentum_N)
    sgd, mom = [], []
    for T in ctx.track(cfg.momentum_horizons, f"momentum (hard phase, m={m})"):
        o = optimal_schedule(sp, T, m=m, n_knots=cfg.momentum_knots, max_iter=cfg.max_iter,
                             eta_init=0.25 * stability_bound(sp.lambdas, m))
        mo = optimal_momentum_schedule(sp, T, m=m, n_knots=cfg.momentum_knots,
                                       eta_init=np.minimum(o.eta, 0.95 * o.eta_max), max_iter=cfg.momentum_max_iter)
        sgd.append(o)
        mom.append(mo)
    T = np.array(cfg.momentum_horizons, dtype=float)
    R = sp.residual
    return {"m": m, "sgd": sgd, "mom": mom, "residual": R,
            "exp_sgd": fit_exponent(T, [o.loss - R for o in sgd]),
            "exp_mom": fit_exponent(T, [o.loss - R for o in mom])}


def _batch_part(spectrum: Spectrum, easy: dict, cfg: Config, ctx: RunContext) -> dict:
    S = cfg.batch_budget
    losses, etas = [], []
    for m in ctx.track(cfg.batch_sizes, "batch sizes at fixed samples"):
        T = S // m
        o = optimal_schedule(spectrum, T, m=m, n_knots=min(cfg.n_knots, T), max_iter=cfg.max_iter,
                             knot_placement=cfg.knot_placement,
                             eta_init=min(0.05 * m, 0.5 * stability_bound(spectrum.lambdas, m)))
        losses.append(o.loss)
        etas.append(o.eta)
    # reported beside the degeneracy: the m=1 optimum's per-step schedule at the same fraction of training,
    # reused at every m (η not traded against m), on the same budget
    untraded = [float(loss_curve(spectrum, etas[0][::m][:S // m], m)[-1]) for m in cfg.batch_sizes]
    # batch ramps: η_c fixed across budgets (the smallest budget's optimal peak), m(s) = η_c / η*(s)
    eta_c = easy["shape"][0].peak
    ramps = [batch_ramp(spectrum, o.eta, eta_c) for o in easy["opt"]]
    return {"losses": losses, "etas": etas, "ramps": ramps, "eta_c": eta_c, "untraded": untraded}


def _monte_carlo_part(cfg: Config, ctx: RunContext) -> dict:
    _, sp = _task_spectrum(cfg, "easy", cfg.mc_N)
    opt = optimal_schedule(sp, cfg.mc_T, n_knots=min(cfg.n_knots, cfg.mc_T), max_iter=cfg.max_iter,
                           eta_init=0.1 * stability_bound(sp.lambdas))
    steps = np.unique(np.round(np.geomspace(1, cfg.mc_T, cfg.mc_checkpoints)).astype(int))
    mc = simulate_sgd(sp, opt.eta, 1, n_seeds=cfg.mc_seeds, eval_steps=steps, rng=ctx.child_rng(1))
    theory = loss_curve(sp, opt.eta)[steps]
    z = (mc.mean - theory) / mc.sem
    return {"steps": steps, "mc": mc, "theory": theory, "z": z, "eta": opt.eta}


def _real_data_part(cfg: Config, ctx: RunContext) -> dict | None:
    rd = _real_data
    data = rd.digits_random_features(cfg.real_features, seed=ctx.seed)
    fit = rd.estimate_power_law(data.psi_train, data.y_train)
    lam = np.asarray(fit.lambdas, dtype=float)
    keep = lam > 1e-10 * lam[0]
    sp = Spectrum.from_target_power(lam[keep], np.asarray(fit.target_power)[keep], sigma0_sq=fit.sigma0_sq)
    sp = Spectrum(sp.lambdas, sp.c0, sp.residual + float(np.asarray(fit.target_power)[~keep].sum()), sp.sigma0_sq)
    T, m = cfg.real_T, cfg.real_batch
    scheds = {"optimal": optimal_schedule(sp, T, m=m, n_knots=min(cfg.n_knots, T), max_iter=cfg.max_iter,
                                          eta_init=0.2 * stability_bound(sp.lambdas, m)).eta}
    for f in ("constant", "cosine", "wsd"):
        scheds[f] = tune_family(sp, T, f, m=m, max_iter=cfg.max_iter).eta
    every = max(1, T // 100)
    steps = rd.eval_steps(T, every)
    pred, meas, meas_se, finals = {}, {}, {}, {}
    for i, (name, eta) in enumerate(ctx.track(list(scheds.items()), "real SGD on digits")):
        pred[name] = loss_curve(sp, eta, m)[steps] + sp.sigma0_sq  # train MSE = L + σ0²
        runs = rd.sgd_loss_curves(data, eta, m, seed=ctx.seed * 100 + i, eval_every=every, n_repeats=cfg.real_repeats,
                                  evaluate_on="train")
        meas[name] = runs.mean(axis=0)
        meas_se[name] = runs.std(axis=0, ddof=1) / math.sqrt(runs.shape[0])
        finals[name] = runs[:, -1]
    return {"fit": fit, "spectrum": sp, "schedules": scheds, "steps": steps, "pred": pred, "meas": meas,
            "meas_se": meas_se, "finals": finals}


def _compute_optimal_part(cfg: Config, ctx: RunContext) -> dict:
    """Compute-optimal N*(C) at budgets C = N·T on the easy-phase task (unbounded modes, so R_N ∝ N^{-αβ}).

    At each budget and N on the grid the schedule is the optimal-control (Pontryagin) one for
    T = C // N, scored by the exact discrete dynamics; N* is the minimum of a parabola through the
    three grid points around the best (in log N, log L).
    """
    Ns = [n for n in cfg.compute_N_grid]
    n_star, losses = [], []
    for budget in ctx.track(cfg.compute_budgets, "compute-optimal N at fixed compute"):
        Ls = []
        for N in Ns:
            T = budget // N
            if T < 2:
                Ls.append(np.inf)
                continue
            sp = PowerLawTask(cfg.alpha, cfg.beta_easy, N, None, cfg.sigma0_sq).spectrum()
            p = pontryagin_schedule(sp, T, n_grid=cfg.compute_grid_cells, sweeps=cfg.compute_sweeps)
            Ls.append(float(loss_curve(sp, p.eta)[-1]))
        Ls = np.array(Ls)
        j = int(np.clip(np.argmin(Ls), 1, len(Ns) - 2))
        x, y = np.log(Ns[j - 1:j + 2]), np.log(Ls[j - 1:j + 2])
        a2, a1, _ = np.polyfit(x, y, 2)
        n_star.append(float(np.exp(-a1 / (2 * a2))) if a2 > 0 else float(Ns[int(np.argmin(Ls))]))
        losses.append(Ls.tolist())
    interior = [0 < int(np.argmin(L)) < len(Ns) - 1 for L in losses]
    return {"C": list(cfg.compute_budgets), "N_grid": Ns, "losses": losses, "N_star": n_star, "interior": interior,
            "exponent": fit_exponent(np.array(cfg.compute_budgets, dtype=float), n_star)}


def _horizon_sweep_part(cfg: Config, ctx: RunContext) -> dict | None:
    """Best WSD base LR per horizon for a small MLP/CNN on digits (full scale only)."""
    if not cfg.sweep_horizons:
        return None
    from . import torch_adapter as ta

    make = ta.digits_cnn_task if cfg.sweep_model == "cnn" else ta.digits_mlp_task
    task = make(device=ctx.device)
    res = ta.horizon_sweep(task.make_model, task.train_loss, task.eval_loss, cfg.sweep_horizons, cfg.sweep_base_lrs,
                           "wsd", seed=ctx.seed, track=ctx.track)
    return {"horizons": list(cfg.sweep_horizons), "best_base_lr": np.asarray(res.best_base_lr_interp).tolist(),
            "lr_exponent": float(res.lr_exponent), "lr_exponent_se": float(res.lr_exponent_se),
            "task": task.description}


# ------------------------------------------------------------------------------------- figures

def _figures(ctx: RunContext, easy: dict, hard: dict, mom: dict, batch: dict, mc: dict, real: dict,
             pont: dict, comp: dict, cfg: Config) -> None:
    """The report's figures; the first saved is the key figure. One colour per horizon/method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base_style = dict(zip(BASELINES, (":", "-.", "--", (0, (1, 3)))))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    for ax, ph in zip(axes, (easy, hard)):
        for T, o in zip(ph["T"], ph["opt"]):
            ax.plot(np.arange(T) / T, o.eta, label=f"optimal, T={T}")
        Tm = ph["T"][-1]
        for f in BASELINES:
            ax.plot(np.arange(Tm) / Tm, ph["base"][f][-1].eta, ls=base_style[f], color="k", lw=1,
                    label=f"tuned {f}, T={Tm}")
        ax.set(title=f"{ph['name']} phase: α={ph['task'].alpha}, β={ph['task'].beta}, σ0²={ph['task'].sigma0_sq}",
               xlabel="t / T", ylabel="η_t", yscale="log")
        ax.legend(fontsize=7, loc="lower left")
    ctx.save_figure("schedules", fig, caption=(
        "Optimal schedules η*_T(t) at each horizon T (colours) and the tuned baselines at the longest T (black). "
        "The abstract predicts a polynomial decay whose level falls with T in the easy phase (left), and "
        "warmup-stable-decay with a T-independent plateau and a shrinking decay share in the hard phase (right)."))

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    for ax, ph in zip(axes[:2], (easy, hard)):
        sp = ph["spectrum"]
        ax.plot(np.arange(1, ph["T"][-1] + 1), loss_curve(sp, ph["opt"][-1].eta)[1:], color="C0", label="optimal")
        for f in BASELINES:
            ax.plot(np.arange(1, ph["T"][-1] + 1), loss_curve(sp, ph["base"][f][-1].eta)[1:], color="k", lw=1,
                    ls=base_style[f], label=f"tuned {f}")
        ax.set(title=f"{ph['name']} phase: L_t at T={ph['T'][-1]}", xlabel="step t", ylabel="L_t", xscale="log",
               yscale="log")
        ax.legend(fontsize=7)
    ax = axes[2]
    for ph, mk in ((easy, "o"), (hard, "s")):
        R = ph["spectrum"].residual
        ax.plot(ph["T"], [o.loss - R for o in ph["opt"]], marker=mk, color="C0", label=f"optimal ({ph['name']})")
        for f, c in (("constant", "C1"), ("power_law", "C2")):
            ax.plot(ph["T"], [b.loss - R for b in ph["base"][f]], marker=mk, ls="--", color=c,
                    label=f"{f} ({ph['name']})")
    ax.set(title="final excess loss vs horizon", xlabel="T", ylabel="L_T − R_N", xscale="log", yscale="log")
    ax.legend(fontsize=7, ncol=2)
    ctx.save_figure("loss_curves", fig, caption=(
        "Loss curves at the longest horizon (left, middle) and the final excess loss against T (right). The "
        "abstract predicts that the optimal schedule (blue) beats the optimal constant and power-law schedules "
        "in rate: its line on the right should be the steepest in both phases."))

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    ax = axes[0]
    for T, mo in zip(cfg.momentum_horizons, mom["mom"]):
        ax.plot(np.arange(T) / T, mo.beta, label=f"β(t), T={T}")
    ax.set(title=f"optimal momentum β(t), hard phase, m={mom['m']}", xlabel="t / T", ylabel="β")
    ax.legend(fontsize=7)
    ax = axes[1]
    R = mom["residual"]
    for i, mm in enumerate([mom] + mom.get("extra", [])):
        ax.plot(cfg.momentum_horizons, [o.loss - R for o in mm["sgd"]], "o-", color=f"C{i}",
                label=f"SGD, m={mm['m']} (slope {mm['exp_sgd'].slope:.3f})")
        ax.plot(cfg.momentum_horizons, [o.loss - R for o in mm["mom"]], "s--", color=f"C{i}",
                label=f"heavy ball, m={mm['m']} (slope {mm['exp_mom'].slope:.3f})")
    ax.set(title="hard phase: SGD vs momentum", xlabel="T", ylabel="L_T − R_N", xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ax = axes[2]
    for r, T in zip(batch["ramps"], easy["T"]):
        ax.plot(np.cumsum(r.m), r.m, label=f"{T} samples: {r.steps} steps")
    ax.set(title=f"easy-phase batch ramp, η_c={batch['eta_c']:.3g}", xlabel="samples seen", ylabel="batch m",
           xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ctx.save_figure("momentum_batch", fig, caption=(
        "Left: optimised momentum schedules. Middle: final excess loss of SGD (solid) and heavy ball (dashed), both "
        "with optimised schedules; the abstract predicts a steeper slope with momentum in the hard phase. Right: "
        "batch ramps at a fixed learning rate, which the abstract says improve wall-clock (step) scaling in the "
        "easy phase."))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ax = axes[0]
    for i, budget in enumerate(comp["C"]):
        ax.plot(comp["N_grid"], comp["losses"][i], "o-", ms=3, color=f"C{i}", label=f"C = N·T = {budget}")
        ax.axvline(comp["N_star"][i], color=f"C{i}", ls=":", lw=1)
    ax.set(title="loss at fixed compute vs N (dotted: N*)", xlabel="N (features)", ylabel="L_T", xscale="log",
           yscale="log")
    ax.legend(fontsize=7)
    ax = axes[1]
    ex = comp["exponent"]
    ax.loglog(comp["C"], comp["N_star"], "o", color="C0", label=f"N*(C), fitted slope {ex.slope:.2f}")
    Cs = np.asarray(comp["C"], dtype=float)
    anchor = np.exp(np.mean(np.log(comp["N_star"])) - comp["predicted"] * np.mean(np.log(Cs)))  # through the data's centre
    ax.loglog(Cs, anchor * Cs ** comp["predicted"], "k--", lw=1, label=f"predicted slope {comp['predicted']:.2f}")
    ax.set(title="compute-optimal model size", xlabel="compute C = N·T", ylabel="N*")
    ax.legend(fontsize=7)
    ctx.save_figure("compute_optimal", fig, caption=(
        "Compute-optimal scaling on the easy-phase task: at each budget C the loss of the optimal-control schedule "
        "against N (left) and the minimiser N*(C) (right). Our reconstruction predicts N* ∝ C^{γ/(αβ+γ)} from the "
        "residual R_N ∝ N^{-αβ} and the optimal schedule's loss exponent γ."))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ax = axes[0]
    ax.errorbar(mc["steps"], mc["mc"].mean, yerr=3 * mc["mc"].sem, fmt="o", color="C1",
                label=f"SGD mean ± 3 s.e. ({cfg.mc_seeds} runs)")
    ax.plot(mc["steps"], mc["theory"], "-", color="C0", label="moment dynamics")
    ax.set(title="Monte Carlo SGD vs the moment dynamics", xlabel="step", ylabel="L_t", xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ax = axes[1]
    for ph, c in ((easy, "C0"), (hard, "C3")):
        Tm = ph["T"][-1]
        ax.plot(np.arange(Tm) / Tm, ph["opt"][-1].eta, color=c, label=f"numerical, {ph['name']}")
        ax.plot(np.arange(Tm) / Tm, pont[ph["name"]].eta, "--", color=c, label=f"Pontryagin, {ph['name']}")
    ax.set(title="numerical vs optimal-control schedule", xlabel="t / T", ylabel="η", yscale="log")
    ax.legend(fontsize=7)
    ctx.save_figure("monte_carlo_pontryagin", fig, caption=(
        "Left: real minibatch SGD on Gaussian features against the deterministic dynamics the schedules are "
        "optimised on (they should agree within the error bars). Right: the numerical optimum against the "
        "continuous-time optimal-control schedule at the longest horizon."))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ax = axes[0]
    s0 = real["spectrum"].sigma0_sq
    for i, name in enumerate(real["pred"]):
        ax.plot(real["steps"][1:], real["pred"][name][1:] - s0, color=f"C{i}", label=f"{name}: theory")
        ax.plot(real["steps"][1:], real["meas"][name][1:] - s0, "o", ms=2, color=f"C{i}", label=f"{name}: real SGD")
    ax.set(title="digits random features: excess train loss", xlabel="step", ylabel="MSE − σ0²",
           xscale="log", yscale="log")
    ax.legend(fontsize=6, ncol=2, loc="lower left")
    ax = axes[1]
    f = real["fit"]
    k = np.arange(1, f.lambdas.size + 1)
    ax.loglog(k, f.lambdas, color="C0", label=f"λ_k (α={f.alpha:.2f})")
    ax.loglog(k, np.maximum(f.target_power, 1e-16), ".", ms=2, color="C1", label=f"λ_k w*_k² (β={f.beta:.2f})")
    ax.set(title="digits spectrum and target power", xlabel="k")
    ax.legend(fontsize=7)
    ctx.save_figure("real_data", fig, caption=(
        "Real SGD on random features of scikit-learn digits (dots) against the theory fed with the measured "
        "spectrum (lines), for four schedules tuned on the theory; right: the measured spectrum and target power."))


# ------------------------------------------------------------------------------------- run

def run(config: Config, ctx: RunContext) -> Outcome:
    """Table of contents: sweep both phases, then one function per claim group."""
    cfg, timings = config, {}
    easy = _timed(timings, "easy_phase_s", lambda: _phase(cfg, ctx, "easy"))
    hard = _timed(timings, "hard_phase_s", lambda: _phase(cfg, ctx, "hard"))
    claims = _easy_phase_claims(cfg, easy, hard) + _hard_phase_claims(cfg, hard, easy) + _baseline_claims(easy, hard)
    mom = _timed(timings, "momentum_s", lambda: _momentum_with_extras(cfg, ctx))
    claims += _momentum_claims(cfg, mom)
    batch = _timed(timings, "batch_s", lambda: _batch_part(easy["spectrum"], easy, cfg, ctx))
    claims += _batch_claims(cfg, easy, batch)
    comp = _timed(timings, "compute_optimal_s", lambda: _compute_optimal_part(cfg, ctx))
    claims += _compute_optimal_claims(cfg, easy, comp)
    mc = _timed(timings, "monte_carlo_s", lambda: _monte_carlo_part(cfg, ctx))
    pont = _timed(timings, "pontryagin_s", lambda: _pontryagin_part(cfg, easy, hard))
    claims += _dynamics_claims(cfg, mc, pont)
    real = _timed(timings, "real_data_s", lambda: _real_data_part(cfg, ctx))
    claims += _real_data_claims(cfg, real)
    sweep = _timed(timings, "horizon_sweep_s", lambda: _horizon_sweep_part(cfg, ctx))
    claims += _real_network_claims(cfg, sweep)
    if cfg.make_figures:
        _figures(ctx, easy, hard, mom, batch, mc, real, pont, comp, cfg)
    metrics = _metrics(cfg, easy, hard, mom, batch, mc, real, pont, pont["ratio"], timings)
    metrics["compute_optimal"] = {"C": comp["C"], "N_star": comp["N_star"], "exponent": comp["exponent"].as_dict(),
                                  "predicted_exponent": comp["predicted"], "interior_minimum": comp["interior"]}
    if sweep is not None:
        metrics["horizon_sweep"] = sweep
    return Outcome(metrics=metrics, claims=claims, notes=_NOTES.format(hard_R=hard["spectrum"].residual))


_NOTES = (
    "Dynamics: exact second-moment recursion for Gaussian features (diagonal closure, inferred; checked by Monte "
    "Carlo). Optimal schedules: 24 knots of logit(η/η_max) at Chebyshev–Lobatto times (dense at both ends), "
    "L-BFGS-B on log L_T with the adjoint gradient; baselines tuned the same way. Loss-scaling exponents are fitted "
    "on the excess loss L_T − R_N (hard phase R_N = {hard_R:.3g}). Decay fraction = share of T after the last step "
    "with η ≥ 0.9·peak. Phase labels come from exponents fitted across horizons with 95% CIs, not from α, β. The "
    "hard-phase task has no label noise and no residual floor (the target lies in the learned features), so its "
    "plateau is set by the slow modes alone. Momentum: heavy-ball three-moment recursion, η(t) and β(t) optimised "
    "jointly. Real data: predicted curves use the measured digits spectrum and are compared to the train MSE of "
    "real SGD; schedules are tuned on the theory.")


def _timed(timings: dict, key: str, fn):
    t0 = time.process_time()
    out = fn()
    timings[key] = time.process_time() - t0
    return out


def _phase(cfg: Config, ctx: RunContext, name: str) -> dict:
    task, sp = _task_spectrum(cfg, name)
    ph = _phase_sweep(sp, cfg, ctx, name)
    ph.update(name=name, spectrum=sp, task=task)
    return ph


def _momentum_with_extras(cfg: Config, ctx: RunContext) -> dict:
    mom = _momentum_part(cfg, ctx)
    mom["extra"] = [_momentum_part(cfg, ctx, m) for m in cfg.momentum_extra_batches if m != cfg.momentum_batch]
    return mom


def _pontryagin_part(cfg: Config, easy: dict, hard: dict) -> dict:
    pont = {ph["name"]: pontryagin_schedule(ph["spectrum"], ph["T"][-1], n_grid=cfg.pontryagin_grid,
                                            sweeps=cfg.pontryagin_sweeps) for ph in (easy, hard)}
    pont["ratio"] = {ph["name"]: float(loss_curve(ph["spectrum"], pont[ph["name"]].eta)[-1] / ph["opt"][-1].loss)
                     for ph in (easy, hard)}
    return pont


_ABSTRACT = "abstract"


def _easy_phase_claims(cfg: Config, easy: dict, hard: dict) -> list:
    """Easy phase: the best constant LR's exponent (derived), the polynomial-decay shape (abstract, judged
    against the hard phase as its control) and a T-independent δ (a zero exponent: reconstruction)."""
    task = easy["task"]
    xi_c, xi_wrong = task.constant_lr_exponent(), task.decaying_schedule_exponent()
    fit = easy["xi_const"]
    tol = 0.5 * abs(xi_c - xi_wrong)
    shp = easy["shape"]
    T = np.array(cfg.horizons, dtype=float)
    # paired contrast with the control (the hard phase, same optimiser, knots and horizons): the slope of
    # log(peak_easy / peak_hard) against log T is ξ_hard − ξ_easy; the fit on the ratio cancels the
    # finite-T curvature common to both sweeps
    paired = fit_exponent(T, [e.peak / h.peak for e, h in zip(shp, hard["shape"])])
    xi_p, lo, hi = -paired.slope, -paired.ci_high, -paired.ci_low
    deltas = [s.delta for s in shp]
    ok = all(np.isfinite(d) and d > 0 for d in deltas)
    delta_fit = fit_exponent(T, deltas) if ok else None
    hard_deltas = [s.delta for s in hard["shape"]]
    hard_ok = all(np.isfinite(d) and d > 0 for d in hard_deltas)
    hard_delta = (f"{fit_exponent(T, hard_deltas).slope:.3f}" if hard_ok else "no value (a δ <= 0)")
    return [
        C.close(
            "easy_best_constant_xi",
            "Easy phase: the best constant learning rate scales as η_c ∝ T^{-ξ_c} with ξ_c = β/(β+1), the exponent "
            "the moment dynamics give for a constant rate (bias ∝ (ηT)^{-β} against noise ∝ η).",
            measured=-fit.slope, target=xi_c, abs_tol=tol, kind="reconstruction", object="theory",
            source="inferred: derived from the moment dynamics in continuous time (PowerLawTask.constant_lr_exponent)",
            reason=f"±{tol:.3f} = half the gap to the decaying schedule's exponent 1 − α/(αβ+1) = {xi_wrong:.3f}, so "
                   "the claim fails if the constant rate followed the wrong law; the dropped O(ηλ_1) ≈ 0.05 "
                   "discrete-time terms and finite T move the fit by about 0.01 (a prototype run measured 0.589)",
            paper_value="η ∝ T^{-ξ} (abstract, no value)",
            note=f"fitted over T={cfg.horizons}; fit 95% CI [{-fit.ci_high:.3f}, {-fit.ci_low:.3f}] reflects the "
                 f"curvature of the finite-T fit (deterministic dynamics, no sampling noise)."),
        C.at_least(
            "easy_polynomial_decay",
            "Easy phase: the optimal schedule is a polynomial decay η*_T(t) ≃ T^{-ξ}(1 − t/T)^δ whose peak falls "
            "with T, unlike the hard phase's (measured: ξ_easy − ξ_hard, the paired exponent of the peak ratio "
            "easy/hard against T).",
            measured=xi_p, bound=cfg.flat_exponent, interval=(lo, hi), kind="paper", source=_ABSTRACT,
            object="theory",
            control="the hard phase's optimal schedule (the abstract's other phase, whose peak it says is constant "
            "in T), optimised by the same L-BFGS-B on the same knots and horizons; judged on the paired slope of "
            "log(peak_easy/peak_hard) against log T",
            reason=f"the abstract gives no value of ξ; {cfg.flat_exponent} is the resolution below which an exponent "
                   "over an 8× range of T is read as flat (a 15% change); judged on the 95% CI of the paired fit "
                   "(deterministic dynamics: the interval is the fit's, from the curvature across horizons)",
            paper_value="η* ≃ T^{-ξ}(1−t/T)^δ; ξ, δ depend on features and task",
            note=f"easy-phase peak exponent alone ξ = {-easy['xi_peak'].slope:.3f} (CI [{-easy['xi_peak'].ci_high:.3f}, "
                 f"{-easy['xi_peak'].ci_low:.3f}]); control (hard phase) ξ = {-hard['xi_peak'].slope:.3f}; phase "
                 f"label from exponents: {easy['label']}; fitted δ per T {[round(d, 3) for d in deltas]}"),
        C.within(
            "easy_decay_power_constant_in_T",
            "Easy phase: the decay power δ of η*_T(t) ≃ T^{-ξ}(1 − t/T)^δ is the same at every horizon (it depends on "
            "features and task, not on T): exponent of the fitted δ against T.",
            measured=delta_fit.slope if delta_fit is not None else float("nan"), low=-cfg.flat_exponent,
            high=cfg.flat_exponent, interval=None if delta_fit is None else (delta_fit.ci_low, delta_fit.ci_high),
            kind="reconstruction", object="theory",
            source="inferred: the abstract's form T^{-ξ}(1 − t/T)^δ with δ set by features and task implies a "
                   "T-independent δ; a statement that an exponent is zero has no control that removes its "
                   "mechanism and leaves a paired difference to judge (the hard phase, where the abstract predicts "
                   "no such form, could only show δ drifting less than there, not that it is constant), so it is "
                   "judged on its own fit and counted as our reconstruction, not as evidence for the paper",
            reason=f"|exponent| ≤ {cfg.flat_exponent} is the same flatness resolution as for the peak (a 15% change "
                   f"over the {cfg.horizons[0]}–{cfg.horizons[-1]} range); judged on the fit's 95% CI over the horizons",
            paper_value="δ a constant of the task (no value)",
            note=f"fitted δ per T={cfg.horizons}: {[round(d, 3) for d in deltas]} (no value when some δ ≤ 0: a "
                 f"schedule that does not decay). Hard phase (reported, not judged): exponent of its δ {hard_delta}."),
    ]


def _hard_phase_claims(cfg: Config, hard: dict, easy: dict) -> list:
    """Hard phase: a T-independent plateau (a zero exponent: reconstruction) and a decay fraction that shrinks
    with T, judged against the easy phase as its control (abstract)."""
    peaks = [s.peak for s in hard["shape"]]
    fr = [s.decay_fraction for s in hard["shape"]]
    fr_easy = [s.decay_fraction for s in easy["shape"]]
    px = hard["xi_peak"]
    T = np.array(cfg.horizons, dtype=float)
    # paired contrast with the control (the easy phase, same optimiser and horizons): slope of
    # log(fraction_hard / fraction_easy) against log T; common artefacts of the fraction measurement
    # (knot resolution, the 0.9 plateau level) cancel in the ratio
    fx = fit_exponent(T, [a / b for a, b in zip(fr, fr_easy)])
    span = math.log(cfg.horizons[-1] / cfg.horizons[0])
    bound = math.log(1.15) / span
    return [
        C.within(
            "hard_constant_peak",
            "Hard phase: the optimal schedule resembles warmup-stable-decay with a constant (in T) initial learning "
            "rate: the exponent of the peak learning rate against T is near 0.",
            measured=px.slope, low=-bound, high=bound, interval=(px.ci_low, px.ci_high), kind="reconstruction",
            paper_value="peak LR constant in T", object="theory",
            source="inferred: the abstract's hard-phase statement, tested on our hard-phase task as a zero exponent; "
                   "a statement that an exponent is zero has no control that removes its mechanism and leaves a "
                   "paired difference to judge (the easy phase, run in the same sweep, could only show the hard "
                   "peak falls less than the easy one, not that it is constant), so it is judged on its own fit "
                   "and counted as our reconstruction, not as evidence for the paper",
            reason=f"|exponent| ≤ {bound:.3f} = a change of at most 15% over the {cfg.horizons[0]}–{cfg.horizons[-1]} "
                   "horizon range (the same resolution as the easy phase's flat threshold); judged on the fit's 95% CI",
            note=f"peaks {[round(p, 4) for p in peaks]}; peak / stability cap "
                 f"{[round(p / o.eta_max, 3) for p, o in zip(peaks, hard['opt'])]}; peak step / T "
                 f"{[round(s.peak_step / T, 3) for s, T in zip(hard['shape'], hard['T'])]} (a warm-up when > 0). "
                 f"Easy phase in the same sweep (reported, not judged): peak exponent {easy['xi_peak'].slope:.3f}."),
        C.at_most(
            "hard_decay_fraction_shrinks",
            "Hard phase: annealing is performed over a vanishing (in T) fraction of training steps, unlike the easy "
            "phase's polynomial decay over the whole run: the paired exponent of the decay fraction hard/easy "
            "against T is negative.",
            measured=fx.slope, bound=-1e-12, interval=(fx.ci_low, fx.ci_high), kind="paper", source=_ABSTRACT,
            paper_value="decay fraction → 0 as T → ∞", object="theory",
            control="the easy phase's optimal schedule (polynomial decay over a fixed share of training, by the "
            "abstract), optimised by the same L-BFGS-B on the same knots and horizons; judged on the paired slope "
            "of log(fraction_hard/fraction_easy) against log T",
            reason="a vanishing fraction needs a negative exponent relative to a decay over a fixed share (strictly: "
                   "a fraction that shrinks exactly as the control's gives 0 and does not hold; 1e-12 is round-off); judged "
                   "on the 95% CI of the paired fit over the horizons (deterministic dynamics: the interval is the "
                   "fit's, from the curvature across horizons)",
            note=f"decay fractions hard {[round(f, 3) for f in fr]}, easy {[round(f, 3) for f in fr_easy]} at "
                 f"T={cfg.horizons}; hard-phase exponent alone {hard['decay_fraction_fit'].slope:.3f} (CI "
                 f"[{hard['decay_fraction_fit'].ci_low:.3f}, {hard['decay_fraction_fit'].ci_high:.3f}]); phase "
                 f"label from exponents: {hard['label']}"),
    ]


def _baseline_claims(easy: dict, hard: dict) -> list:
    """The optimum against the optimal constant and power-law schedules: loss at each T, and rate (abstract)."""
    ratios = {n: [o.loss / min(ph["base"]["constant"][i].loss, ph["base"]["power_law"][i].loss)
                  for i, o in enumerate(ph["opt"])] for n, ph in (("easy", easy), ("hard", hard))}
    worst = max(max(v) for v in ratios.values())
    gains = {}
    for n, ph in (("easy", easy), ("hard", hard)):
        R = ph["spectrum"].residual
        opt = np.array([o.loss - R for o in ph["opt"]])
        for f in ("constant", "power_law"):
            base = np.array([b.loss - R for b in ph["base"][f]])
            gains[f"{n}/{f}"] = fit_exponent(np.array(ph["T"], dtype=float), base / opt)  # slope of L_base/L_opt
    weakest = min(gains.values(), key=lambda g: g.ci_low)
    return [
        C.at_most(
            "optimal_beats_baselines_loss",
            "At every horizon, in both phases, the optimal schedule's final loss is at most 95% of the better of the "
            "tuned constant and power-law schedules.",
            measured=worst, bound=0.95, kind="reconstruction", domain=(0, math.inf), object="theory",
            source="inferred: a fixed-T consequence of the abstract's rate statement, on our tuned baselines",
            reason="a 5% margin; the dynamics are deterministic",
            tuned_after_look="the 5% margin was taken from a prototype run of this comparison (which measured ≥ 15%)",
            paper_value="optimal < best constant, best power law (no number)",
            note=f"ratios {({k: [round(x, 3) for x in v] for k, v in ratios.items()})}"),
        C.at_least(
            "optimal_beats_baselines_exponent",
            "The optimal schedule achieves a better loss-scaling rate than the optimal constant and optimal "
            "power-law schedules: L_base/L_opt grows with T, in both phases (measured: the slope of log(L_base/L_opt) "
            "against log T of the weakest of the four comparisons).",
            measured=weakest.slope, bound=1e-9, interval=(weakest.ci_low, weakest.ci_high), kind="paper",
            source=_ABSTRACT, object="theory",
            control="the tuned constant and tuned power-law schedules, run on the same task and horizons; judged on "
            "the paired slope of log(L_base/L_opt)",
            reason="the abstract states a better rate without numbers; the paired slope cancels the curvature "
                   "common to both fits; judged on the 95% CI of the comparison with the lowest CI end",
            paper_value="better rate than constant and power law",
            note="all comparisons: " + "; ".join(f"{k}: slope {g.slope:.4f}, CI [{g.ci_low:.4f}, {g.ci_high:.4f}]"
                                                 for k, g in gains.items())),
    ]


def _momentum_claims(cfg: Config, mom: dict) -> list:
    """Momentum with an optimised β(t) against SGD with an optimised η(t), hard phase (abstract)."""
    T = np.array(cfg.momentum_horizons, dtype=float)
    R = mom["residual"]
    gain = fit_exponent(T, [(a.loss - R) / (b.loss - R) for a, b in zip(mom["sgd"], mom["mom"])])
    extra = "; ".join(f"m={mm['m']}: SGD slope {mm['exp_sgd'].slope:.3f}, momentum {mm['exp_mom'].slope:.3f}"
                      for mm in mom.get("extra", []))
    return [C.at_least(
        "momentum_hard_exponent",
        "Momentum with an optimised schedule β(t) achieves a better loss-scaling exponent in the hard phase: the "
        "slope of log(L_SGD/L_momentum) against log T is positive.",
        measured=gain.slope, bound=1e-9, interval=(gain.ci_low, gain.ci_high), kind="paper", source=_ABSTRACT,
        paper_value="better exponent with momentum in the hard phase", object="theory",
        control="SGD with its own optimised η(t) (no momentum) on the same task and horizons; judged on the paired "
        "slope of log(L_SGD/L_momentum)",
        reason="a better exponent means the loss ratio grows with T; judged on the 95% CI of the paired fit over "
               f"{len(T)} horizons (no number or batch size in the abstract)",
        tuned_after_look="momentum_horizons [200, 400, 800] -> [200, 283, 400, 566, 800]: with 3 horizons the "
                         "interval had one degree of freedom and could not resolve the sign; the 5-horizon result was "
                         "seen before this setting was committed",
        note=f"hard-phase task with N={cfg.momentum_N}, m={mom['m']}, T={cfg.momentum_horizons}; SGD slope "
             f"{mom['exp_sgd'].slope:.3f}, momentum slope {mom['exp_mom'].slope:.3f}; loss ratio momentum/SGD "
             f"{[round(a.loss / b.loss, 4) for a, b in zip(mom['mom'], mom['sgd'])]}; SGD peak / cap "
             f"{[round(float(o.eta.max() / o.eta_max), 3) for o in mom['sgd']]}. {len(T)} horizons: the fit's "
             f"t-quantile has {len(T) - 2} degrees of freedom."
             + (f" Also measured: {extra}." if extra else ""))]


def _batch_claims(cfg: Config, easy: dict, batch: dict) -> list:
    """Joint LR/batch: degenerate optimum at a fixed sample budget; batch ramps and wall-clock (abstract)."""
    spread = max(batch["losses"]) / min(batch["losses"]) - 1
    ramps = batch["ramps"]
    budgets = np.array(easy["T"], dtype=float)
    steps = np.array([r.steps for r in ramps], dtype=float)
    rl, ol = np.array([r.loss for r in ramps]), np.array([o.loss for o in easy["opt"]])
    R = easy["spectrum"].residual
    e_fixed, e_ramp = fit_exponent(budgets, ol - R).slope, fit_exponent(steps, rl - R).slope
    steps_exp = fit_exponent(budgets, steps).slope
    return [
        C.at_most(
            "batch_degenerate_optimum",
            "Joint learning-rate/batch optimisation has a degenerate optimality condition: at a fixed sample budget "
            "the optimal loss is nearly the same for every batch size (only η/m matters).",
            measured=spread, bound=0.1, kind="reconstruction", paper_value="degenerate optimum", object="theory",
            source="inferred: the abstract's degenerate optimality condition, tested as equal optimal losses across "
                   "batch sizes at a fixed sample budget; a statement that a spread is zero has no control that "
                   "removes its mechanism and leaves a paired difference to judge (a schedule not traded against m "
                   "spreads the losses, reported below, but that shows only that the optimum spreads less), so it "
                   "is judged on its own spread and counted as our reconstruction, not as evidence for the paper",
            domain=(0, math.inf),
            reason="the degeneracy is exact only to leading order in ηλ_1; peak η·λ_1 ≈ 0.05–0.2 here, so O(10%) "
                   "discrete-time corrections are allowed",
            note=f"budget {cfg.batch_budget} samples, m={cfg.batch_sizes}: L*={[round(x, 6) for x in batch['losses']]}; "
                 f"the m=1 optimum's per-step schedule reused at every m (η not traded against m, reported, not "
                 f"judged): L={[round(x, 6) for x in batch['untraded']]}, spread "
                 f"{max(batch['untraded']) / min(batch['untraded']) - 1:.3f}"),
        C.check(
            "batch_ramp_wallclock",
            "Batch ramps improve the scaling in wall-clock time (steps) in the easy phase.",
            measured={"loss_vs_steps_exponent_fixed_batch": e_fixed, "loss_vs_steps_exponent_ramp": e_ramp,
                      "steps_vs_samples_exponent": steps_exp, "ramp_loss_over_optimal": (rl / ol).tolist(),
                      "ramp_steps": steps.tolist()},
            holds=bool(e_ramp < e_fixed and steps_exp < 1 and np.all(rl / ol <= 1.1)), kind="paper", source=_ABSTRACT,
            object="theory", control="the optimal schedule at fixed batch m = 1 on the same budgets; judged on "
            "the two loss-vs-steps exponents and the ramp's loss over it",
            tolerance="loss-vs-steps slope steeper with the ramp, steps grow slower than samples, and the ramp's loss "
                      "within 10% of the m=1 optimum at every budget",
            reason="10%: the same O(ηλ_1) discrete-time corrections as the degeneracy claim; deterministic dynamics",
            paper_value="better wall-clock scaling with batch ramps"),
    ]


def _compute_optimal_claims(cfg: Config, easy: dict, comp: dict) -> list:
    """Compute-optimal N*(C) ∝ C^{γ/(αβ+γ)} (reconstruction of the title's scaling laws)."""
    ab = cfg.alpha * cfg.beta_easy
    gamma = -easy["loss_exp"]["optimal"].slope
    comp["predicted"] = gamma / (ab + gamma)
    ex = comp["exponent"]
    return [C.close(
        "compute_optimal_scaling",
        "Compute-optimal scaling (easy phase, C = N·T): the best model size grows as N* ∝ C^a with "
        "a = γ/(αβ+γ), from the residual R_N ∝ N^{-αβ} and the optimal schedule's loss exponent γ.",
        measured=ex.slope, target=comp["predicted"], abs_tol=0.1, interval=(ex.ci_low, ex.ci_high),
        kind="reconstruction", object="theory",
        source="inferred: minimising R_N + E(T) at fixed N·T; the title names compute-optimal scaling laws, the "
               "abstract gives no exponent",
        reason="±0.1: the N grid has 2^{1/2} steps, and a one-step error in N* at one budget moves the slope over a "
               f"{cfg.compute_budgets[-1] // cfg.compute_budgets[0]}× compute range by about 0.08; judged on the 95% CI",
        paper_value="compute-optimal scaling laws (title; no exponent read)",
        note=f"γ = {gamma:.3f} (optimal schedule, N={cfg.N}), αβ = {ab:.3g}; N* = {[round(n, 1) for n in comp['N_star']]} "
             f"at C = {comp['C']}; minimum inside the N grid at every budget: {all(comp['interior'])}. Schedules are "
             "the optimal-control ones (within a few % of the numerical optimum in the easy phase).")]


def _dynamics_claims(cfg: Config, mc: dict, pont: dict) -> list:
    """Checks of our machinery: Monte Carlo SGD vs the moment dynamics; Pontryagin vs numerical optimum."""
    zmax = float(np.max(np.abs(mc["z"])))
    return [
        C.at_most(
            "monte_carlo_agreement",
            "The deterministic per-mode dynamics describe real minibatch SGD on Gaussian features: max |z| of the "
            "Monte Carlo mean against the recursion over the checkpoints.",
            measured=zmax, bound=3.3, kind="check", paper_value=None, domain=(0, math.inf), object="theory",
            source="inferred: the second-moment closure is exact for Gaussian features",
            reason=f"a named test: {len(mc['steps'])} checkpoints at family-wise 1% give the Bonferroni bound z = 3.3; "
                   f"{cfg.mc_seeds} independent SGD runs",
            note=f"relative deviations {np.round(mc['mc'].mean / mc['theory'] - 1, 3).tolist()}"),
        C.at_most(
            "pontryagin_matches_numerical",
            "In the easy phase the continuous-time optimal-control (Pontryagin) schedule reaches the numerical "
            "optimum's loss: its discrete loss over the numerical optimum's, minus 1.",
            measured=pont["ratio"]["easy"] - 1, bound=0.05, kind="check", object="theory",
            source="inferred: the abstract says the schedule is computed numerically and, when possible, by optimal "
                   "control; both solvers are ours",
            paper_value="analytic solution where possible (no number)",
            reason="the continuous-time problem drops O(η²λ²) terms; at peak ηλ_1 ≈ 0.06 that is a few percent",
            note=f"hard phase ratio {pont['ratio']['hard']:.4f} (reported, not claimed: the cap binds there)"),
    ]


def _real_data_claims(cfg: Config, real: dict) -> list:
    """Our extension: the theory, fed with the digits spectrum, predicts real SGD (reconstruction)."""
    s0 = real["spectrum"].sigma0_sq
    G = cfg.real_groups
    rel_by_group = []
    for g in range(G):
        rel = {}
        for n in real["pred"]:
            runs = np.array_split(real["finals"][n], G)[g]
            rel[n] = float((runs.mean() - s0) / (real["pred"][n][-1] - s0) - 1)
        rel_by_group.append(max(abs(v) for v in rel.values()))
    worst, (lo, hi) = C.mean_interval(rel_by_group, domain=(0, math.inf))
    pred_order = sorted(real["pred"], key=lambda n: real["pred"][n][-1])
    diffs = {}
    for a, b in zip(pred_order, pred_order[1:]):  # measured final(b) − final(a) > 0 expected
        d = real["finals"][b] - real["finals"][a]
        diffs[f"{b}−{a}"] = C.mean_interval(d)
    if all(iv[0] > 0 for _, iv in diffs.values()):
        order_holds = True
    elif any(iv[1] < 0 for _, iv in diffs.values()):
        order_holds = False
    else:
        order_holds = None
    fit = real["fit"]
    src = ("inferred: our extension — the paper tests ResNet/CIFAR-5M and GPT-2; here the theory is fed the "
           "measured digits random-feature spectrum")
    return [
        C.at_most(
            "real_data_prediction",
            "The theory, fed with the digits random-feature spectrum, predicts the final train loss of real SGD "
            "for the optimal, cosine, WSD and constant schedules: worst |excess_measured/excess_predicted − 1|.",
            measured=worst, bound=0.25, interval=(lo, hi), kind="reconstruction", source=src, domain=(0, math.inf),
            object="real",
            reason="digits random features are not Gaussian (the fourth-moment term is exact only for Gaussian "
                   "features) and the excess loss is a small difference: 25% allowed; the 95% interval is over "
                   f"{G} independent groups of {cfg.real_repeats // G} SGD runs",
            paper_value=None,
            note=f"fitted α={fit.alpha:.3f}±{fit.alpha_se:.3f}, β={fit.beta:.3f}±{fit.beta_se:.3f}, "
                 f"σ0²={fit.sigma0_sq:.4f}; per-group worst deviations {[round(v, 3) for v in rel_by_group]}"),
        C.check(
            "real_data_ordering",
            "The ordering of the four schedules' final train losses predicted by the theory is the measured one.",
            measured={"predicted": pred_order,
                      "measured_differences": {k: {"mean": m, "ci95": list(iv)} for k, (m, iv) in diffs.items()}},
            holds=order_holds, kind="reconstruction", source=src, object="real",
            tolerance="for each neighbouring pair in the predicted order, the 95% CI of the measured difference "
                      "(over independent SGD runs) is above 0; inconclusive if a CI contains 0",
            reason=f"{cfg.real_repeats} independent runs per schedule; a ranking is only as sharp as the differences"),
    ]


def _real_network_claims(cfg: Config, sweep: dict | None) -> list:
    """ResNet/CIFAR-5M (hard) and GPT-2 (easy) horizon transfer: not checkable here (abstract)."""
    extra = "" if sweep is None else (f" Digits-{cfg.sweep_model.upper()} WSD sweep here: best base LR ∝ "
                                      f"T^{sweep['lr_exponent']:.3f}±{sweep['lr_exponent_se']:.3f} over "
                                      f"T={sweep['horizons']}.")
    return [
        C.not_checkable(
            "resnet_cifar5m_hard_phase",
            "ResNet on CIFAR-5M shows hard-phase behaviour: optimal base LRs are constant in T under sufficient "
            "annealing.", kind="paper", source=_ABSTRACT, object="real",
            paper_value="hard phase (no number in the abstract)",
            reason="CIFAR-5M and ResNet training are not available offline on 2 CPU cores",
            full_scale="runs torch_adapter.horizon_sweep (WSD annealing, 6 horizons 250–8000, 8 base LRs) on a small "
                       "CNN on digits and reports the best-base-LR exponent (≈ 0: hard-phase transfer); CIFAR-5M "
                       "itself must be supplied by the user", note=extra.strip()),
        C.not_checkable(
            "gpt2_easy_phase",
            "GPT-2 style transformers show easy-phase behaviour: the optimal LR shifts with T even under annealing.",
            kind="paper", source=_ABSTRACT, paper_value="easy phase (no number in the abstract)", object="real",
            reason="no language-model corpus or GPU here",
            full_scale="runs the same digits-CNN horizon sweep (best base LR ∝ T^{-ξ}, ξ > 0: easy-phase shift); a "
                       "transformer needs a user-supplied corpus, passed to torch_adapter.horizon_sweep",
            note=extra.strip()),
    ]


def _metrics(cfg, easy, hard, mom, batch, mc, real, pont, pont_ratio, timings) -> dict:
    m: dict = {"timings_s": timings}
    for name, ph in (("easy", easy), ("hard", hard)):
        m[name] = {
            "T": ph["T"], "residual_R_N": ph["spectrum"].residual, "phase_label": ph["label"],
            "loss_optimal": [o.loss for o in ph["opt"]],
            "loss": {f: [b.loss for b in ph["base"][f]] for f in BASELINES},
            "baseline_params": {f: [b.params for b in ph["base"][f]] for f in BASELINES},
            "peak": [s.peak for s in ph["shape"]], "peak_step": [s.peak_step for s in ph["shape"]],
            "decay_fraction": [s.decay_fraction for s in ph["shape"]], "delta": [s.delta for s in ph["shape"]],
            "xi_peak": ph["xi_peak"].as_dict(), "xi_constant": ph["xi_const"].as_dict(),
            "decay_fraction_exponent": ph["decay_fraction_fit"].as_dict(),
            "loss_exponents": {k: v.as_dict() for k, v in ph["loss_exp"].items()},
            "optimizer_iterations": [o.n_iter for o in ph["opt"]],
            "pontryagin_over_numerical": pont_ratio[name], "pontryagin_sweeps": pont[name].sweeps,
        }
    m["easy"]["xi_constant_theory"] = easy["task"].constant_lr_exponent()
    m["easy"]["xi_decaying_schedule_theory"] = easy["task"].decaying_schedule_exponent()
    m["momentum"] = {"T": cfg.momentum_horizons, "loss_sgd": [o.loss for o in mom["sgd"]],
                     "loss_momentum": [o.loss for o in mom["mom"]], "unstable_trials": [o.n_unstable for o in mom["mom"]],
                     "exponent_sgd": mom["exp_sgd"].as_dict(), "exponent_momentum": mom["exp_mom"].as_dict(),
                     "batch": mom["m"],
                     "extra_batches": {str(mm["m"]): {"loss_sgd": [o.loss for o in mm["sgd"]],
                                                      "loss_momentum": [o.loss for o in mm["mom"]],
                                                      "exponent_sgd": mm["exp_sgd"].as_dict(),
                                                      "exponent_momentum": mm["exp_mom"].as_dict()}
                                       for mm in mom.get("extra", [])}}
    m["batch"] = {"sizes": cfg.batch_sizes, "loss_at_budget": batch["losses"], "eta_c": batch["eta_c"],
                  "ramp_steps": [r.steps for r in batch["ramps"]], "ramp_loss": [r.loss for r in batch["ramps"]]}
    m["monte_carlo"] = {"steps": mc["steps"].tolist(), "mean": mc["mc"].mean.tolist(), "sem": mc["mc"].sem.tolist(),
                        "theory": mc["theory"].tolist(), "z": mc["z"].tolist()}
    if real is not None:  # always present; kept for callers passing None
        f = real["fit"]
        m["real_data"] = {"alpha": f.alpha, "alpha_se": f.alpha_se, "beta": f.beta, "beta_se": f.beta_se,
                          "sigma0_sq": f.sigma0_sq,
                          "final_predicted": {k: float(v[-1]) for k, v in real["pred"].items()},
                          "final_measured": {k: float(v[-1]) for k, v in real["meas"].items()}}
    return m
