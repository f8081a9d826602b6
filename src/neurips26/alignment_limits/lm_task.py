r"""Best-of-N and KL-penalised policy gradient on a small, locally trained language model.

The paper's Pareto-frontier experiments (safety, summarisation) fine-tune real LMs; here the same
*measurement* is made on a language model small enough to train from scratch on a CPU:

1. **Base policy** :math:`\pi_0`. A 2-layer GPT-2 (``transformers.GPT2Config``, ``n_embd=64``,
   vocabulary of ``vocab`` tokens plus one BOS token; built locally, nothing from the hub) is
   pretrained by maximum likelihood on sequences of ``length`` tokens from a random first-order
   Markov chain (Dirichlet rows). :math:`\pi_0(y)` is the model's probability of the whole sequence
   :math:`y = (y_1..y_L)` given BOS.
2. **Reward**. :math:`r(y) = \sum_t w_{t, y_t}` with fixed :math:`w_{t,v} \sim N(0, 1/L)` (position-
   dependent, so almost all sequences have distinct rewards; sd of :math:`r` about 1).
3. **Measurement** (all KL in nats, gains in reward units, relative to :math:`\mathbb{E}_{\pi_0} r`
   estimated from the base samples):

   - frontier: :func:`.estimate_frontier` (covariance form) on ``n_base`` rewards of base samples,
     on a grid of :math:`\beta`; the frontier gain at a KL is interpolated in :math:`\log\mathrm{KL}`
     on the reliable (ESS) part of the grid.
   - best-of-N: :func:`.sampled_best_of_n` on the same base rewards (gain from disjoint groups; KL
     the exact grouped formula on the empirical distribution, a plug-in estimate).
   - policy gradient: the GPT-2 is saved to a temporary folder (trl builds its frozen reference
     model from the folder when :math:`\beta > 0`) and fine-tuned at each :math:`\beta` by trl's
     trainers, one prompt (BOS), groups of ``group_size`` completions of exactly ``length`` tokens
     (BOS is suppressed during generation, so no sequence ends early), reward :math:`r(y)` from the
     completion token ids, constant learning rate, one on-policy pass per batch —
     ``rloo``: :class:`trl.RLOOTrainer`, sequence reward :math:`r(y) - \beta\sum_t(\log\pi_\theta -
     \log\pi_0)(y_t)` (k1) with a leave-one-out baseline over the group; ``grpo``:
     :class:`trl.GRPOTrainer`, group-normalised :math:`r` advantages plus :math:`\beta\sum_t k_3`
     per-token KL penalty in the loss (trl's default ``dapo`` token normalisation equals GRPO's
     per-sequence mean here: every completion has ``length`` tokens). trl offers no PPO trainer
     (1.16). KL and gain of the trained policy are Monte Carlo means over ``n_eval`` of its own
     samples: :math:`\widehat{\mathrm{KL}} = \frac1M\sum_i \log\pi_\theta(y_i) - \log\pi_0(y_i)`
     (unbiased, "k1"), with :math:`\pi` renormalised over the V ordinary tokens as sampled.
     trl's own log-probabilities normalise over V + 1 tokens (BOS included); the difference is
     the BOS probability, which pretraining drives towards 0 (BOS is never a target).
   - efficiency = gain / frontier gain at the same KL (the frontier interpolated linearly in
     :math:`\sqrt{\mathrm{KL}}` through the origin).

The categorical toy problems keep their own exact trainers (:mod:`.trainers`); only this LM
measurement uses trl (``[llm]`` extra). The paper's LMs, reward models and datasets are not
reproduced; this is a small stand-in where the frontier is estimated, not known.

References:
    Monteiro Paes et al. (2026), arXiv:2605.07105; Beirami et al. (2024), arXiv:2401.01879;
    Ahmadian et al. (2024) RLOO; Shao et al. (2024) GRPO; Schulman (2020) k1/k3 KL estimators;
    trl 1.16 ``RLOOTrainer`` / ``GRPOTrainer`` (the training loops used here).
"""

from __future__ import annotations

import math
import os
import random
import tempfile
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch

from .best_of_n import best_of_n_kl_bound, sampled_best_of_n
from .estimator import estimate_frontier
from .validation import as_positive_int

LM_METHODS = ("rloo", "grpo")
"""trl trainers used for the policy-gradient runs (trl 1.16 has no PPO trainer)."""


@dataclass
class LMTask:
    """A pretrained tiny GPT-2 base policy and a sequence reward.

    Attributes:
        model: ``transformers.GPT2LMHeadModel`` (eval mode), vocabulary ``vocab + 1`` (BOS = ``vocab``).
        vocab: V, number of ordinary tokens.
        length: L, tokens per sequence (BOS excluded).
        reward_weights: shape (L, V), :math:`w_{t,v}`.
        transition: shape (V, V), the Markov chain of the pretraining corpus (rows sum to 1).
        pretrain_loss: shape (S,), per-step mean token cross-entropy (nats) during pretraining.
    """

    model: torch.nn.Module
    vocab: int
    length: int
    reward_weights: np.ndarray
    transition: np.ndarray
    pretrain_loss: np.ndarray

    def reward(self, tokens) -> np.ndarray:
        """Rewards of sequences: ``tokens`` shape (n, L) integer in [0, V) -> shape (n,) float64."""
        t = np.asarray(tokens)
        if t.ndim != 2 or t.shape[1] != self.length:
            raise ValueError(f"tokens must have shape (n, {self.length}), got {t.shape}")
        return self.reward_weights[np.arange(self.length)[None, :], t].sum(axis=1)


def build_lm_task(vocab: int = 8, length: int = 8, *, pretrain_steps: int = 300, batch_size: int = 64,
                  lr: float = 3e-3, seed: int = 0) -> LMTask:
    """Build and pretrain the tiny GPT-2 base policy on a synthetic Markov-chain corpus.

    Args:
        vocab: V >= 2 ordinary tokens.
        length: L >= 1 tokens per sequence.
        pretrain_steps: Adam steps of maximum-likelihood training (>= 1), each on ``batch_size``
            freshly drawn corpus sequences.
        batch_size: sequences per step (>= 1).
        lr: Adam learning rate (> 0).
        seed: seeds the chain, the reward, the corpus and the model initialisation (the global torch
            RNG state is restored afterwards).

    Returns:
        :class:`LMTask`.

    Raises:
        ValueError: on non-positive sizes or learning rate.
    """
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging as hf_logging

    vocab = as_positive_int(vocab, "vocab")
    length = as_positive_int(length, "length")
    pretrain_steps = as_positive_int(pretrain_steps, "pretrain_steps")
    batch_size = as_positive_int(batch_size, "batch_size")
    if vocab < 2 or not (math.isfinite(lr) and lr > 0):
        raise ValueError("need vocab >= 2 and a finite lr > 0")
    rng = np.random.default_rng([seed, 11])
    trans = rng.dirichlet(np.full(vocab, 0.5), size=vocab)
    init = rng.dirichlet(np.full(vocab, 0.5))
    w = rng.normal(0.0, 1.0 / math.sqrt(length), size=(length, vocab))
    cfg = GPT2Config(vocab_size=vocab + 1, n_positions=length + 1, n_embd=64, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=vocab, eos_token_id=vocab)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = GPT2LMHeadModel(cfg)
    finally:
        hf_logging.set_verbosity(verbosity)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    cum = np.cumsum(trans, axis=1)
    losses = []
    model.train()
    for _ in range(pretrain_steps):
        seqs = np.empty((batch_size, length), dtype=np.int64)
        seqs[:, 0] = rng.choice(vocab, size=batch_size, p=init)
        for t in range(1, length):
            u = rng.random(batch_size)[:, None]
            seqs[:, t] = np.minimum((u > cum[seqs[:, t - 1]]).sum(axis=1), vocab - 1)
        lp = token_logprobs(model, torch.from_numpy(seqs), vocab)
        loss = -lp.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return LMTask(model, vocab, length, w, trans, np.array(losses))


def token_logprobs(model: torch.nn.Module, tokens: torch.Tensor, bos: int) -> torch.Tensor:
    """Per-token log-probabilities :math:`\\log\\pi(y_t | \\mathrm{BOS}, y_{<t})`.

    Args:
        model: a causal LM returning ``.logits``.
        tokens: shape (n, L) int64.
        bos: the BOS token id (prepended); must be the last id (``vocab``), whose logit is dropped.

    Returns:
        shape (n, L) tensor (nats), normalised over the ``bos`` ordinary tokens, differentiable w.r.t. the model's parameters.
    """
    inp = torch.cat([torch.full((tokens.shape[0], 1), bos, dtype=tokens.dtype), tokens[:, :-1]], dim=1)
    logits = model(input_ids=inp).logits[..., :bos]     # BOS is never emitted: renormalise over the V tokens
    return torch.log_softmax(logits, dim=-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def sample_sequences(model: torch.nn.Module, n: int, length: int, bos: int,
                     generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw ``n`` sequences of ``length`` tokens by ancestral sampling (temperature 1, BOS token
    never emitted). Returns shape (n, length) int64."""
    seq = torch.full((n, 1), bos, dtype=torch.long)
    for _ in range(length):
        logits = model(input_ids=seq).logits[:, -1, :bos]
        nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        seq = torch.cat([seq, nxt], dim=1)
    return seq[:, 1:]


@dataclass
class LMMeasurement:
    """Best-of-N and policy-gradient fine-tuning of the tiny LM against the estimated frontier.

    Attributes:
        base_mean_reward: mean reward of the ``n_base`` base samples (the zero of every gain).
        base_reward_sd: their standard deviation.
        frontier_kl, frontier_gain: shape (B,), the estimated frontier (nats, reward units) at the
            reliable betas of ``frontier_beta``.
        frontier_beta: shape (B,).
        bon_n: shape (K,), N values; bon_kl, bon_gain, bon_gain_se, bon_bound, bon_efficiency: shape (K,).
        pg: ``{method: {"beta", "kl", "kl_se", "gain", "gain_se", "efficiency", "in_range"}}``, each
            shape (P,) over ``pg_betas``; ``in_range`` (bool) is False where the policy's KL exceeds the
            largest reliably estimated frontier KL — there the frontier gain is clamped at its last
            value, so ``efficiency`` overstates (it can exceed 1) and is not a measurement.
    """

    base_mean_reward: float
    base_reward_sd: float
    frontier_beta: np.ndarray
    frontier_kl: np.ndarray
    frontier_gain: np.ndarray
    bon_n: np.ndarray
    bon_kl: np.ndarray
    bon_gain: np.ndarray
    bon_gain_se: np.ndarray
    bon_bound: np.ndarray
    bon_efficiency: np.ndarray
    pg: dict = field(default_factory=dict)

    def frontier_gain_at(self, kl) -> np.ndarray:
        """Estimated frontier gain at KL ``kl`` (nats): linear in :math:`\\sqrt{\\mathrm{KL}}` through
        (0, 0) and the reliable grid (gain ~ sqrt(2 Var(r) KL) at small KL), clamped above its end."""
        k = np.sqrt(np.maximum(np.asarray(kl, dtype=float), 0.0))
        return np.interp(k, np.sqrt(np.concatenate([[0.0], self.frontier_kl])),
                         np.concatenate([[0.0], self.frontier_gain]))


def _token_tokenizer(vocab: int):
    """A word-level tokenizer for the token ids 0..V-1 (``"t0"`` … ) and BOS (``"<bos>"`` = V), built
    locally with ``tokenizers`` (trl needs a processing class; rewards read the token ids)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = {f"t{i}": i for i in range(vocab)} | {"<bos>": vocab}
    tk = Tokenizer(models.WordLevel(words, unk_token="<bos>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<bos>", eos_token="<bos>", pad_token="<bos>",
                                   unk_token="<bos>")


def save_base_policy(task: LMTask, folder) -> None:
    """Write the base GPT-2 and its token tokenizer to ``folder`` (``save_pretrained`` format), the
    form trl's trainers load a policy and, for ``beta > 0``, its frozen reference from."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        task.model.save_pretrained(folder)
        _token_tokenizer(task.vocab).save_pretrained(folder)
    finally:
        hf_logging.enable_progress_bar()


def _train_trl(task: LMTask, folder: str, beta: float, method: str, steps: int, batch_size: int, lr: float,
               group_size: int, seed: int) -> torch.nn.Module:
    """Fine-tune the base policy saved in ``folder`` with trl's RLOO or GRPO trainer (module
    docstring); returns the trained model in eval mode. Global RNG states are restored."""
    from datasets import Dataset
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer, RLOOConfig, RLOOTrainer

    def reward(prompts=None, completions=None, completion_ids=None, **_):
        return task.reward(np.array([list(c) for c in completion_ids], dtype=np.int64)).tolist()

    config_cls, trainer_cls = (RLOOConfig, RLOOTrainer) if method == "rloo" else (GRPOConfig, GRPOTrainer)
    args = config_cls(output_dir=os.path.join(folder, f"run-{method}"), max_steps=steps,
                      per_device_train_batch_size=batch_size, num_generations=group_size,
                      max_completion_length=task.length, learning_rate=lr, lr_scheduler_type="constant", beta=beta,
                      temperature=1.0, generation_kwargs={"suppress_tokens": [task.vocab]},
                      report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True,
                      use_cpu=True, seed=seed, dataloader_num_workers=0)
    prompts = Dataset.from_dict({"prompt": ["<bos>"] * (steps * batch_size // group_size + 1)})
    verbosity, py_state, np_state = hf_logging.get_verbosity(), random.getstate(), np.random.get_state()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer = trainer_cls(model=folder, reward_funcs=reward, args=args, train_dataset=prompts,
                                  processing_class=_token_tokenizer(task.vocab))
            trainer.train()
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
        random.setstate(py_state)
        np.random.set_state(np_state)
    return trainer.model.eval()


def measure_lm(task: LMTask, *, ns=(1, 2, 4, 8, 16), pg_betas=(1.0, 0.3), methods=LM_METHODS,
               n_base: int = 4000, n_eval: int = 2000, pg_steps: int = 200, pg_batch: int = 64,
               pg_lr: float = 1e-3, group_size: int = 8, relative_betas: bool = False,
               seed: int = 0) -> LMMeasurement:
    """Measure best-of-N and KL-penalised PG fine-tuning of ``task.model`` against the frontier.

    Args:
        task: from :func:`build_lm_task`.
        ns: best-of-N sizes, each >= 1 with ``n_base >= 2 N``.
        pg_betas: KL penalties (reward units per nat, > 0) of the PG runs.
        methods: subset of :data:`LM_METHODS` ``("rloo", "grpo")``: trl's trainers.
        n_base: base-policy samples (frontier, best-of-N and the reward baseline).
        n_eval: samples of each trained policy for its Monte Carlo KL and gain.
        pg_steps, pg_batch, pg_lr: trainer steps, completions per step (a multiple of
            ``group_size``), AdamW learning rate (constant).
        group_size: completions per prompt (RLOO's leave-one-out and GRPO's normalisation group).
        relative_betas: if True, ``pg_betas`` are multiples of the sd of the base rewards.
        seed: seeds every sampling generator and the trl trainers.

    Returns:
        :class:`LMMeasurement` (KL in nats, gains in reward units).

    Raises:
        ValueError: on an unknown method, a non-positive beta, a batch not divisible by ``group_size``, or ``n_base < 2 max(ns)``
            (raised by :func:`.sampled_best_of_n`).
    """
    bad = set(methods) - set(LM_METHODS)
    if bad:
        raise ValueError(f"unknown methods {sorted(bad)}; choose from {LM_METHODS}")
    if pg_batch % group_size or pg_batch < 2:
        raise ValueError(f"pg_batch must be >= 2 and a multiple of group_size={group_size}, got {pg_batch}")
    gen = torch.Generator().manual_seed(seed)
    bos = task.vocab
    base_y = sample_sequences(task.model, n_base, task.length, bos, gen)
    rb = task.reward(base_y.numpy())
    rbar, sd = float(rb.mean()), float(rb.std())
    betas = sd * np.geomspace(4.0, 0.05, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fe = estimate_frontier(rb, betas, warn_unreliable=False)
    ok = fe.reliable & np.isfinite(fe.kl) & (fe.kl > 0)
    if not ok.any():
        ok = np.zeros_like(ok)
        ok[0] = True
    fkl, fgain = np.maximum.accumulate(fe.kl[ok]), np.maximum.accumulate(fe.gain[ok])
    ns_arr = np.array(sorted(set(int(n) for n in ns)))
    bons = [sampled_best_of_n(rb, int(n)) for n in ns_arr]
    out = LMMeasurement(rbar, sd, fe.beta[ok], fkl, fgain, ns_arr,
                        np.array([b.kl for b in bons]), np.array([b.gain for b in bons]),
                        np.array([b.gain_se for b in bons]), np.asarray(best_of_n_kl_bound(ns_arr), float),
                        np.zeros(ns_arr.size))
    fb = out.frontier_gain_at(out.bon_kl)
    # N = 1 is the base policy (KL 0, gain 0): efficiency 1 by convention
    out.bon_efficiency = np.where((ns_arr > 1) & (fb > 0), out.bon_gain / np.where(fb > 0, fb, 1.0), 1.0)
    pg_betas = [float(b) * (sd if relative_betas else 1.0) for b in pg_betas]
    if not all(math.isfinite(b) and b > 0 for b in pg_betas):
        raise ValueError(f"pg_betas must be finite and > 0, got {pg_betas}")
    with tempfile.TemporaryDirectory(prefix="lm_task-") as folder:
        save_base_policy(task, folder)              # trl loads the policy and its reference from here
        for method in methods:
            rows = {k: [] for k in ("beta", "kl", "kl_se", "gain", "gain_se", "efficiency", "in_range")}
            for j, beta in enumerate(pg_betas):
                pol = _train_trl(task, folder, float(beta), method, pg_steps, pg_batch, pg_lr, group_size,
                                 seed=seed * 1000 + 10 * j + LM_METHODS.index(method))
                with torch.no_grad():
                    y = sample_sequences(pol, n_eval, task.length, bos, gen)
                    diff = (token_logprobs(pol, y, bos) - token_logprobs(task.model, y, bos)).sum(1).double().numpy()
                r = task.reward(y.numpy())
                kl, gain = float(diff.mean()), float(r.mean() - rbar)
                front = float(out.frontier_gain_at(max(kl, 1e-12)))
                rows["beta"].append(float(beta))
                rows["kl"].append(kl)
                rows["kl_se"].append(float(diff.std(ddof=1) / math.sqrt(n_eval)))
                rows["gain"].append(gain)
                rows["gain_se"].append(float(math.sqrt(r.var(ddof=1) / n_eval + rb.var(ddof=1) / n_base)))
                rows["efficiency"].append(gain / front if front > 0 else float("nan"))
                rows["in_range"].append(bool(kl <= out.frontier_kl[-1]))
            out.pg[method] = {k: np.array(v) for k, v in rows.items()}
    return out
