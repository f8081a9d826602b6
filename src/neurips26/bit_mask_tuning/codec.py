"""Exporting a trained mask as sorted sparse indices and re-applying it bit-exactly.

File layout (ours; inferred: the abstract says the mask is "several 1000× smaller than the
full-parameter checkpoint", which a dense bitmap over the gate projections cannot reach, ~70×)::

    b"BMT1" | uint32 header length | JSON header | payload_0 | payload_1 | …

The JSON header lists, per masked tensor: its module name, shape, dtype, the SHA-256 of the
*base* tensor's bytes (and, when the ``xxhash`` package is present, its 64-bit XXH3 digest), the
number of deletions and the payload length. A payload is
``zlib(varint(delta(sorted flat indices)))``: the first index, then gaps between successive
indices (all ≥ 1), each as an unsigned LEB128 varint (7 bits per byte, high bit = "more").
Applying is ``W.view(-1)[idx] = 0`` after checking the hash: by default the XXH3-64 digest when
the file has one (about 30× faster than SHA-256; any changed entry changes it, an unrelated base
collides with probability 2⁻⁶⁴, but it is not a cryptographic check), ``verify="sha256"`` for the
cryptographic one. Files without an XXH3 digest are checked with SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parametrize

from .mask import BitMask, budget

MAGIC = b"BMT1"


class MaskMismatchError(ValueError):
    """A mask file does not match the model it is applied to (hash, shape or module missing)."""


def _tensor_bytes(t: torch.Tensor) -> memoryview:
    """The tensor's bytes without a copy when it is already a contiguous CPU tensor."""
    t = t.detach().to("cpu").contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return memoryview(t.numpy()).cast("B")


def tensor_sha256(t: torch.Tensor) -> str:
    """SHA-256 hex digest of a tensor's bytes (CPU, contiguous; bf16 hashed as raw 16-bit words)."""
    return hashlib.sha256(_tensor_bytes(t)).hexdigest()


def tensor_xxh3(t: torch.Tensor) -> str:
    """XXH3-64 hex digest of a tensor's bytes (same bytes as :func:`tensor_sha256`), or ``""`` when
    the ``xxhash`` package is not installed. Non-cryptographic: a fast identity check."""
    try:
        import xxhash
    except ImportError:
        return ""
    return xxhash.xxh3_64(_tensor_bytes(t)).hexdigest()


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when ``a`` and ``b`` have the same shape, dtype and bytes (so ``+0.0 ≠ −0.0`` and a NaN
    equals the same NaN), unlike :func:`torch.equal`, which compares values."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = a.detach().contiguous().reshape(-1), b.detach().contiguous().reshape(-1)
    word = {1: torch.uint8, 2: torch.int16, 4: torch.int32}.get(a.element_size(), torch.int64)
    return torch.equal(a.view(word), b.view(word))


def varint_encode(values: np.ndarray) -> bytes:
    """Unsigned LEB128 encoding of non-negative integers (vectorised over 7-bit groups).

    Args:
        values: 1-D array of integers in [0, 2⁶³).

    Raises:
        ValueError: a negative value.
    """
    v = np.asarray(values, dtype=np.int64).ravel()
    if v.size and v.min() < 0:
        raise ValueError(f"varint_encode(): values must be >= 0, got min {v.min()}")
    v = v.astype(np.uint64)
    nbytes = np.ones(v.size, dtype=np.int64)
    for s in range(1, 10):
        nbytes += (v >> np.uint64(7 * s)) > 0
    total = int(nbytes.sum())
    out = np.empty(total, dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum(nbytes)[:-1]])
    for s in range(int(nbytes.max()) if v.size else 0):
        sel = nbytes > s
        byte = ((v[sel] >> np.uint64(7 * s)) & np.uint64(0x7F)).astype(np.uint8)
        more = (nbytes[sel] > s + 1).astype(np.uint8) << 7                       # continuation bit
        out[starts[sel] + s] = byte | more
    return out.tobytes()


def varint_decode(data: bytes) -> np.ndarray:
    """Inverse of :func:`varint_encode` (int64 array).

    Raises:
        ValueError: a truncated final varint.
    """
    b = np.frombuffer(data, dtype=np.uint8)
    if b.size == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.flatnonzero(b < 0x80)
    if ends.size == 0 or ends[-1] != b.size - 1:
        raise ValueError("varint_decode(): data ends inside a varint (truncated file?)")
    starts = np.concatenate([[0], ends[:-1] + 1])
    owner = np.repeat(np.arange(ends.size), ends - starts + 1)                    # which value each byte is in
    shift = (np.arange(b.size) - starts[owner]) * 7
    parts = (b & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    return np.add.reduceat(parts, starts).astype(np.int64)                       # Σ 7-bit groups per value


def encode_indices(idx: np.ndarray) -> bytes:
    """``zlib(varint(delta(sorted idx)))``; ``idx`` must be strictly increasing non-negative ints."""
    idx = np.asarray(idx, dtype=np.int64)
    if idx.size and (idx[0] < 0 or np.any(np.diff(idx) <= 0)):
        raise ValueError("encode_indices(): indices must be non-negative and strictly increasing")
    deltas = np.diff(idx, prepend=0) if idx.size else idx                         # first index, then gaps
    return zlib.compress(varint_encode(deltas), 9)


def decode_indices(payload: bytes) -> np.ndarray:
    """Inverse of :func:`encode_indices`."""
    return np.cumsum(varint_decode(zlib.decompress(payload)))


@dataclass
class MaskEntry:
    """One masked tensor in a mask file: module name, shape, dtype, base hashes (SHA-256 and, if
    available, XXH3-64; ``""`` when absent), sorted indices."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    sha256: str
    indices: np.ndarray
    xxh3: str = ""


def export_mask(bit_mask: BitMask) -> list[MaskEntry]:
    """The current hard mask as :class:`MaskEntry` objects (sorted flat indices per tensor)."""
    entries = []
    z = bit_mask.deleted()
    for name, w in bit_mask.base_weights().items():
        idx = torch.nonzero(z[name].flatten()).flatten().cpu().numpy().astype(np.int64)  # sorted by construction
        entries.append(MaskEntry(name, tuple(w.shape), str(w.dtype).replace("torch.", ""), tensor_sha256(w), idx,
                                 tensor_xxh3(w)))
    return entries


def mask_to_bytes(entries: list[MaskEntry], meta: dict | None = None) -> bytes:
    """Serialise entries to the ``BMT1`` format (see the module docstring)."""
    payloads = [encode_indices(e.indices) for e in entries]
    header = {"format": "BMT1 delta-varint-zlib", "meta": meta or {},
              "tensors": [{"name": e.name, "shape": list(e.shape), "dtype": e.dtype, "sha256": e.sha256,
                           **({"xxh3_64": e.xxh3} if e.xxh3 else {}),
                           "count": int(e.indices.size), "bytes": len(p)} for e, p in zip(entries, payloads)]}
    h = json.dumps(header, separators=(",", ":")).encode()
    buf = io.BytesIO()
    buf.write(MAGIC + struct.pack("<I", len(h)) + h)
    for p in payloads:
        buf.write(p)
    return buf.getvalue()


def mask_from_bytes(data: bytes) -> tuple[list[MaskEntry], dict]:
    """Parse a ``BMT1`` file; returns (entries, meta).

    Raises:
        MaskMismatchError: not a BMT1 file, a truncated or corrupt header or payload, a count that
            disagrees with its payload, or bytes left over after the last payload.
    """
    if data[:4] != MAGIC:
        raise MaskMismatchError(f"not a bit-mask file (magic {data[:4]!r}, expected {MAGIC!r})")
    try:
        (n,) = struct.unpack("<I", data[4:8])
        if 8 + n > len(data):
            raise ValueError(f"header of {n} B but only {len(data) - 8} B follow")
        header = json.loads(data[8:8 + n])
        specs = [(str(t["name"]), tuple(int(x) for x in t["shape"]), str(t["dtype"]), str(t["sha256"]),
                  int(t["count"]), int(t["bytes"]), str(t.get("xxh3_64", ""))) for t in header["tensors"]]
    except (struct.error, ValueError, KeyError, TypeError) as exc:               # JSONDecodeError is a ValueError
        raise MaskMismatchError(f"mask file header is truncated or corrupt ({exc})") from exc
    pos, entries = 8 + n, []
    for name, shape, dtype, sha, count, nbytes, xxh in specs:
        chunk = data[pos:pos + nbytes]
        if len(chunk) != nbytes:
            raise MaskMismatchError(f"mask file truncated in tensor {name}")
        try:
            idx = decode_indices(chunk)
        except (zlib.error, ValueError) as exc:
            raise MaskMismatchError(f"tensor {name}: corrupt index payload ({exc})") from exc
        if idx.size != count:
            raise MaskMismatchError(f"tensor {name}: {idx.size} indices decoded, header says {count}")
        entries.append(MaskEntry(name, shape, dtype, sha, idx, xxh))
        pos += nbytes
    if pos != len(data):
        raise MaskMismatchError(f"{len(data) - pos} unexpected bytes after the last tensor (corrupt or "
                                "concatenated mask file)")
    return entries, header.get("meta", {})


def save_mask(bit_mask: BitMask, path: str | Path) -> int:
    """Write the mask of ``bit_mask`` to ``path``; returns the file size in bytes."""
    data = mask_to_bytes(export_mask(bit_mask), {"k": bit_mask.k, "rho": bit_mask.rho,
                                                 "denominator": bit_mask.denominator,
                                                 "n_model": bit_mask.n_model, "n_gate": bit_mask.n_gate})
    Path(path).write_bytes(data)
    return len(data)


def _base_weight(mod: nn.Module) -> torch.Tensor:
    if hasattr(mod, "parametrizations") and "weight" in mod.parametrizations:
        return mod.parametrizations.weight.original
    return mod.weight


@torch.no_grad()
def apply_mask(model: nn.Module, mask: str | Path | bytes | list[MaskEntry], *, force: bool = False,
               verify: str = "fast") -> int:
    """Zero the mask's entries in ``model``'s weights in place (``W.view(-1)[idx] = 0``).

    Args:
        model: the base model the mask was trained on (unmasked weights).
        mask: a file path, the bytes of a file, or entries from :func:`export_mask`.
        force: apply even when a base tensor's hash differs (shapes must still match).
        verify: ``"fast"`` (default): the XXH3-64 digest where the file has one and ``xxhash`` is
            installed, else SHA-256; ``"sha256"``: always the cryptographic SHA-256.

    Returns:
        the number of zeroed entries.

    Raises:
        MaskMismatchError: a named module is missing or carries a live mask, a shape differs, an
            index is out of range or not an integer, the file is truncated or corrupt, or (unless
            ``force``) a base tensor's dtype or hash differs from the one recorded at export.
        ValueError: ``verify`` is not ``"fast"`` or ``"sha256"``.
    """
    if verify not in ("fast", "sha256"):
        raise ValueError(f"verify={verify!r}; allowed: 'fast' (XXH3-64 when recorded) or 'sha256'")
    if isinstance(mask, (str, Path)):
        entries, _ = mask_from_bytes(Path(mask).read_bytes())
    elif isinstance(mask, (bytes, bytearray)):
        entries, _ = mask_from_bytes(bytes(mask))
    else:
        entries = mask
    mods = dict(model.named_modules())
    missing = [e.name for e in entries if e.name not in mods]
    if missing:
        leaf = missing[0].rsplit(".", 1)[-1]
        near = [n for n in mods if n.endswith(leaf)][:4]
        raise MaskMismatchError(f"mask names modules {missing[:4]} which this model lacks (it has: {near})")
    todo = []
    for e in entries:                                                              # shapes and ranges first
        mod = mods[e.name]
        if parametrize.is_parametrized(mod, "weight"):
            raise MaskMismatchError(f"{e.name} carries a deletion-mask parametrisation (attach_bit_mask): apply a "
                                    "mask file to a plain base model, or detach the live mask first")
        w = _base_weight(mod)
        if tuple(w.shape) != tuple(e.shape):
            raise MaskMismatchError(f"{e.name}: model weight shape {tuple(w.shape)} != mask shape {e.shape}")
        idx = np.asarray(e.indices)
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise MaskMismatchError(f"{e.name}: indices have dtype {idx.dtype}; flat integer indices are required")
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= w.numel()):
            bad = int(idx.min()) if int(idx.min()) < 0 else int(idx.max())
            raise MaskMismatchError(f"{e.name}: index {bad} out of range [0, {w.numel()}) for shape {tuple(w.shape)}")
        todo.append((e, w))
    for e, w in todo:                                                              # then dtypes and base hashes
        dtype = str(w.dtype).replace("torch.", "")
        if dtype != e.dtype and not force:
            raise MaskMismatchError(f"{e.name}: the model's weight is {dtype} but the mask was exported from a "
                                    f"{e.dtype} base, so the base hash cannot match: load the model with "
                                    f"dtype=torch.{e.dtype} (or pass force=True: indices do not depend on dtype)")
        if force:
            continue
        fast = tensor_xxh3(w) if verify == "fast" and e.xxh3 else ""
        kind, h, want = ("XXH3-64", fast, e.xxh3) if fast else ("SHA-256", tensor_sha256(w), e.sha256)
        if h != want:
            raise MaskMismatchError(f"{e.name}: base tensor {kind} {h[:16]}… differs from the mask's "
                                    f"{want[:16]}…: this mask was trained on another base model, or was "
                                    "already applied to this one (pass force=True to apply anyway)")
    todo = [(w, np.asarray(e.indices, dtype=np.int64)) for e, w in todo]
    n = 0
    for w, idx in todo:
        w.view(-1)[torch.from_numpy(idx).to(w.device)] = 0
        n += idx.size
    return n


def size_report(shapes: dict[str, tuple[int, int]], n_model: int, rho: float, *, checkpoint_bytes_per_param: int = 2,
                seed: int = 0) -> dict:
    """Mask-file size against the checkpoint for a model given only its gate shapes.

    Draws ``k = ⌊ρ·n_model⌋`` deletions spread over the gate projections in proportion to their
    size, uniformly at random inside each (a pessimistic case for compression: no structure),
    encodes them with :func:`encode_indices`, and compares with the bf16 checkpoint
    (``n_model × 2`` bytes), raw int32 indices and a dense 1-bit bitmap over the gates.

    Raises:
        BudgetError: ρ outside (0, 1), k < 1 or k > the number of gate entries.

    Returns:
        dict with ``k``, ``n_gate``, ``mask_bytes``, ``checkpoint_bytes``, ``ratio_sparse``,
        ``ratio_int32``, ``ratio_bitmap`` and ``bytes_per_index``.
    """
    rng = np.random.default_rng(seed)
    sizes = {n: a * b for n, (a, b) in shapes.items()}
    n_gate = sum(sizes.values())
    k = budget(rho, n_model, n_gate, "model")
    counts = rng.multinomial(k, np.array(list(sizes.values())) / n_gate)
    total = 0
    for (_name, size), c in zip(sizes.items(), counts):
        idx = np.sort(rng.choice(size, size=int(c), replace=False)) if c else np.zeros(0, np.int64)
        total += len(encode_indices(idx)) + 200                                       # + ~200 B of JSON per tensor
    ckpt = n_model * checkpoint_bytes_per_param
    return {"k": k, "n_gate": n_gate, "n_model": n_model, "mask_bytes": total, "checkpoint_bytes": ckpt,
            "ratio_sparse": ckpt / total, "ratio_int32": ckpt / (4 * k), "ratio_bitmap": ckpt / (n_gate / 8),
            "bytes_per_index": total / max(k, 1)}
