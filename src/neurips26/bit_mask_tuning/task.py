"""The toy adaptation task: a tiny Qwen2/Llama model pre-trained on two rules, adapted to a new one.

Inferred setup (the paper's tasks were not readable; this is ours): prompts ``<bos> [marker] a b =``
with digits a, b and an answer digit followed by ``<eos>``.

* rule A (marker ``A``): ``(a + 1) mod 10``;   rule B (marker ``B``): ``(b + 1) mod 10``
  (successor of the first or of the second digit: a tiny model learns both in ~200 steps,
  where ``a ± b mod 10`` did not move from chance in 300 steps on CPU; the quick run's 120 steps,
  set by its CPU budget, miss rule B in one of its three seeds);
* no marker: rule A (the pre-trained default).

Adaptation target (the *new* behaviour): answer with rule B when the marker is absent. The prior
task (measured for forgetting) is the marked prompts, which must keep their rules. Sequences are
left-padded to a common length of 7 tokens; the answer is predicted at position 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

VOCAB = ["<pad>", "<bos>", "<eos>", "=", "A", "B"] + [str(d) for d in range(10)]
PAD, BOS, EOS, EQ, MARK_A, MARK_B = range(6)
DIGIT0 = 6
SEQ_LEN = 7          # <pad|bos> <bos|marker> a b = answer <eos>
ANSWER_POS = 5       # index of the answer token; its logits sit at position 4


def rule(name: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Answer digit of rule ``"A"`` ((a+1) mod 10) or ``"B"`` ((b+1) mod 10); int64 tensors."""
    if name == "A":
        return (a + 1) % 10                                   # successor of the first digit
    if name == "B":
        return (b + 1) % 10                                   # successor of the second digit
    raise ValueError(f"rule {name!r}; allowed: 'A' or 'B'")


def make_batch(a: torch.Tensor, b: torch.Tensor, marker: str | None, answer_rule: str) -> dict[str, torch.Tensor]:
    """Token batch for digits ``a, b`` (int64, shape [n]).

    Returns ``input_ids`` [n, 7], ``attention_mask`` [n, 7] (0 on the left pad), ``labels`` [n, 7]
    (−100 except the answer and ``<eos>``) and ``answer`` [n] (token id of the correct digit).
    """
    n = a.numel()
    ans = DIGIT0 + rule(answer_rule, a, b)
    ids = torch.empty(n, SEQ_LEN, dtype=torch.long)
    att = torch.ones(n, SEQ_LEN, dtype=torch.long)
    if marker is None:
        ids[:, 0], ids[:, 1] = PAD, BOS
        att[:, 0] = 0
    else:
        ids[:, 0], ids[:, 1] = BOS, {"A": MARK_A, "B": MARK_B}[marker]
    ids[:, 2], ids[:, 3], ids[:, 4], ids[:, 5], ids[:, 6] = DIGIT0 + a, DIGIT0 + b, EQ, ans, EOS
    labels = torch.full_like(ids, -100)
    labels[:, 5:] = ids[:, 5:]
    return {"input_ids": ids, "attention_mask": att, "labels": labels, "answer": ans}


def all_pairs() -> tuple[torch.Tensor, torch.Tensor]:
    """All 100 digit pairs (a, b) as two int64 tensors."""
    g = torch.arange(10)
    return g.repeat_interleave(10), g.repeat(10)


def random_pairs(n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """n random digit pairs."""
    return torch.randint(0, 10, (n,), generator=gen), torch.randint(0, 10, (n,), generator=gen)


def pretraining_batch(n: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """Equal thirds: marked A (rule A), marked B (rule B), unmarked (rule A)."""
    parts = []
    for marker, r in (("A", "A"), ("B", "B"), (None, "A")):
        a, b = random_pairs(n // 3 + 1, gen)
        parts.append(make_batch(a, b, marker, r))
    out = {k: torch.cat([p[k] for p in parts])[:n] for k in parts[0]}
    return out


def target_batch(n: int, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """The new behaviour: unmarked prompts answered with rule B."""
    a, b = random_pairs(n, gen)
    return make_batch(a, b, None, "B")


def tiny_config(family: str = "qwen2", hidden: int = 64, layers: int = 2, ffn: int = 256):
    """A tiny transformers config (Qwen2 or Llama) over the task's 16-token vocabulary.

    Raises:
        ValueError: unknown family.
    """
    kw = dict(vocab_size=len(VOCAB), hidden_size=hidden, intermediate_size=ffn, num_hidden_layers=layers,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32, tie_word_embeddings=True,
              pad_token_id=PAD, bos_token_id=BOS, eos_token_id=EOS)
    if family == "qwen2":
        from transformers import Qwen2Config

        return Qwen2Config(**kw)
    if family == "llama":
        from transformers import LlamaConfig

        return LlamaConfig(**kw)
    raise ValueError(f"family={family!r}; allowed: 'qwen2' or 'llama'")


def build_model(family: str = "qwen2", seed: int = 0, **sizes) -> nn.Module:
    """A freshly initialised tiny causal LM (float32, eval mode)."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(tiny_config(family, **sizes))
    return model.eval()


def answer_logits(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Logits [n, vocab] at the answer position."""
    # use_cache=False: no KV cache is built for a single pass (the logits are the same)
    out = model(input_ids=batch["input_ids"][:, :ANSWER_POS], attention_mask=batch["attention_mask"][:, :ANSWER_POS],
                use_cache=False)
    return out.logits[:, -1]


@torch.no_grad()
def accuracy(model: nn.Module, marker: str | None, answer_rule: str) -> float:
    """Greedy exact-match accuracy over all 100 pairs for one prompt type (model put in eval mode)."""
    was = model.training
    model.eval()
    a, b = all_pairs()
    batch = make_batch(a, b, marker, answer_rule)
    acc = float((answer_logits(model, batch).argmax(-1) == batch["answer"]).float().mean())
    model.train(was)
    return acc


@dataclass
class TaskScores:
    """Accuracies (fractions of 100 prompts): ``target`` = unmarked→B (new), ``prior`` = mean of
    marked-A→A and marked-B→B (old), ``default_a`` = unmarked→A (the behaviour being replaced)."""

    target: float
    prior: float
    default_a: float


@torch.no_grad()
def evaluate(model: nn.Module) -> TaskScores:
    """:class:`TaskScores` of ``model`` (the same numbers as four :func:`accuracy` calls, from one
    forward pass over the 300 prompts: the unmarked prompts are scored once against both rules; the
    rows of a batch do not interact, and ``tests/bit_mask_tuning`` checks that the batched logits are
    bitwise those of the three separate passes)."""
    was = model.training
    model.eval()
    unmarked, marked_a, marked_b = _eval_batches()
    ids = torch.cat([unmarked["input_ids"], marked_a["input_ids"], marked_b["input_ids"]])
    att = torch.cat([unmarked["attention_mask"], marked_a["attention_mask"], marked_b["attention_mask"]])
    pred = answer_logits(model, {"input_ids": ids, "attention_mask": att}).argmax(-1)
    n = unmarked["answer"].numel()
    p_un, p_a, p_b = pred[:n], pred[n:2 * n], pred[2 * n:]
    target = float((p_un == unmarked["answer"]).float().mean())
    default_a = float((p_un == marked_a["answer"]).float().mean())          # rule A of the same (a, b) pairs
    acc_a = float((p_a == marked_a["answer"]).float().mean())
    acc_b = float((p_b == marked_b["answer"]).float().mean())
    model.train(was)
    return TaskScores(target=target, prior=0.5 * (acc_a + acc_b), default_a=default_a)


def evaluate_unbatched(model: nn.Module) -> TaskScores:
    """The reference for :func:`evaluate`: three separate forward passes (tests only)."""
    was = model.training
    model.eval()
    a, b = all_pairs()
    unmarked = make_batch(a, b, None, "B")
    with torch.no_grad():
        pred = answer_logits(model, unmarked).argmax(-1)
    target = float((pred == unmarked["answer"]).float().mean())
    default_a = float((pred == DIGIT0 + rule("A", a, b)).float().mean())
    model.train(was)
    return TaskScores(target=target, prior=0.5 * (accuracy(model, "A", "A") + accuracy(model, "B", "B")),
                      default_a=default_a)


_EVAL_BATCHES: tuple | None = None


def _eval_batches() -> tuple:
    """The three fixed evaluation batches (unmarked→B, marked A→A, marked B→B), built once."""
    global _EVAL_BATCHES
    if _EVAL_BATCHES is None:
        a, b = all_pairs()
        _EVAL_BATCHES = tuple(make_batch(a, b, m, r) for m, r in ((None, "B"), ("A", "A"), ("B", "B")))
    return _EVAL_BATCHES


def sequence_loss(model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Token cross-entropy on the answer and ``<eos>`` (SFT loss)."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   use_cache=False).logits[:, :-1]
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch["labels"][:, 1:].reshape(-1),
                                       ignore_index=-100)


def pretrain(model: nn.Module, steps: int, batch_size: int, lr: float, seed: int) -> list[float]:
    """Pre-train on rules A and B (AdamW, cosine decay). Returns the loss curve."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    losses = []
    for _ in range(steps):
        loss = sequence_loss(model, pretraining_batch(batch_size, gen))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
