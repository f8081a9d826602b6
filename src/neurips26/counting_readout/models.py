"""Models: a tiny Llama/Qwen2 trained in-process on counting, and loading a user's local
checkpoint.

The tiny model is what the quick reproduction diagnoses: a word-level tokenizer
(:func:`~.tasks.build_word_tokenizer`), a 2–4-layer ``LlamaForCausalLM`` or
``Qwen2ForCausalLM`` with an untied head, trained with cross-entropy on the answer digit of
counting prompts plus next-token loss on filler text (digits occur there too). Nothing is
downloaded. Source: inferred (a laptop-scale stand-in for the paper's six LLMs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the folder check is shared by every system that loads a local checkpoint (it lives with the local
# model backend) and re-exported here for this system's users
from neurips26.backends.local import check_model_folder  # noqa: F401

from .tasks import (
    DigitTokens,
    EncodedPrompts,
    digit_tokens,
    encode_prompts,
    generate_counting_prompts,
    generate_filler_text,
)

ARCHITECTURES = ("llama", "qwen2")


def build_tiny_model(tokenizer, *, arch: str = "llama", hidden_size: int = 64, layers: int = 2, heads: int = 4,
                     intermediate_size: int = 128, max_positions: int = 64, tie_embeddings: bool = False,
                     seed: int = 0):
    """A randomly initialised tiny causal LM over ``tokenizer``'s vocabulary.

    Raises:
        ValueError: unknown ``arch`` (allowed: ``llama``, ``qwen2``), a size that is not an
            integer >= 1, or ``hidden_size`` not a multiple of ``heads``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    if arch not in ARCHITECTURES:
        raise ValueError(f"arch={arch!r}; allowed: {ARCHITECTURES}")
    for name, value in (("hidden_size", hidden_size), ("layers", layers), ("heads", heads),
                        ("intermediate_size", intermediate_size), ("max_positions", max_positions)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r}; allowed: an integer >= 1")
    if hidden_size % heads:
        raise ValueError(f"hidden_size={hidden_size} must be a multiple of heads={heads}")
    cfg_cls, model_cls = (LlamaConfig, LlamaForCausalLM) if arch == "llama" else (Qwen2Config, Qwen2ForCausalLM)
    cfg = cfg_cls(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=intermediate_size,
                  num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                  max_position_embeddings=max_positions, tie_word_embeddings=tie_embeddings,
                  pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                  eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    return model_cls(cfg)


@dataclass
class TextBatch:
    """Filler text for language-model loss: ids [n, T] (right-padded) and attention mask [n, T]."""

    input_ids: "object"
    attention_mask: "object"


def encode_text(tokenizer, texts: list[str]) -> TextBatch:
    """Tokenise ``texts`` (with special tokens), right-padded."""
    enc = tokenizer(texts, return_tensors="pt", padding=True)
    return TextBatch(enc["input_ids"], enc["attention_mask"])


def answer_logits(model, batch: EncodedPrompts):
    """Full-vocabulary logits at each prompt's answer position, float tensor [n, V]."""
    import torch

    dev = next(model.parameters()).device
    out = model(input_ids=batch.input_ids.to(dev), attention_mask=batch.attention_mask.to(dev))
    return out.logits[torch.arange(len(batch)), batch.answer_pos.to(dev)].float().cpu()


def text_loss(model, text: TextBatch, reduction: str = "mean"):
    """Next-token cross-entropy (nats per token) on real tokens of ``text``."""
    import torch.nn.functional as F

    dev = next(model.parameters()).device
    logits = model(input_ids=text.input_ids.to(dev), attention_mask=text.attention_mask.to(dev)).logits[:, :-1]
    tgt = text.input_ids[:, 1:].masked_fill(text.attention_mask[:, 1:] == 0, -100).to(dev)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100,
                           reduction=reduction)


def counting_accuracy(model, batch: EncodedPrompts, digits: DigitTokens, *, chunk: int = 256) -> dict:
    """Accuracy at the answer position in two modes.

    Returns ``{"digit_restricted": float, "full_vocab": float, "correct_digit": bool ndarray [n],
    "correct_full": bool ndarray [n]}``: argmax over the nine digit tokens, and argmax over the
    whole vocabulary (= the first greedy-generated token).

    Raises:
        ValueError: ``batch`` was encoded with other ``lead_ids`` than ``digits.lead_ids`` (e.g.
            :func:`~.tasks.encode_prompts` with its default ``()`` for a tokenizer that writes the
            space before a digit as its own token: the logits would be read at ``':'``, where the
            model writes the space, not the digit). Encode with ``lead_ids=digits.lead_ids``.
    """
    import torch

    if tuple(batch.lead_ids) != tuple(digits.lead_ids):
        raise ValueError(f"the prompts were encoded with lead_ids={tuple(batch.lead_ids)} but this tokenizer writes "
                         f"{tuple(digits.lead_ids)} before every digit; allowed: encode_prompts(..., "
                         "lead_ids=digits.lead_ids), so the digit is read where the model writes it")
    ids = torch.tensor(digits.ids)
    cd, cf = [], []
    with torch.no_grad():
        for s in range(0, len(batch), chunk):
            b = batch.subset(slice(s, s + chunk))
            lg = answer_logits(model, b)
            cd.append((lg[:, ids].argmax(-1) + 1 == b.counts).numpy())
            cf.append((lg.argmax(-1) == ids[b.counts - 1]).numpy())
    cd, cf = np.concatenate(cd), np.concatenate(cf)
    return {"digit_restricted": float(cd.mean()), "full_vocab": float(cf.mean()), "correct_digit": cd,
            "correct_full": cf}


@dataclass
class CountingData:
    """Tokenised data of one tiny-model experiment.

    Attributes:
        tokenizer: the word-level tokenizer.
        digits: the digit tokens.
        train, probe, test: counting prompts (model training, probe/subspace fitting, evaluation).
        text_train, text_heldout: filler text (training, held-out loss).
    """

    tokenizer: object
    digits: DigitTokens
    train: EncodedPrompts
    probe: EncodedPrompts
    test: EncodedPrompts
    text_train: TextBatch
    text_heldout: TextBatch


def make_counting_data(rng: np.random.Generator, *, n_train: int = 4000, n_probe: int = 900, n_test: int = 450,
                       n_text: int = 800, max_distractors: int = 5, formats=("space", "comma", "newline"),
                       tokenizer=None) -> CountingData:
    """Prompts and filler text for a tiny-model experiment (counts balanced over 1..9)."""
    from .tasks import build_word_tokenizer

    tok = tokenizer if tokenizer is not None else build_word_tokenizer()
    digits = digit_tokens(tok)
    gen = lambda n: encode_prompts(tok, generate_counting_prompts(n, rng, formats=tuple(formats),  # noqa: E731
                                                                  max_distractors=max_distractors),
                                   lead_ids=digits.lead_ids)
    text = generate_filler_text(2 * n_text, rng)
    return CountingData(tok, digits, gen(n_train), gen(n_probe), gen(n_test), encode_text(tok, text[:n_text]),
                        encode_text(tok, text[n_text:]))


def _trim(ids, mask):
    """Right-padded ``ids``/``mask`` [n, T] cut to the longest real row (padding carries no loss)."""
    T = int(mask.sum(1).max())
    return ids[:, :T], mask[:, :T]


def length_bucketed_batches(lengths, batch_size: int, generator, *, group: int = 16):
    """Endless batches of row indices with similar lengths (``group_by_length``-style).

    Each round draws ``group × batch_size`` rows uniformly at random (with replacement across
    rounds, without within a round when there are enough rows), sorts them by length, cuts them
    into ``group`` batches and yields those in random order: every batch is a random sample of
    the data up to the sort, so all lengths and counts are seen every ``group`` steps, while a
    batch padded to its own longest row wastes little.

    Args:
        lengths: int tensor [n], real tokens per row.
        batch_size: rows per batch.
        generator: ``torch.Generator`` (all randomness).
        group: batches per sorted round.
    """
    import torch

    n = len(lengths)
    while True:
        m = group * batch_size
        pool = (torch.randperm(n, generator=generator)[:m] if n >= m
                else torch.randint(n, (m,), generator=generator))
        pool = pool[torch.argsort(lengths[pool], stable=True)]
        for b in torch.randperm(group, generator=generator).tolist():
            yield pool[b * batch_size:(b + 1) * batch_size]


def train_counting_model(model, data: CountingData, *, steps: int = 2000, batch_size: int = 64, lr: float = 5e-3,
                         text_weight: float = 0.05, seed: int = 0, log_every: int = 0,
                         bucketed: bool = False, bucket_group: int = 16, micro_batches: int = 1,
                         decay_frac: float = 0.1, balanced: bool = False, text_every: int = 1) -> list[float]:
    """Train ``model`` in place: CE on the answer digit + ``text_weight`` × next-token CE on filler.

    AdamW: 5 % linear warm-up, constant ``lr``, linear decay to 10 % over the last ``decay_frac`` of
    the steps. Returns the per-step losses.

    Batches: ``batch_size`` prompts drawn uniformly at random (``balanced``: ``batch_size // 9`` of
    each count 1..9, the rest uniform, so every batch sees every count equally). ``micro_batches``
    splits each batch, sorted by length, into that many parts, each cut to its own longest prompt;
    their summed losses are the batch's mean loss, so the gradient is the batch's own (up to float
    rounding) while padded tokens drop (about 43 % of a padded batch is padding). The filler-text
    loss is taken every ``text_every`` steps with weight ``text_weight × text_every`` (the same
    weight per step on average, fewer forward passes). ``bucketed`` (the older option): batches from
    :func:`length_bucketed_batches` — sorted groups, so a batch holds prompts of similar length and
    hence similar counts; it learned slower in trials.

    Raises:
        ValueError: ``micro_batches`` not in 1..batch_size, ``decay_frac`` not in (0, 1],
            ``text_every < 1``, or ``balanced`` with ``batch_size < 9``.
    """
    import torch

    if not 1 <= micro_batches <= batch_size:
        raise ValueError(f"micro_batches={micro_batches}; allowed: 1..batch_size={batch_size}")
    if not 0 < decay_frac <= 1:
        raise ValueError(f"decay_frac={decay_frac}; allowed: 0 < decay_frac <= 1")
    if text_every < 1:
        raise ValueError(f"text_every={text_every}; allowed: an integer >= 1")
    if balanced and batch_size < 9:
        raise ValueError(f"balanced batches need batch_size >= 9 (one prompt per count), got {batch_size}")
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    warm, tail = max(1, steps // 20), max(1, int(round(steps * decay_frac)))
    # linear warm-up, constant, linear decay to 10 % over the last decay_frac (a cosine decay that starts
    # early stalled before the counting phase transition in trial runs; the jump in accuracy comes in the decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm, 0.1 + 0.9 * max(0.0, (steps - s) / tail)))
    ids = torch.tensor(data.digits.ids)
    model.train()
    losses = []
    batches = (length_bucketed_batches(data.train.attention_mask.sum(1), batch_size, g, group=bucket_group)
               if bucketed else None)
    by_count = [torch.nonzero(data.train.counts == c).flatten() for c in range(1, 10)] if balanced else None
    lengths = data.train.attention_mask.sum(1)
    for step in range(steps):
        if bucketed:
            bi = next(batches)
        elif balanced:
            per = batch_size // 9
            bi = torch.cat([bc[torch.randint(len(bc), (per,), generator=g)] for bc in by_count]
                           + [torch.randint(len(data.train), (batch_size - 9 * per,), generator=g)])
        else:
            bi = torch.randint(len(data.train), (batch_size,), generator=g)
        if micro_batches > 1:
            bi = bi[torch.argsort(lengths[bi], stable=True)]
        loss = 0.0
        for part in torch.tensor_split(bi, micro_batches):
            b = data.train.subset(part)
            if bucketed or micro_batches > 1:
                b_ids, b_mask = _trim(b.input_ids, b.attention_mask)
                b = EncodedPrompts(b_ids, b_mask, b.answer_pos, b.entity_mask[:, :b_ids.shape[1]], b.counts,
                                   b.lead_ids)
            loss = loss + torch.nn.functional.cross_entropy(answer_logits(model, b), ids[b.counts - 1],
                                                            reduction="sum") / len(bi)
        if text_weight > 0 and step % text_every == 0:
            ti = torch.randint(data.text_train.input_ids.shape[0], (max(1, batch_size // 4),), generator=g)
            t_ids, t_mask = data.text_train.input_ids[ti], data.text_train.attention_mask[ti]
            if bucketed or micro_batches > 1:
                t_ids, t_mask = _trim(t_ids, t_mask)
            loss = loss + text_weight * text_every * text_loss(model, TextBatch(t_ids, t_mask))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if log_every and step % log_every == 0:
            print(step, losses[-1])
    model.eval()
    return losses


def load_local_model(path: str | Path, *, device: str = "cpu"):
    """Load a causal LM and its tokenizer from a local folder (``save_pretrained`` output).

    Loads through the project's local chat backend
    (:class:`neurips26.backends.local.TransformersBackend`: ``local_files_only=True``, nothing is
    downloaded). Returns ``(model, tokenizer)``, the model in eval mode on ``device``; a tokenizer
    without a pad token gets its EOS token as pad. If the folder's ``tokenizer.json`` encodes a probe
    text differently from the class ``AutoTokenizer`` picked (transformers 5 picks the class from
    the model type, e.g. ``Qwen2Tokenizer`` for any qwen2 folder, which re-tokenises a custom
    vocabulary), the file's own tokenizer is used instead, with a warning.

    Raises:
        ValueError: the folder fails :func:`check_model_folder`, transformers cannot load a causal
            LM from it (message names the folder and the cause), or the tokenizer is not a fast one
            (entity positions need offsets).
    """
    from neurips26.backends.base import BackendError
    from neurips26.backends.local import TransformersBackend

    check_model_folder(path)
    try:
        backend = TransformersBackend(path, device=device)
    except BackendError as exc:
        raise ValueError(str(exc)) from exc
    tok = _faithful_tokenizer(Path(path), backend.tokenizer)
    if not getattr(tok, "is_fast", False):
        raise ValueError(f"the tokenizer in {str(path)!r} is a slow {type(tok).__name__}; a fast tokenizer "
                         "(tokenizer.json) is needed for entity positions")
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return backend.model, tok


_PROBE_TEXT = "cat, dog\ncat\nHow many times does cat appear? Answer: 3"


def _faithful_tokenizer(path: Path, tok):
    """``tok``, or the ``tokenizer.json`` of ``path`` as a fast tokenizer when the two disagree."""
    import warnings

    tj = path / "tokenizer.json"
    if not tj.is_file():
        return tok
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer.from_file(str(tj)).encode(_PROBE_TEXT).ids
    if raw == tok(_PROBE_TEXT)["input_ids"]:
        return tok
    warnings.warn(f"{type(tok).__name__} loaded from {str(path)!r} tokenises differently from its tokenizer.json; "
                  "using tokenizer.json as saved", UserWarning, stacklevel=3)
    return PreTrainedTokenizerFast.from_pretrained(path, local_files_only=True)
