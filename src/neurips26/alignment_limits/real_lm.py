"""Best-of-N and the KL–reward frontier on a real pretrained language model's own generations.

The base policy pi0 of a prompt is the model's distribution over its completions. We sample a pool
of K completions per prompt (temperature 1, no top-k/top-p, seeded), record each completion's exact
log-probability under the model (one teacher-forced forward pass; float32), and score it with a
reward this machine computes exactly: :func:`lexicon_reward`, the number of positive-sentiment
words minus the number of negative-sentiment words (a fixed word list, our choice). On the
empirical distribution of the pool (uniform 1/K, the plug-in estimate of pi0) the KL–reward
frontier and best-of-N are then exact closed forms (:mod:`.frontier`, :mod:`.best_of_n`).

Model: a local transformers folder (``config.json``, weights, tokenizer) or a GGUF file inside a
folder (``gguf_file=``; transformers dequantises it, needs the ``gguf`` package).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: prompts that invite evaluative text, so the sentiment reward varies across completions (ours)
PROMPTS = (
    "Write one sentence about your weekend.",
    "Describe the weather today in one sentence.",
    "Write a one-sentence review of a restaurant.",
    "Tell me in one sentence how your morning went.",
    "Write one sentence about a movie you watched.",
    "Describe your neighbourhood in one sentence.",
    "Write a one-sentence review of a phone.",
    "Describe a trip to the beach in one sentence.",
)

#: small sentiment lexicon (our choice; common English evaluative words, lower case)
POSITIVE = frozenset("""good great excellent amazing wonderful fantastic lovely nice beautiful happy delightful
enjoy enjoyed enjoying enjoyable love loved lovely pleasant perfect best fun awesome brilliant cheerful calm
relaxing relaxed friendly delicious fresh sunny warm bright glad excited exciting peaceful superb impressive
incredible charming cozy cosy tasty favourite favorite joy joyful positive comfortable vibrant stunning""".split())
NEGATIVE = frozenset("""bad terrible awful horrible poor sad boring bored hate hated disappointing disappointed
ugly worst rude cold gloomy dull noisy dirty angry annoying annoyed tired stressful stressed slow bland
expensive broken painful miserable grey gray rainy stormy crowded unpleasant negative mediocre""".split())

_WORD = re.compile(r"[a-z]+")


def lexicon_reward(text: str) -> float:
    """Reward of one completion: (# words in :data:`POSITIVE`) − (# words in :data:`NEGATIVE`).

    Words are maximal runs of ASCII letters after lower-casing; each occurrence counts. Deterministic,
    integer-valued (returned as float), unbounded in principle, in practice −3..6 for one sentence.
    """
    words = _WORD.findall(text.lower())
    return float(sum(w in POSITIVE for w in words) - sum(w in NEGATIVE for w in words))


def validate_model_folder(folder: Path) -> Path:
    """Check that ``folder`` is a loadable transformers model folder.

    Requires ``config.json``, weights (``*.safetensors`` or ``pytorch_model*.bin``) and a tokenizer
    (``tokenizer.json`` or ``tokenizer.model``).

    Raises:
        ValueError: one line naming the folder and the missing part.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"model={str(folder)!r} is not a folder; allowed: a transformers model folder "
                         "(config.json, weights, tokenizer) or smollm2-135m")
    if not (folder / "config.json").is_file():
        raise ValueError(f"model={str(folder)!r} has no config.json; allowed: a transformers model folder")
    if not (list(folder.glob("*.safetensors")) or list(folder.glob("pytorch_model*.bin"))):
        raise ValueError(f"model={str(folder)!r} has no weights (*.safetensors or pytorch_model*.bin)")
    if not ((folder / "tokenizer.json").is_file() or (folder / "tokenizer.model").is_file()):
        raise ValueError(f"model={str(folder)!r} has no tokenizer (tokenizer.json or tokenizer.model)")
    return folder


def load_model(folder: Path, gguf_file: str | None = None):
    """Load ``(model, tokenizer)`` in float32, eval mode, from a folder (or a GGUF file in it).

    Raises:
        OSError/ValueError: from transformers when the folder cannot be read.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kw = {"gguf_file": gguf_file} if gguf_file else {}
    tok = AutoTokenizer.from_pretrained(str(folder), **kw)
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, **kw)
    model.eval()
    return model, tok


@dataclass(frozen=True)
class Pool:
    """K sampled completions for each of P prompts.

    Attributes:
        prompts: the P prompt strings.
        texts: P lists of K decoded completions.
        logp: shape (P, K), float64, exact log-probability (nats) of each completion's tokens
            (including the end-of-sequence token when it was generated) given the chat-formatted prompt.
        n_tokens: shape (P, K), int, completion tokens (including end-of-sequence).
        gen_logp: shape (P, K), the same log-probabilities summed from the sampler's own scores
            (a consistency check against ``logp``).
        cpu_s: process CPU seconds spent sampling and scoring.
    """

    prompts: tuple[str, ...]
    texts: list[list[str]]
    logp: np.ndarray
    n_tokens: np.ndarray
    gen_logp: np.ndarray
    cpu_s: float


def sample_pool(model, tok, prompts, k: int, max_new_tokens: int, seed: int) -> Pool:
    """Sample ``k`` completions per prompt at temperature 1 (no top-k, no top-p) and score them.

    Randomness: ``torch.manual_seed(seed + i)`` before prompt i. Each prompt is formatted with the
    tokenizer's chat template (one user turn, generation prompt added). Log-probabilities are
    recomputed by one teacher-forced forward pass of prompt + completion and compared with the
    sampler's scores (``gen_logp``).

    Raises:
        ValueError: if ``k < 1`` or ``max_new_tokens < 1``.
    """
    import torch

    if k < 1 or max_new_tokens < 1:
        raise ValueError(f"k={k}, max_new_tokens={max_new_tokens}; allowed: both >= 1")
    t0 = time.process_time()
    eos = tok.eos_token_id
    texts, logp, ntok, glogp = [], [], [], []
    for i, prompt in enumerate(prompts):
        ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                      return_tensors="pt", return_dict=True)["input_ids"]
        torch.manual_seed(seed + i)
        with torch.no_grad():
            out = model.generate(ids, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=max_new_tokens,
                                 num_return_sequences=k, pad_token_id=eos, output_scores=True,
                                 return_dict_in_generate=True)
        seqs = out.sequences                                     # (k, L0 + T)
        comp = seqs[:, ids.shape[1]:]                            # (k, T)
        # valid tokens: up to and including the first EOS
        is_eos = comp == eos
        after = torch.cumsum(is_eos.int(), dim=1) - is_eos.int()  # number of EOS strictly before t
        valid = after == 0
        scores = torch.stack(out.scores, dim=1).log_softmax(-1)   # (k, T, V), raw logits at temperature 1
        g = scores.gather(-1, comp[..., None])[..., 0]
        glogp.append((g * valid).sum(1).double().numpy())
        with torch.no_grad():
            logits = model(seqs, attention_mask=torch.ones_like(seqs)).logits[:, ids.shape[1] - 1:-1]
        lp = logits.log_softmax(-1).gather(-1, comp[..., None])[..., 0]
        logp.append((lp * valid).sum(1).double().numpy())
        ntok.append(valid.sum(1).numpy())
        texts.append([tok.decode(c[v], skip_special_tokens=True) for c, v in zip(comp, valid)])
    return Pool(tuple(prompts), texts, np.array(logp), np.array(ntok), np.array(glogp), time.process_time() - t0)


def uniform_bon_frontier(rewards: np.ndarray, ns, weights: np.ndarray | None = None) -> dict:
    """Exact best-of-N and frontier on one prompt's pool.

    Args:
        rewards: shape (K,), float rewards of the K completions.
        ns: increasing best-of-N sizes starting at 1.
        weights: shape (K,), base probabilities (normalised here); ``None`` = uniform 1/K, the
            empirical distribution of the pool.

    Returns:
        :func:`..experiment.bon_and_frontier`'s dict (``n``, ``kl``, ``gain``, ``bound``,
        ``frontier_gain``, ``efficiency``), or ``None`` when all rewards tie (no gain is possible).
    """
    from .experiment import bon_and_frontier

    r = np.asarray(rewards, dtype=np.float64)
    if np.ptp(r) == 0:
        return None
    p = np.full(r.size, 1.0 / r.size) if weights is None else np.asarray(weights, np.float64) / np.sum(weights)
    return bon_and_frontier(p, r, list(ns))


def blind_bon_efficiency(rewards: np.ndarray, ns, frontier_gain: np.ndarray, rng: np.random.Generator,
                         n_perm: int = 20) -> np.ndarray:
    """Efficiency of *reward-blind* best-of-N on one prompt's pool: the control that removes selection
    on the reward while keeping best-of-N's KL.

    Best-of-N is run on the rewards permuted among the completions (``n_perm`` permutations from
    ``rng``) and scored with the true rewards. A permutation keeps the multiset of reward levels, so
    under the uniform pi0 the policy's KL is exactly best-of-N's and the closed-form limit at that
    KL is the same ``frontier_gain``; what is lost is only which completions are selected.

    Args:
        rewards: shape (K,), float rewards of the K completions (uniform pi0 = 1/K).
        ns: the best-of-N sizes (length M), as passed to :func:`uniform_bon_frontier`.
        frontier_gain: shape (M,), the limit's gain at best-of-N's KL for each N.
        rng: the generator the permutations come from (the run seed's).
        n_perm: permutations averaged.

    Returns:
        float64 array (M,): mean over permutations of (true-reward gain of blind BoN) / frontier_gain
        (1.0 where the frontier gain is 0, as in :func:`.experiment.bon_and_frontier`).

    Source: inferred (a control for "best-of-N approaches the limit"); best-of-N's output distribution
    is Beirami et al. (2024), :func:`.best_of_n.best_of_n_policy`.
    """
    from .best_of_n import best_of_n_policy

    r = np.asarray(rewards, dtype=np.float64)
    u = np.full(r.size, 1.0 / r.size)
    fg = np.asarray(frontier_gain, dtype=np.float64)
    gains = np.zeros((n_perm, len(ns)))
    for k in range(n_perm):
        rp = r[rng.permutation(r.size)]                   # selection on a reward that is not the completion's
        gains[k] = [best_of_n_policy(u, rp, int(n)) @ r - r.mean() for n in ns]
    return np.where(fg > 0, gains.mean(0) / np.where(fg > 0, fg, 1.0), 1.0)


def tilted_gain(rewards: np.ndarray, beta: float) -> float:
    """Gain E_{pi_beta}[r] − E_{pi0}[r] of the KL-regularised optimum on the empirical (uniform) pool:
    the covariance-form estimate from base samples alone, ``Cov(r, e^{r/beta}) / E[e^{r/beta}]``."""
    r = np.asarray(rewards, dtype=np.float64)
    w = np.exp((r - r.max()) / beta)
    return float((r * w).mean() / w.mean() - r.mean())


def bootstrap_mean(values: np.ndarray, rng: np.random.Generator, n_boot: int = 4000,
                   level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Mean of ``values`` (shape (P,), one per prompt) and its percentile bootstrap interval over prompts."""
    v = np.asarray(values, dtype=np.float64)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(1)
    a = (1 - level) / 2
    return float(v.mean()), (float(np.quantile(means, a)), float(np.quantile(means, 1 - a)))
