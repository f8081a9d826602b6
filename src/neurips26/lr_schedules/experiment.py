"""Reproduction of Bordelon & Mori (arXiv:2602.04774): optimal LR schedules for the power-law
random-feature model — easy/hard phase, baselines, batch ramps, momentum, Monte Carlo and digits.

Every number comes from the deterministic moment dynamics (:mod:`dynamics`) optimised with the
adjoint gradient, except the Monte Carlo check (sampled Gaussian features) and the real-data
check (actual SGD on digits random features). Tolerances follow the research brief §4 (a
reconstruction's thresholds) unless stated.
"""

from __future__ import annotations

import math
import time

import numpy as np
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig
from neurips26.harness.context import RunContext

from .baselines import tune_family
from .batch import batch_ramp
from .dynamics import loss_curve, stability_bound
from .monte_carlo import simulate_sgd
from .momentum import optimal_momentum_schedule
from .optimal import fit_exponent, optimal_schedule, phase_label, pontryagin_schedule, schedule_shape
from .task import PowerLawTask, Spectrum

try:  # built in parallel (issue item 7); the real-data claim degrades to "does not hold" without it
    from . import real_data as _real_data
except ImportError:  # pragma: no cover - depends on the tree state
    _real_data = None

BASELINES = ("constant", "power_law", "cosine", "wsd")


class Config(ExperimentConfig):
    """Configuration of the lr_schedules reproduction (quick: minutes on 2 CPU cores)."""

    alpha: float = Field(1.5, gt=1.0, description="spectral decay α of λ_k = k^-α (> 1)")
    beta_easy: float = Field(1.5, gt=0.0, description="source exponent β of the easy-phase task")
    beta_hard: float = Field(0.25, gt=0.0, description="source exponent β of the hard-phase task")
    sigma0_sq: float = Field(0.05, ge=0.0, description="label-noise variance σ0²")
    N: int = Field(500, ge=10, description="learned features N")
    mode_factor: int = Field(10, ge=10, description="mode truncation M = mode_factor·N (issue: M >= 10 N)")
    horizons: list[int] = Field([500, 1000, 2000, 4000], min_length=3,
                                description="horizons T (>= 3, increasing) for exponent fits")
    n_knots: int = Field(24, ge=4, description="knots of the optimal-schedule parametrisation")
    max_iter: int = Field(300, ge=1, description="L-BFGS-B iterations for the optimal schedule")
    flat_exponent: float = Field(0.1, gt=0.0, description="|exponent| counted as flat for the phase label")
    momentum_N: int = Field(500, ge=10, description="learned features for the momentum comparison")
    momentum_batch: int = Field(1, ge=1, description="batch size m of the momentum claim's verdict (brief default m = 1)")
    momentum_extra_batches: list[int] = Field([8], description="further batch sizes of the momentum comparison, "
                                              "measured and reported (not in the verdict)")
    momentum_horizons: list[int] = Field([200, 400, 800], min_length=3, description="horizons for momentum")
    momentum_knots: int = Field(8, ge=4, description="knots per schedule (η and β) for momentum")
    momentum_max_iter: int = Field(80, ge=1, description="L-BFGS-B iterations for the momentum schedules")
    batch_sizes: list[int] = Field([1, 2, 4], min_length=2, description="batch sizes at a fixed sample budget")
    batch_budget: int = Field(2000, ge=100, description="sample budget for the degeneracy check")
    mc_N: int = Field(100, ge=2, description="learned features in the Monte Carlo check")
    mc_T: int = Field(1000, ge=10, description="SGD steps in the Monte Carlo check")
    mc_seeds: int = Field(200, ge=10, description="independent SGD runs in the Monte Carlo check")
    mc_checkpoints: int = Field(10, ge=2, description="log-spaced steps compared in the Monte Carlo check")
    pontryagin_grid: int = Field(200, ge=10, description="grid cells of the continuous-time sweep")
    pontryagin_sweeps: int = Field(300, ge=1, description="forward-backward sweeps")
    real_features: int = Field(256, ge=8, description="random features on digits")
    real_T: int = Field(1000, ge=10, description="SGD steps on digits")
    real_batch: int = Field(1, ge=1, description="batch size on digits")
    real_repeats: int = Field(40, ge=2, description="independent real SGD runs averaged per schedule")
    sweep_horizons: list[int] = Field([], description="horizons of the digits-MLP horizon sweep (empty: skip)")
    sweep_model: Literal["mlp", "cnn"] = Field("mlp", description="network of the horizon sweep: mlp or cnn")
    sweep_base_lrs: list[float] = Field([0.01, 0.03, 0.1, 0.3, 1.0], min_length=2,
                                        description="base LRs tried per horizon in the sweep")
    make_figures: bool = Field(True, description="draw the report's figures (off only to save time in tests)")

    @field_validator("horizons", "momentum_horizons")
    @classmethod
    def _increasing(cls, v: list[int]) -> list[int]:
        if any(t < 10 for t in v) or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"horizons must be strictly increasing integers >= 10, got {v}")
        return v

    @field_validator("alpha", "beta_easy", "beta_hard", "sigma0_sq", "flat_exponent")
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


    @classmethod
    def full(cls) -> "Config":
        """Paper-like scale (cluster/GPU hours in pure numpy loops): N = 10⁴ modes, T to 6.4·10⁴."""
        return cls(N=10_000, horizons=[1000, 2000, 4000, 8000, 16000, 32000, 64000], n_knots=48, max_iter=1000,
                   momentum_N=5000, momentum_horizons=[1000, 2000, 4000, 8000, 16000], momentum_knots=16,
                   momentum_max_iter=400, batch_sizes=[1, 2, 4, 8, 16], batch_budget=16000, mc_N=1000,
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
                               eta_init=np.clip(start, 1e-6 * base["constant"].eta_max, 0.98 * base["constant"].eta_max))
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


def _momentum_part(cfg: Config, ctx: RunContext, m: int | None = None) -> dict:
    """SGD vs heavy ball, both with optimised schedules, in the hard phase at batch size m."""
    m = cfg.momentum_batch if m is None else m
    task = PowerLawTask(cfg.alpha, cfg.beta_hard, cfg.momentum_N, cfg.mode_factor * cfg.momentum_N, cfg.sigma0_sq)
    sp = task.spectrum()
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
                             eta_init=min(0.05 * m, 0.5 * stability_bound(spectrum.lambdas, m)))
        losses.append(o.loss)
        etas.append(o.eta)
    # batch ramps: η_c fixed across budgets (the smallest budget's optimal peak), m(s) = η_c / η*(s)
    eta_c = easy["shape"][0].peak
    ramps = [batch_ramp(spectrum, o.eta, eta_c) for o in easy["opt"]]
    return {"losses": losses, "etas": etas, "ramps": ramps, "eta_c": eta_c}


def _monte_carlo_part(cfg: Config, ctx: RunContext) -> dict:
    sp = PowerLawTask(cfg.alpha, cfg.beta_easy, cfg.mc_N, cfg.mode_factor * cfg.mc_N, cfg.sigma0_sq).spectrum()
    opt = optimal_schedule(sp, cfg.mc_T, n_knots=min(cfg.n_knots, cfg.mc_T), max_iter=cfg.max_iter,
                           eta_init=0.1 * stability_bound(sp.lambdas))
    steps = np.unique(np.round(np.geomspace(1, cfg.mc_T, cfg.mc_checkpoints)).astype(int))
    mc = simulate_sgd(sp, opt.eta, 1, n_seeds=cfg.mc_seeds, eval_steps=steps, rng=ctx.child_rng(1))
    theory = loss_curve(sp, opt.eta)[steps]
    z = (mc.mean - theory) / mc.sem
    return {"steps": steps, "mc": mc, "theory": theory, "z": z, "eta": opt.eta}


def _real_data_part(cfg: Config, ctx: RunContext) -> dict | None:
    if _real_data is None:
        return None
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
    pred, meas, meas_se = {}, {}, {}
    for i, (name, eta) in enumerate(ctx.track(list(scheds.items()), "real SGD on digits")):
        pred[name] = loss_curve(sp, eta, m)[steps] + sp.sigma0_sq  # train MSE = L + σ0²
        runs = rd.sgd_loss_curves(data, eta, m, seed=ctx.seed * 100 + i, eval_every=every, n_repeats=cfg.real_repeats,
                                  evaluate_on="train")
        meas[name] = runs.mean(axis=0)
        meas_se[name] = runs.std(axis=0, ddof=1) / math.sqrt(runs.shape[0])
    return {"fit": fit, "spectrum": sp, "schedules": scheds, "steps": steps, "pred": pred, "meas": meas,
            "meas_se": meas_se}


def _horizon_sweep_part(cfg: Config, ctx: RunContext) -> dict | None:
    """Issue item 8 demonstration: best WSD base LR per horizon for a small MLP/CNN on digits (full scale)."""
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

def _figures(ctx: RunContext, easy: dict, hard: dict, mom: dict, batch: dict, mc: dict, real: dict | None,
             pont: dict, cfg: Config) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, ph, name in ((axes[0], easy, "easy"), (axes[1], hard, "hard")):
        for T, o in zip(ph["T"], ph["opt"]):
            ax.plot(np.arange(T) / T, o.eta, label=f"optimal T={T}")
        Tm = ph["T"][-1]
        for f, ls in zip(BASELINES, (":", "-.", "--", (0, (1, 3)))):
            ax.plot(np.arange(Tm) / Tm, ph["base"][f][-1].eta, ls=ls, color="k", lw=1, label=f"{f} T={Tm}")
        ax.set(title=f"{name} phase (β={cfg.beta_easy if name == 'easy' else cfg.beta_hard}): η*_T(t)",
               xlabel="t / T", ylabel="η", yscale="log")
        ax.legend(fontsize=7)
    ctx.save_figure("schedules", fig)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for ax, ph, name in ((axes[0], easy, "easy"), (axes[1], hard, "hard")):
        sp = ph["spectrum"]
        Tm = ph["T"][-1]
        ax.plot(loss_curve(sp, ph["opt"][-1].eta), label="optimal")
        for f in BASELINES:
            ax.plot(loss_curve(sp, ph["base"][f][-1].eta), label=f)
        ax.set(title=f"{name} phase: loss curves at T={Tm}", xlabel="step t", ylabel="L_t", xscale="log", yscale="log")
        ax.legend(fontsize=7)
    ax = axes[2]
    for ph, mk in ((easy, "o"), (hard, "s")):
        R = ph["spectrum"].residual
        ax.plot(ph["T"], [o.loss - R for o in ph["opt"]], marker=mk, label=f"optimal ({ph['name']})")
        for f in ("constant", "power_law"):
            ax.plot(ph["T"], [b.loss - R for b in ph["base"][f]], marker=mk, ls="--", label=f"{f} ({ph['name']})")
    ax.set(title="final excess loss L_T − R_N vs horizon", xlabel="T", ylabel="L_T − R_N", xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ctx.save_figure("loss_curves", fig)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    ax = axes[0]
    for T, o, mo in zip(cfg.momentum_horizons, mom["sgd"], mom["mom"]):
        ax.plot(np.arange(T) / T, mo.beta, label=f"β(t), T={T}")
    ax.set(title=f"momentum schedule β(t) (hard phase, m={cfg.momentum_batch})", xlabel="t / T", ylabel="β")
    ax.legend(fontsize=7)
    ax = axes[1]
    R = mom["residual"]
    for mm in [mom] + mom.get("extra", []):
        line, = ax.plot(cfg.momentum_horizons, [o.loss - R for o in mm["sgd"]], "o-",
                        label=f"SGD, optimal η(t), m={mm['m']} (slope {mm['exp_sgd'].slope:.3f})")
        ax.plot(cfg.momentum_horizons, [o.loss - R for o in mm["mom"]], "s--", color=line.get_color(),
                label=f"heavy ball, optimal η(t), β(t), m={mm['m']} (slope {mm['exp_mom'].slope:.3f})")
    ax.set(title="hard phase: momentum", xlabel="T", ylabel="L_T − R_N", xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ax = axes[2]
    for r, T in zip(batch["ramps"], easy["T"]):
        ax.plot(np.cumsum(r.m), r.m, label=f"budget {T}: {r.steps} steps")
    ax.set(title=f"easy phase batch ramp at η_c={batch['eta_c']:.3g}", xlabel="samples", ylabel="batch m",
           xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ctx.save_figure("momentum_batch", fig)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    ax.errorbar(mc["steps"], mc["mc"].mean, yerr=3 * mc["mc"].sem, fmt="o", label=f"SGD mean ± 3 s.e. ({cfg.mc_seeds} runs)")
    ax.plot(mc["steps"], mc["theory"], "-", label="moment dynamics")
    ax.set(title="Monte Carlo vs deterministic dynamics", xlabel="step", ylabel="L_t", xscale="log", yscale="log")
    ax.legend(fontsize=7)
    ax = axes[1]
    Tm = easy["T"][-1]
    ax.plot(np.arange(Tm) / Tm, easy["opt"][-1].eta, label="numerical (discrete)")
    ax.plot(np.arange(Tm) / Tm, pont["easy"].eta, "--", label="Pontryagin (continuous)")
    ax.plot(np.arange(hard["T"][-1]) / hard["T"][-1], hard["opt"][-1].eta, label="numerical, hard phase")
    ax.plot(np.arange(hard["T"][-1]) / hard["T"][-1], pont["hard"].eta, "--", label="Pontryagin, hard phase")
    ax.set(title="numerical vs optimal-control schedule", xlabel="t / T", ylabel="η", yscale="log")
    ax.legend(fontsize=7)
    ctx.save_figure("monte_carlo_pontryagin", fig)

    if real is not None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        ax = axes[0]
        s0 = real["spectrum"].sigma0_sq
        for name in real["pred"]:
            line, = ax.plot(real["steps"][1:], real["pred"][name][1:] - s0, label=f"{name} predicted")
            ax.plot(real["steps"][1:], real["meas"][name][1:] - s0, "o", ms=2, color=line.get_color(),
                    label=f"{name} measured SGD")
        ax.set(title="digits random features: excess train loss", xlabel="step", ylabel="MSE − σ0²",
               xscale="log", yscale="log")
        ax.legend(fontsize=6)
        ax = axes[1]
        f = real["fit"]
        k = np.arange(1, f.lambdas.size + 1)
        ax.loglog(k, f.lambdas, label=f"λ_k (α={f.alpha:.2f})")
        ax.loglog(k, np.maximum(f.target_power, 1e-16), ".", ms=2, label=f"λ_k w*_k² (β={f.beta:.2f})")
        ax.set(title="digits spectrum and target power", xlabel="k")
        ax.legend(fontsize=7)
        ctx.save_figure("real_data", fig)


# ------------------------------------------------------------------------------------- run

def run(config: Config, ctx: RunContext) -> Outcome:
    """Run every part and check the paper's claims (see module docstring)."""
    cfg = config
    timings: dict[str, float] = {}
    M = cfg.mode_factor * cfg.N
    phases = {}
    for name, beta in (("easy", cfg.beta_easy), ("hard", cfg.beta_hard)):
        t0 = time.perf_counter()
        task = PowerLawTask(cfg.alpha, beta, cfg.N, M, cfg.sigma0_sq)
        sp = task.spectrum()
        ph = _phase_sweep(sp, cfg, ctx, name)
        ph.update(name=name, spectrum=sp, task=task)
        phases[name] = ph
        timings[f"{name}_phase_s"] = time.perf_counter() - t0
    easy, hard = phases["easy"], phases["hard"]

    t0 = time.perf_counter()
    pont = {}
    for name in ("easy", "hard"):
        ph = phases[name]
        pont[name] = pontryagin_schedule(ph["spectrum"], ph["T"][-1], n_grid=cfg.pontryagin_grid,
                                         sweeps=cfg.pontryagin_sweeps)
    pont_ratio = {n: float(loss_curve(phases[n]["spectrum"], pont[n].eta)[-1] / phases[n]["opt"][-1].loss)
                  for n in pont}
    timings["pontryagin_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mom = _momentum_part(cfg, ctx)
    mom["extra"] = [_momentum_part(cfg, ctx, m) for m in cfg.momentum_extra_batches if m != cfg.momentum_batch]
    timings["momentum_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    batch = _batch_part(easy["spectrum"], easy, cfg, ctx)
    timings["batch_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    mc = _monte_carlo_part(cfg, ctx)
    timings["monte_carlo_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    real_error = ""
    try:
        real = _real_data_part(cfg, ctx)
    except (AttributeError, TypeError) as exc:  # interface drift of the parallel module
        real, real_error = None, f"{type(exc).__name__}: {exc}"
    timings["real_data_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    sweep = _horizon_sweep_part(cfg, ctx)
    timings["horizon_sweep_s"] = time.perf_counter() - t0

    claims = _claims(cfg, easy, hard, mom, batch, mc, real, real_error, pont_ratio)
    if sweep is not None:
        for c in claims:
            if c.id in ("resnet_cifar5m_hard_phase", "gpt2_easy_phase"):
                c.note += (f" Digits-{cfg.sweep_model.upper()} WSD sweep here: best base LR ∝ T^{sweep['lr_exponent']:.3f}"
                           f"±{sweep['lr_exponent_se']:.3f} over T={sweep['horizons']}.")
    if cfg.make_figures:
        _figures(ctx, easy, hard, mom, batch, mc, real, pont, cfg)
    metrics = _metrics(cfg, easy, hard, mom, batch, mc, real, pont, pont_ratio, timings)
    if sweep is not None:
        metrics["horizon_sweep"] = sweep
    notes = (
        "Dynamics: exact second-moment recursion for Gaussian features (diagonal closure, brief §2, inferred); "
        "optimal schedules: 24-knot logit parametrisation dense near T, L-BFGS-B on log L_T with the adjoint "
        "gradient; baselines tuned the same way (grid start + L-BFGS-B). Loss-scaling exponents are fitted on the "
        "excess loss L_T − R_N (R_N: the N-feature floor, which no schedule can reduce; in the hard phase it is "
        f"{hard['spectrum'].residual:.3g}). Decay fraction = share of T after the last step with η ≥ 0.9·peak. "
        "Phase labels come from exponents fitted across horizons with 95% CIs, not from α, β. "
        "Momentum: heavy-ball three-moment recursion, η(t) and β(t) optimised jointly with its adjoint. "
        "Real data: predicted curves use the measured digits spectrum (λ_k, λ_k w*_k², σ0²) and are compared to "
        "the train MSE of real SGD (the distribution SGD samples from); schedules are tuned on the theory. "
        "Knots are dense near T and sparse near 0, so the early warm-up the optimum shows (peak at the first interior "
        "knot, t ≈ T/8) is only coarsely resolved."
    )
    return Outcome(metrics=metrics, claims=claims, notes=notes)


def _claims(cfg, easy, hard, mom, batch, mc, real, real_error, pont_ratio) -> list:
    cl = []
    xi_theory = easy["task"].constant_lr_exponent()
    xi_c = -easy["xi_const"].slope
    cl.append(C.close(
        "easy_best_constant_xi",
        "Easy phase: the best constant learning rate scales as η ∝ T^{-ξ} (abstract; brief §2 gives "
        "ξ = 1 − α/(αβ+1) in the noise-limited easy phase).",
        measured=xi_c, target=xi_theory, abs_tol=0.1,
        reason="brief §4 (iii): ±0.1 for finite T (≤ 4000) and finite N; the reconstruction measured 0.59 vs 0.54",
        note=f"fitted over T={cfg.horizons}, 95% CI of ξ [{-easy['xi_const'].ci_high:.3f}, {-easy['xi_const'].ci_low:.3f}]"))
    shp = easy["shape"]
    xi_p = -easy["xi_peak"].slope
    deltas = [s.delta for s in shp]
    cl.append(C.check(
        "easy_polynomial_decay",
        "Easy phase: the optimal schedule is a polynomial decay η*_T(t) ≃ T^{-ξ}(1 − t/T)^δ (abstract): the peak "
        "falls with T and the schedule decays as a power of (1 − t/T).",
        measured={"xi_peak": xi_p, "xi_peak_ci95": [-easy["xi_peak"].ci_high, -easy["xi_peak"].ci_low],
                  "delta_per_T": deltas, "phase_label": easy["label"]},
        holds=bool(0.25 <= xi_p <= 0.7 and all(d > 0 for d in deltas) and easy["label"] == "easy"),
        tolerance="0.25 <= ξ_peak <= 0.7 (brief §4 iii), every fitted δ > 0, phase label from exponents = easy",
        reason="brief §4 (iii) peak-slope band (prototype measured 0.40); the paper gives no number for ξ, δ",
        paper_value="η* ≃ T^{-ξ}(1−t/T)^δ, ξ, δ depend on features and task"))
    peaks = [s.peak for s in hard["shape"]]
    fr = [s.decay_fraction for s in hard["shape"]]
    log_ratio = abs(math.log(peaks[-1] / peaks[0]))
    cl.append(C.at_most(
        "hard_constant_peak",
        "Hard phase: the optimal schedule resembles warmup-stable-decay with a constant (in T) initial learning "
        "rate (abstract).",
        measured=log_ratio, bound=0.15,
        reason=f"brief §4 (ii): |log(peak_T/peak_(T/8))| < 0.15 (here T from {cfg.horizons[0]} to {cfg.horizons[-1]})",
        paper_value="peak LR constant in T", note=f"peaks {[round(p, 4) for p in peaks]}"))
    cl.append(C.check(
        "hard_decay_fraction_shrinks",
        "Hard phase: annealing is performed over a vanishing (in T) fraction of training steps (abstract).",
        measured={"decay_fraction": fr, "exponent": hard["decay_fraction_fit"].as_dict(), "phase_label": hard["label"]},
        holds=bool(np.all(np.diff(fr) < 0) and hard["label"] == "hard"),
        tolerance="decay fraction strictly decreasing in T and phase label from fitted exponents = hard",
        reason="brief §4 (ii): strictly decreasing; the label needs the decay-fraction exponent's CI below 0",
        paper_value="decay fraction → 0 as T → ∞"))
    ratios = {n: [o.loss / min(ph["base"]["constant"][i].loss, ph["base"]["power_law"][i].loss)
                  for i, o in enumerate(ph["opt"])] for n, ph in (("easy", easy), ("hard", hard))}
    worst = max(max(v) for v in ratios.values())
    cl.append(C.at_most(
        "optimal_beats_baselines_loss",
        "The optimal schedule beats the optimal constant (η ∝ T^{-ξ}) and optimal power-law (T^{-ξ} t^{-χ}) "
        "schedules (abstract): worst ratio L_opt / min(L_const, L_pow) over both phases and all horizons.",
        measured=worst, bound=0.95,
        reason="brief §4 (i): L_opt <= 0.95·min(L_pow, L_const) in both phases",
        paper_value="optimal < best constant, best power law (no number)",
        note=f"ratios {({k: [round(x, 3) for x in v] for k, v in ratios.items()})}"))
    exps = {n: {k: ph["loss_exp"][k].slope for k in ("optimal", "constant", "power_law")} for n, ph in
            (("easy", easy), ("hard", hard))}
    cl.append(C.check(
        "optimal_beats_baselines_exponent",
        "The optimal schedule achieves a better loss-scaling rate than the best constant and best power-law "
        "schedules (abstract).",
        measured={n: {k: round(v, 4) for k, v in d.items()} for n, d in exps.items()},
        holds=bool(all(d["optimal"] < min(d["constant"], d["power_law"]) for d in exps.values())),
        tolerance="fitted slope of log(L_T − R_N) vs log T is more negative for the optimum than for both "
                  "baselines, in both phases",
        reason="the paper states a better rate without numbers; point estimates compared (CIs in metrics)",
        paper_value="better rate than constant and power law"))
    ms, mg = mom["exp_mom"], mom["exp_sgd"]
    lower = all(a.loss < b.loss for a, b in zip(mom["mom"], mom["sgd"]))
    per_batch = {f"m={mm['m']}": {"exponent_sgd": round(mm["exp_sgd"].slope, 4),
                                 "exponent_momentum": round(mm["exp_mom"].slope, 4),
                                 "gain": round(mm["exp_sgd"].slope - mm["exp_mom"].slope, 4),
                                 "loss_ratio_momentum_over_sgd": [round(a.loss / b.loss, 4)
                                                                  for a, b in zip(mm["mom"], mm["sgd"])],
                                 "sgd_peak_over_cap": [round(float(o.eta.max() / o.eta_max), 3) for o in mm["sgd"]]}
                 for mm in [mom] + mom.get("extra", [])}
    gain = mg.slope - ms.slope
    cl.append(C.check(
        "momentum_hard_exponent",
        "Momentum with an optimised schedule β(t) achieves a better loss-scaling exponent in the hard phase "
        "(abstract).",
        measured={"batch_of_verdict": mom["m"], "exponent_sgd": mg.as_dict(), "exponent_momentum": ms.as_dict(),
                  "loss_sgd": [o.loss for o in mom["sgd"]], "loss_momentum": [o.loss for o in mom["mom"]],
                  "per_batch": per_batch},
        holds=bool(ms.slope < mg.slope and lower),
        tolerance=f"at batch m={mom['m']}: slope of log(L_T − R_N) vs log T more negative with momentum, and L_T "
                  "lower at every T",
        reason=f"the paper gives no number and no batch size; the verdict uses the brief's default m={mom['m']} "
               "(brief §2 defaults, §4 iv); point estimates compared (95% CIs reported)",
        paper_value="better exponent with momentum in the hard phase",
        note=f"N={cfg.momentum_N}, T={cfg.momentum_horizons}; exponent gain (SGD slope − momentum slope) "
             f"{gain:.3f} at m={mom['m']} against a fit SE of about {max(mg.se, ms.se):.3f}"
             + (" — a marginal gain, within the exponents' 95% CIs" if gain < 2 * max(mg.se, ms.se) else "")
             + ". Also measured (not in the verdict): "
             + "; ".join(f"{k}: gain {v['gain']:.3f}" for k, v in per_batch.items() if k != f"m={mom['m']}")
             + ". Optimal SGD peak / stability cap per batch: "
             + "; ".join(f"{k}: {v['sgd_peak_over_cap']}" for k, v in per_batch.items())
             + " — momentum gains most where SGD presses against its cap. With only 3 horizons the 95% CIs of the "
               "two exponents overlap at every m."))
    spread = max(batch["losses"]) / min(batch["losses"]) - 1
    cl.append(C.at_most(
        "batch_degenerate_optimum",
        "Joint LR/batch optimisation has a degenerate optimality condition (abstract): at a fixed sample budget, "
        "the optimal loss is (nearly) the same for every batch size (only η/m matters).",
        measured=spread, bound=0.1,
        reason="the degeneracy is exact only to leading order in ηλ_1; peak η·λ_1 ≈ 0.05–0.2 here, so O(10%) "
               "discrete-time corrections are allowed",
        paper_value="degenerate optimum",
        note=f"budget {cfg.batch_budget} samples, m={cfg.batch_sizes}: L*={[round(x, 6) for x in batch['losses']]}"))
    ramps = batch["ramps"]
    budgets = np.array(easy["T"], dtype=float)
    steps = np.array([r.steps for r in ramps], dtype=float)
    rl = np.array([r.loss for r in ramps])
    ol = np.array([o.loss for o in easy["opt"]])
    R = easy["spectrum"].residual
    e_fixed = fit_exponent(budgets, ol - R).slope
    e_ramp = fit_exponent(steps, rl - R).slope
    steps_exp = fit_exponent(budgets, steps).slope
    cl.append(C.check(
        "batch_ramp_wallclock",
        "Batch ramps improve the scaling in wall-clock time (steps) in the easy phase (abstract).",
        measured={"loss_vs_steps_exponent_fixed_batch": e_fixed, "loss_vs_steps_exponent_ramp": e_ramp,
                  "steps_vs_samples_exponent": steps_exp, "ramp_loss_over_optimal": (rl / ol).tolist(),
                  "ramp_steps": steps.tolist()},
        holds=bool(e_ramp < e_fixed and steps_exp < 1 and np.all(rl / ol <= 1.1)),
        tolerance="loss-vs-steps slope steeper with the ramp, steps grow slower than samples, and the ramp's loss "
                  "within 10% of the m=1 optimum at every budget",
        reason="10%: same O(ηλ_1) discrete-time corrections as the degeneracy claim",
        paper_value="better wall-clock scaling with batch ramps"))
    zmax = float(np.max(np.abs(mc["z"])))
    cl.append(C.at_most(
        "monte_carlo_agreement",
        "The deterministic per-mode dynamics describe real minibatch SGD on Gaussian features (brief §2 model): "
        "max |z| of the Monte Carlo mean against the recursion over the checkpoints.",
        measured=zmax, bound=3.3, paper_value="model assumption (Gaussian features)",
        reason=f"{len(mc['steps'])} checkpoints at family-wise 1%: Bonferroni z = 3.3; {cfg.mc_seeds} seeds "
               "(brief §4 used 3 s.e.)",
        note=f"relative deviations {np.round(mc['mc'].mean / mc['theory'] - 1, 3).tolist()}; the schedule is the "
             "optimal one (peak ≈ 0.2 η_max). Near the stability bound the loss distribution is heavy-tailed and "
             "the standard error itself becomes unreliable."))
    cl.append(C.at_most(
        "pontryagin_matches_numerical",
        "Where it applies (easy phase, small ηλ), the optimal-control (Pontryagin) schedule matches the numerical "
        "optimum: its discrete loss over the numerical optimum's, minus 1.",
        measured=pont_ratio["easy"] - 1, bound=0.05, paper_value="analytic solution where possible (no number)",
        reason="the continuous-time problem drops O(η²λ²) terms; at peak ηλ_1 ≈ 0.06 that is a few percent",
        note=f"hard phase ratio {pont_ratio['hard']:.4f} (reported, not claimed: the cap binds there)"))
    cl.extend(_real_claims(cfg, real, real_error))
    cl.append(C.not_checkable(
        "resnet_cifar5m_hard_phase",
        "ResNet on CIFAR-5M shows hard-phase behaviour: optimal base LRs are constant in T under sufficient "
        "annealing (abstract).",
        paper_value="hard phase (no number retrieved)", reason="CIFAR-5M and ResNet training are not available offline "
        "on 2 CPU cores",
        full_scale="runs torch_adapter.horizon_sweep (WSD annealing, 6 horizons 250–8000, 8 base LRs) on a small "
                   "CNN on digits and reports the best-base-LR exponent (≈ 0: hard-phase transfer); CIFAR-5M "
                   "itself must be supplied by the user"))
    cl.append(C.not_checkable(
        "gpt2_easy_phase",
        "GPT-2 style transformers show easy-phase behaviour: the optimal LR shifts with T even under annealing "
        "(abstract).",
        paper_value="easy phase (no number retrieved)", reason="no language-model corpus or GPU here",
        full_scale="runs the same digits-CNN horizon sweep (best base LR ∝ T^{-ξ}, ξ > 0: easy-phase shift); a "
                   "transformer needs a user-supplied corpus, passed to torch_adapter.horizon_sweep"))
    return cl


def _real_claims(cfg, real, real_error) -> list:
    st_pred = "Real data (issue item 7): the theory, fed with the digits random-feature spectrum, predicts the " \
              "final loss of real SGD for the optimal, cosine, WSD and constant schedules."
    st_order = "Real data: the ordering of the four schedules' final losses predicted by the theory matches the " \
               "measured ordering."
    if real is None:
        why = real_error or "neurips26.lr_schedules.real_data is not importable"
        return [C.check("real_data_prediction", st_pred, measured=None, holds=False, tolerance="needs real_data",
                        reason=why),
                C.check("real_data_ordering", st_order, measured=None, holds=False, tolerance="needs real_data",
                        reason=why)]
    s0 = real["spectrum"].sigma0_sq
    rel = {n: float((real["meas"][n][-1] - s0) / (real["pred"][n][-1] - s0) - 1) for n in real["pred"]}
    worst = max(abs(v) for v in rel.values())
    curve_dev = max(float(np.max(np.abs((real["meas"][n][1:] - s0) / (real["pred"][n][1:] - s0) - 1)))
                    for n in real["pred"])
    pred_order = sorted(real["pred"], key=lambda n: real["pred"][n][-1])
    meas_order = sorted(real["meas"], key=lambda n: real["meas"][n][-1])
    fit = real["fit"]
    return [
        C.at_most("real_data_prediction", st_pred + " Measured: worst |excess_measured/excess_predicted − 1|.",
                  measured=worst, bound=0.25,
                  reason="digits random features are not Gaussian (the recursion's fourth-moment term is exact only "
                         "for Gaussian features) and the excess loss is a small difference; 25% allowed, "
                         f"with {cfg.real_repeats} SGD repeats making sampling error a few percent",
                  paper_value="theory predicts real SGD (issue item 7; the paper uses CIFAR-5M/GPT-2)",
                  note=f"per schedule {({k: round(v, 3) for k, v in rel.items()})}; fitted α={fit.alpha:.3f}±"
                       f"{fit.alpha_se:.3f}, β={fit.beta:.3f}±{fit.beta_se:.3f}, σ0²={fit.sigma0_sq:.4f}; "
                       "excess = train MSE − σ0²; during training (not claimed) the worst deviation along the "
                       f"curves is {curve_dev:.2f} — the Gaussian closure overstates the SGD noise of these "
                       "bounded features at large η"),
        C.check("real_data_ordering", st_order, measured={"predicted": pred_order, "measured": meas_order},
                holds=pred_order == meas_order, tolerance="identical ordering of final train MSE",
                paper_value="theory ranks schedules as real training does (issue item 7)",
                reason="exact match of the ranking is the claim",
                note="standard errors of the measured finals: "
                     + str({k: float(v[-1]) for k, v in real["meas_se"].items()})),
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
    m["easy"]["xi_theory"] = easy["task"].constant_lr_exponent()
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
    if real is not None:
        f = real["fit"]
        m["real_data"] = {"alpha": f.alpha, "alpha_se": f.alpha_se, "beta": f.beta, "beta_se": f.beta_se,
                          "sigma0_sq": f.sigma0_sq,
                          "final_predicted": {k: float(v[-1]) for k, v in real["pred"].items()},
                          "final_measured": {k: float(v[-1]) for k, v in real["meas"].items()}}
    return m
