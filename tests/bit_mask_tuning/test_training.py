"""Adaptation loops on the toy task: BMT learns, losses behave, weight deltas have the right form."""

import pytest
import torch

from neurips26.bit_mask_tuning.task import ANSWER_POS, evaluate, make_batch
from neurips26.bit_mask_tuning.training import adapt, grpo_loss, sdft_loss, weight_deltas


def test_pretrained_fixture_knows_both_rules(pretrained):
    s = evaluate(pretrained)
    assert s.prior >= 0.95 and s.default_a >= 0.95   # pre-training worked (else nothing below means anything)
    assert s.target == pytest.approx(0.10)           # (b+1) = (a+1) only when a = b: 10 of 100 prompts


def test_bmt_sft_learns_the_new_rule_within_budget(pretrained):
    run = adapt(pretrained, "bmt", "sft", steps=40, seed=1, rho=0.01, eval_every=20)
    gain = run.final.target - run.curve[0][1].target
    # 0.20 is 4 binomial sd of a 100-prompt accuracy; the quick run measures ~0.4 at d = 64
    assert gain >= 0.20, run.curve
    assert run.max_deleted <= run.bit_mask.k
    assert run.trainable == run.bit_mask.n_gate            # only the scores train


def test_grpo_step_raises_the_rewarded_answer(pretrained):
    import copy

    model = copy.deepcopy(pretrained).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    gen = torch.Generator().manual_seed(0)
    a = torch.arange(10).repeat_interleave(10)
    b = torch.arange(10).repeat(10)
    batch = make_batch(a, b, None, "B")

    def p_correct():
        with torch.no_grad():
            logits = model(input_ids=batch["input_ids"][:, :ANSWER_POS],
                           attention_mask=batch["attention_mask"][:, :ANSWER_POS]).logits[:, -1]
            return float(torch.softmax(logits, -1).gather(1, batch["answer"][:, None]).mean())

    before = p_correct()
    for _ in range(5):
        loss, skipped = grpo_loss(model, gen, n_prompts=16, group=16)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert p_correct() > before      # the advantage-weighted likelihood moves mass to rewarded answers


def test_sdft_loss_is_a_divergence(pretrained):
    gen = torch.Generator().manual_seed(0)
    for div in ("reverse", "forward"):
        assert float(sdft_loss(pretrained, pretrained, gen, 32, div)) >= 0.0
    with pytest.raises(ValueError, match="divergence"):
        sdft_loss(pretrained, pretrained, gen, 4, "jsd")


def test_adapt_validates_and_deltas_have_the_right_form(pretrained):
    with pytest.raises(ValueError, match="method"):
        adapt(pretrained, "ia3", "sft", steps=1, seed=0)
    with pytest.raises(ValueError, match="objective"):
        adapt(pretrained, "bmt", "dpo", steps=1, seed=0)
    bmt = adapt(pretrained, "bmt", "sft", steps=3, seed=0, eval_every=3)
    lora = adapt(pretrained, "lora", "sft", steps=3, seed=0, eval_every=3, lora_rank=2)
    d_bmt, d_lora = weight_deltas(pretrained, bmt), weight_deltas(pretrained, lora)
    assert sum(int((d != 0).sum()) for d in d_bmt.values()) == bmt.max_deleted
    for d in d_lora.values():
        assert torch.linalg.matrix_rank(d) <= 2          # merged LoRA update has rank ≤ r
