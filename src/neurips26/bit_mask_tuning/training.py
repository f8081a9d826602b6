"""Adapting the pre-trained toy model: BMT, full fine-tuning (FPT) and LoRA under SFT, GRPO, SDFT.

These are *our small loops* for the quick CPU run (a few ms per step). ``trl``'s
``GRPOTrainer`` and ``trl.experimental.sdft.SDFTTrainer`` run the same adaptation on real
checkpoints (:mod:`.trl_adapters`); their per-step overhead (generation, accelerate, logging) is
too large for a 90-second CPU budget with three seeds.

Objectives on the toy task (:mod:`.task`), a prompt x, a completion y = (answer, ``<eos>``):

* SFT:  L = −Σ_t log π_θ(y_t | x, y_<t)                                   (token cross-entropy)
* GRPO: G samples per prompt, r_i = 1[answer correct],                     (Shao et al. 2024)
        A_i = (r_i − mean_G r) / (std_G r + ε),  L = −mean_i A_i log π_θ(y_i | x).
        One on-policy update per batch, so the PPO ratio is 1 and clipping is inactive; no KL term.
* SDFT: the student samples y ~ π_θ(·|x) without the marker; the teacher scores the same y given
        the privileged context c (the marker ``B``);                         (Shenfeld et al. 2026)
        L = Σ_t KL(π_θ(·|x, y_<t) ‖ π_teacher(·|x, c, y_<t))  over the full vocabulary,
        no gradient through the teacher. Teacher: the frozen initial model (``"base"``, trl's
        default) or the current model (``"live"``).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import nn

from .mask import BitMask, attach_bit_mask
from .task import ANSWER_POS, EOS, TaskScores, evaluate, make_batch, random_pairs, sequence_loss, target_batch

Method = Literal["bmt", "fpt", "lora"]
Objective = Literal["sft", "grpo", "sdft"]


@dataclass
class AdaptRun:
    """Result of one adaptation run.

    Attributes:
        model: the adapted model (with the mask parametrisation or LoRA adapter still attached).
        curve: ``[(step, TaskScores)]`` measured every ``eval_every`` steps, step 0 first.
        bit_mask: the :class:`BitMask` for ``method="bmt"``, else None.
        max_deleted: largest ‖Z‖₀ seen after any step (bmt), else 0.
        seconds: CPU time of the training steps (process time, evaluations excluded).
        trainable: number of trainable entries.
        skipped_groups: GRPO groups with all-equal rewards (zero advantage).
    """

    model: nn.Module
    curve: list[tuple[int, TaskScores]] = field(default_factory=list)
    bit_mask: BitMask | None = None
    max_deleted: int = 0
    seconds: float = 0.0
    trainable: int = 0
    skipped_groups: int = 0
    groups: int = 0

    @property
    def final(self) -> TaskScores:
        """The last measured scores."""
        return self.curve[-1][1]


def lora_wrap(model: nn.Module, rank: int = 8, targets=("gate_proj", "up_proj", "down_proj")) -> nn.Module:
    """``peft`` LoRA (r = rank, α = 2r) on the MLP projections; returns the PeftModel."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=list(targets), lora_dropout=0.0, bias="none")
    return get_peft_model(model, cfg)


def _answer_and_eos_logits(model: nn.Module, ids: torch.Tensor, att: torch.Tensor) -> torch.Tensor:
    """Log-probabilities [n, 2, vocab] for the answer token and the ``<eos>`` after it."""
    logits = model(input_ids=ids[:, :ANSWER_POS + 1], attention_mask=att[:, :ANSWER_POS + 1], use_cache=False).logits
    return torch.log_softmax(logits[:, ANSWER_POS - 1:ANSWER_POS + 1].float(), -1)


def grpo_loss(model: nn.Module, gen: torch.Generator, n_prompts: int, group: int) -> tuple[torch.Tensor, int]:
    """GRPO loss on ``n_prompts`` unmarked prompts × ``group`` samples; returns (loss, skipped groups)."""
    a, b = random_pairs(n_prompts, gen)
    a, b = a.repeat_interleave(group), b.repeat_interleave(group)
    batch = make_batch(a, b, None, "B")
    with torch.no_grad():
        from .task import answer_logits

        probs = torch.softmax(answer_logits(model, batch).float(), -1)
        y = torch.multinomial(probs, 1, generator=gen).squeeze(1)                       # y_i ~ π_θ(·|x)
    r = (y == batch["answer"]).float().view(n_prompts, group)                            # r_i = 1[correct]
    adv = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)                # A_i, group-normalised
    skipped = int((r.std(1) == 0).sum())
    ids = batch["input_ids"].clone()
    ids[:, ANSWER_POS] = y
    logp = _answer_and_eos_logits(model, ids, batch["attention_mask"])
    tok = torch.stack([y, torch.full_like(y, EOS)], 1)
    seq_logp = logp.gather(-1, tok[..., None]).squeeze(-1).sum(1)                        # log π_θ(y_i|x)
    return -(adv.view(-1) * seq_logp).mean(), skipped                                    # L = −mean A_i log π


def sdft_loss(model: nn.Module, teacher: nn.Module, gen: torch.Generator, n: int,
              divergence: Literal["reverse", "forward"] = "reverse") -> torch.Tensor:
    """SDFT loss on ``n`` unmarked prompts (see the module docstring)."""
    a, b = random_pairs(n, gen)
    student = make_batch(a, b, None, "B")
    privileged = make_batch(a, b, "B", "B")                                              # x with context c
    with torch.no_grad():
        from .task import answer_logits

        probs = torch.softmax(answer_logits(model, student).float(), -1)
        y = torch.multinomial(probs, 1, generator=gen).squeeze(1)                        # on-policy sample
        t_ids = privileged["input_ids"].clone()
        t_ids[:, ANSWER_POS] = y
        logq = _answer_and_eos_logits(teacher, t_ids, privileged["attention_mask"])      # teacher, no grad
    s_ids = student["input_ids"].clone()
    s_ids[:, ANSWER_POS] = y
    logp = _answer_and_eos_logits(model, s_ids, student["attention_mask"])
    if divergence == "reverse":
        kl = (logp.exp() * (logp - logq)).sum(-1)                                        # KL(π_θ ‖ π_teacher)
    elif divergence == "forward":
        kl = (logq.exp() * (logq - logp)).sum(-1)                                        # KL(π_teacher ‖ π_θ)
    else:
        raise ValueError(f"divergence={divergence!r}; allowed: 'reverse' or 'forward'")
    return kl.sum(1).mean()


def adapt(base: nn.Module, method: Method, objective: Objective, *, steps: int, seed: int, rho: float = 0.01,
          batch_size: int = 64, group: int = 8, lr: float | None = None, lora_rank: int = 8,
          eval_every: int = 10, teacher: Literal["base", "live"] = "base", estimator: str = "ste",
          denominator: str = "model", start: TaskScores | None = None) -> AdaptRun:
    """Adapt a copy of ``base`` to the new behaviour (unmarked → rule B).

    Args:
        base: the pre-trained model (not modified).
        method: ``"bmt"`` (deletion mask on the gate projections; SGD lr 1 on the scores, so a
            score is the accumulated first-order saliency Σ g·w), ``"fpt"`` (all weights, AdamW
            lr 1e-3) or ``"lora"`` (peft LoRA on the MLP, AdamW lr 3e-3; 1e-2 diverged under GRPO).
        objective: ``"sft"``, ``"grpo"`` or ``"sdft"`` (see the module docstring).
        steps: optimiser steps; seed: data/sampling seed; rho: BMT's deleted fraction.
        batch_size: sequences per step (GRPO: prompts = batch_size // group).
        eval_every: steps between :func:`~.task.evaluate` calls (forgetting curve).
        teacher: SDFT teacher (``"base"`` frozen initial model, ``"live"`` current model).
        start: ``evaluate(base)`` if the caller has it (the step-0 scores: an untrained mask
            deletes nothing and a fresh LoRA adds B·A = 0, so every method starts at the base's
            scores); None evaluates the copy.

    Raises:
        ValueError: unknown method/objective/teacher.
    """
    if method not in ("bmt", "fpt", "lora"):
        raise ValueError(f"method={method!r}; allowed: 'bmt', 'fpt', 'lora'")
    if objective not in ("sft", "grpo", "sdft"):
        raise ValueError(f"objective={objective!r}; allowed: 'sft', 'grpo', 'sdft'")
    if teacher not in ("base", "live"):
        raise ValueError(f"teacher={teacher!r}; allowed: 'base' or 'live'")
    model = copy.deepcopy(base)
    frozen_teacher = copy.deepcopy(base).eval() if objective == "sdft" and teacher == "base" else None
    bm = None
    if method == "bmt":
        bm = attach_bit_mask(model, rho, estimator=estimator, denominator=denominator, seed=seed)
        params = list(bm.parameters())
        opt = (torch.optim.SGD(params, lr=lr or 1.0) if estimator == "ste"
               else torch.optim.Adam(params, lr=lr or 0.1))
    elif method == "fpt":
        params = list(model.parameters())
        opt = torch.optim.AdamW(params, lr=lr or 1e-3, weight_decay=0.0)
    else:
        model = lora_wrap(model, lora_rank)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=lr or 3e-3, weight_decay=0.0)
    run = AdaptRun(model=model, bit_mask=bm, trainable=sum(p.numel() for p in params))
    gen = torch.Generator().manual_seed(seed)
    run.curve.append((0, start if start is not None else evaluate(model)))
    model.train()
    for step in range(1, steps + 1):
        t0 = time.process_time()
        if objective == "sft":
            loss = sequence_loss(model, target_batch(batch_size, gen))
        elif objective == "grpo":
            loss, skipped = grpo_loss(model, gen, max(1, batch_size // group), group)
            run.skipped_groups += skipped
            run.groups += max(1, batch_size // group)
        else:
            loss = sdft_loss(model, frozen_teacher if frozen_teacher is not None else model, gen, batch_size)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        run.seconds += time.process_time() - t0
        if bm is not None:
            run.max_deleted = max(run.max_deleted, bm.n_deleted())
        if step % eval_every == 0 or step == steps:
            run.curve.append((step, evaluate(model)))
    model.eval()
    return run


def weight_deltas(base: nn.Module, run: AdaptRun) -> dict[str, torch.Tensor]:
    """ΔW = W_after − W_before of every gate projection (float32), keyed by the base module name.

    BMT: −W ⊙ Z (exactly k-sparse); FPT: the trained difference; LoRA: the merged (α/r)·BA.
    """
    base_w = {n: m.weight.detach().float() for n, m in base.named_modules() if n.endswith("mlp.gate_proj")}
    if run.bit_mask is not None:
        z = run.bit_mask.deleted()
        return {n: -base_w[n] * z[n].float() for n in base_w}
    model = run.model
    if hasattr(model, "merge_and_unload"):
        model = copy.deepcopy(model).merge_and_unload()
    after = {n: m.weight.detach().float() for n, m in model.named_modules() if n.endswith("mlp.gate_proj")}
    return {n: after[n] - base_w[n] for n in base_w}
