"""Bit-Mask Tuning (paper 19): adapting an LLM by deleting a few gate-projection weights.

*The Surprising Effectiveness of Deleting Weights in LLM Reasoning and Adaptation* (OpenReview
JnfolztAV3, ICML 2026 FoGen workshop; NeurIPS 2026). Only the abstract was readable: a learnable
binary keep/zero mask over the gate projection of every transformer block, < 0.05 % of weights
zeroed, trained with GRPO, SFT or SDFT; a mask several 1000× smaller than a checkpoint; less
forgetting than full fine-tuning; an update geometry close to FPT's. Estimator, budget
denominator, file format and geometry formulas are ours (inferred, labelled in each docstring).

* :mod:`.mask` — :func:`attach_bit_mask` (a ``torch.nn.utils.parametrize`` parametrisation, base
  weights untouched), :class:`BitMask`, :func:`budget`, :func:`find_gate_projections`.
* :mod:`.codec` — :func:`save_mask` / :func:`apply_mask` (sorted indices, delta + varint + zlib,
  SHA-256 of the base tensor), :func:`size_report`.
* :mod:`.geometry` — effective rank, spectrum drift, principal-weight overlap of ΔW.
* :mod:`.training` — SFT / GRPO / SDFT loops for BMT, FPT and LoRA (peft) on the toy task.
* :mod:`.trl_adapters` — the mask under trl's ``GRPOTrainer`` and ``SDFTTrainer``.
* :mod:`.task` — the toy two-rule task and tiny Qwen2/Llama models.

Example (a tiny Qwen2 from :mod:`.task` stands in for your transformers causal LM)::

    import torch
    from neurips26.bit_mask_tuning import attach_bit_mask, save_mask, apply_mask
    from neurips26.bit_mask_tuning.task import build_model, sequence_loss, target_batch
    model = build_model("qwen2", seed=0)                 # or AutoModelForCausalLM.from_pretrained(folder)
    bm = attach_bit_mask(model, rho=0.0005)              # k = ⌊ρ · all parameters⌋
    opt = torch.optim.SGD(bm.parameters(), lr=1.0)       # scores only; base weights frozen
    batch = target_batch(32, torch.Generator().manual_seed(0))
    for _ in range(5):                                   # any loss: backward, step
        opt.zero_grad(); sequence_loss(model, batch).backward(); opt.step()
    print(bm.k, bm.n_deleted(), save_mask(bm, "task.bmt"), "bytes")   # 62 62 665 bytes
    fresh = build_model("qwen2", seed=0)                 # the same base weights, unmasked
    print(apply_mask(fresh, "task.bmt"), "entries zeroed")   # bit-exact; refuses another base
"""

from .codec import (
                    MaskMismatchError,
                    apply_mask,
                    bitwise_equal,
                    decode_indices,
                    encode_indices,
                    export_mask,
                    mask_from_bytes,
                    mask_to_bytes,
                    save_mask,
                    size_report,
                    tensor_sha256,
)
from .geometry import effective_rank, geometry, principal_weight_overlap, principal_weights, spectrum_drift
from .mask import (
                    BitMask,
                    BudgetError,
                    DeletionMask,
                    NoGateProjectionError,
                    attach_bit_mask,
                    budget,
                    count_parameters,
                    find_gate_projections,
)

__all__ = ["BitMask", "BudgetError", "DeletionMask", "MaskMismatchError", "NoGateProjectionError", "apply_mask",
           "attach_bit_mask", "bitwise_equal", "budget", "count_parameters", "decode_indices", "effective_rank", "encode_indices",
           "export_mask", "find_gate_projections", "geometry", "mask_from_bytes", "mask_to_bytes",
           "principal_weight_overlap", "principal_weights", "save_mask", "size_report", "spectrum_drift",
           "tensor_sha256"]
