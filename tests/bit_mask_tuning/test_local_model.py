"""The README's "your own model" flow on a checkpoint folder saved to tmp_path: load, mask, train,
save, re-apply to a fresh load (bit-exact), refuse another base."""

import pytest
import torch

from neurips26.bit_mask_tuning import MaskMismatchError, apply_mask, attach_bit_mask, save_mask
from neurips26.bit_mask_tuning.task import build_model
from neurips26.bit_mask_tuning.trl_adapters import save_toy_model


def test_mask_a_local_checkpoint(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = str(save_toy_model(build_model("llama", hidden=32, layers=2, ffn=64), tmp_path / "ckpt"))
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(path)
    bm = attach_bit_mask(model, rho=0.005)
    opt = torch.optim.SGD(bm.parameters(), lr=1.0)
    batch = tok(["<bos> 3 4 = 5 <eos>"], return_tensors="pt")
    model.train()
    for _ in range(5):
        loss = model(**batch, labels=batch["input_ids"]).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert 0 < bm.n_deleted() <= bm.k
    save_mask(bm, tmp_path / "task.bmt")
    model.eval()
    fresh = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    apply_mask(fresh, tmp_path / "task.bmt")
    with torch.no_grad():
        assert torch.equal(fresh(**batch).logits, model(**batch).logits)
    other = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    with torch.no_grad():
        other.model.layers[0].mlp.gate_proj.weight.mul_(1.0001)
    with pytest.raises(MaskMismatchError):
        apply_mask(other, tmp_path / "task.bmt")
