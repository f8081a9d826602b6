"""Weight-sparse training: exact top-k magnitude projection of every weight matrix after every
optimiser step, with the kept fraction annealed from dense to the target, a floor of nonzeros per
neuron, gradient-RMS normalisation and Adam with a large ε; and the dense twin stopped at the
sparse model's validation loss (matched loss).

Recipe (Gao et al. 2025, second-hand from an open re-implementation's notes on the paper and the
authors' reference code): keep the same fraction of largest-magnitude entries in every matrix;
the fraction goes from 1 at 1 % of training to the target at 50 %; at least j = 4 nonzeros per
neuron; gradient normalised to RMS 1 each step; Adam ε = 0.1, β = (0.9, 0.95), decoupled weight
decay 0.1 on matrices. Choices left open there and made here (inferred; all options): the floor
is "reserve the top j of each row, then fill by global magnitude" and applies to output rows;
the RMS is global over all parameters; the schedule is linear in the kept fraction.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["kept_fraction", "nonzeros_target", "topk_mask_with_floor", "project_topk_", "normalize_grad_rms_",
           "TrainConfig", "TrainResult", "train_lm", "validation_loss"]


def kept_fraction(step: int, total: int, target: float, start: float = 0.01, end: float = 0.5,
                  shape: Literal["linear", "exp"] = "linear") -> float:
    """Kept fraction of each matrix at ``step`` (0-based) of ``total``.

    ``1`` while ``step < start·total``; then from 1 to ``target`` until ``end·total`` (linear in
    the fraction, or geometric for ``shape="exp"``); ``target`` afterwards. Monotone non-increasing.

    Raises:
        ValueError: ``target`` outside (0, 1], ``0 <= start < end <= 1`` violated, or an unknown shape.

    Source: Gao et al. 2025 via the re-implementation's notes (1 % → 50 %, linear in the paper).
    """
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target kept fraction {target}; allowed 0 < target <= 1")
    if not 0.0 <= start < end <= 1.0:
        raise ValueError(f"anneal window start={start}, end={end}; need 0 <= start < end <= 1")
    if shape not in ("linear", "exp"):
        raise ValueError(f"schedule shape {shape!r}; allowed: linear, exp")
    s0, s1 = start * total, end * total
    if step < s0:
        return 1.0
    if step >= s1:
        return target
    u = (step - s0) / (s1 - s0)
    return 1.0 + u * (target - 1.0) if shape == "linear" else target ** u


def nonzeros_target(shape: tuple[int, int], fraction: float, min_per_neuron: int) -> int:
    """Nonzeros a ``[rows, cols]`` matrix keeps: ``max(⌈fraction·rows·cols⌉, rows·min(j, cols))``."""
    rows, cols = shape
    return min(rows * cols, max(math.ceil(fraction * rows * cols), rows * min(min_per_neuron, cols)))


def topk_mask_with_floor(w: torch.Tensor, k: int, min_per_neuron: int) -> torch.Tensor:
    """Boolean mask of the entries kept by the exact top-k projection with a per-row floor.

    Reserve the ``j = min_per_neuron`` largest ``|w|`` of every row (output neuron), then fill up to
    ``k`` entries in total with the largest remaining ``|w|``. Exactly
    ``max(k, rows·j)`` entries are kept (ties broken by index: among equal ``|w|`` the lower
    row-major index is kept, on every device).

    Args:
        w: float ``[rows, cols]``.
        k: entries to keep (>= 1).
        min_per_neuron: floor j per row (>= 0).

    Raises:
        ValueError: ``w`` not 2-D, ``k < 1`` or ``j < 0``.

    Source: Gao et al. 2025 (top-k by magnitude, j = 4 floor); reserve-then-fill is inferred.
    """
    if w.ndim != 2:
        raise ValueError(f"w has shape {tuple(w.shape)}; expected a matrix [rows, cols]")
    if k < 1 or min_per_neuron < 0:
        raise ValueError(f"k={k}, min_per_neuron={min_per_neuron}; need k >= 1, min_per_neuron >= 0")
    a = w.detach().abs()
    rows, cols = a.shape
    j = min(min_per_neuron, cols)
    mask = torch.zeros_like(a, dtype=torch.bool)
    # the m-th largest value v comes from topk (its values are exact; only its order among ties is
    # unspecified and device-dependent), then every entry > v is kept and the entries == v are
    # taken in index order until m are kept: the same set as the first m of a stable descending
    # sort (ties broken by index, as documented), at about half the cost of that sort
    if j:
        mask = _first_m_largest(a, j)                                 # reserve: top-j of each row
    rest = min(max(k - rows * j, 0), rows * cols - rows * j)
    if rest:
        score = a.masked_fill(mask, -1.0).reshape(1, -1)             # reserved entries never re-picked
        mask |= _first_m_largest(score, rest).view(rows, cols)       # fill
    return mask


def _first_m_largest(a: torch.Tensor, m: int) -> torch.Tensor:
    """Boolean mask of the ``m`` largest entries of each row of ``a [rows, n]``, ties at the m-th
    value broken by index (lower index first); ``1 <= m <= n``."""
    v = a.topk(m, dim=1).values[:, -1:]
    gt, eq = a > v, a == v
    return gt | (eq & (eq.cumsum(1) <= m - gt.sum(1, keepdim=True)))


@torch.no_grad()
def project_topk_(matrices: dict[str, nn.Linear], fraction: float, min_per_neuron: int) -> dict[str, int]:
    """Zero, in place, every entry outside :func:`topk_mask_with_floor` of each matrix.

    Returns ``name -> nonzeros kept`` (the count the mask keeps, computed from the mask).
    """
    kept = {}
    for name, m in matrices.items():
        k = nonzeros_target(tuple(m.weight.shape), fraction, min_per_neuron)
        mask = topk_mask_with_floor(m.weight, k, min_per_neuron)
        m.weight.mul_(mask)
        kept[name] = int(mask.sum())
    return kept


@torch.no_grad()
def normalize_grad_rms_(params: list[nn.Parameter], eps: float = 1e-12) -> float:
    """Scale all gradients together to RMS 1: ``g ← g / sqrt(mean(g²))`` over every entry.

    Returns the RMS after scaling (1 up to rounding unless every gradient is 0).

    Source: Gao et al.'s reference code via the re-implementation's notes (normalise, not clip).
    """
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    sq = sum(float(g.pow(2).sum()) for g in grads)
    n = sum(g.numel() for g in grads)
    rms = math.sqrt(sq / n)
    for g in grads:
        g.div_(rms + eps)
    return math.sqrt(sum(float(g.pow(2).sum()) for g in grads) / n)


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings.

    Attributes:
        steps: optimiser steps.
        batch: windows per step.
        lr: peak learning rate (1 % warm-up, then linear decay to 10 %).
        target_fraction: kept fraction at the end (1 = dense).
        min_per_neuron: the floor j of kept weights per neuron.
        schedule: ``linear`` | ``exp`` (how the kept fraction falls).
        anneal_start: fraction of the steps before the kept fraction starts to fall.
        anneal_end: fraction of the steps at which it reaches ``target_fraction``.
        adam_eps: Adam's epsilon.
        betas: Adam's betas.
        weight_decay: AdamW weight decay.
        eval_every: steps between validation losses.
        stop_at_loss: stop once the validation loss is <= this (the dense twin's matched-loss
            stop), ``None`` to run all steps.

    Raises:
        ValueError: a non-positive steps/batch/lr/eval_every, a non-finite lr/adam_eps/weight_decay/
            stop_at_loss (``lr=inf`` would train to NaN), betas outside [0, 1), ``min_per_neuron < 0``,
            or a schedule :func:`kept_fraction` rejects.
    """

    steps: int = 600
    batch: int = 32
    lr: float = 0.01
    target_fraction: float = 1.0
    min_per_neuron: int = 4
    schedule: Literal["linear", "exp"] = "linear"
    anneal_start: float = 0.01
    anneal_end: float = 0.5
    adam_eps: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 0.1
    eval_every: int = 50
    stop_at_loss: float | None = None

    def __post_init__(self) -> None:
        import math

        if self.steps < 1 or self.batch < 1 or not self.lr > 0 or self.eval_every < 1:
            raise ValueError(f"steps={self.steps}, batch={self.batch}, lr={self.lr}, eval_every={self.eval_every}: "
                             "all must be positive")
        for name in ("lr", "adam_eps", "weight_decay"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"TrainConfig.{name}={v}; allowed: a finite number >= 0 (lr > 0)")
        if len(self.betas) != 2 or not all(math.isfinite(b) and 0 <= b < 1 for b in self.betas):
            raise ValueError(f"TrainConfig.betas={self.betas}; allowed: two numbers in [0, 1)")
        if self.stop_at_loss is not None and not math.isfinite(self.stop_at_loss):
            raise ValueError(f"TrainConfig.stop_at_loss={self.stop_at_loss}; allowed: a finite loss or None")
        if isinstance(self.min_per_neuron, bool) or not isinstance(self.min_per_neuron, int) or self.min_per_neuron < 0:
            raise ValueError(f"min_per_neuron={self.min_per_neuron!r}; must be an integer >= 0")
        kept_fraction(0, self.steps, self.target_fraction, self.anneal_start, self.anneal_end, self.schedule)


@dataclass
class TrainResult:
    """What :func:`train_lm` returns.

    Attributes:
        steps_run: optimiser steps taken; val_loss: final validation loss (nats/token);
        history: ``(step, val_loss)`` pairs; invariant_violations: steps where a matrix's nonzero
        count differed from :func:`nonzeros_target`; fractions: kept fraction per step;
        grad_rms: gradient RMS after normalisation, per step; seconds_per_step: mean wall time.
    """

    steps_run: int
    val_loss: float
    history: list[tuple[int, float]] = field(default_factory=list)
    invariant_violations: int = 0
    fractions: list[float] = field(default_factory=list)
    grad_rms: list[float] = field(default_factory=list)
    seconds_per_step: float = 0.0


@torch.no_grad()
def validation_loss(model: nn.Module, windows: np.ndarray, batch: int = 256) -> float:
    """Mean next-token cross-entropy (nats/token) of ``model`` on ``windows [n, T+1]``."""
    model.eval()
    dev = next(model.parameters()).device
    tot, n = 0.0, 0
    for i in range(0, len(windows), batch):
        w = torch.as_tensor(windows[i:i + batch]).to(dev)
        logits = model(w[:, :-1])
        tot += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1), reduction="sum"))
        n += w[:, 1:].numel()
    return tot / n


def train_lm(model: nn.Module, train: np.ndarray, val: np.ndarray, cfg: TrainConfig, seed: int,
             matrices: dict[str, nn.Linear] | None = None) -> TrainResult:
    """Train ``model`` on next-token prediction; weight-sparse when ``cfg.target_fraction < 1``.

    Each step: loss → backward → gradient RMS normalised to 1 → AdamW step → (sparse runs) every
    matrix projected onto its top-k set with the per-neuron floor; the nonzero counts are checked
    against :func:`nonzeros_target` at every step (counted in ``invariant_violations``).

    Args:
        model: maps ``idx [B, T]`` to logits ``[B, T, V]``; ``matrices`` (default
            ``model.matrices()``) are the sparsified weights.
        train, val: int64 windows ``[n, T+1]``.

    Raises:
        ValueError: fewer training windows than one batch.
    """
    if len(train) < cfg.batch:
        raise ValueError(f"{len(train)} training windows < batch {cfg.batch}")
    matrices = matrices if matrices is not None else model.matrices()
    sparse = cfg.target_fraction < 1.0
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=cfg.betas,
                            eps=cfg.adam_eps)
    warm = max(1, int(0.01 * cfg.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, 1.0 - 0.9 * max(0, s - warm) / max(1, cfg.steps - warm)))
    rng = np.random.default_rng(seed)
    dev = next(model.parameters()).device          # batches follow the model (CPU or GPU)
    res = TrainResult(0, float("nan"))
    t0 = time.perf_counter()
    for step in range(cfg.steps):
        model.train()
        w = torch.as_tensor(train[rng.integers(0, len(train), cfg.batch)]).to(dev)
        logits = model(w[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        res.grad_rms.append(normalize_grad_rms_(params))
        opt.step()
        sched.step()
        if sparse:
            frac = kept_fraction(step, cfg.steps, cfg.target_fraction, cfg.anneal_start, cfg.anneal_end,
                                 cfg.schedule)
            kept = project_topk_(matrices, frac, cfg.min_per_neuron)
            res.fractions.append(frac)
            res.invariant_violations += sum(
                int(int((m.weight != 0).sum()) > nonzeros_target(tuple(m.weight.shape), frac, cfg.min_per_neuron)
                    or kept[n] != nonzeros_target(tuple(m.weight.shape), frac, cfg.min_per_neuron))
                for n, m in matrices.items())
        res.steps_run = step + 1
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            vl = validation_loss(model, val)
            res.history.append((step + 1, vl))
            if cfg.stop_at_loss is not None and vl <= cfg.stop_at_loss:
                break
    res.seconds_per_step = (time.perf_counter() - t0) / max(res.steps_run, 1)
    res.val_loss = res.history[-1][1]
    model.eval()
    return res
