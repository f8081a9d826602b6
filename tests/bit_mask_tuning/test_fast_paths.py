"""The speed-ups of the quick run give the numbers of the simple code they replaced."""


import math

import torch

from neurips26.bit_mask_tuning.task import (
    all_pairs,
    answer_logits,
    evaluate,
    evaluate_unbatched,
    make_batch,
)
from neurips26.bit_mask_tuning.training import adapt


def _three_pass_logits(model):
    a, b = all_pairs()
    with torch.no_grad():
        return torch.cat([answer_logits(model, make_batch(a, b, m, r)) for m, r in ((None, "B"), ("A", "A"),
                                                                                   ("B", "B"))])

def _batched_logits(model):
    a, b = all_pairs()
    bs = [make_batch(a, b, m, r) for m, r in ((None, "B"), ("A", "A"), ("B", "B"))]
    batch = {k: torch.cat([x[k] for x in bs]) for k in ("input_ids", "attention_mask")}
    with torch.no_grad():
        return answer_logits(model, batch)

def test_batched_evaluate_equals_three_passes(pretrained):
    """evaluate() scores the 300 prompts in one forward pass: catches a batched pass whose logits
    differ from the three separate passes (padding rows leaking into the marked ones, a mask path
    that changes round-off) or a mix-up of the slices/rules, on a plain, a masked, a LoRA and an
    FPT-trained model."""
    models = [pretrained.eval()]
    for method in ("bmt", "lora", "fpt"):
        models.append(adapt(pretrained, method, "sft", steps=4, seed=3, eval_every=2, batch_size=32).model.eval())
    for model in models:
        assert torch.equal(_batched_logits(model), _three_pass_logits(model))
        assert evaluate(model) == evaluate_unbatched(model)

def test_cached_start_scores_equal_evaluating_the_copy(pretrained):
    """adapt(start=evaluate(base)) skips the step-0 evaluation: catches a method whose fresh copy
    does not start at the base's scores (a mask deleting at attach, a LoRA with a non-zero B), and a
    cached start that changes the rest of the curve."""
    start = evaluate(pretrained)
    for method in ("bmt", "fpt", "lora"):
        for objective in ("sft", "sdft"):
            kw = dict(steps=3, seed=5, eval_every=2, batch_size=16)
            plain = adapt(pretrained, method, objective, **kw)
            fast = adapt(pretrained, method, objective, start=start, **kw)
            assert plain.curve == fast.curve
            assert plain.curve[0][1] == start


def test_top_k_stable_equals_the_stable_sort():
    """BitMask.refresh picks the top k with topk + ties by position instead of a full stable sort:
    catches a tie at the k-th value resolved differently from the sort (the chosen set would move)."""
    from neurips26.bit_mask_tuning.mask import top_k_stable

    g = torch.Generator().manual_seed(0)
    for trial in range(200):
        n = int(torch.randint(5, 400, (1,), generator=g))
        k = int(torch.randint(1, n, (1,), generator=g))
        v = torch.randint(-3, 6, (n,), generator=g).float() if trial % 2 else torch.randn(n, generator=g)
        v = torch.where(v > 0, v, torch.full_like(v, -math.inf)) if trial % 3 == 0 else v
        if trial % 3 == 0 and int((v > -math.inf).sum()) <= k:
            continue
        ref = torch.zeros(n, dtype=torch.bool)
        ref[torch.sort(v, descending=True, stable=True).indices[:k]] = True
        assert torch.equal(top_k_stable(v, k), ref)


def test_ste_mask_survives_mode_switches_without_refresh(pretrained):
    """A straight-through mask is no longer recomputed on a train/eval switch alone: catches a Z
    that then goes stale (the switch must give the Z a fresh refresh gives)."""
    import copy

    from neurips26.bit_mask_tuning.mask import attach_bit_mask

    model = copy.deepcopy(pretrained)
    bm = attach_bit_mask(model, 0.01)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.copy_(torch.randn(m.scores.shape, generator=torch.Generator().manual_seed(1)))
    before = bm.deleted()
    model.train()
    model.eval()
    kept = bm.deleted()
    bm.refresh()
    assert all(torch.equal(before[n], kept[n]) and torch.equal(kept[n], bm.deleted()[n]) for n in before)
    assert bm.n_deleted() == bm.k


def test_no_kv_cache_gives_the_same_loss_and_gradients(pretrained):
    """The task's forwards pass use_cache=False (no KV cache built for a single pass): catches a
    forward whose logits or gradients would change without the cache."""
    import copy

    from neurips26.bit_mask_tuning.task import sequence_loss, target_batch

    batch = target_batch(32, torch.Generator().manual_seed(2))
    grads = []
    for use_cache in (True, False):
        model = copy.deepcopy(pretrained).train()
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                       use_cache=use_cache).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 batch["labels"][:, 1:].reshape(-1), ignore_index=-100)
        if not use_cache:
            assert torch.equal(loss, sequence_loss(copy.deepcopy(pretrained).train(), batch))
        loss.backward()
        grads.append([p.grad for p in model.parameters()])
    assert all(torch.equal(a, b) for a, b in zip(*grads))
