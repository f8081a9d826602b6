"""The entropy-gated reward and the toy policy gradient."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.belief_search import entropy_gate, final_reward, per_turn_credit, toy_policy_gradient


def test_gate_blocks_guessing_from_the_preview():
    assert final_reward(True, 2.0, 2.0) == 0.0           # no look: ΔH = 0
    assert final_reward(True, 2.0, 2.4) == 0.0           # entropy went up: gate 0, never negative
    assert final_reward(True, 2.0, 1.0) == 1.0           # ΔH = 0.5 >= δ = 0.3
    assert final_reward(False, 2.0, 0.1) == 0.0
    assert final_reward(True, 0.0, 0.0) == 0.0           # H₀ ≈ 0: no search needed, ΔH := 0
    assert final_reward(True, 2.0, 2.0, gated=False) == 1.0
    assert entropy_gate(0.15, 0.3, "soft") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="kind"):
        entropy_gate(0.1, kind="cosine")


def test_per_turn_credit_telescopes_without_the_cap():
    h = np.array([3.0, 2.5, 2.7, 1.0, 0.4])
    r = per_turn_credit(h, 32, lam=0.1, cap=10.0)
    assert r.sum() == pytest.approx(0.1 * (3.0 - 0.4) / np.log(32))
    assert r[1] < 0  # a look that raised entropy earns negative credit
    assert per_turn_credit(h, 32, cap=0.1).max() <= 0.1 * 0.1 + 1e-15


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_toy_ungated_collapses_gated_keeps_searching(seed):
    ungated = toy_policy_gradient(False, np.random.default_rng(seed))
    gated = toy_policy_gradient(True, np.random.default_rng(seed))
    # built into the toy: guessing pays more until search is practised, so only the gate keeps searching
    assert ungated.p_search[-1] < 0.1 and gated.p_search[-1] > 0.9
    assert gated.accuracy[-50:].mean() > ungated.accuracy[-50:].mean() + 0.2


def test_the_gate_alone_keeps_searching():
    # review: the gated toy also adds per-turn credit; without it (the gate alone) the policy still searches,
    # so the gate, not the credit, blocks the shortcut in the toy
    r = toy_policy_gradient(True, np.random.default_rng(0), credit=False)
    assert r.p_search[-1] > 0.9
