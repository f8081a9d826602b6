"""Reproduction of paper 11 (Feature Learning Equation, Virtual Covariance, Target Linearity).

Parts: (1) the identities on random networks in float64; (2) Gram whitening against SGD on
scikit-learn's digits; (3) layer-wise Target Linearity during training (rise, depth order,
sequential timing, Gram surrogate, NC1); (4) Swiss-roll virtual features; (5) grokking on
modular addition; (6) a small VAE on digits; (7) the paper-scale data sets, run by the full
configuration on arrays the user provides.
"""

from __future__ import annotations

import copy
import math
import warnings
from pathlib import Path

import numpy as np
import torch
from pydantic import Field, field_validator
from torch import nn
from torch.nn import functional as F

from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import Resources

from .data import Split, check_npz, digits, load_npz, modular_addition, swiss_roll
from .equation import feature_learning_residual, first_order_mismatch, gram_vc_residual
from .models import VAE, mlp, vae_loss
from .recorder import FeatureRecorder
from .target_linearity import TrivialTargetLinearityWarning, target_linearity
from .tracker import LinearityTracker
from .training import accuracy, spearman, train_classifier
from .whitening import GramWhitening, gram_relative_change, polar_factor_newton_schulz, polar_factor_svd, whiten_update

#: seeds never used while choosing: claims tuned after a look (tl_rises, tl_closes_gap, whitening_matches_sgd,
#: grokking_*) are confirmed on runs with ctx.seed in this tuple, whose internal seeds 1000·seed + offset
#: (and digits split) are derived from it, so they share nothing with the development run nor each other
CONFIRMATION_SEEDS = (101, 102, 103)
USER_DATA_SETS = ("mnist", "svhn", "cifar10", "cifar100")  # <data_dir>/<name>.npz in the full configuration
SGD_COLOUR, WHITEN_COLOUR = "tab:blue", "tab:orange"


class Config(ExperimentConfig):
    """Sizes of the reproduction (quick: about 25 CPU-s for the development run).

    The quick epoch counts (``whiten_epochs`` 6, ``tl_epochs`` 18, ``grok_epochs`` 100,
    ``vae_epochs`` 15) are set by the CPU budget of the quick run (development +
    confirmation run within 45 CPU-s); before: 10, 30, 400 and 30 epochs (68 + 40 CPU-s), of which
    grokking took about two thirds. The full configuration's sizes are unchanged.
    """

    threads: int = Field(1, ge=1, le=256, description="CPU threads for torch and BLAS during the run (1 avoids "
                         "oversubscription on a shared machine)")
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], description="offsets of the internal seeds of every "
                             "random part (>= 2, each 0..999): a run at seed s uses 1000·s + offset, so all its "
                             "randomness follows the run seed")
    batch_size: int = Field(64, ge=1, le=4096, description="mini-batch size for digits training")
    whiten_width: int = Field(128, ge=4, le=4096, description="hidden width of the whitening MLP")
    whiten_depth: int = Field(2, ge=1, le=8, description="hidden layers of the whitening MLP")
    whiten_epochs: int = Field(6, ge=1, le=500, description="epochs of the whitening comparison (quick: set by the CPU budget of the quick run)")
    whiten_lrs: list[float] = Field(default_factory=lambda: [0.05], description="SGD learning rates compared")
    whiten_momentum: float = Field(0.85, ge=0.0, lt=1.0, description="SGD momentum (both arms)")
    tl_width: int = Field(128, ge=4, le=4096, description="hidden width of the TL-dynamics MLP")
    tl_depth: int = Field(4, ge=2, le=12, description="hidden layers of the TL-dynamics MLP")
    tl_epochs: int = Field(18, ge=3, le=1000, description="epochs of the TL-dynamics run (quick: set by the CPU budget of the quick run)")
    tl_lr: float = Field(0.05, gt=0.0, le=1.0, description="SGD learning rate of the TL-dynamics run")
    tl_every: int = Field(2, ge=1, le=100, description="epochs between TL measurements in the TL-dynamics run")
    tl_momentum: float = Field(0.9, ge=0.0, lt=1.0, description="SGD momentum of the TL-dynamics run")
    swiss_n: int = Field(1000, ge=50, le=100_000, description="Swiss-roll points")
    swiss_width: int = Field(32, ge=2, le=1024, description="hidden width of the Swiss-roll MLP")
    swiss_steps: int = Field(100, ge=1, le=100_000, description="full-batch gradient steps on the Swiss roll")
    swiss_lr: float = Field(0.05, gt=0.0, le=10.0, description="Swiss-roll SGD learning rate")
    grok_prime: int = Field(43, ge=5, le=211, description="modulus p of x + y mod p")
    grok_width: int = Field(128, ge=8, le=2048, description="hidden width of the grokking MLP")
    grok_epochs: int = Field(100, ge=10, le=5000, description="epochs of the grokking run (quick: set by the CPU budget of the quick run)")
    grok_batch_size: int = Field(128, ge=1, le=8192, description="grokking mini-batch size")
    grok_lr: float = Field(3e-3, gt=0.0, le=1.0, description="AdamW learning rate of the grokking run")
    grok_weight_decay: float = Field(1.0, ge=0.0, le=10.0, description="AdamW weight decay of the grokking run")
    grok_every: int = Field(10, ge=1, le=1000, description="epochs between grokking measurements")
    vae_hidden: int = Field(128, ge=4, le=4096, description="VAE hidden width")
    vae_latent: int = Field(8, ge=1, le=256, description="VAE latent dimension")
    vae_epochs: int = Field(15, ge=3, le=1000, description="VAE epochs (quick: set by the CPU budget of the quick run)")
    vae_betas: list[float] = Field(default_factory=lambda: [1.0], description="β values of the β-VAE")
    split_seed: int = Field(0, ge=0, le=2**32 - 1, description="seed of the digits train/test split (a run sets it "
                            "to its run seed)")
    data_dir: str | None = Field(None, description="folder with the user's <name>.npz for name in "
                                 + ", ".join(USER_DATA_SETS) + " (full configuration)")
    user_width: int = Field(256, ge=4, le=4096, description="MLP width on the user's data sets")
    user_epochs: int = Field(20, ge=1, le=500, description="epochs on the user's data sets")

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if len(v) < 2 or len(set(v)) != len(v) or len(v) > 20 or not all(0 <= x < 1000 for x in v):
            raise ValueError("must be 2 to 20 distinct offsets in 0..999 (intervals over seeds need at least 2; a "
                             "run at seed s uses 1000·s + offset)")
        return v

    @field_validator("whiten_lrs")
    @classmethod
    def _lrs(cls, v: list[float]) -> list[float]:
        if not v or len(v) > 8 or not all(math.isfinite(x) and 0 < x <= 1 for x in v):
            raise ValueError("must be 1 to 8 learning rates in (0, 1]")
        return v

    @field_validator("vae_betas")
    @classmethod
    def _betas(cls, v: list[float]) -> list[float]:
        if not v or len(v) > 6 or not all(math.isfinite(x) and 0 < x <= 100 for x in v):
            raise ValueError("must be 1 to 6 values of beta in (0, 100]")
        return v

    @field_validator("grok_prime")
    @classmethod
    def _prime(cls, v: int) -> int:
        if any(v % k == 0 for k in range(2, int(math.isqrt(v)) + 1)):
            raise ValueError(f"{v} is not prime")
        return v

    @field_validator("data_dir")
    @classmethod
    def _data_dir(cls, v: str | None) -> str | None:
        if v is not None and not Path(v).is_dir():
            raise ValueError(f"{v!r} is not a folder")
        return v

    def resources(self) -> Resources:
        """One GPU for paper-scale runs (the authors' sizes (MLP width 256, 100 TL epochs, 500 grokking epochs)); one CPU otherwise."""
        big = bool(self.tl_epochs >= 50)
        # hours, extrapolated from the quick run's measured CPU time per part (before the 2026-12-02 cuts, 1 thread:
        # whitening 8 s, TL 10 s, grokking 57 s, VAE 7 s) and the full/quick work ratios: whitening
        # 5/3 seeds x 2 epochs x 4 lrs x ~2 (width 256) ~ 27x; TL 5/3 x 100/30 x 2 ~ 11x; grokking 5/3 seeds
        # x 500/400 epochs x 4 (batch 32) x 2 (p = 61: 2x the pairs) x 2 (width) ~ 33x; VAE ~ 20x — about
        # 0.7 h; the user's four data sets (4 lrs x 5 seeds x 2 arms x 20 epochs of ~940 steps, ~2-3 ms
        # each at width 256, plus a 100-epoch TL run each) about 2.1 h. Small-batch loops are
        # overhead-bound, so a GPU is not much faster: 3 h, rounded up to 4. Quick: well under 0.05 h.
        # No GPU is reserved: the training loops do not move their models to ctx.device yet (a
        # full-scale check on an H200 saw 0 % utilisation), so the plan says CPU.
        return Resources(num_cpus=2 if big else 1, hours=4.0 if big else 0.05,
                         on_cpu="every stage: the MLP/VAE training is not yet moved to the requested device "
                         "(known gap: it runs on the CPU even with --device cuda)")

    @classmethod
    def full(cls) -> "Config":
        """The authors' sizes (as in their released code): 5 seeds, MLP width 256, whitening
        over 4 learning rates × 20 epochs, TL over 100 epochs, mod-61 grokking for 500 epochs,
        β ∈ {1, 4}; the user's MNIST/SVHN/CIFAR arrays in ``data_dir`` (``--set data_dir=...``).
        CPU hours; intended for a GPU node."""
        return cls(seeds=[0, 1, 2, 3, 4], whiten_width=256, whiten_epochs=20, whiten_lrs=[0.01, 0.005, 0.1, 0.05],
                   tl_width=256, tl_epochs=100, swiss_steps=100, grok_prime=61, grok_width=256, grok_epochs=500, grok_lr=1e-3,
                   grok_batch_size=32, vae_hidden=512, vae_latent=32, vae_epochs=100, vae_betas=[1.0, 4.0])


# --------------------------------------------------------------------------- helpers

def _tensors(split: Split) -> tuple[torch.Tensor, ...]:
    return (torch.from_numpy(split.X_train), torch.from_numpy(split.y_train),
            torch.from_numpy(split.X_test), torch.from_numpy(split.y_test))


def _mean_iv(values: list[float], domain: tuple[float, float]) -> tuple[float, tuple[float, float] | None]:
    """Mean and Student-t interval over seeds (:func:`C.mean_interval`); NaN and no interval when a
    seed gave no finite value (e.g. a Spearman correlation of a constant series): such a claim
    does not hold, with the value in its note."""
    if not all(math.isfinite(v) for v in values):
        return float("nan"), None
    return C.mean_interval(values, domain=domain)


# --------------------------------------------------------------------------- (1) identities

def _identities(config: Config, ctx: RunContext, metrics: dict) -> list:
    """Feature Learning Equation, Gram/VC relation and whitening invariants on random float64 nets."""
    g = ctx.torch_generator(1)
    fl, vc, ratios = [], [], []
    nets = [("mlp_gelu_bias", mlp(12, 48, 3, 5, activation="gelu")),
            ("mlp_relu_nobias", mlp(12, 48, 3, 5, activation="relu", bias=False)),
            ("cnn", nn.Sequential(nn.Conv2d(3, 6, 3, padding=1, stride=2), nn.GELU(), nn.Conv2d(6, 4, 2),
                                  nn.Flatten(), nn.Linear(4 * 3 * 3, 5)))]
    conv_fold = 0.0
    for name, net in nets:
        net = net.double()
        with torch.no_grad():
            for p in net.parameters():
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / math.sqrt(max(p.shape[-1], 1)))
        x = (torch.randn(64, 3, 8, 8, generator=g, dtype=torch.float64) if name == "cnn"
             else torch.randn(64, 12, generator=g, dtype=torch.float64)).requires_grad_(True)
        y = torch.randint(0, 5, (64,), generator=g)
        with FeatureRecorder(net) as rec:
            net.zero_grad()
            F.cross_entropy(net(x), y).backward()
            for k in rec.names:
                W, GW, H, GH = rec.W(k), rec.G_W(k), rec.H(k), rec.G_H(k)
                fl.append(feature_learning_residual(W, GW, H, GH))
                vc.append(gram_vc_residual(W, GW, H, GH, 0.1))
                ratios.append(first_order_mismatch(W, GW, H, GH, 1e-2) / first_order_mismatch(W, GW, H, GH, 1e-3))
            if name == "cnn":  # the unfolded G_H folds back to autograd's input gradient
                GH = rec.G_H("0")
                folded = F.fold(GH.reshape(64, -1, GH.shape[1]).transpose(1, 2), (8, 8), 3, padding=1, stride=2)
                conv_fold = float((folded - x.grad).abs().max() / x.grad.abs().max())
    # whitening: rotation keeps the Gram; Newton–Schulz agrees with the SVD polar factor where
    # W1 W2ᵀ is well conditioned (wide W1: singular values within a factor ~3), and the fallback
    # catches the square case, where 10 steps do not converge
    gram_err, ns_svd, orth, fell = [], [], [], []
    for q, p in ((256, 64), (64, 256), (128, 128)):
        W1 = torch.randn(q, p, generator=g, dtype=torch.float64) / math.sqrt(p)
        W2 = W1 - 0.05 * torch.randn(q, p, generator=g, dtype=torch.float64) / math.sqrt(p)
        for method in ("newton_schulz", "svd"):
            W3, fb = whiten_update(W1, W2, method, tol=1e-8)
            gram_err.append(gram_relative_change(W2, W3))
            fell.append(fb)
        if q < p:  # W1 W2ᵀ full rank and well conditioned: unique orthogonal polar factor
            M = W1 @ W2.T
            Qn, Qs = polar_factor_newton_schulz(M), polar_factor_svd(M)
            ns_svd.append(float((Qn - Qs).abs().max()))
            orth.append(float((Qn.T @ Qn - torch.eye(q, dtype=torch.float64)).abs().max()))
        if q == p:
            square_ns_error = gram_relative_change(W2, polar_factor_newton_schulz(W1 @ W2.T) @ W2)
    metrics["identities"] = {"fl_residual_max": max(fl), "gram_vc_residual_max": max(vc),
                             "first_order_ratio_min": min(ratios), "first_order_ratio_max": max(ratios),
                             "conv_fold_residual": conv_fold, "layers_checked": len(fl),
                             "whiten_gram_change_max": max(gram_err), "newton_schulz_vs_svd_max": max(ns_svd),
                             "newton_schulz_orthogonality_max": max(orth),
                             "square_newton_schulz_10_gram_change": square_ns_error,
                             "fallback_used": fell}
    exact = "exact identity; 1e-10 leaves room for float64 rounding (observed around 1e-15)"
    src_chain = "inferred: chain rule through Z = H Wᵀ, checked in float64"
    return [
        C.at_most("fl_identity", "The Feature Learning Equation Wᵀ G_W = G_Hᵀ H holds at every Linear and "
                  "unfolded Conv2d layer of random float64 networks (with and without biases); max relative "
                  "residual.", measured=max(fl), bound=1e-10, reason=exact, kind="check", domain=(0.0, math.inf),
                  source="abstract: 'a simple identity, the Feature Learning Equation'", paper_value="identity",
                  object="theory",
                  note=f"{len(fl)} layers in 3 networks; G_H measured by autograd on each layer's own input. "
                  "Reclassified from paper to check: it is the chain rule through Z = H Wᵀ (G_W = G_Zᵀ H and "
                  "G_H = G_Z W), which cannot fail unless the hooks are wrong"),
        C.at_most("vc_gram_relation", "One gradient step changes the Gram by Δ(WᵀW) = VC + η²(G_WᵀG_W − G_HᵀG_H) "
                  "exactly (η = 0.1); max relative residual.", measured=max(vc), bound=1e-10, reason=exact,
                  kind="check", source=src_chain, domain=(0.0, math.inf)),
        C.within("vc_first_order", "The Gram change and the Virtual Covariance agree to first order: their "
                 "relative mismatch shrinks 10× when η shrinks 10× (η = 1e-2 vs 1e-3; worst layer).",
                 measured=max(ratios, key=lambda r: abs(r - 10)), low=8.0, high=12.0,
                 reason="a mismatch linear in η gives ratio 10; ±2 allows the O(η²) part of the mismatch",
                 kind="check", source=src_chain, domain=(0.0, math.inf),
                 note=f"ratios from {min(ratios):.4f} to {max(ratios):.4f}; measured = the ratio farthest from 10"),
        C.at_most("conv_unfolding", "For Conv2d the recorded G_H of the unfolded patches folds back to autograd's "
                  "input gradient (relative max error).", measured=conv_fold, bound=1e-12, reason=exact,
                  kind="check", domain=(0.0, math.inf), source="inferred: a convolution is a matrix product on unfolded patches"),
        C.at_most("whitening_keeps_gram", "Gram whitening keeps the Gram: ‖(QW2)ᵀ(QW2) − W2ᵀW2‖/‖W2ᵀW2‖ for "
                  "Newton–Schulz (with its SVD fallback) and SVD polar factors, on 256×64, 64×256 and 128×128 "
                  "weights (rank-deficient W1W2ᵀ in the first).",
                  measured=max(gram_err), bound=1e-6, reason="exact for an orthogonal Q; the fallback check "
                  "allows 1e-8, so 1e-6 leaves room",
                  note=f"10 Newton–Schulz steps alone change the square layer's Gram by {square_ns_error:.2g} "
                  f"(not converged); the SVD fallback was used in {sum(fell)} of {len(fell)} updates",
                  kind="check", source="inferred: QᵀQ = I on the columns of W2 preserves W2ᵀW2", domain=(0.0, math.inf)),
        C.at_most("newton_schulz_matches_svd", "Newton–Schulz and SVD polar factors agree when W1W2ᵀ has full "
                  "rank (max abs difference).", measured=max(ns_svd), bound=1e-6,
                  reason="both compute the unique polar factor; 1e-6 allows slow convergence of small singular "
                  "values", kind="check", source="inferred: uniqueness of the polar factor of a full-rank matrix",
                  domain=(0.0, math.inf)),
    ]


# --------------------------------------------------------------------------- (2) whitening vs SGD

def _train_pair(split: Split, width: int, depth: int, epochs: int, lr: float, momentum: float, batch: int,
                seed: int) -> dict:
    """SGD and Gram-whitened SGD from the same initialisation and batch order; test accuracy per epoch."""
    Xtr, ytr, Xte, yte = _tensors(split)
    torch.manual_seed(seed)
    base = mlp(Xtr.shape[1], width, depth, int(ytr.max()) + 1, activation="gelu")
    out = {}
    for arm in ("sgd", "whiten"):
        model = copy.deepcopy(base)
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
        if arm == "whiten":
            opt = GramWhitening(opt)
            out["whiten_optimizer"] = opt
        curve = [accuracy(model, Xte, yte)]
        train_classifier(model, opt, Xtr, ytr, epochs=epochs, batch_size=batch,
                         generator=torch.Generator().manual_seed(seed),
                         on_epoch=lambda e: curve.append(accuracy(model, Xte, yte)))
        out[arm] = curve
    opt = out.pop("whiten_optimizer")
    out["fallback_fraction"] = opt.fallbacks / max(opt.rotations, 1)
    return out


def _whitening_vs_sgd(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    """Gram-whitened SGD against SGD on digits, paired by seed."""
    split = digits(seed=config.split_seed)
    runs = {s: _train_pair(split, config.whiten_width, config.whiten_depth, config.whiten_epochs,
                           config.whiten_lrs[0], config.whiten_momentum, config.batch_size, s)
            for s in ctx.track(config.seeds, "whitening vs SGD (digits)")}
    diffs = [r["whiten"][-1] - r["sgd"][-1] for r in runs.values()]
    metrics["whitening_digits"] = {"lr": config.whiten_lrs[0], "width": config.whiten_width,
                                   "epochs": config.whiten_epochs,
                                   "sgd_final": [r["sgd"][-1] for r in runs.values()],
                                   "whiten_final": [r["whiten"][-1] for r in runs.values()],
                                   "svd_fallback_fraction": [r["fallback_fraction"] for r in runs.values()]}
    figs["whitening"] = runs
    mean, iv = C.mean_interval(diffs, domain=(-1.0, 1.0))
    return [C.at_least("whitening_matches_sgd", "Keeping only each step's Gram change (Gram whitening) trains as "
                       "well as SGD: final digits test accuracy of whitened minus plain SGD, paired by seed, is "
                       "at least −2 points (matches or beats).", measured=mean, interval=iv, bound=-0.02,
                       reason="'matches' read as within 2 accuracy points, about 2 standard errors of a test "
                       "accuracy on 360 digits at 95%", kind="reconstruction", domain=(-1.0, 1.0),
                       source="inferred: the abstract says 'the weight Gram matrix is the key object capturing "
                       "feature dynamics'; Gram whitening as an optimizer is the authors' released description, not "
                       "in the abstract",
                       tuned_after_look="quick learning rate 0.05 (one of the authors' grid) replaced 0.01 after a "
                       "first run left SGD at 75% accuracy in 10 epochs (under-trained); the whitened arm then also "
                       "lacked the SVD fallback, added before this verdict",
                       paper_value="matches or outperforms SGD",
                       note=f"MLP {config.whiten_depth}×{config.whiten_width} GELU, SGD lr {config.whiten_lrs[0]} "
                       f"momentum {config.whiten_momentum}, batch {config.batch_size}, {config.whiten_epochs} "
                       "epochs; the whitened arm's momentum buffer is not rotated; seeds "
                       f"{config.seeds}; per-seed differences {[round(d, 4) for d in diffs]}; polar factor by "
                       "GramWhitening's default path (the SVD on CPU, faster there than the authors' 10 Newton–Schulz "
                       "steps and the same factor: see newton_schulz_matches_svd); share of rotations where "
                       "Newton–Schulz fell back to the SVD (0 when the SVD is the path): "
                       f"{[round(r['fallback_fraction'], 3) for r in runs.values()]}. Reclassified from paper: the "
                       "abstract does not state this comparison")]


# --------------------------------------------------------------------------- (3) TL dynamics

def _tl_run(split: Split, config: Config, seed: int, shuffled: bool = False) -> LinearityTracker:
    """Train the TL-dynamics MLP on digits and track TL per layer (against the true labels).

    ``shuffled=True`` is the control that removes the labels' information: the same network, initialisation,
    batch order and optimiser trained on a fixed permutation of the training labels (drawn from ``seed``);
    TL is still measured against the true labels, at initialisation and at the end only."""
    Xtr, ytr, _, _ = _tensors(split)
    torch.manual_seed(seed)
    model = mlp(Xtr.shape[1], config.tl_width, config.tl_depth, int(ytr.max()) + 1, activation="gelu")
    tracker = LinearityTracker(model)
    opt = torch.optim.SGD(model.parameters(), lr=config.tl_lr, momentum=config.tl_momentum)
    y_fit = ytr[torch.from_numpy(np.random.default_rng([seed, 17]).permutation(len(ytr)))] if shuffled else ytr
    tracker.measure(Xtr, labels=ytr, epoch=0)
    every = config.tl_epochs if shuffled else config.tl_every
    train_classifier(model, opt, Xtr, y_fit, epochs=config.tl_epochs, batch_size=config.batch_size,
                     generator=torch.Generator().manual_seed(seed),
                     on_epoch=lambda e: tracker.measure(Xtr, labels=ytr, epoch=e)
                     if e % every == 0 or e == config.tl_epochs else None)
    return tracker


def _half_time(epochs: np.ndarray, tl: np.ndarray) -> int:
    """First measured epoch at which TL has made half of its total rise."""
    rise = tl[-1] - tl[0]
    return int(epochs[int(np.argmax(tl >= tl[0] + 0.5 * rise))] if rise > 0 else epochs[-1])


def _linearity_dynamics(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    """TL per layer during training on digits: rise, depth order, sequential timing, surrogate, NC1."""
    split = digits(seed=config.split_seed)
    trackers = {s: _tl_run(split, config, s) for s in ctx.track(config.seeds, "TL dynamics (digits)")}
    shuffled = {s: _tl_run(split, config, s, shuffled=True)
                for s in ctx.track(config.seeds, "TL dynamics, shuffled-label control")}
    figs["tl"] = trackers[config.seeds[0]]
    gap, rise, final, depth_ok, seq_ok, rho_s, rho_nc, depth_init = [], [], [], [], [], [], [], []
    rise_ctrl, depth_ctrl = [], []
    for tr in shuffled.values():
        tl = {k: tr.series(k, "tl")[1] for k in tr.names}
        rise_ctrl.append(float(tl[tr.names[-1]][-1] - tl[tr.names[-1]][0]))
        depth_ctrl.append(float(np.min(np.diff([tl[k][-1] for k in tr.names]))))
    per_seed = {}
    for s, tr in trackers.items():
        names = tr.names
        last = names[-1]                                   # input of the readout = last hidden layer
        tl = {k: tr.series(k, "tl")[1] for k in names}
        ends = np.array([tl[k][-1] for k in names])
        starts = np.array([tl[k][0] for k in names])
        epochs = tr.series(last, "tl")[0]
        halves = [_half_time(epochs, tl[k]) for k in names[1:]]    # hidden layers only (the input does not move)
        _, sur = tr.series(last, "surrogate")
        _, ncs = tr.series(last, "nc1")
        rise.append(tl[last][-1] - tl[last][0])
        gap.append((tl[last][-1] - tl[last][0]) / max(1 - tl[last][0], 1e-12))
        final.append(tl[last][-1])
        depth_ok.append(float(np.min(np.diff(ends))))              # worst step of TL with depth
        depth_init.append(float(np.min(np.diff(starts))))          # the same at initialisation (reported)
        seq_ok.append(float(np.min(np.diff(halves))))              # worst step of half-rise epoch with depth
        rho_s.append(spearman(tl[last], sur))
        rho_nc.append(spearman(tl[last], ncs))
        per_seed[s] = {"final_tl_by_depth": ends.round(4).tolist(), "half_rise_epoch_by_depth": halves}
    rise_paired = [a - b for a, b in zip(rise, rise_ctrl)]
    depth_paired = [a - b for a, b in zip(depth_ok, depth_ctrl)]
    metrics["tl_dynamics"] = {"per_seed": per_seed, "rise_last": rise, "gap_closed_last": gap,
                              "rise_last_shuffled_labels": rise_ctrl, "rise_last_trained_minus_shuffled": rise_paired,
                              "depth_min_step": depth_ok, "depth_min_step_shuffled_labels": depth_ctrl,
                              "depth_min_step_trained_minus_shuffled": depth_paired,
                              "tl_init_last": [float(t.series(t.names[-1], "tl")[1][0]) for t in trackers.values()], "final_last": final,
                              "spearman_tl_surrogate": rho_s, "spearman_tl_nc1": rho_nc}
    setup = (f"MLP {config.tl_depth}×{config.tl_width} GELU on digits, SGD lr {config.tl_lr} momentum "
             f"{config.tl_momentum}, {config.tl_epochs} epochs, TL on the 1437 training images")
    m_rise, iv_rise = C.mean_interval(rise_paired, domain=(-2.0, 2.0))
    m_raw, iv_raw = C.mean_interval(rise, domain=(-1.0, 1.0))
    m_fin, iv_fin = C.mean_interval(final, domain=(0.0, 1.0))
    m_gap, iv_gap = C.mean_interval(gap, domain=(-math.inf, 1.0))
    m_s, iv_s = _mean_iv(rho_s, (-1.0, 1.0))
    m_nc, iv_nc = _mean_iv(rho_nc, (-1.0, 1.0))
    m_dep, iv_dep = C.mean_interval(depth_paired, domain=(-2.0, 2.0))
    m_dep_raw, iv_dep_raw = C.mean_interval(depth_ok, domain=(-1.0, 1.0))
    m_seq, iv_seq = C.mean_interval(seq_ok)
    tl0 = float(np.mean(metrics["tl_dynamics"]["tl_init_last"]))
    src_seq = "abstract: deep networks learn to sequentially transform representations toward target-linear structure"
    control = ("the same network, initialisation, batch order, optimiser and seeds trained on shuffled training "
               "labels (a fixed permutation drawn from each seed), TL still measured against the true labels: "
               "training without the targets' information; verdict on the paired difference trained − shuffled")
    return [
        C.at_least("tl_rises", "Training on the labels raises the Target Linearity of the last hidden layer "
                   "(initialisation → end) by at least 0.05 more than training the same network on shuffled labels "
                   "does: paired difference of the rises, trained − shuffled, mean over seeds.",
                   measured=m_rise, interval=iv_rise, bound=0.05, domain=(-2.0, 2.0),
                   reason=f"TL is an R² ≤ 1 and starts at {tl0:.2f} here, so the largest possible rise is "
                   f"{1 - tl0:.2f}; 0.05 asks for about a third of that headroom and is several times the spread "
                   "of TL at initialisation across seeds; Student-t interval over the paired seeds",
                   kind="paper", source=src_seq, object="real", control=control,
                   tuned_after_look="threshold 0.2 → 0.05 after the first run showed TL ≈ 0.83 at initialisation "
                   "on digits (random GELU features of nearly linearly separable images), which made a rise of "
                   "0.2 impossible; the shuffled-label control was added later with the bound kept at 0.05",
                   note=f"{setup}. Per seed: rise with the labels {[round(float(v), 4) for v in rise]}, with "
                   f"shuffled labels {[round(v, 4) for v in rise_ctrl]}. Before the control the claim was the rise alone "
                   f"(≥ 0.05): {m_raw:.3f} [{iv_raw[0]:.3f}, {iv_raw[1]:.3f}]"),
        C.at_least("tl_closes_gap", "Training closes at least half of the last hidden layer's gap to full target "
                   "linearity: (TL_end − TL_init)/(1 − TL_init), mean over seeds.", measured=m_gap, interval=iv_gap,
                   bound=0.5, reason="half the gap: a majority of the remaining non-linear part removed",
                   kind="reconstruction", domain=(-math.inf, 1.0),
                   source="inferred: the abstract's 'toward target-linear structure' read as approaching TL = 1",
                   tuned_after_look="claim added after the first run showed TL ≈ 0.83 at initialisation",
                   note=setup),
        C.at_least("tl_final_high", "The last hidden layer ends nearly target-linear (TL ≥ 0.9).", measured=m_fin,
                   interval=iv_fin, bound=0.9, reason="a well-fitted classifier's last features are close to "
                   "class-mean structure; 0.9 fixed before the run", kind="reconstruction", domain=(0.0, 1.0),
                   source="inferred: digits is fitted to near 100% training accuracy at this size", note=setup),
        C.at_least("tl_increases_with_depth", "Training on the labels makes TL non-decreasing with depth (input → "
                   "last hidden layer) and orders it more than training on shuffled labels: measured is the binding "
                   "one of (a) the smallest step TL(layer l+1) − TL(layer l) at the end of training, trained minus "
                   "the shuffled-label control, paired by seed, and (b) the trained smallest step + 0.02 (the "
                   "non-decreasing tolerance); both must be above 0.", measured=min(m_dep, m_dep_raw + 0.02),
                   interval=(min(iv_dep[0], iv_dep_raw[0] + 0.02), min(iv_dep[1], iv_dep_raw[1] + 0.02)),
                   bound=1e-9, domain=(-2.0, 2.02),
                   reason="strictly positive: identical trained and control runs (a difference of exactly 0) must not "
                   "hold, nor a trained TL that falls with depth while the control falls faster; the interval of the "
                   "minimum is the minimum of the two Student-t intervals over the paired seeds (conservative); "
                   "−0.02 is the tolerance the claim had before the control", kind="paper", source=src_seq,
                   object="real", control=control,
                   note=f"smallest step per seed: trained {[round(v, 4) for v in depth_ok]}, shuffled labels "
                   f"{[round(v, 4) for v in depth_ctrl]}, at initialisation (reported, not judged) "
                   f"{[round(v, 4) for v in depth_init]}. Before the control the claim was the trained smallest "
                   f"step alone (≥ −0.02): {m_dep_raw:.4f} [{iv_dep_raw[0]:.4f}, {iv_dep_raw[1]:.4f}]; final TL by "
                   "depth per seed in the metrics"),
        C.at_least("tl_sequential", "Deeper layers make their TL rise later: the smallest step of the half-rise "
                   "epoch from one hidden layer to the next (epochs), mean over seeds, is at least 0.",
                   measured=m_seq, interval=iv_seq, bound=0.0,
                   reason="ties allowed (epoch resolution)", kind="reconstruction",
                   source="inferred: one reading of 'sequentially' (a timing order across layers)",
                   note=f"per seed {seq_ok}; half-rise epochs by depth per seed in the metrics"),
        C.at_least("surrogate_tracks_tl", "The Gram surrogate of the last layer co-evolves with its TL: Spearman "
                   "correlation over epochs, mean over seeds.", measured=m_s, interval=iv_s, bound=0.8,
                   reason="0.8 pre-registered as a strong monotone association", kind="reconstruction",
                   domain=(-1.0, 1.0),
                   source="inferred: the surrogate sees the weights only through the Gram, which the abstract "
                   "names as the key object", note="surrogate normalised by ‖Z_c‖²; " + setup),
        C.at_most("tl_vs_neural_collapse", "TL and NC1 of the last hidden layer move in opposite directions: "
                  "Spearman correlation over epochs, mean over seeds.", measured=m_nc, interval=iv_nc, bound=-0.8,
                  reason="-0.8 pre-registered as a strong negative monotone association", kind="reconstruction",
                  domain=(-1.0, 1.0),
                  source="inferred: our operationalisation of the abstract's 'the linearization perspective "
                         "interprets Neural Collapse' (TL and NC1 are closely linked for one-hot targets, so a "
                         "strong association is partly built in)", note=setup),
    ]


# --------------------------------------------------------------------------- (4) Swiss roll

def _swiss_run(config: Config, seed: int, learn: bool = True) -> dict:
    """Virtual features X̃ = X − κ Σ_s G_X(s) of a Swiss roll over ``swiss_steps`` full-batch steps.
    ``learn=False`` is the control that removes learning: the same network, data and virtual-feature
    update with ``opt.step()`` skipped (weights frozen at their initialisation)."""
    Xn, t = swiss_roll(config.swiss_n, seed=seed)
    X = torch.from_numpy(Xn).double()
    y = torch.from_numpy((t - t.mean()) / t.std()).double()[:, None]
    torch.manual_seed(seed)
    model = mlp(2, config.swiss_width, 2, 1, activation="gelu", first_bias=False).double()
    opt = torch.optim.SGD(model.parameters(), lr=config.swiss_lr)
    kappa = config.swiss_lr * config.swiss_n          # per-sample virtual step: the loss is a mean over n
    X_virtual = X.clone()
    with FeatureRecorder(model, ["0"]) as rec:
        for _ in range(config.swiss_steps):
            opt.zero_grad()
            F.mse_loss(model(X), y).backward()
            X_virtual -= kappa * rec.G_H("0")         # X̃ ← X̃ − κ G_X
            if learn:
                opt.step()
    return {"X": Xn, "t": t, "X_virtual": X_virtual.numpy(),
            "tl_input": target_linearity(X, t), "tl_virtual": target_linearity(X_virtual, t)}


def _swiss_roll(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    """Virtual features X̃ = X − κ Σ_s G_X(s) of a Swiss roll become linear in the roll parameter."""
    runs = {s: _swiss_run(config, s) for s in ctx.track(config.seeds, "Swiss roll")}
    frozen = {s: _swiss_run(config, s, learn=False) for s in ctx.track(config.seeds, "Swiss roll, frozen control")}
    figs["swiss"] = runs[config.seeds[0]]
    gains = [r["tl_virtual"] - r["tl_input"] for r in runs.values()]
    gains_frozen = [r["tl_virtual"] - r["tl_input"] for r in frozen.values()]
    paired = [a - b for a, b in zip(gains, gains_frozen)]
    metrics["swiss_roll"] = {"tl_input": [r["tl_input"] for r in runs.values()],
                             "tl_virtual": [r["tl_virtual"] for r in runs.values()],
                             "tl_virtual_frozen": [r["tl_virtual"] for r in frozen.values()],
                             "gain_trained": gains, "gain_frozen": gains_frozen, "gain_trained_minus_frozen": paired}
    mean, iv = C.mean_interval(paired, domain=(-1.0, 1.0))
    m_raw, iv_raw = C.mean_interval(gains, domain=(-1.0, 1.0))
    setup = (f"{config.swiss_n} points, MLP 2×{config.swiss_width} GELU without first-layer bias, full-batch MSE on "
             f"the standardised roll parameter, SGD lr {config.swiss_lr}, {config.swiss_steps} steps; κ = lr·n "
             "(inferred: the per-sample step, as the loss is a mean)")
    return [C.at_least("swiss_roll_linearises", "Learning unrolls the Swiss roll's virtual features X̃ = X − κ Σ_s "
                       "G_X(s): their gain in target linearity over the input (TL in the roll parameter) is larger "
                       "with training than with the weights frozen at initialisation — paired difference of the "
                       "gains, trained − frozen, mean over seeds.",
                       measured=mean, interval=iv, bound=0.1, domain=(-1.0, 1.0),
                       reason="0.1, fixed before the run as a visible straightening (loose on purpose), now asked of "
                       "the part of the gain that learning adds",
                       kind="paper", source="abstract: gradient descent implicitly induces a hypothetical "
                       "evolution of features", paper_value="the virtual features unroll", object="toy",
                       control="the same network, data, seeds and virtual-feature update with opt.step() skipped "
                       "(weights frozen): X − κΣG_X already moves the features without learning",
                       note=f"{setup}. Per seed: trained gain {[round(g, 3) for g in gains]}, frozen gain "
                       f"{[round(g, 3) for g in gains_frozen]}. Before the control the claim was the trained gain "
                       f"alone (≥ 0.1): {m_raw:.3f} [{iv_raw[0]:.3f}, {iv_raw[1]:.3f}], most of which the frozen "
                       "weights give as well")]


# --------------------------------------------------------------------------- (5) grokking

def _grok_run(config: Config, seed: int) -> dict:
    split = modular_addition(config.grok_prime, 0.7, seed=seed)
    Xtr, ytr, Xte, yte = _tensors(split)
    torch.manual_seed(seed)
    model = mlp(Xtr.shape[1], config.grok_width, 3, config.grok_prime, activation="relu")
    opt = torch.optim.AdamW(model.parameters(), lr=config.grok_lr, betas=(0.9, 0.98), weight_decay=config.grok_weight_decay)
    tracker = LinearityTracker(model)
    log = {"epoch": [], "train_acc": [], "test_acc": []}

    def measure(e: int) -> None:
        if e % config.grok_every and e != config.grok_epochs:
            return
        log["epoch"].append(e)
        log["train_acc"].append(accuracy(model, Xtr, ytr))
        log["test_acc"].append(accuracy(model, Xte, yte))
        tracker.measure(Xte, labels=yte, epoch=e, tag="test")

    measure(0)
    train_classifier(model, opt, Xtr, ytr, epochs=config.grok_epochs, batch_size=config.grok_batch_size,
                     generator=torch.Generator().manual_seed(seed), on_epoch=measure)
    names = tracker.names
    log["test_tl"] = {f"layer {i}": tracker.series(k, "tl", "test")[1].tolist() for i, k in enumerate(names)}
    return log


def _grokking(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    """x + y mod p: test TL of the last hidden layer rises when test accuracy jumps."""
    runs = {s: _grok_run(config, s) for s in ctx.track(config.seeds, "grokking")}
    figs["grok"] = runs[config.seeds[0]]
    last = f"layer {3}"
    per_seed = []
    for s, r in runs.items():
        acc = np.array(r["test_acc"])
        tl = np.array(r["test_tl"][last])
        crossed = bool(acc.max() >= 0.9)
        epoch_cross = int(r["epoch"][int(np.argmax(acc >= 0.9))]) if crossed else None
        rho = spearman(tl, acc)
        per_seed.append({"seed": s, "grok_epoch": epoch_cross, "tl_start": float(tl[0]), "tl_end": float(tl[-1]),
                         "spearman_tl_test_acc": rho, "final_test_acc": float(acc[-1]),
                         "final_train_acc": r["train_acc"][-1]})
    metrics["grokking"] = per_seed
    rises = [p["tl_end"] - p["tl_start"] for p in per_seed]
    rhos = [p["spearman_tl_test_acc"] for p in per_seed]
    m_r, iv_r = _mean_iv(rises, (-1.0, 1.0))
    m_c, iv_c = _mean_iv(rhos, (-1.0, 1.0))
    n_grok = sum(p["grok_epoch"] is not None for p in per_seed)
    settings = (f"{n_grok} of {len(per_seed)} seeds reached 0.9 test accuracy (grok epochs "
                f"{[p['grok_epoch'] for p in per_seed]}); MLP 3×{config.grok_width} ReLU, AdamW lr {config.grok_lr:g} "
                f"betas (0.9, 0.98) weight decay {config.grok_weight_decay}, batch {config.grok_batch_size}, "
                f"{config.grok_epochs} epochs, 70/30 split of all pairs")
    tuned = ("quick AdamW lr 3e-3 and 400 epochs chosen after lr 1e-3 for 300 epochs grokked in no seed and lr "
             "3e-3 reached 0.56 test accuracy in one of two seeds")
    src = ("inferred: grokking as a late linearization of the last layers; the paper's own statement of it was "
           "not readable")
    return [C.at_least("grokking_tl_rises", f"Grokking (x + y mod {config.grok_prime}): the test-set TL of the last "
                       "hidden layer rises by at least 0.2 over training, mean over seeds.", measured=m_r,
                       interval=iv_r, bound=0.2, domain=(-1.0, 1.0), kind="reconstruction", source=src,
                       reason="direction inferred from the abstract's linearization reading; 0.2 fixed before the run",
                       tuned_after_look=tuned, note=settings),
            C.at_least("grokking_tl_tracks_test_accuracy", f"Grokking (x + y mod {config.grok_prime}): the test-set TL "
                       "of the last hidden layer is rank-correlated with test accuracy over epochs (Spearman, mean "
                       "over seeds, at least 0.5).", measured=m_c, interval=iv_c, bound=0.5, domain=(-1.0, 1.0),
                       kind="reconstruction", source=src,
                       reason="0.5 fixed before the run as a clear positive association", tuned_after_look=tuned,
                       note=settings)]


# --------------------------------------------------------------------------- (6) VAE

def _interpolation_deviation(model: VAE, X: torch.Tensor, pairs: int, g: torch.Generator) -> float:
    """Mean over random pairs of max_α ‖dec((1−α)μ_a + αμ_b) − ((1−α)dec(μ_a) + α dec(μ_b))‖ / ‖dec(μ_a) − dec(μ_b)‖."""
    with torch.no_grad():
        idx = torch.randint(0, len(X), (pairs, 2), generator=g)
        mu, _ = model.encode(X)
        a, b = mu[idx[:, 0]], mu[idx[:, 1]]
        alphas = torch.linspace(0, 1, 9)[:, None, None]
        path = model.decode((1 - alphas) * a + alphas * b)             # (9, pairs, d)
        da, db = model.decode(a), model.decode(b)
        chord = (1 - alphas) * da + alphas * db
        dev = (path - chord).norm(dim=-1).amax(0) / (da - db).norm(dim=-1).clamp_min(1e-9)
    return float(dev.mean())


def _vae_run(config: Config, beta: float, seed: int) -> dict:
    split = digits(seed=config.split_seed)
    X = torch.from_numpy(split.X_train)
    torch.manual_seed(seed)
    model = VAE(X.shape[1], config.vae_hidden, config.vae_latent)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(seed)
    target = X.numpy()                                    # TL target: the (column-centred) image itself
    tl, dev = [], []
    for _ in range(config.vae_epochs):
        perm = torch.randperm(len(X), generator=g)
        for i in range(0, len(X), 128):
            xb = X[perm[i:i + 128]]
            loss = vae_loss(xb, *model(xb, generator=g), beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            mu, _ = model.encode(X)
        tl.append(target_linearity(mu, target))
        dev.append(_interpolation_deviation(model, X, 64, torch.Generator().manual_seed(seed)))
    return {"tl": tl, "deviation": dev}


def _vae(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    """TL of a digits VAE's latent mean μ(x) with respect to the image rises during training."""
    claims = []
    runs = {}
    for beta in config.vae_betas:
        runs[beta] = {s: _vae_run(config, beta, s) for s in ctx.track(config.seeds, f"VAE beta={beta:g}")}
        rises = [r["tl"][-1] - r["tl"][0] for r in runs[beta].values()]
        rho = [spearman(r["tl"], r["deviation"]) for r in runs[beta].values()]
        mean, iv = C.mean_interval(rises, domain=(-1.0, 1.0))
        claims.append(C.at_least(f"vae_latent_tl_rises_beta{beta:g}", f"β-VAE (β = {beta:g}) on digits: TL of the "
                                 "latent mean μ(x) with respect to the centred image rises from epoch 1 to the end "
                                 "(mean over seeds).", measured=mean, interval=iv, bound=0.1,
                                 reason="0.1 fixed before the run as a clear rise", kind="reconstruction",
                                 domain=(-1.0, 1.0),
                                 source="inferred: our operationalisation (TL of the latent mean rises) of the "
                                 "abstract's 'interprets linear interpolation in generative models'",
                                 note=f"MLP VAE 64→{config.vae_hidden}→{config.vae_hidden}→{config.vae_latent}, Adam "
                                 f"1e-3, batch 128, {config.vae_epochs} epochs; Spearman over epochs of TL and the "
                                 f"decoded-interpolation deviation from the pixel chord (reported only; positive = "
                                 f"interpolations bend more as TL grows): "
                                 f"{[round(x, 3) for x in rho]}"))
        metrics[f"vae_beta{beta:g}"] = {"tl_first": [r["tl"][0] for r in runs[beta].values()],
                                        "tl_last": [r["tl"][-1] for r in runs[beta].values()],
                                        "spearman_tl_interp_deviation": rho}
    figs["vae"] = runs
    return claims


# --------------------------------------------------------------------------- (7) paper-scale data

def _paper_scale(config: Config, ctx: RunContext, metrics: dict) -> list:
    """MNIST/SVHN/CIFAR whitening grids and TL curves on the user's arrays; BERT; random labels."""
    found = _user_data_files(config)
    claims = []
    if not found:
        claims.append(C.not_checkable("whitening_image_grids", "Gram whitening matches or beats SGD on MNIST, SVHN, "
                                      "CIFAR-10 and CIFAR-100 (MLP, learning-rate grid, 5 seeds).",
                                      paper_value="matches or outperforms", reason="the image data sets are not "
                                      "shipped and nothing is downloaded at run time",
                                      full_scale="with --set data_dir=DIR holding mnist.npz, svhn.npz, cifar10.npz, "
                                      "cifar100.npz (X_train, y_train, X_test, y_test) the run compares whitened and "
                                      "plain SGD on each set over the learning-rate grid and seeds",
                                      kind="reconstruction", source="inferred: the authors' released experiments "
                                      "compare on these sets"))
        claims.append(C.not_checkable("tl_image_curves", "Layer-wise TL rises during training on CIFAR-scale data.",
                                      paper_value="rising, deeper later", reason="no image data sets offline",
                                      full_scale="the TL-dynamics part runs on each user data set found in data_dir",
                                      kind="reconstruction", source="inferred: the authors' released experiments"))
    for name, path in found.items():
        split = load_npz(path)
        diffs = []
        for lr in config.whiten_lrs:
            for s in config.seeds:
                r = _train_pair(split, config.user_width, 2, config.user_epochs, lr, config.whiten_momentum,
                                config.batch_size, s)
                diffs.append(r["whiten"][-1] - r["sgd"][-1])
        mean, iv = C.mean_interval(diffs, domain=(-1.0, 1.0))
        metrics[f"whitening_{name}"] = {"differences": diffs, "lrs": config.whiten_lrs}
        claims.append(C.at_least(f"whitening_matches_sgd_{name}", f"{name}: whitened minus plain SGD final test "
                                 "accuracy over the learning-rate grid and seeds is at least −2 points.",
                                 measured=mean, interval=iv, bound=-0.02, domain=(-1.0, 1.0),
                                 reason="same reading of 'matches' as on "
                                 "digits", kind="reconstruction", source="inferred: the authors' released "
                                 "experiments compare on these sets", paper_value="matches or outperforms"))
        sub = Split(split.X_train[:10000], split.y_train[:10000], split.X_test, split.y_test)
        tr = _tl_run(sub, config.model_copy(update={"tl_width": config.user_width}), config.seeds[0])
        e, tl = tr.series(tr.names[-1], "tl")
        claims.append(C.at_least(f"tl_closes_gap_{name}", f"{name}: training closes at least half of the last hidden "
                                 "layer's gap to full target linearity, (TL_end − TL_init)/(1 − TL_init) (first "
                                 "10 000 training images, one seed).",
                                 measured=float((tl[-1] - tl[0]) / max(1 - tl[0], 1e-12)), bound=0.5,
                                 domain=(-math.inf, 1.0), reason="same reading as tl_closes_gap on digits (a rise "
                                 "of fixed size cannot be asked when TL starts high)", kind="reconstruction",
                                 source="inferred: the authors' released experiments",
                                 note=f"TL of the last hidden layer {tl[0]:.3f} at initialisation, {tl[-1]:.3f} at "
                                 "the end"))
    claims.append(C.not_checkable("bert_tl", "TL rises layer-wise in a pretrained BERT.", paper_value="TL figure",
                                  reason="no pretrained BERT weights are shipped or downloaded (the one installed local model, "
                                         "smollm2-135m, is a decoder, not BERT)",
                                  full_scale="none: no BERT weights ship, so the full configuration does not run it; "
                                  "LinearityTracker accepts a user's BERT (its nn.Linear layers) and labelled sentences",
                                  kind="reconstruction", source="inferred: the authors' released figure list"))
    claims.append(C.not_checkable("random_labels_cifar", "TL under partially random CIFAR-10 labels.",
                                  paper_value="TL figure", reason="CIFAR-10 is not shipped; the paper's statement about "
                                  "it was not readable", full_scale="none: the full configuration does not run it; "
                                  "LinearityTracker can be used in a user's random-label run",
                                  kind="reconstruction", source="inferred: the authors' released figure list"))
    return claims


# --------------------------------------------------------------------------- figures

def _figures(ctx: RunContext, figs: dict, config: Config) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = figs["tl"].plot()
    fig.suptitle(f"Digits MLP {config.tl_depth}×{config.tl_width}, seed {config.seeds[0]}: TL of each layer's input")
    ctx.save_figure("tl_by_layer", fig, caption="Target Linearity of each layer's input features per epoch (darker = "
                    "shallower). The paper predicts TL rising during training and higher in deeper layers; right: "
                    "the last layer's TL with its Gram surrogate and NC1 (each divided by its maximum).")

    fig, ax = plt.subplots(figsize=(7, 3.8), constrained_layout=True)
    for s, r in figs["whitening"].items():
        for arm, col in (("sgd", SGD_COLOUR), ("whiten", WHITEN_COLOUR)):
            ax.plot(r[arm], color=col, alpha=0.8, label=("SGD" if arm == "sgd" else "Gram whitening")
                    if s == config.seeds[0] else None)
    ax.set_xlabel("epoch")
    ax.set_ylabel("digits test accuracy")
    ax.set_ylim(0, 1)
    ax.legend()
    ctx.save_figure("whitening_vs_sgd", fig, caption="Test accuracy per epoch of SGD and Gram-whitened SGD (same "
                    "initialisation and batches; one line per seed). The paper says whitening matches or beats SGD.")

    sw = figs["swiss"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4), constrained_layout=True)
    for ax, key, title in ((axes[0], "X", f"input (TL {sw['tl_input']:.2f})"),
                           (axes[1], "X_virtual", f"virtual features (TL {sw['tl_virtual']:.2f})")):
        sc = ax.scatter(sw[key][:, 0], sw[key][:, 1], c=sw["t"], s=4, cmap="viridis")
        ax.set_title(title)
    fig.colorbar(sc, ax=axes, label="roll parameter t")
    ctx.save_figure("swiss_roll_virtual_features", fig, caption="Swiss roll coloured by its parameter: input (left) "
                    "and virtual features X − κΣG_X after training (right). The paper predicts that the virtual "
                    "features unroll into a near-linear curve along the target.")

    gr = figs["grok"]
    fig, ax = plt.subplots(figsize=(8, 4), constrained_layout=True)
    ax.plot(gr["epoch"], gr["train_acc"], color="k", ls=":", label="train accuracy")
    ax.plot(gr["epoch"], gr["test_acc"], color="k", label="test accuracy")
    cmap = plt.get_cmap("viridis")
    for i, (k, v) in enumerate(gr["test_tl"].items()):
        ax.plot(gr["epoch"], v, color=cmap(i / max(len(gr["test_tl"]) - 1, 1)), label=f"test TL, {k} input")
    ax.set_xlabel("epoch")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="center right")
    ctx.save_figure("grokking", fig, caption=f"x + y mod {config.grok_prime}, seed {config.seeds[0]}: accuracy and "
                    "test-set TL per layer. Reading tested here: the last layers' TL rises when test accuracy jumps.")

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    for beta, runs in figs["vae"].items():
        for j, r in enumerate(runs.values()):
            axes[0].plot(np.arange(1, len(r["tl"]) + 1), r["tl"], label=f"β = {beta:g}" if j == 0 else None,
                         color="tab:green" if beta == config.vae_betas[0] else "tab:purple", alpha=0.8)
            axes[1].plot(r["tl"], r["deviation"], ".", color="tab:green" if beta == config.vae_betas[0] else
                         "tab:purple", alpha=0.6)
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("TL of μ(x) w.r.t. the image")
    axes[0].legend()
    axes[1].set_xlabel("TL of μ(x)")
    axes[1].set_ylabel("interpolation deviation from the chord")
    ctx.save_figure("vae_latent_linearity", fig, caption="Digits VAE: TL of the latent mean per epoch (left) and the "
                    "decoded linear interpolation's deviation from the straight pixel-space chord against TL (right). "
                    "The paper links target-linear latents to linear interpolation.")


def _user_data_files(config: Config) -> dict[str, Path]:
    """The user's data sets found in ``config.data_dir`` ({name: path}; empty without a data_dir)."""
    found = {n: Path(config.data_dir) / f"{n}.npz" for n in USER_DATA_SETS} if config.data_dir else {}
    return {n: p for n, p in found.items() if p.exists()}


def preflight(config: Config) -> None:
    """Open and validate every external input before any training: each ``<data_dir>/<name>.npz``
    (:func:`.data.check_npz`); a ``data_dir`` holding none of them is refused.

    Raises:
        ValueError / FileNotFoundError: one line naming the folder or file and what is allowed.
    """
    if config.data_dir is None:
        return
    found = _user_data_files(config)
    if not found:
        raise ValueError(f"data_dir {config.data_dir!r} holds none of "
                         + ", ".join(f"{n}.npz" for n in USER_DATA_SETS) + " (arrays X_train, y_train, X_test, y_test)")
    for path in found.values():
        check_npz(path)


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run all parts and return the claims (see module docstring)."""
    from threadpoolctl import threadpool_limits

    preflight(config)
    metrics: dict = {}
    figs: dict = {}
    claims = []
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        with warnings.catch_warnings(), threadpool_limits(limits=config.threads):
            warnings.simplefilter("ignore", TrivialTargetLinearityWarning)
            # every random part follows the run seed: internal seeds 1000·seed + offset, digits split at the run seed
            config = config.model_copy(update={"seeds": [1000 * ctx.seed + k for k in config.seeds],
                                               "split_seed": ctx.seed})
            if ctx.confirmation:
                # confirmation run (a run seed never used while choosing): only the parts with a claim
                # tuned after a look, and only those claims
                for part in (_whitening_vs_sgd, _linearity_dynamics, _grokking):
                    claims += [c for c in part(config, ctx, metrics, figs) if c.tuned_after_look]
                return Outcome(metrics=metrics, claims=claims, notes="confirmation run: whitening vs SGD, TL "
                               f"dynamics and grokking on internal seeds {config.seeds}")
            claims += _identities(config, ctx, metrics)
            claims += _whitening_vs_sgd(config, ctx, metrics, figs)
            claims += _linearity_dynamics(config, ctx, metrics, figs)
            claims += _swiss_roll(config, ctx, metrics, figs)
            claims += _grokking(config, ctx, metrics, figs)
            claims += _vae(config, ctx, metrics, figs)
            claims += _paper_scale(config, ctx, metrics)
    finally:
        torch.set_num_threads(threads)
    _figures(ctx, figs, config)
    notes = ("Inputs: scikit-learn's bundled digits (1437/360 split, seed 0), make_swiss_roll, modular addition. "
             "Gram whitening takes the polar factor by SVD on CPU (the authors use 10 quintic Newton–Schulz steps, "
             "the default on an accelerator; both agree, see newton_schulz_matches_svd); the momentum buffer is not rotated. TL is the "
             "in-sample R² onto column-centred targets without intercept (the authors' convention), measured on the "
             "training set except for grokking (test set). Surrogate = (1/C) tr(Y_cᵀ Z Zᵀ Y_c)/‖Z_c‖² with Z the "
             "layer's pre-activation. Settings not in the abstract (learning rates, widths, epochs, κ for the "
             "virtual Swiss-roll features) follow the authors' released description at laptop size and are inferred.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
