"""Export / re-apply: varint codec, bit-exact re-application, refusal of a mismatched base, sizes."""

import copy

import numpy as np
import pytest
import torch

from neurips26.bit_mask_tuning import (
    MaskMismatchError,
    apply_mask,
    attach_bit_mask,
    bitwise_equal,
    decode_indices,
    encode_indices,
    mask_from_bytes,
    save_mask,
    size_report,
    tensor_sha256,
)
from neurips26.bit_mask_tuning.codec import varint_decode, varint_encode
from neurips26.bit_mask_tuning.task import all_pairs, answer_logits, make_batch


def _logits(model):
    a, b = all_pairs()
    with torch.no_grad():
        return torch.cat([answer_logits(model, make_batch(a, b, m, "A")) for m in (None, "A", "B")])


def test_varint_roundtrip_edges():
    v = np.array([0, 1, 127, 128, 16383, 16384, 2**31 - 1, 2**35, 2**62], dtype=np.int64)
    data = varint_encode(v)
    assert len(varint_encode(np.array([127]))) == 1 and len(varint_encode(np.array([128]))) == 2
    assert np.array_equal(varint_decode(data), v)
    with pytest.raises(ValueError, match=">= 0"):
        varint_encode(np.array([-1]))
    with pytest.raises(ValueError, match="truncated"):
        varint_decode(data[:-1])


def test_index_codec_roundtrip_and_validation():
    rng = np.random.default_rng(0)
    idx = np.sort(rng.choice(10**7, 20000, replace=False))
    payload = encode_indices(idx)
    assert np.array_equal(decode_indices(payload), idx)
    assert len(payload) < 3 * idx.size  # mean gap 500 → 2-byte varints; int32 would be 4 B each
    assert decode_indices(encode_indices(np.zeros(0, np.int64))).size == 0
    with pytest.raises(ValueError, match="strictly increasing"):
        encode_indices(np.array([3, 3, 5]))


def _trained_mask(model):
    bm = attach_bit_mask(model, 0.01)
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        for m in bm.masks:
            m.scores.copy_(torch.randn(m.scores.shape, generator=g))
    return bm


def test_save_apply_is_bit_exact_and_refuses_other_base(base, tmp_path):
    fresh = copy.deepcopy(base)
    other = copy.deepcopy(base)
    bm = _trained_mask(base)
    path = tmp_path / "task.bmt"
    size = save_mask(bm, path)
    assert size == path.stat().st_size
    entries, meta = mask_from_bytes(path.read_bytes())
    assert meta["k"] == bm.k and sum(e.indices.size for e in entries) == bm.k
    assert apply_mask(fresh, path) == bm.k
    assert torch.equal(_logits(fresh), _logits(base))                  # max |diff| = 0
    for name, mod in bm.modules().items():
        assert bitwise_equal(dict(fresh.named_modules())[name].weight, mod.weight)
    with torch.no_grad():
        other.model.layers[1].mlp.gate_proj.weight[3, 3] += 1e-6
    with pytest.raises(MaskMismatchError, match="XXH3-64"):       # the fast default check
        apply_mask(other, path)
    with pytest.raises(MaskMismatchError, match="SHA-256"):
        apply_mask(other, path, verify="sha256")
    assert apply_mask(other, path, force=True) == bm.k


def test_shape_module_and_file_errors(base, tmp_path):
    from neurips26.bit_mask_tuning.task import build_model

    bm = _trained_mask(copy.deepcopy(base))
    data = (tmp_path / "m.bmt")
    save_mask(bm, data)
    wider = build_model("qwen2", 0, hidden=32, layers=2, ffn=64)
    with pytest.raises(MaskMismatchError, match="shape"):
        apply_mask(wider, data)
    shallow = build_model("qwen2", 0, hidden=32, layers=1, ffn=128)
    with pytest.raises(MaskMismatchError, match="lacks"):
        apply_mask(shallow, data)
    raw = data.read_bytes()
    with pytest.raises(MaskMismatchError, match="not a bit-mask file"):
        apply_mask(base, b"XXXX" + raw[4:])
    with pytest.raises(MaskMismatchError, match="truncated"):
        apply_mask(base, raw[:-3])


def test_hash_is_dtype_aware():
    t = torch.arange(6, dtype=torch.float32)
    assert tensor_sha256(t) == tensor_sha256(t.clone())
    assert tensor_sha256(t) != tensor_sha256(t.to(torch.bfloat16))
    assert len(tensor_sha256(t.to(torch.bfloat16))) == 64


def test_size_report_arithmetic():
    shapes = {f"l{i}": (1000, 100) for i in range(4)}  # 400k gate entries
    rep = size_report(shapes, n_model=2_000_000, rho=0.001)
    assert rep["k"] == 2000 and rep["n_gate"] == 400_000
    assert rep["ratio_bitmap"] == pytest.approx(2_000_000 * 2 / 50_000)  # bf16 bytes over 1 bit per gate entry
    assert rep["ratio_int32"] == pytest.approx(4_000_000 / 8000)
    assert rep["ratio_sparse"] > rep["ratio_int32"]  # delta-varint beats 4 B per index (mean gap 200 → 2 B)


# ---- review regressions (bad input found by a reviewer) --------------------------------------------

def test_truncated_or_corrupt_files_raise_mask_mismatch(base):
    raw = mask_to_bytes_of(base)
    for cut in (6, 10, 50):                                            # inside the length field / the JSON header
        with pytest.raises(MaskMismatchError, match="header is truncated or corrupt"):
            apply_mask(copy.deepcopy(base), raw[:cut])
    with pytest.raises(MaskMismatchError, match="unexpected bytes"):
        apply_mask(copy.deepcopy(base), raw + b"junk")
    bad = bytearray(raw)
    bad[-5] ^= 0xFF
    with pytest.raises(MaskMismatchError, match="corrupt index payload"):
        apply_mask(copy.deepcopy(base), bytes(bad))


def mask_to_bytes_of(model):
    from neurips26.bit_mask_tuning import export_mask, mask_to_bytes

    return mask_to_bytes(export_mask(_trained_mask(copy.deepcopy(model))))


@pytest.mark.parametrize("indices", [[5, -1, 3], [10**6, 3], [1.5, 2.0]])
def test_bad_indices_refused_before_any_write(base, indices):
    # unsorted entries with −1 used to pass the range check (it read only the ends) and zero the last weight
    from neurips26.bit_mask_tuning import export_mask
    from neurips26.bit_mask_tuning.codec import MaskEntry

    e = export_mask(_trained_mask(copy.deepcopy(base)))[0]
    target = copy.deepcopy(base)
    before = {k: v.clone() for k, v in target.state_dict().items()}
    with pytest.raises(MaskMismatchError, match="out of range|integer"):
        apply_mask(target, [MaskEntry(e.name, e.shape, e.dtype, e.sha256, np.array(indices))])
    assert all(torch.equal(v, before[k]) for k, v in target.state_dict().items())


def test_dtype_mismatch_named_and_live_mask_refused(base):
    raw = mask_to_bytes_of(base)
    with pytest.raises(MaskMismatchError, match="bfloat16 but the mask was exported from a float32"):
        apply_mask(copy.deepcopy(base).to(torch.bfloat16), raw)
    assert apply_mask(copy.deepcopy(base).to(torch.bfloat16), raw, force=True) > 0
    masked = copy.deepcopy(base)
    attach_bit_mask(masked, 0.01)
    with pytest.raises(MaskMismatchError, match="parametrisation"):   # used to zero the base under a live mask
        apply_mask(masked, raw)


def test_size_report_validates_the_budget():
    from neurips26.bit_mask_tuning import BudgetError

    with pytest.raises(BudgetError, match="strictly between 0 and 1"):
        size_report({"a": (10, 10)}, 1000, 2.0)
    with pytest.raises(BudgetError, match="gate-projection entries"):
        size_report({"a": (10, 10)}, 10**6, 0.5)
