"""Reproduction of paper 13 (Lanczos Gaussian sampler) at laptop scale.

Claim groups (each a function below, called in order by :func:`run`):

A. Exact path KL vs T on a 2-D anisotropic Gaussian mixture for β I, trace-matched isotropic,
   exact diagonal and full covariance (exact mean; paired Monte Carlo, :mod:`.path_kl`).
B. Lanczos accuracy: relative error ‖ξ_k − Σ^{1/2}z‖/‖Σ^{1/2}z‖ vs k for several κ, and
   exactness at k = d.
C. Digits (64-D): a full-covariance GaussianMixture fitted on scikit-learn digits is the data
   law (closed-form denoiser, exact Σ*); DDPM with β I, trace, diagonal, LGS k ∈ {1,3,5} and
   dense Σ* at T ∈ {10,20,50}: NLL gap to exact samples, sliced W2, path KL (Gaussian kernels).
   Then a small ε-MLP trained on the digits exercises the learned, non-symmetric Jacobian.
D. (see C) the trained ε-MLP: LGS against the diagonal with a learned Jacobian.
E. (full configuration only, ``image_benchmark=True``) a small diffusers UNet trained on digits images;
   β̃ I / diagonal / LGS k = 3 samples at several T scored by KID with a self-trained feature network
   (:mod:`.image_benchmark`), the offline substitute for Inception-FID.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import torch
from pydantic import Field, ValidationInfo, field_validator

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources
from neurips26.harness.context import RunContext, torch_threads

from .gmm import gaussian_mixture_law, gmm_covariance_oracle, gmm_denoiser, gmm_logpdf, gmm_sample
from .lanczos import lanczos_sqrt, lanczos_tridiagonal
from .path_kl import path_kl_gaussian_mixture
from .sampler import ddpm_sample
from .schedule import spaced_timesteps, vp_alphas_cumprod

#: seeds never used while choosing: the path-KL claims' bands were set with a prototype run in view; the
#: confirmation runs compute only the path-KL group and are pooled
CONFIRMATION_SEEDS = (101, 102, 103)
#: the controls of the path-KL order claims: the other chain, with the same exact mean, on the same paired draws
_ISO_CONTROL = ("the full-covariance chain Σ* (exact mean, same Monte Carlo draws), which removes the covariance "
                "mismatch isotropy causes; judged on the order of the paired excess KL(isotropic) − KL(full), which "
                "is the summed mismatch term alone")
_FULL_CONTROL = ("the trace-matched isotropic chain (exact mean, same Monte Carlo draws), which lacks the full "
                 "covariance; judged on the paired slope of log(KL_full/KL_isotropic) against log T")
PROTOTYPE_SLOPE = ("band −1.3…−0.8 of the slope chosen with a prototype run in view (slope −1.05 at T ≤ 128, "
                   "pre-asymptotic curvature)")

#: where LGS wins and loses at equal *measured* cost (benchmarks/lanczos_ddpm.py, section 4, CPU time)
EQUAL_COST_NOTE = ("At equal measured cost the picture changes (benchmarks/lanczos_ddpm.py, CPU time): a JVP costs "
                   "5–10 forward passes of these small denoisers (torch.func.jvp recomputes the primal), so the "
                   "1 + k·c forward-equivalents of an LGS step buy the β I and oracle-diagonal samplers 3–30× more "
                   "steps; on this 64-D digits mixture the oracle diagonal then wins at every T and k tried, and LGS "
                   "beats β I only at T = 10, k = 3. LGS won at equal measured cost only on a 256-D mixture with "
                   "strongly correlated low-rank components at T = 5, k = 3: few steps, large d and a Σ* far from "
                   "diagonal.")


class Config(ExperimentConfig):
    """Configuration of the lanczos-ddpm reproduction (quick = laptop, full = GPU/cluster)."""

    path_kl_T: list[int] = Field(default_factory=lambda: [16, 32, 64, 128], min_length=3,
                                 description="numbers of steps T for path KL vs T (2-D mixture)")
    path_kl_samples: int = Field(8000, ge=1000, le=10_000_000,
                                 description="Monte Carlo samples per step (quick: 8000, set by the CPU budget of the "
                                             "quick run, which covers the confirmation run too; >= 20k gave a "
                                             "stable slope in a prototype run; full: 100k)")
    lanczos_dim: int = Field(1000, ge=50, le=8192, description="dimension d of the Lanczos accuracy test (dense "
                             "d×d reference: memory ∝ d²)")
    lanczos_rank: int = Field(100, ge=1, description="number of non-unit eigenvalues of the test operator")
    exact_dim: int = Field(60, ge=2, le=2000, description="dimension of the k = d exactness check (κ = 10³)")
    lanczos_kappas: list[float] = Field(default_factory=lambda: [11.0, 101.0, 1001.0], min_length=1,
                                        description="condition numbers of the test operators")
    lanczos_max_k: int = Field(10, ge=3, le=1000, description="largest number of Lanczos steps")
    num_train_steps: int = Field(1000, ge=10, le=100_000, description="training grid N of the digits DDPM")
    digits_T: list[int] = Field(default_factory=lambda: [10, 20, 50], min_length=1,
                                description="numbers of reverse steps on digits")
    digits_k: list[int] = Field(default_factory=lambda: [1, 3, 5], min_length=1, description="Lanczos k on digits")
    digits_samples: int = Field(100, ge=50, le=1_000_000, description="samples per method on digits (quick: 100, "
                                "set by the CPU budget of the quick run; was 500)")
    digits_path_kl_samples: int = Field(200, ge=100, le=1_000_000,
                                        description="Monte Carlo samples per step, digits path KL (quick: 200, set "
                                                    "by the CPU budget of the quick run; was 1000)")
    gmm_components: int = Field(10, ge=1, le=200, description="components of the digits GaussianMixture")
    gmm_reg: float = Field(1e-2, gt=0, description="reg_covar of the digits GaussianMixture ([-1,1] pixels)")
    train_steps: int = Field(1000, ge=10, le=10_000_000, description="Adam steps of the digits epsilon-MLP (quick: "
                             "1000, set by the CPU budget of the quick run; was 3000)")
    net_samples: int = Field(80, ge=50, le=1_000_000, description="samples per method with the trained epsilon-MLP "
                             "(quick: 80, set by the CPU budget of the quick run; was 300)")
    net_T: list[int] = Field(default_factory=lambda: [10, 20], min_length=1,
                             description="numbers of reverse steps with the trained epsilon-MLP")
    image_benchmark: bool = Field(False, description="train a small UNet on digits images and report KID with a "
                                                     "self-trained feature network (full configuration)")
    image_size: int = Field(16, ge=8, le=128, description="side of the digits images (8 = native, larger = upscaled)")
    image_unet_steps: int = Field(20000, ge=1, le=10_000_000, description="Adam steps of the image UNet")
    image_unet_width: int = Field(32, ge=8, le=512, multiple_of=8, description="base channel width of the image UNet")
    image_feature_steps: int = Field(2000, ge=1, le=10_000_000, description="Adam steps of the KID feature classifier")
    image_samples: int = Field(2000, ge=10, le=1_000_000, description="samples per method and T for KID")
    image_batch: int = Field(250, ge=1, description="sampling chunk size (the diagonal materialises B·d² floats)")
    image_T: list[int] = Field(default_factory=lambda: [10, 20, 50], min_length=1,
                               description="numbers of reverse steps of the image benchmark")
    torch_threads: int = Field(1, ge=1, le=256, description="torch intra-op threads during the run (1: the small "
                               "batched ops here gain little from threads, and on a busy machine extra threads "
                               "spin-wait for cores)")

    @field_validator("path_kl_T")
    @classmethod
    def _path_kl_T(cls, v: list[int]) -> list[int]:
        if v[-1] > 100_000:
            raise ValueError(f"step counts up to 100000 allowed (each step costs path_kl_samples draws), got {v[-1]}")
        if v[0] < 2 or any(b <= a for a, b in zip(v, v[1:])):
            raise ValueError(f"must be strictly increasing step counts >= 2 (a log-log slope is fitted over the "
                             f"last three), got {v}")
        return v

    @field_validator("lanczos_kappas")
    @classmethod
    def _kappas(cls, v: list[float]) -> list[float]:
        if not all(math.isfinite(c) and c > 1.0 for c in v):
            raise ValueError(f"condition numbers must be finite and > 1 (κ = 1 is the identity, exact at k = 1), got {v}")
        return v

    @field_validator("digits_k")
    @classmethod
    def _digits_k(cls, v: list[int]) -> list[int]:
        if any(k < 1 for k in v) or len(set(v)) != len(v):
            raise ValueError(f"Lanczos steps must be distinct integers >= 1, got {v}")
        return v

    @field_validator("image_size")
    @classmethod
    def _image_size(cls, v: int) -> int:
        if v % 2:
            raise ValueError(f"must be even (the UNet downsamples once), got {v}")
        return v

    @field_validator("digits_T", "net_T", "image_T")
    @classmethod
    def _steps(cls, v: list[int], info: ValidationInfo) -> list[int]:
        n = info.data.get("num_train_steps")
        if any(t < 1 for t in v) or len(set(v)) != len(v) or (n is not None and max(v) > n):
            raise ValueError(f"numbers of reverse steps must be distinct integers in 1..num_train_steps = {n} "
                             f"(a subset of the training grid), got {v}")
        return v

    @field_validator("lanczos_max_k")
    @classmethod
    def _max_k(cls, v: int, info: ValidationInfo) -> int:
        d = info.data.get("lanczos_dim")
        if d is not None and v > d:
            raise ValueError(f"must be <= lanczos_dim = {d}, got {v}")
        return v

    @field_validator("gmm_reg")
    @classmethod
    def _reg(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError(f"must be finite and > 0, got {v}")
        return v


    def resources(self) -> Resources:
        """One GPU for paper-scale runs (the image benchmark trains a UNet and a feature network (30k steps each)); one CPU otherwise.

        ``hours`` (paper scale only) is an estimate, extrapolated from the quick run's measured CPU time
        before its size cuts (137 s: 2-D path KL 12 s, digits GMM part ≈ 53 s, ε-MLP training ≈ 14 s and
        sampling ≈ 45 s) by the ratio of work: 2-D path KL 5× the samples × 4.2× the steps ≈ 0.1 h;
        digits GMM 10× the samples × 2.25× the steps, k up to 10, 2× the components ≈ 1 h; ε-MLP 10×
        the training steps and 45× the sampling work ≈ 0.6 h; the image benchmark (UNet and feature
        network training, 2000 samples × 3 methods × 80 steps with 256-JVP diagonals) not measured,
        guessed 1–1.5 h on one GPU. About 3 h in all.
        """
        big = bool(self.image_benchmark)
        return Resources(num_cpus=2 if big else 1, num_gpus=1 if big else 0, hours=3.0 if big else None, on_device="the image benchmark's UNet training and sampling (on ctx.device)", on_cpu="the Gaussian-mixture path-KL and Lanczos studies (float64 linear algebra on the CPU), the KID feature net (small, on the CPU)")

    @classmethod
    def full(cls) -> "Config":
        """Larger Monte Carlo, a d = 3072 Lanczos test, more steps and samples, and the image
        benchmark (part E: 16×16 digits UNet, KID with a self-trained feature network; a GPU is advised)."""
        return cls(path_kl_T=[16, 32, 64, 128, 256, 512], path_kl_samples=100000, lanczos_dim=3072,
                   lanczos_rank=200, lanczos_kappas=[11.0, 101.0, 1001.0, 10001.0], lanczos_max_k=16,
                   digits_T=[10, 20, 50, 100], digits_k=[1, 3, 5, 10], digits_samples=5000,
                   digits_path_kl_samples=10000, gmm_components=20, train_steps=30000, net_samples=5000,
                   net_T=[10, 20, 50], image_benchmark=True, image_size=16, image_unet_steps=30000,
                   image_feature_steps=3000, image_samples=2000, image_T=[10, 20, 50],
                   torch_threads=min(16, os.cpu_count() or 1))


# --------------------------------------------------------------------------------------------
# A. path KL vs T on a 2-D mixture


def _mixture_2d() -> tuple:
    def rot(th):
        return np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])

    covs = [rot(th) @ np.diag(v) @ rot(th).T for th, v in [(0.3, [1.0, 0.01]), (1.2, [0.5, 0.02]), (-0.7, [0.2, 0.05])]]
    return [0.5, 0.3, 0.2], [[-1.5, 0.5], [1.5, 1.0], [0.0, -1.5]], covs


def _slope(Ts, values) -> float:
    return float(np.polyfit(np.log(Ts), np.log(values), 1)[0])


def _slope_interval(Ts, totals, stderr, seed: int, n: int = 2000) -> tuple[float, float]:
    """95% interval of the last-three log-log slope from the Monte Carlo standard errors (parametric
    bootstrap: each total redrawn from N(total, stderr²), floored at 1e-12)."""
    rng = np.random.default_rng(seed)
    draws = np.maximum(np.asarray(totals)[None] + rng.standard_normal((n, len(totals))) * np.asarray(stderr)[None],
                       1e-12)
    x = np.log(np.asarray(Ts, dtype=float))
    slopes = np.polyfit(x, np.log(draws).T, 1)[0]
    lo, hi = np.percentile(slopes, [2.5, 97.5])
    return float(lo), float(hi)


def _paired_slope_interval(Ts, a, b, cov_ab, seed: int, how: str, n: int = 2000) -> tuple[float, float]:
    """95% interval of the last-three log-log slope of a paired quantity of two chains' path KLs, ``how`` =
    ``"ratio"`` (b/a) or ``"excess"`` (a − b), by a parametric bootstrap that keeps the pairing: at each T
    the two totals are redrawn jointly normal with their Monte Carlo covariance (they share their draws);
    different T use independent draws. Values floored at 1e-12.

    Args:
        Ts: (k,) step counts; a, b: (k,) totals of the two chains; cov_ab: (k, 2, 2) covariances of (a, b).
    """
    rng = np.random.default_rng(seed)
    k = len(Ts)
    draws = np.empty((n, k, 2))
    for i in range(k):
        draws[:, i] = rng.multivariate_normal([a[i], b[i]], np.asarray(cov_ab[i]), size=n, method="eigh")
    y = draws[..., 1] / np.maximum(draws[..., 0], 1e-12) if how == "ratio" else draws[..., 0] - draws[..., 1]
    slopes = np.polyfit(np.log(np.asarray(Ts, dtype=float)), np.log(np.maximum(y, 1e-12)).T, 1)[0]
    lo, hi = np.percentile(slopes, [2.5, 97.5])
    return float(lo), float(hi)


def _path_kl_order(config: Config, ctx: RunContext, plt):
    """Path KL against T for β I, trace-matched isotropic, exact diagonal and full Σ* (abstract's orders)."""
    law = gaussian_mixture_law(*_mixture_2d())
    g = ctx.torch_generator(1)
    names = ("beta", "trace", "diagonal", "full")
    totals = {c: [] for c in names}
    stderr = {c: [] for c in names}
    cov_tf = []                                     # Monte Carlo covariance of (trace, full) per T: paired draws
    for T in ctx.track(config.path_kl_T, "path KL vs T (2-D mixture)"):
        pk = path_kl_gaussian_mixture(law, vp_alphas_cumprod(T), np.arange(T - 1, -1, -1), names,
                                      num_samples=config.path_kl_samples, generator=g)
        for c in names:
            totals[c].append(pk.total(c))
            stderr[c].append(pk.stderr[c])
        cov_tf.append([[pk.cov["trace"]["trace"], pk.cov["trace"]["full"]],
                       [pk.cov["full"]["trace"], pk.cov["full"]["full"]]])
    Ts = np.array(config.path_kl_T, dtype=float)
    last3 = slice(len(Ts) - 3, len(Ts))
    slopes = {c: _slope(Ts[last3], np.array(totals[c])[last3]) for c in names}
    fig, ax = plt.subplots(figsize=(5, 4))
    for c, lab in zip(names, ("β I", "trace-matched isotropic", "exact diagonal", "full Σ*")):
        ax.errorbar(Ts, totals[c], yerr=2 * np.array(stderr[c]), marker="o", label=f"{lab} (slope {slopes[c]:.2f})")
    ax.plot(Ts, totals["trace"][0] * (Ts[0] / Ts), "k:", lw=1, label="∝ 1/T")
    ax.plot(Ts, totals["full"][0] * (Ts[0] / Ts) ** 2, "k--", lw=1, label="∝ 1/T²")
    ax.set(xscale="log", yscale="log", xlabel="T (reverse steps)", ylabel="path KL (nats)",
           title="Path KL vs T, 2-D Gaussian mixture")
    ax.set_xticks(Ts, [f"{int(t)}" for t in Ts])                   # readable ticks (no 3×10¹ 4×10¹ overlap)
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.save_figure("path_kl_vs_T", fig, caption=(
        "Path KL between the true reverse process and DDPM chains with exact means and four covariance choices on a "
        "2-D Gaussian mixture, against the number of steps T (bars: 2 Monte Carlo standard errors). The abstract "
        "predicts Ω(1/T) for isotropic covariances (dotted guide) and O(1/T²) for the full covariance (dashed guide)."))
    ratio = totals["trace"][-1] / totals["full"][-1]
    ratio_beta = totals["beta"][-1] / totals["full"][-1]
    last = slice(len(Ts) - 3, len(Ts))
    ivs = {c: _slope_interval(Ts[last], np.array(totals[c])[last], np.array(stderr[c])[last], ctx.seed + i)
           for i, c in enumerate(names)}
    rng = np.random.default_rng(ctx.seed + 10)
    r_draws = ((totals["trace"][-1] + stderr["trace"][-1] * rng.standard_normal(2000))
               / np.maximum(totals["full"][-1] + stderr["full"][-1] * rng.standard_normal(2000), 1e-12))
    ratio_iv = tuple(float(v) for v in np.percentile(r_draws, [2.5, 97.5]))
    # the paired contrasts with the control chain, on the same draws: the isotropic chain's excess path KL
    # over the full-covariance chain (what isotropy costs), and the full chain's KL relative to the isotropic one
    tr, fu = np.array(totals["trace"]), np.array(totals["full"])
    excess, rel = tr - fu, fu / tr
    slope_excess = _slope(Ts[last3], excess[last3]) if np.all(excess[last3] > 0) else float("nan")
    slope_rel = _slope(Ts[last3], rel[last3])
    cov3 = np.array(cov_tf)[last3]
    iv_excess = _paired_slope_interval(Ts[last3], tr[last3], fu[last3], cov3, ctx.seed + 20, "excess")
    iv_rel = _paired_slope_interval(Ts[last3], tr[last3], fu[last3], cov3, ctx.seed + 21, "ratio")
    metrics = {"path_kl_T": config.path_kl_T, "path_kl": totals, "path_kl_stderr": stderr,
               "path_kl_slopes_last3": slopes, "path_kl_ratio_trace_over_full": ratio,
               "path_kl_ratio_beta_over_full": ratio_beta, "path_kl_cov_trace_full": cov_tf,
               "path_kl_paired_slopes_last3": {"excess_trace_minus_full": slope_excess,
                                               "full_over_trace": slope_rel}}
    slope_reason = (f"least-squares slope of log KL vs log T over the last three T {config.path_kl_T[-3:]}; the "
                    f"interval is a parametric bootstrap of the Monte Carlo errors ({config.path_kl_samples} paired "
                    "samples per step)")
    paired_reason = (f"least-squares slope over the last three T {config.path_kl_T[-3:]}; the interval is a "
                     "parametric bootstrap that redraws both chains' totals jointly with their Monte Carlo "
                     f"covariance ({config.path_kl_samples} shared samples per step)")
    iso_reason = (slope_reason + "; ±0.3 around the predicted slope −1 (Ω(1/T) allows no faster decay; −0.8 "
                  "leaves room for pre-asymptotic curvature)")
    claims = [
        C.within("path_kl_isotropic_order", "Isotropic reverse covariances give path KL of order 1/T (Ω(1/T)): "
                 "log-log slope of the excess path KL of the trace-matched isotropic choice (the best isotropic "
                 "one per x_t) over the full-covariance chain on the same draws",
                 measured=slope_excess, low=-1.3, high=-0.8, paper_value="slope -1 (Ω(1/T))",
                 reason=paired_reason + "; ±0.3 around the predicted slope −1 (Ω(1/T) allows no faster decay; "
                        "−0.8 leaves room for pre-asymptotic curvature)",
                 interval=iv_excess, kind="paper", source="abstract",
                 tuned_after_look=PROTOTYPE_SLOPE + "; kept unchanged when the measured quantity became the paired "
                 "excess over the full-covariance control", object="theory", control=_ISO_CONTROL,
                 note=f"total path KL of the isotropic chain alone: slope {slopes['trace']:.3f} (95% interval "
                      f"[{ivs['trace'][0]:.3f}, {ivs['trace'][1]:.3f}]); excess per T {[round(float(x), 5) for x in excess]}. "
                      "The excess is exactly the summed covariance-mismatch term, since both chains share the "
                      "mean and the non-Gaussian term."),
        C.within("path_kl_beta_order", "The DDPM default isotropic β_t I (fixed_large) also decays only as 1/T",
                 measured=slopes["beta"], low=-1.3, high=-0.8, paper_value="slope -1 (Ω(1/T))",
                 reason=iso_reason, interval=ivs["beta"], kind="reconstruction", tuned_after_look=PROTOTYPE_SLOPE,
                 object="theory",
                 source="inferred: a second isotropic choice, to show the order is not an artefact of trace matching",
                 note="β̃_t I is excluded: β̃_1 = 0 makes its last-step KL infinite."),
        C.at_most("path_kl_full_order", "Matching the full posterior covariance reduces path KL to O(1/T²), one "
                  "order below the isotropic chain's O(1/T): log-log slope of the full-covariance chain's path KL "
                  "relative to the isotropic chain's on the same draws",
                  measured=slope_rel, bound=-0.5, paper_value="slope -2 vs -1 (O(1/T²) vs Ω(1/T))", interval=iv_rel,
                  kind="paper", source="abstract", object="theory", control=_FULL_CONTROL,
                  reason=paired_reason + "; −0.5 is the midpoint between the same order (0) and one order lower "
                         "(−1), so the claim separates O(1/T²) from O(1/T) relative to the control",
                  note=f"Full-covariance chain alone: slope {slopes['full']:.3f} (95% interval [{ivs['full'][0]:.3f}, "
                       f"{ivs['full'][1]:.3f}]). Diagonal slope for reference: {slopes['diagonal']:.2f} "
                       f"(95% interval [{ivs['diagonal'][0]:.2f}, {ivs['diagonal'][1]:.2f}])."),
        C.at_least("path_kl_ratio", f"Order-wise gap: isotropic/full path KL at T = {config.path_kl_T[-1]} is large",
                   measured=ratio, bound=4.0, paper_value="grows ∝ T", interval=ratio_iv, kind="reconstruction",
                   object="theory",
                   domain=(0.0, math.inf), tuned_after_look="bound 4 set with a prototype run's ratio (≈ 8) in view",
                   source="inferred: the gap between an O(1/T) and an O(1/T²) chain must grow with T",
                   reason="4 = the ratio at which the two orders are clearly apart at T = 128; interval from the "
                          "Monte Carlo errors"),
    ]
    return metrics, claims


# --------------------------------------------------------------------------------------------
# B. Lanczos accuracy


def _exactness_at_k_eq_d(d: int, g: torch.Generator) -> tuple[float, float]:
    """(max ‖V Vᵀ − I‖_max, max relative error of ξ_d against Σ^{1/2} z) at k = d on a random SPD
    operator with eigenvalues log-spaced over [1, 10³] (κ = 10³), float64, 8 draws of z."""
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    lam = torch.logspace(0, 3, d, dtype=torch.float64)
    S = (Q * lam) @ Q.T
    z = torch.randn(8, d, generator=g, dtype=torch.float64)
    ref = z @ ((Q * lam.sqrt()) @ Q.T)                                 # Σ^{1/2} z from the known eigenpairs
    dec = lanczos_tridiagonal(lambda v: v @ S, z, d + 5)                # k capped at d
    gram = dec.basis @ dec.basis.transpose(1, 2)                        # V Vᵀ, (8, d, d)
    orth = float((gram - torch.eye(d, dtype=torch.float64)).abs().max())
    xi = lanczos_sqrt(dec)[0]
    return orth, float(((xi - ref).norm(dim=1) / ref.norm(dim=1)).max())


def _lanczos_accuracy(config: Config, ctx: RunContext, plt):
    """Error of ξ_k against Σ^{1/2} z as k grows (abstract: exponential decay), and exactness at k = d."""
    g = ctx.torch_generator(2)
    d, r, K = config.lanczos_dim, min(config.lanczos_rank, config.lanczos_dim), config.lanczos_max_k
    ks = np.arange(1, K + 1)
    errors, rates, bounds = {}, {}, {}
    for kappa in config.lanczos_kappas:
        Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
        lam = torch.ones(d, dtype=torch.float64)
        lam[:r] = torch.logspace(0, math.log10(kappa), r, dtype=torch.float64)
        S = (Q * lam) @ Q.T
        z = torch.randn(16, d, generator=g, dtype=torch.float64)
        ref = z @ ((Q * lam.sqrt()) @ Q.T)                            # Σ^{1/2} z from the known eigenpairs
        dec = lanczos_tridiagonal(lambda v: v @ S, z, K)
        err = [float(((lanczos_sqrt(dec, int(k))[0] - ref).norm(dim=1) / ref.norm(dim=1)).mean()) for k in ks]
        errors[str(kappa)] = err
        rates[str(kappa)] = float(np.exp(np.polyfit(ks, np.log(err), 1)[0]))
        bounds[str(kappa)] = (math.sqrt(kappa) - 1) / (math.sqrt(kappa) + 1)
    orth_err, exact_err = _exactness_at_k_eq_d(config.exact_dim, g)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for kappa in config.lanczos_kappas:
        ax.semilogy(ks, errors[str(kappa)], "o-", label=f"κ = {kappa:g} (rate {rates[str(kappa)]:.2f}, "
                                                       f"ρ = {bounds[str(kappa)]:.2f})")
    ax.set(xlabel="Lanczos steps k (= JVPs)", ylabel=r"relative error $\|\xi_k - \Sigma^{1/2}z\| / \|\Sigma^{1/2}z\|$",
           title=f"Lanczos sampler accuracy, d = {d}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    ctx.save_figure("lanczos_error_vs_k", fig, caption=(
        "Relative error of the k-step Lanczos sample against the exact Σ^{1/2}z for three condition numbers κ. The "
        "abstract predicts exponential decay in k: straight lines on this log scale, steeper for smaller κ, each at "
        "least as steep as the Chebyshev rate ρ(κ) in the legend."))
    monotone = all(bool(np.all(np.diff(e) < 0)) for e in errors.values())
    within_rate = all(rates[c] <= bounds[c] for c in rates)
    metrics = {"lanczos_errors": errors, "lanczos_k": ks.tolist(), "lanczos_fitted_rate": rates,
               "lanczos_chow_saad_rate": bounds, "lanczos_exact_k_eq_d_max_rel_error": exact_err,
               "lanczos_exact_k_eq_d_orthonormality_error": orth_err}
    claims = [
        C.check("lanczos_exponential_decay",
                "The Lanczos sampler's error decays exponentially in the number of Lanczos steps k",
                measured={"fitted_rate": rates, "rho_kappa": bounds}, holds=monotone and within_rate,
                tolerance="error strictly decreasing in k for every κ, and fitted geometric rate "
                          "exp(slope of log error vs k) ≤ ρ(κ) = (√κ−1)/(√κ+1)",
                paper_value="exponential decay in k", kind="check", object="toy",
                source="inferred: the abstract's exponential decay in k is textbook Krylov convergence (Chow & Saad "
                       "2014) on synthetic SPD operators, which holds by construction; a check of our Lanczos code, "
                       "not evidence for the paper",
                reason="ρ(κ) is the Chebyshev rate for the square root (Chow & Saad 2014); errors are averaged over "
                       "16 draws of z in float64, whose spread (a few % of each error) cannot move a rate across ρ"),
        C.check("lanczos_exact_at_k_eq_d",
                f"Lanczos with k = d reproduces Σ^{{1/2}}z exactly on a d = {config.exact_dim}, κ = 10³ operator, "
                "with an orthonormal basis",
                measured={"max_rel_error": exact_err, "max_orthonormality_error": orth_err},
                holds=bool(exact_err <= 1e-8 and orth_err <= 1e-12), paper_value="exact", kind="check", object="toy",
                source="inferred: a Krylov method is exact once the Krylov space is the whole space",
                tolerance="max relative error ≤ 1e-8 and max |VVᵀ − I| ≤ 1e-12 over 8 draws of z",
                reason="float64 round-off with full re-orthogonalisation measured ~1e-15 in both; without it the "
                       "basis loses orthogonality (|VVᵀ − I| ≈ 0.9) and the sample misses by ~1e-6"),
    ]
    return metrics, claims


# --------------------------------------------------------------------------------------------
# C. digits


def _digits(config: Config, ctx: RunContext):
    from sklearn.datasets import load_digits
    from sklearn.mixture import GaussianMixture

    X = load_digits().data / 8.0 - 1.0                               # pixels in [-1, 1]
    perm = ctx.child_rng(3).permutation(len(X))
    n_test = len(X) // 5
    Xte, Xtr = X[perm[:n_test]], X[perm[n_test:]]
    gm = GaussianMixture(config.gmm_components, covariance_type="full", reg_covar=config.gmm_reg,
                         random_state=ctx.seed).fit(Xtr)
    return Xtr, Xte, gm


def _sliced_w2(a: np.ndarray, b: np.ndarray, seed: int) -> float:
    import ot

    return float(ot.sliced_wasserstein_distance(a, b, n_projections=500, seed=seed))


def _grid(ax, samples: np.ndarray, title: str) -> None:
    imgs = samples[:16].reshape(4, 4, 8, 8).transpose(0, 2, 1, 3).reshape(32, 32)
    ax.imshow(imgs, cmap="gray_r", vmin=-1, vmax=1)
    ax.set_title(title, fontsize=8)
    ax.axis("off")


def _methods(ks: list[int]) -> list[tuple[str, str, int]]:
    return ([("beta", "beta", 1), ("trace", "trace", 1), ("diagonal", "diagonal", 1)]
            + [(f"lanczos{k}", "lanczos", k) for k in ks] + [("dense", "dense", 1)])


def _paired_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, tuple[float, float]]:
    """Mean of a − b over paired samples (same noise) and its 95% Student-t interval."""
    return C.mean_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))


def _digits_exact_denoiser(config: Config, ctx: RunContext, plt, Xtr, Xte, gm):
    """Digits GMM with the exact denoiser: LGS k against the diagonal oracle and dense Σ* (NLL gap)."""
    law = gaussian_mixture_law(gm.weights_ / gm.weights_.sum(), gm.means_, gm.covariances_, dtype=torch.float32)
    law64 = gaussian_mixture_law(gm.weights_ / gm.weights_.sum(), gm.means_, gm.covariances_)
    N = config.num_train_steps
    ac = vp_alphas_cumprod(N)
    model, oracle = gmm_denoiser(law, ac), gmm_covariance_oracle(law, ac)
    B = config.digits_samples
    exact = gmm_sample(law, 4 * B, ctx.torch_generator(4))
    ref_nll = -float(gmm_logpdf(law, gmm_sample(law, 4 * B, ctx.torch_generator(5))).mean())
    methods = _methods(config.digits_k)
    nll_gap = {m: [] for m, _, _ in methods}
    per_sample = {m: [] for m in ("lanczos3", "diagonal", "dense")}
    sw = {m: [] for m, _, _ in methods}
    sw_test = {m: [] for m, _, _ in methods}
    jvps = {m: [] for m, _, _ in methods}
    pkl = {c: [] for c in ("beta", "trace", "diagonal", "full")}
    grids = {}
    for T in ctx.track(config.digits_T, "digits: GMM denoiser"):
        ts = spaced_timesteps(N, T)
        for name, cov, k in methods:
            x, st = ddpm_sample(model, (B, 64), ac, ts, prediction_type="sample", covariance=cov, k=k,
                                generator=ctx.torch_generator(100 + T), denoise_last=False,
                                posterior_covariance=oracle)             # paired noise across methods
            nll_x = -gmm_logpdf(law, x).double().numpy()
            nll_gap[name].append(float(nll_x.mean()) - ref_nll)
            if name in per_sample:
                per_sample[name].append(nll_x)
            sw[name].append(_sliced_w2(x.numpy(), exact.numpy(), ctx.seed))
            sw_test[name].append(_sliced_w2(x.numpy(), Xte, ctx.seed))
            jvps[name].append(st.jvp)
            if T == config.digits_T[0]:
                grids[name] = x.numpy()
        pk = path_kl_gaussian_mixture(law64, ac, ts, tuple(pkl), num_samples=config.digits_path_kl_samples,
                                      generator=ctx.torch_generator(200 + T), chunk=500)
        for c in pkl:
            pkl[c].append(pk.total(c))
    show = ["beta", "diagonal", "lanczos1", "lanczos3", "dense"]
    show = [s for s in show if s in grids]
    fig, axes = plt.subplots(1, len(show) + 1, figsize=(2.2 * (len(show) + 1), 2.6))
    _grid(axes[0], exact.numpy(), "exact GMM")
    for ax, s in zip(axes[1:], show):
        _grid(ax, grids[s], f"{s}, T={config.digits_T[0]}")
    fig.tight_layout()
    ctx.save_figure("digits_gmm_samples", fig, caption=(
        f"Samples after T = {config.digits_T[0]} reverse steps on the 64-D digits Gaussian mixture (exact denoiser), "
        "same noise for every method. The abstract predicts that three Lanczos steps beat a diagonal covariance; "
        "look for sharper digits in lanczos3 and dense than in beta and diagonal."))
    metrics = {"digits_T": config.digits_T, "digits_nll_gap": nll_gap, "digits_sw_to_exact": sw,
               "digits_sw_to_test": sw_test, "digits_jvps": jvps, "digits_path_kl_gaussian": pkl,
               "digits_ref_nll": ref_nll, "digits_gmm_test_loglik": float(gm.score(Xte))}
    claims = []
    if "lanczos3" in nll_gap:
        diffs = [_paired_interval(l3, dg) for l3, dg in zip(per_sample["lanczos3"], per_sample["diagonal"])]
        wd = int(np.argmax([iv[1] for _, iv in diffs]))           # the T least favourable to LGS-3
        rng = np.random.default_rng(ctx.seed + 20)
        fracs, frac_ivs = [], []
        for l3, dg, dn in zip(per_sample["lanczos3"], per_sample["diagonal"], per_sample["dense"]):
            idx = rng.integers(0, len(l3), (1000, len(l3)))        # paired bootstrap over samples
            f_boot = (dg[idx].mean(1) - l3[idx].mean(1)) / np.maximum(dg[idx].mean(1) - dn[idx].mean(1), 1e-12)
            fracs.append(float((dg.mean() - l3.mean()) / max(dg.mean() - dn.mean(), 1e-12)))
            frac_ivs.append(tuple(np.percentile(f_boot, [2.5, 97.5])))
        w = int(np.argmin(fracs))
        claims += [
            C.at_most("digits_k3_beats_diagonal",
                      "With k = 3 Lanczos steps, samples beat the optimal diagonal covariance at equal steps: on a "
                      "64-D digits Gaussian mixture with the exact denoiser, the paired per-sample NLL difference "
                      "(LGS-3 − diagonal) under the data law is below 0 — judged at the T least favourable to LGS-3",
                      measured=diffs[wd][0], interval=diffs[wd][1], bound=0.0, kind="reconstruction",
                      object="toy",
                      source="inferred: the abstract's comparison (k = 3 against diagonal baselines such as OCM-DDPM, "
                             "on image benchmarks) moved to data whose exact denoiser and covariance are known",
                      paper_value="k = 3 beats OCM-DDPM on image benchmarks",
                      reason=f"{B} samples per method with paired noise (the same z for every method); every method "
                             "runs the full chain (no mean-only last step); interval: 95% CI of the paired mean "
                             "difference at the T whose upper end is largest",
                      note=f"T = {config.digits_T[wd]} is the least favourable; per T mean [CI]: "
                           + ", ".join(f"T={T}: {m:.3f} [{iv[0]:.3f}, {iv[1]:.3f}]"
                                       for T, (m, iv) in zip(config.digits_T, diffs))
                           + ". The diagonal here is the exact diagonal of Σ* — an upper bound on what OCM-DDPM "
                           "learns. " + EQUAL_COST_NOTE),
            C.at_least("digits_k3_close_to_dense",
                       "k = 3 is already close to the dense full-covariance sampler: share of the dense-over-diagonal "
                       "NLL improvement that LGS-3 recovers, worst T",
                       measured=fracs[w], bound=0.75, paper_value="k = 3 suffices", interval=frac_ivs[w],
                       domain=(-math.inf, math.inf),
                       kind="reconstruction", object="toy",
                       source="inferred: the abstract's 'k = 3 suffices' read as recovering most of the full-covariance "
                              "gain",
                       reason="0.75 = 'most of the benefit' (our choice, fixed before the run); interval: paired "
                              "bootstrap over samples",
                       note=f"per T: {[round(f, 3) for f in fracs]}"),
        ]
    return metrics, claims, law


# --------------------------------------------------------------------------------------------
# C'. a trained epsilon-MLP


def _time_features(t: torch.Tensor, N: int) -> torch.Tensor:
    freqs = torch.arange(1, 9, dtype=torch.float32)
    s = (t.float() / N)[:, None] * math.pi * freqs[None]
    return torch.cat([torch.sin(s), torch.cos(s)], dim=1)


def _train_epsilon_mlp(Xtr: np.ndarray, ac: np.ndarray, steps: int, seed: int, progress):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    N = len(ac)
    net = torch.nn.Sequential(torch.nn.Linear(64 + 16, 256), torch.nn.SiLU(), torch.nn.Linear(256, 256),
                              torch.nn.SiLU(), torch.nn.Linear(256, 64))
    opt = torch.optim.Adam(net.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    X = torch.as_tensor(Xtr, dtype=torch.float32)
    a = torch.as_tensor(ac, dtype=torch.float32)
    losses = []
    for _ in progress(range(steps)):
        idx = torch.randint(len(X), (256,), generator=g)
        t = torch.randint(N, (256,), generator=g)
        eps = torch.randn(256, 64, generator=g)
        xt = a[t, None].sqrt() * X[idx] + (1 - a[t, None]).sqrt() * eps
        loss = ((net(torch.cat([xt, _time_features(t, N)], 1)) - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    net.eval()

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return net(torch.cat([x, _time_features(t, N)], 1))

    return model, float(np.mean(losses[-100:]))


def _jacobian_diagnostic(model, law, Xte, ac, ts, g, n: int = 100):
    """Per step: ‖Σ*_net − Σ*_gmm‖_F/‖Σ*_gmm‖_F, the fraction of negative eigenvalues of sym(Σ*_net), and
    the factor c0²(1-ᾱ)^{3/2}/(ᾱ β̃) by which an ε-Jacobian error is amplified relative to β̃."""
    from .covariance import SamplerStats, covariance_matvec, dense_covariance, linearize, posterior_mean_from_prediction
    from .gmm import gmm_posterior_covariance
    from .schedule import schedule_steps

    x0 = torch.as_tensor(Xte[:n], dtype=torch.float32)
    errs, negs, amps = [], [], []
    for t, co in schedule_steps(ac, ts):
        # Σ* = β̃ I + c0²(1-ᾱ)/ᾱ (I − √(1-ᾱ) J_ε): an error δ in J_ε moves Σ* by amp·δ, relative to β̃
        amps.append(co.c0**2 * (1 - co.alpha_bar) ** 1.5 / co.alpha_bar / co.beta_tilde if co.beta_tilde > 0 else None)
        xt = math.sqrt(co.alpha_bar) * x0 + math.sqrt(1 - co.alpha_bar) * torch.randn(x0.shape, generator=g)
        tb = torch.full((len(x0),), t, dtype=torch.long)
        f = lambda x: posterior_mean_from_prediction(model(x, tb), x, co.alpha_bar, "epsilon")  # noqa: E731
        _, jvp, _ = linearize(f, xt, SamplerStats())
        net = dense_covariance(covariance_matvec(jvp, co, xt.shape), len(x0), 64, torch.float32, "cpu")
        ref = co.beta_tilde * torch.eye(64) + co.c0**2 * gmm_posterior_covariance(law, xt, co.alpha_bar)
        errs.append(float(((net - ref).flatten(1).norm(dim=1) / ref.flatten(1).norm(dim=1)).mean()))
        lam = torch.linalg.eigvalsh(0.5 * (net + net.transpose(1, 2)))
        negs.append(float((lam < 0).float().mean()))
    return errs, negs, amps


def _digits_trained_network(config: Config, ctx: RunContext, plt, Xtr, Xte, law):
    """A small ε-MLP trained here: LGS-3 with the network's (non-symmetric) Jacobian against its diagonal."""
    N = config.num_train_steps
    ac = vp_alphas_cumprod(N)
    t0 = time.time()
    model, loss = _train_epsilon_mlp(Xtr, ac, config.train_steps, ctx.seed,
                                     lambda it: ctx.track(it, "digits: train epsilon-MLP"))
    train_s = time.time() - t0
    B = config.net_samples
    methods = [("beta", "beta", 1), ("diagonal", "diagonal", 1), ("lanczos3", "lanczos", 3),
               ("lanczos3_sym", "lanczos", 3), ("dense", "dense", 1)]
    nll, sw_test, clipped = ({m: [] for m, _, _ in methods} for _ in range(3))
    per_sample = {"lanczos3": [], "diagonal": []}
    grids = {}
    for T in ctx.track(config.net_T, "digits: epsilon-MLP sampling"):
        ts = spaced_timesteps(N, T)
        for name, cov, k in methods:
            x, st = ddpm_sample(model, (B, 64), ac, ts, prediction_type="epsilon", covariance=cov, k=k,
                                symmetrize=name.endswith("_sym"), generator=ctx.torch_generator(300 + T),
                                denoise_last=False)
            nll_x = -gmm_logpdf(law, x.detach()).double().numpy()
            nll[name].append(float(nll_x.mean()))
            if name in per_sample:
                per_sample[name].append(nll_x)
            sw_test[name].append(_sliced_w2(x.detach().numpy(), Xte, ctx.seed))
            clipped[name].append(st.clipped)
            if T == config.net_T[0]:
                grids[name] = x.detach().numpy()
    fig, axes = plt.subplots(1, len(methods), figsize=(2.2 * len(methods), 2.6))
    for ax, (name, _, _) in zip(axes, methods):
        _grid(ax, grids[name], f"ε-MLP {name}, T={config.net_T[0]}")
    fig.tight_layout()
    ctx.save_figure("digits_mlp_samples", fig, caption=(
        f"Samples after T = {config.net_T[0]} steps with a small ε-MLP trained here, same noise for every method. "
        "Full-covariance sampling only helps if the network's Jacobian is accurate; the note of the claim "
        "'mlp_k3_beats_diagonal' gives its measured error."))
    sigma_err, neg_frac, amp = _jacobian_diagnostic(model, law, Xte, ac, spaced_timesteps(N, config.net_T[0]),
                                               ctx.torch_generator(400))
    test_nll = -float(gmm_logpdf(law, torch.as_tensor(Xte, dtype=torch.float32)).mean())
    metrics = {"mlp_T": config.net_T, "mlp_train_loss": loss, "mlp_train_seconds": train_s,
               "mlp_nll_under_gmm": nll, "mlp_sw_to_test": sw_test, "mlp_clipped_ritz": clipped,
               "mlp_test_data_nll_under_gmm": test_nll, "mlp_sigma_star_rel_error_vs_gmm": sigma_err,
               "mlp_sigma_star_negative_eig_fraction": neg_frac, "mlp_jacobian_error_amplification": amp}
    diffs = [_paired_interval(a, b) for a, b in zip(per_sample["lanczos3"], per_sample["diagonal"])]
    wd = int(np.argmax([iv[1] for _, iv in diffs]))               # the T least favourable to LGS-3
    claims = [C.at_most("mlp_k3_beats_diagonal",
                        "With our small trained ε-MLP (a non-symmetric, inaccurate Jacobian), LGS k = 3 beats the "
                        "diagonal covariance at equal steps: paired per-sample NLL difference (LGS-3 − diagonal) "
                        "under the digits GMM below 0 at the least favourable T — a statement about this toy "
                        "network, not the paper's networks",
                        measured=diffs[wd][0], interval=diffs[wd][1], bound=0.0, kind="reconstruction",
                        object="real",
                        source=f"inferred: our 2-layer MLP trained {config.train_steps} Adam steps on digits stands in "
                               "for the paper's trained networks, which are unknown",
                      paper_value="k = 3 beats diagonal baselines",
                      reason=f"{B} samples per method, paired noise; the GMM is a proxy density for real digits "
                             f"(held-out digits score {test_nll:.2f}); interval: 95% CI of the paired mean "
                             "difference at the T whose upper end is largest",
                      note=f"MLP trained {config.train_steps} Adam steps (final loss {loss:.3f}); the diagonal is "
                           "the exact diagonal of the network's Σ* (d JVPs per step, an OCM oracle). Diagnostic: "
                           f"relative Frobenius error of the MLP's Jacobian-based Σ* against the digits GMM's exact "
                           f"Σ* per step (T = {config.net_T[0]}, noisiest first): "
                           + ", ".join(f"{e:.2f}" for e in sigma_err)
                           + "; fraction of negative eigenvalues: " + ", ".join(f"{f:.2f}" for f in neg_frac)
                           + ". With ε-prediction Σ* = β̃I + c0²(1−ᾱ)/ᾱ·(I − √(1−ᾱ)J_ε), so an error δ in J_ε "
                           "moves Σ* by δ times " + ", ".join(f"{a:.1f}" for a in amp if a is not None)
                           + " β̃ (last step: β̃ = 0) — the noisiest steps amplify Jacobian errors most. "
                           "Full covariance only helps if the network's Jacobian is accurate; the factor itself "
                           "is checked against a linear network in the tests.")]
    return metrics, claims


# --------------------------------------------------------------------------------------------
# E. image benchmark (full configuration): small UNet, KID with a self-trained feature network


def _image_benchmark(config: Config, ctx: RunContext, plt):
    """Full configuration: a small UNet on digits images, KID of LGS-3 against the diagonal."""
    from .image_benchmark import IMAGE_METHODS, image_benchmark

    r = image_benchmark(config, ctx)
    fig, axes = plt.subplots(1, len(IMAGE_METHODS), figsize=(2.4 * len(IMAGE_METHODS), 2.6))
    S = config.image_size
    for ax, (name, _, _) in zip(axes, IMAGE_METHODS):
        x = r["samples_first_T"][name]
        n = int(math.isqrt(len(x)))
        grid = x[:n * n, 0].reshape(n, n, S, S).transpose(0, 2, 1, 3).reshape(n * S, n * S)
        ax.imshow(grid, cmap="gray_r", vmin=-1, vmax=1)
        ax.set_title(f"UNet {name}, T={config.image_T[0]}", fontsize=8)
        ax.axis("off")
    fig.tight_layout()
    ctx.save_figure("image_unet_samples", fig, caption=(
        f"Samples of a small UNet trained on digits images, T = {config.image_T[0]}; the abstract predicts better "
        "sample quality with three Lanczos steps than with a diagonal covariance."))
    metrics = {f"image_{k}": v for k, v in r.items() if k != "samples_first_T"}
    l3, dg = np.array(r["kid"]["lanczos3"]), np.array(r["kid"]["diagonal"])
    claim = C.check(
        "image_kid_k3_beats_diagonal",
        "Three Lanczos steps improve sample quality over the diagonal covariance on images (KID on digits images "
        "with a small UNet trained here, in place of FID on the paper's benchmarks)",
        measured={"T": config.image_T, "kid_lanczos3": l3.tolist(), "kid_diagonal": dg.tolist(),
                  "kid_beta_tilde": r["kid"]["beta_tilde"], "kid_real_train_vs_test": r["kid_train_vs_test"]},
        holds=bool(np.all(l3 <= dg)),
        tolerance="KID of LGS-3 samples to held-out digits at most the diagonal's at every T",
        paper_value="k = 3 beats OCM-DDPM (FID)", kind="reconstruction", object="real",
        source="inferred: the abstract's image comparison with a small UNet and KID, as its networks, data and "
               "Inception weights are not available",
        reason=f"{config.image_samples} samples per method with paired noise; KID (Bińkowski et al. 2018, cubic "
               "polynomial kernel, unbiased, 100 subsets) on the penultimate layer of a CNN digit classifier "
               f"trained here (held-out accuracy {r['feature_accuracy_test']:.3f})",
        note=f"UNet ({config.image_size}×{config.image_size}, {config.image_unet_steps} Adam steps, final loss "
             f"{r['unet_loss']:.4f}); the diagonal is the exact diagonal of the network's Σ* (d JVPs per step), an "
             "upper bound on what OCM-DDPM learns. KID std over subsets: "
             + ", ".join(f"{m}: " + "/".join(f"{s:.2g}" for s in r['kid_std'][m]) for m in r["kid_std"]) + ".")
    return metrics, [claim]


def _image_fid_claim(config: Config):
    """The abstract's FID comparison on standard image benchmarks: not checkable offline."""
    substitute = ("this full run trains a small UNet on digits images and reports KID with a self-trained feature "
                  "network instead (claim 'image_kid_k3_beats_diagonal')" if config.image_benchmark else
                  "the full configuration (image_benchmark=True) trains a small diffusers UNet on digits and compares "
                  "LGS k = 3 with the diagonal covariance by KID with a self-trained feature network (claim "
                  "'image_kid_k3_beats_diagonal')")
    return C.not_checkable(
        "image_benchmarks_fid", "Three Lanczos steps improve sample quality over OCM-DDPM and other diagonal "
        "baselines across standard image benchmarks",
        paper_value="better than OCM-DDPM (datasets and values not in the abstract)", kind="paper",
        source="abstract", object="real",
        reason="no CIFAR-10/CelebA/ImageNet data and no Inception weights offline; no pretrained OCM-DDPM",
        full_scale=substitute)



# --------------------------------------------------------------------------------------------


def run(config: Config, ctx: RunContext) -> Outcome:
    """Table of contents: one function per claim group (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics, claims = {}, []

    def add(result):
        metrics.update(result[0])
        claims.extend(result[1])
        return result

    with torch_threads(config.torch_threads):
        if ctx.confirmation:          # only the part whose claims were tuned after a look, only those claims
            m, cl = _path_kl_order(config, ctx, plt)
            return Outcome(metrics=m, claims=[c for c in cl if c.tuned_after_look],
                           notes="confirmation run: path KL against T")
        add(_path_kl_order(config, ctx, plt))
        add(_lanczos_accuracy(config, ctx, plt))
        Xtr, Xte, gm = _digits(config, ctx)
        law = add(_digits_exact_denoiser(config, ctx, plt, Xtr, Xte, gm))[2]
        add(_digits_trained_network(config, ctx, plt, Xtr, Xte, law))
        if config.image_benchmark:
            add(_image_benchmark(config, ctx, plt))
    claims.append(_image_fid_claim(config))
    notes = ("Path KL uses the exact mean and splits each step into a Monte Carlo non-Gaussianity term shared by "
             "every covariance plus a closed-form Gaussian covariance-mismatch term (paired by construction). "
             "The Lanczos noise ξ_k(z) is a nonlinear function of z, not a Gaussian with a fixed covariance, so "
             "its path KL has no closed form and is not computed; on digits it is judged by the NLL gap and "
             "sliced W2 of its samples. "
             "Digits samples run the full chain (the last step adds noise too), so that no method is helped by "
             "a mean-only final step. Oracles 'trace'/'diagonal'/'dense' use the closed-form GMM covariance; "
             "LGS uses JVPs through the closed-form denoiser.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
