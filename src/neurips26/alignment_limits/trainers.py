r"""Toy policy-gradient trainers over a categorical policy, each with a KL penalty to :math:`\pi_0`.

They stand in for RL fine-tuning so that where *trained* policies land relative to the exact
frontier can be measured in the same run as best-of-N. The policy is
:math:`\pi_\theta = \mathrm{softmax}(\theta)` over :math:`K` outcomes, initialised at
:math:`\theta = \log\pi_0`; every step samples a batch from the current (old) policy.

- ``reinforce``: per-sample KL-shaped reward
  :math:`R_i = r(y_i) - \beta\,(\log\pi_\theta(y_i) - \log\pi_0(y_i))` (the "k1" estimator),
  leave-one-out baseline, loss :math:`-\frac1B\sum_i A_i \log\pi_\theta(y_i)`.
- ``ppo``: the same KL-shaped reward, whitened advantages, and ``ppo_epochs`` passes of the
  clipped surrogate :math:`-\min(\rho_i A_i, \mathrm{clip}(\rho_i, 1\pm\epsilon)A_i)`,
  :math:`\rho_i = \pi_\theta(y_i)/\pi_{\mathrm{old}}(y_i)` (Schulman et al., 2017; as in RLHF).
- ``grpo``: group-normalised advantage :math:`A_i = (r_i - \mathrm{mean}\,r)/\mathrm{std}\,r`
  within each group of ``group_size`` samples, the clipped surrogate, and a separate KL penalty
  :math:`\beta\,\frac1B\sum_i k_3(y_i)`, :math:`k_3 = \frac{\pi_0}{\pi_\theta} - \log\frac{\pi_0}{\pi_\theta} - 1`
  (Shao et al., 2024).

The stationary point of the ``reinforce``/``ppo`` objective :math:`\mathbb{E}_\pi r - \beta\,\mathrm{KL}`
is exactly :math:`\pi_\beta` (on the frontier); a finite training run stops short of it. The
exact KL and gain of :math:`\pi_\theta` are recorded along the way.

References:
    Williams (1992) REINFORCE; Schulman et al. (2017) PPO; Shao et al. (2024) GRPO (DeepSeekMath).
    Schulman (2020), "Approximating KL divergence" — the k1/k3 estimators.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .validation import as_betas, as_positive_float, as_positive_int, policy_and_rewards

METHODS = ("reinforce", "ppo", "grpo")
#: |log(pi_theta / pi_old)| and |log(pi0 / pi_theta)| are clamped here before exp (e^20 ~ 5e8)
LOG_RATIO_CLAMP = 20.0


@dataclass(frozen=True)
class TrainingTrace:
    """Where a trained policy goes, measured exactly on the finite support.

    Attributes:
        method: ``reinforce``, ``ppo`` or ``grpo``.
        step: shape (T,), optimiser steps at which the policy was recorded (0 = start).
        kl: shape (T,), exact KL(pi_theta || pi0) in nats.
        gain: shape (T,), exact E_{pi_theta}[r] - E_{pi0}[r] in reward units.
        policy: shape (K,), the final policy's probabilities.
    """

    method: str
    step: np.ndarray
    kl: np.ndarray
    gain: np.ndarray
    policy: np.ndarray


def _exact(log_pi: np.ndarray, log_pi0: np.ndarray, rc: np.ndarray) -> tuple[float, float]:
    pi = np.exp(log_pi)
    return max(float(np.dot(pi, log_pi - log_pi0)), 0.0), float(np.dot(pi, rc))


def train_policy(pi0, r, beta: float, *, method: str = "reinforce", steps: int = 1000,
                 batch_size: int = 64, lr: float = 0.05, clip_eps: float = 0.2, ppo_epochs: int = 4,
                 group_size: int = 8, record_every: int = 50,
                 generator: torch.Generator | None = None, seed: int | None = None) -> TrainingTrace:
    r"""Train :math:`\pi_\theta` against reward ``r`` with a KL penalty ``beta`` toward ``pi0``.

    Args:
        pi0: shape (K,), base probabilities, all > 0 (the policy starts at ``log pi0``).
        r: shape (K,), finite rewards.
        beta: one KL penalty factor > 0 (a scalar or a length-1 array).
        method: one of ``reinforce``, ``ppo``, ``grpo``.
        steps: optimiser steps (>= 1); ``ppo``/``grpo`` take ``ppo_epochs`` gradient steps per
            sampled batch and count each batch as one step.
        batch_size: samples per step (>= 2; for ``grpo`` a multiple of ``group_size``).
        lr: Adam learning rate (> 0).
        clip_eps: PPO/GRPO ratio clip (> 0).
        ppo_epochs: inner passes per batch for ``ppo``/``grpo`` (>= 1).
        group_size: GRPO group size (>= 2).
        record_every: record the exact (KL, gain) every this many steps (>= 1).
        generator: a CPU ``torch.Generator`` for the sampling (default: a fresh one seeded with ``seed``).
        seed: seed of the default generator (default 0); ignored when ``generator`` is given.

    Returns:
        :class:`TrainingTrace`.

    Raises:
        ValueError: on a bad ``pi0`` (or any zero entry), ``r``, ``beta`` (<= 0 or several values),
            unknown ``method``, a ``generator`` that is not a ``torch.Generator``, or out-of-range settings.
        FloatingPointError: the policy's logits became non-finite (a learning rate far too large),
            naming the step.

    Source: baselines (REINFORCE, PPO, GRPO) in toy form; not the paper's method.
    """
    pi0, r = policy_and_rewards(pi0, r)
    if np.any(pi0 <= 0):
        raise ValueError("train_policy needs pi0 > 0 on every outcome (the policy starts at log pi0); "
                         f"{int((pi0 <= 0).sum())} outcome(s) have zero mass — drop them first")
    betas, scalar = as_betas(beta)
    if not scalar and betas.size != 1:
        raise ValueError(f"beta must be a single KL penalty factor > 0 for one training run, got {betas.size} "
                         "values (train once per beta)")
    b = float(betas[0])
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    steps = as_positive_int(steps, "steps")
    batch_size = as_positive_int(batch_size, "batch_size", 2)
    ppo_epochs = as_positive_int(ppo_epochs, "ppo_epochs")
    group_size = as_positive_int(group_size, "group_size", 2)
    record_every = as_positive_int(record_every, "record_every")
    lr = as_positive_float(lr, "lr")
    clip_eps = as_positive_float(clip_eps, "clip_eps")
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a CPU torch.Generator or None, got {generator!r}")
    if method == "grpo" and batch_size % group_size:
        raise ValueError(f"for grpo, batch_size ({batch_size}) must be a multiple of group_size ({group_size})")

    gen = generator if generator is not None else torch.Generator().manual_seed(int(seed or 0))
    log_pi0_np = np.log(pi0)
    rc_np = r - np.dot(pi0, r)
    log_pi0 = torch.from_numpy(log_pi0_np)
    reward = torch.from_numpy(r)
    theta = torch.nn.Parameter(log_pi0.clone())
    opt = torch.optim.Adam([theta], lr=lr)

    rec_step, rec_kl, rec_gain = [0], *[[v] for v in _exact(log_pi0_np, log_pi0_np, rc_np)]
    for step in range(1, steps + 1):
        with torch.no_grad():
            log_old = torch.log_softmax(theta, 0)
            y = torch.multinomial(log_old.exp(), batch_size, replacement=True, generator=gen)
            lp_old, r_y, lp0 = log_old[y], reward[y], log_pi0[y]
        if method == "reinforce":
            shaped = r_y - b * (lp_old - lp0)                            # R_i, k1 KL shaping
            adv = shaped - (shaped.sum() - shaped) / (batch_size - 1)    # leave-one-out baseline
            opt.zero_grad()
            loss = -(adv * torch.log_softmax(theta, 0)[y]).mean()
            loss.backward()
            opt.step()
        else:
            if method == "ppo":
                shaped = r_y - b * (lp_old - lp0)
                adv = (shaped - shaped.mean()) / (shaped.std() + 1e-8)   # whitened advantages
            else:  # grpo: group-normalised raw reward
                g = r_y.view(-1, group_size)
                adv = ((g - g.mean(1, keepdim=True)) / (g.std(1, keepdim=True) + 1e-8)).reshape(-1)
            for _ in range(ppo_epochs):
                opt.zero_grad()
                lp = torch.log_softmax(theta, 0)[y]
                # log-ratios clamped at ±LOG_RATIO_CLAMP before exp: beyond it the clipped surrogate
                # is flat anyway, and an unclamped exp overflows (inf loss, NaN policy) at a huge step
                ratio = torch.exp((lp - lp_old).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP))
                surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv)
                loss = -surrogate.mean()
                if method == "grpo":
                    log_q = (lp0 - lp).clamp(-LOG_RATIO_CLAMP, LOG_RATIO_CLAMP)   # log(pi0 / pi_theta)
                    loss = loss + b * (torch.exp(log_q) - log_q - 1).mean()  # k3 KL penalty
                loss.backward()
                opt.step()
        if not bool(torch.isfinite(theta).all()):
            raise FloatingPointError(f"{method} diverged at step {step} (non-finite policy logits) with lr={lr:g}: "
                                     "lower the learning rate")
        if step % record_every == 0 or step == steps:
            with torch.no_grad():
                kl, gain = _exact(torch.log_softmax(theta, 0).numpy(), log_pi0_np, rc_np)
            rec_step.append(step)
            rec_kl.append(kl)
            rec_gain.append(gain)
    with torch.no_grad():
        final = torch.softmax(theta, 0).numpy().copy()
    return TrainingTrace(method, np.array(rec_step), np.array(rec_kl), np.array(rec_gain), final)
