"""Training and evaluation loops shared by AFDONet and the baselines (Adam, mini-batches)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from .models import relative_l2


@dataclass
class FitReport:
    """Losses per epoch and CPU seconds of a :func:`fit` call."""

    losses: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    samples_seen: int = 0

    @property
    def seconds_per_sample(self) -> float:
        """Training CPU seconds per sample seen."""
        return self.cpu_seconds / max(self.samples_seen, 1)


def _check_pairs(fn: str, x: torch.Tensor, y: torch.Tensor) -> None:
    """Inputs and targets: tensors, same samples > 0, same (channels, grid), finite, no zero target."""
    if not (torch.is_tensor(x) and torch.is_tensor(y)):
        raise ValueError(f"{fn}(): x and y must be torch tensors, got {type(x).__name__}, {type(y).__name__}")
    if x.ndim < 2 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError(f"{fn}(): x has shape {tuple(x.shape)}, y {tuple(y.shape)}; need the same number (> 0) "
                         "of samples")
    if tuple(x.shape[1:]) != tuple(y.shape[1:]):
        raise ValueError(f"{fn}(): targets y {tuple(y.shape[1:])} must be on the inputs' grid {tuple(x.shape[1:])} "
                         "(channels, grid): the models predict on the input grid; resample y first")
    if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
        raise ValueError(f"{fn}(): data contains NaN or inf")
    zero = y.flatten(1).norm(dim=1) == 0
    if bool(zero.any()):
        raise ValueError(f"{fn}(): target sample {int(zero.nonzero()[0])} is identically zero; the relative L² "
                         "error (loss and metric) is undefined for it")


def fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, epochs: int, batch_size: int = 16, lr: float = 1e-3,
        seed: int = 0, grad_clip: float | None = 1.0, scheduler: bool = True) -> FitReport:
    """Train ``model`` (whose ``forward`` returns (û, μ, log σ²) and which has ``loss``) with Adam.

    Args:
        x, y: inputs and targets, same leading size S, float32.
        epochs: passes over the data (≥ 1).
        batch_size: mini-batch size.
        lr: Adam learning rate (cosine-annealed to 0 when ``scheduler``).
        seed: seeds the shuffling and the VAE noise.

    Returns:
        :class:`FitReport`.

    Raises:
        ValueError: mismatched sizes or grids of x and y, non-finite data, an all-zero target,
            epochs < 1.
    """
    _check_pairs("fit", x, y)
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"fit(): epochs={epochs}, batch_size={batch_size}; need >= 1")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = epochs * ((x.shape[0] + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps) if scheduler else None
    rep = FitReport()
    device = next(model.parameters()).device                 # data move batch by batch to the model's device
    t0 = time.process_time()
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(x.shape[0], generator=g)
        total = 0.0
        for i in range(0, x.shape[0], batch_size):
            idx = perm[i:i + batch_size]
            if len(idx) < 2 and any(isinstance(m, nn.BatchNorm2d) for m in model.modules()):
                continue
            pred, mu, logvar = model(x[idx].to(device))
            loss = model.loss(pred, y[idx].to(device), mu, logvar)
            opt.zero_grad()
            loss.backward()
            if grad_clip:
                nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            opt.step()
            if sched is not None:
                sched.step()
            total += float(loss.detach()) * len(idx)
            rep.samples_seen += len(idx)
        rep.losses.append(total / x.shape[0])
    rep.cpu_seconds = time.process_time() - t0
    return rep


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 64) -> np.ndarray:
    """Per-sample relative L² error of the posterior-mean prediction (eval mode), float64 (S,).

    Raises:
        ValueError: as :func:`fit` for x and y (sizes, grids, NaN, an all-zero target).
    """
    _check_pairs("evaluate", x, y)
    model.eval()
    device = next(model.parameters()).device
    out = []
    for i in range(0, x.shape[0], batch_size):
        pred = model(x[i:i + batch_size].to(device), sample=False)[0]
        out.append(relative_l2(pred, y[i:i + batch_size].to(device)).cpu())
    return torch.cat(out).double().numpy()


@torch.no_grad()
def inference_seconds_per_sample(model: nn.Module, x: torch.Tensor, batch_size: int = 64, repeats: int = 3) -> float:
    """Best-of-``repeats`` CPU seconds per sample for posterior-mean inference over ``x``."""
    model.eval()
    device = next(model.parameters()).device
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        for i in range(0, x.shape[0], batch_size):
            model(x[i:i + batch_size].to(device), sample=False)
        best = min(best, time.process_time() - t0)
    return best / x.shape[0]
