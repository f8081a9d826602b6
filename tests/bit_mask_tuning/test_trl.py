"""The mask under trl's GRPOTrainer and SDFTTrainer on the toy model saved to a folder."""

import pytest
import torch

pytest.importorskip("trl")

from transformers import AutoModelForCausalLM  # noqa: E402

from neurips26.bit_mask_tuning.trl_adapters import (  # noqa: E402
    bmt_grpo_trainer,
    bmt_sdft_trainer,
    exact_match_reward,
    save_toy_model,
    toy_datasets,
    toy_teacher_prompt,
    toy_tokenizer,
)


def test_tokenizer_round_trip():
    tok = toy_tokenizer()
    ids = tok("<bos> B 3 4 =").input_ids
    assert ids == [1, 5, 9, 10, 3] and tok.decode(ids) == "<bos> B 3 4 ="


@pytest.mark.parametrize("trainer_name", ["grpo", "sdft"])
def test_trl_trainer_trains_only_the_mask(pretrained, tmp_path, trainer_name):
    path = save_toy_model(pretrained, tmp_path / "base")
    model = AutoModelForCausalLM.from_pretrained(path)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    grpo_ds, sdft_ds = toy_datasets(64, seed=0)
    tok = toy_tokenizer()
    if trainer_name == "grpo":
        trainer, bm = bmt_grpo_trainer(model, 0.01, exact_match_reward, grpo_ds, tok, tmp_path / "o", max_steps=3,
                                       batch_size=16, num_generations=8, temperature=1.5)
    else:
        trainer, bm = bmt_sdft_trainer(model, 0.01, sdft_ds, tok, tmp_path / "o", max_steps=3, batch_size=16,
                                       teacher_prompt_fn=toy_teacher_prompt)
    trainer.train()
    assert 0 < bm.n_deleted() <= bm.k
    for n, p in model.named_parameters():
        if not n.endswith(".scores"):
            assert torch.equal(p, before[n.replace(".parametrizations.weight.original", ".weight")]), n


def test_toy_teacher_prompt_inserts_the_context():
    assert toy_teacher_prompt("<bos> 3 4 =", "B") == "<bos> B 3 4 ="
