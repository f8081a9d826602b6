"""The deletion mask under ``trl``'s trainers (GRPO and SDFT), for real checkpoints.

The mask is a parametrisation, so any trainer that optimises the parameters with
``requires_grad=True`` trains only the scores; :class:`BitMask` recomputes ``Z`` whenever a score
tensor changes (its version counter), so no callback is needed for correctness. The score
optimiser is plain SGD (lr 1 by default: the score is the accumulated saliency Σ g·w, its scale
does not matter with τ = 0); pass your own through ``optimizers``.

* :func:`bmt_grpo_trainer` — ``trl.GRPOTrainer`` (Shao et al. 2024) with a BMT model.
* :func:`bmt_sdft_trainer` — ``trl.experimental.sdft.SDFTTrainer`` (Shenfeld et al. 2026): the
  dataset has ``prompt`` and ``privileged_context`` columns; with ``teacher_model_kind="live"``
  the teacher is the current masked model shown the privileged context, with ``"base"`` a frozen
  copy loaded from the model's path (the unmasked base).
* :func:`toy_tokenizer` / :func:`save_toy_model` — a word-level tokenizer over the toy task's
  vocabulary and a folder with model + tokenizer, so trl can load the toy model offline.

Source: inferred: the trainers' public arguments in trl 1.16; the abstract names GRPO and SDFT.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import torch

from .mask import BitMask, attach_bit_mask
from .task import VOCAB


def toy_tokenizer():
    """A ``PreTrainedTokenizerFast`` over the toy vocabulary (whitespace-separated tokens, no
    special-token post-processing: prompts spell ``<bos>`` themselves)."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(WordLevel({t: i for i, t in enumerate(VOCAB)}, unk_token="<pad>"))
    tok.pre_tokenizer = WhitespaceSplit()
    from tokenizers import decoders

    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>",
                                   unk_token="<pad>")
    fast.padding_side = "left"
    return fast


def save_toy_model(model, path: str | Path) -> Path:
    """Save an (unmasked) toy model and :func:`toy_tokenizer` to ``path`` (``save_pretrained``)."""
    path = Path(path)
    model.save_pretrained(path)
    toy_tokenizer().save_pretrained(path)
    return path


def _args_common(output_dir, max_steps, batch_size, extra):
    base = dict(output_dir=str(output_dir), max_steps=max_steps, per_device_train_batch_size=batch_size,
                report_to="none", logging_steps=max(1, max_steps), save_strategy="no", use_cpu=True,
                learning_rate=1.0, lr_scheduler_type="constant", warmup_steps=0, seed=0,
                dataloader_num_workers=0, bf16=False, disable_tqdm=True)
    base.update(extra)
    return base


def bmt_grpo_trainer(model, rho: float, reward_func: Callable, train_dataset, tokenizer, output_dir, *,
                     max_steps: int = 10, batch_size: int = 8, num_generations: int = 8,
                     max_completion_length: int = 2, denominator: str = "model", optimizer=None,
                     **grpo_kwargs):
    """A ``trl.GRPOTrainer`` that trains a deletion mask on ``model`` (attached here, in place).

    Args:
        model: a transformers causal LM with gated MLPs (loaded from a local path).
        rho: deleted fraction (see :func:`~.mask.budget`).
        reward_func: ``f(prompts, completions, **columns) -> list[float]`` (trl's reward API).
        train_dataset: a ``datasets.Dataset`` with a ``prompt`` column.
        tokenizer: the processing class.
        optimizer: an optimiser over the scores (default SGD lr 1).
        grpo_kwargs: further ``GRPOConfig`` fields (beta, temperature, …); they override our
            defaults (``beta=0.0``: no KL term) and the common ones (``learning_rate`` …).

    Returns:
        ``(trainer, bit_mask)``; call ``trainer.train()`` then :func:`~.codec.save_mask`.
    """
    from trl import GRPOConfig, GRPOTrainer

    bm = attach_bit_mask(model, rho, denominator=denominator)
    opt = optimizer or torch.optim.SGD(list(bm.parameters()), lr=1.0)
    extra = dict(num_generations=num_generations, max_completion_length=max_completion_length, beta=0.0)
    extra.update(grpo_kwargs)        # a caller's beta (KL weight) or other field replaces our default
    args = GRPOConfig(**_args_common(output_dir, max_steps, batch_size, extra))
    trainer = GRPOTrainer(model=model, reward_funcs=reward_func, args=args, train_dataset=train_dataset,
                          processing_class=tokenizer, optimizers=(opt, None))
    return trainer, bm


def bmt_sdft_trainer(model, rho: float, train_dataset, tokenizer, output_dir, *, max_steps: int = 10,
                     batch_size: int = 8, max_completion_length: int = 2, teacher_model_kind: str = "live",
                     teacher_prompt_template: str = "{privileged_context} {prompt}", denominator: str = "model",
                     teacher_prompt_fn: Callable[[str, str], str] | None = None, optimizer=None,
                     **sdft_kwargs) -> tuple:
    """A ``trl.experimental.sdft.SDFTTrainer`` that trains a deletion mask on ``model``.

    The dataset needs ``prompt`` and ``privileged_context`` columns. ``teacher_model_kind``:
    ``"live"`` (the masked model itself with the context; no copy) or ``"base"`` (trl loads a
    frozen teacher from ``model.config._name_or_path``, so the model must come from a folder).
    Distillation is reverse KL over the full vocabulary (``distillation_alpha=1``,
    ``distillation_mode="full_logits"``) unless overridden in ``sdft_kwargs``.
    ``teacher_prompt_fn(prompt, privileged_context) -> teacher prompt`` replaces trl's template
    where the context must go inside the prompt (the toy task puts the marker after ``<bos>``).

    Returns:
        ``(trainer, bit_mask)``.
    """
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl.experimental.sdft import SDFTConfig, SDFTTrainer

    bm = attach_bit_mask(model, rho, denominator=denominator)
    opt = optimizer or torch.optim.SGD(list(bm.parameters()), lr=1.0)
    extra = dict(max_completion_length=max_completion_length, teacher_model_kind=teacher_model_kind,
                 teacher_prompt_template=teacher_prompt_template, distillation_alpha=1.0,
                 distillation_mode="full_logits")
    extra.update(sdft_kwargs)
    args = SDFTConfig(**_args_common(output_dir, max_steps, batch_size, extra))
    trainer = SDFTTrainer(model=model, args=args, train_dataset=train_dataset, processing_class=tokenizer,
                          optimizers=(opt, None))
    if teacher_prompt_fn is not None:
        trainer.teacher_context_builder = _FunctionTeacherContext(trainer, teacher_prompt_fn)
    return trainer, bm


def _function_teacher_context_class():
    from trl.experimental.sdft.sdft_trainer import DemonstrationTeacherContextBuilder

    class FunctionTeacherContext(DemonstrationTeacherContextBuilder):
        """trl's teacher-context builder with the teacher prompt composed by a function."""

        def __init__(self, trainer, fn):
            super().__init__(trainer)
            self.fn = fn

        def _compose_teacher_prompt(self, prompt, privileged_context):
            return self.fn(prompt, self._stringify_privileged_context(privileged_context))

    return FunctionTeacherContext


def _FunctionTeacherContext(trainer, fn):
    return _function_teacher_context_class()(trainer, fn)


def toy_teacher_prompt(prompt: str, privileged_context: str) -> str:
    """Toy teacher prompt: the marker inserted after ``<bos>`` (``<bos> B 3 4 =``)."""
    return prompt.replace("<bos>", f"<bos> {privileged_context}", 1)


def toy_datasets(n: int = 64, seed: int = 0):
    """``(grpo_dataset, sdft_dataset)`` of unmarked toy prompts (``datasets.Dataset``): columns
    ``prompt``, ``answer`` (the rule-B digit) and, for SDFT, ``privileged_context`` (``"B"``)."""
    from datasets import Dataset

    g = torch.Generator().manual_seed(seed)
    a = torch.randint(0, 10, (n,), generator=g).tolist()
    b = torch.randint(0, 10, (n,), generator=g).tolist()
    prompts = [f"<bos> {x} {y} =" for x, y in zip(a, b)]
    answers = [str((y + 1) % 10) for y in b]
    grpo = Dataset.from_dict({"prompt": prompts, "answer": answers})
    sdft = Dataset.from_dict({"prompt": prompts, "answer": answers, "privileged_context": ["B"] * n})
    return grpo, sdft


def exact_match_reward(prompts, completions, answer, **_) -> list[float]:
    """1.0 when the completion's first token is the answer digit, else 0.0 (trl reward API)."""
    return [1.0 if c.strip().split(" ")[:1] == [a] else 0.0 for c, a in zip(completions, answer)]


__all__ = ["BitMask", "bmt_grpo_trainer", "bmt_sdft_trainer", "exact_match_reward", "save_toy_model",
           "toy_datasets", "toy_teacher_prompt", "toy_tokenizer"]
