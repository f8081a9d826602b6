"""Which bugs the experiment's claims are meant to catch (issue 28), and tests for the bugs no
claim can see at quick scale.

Claims → bugs they catch (each tried on a broken copy):
* ``constant_f_grades_are_flood_values`` (check): tie handling of f — keeping the first instead of
  the last point of a tie group, in the masked staircases (``_compress``) or the exact ones
  (``_dense_grades``); before this claim every verdict stayed the same under both bugs, because
  the quick run's co-densities are continuous and have no ties (said in the claim's note).
* The memory guard's chunking is not exercised by any grade-comparing claim at quick scale (the
  invariant clouds fit in one block); its bugs are caught by the tests below and by
  ``test_bifiltration.py::test_chunking_under_memory_guard_gives_identical_grades`` /
  ``test_masked_mode_also_respects_the_memory_guard`` (tried: a running minimum or staircase value
  not carried across row blocks fails them).
"""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.flood_bifiltration import bifiltration as B
from neurips26.flood_bifiltration import experiment as E
from neurips26.flood_bifiltration import sublevel_flood_bifiltration
from neurips26.harness import RunContext


def _first_row_of_ties(r, t):
    """A broken copy of ``_compress``: keeps the FIRST row of each tie group of t."""
    start = np.ones(len(t), dtype=bool)
    start[1:] = t[1:] != t[:-1]
    idx = np.flatnonzero(start)
    keep = np.ones(len(idx), dtype=bool)
    keep[1:] = r[idx][1:] < r[idx][:-1]
    idx = idx[keep]
    return idx, np.stack([r[idx], t[idx]], axis=1)


def _first_row_of_ties_segments(r, t, ptr):
    """The same broken copy for the batched ``_compress_segments`` (the masked path's)."""
    start = np.ones(len(t), dtype=bool)
    start[1:] = t[1:] != t[:-1]
    start[ptr[:-1][ptr[:-1] < len(t)]] = True
    idx = np.flatnonzero(start)
    seg = np.searchsorted(ptr, idx, side="right") - 1
    keep = np.ones(len(idx), dtype=bool)
    keep[1:] = (r[idx][1:] < r[idx][:-1]) | (seg[1:] != seg[:-1])
    return idx[keep]


@pytest.mark.parametrize("broken", [False, True])
def test_tie_handling_bug_moves_the_constant_f_claim(tmp_path, monkeypatch, broken):
    if broken:
        monkeypatch.setattr(B, "_compress", _first_row_of_ties)
        monkeypatch.setattr(B, "_compress_segments", _first_row_of_ties_segments)
    cfg = E.Config(n_points_invariants=600, n_landmarks_invariants=20)
    claims = {c.id: c for c in E._invariants(cfg, RunContext(seed=0, out_dir=tmp_path), {})}
    verdict = claims["constant_f_grades_are_flood_values"].verdict.value
    assert verdict == ("does_not_hold" if broken else "holds"), claims["constant_f_grades_are_flood_values"].measured
    if broken:   # every other invariant claim is blind to it (continuous f): this claim is the one that moves
        assert all(c.verdict.value == "holds" for k, c in claims.items() if k != "constant_f_grades_are_flood_values")


def test_exact_blocks_respect_the_memory_limit():
    """The memory guard bounds each (rows × simplices × samples) float64 block to about a third of
    ``memory_limit_mb``: a guard that ignored the limit (one block of all rows) still gave equal
    grades, so only this check sees it."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3000, 2))
    f = rng.uniform(size=3000)
    limit_mb = 0.05
    bif = sublevel_flood_bifiltration(x, f, 20, points_per_edge=6, exact=True, memory_limit_mb=limit_mb)
    rows, batch, samples = bif.stats["exact_block_shape"]
    assert rows * batch * samples * 8 * 3 <= limit_mb * 2**20 or rows == batch == 1
    assert bif.stats["exact_blocks"] > 10
