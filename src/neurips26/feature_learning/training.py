"""Plain mini-batch training loops used by the reproduction (a user brings their own loop).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of rows where argmax of ``model(X)`` equals ``y`` (eval mode, no grad)."""
    was = model.training
    model.eval()
    with torch.no_grad():
        acc = float((model(X).argmax(1) == y).to(torch.float64).mean())
    model.train(was)
    return acc


def train_classifier(model: nn.Module, optimizer: torch.optim.Optimizer, X: torch.Tensor, y: torch.Tensor, *,
                     epochs: int, batch_size: int, generator: torch.Generator,
                     on_epoch: Callable[[int], None] | None = None) -> list[float]:
    """Cross-entropy training with shuffled mini-batches; ``on_epoch(e)`` after each epoch
    (``e = 1..epochs``; call it yourself for ``e = 0`` before training).

    Returns:
        The mean training loss of each epoch.

    Raises:
        FloatingPointError: if the loss becomes NaN/inf (a diverging run is not reported silently).
    """
    if epochs < 0 or batch_size < 1:
        raise ValueError(f"epochs={epochs} must be >= 0 and batch_size={batch_size} >= 1")
    losses = []
    n = len(X)
    for e in range(1, epochs + 1):
        model.train()
        perm = torch.randperm(n, generator=generator)
        total = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            loss = F.cross_entropy(model(X[idx]), y[idx])
            if not torch.isfinite(loss):
                raise FloatingPointError(f"training loss is {loss.item()} at epoch {e}: diverged (lower the "
                                         "learning rate)")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / n)
        if on_epoch is not None:
            on_epoch(e)
    return losses


def spearman(a, b) -> float:
    """Spearman rank correlation of two equal-length sequences (NaN if either is constant)."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) != len(b) or len(a) < 3:
        raise ValueError(f"need two sequences of equal length >= 3, got {len(a)} and {len(b)}")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)
