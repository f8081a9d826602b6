"""Theta gate, mutual-inhibition gains and sweep statistics."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.path_integration import mutual_inhibition_gain, sweep_statistics, theta_gate


def test_gate_alternates_dominance_per_cycle():
    g, cyc = theta_gate(400, 0.005, 8.0)                         # 25 steps per cycle
    first_half = [g[(cyc == k)][: 10].mean() for k in range(1, 10)]
    assert all(np.sign(a) != np.sign(b) for a, b in zip(first_half, first_half[1:]))
    with pytest.raises(ValueError, match="4 steps"):
        theta_gate(100, 0.02, 20.0)


def test_gain_inhibits_the_non_dominant_group():
    g = np.array([1.0, -1.0, 0.0])
    ccw = np.array([True, False, False])
    cw = np.array([False, True, False])
    gain = mutual_inhibition_gain(g, ccw, cw, 0.5)[0].numpy()
    np.testing.assert_allclose(gain, [[1, 0.5, 1], [0.5, 1, 1], [1, 1, 1]])
    with pytest.raises(ValueError, match="strength"):
        mutual_inhibition_gain(g, ccw, cw, 1.5)
    with pytest.raises(ValueError, match="both"):
        mutual_inhibition_gain(g, ccw, ccw, 0.5)


def test_sweep_statistics_on_planted_sweeps():
    g, cyc = theta_gate(200, 0.005, 8.0)
    offset = np.radians(20) * np.cumsum(g)[None] / np.abs(np.cumsum(g)).max()   # out-and-back, alternating
    expected = np.where(np.arange(cyc.max() + 1) % 2 == 0, 1.0, -1.0)
    st = sweep_statistics(np.repeat(offset, 3, 0), cyc, expected)
    assert st.alternation == 1.0 and st.gate_agreement == 1.0
    assert 10 < st.mean_abs_offset_deg <= 20.5
    drift = sweep_statistics(np.repeat(np.abs(offset), 3, 0) + np.linspace(0, 1, 200), cyc)  # one-sided
    assert drift.alternation == 0.0
    with pytest.raises(ValueError, match="complete theta cycles"):
        sweep_statistics(offset[:, :40], cyc[:40])


def test_shuffled_gate_keeps_the_inhibition_and_removes_the_alternation():
    """Catches a shuffled-gate control that is not a control: signs that are not a permutation of the
    alternating sequence (other amounts of CCW/CW dominance), a gate that ignores ``signs`` (the control
    would then equal the alternating gate and the paired difference would be 0 by construction), or a
    per-trajectory gain that is not built per trajectory."""
    from neurips26.path_integration.theta import shuffled_signs

    g, cyc = theta_gate(200, 0.005, 8.0)
    K = cyc.max() + 1
    alternating = np.where(np.arange(K) % 2 == 0, 1.0, -1.0)
    np.testing.assert_array_equal(theta_gate(200, 0.005, 8.0, signs=alternating)[0], g)
    s = shuffled_signs(K, 50, np.random.default_rng(0))
    assert s.shape == (50, K) and all(sorted(row) == sorted(alternating) for row in s)
    flips = np.mean(s[:, 1:] != s[:, :-1])
    assert 0.35 < flips < 0.75                                               # ≈ 0.5, not the 1.0 of alternation
    gs, _ = theta_gate(200, 0.005, 8.0, signs=s)
    assert gs.shape == (50, 200) and not np.allclose(gs, g)
    np.testing.assert_allclose(np.abs(gs), np.abs(g)[None].repeat(50, 0))   # same inhibition, other sides
    ccw, cw = np.array([True, False, False]), np.array([False, True, False])
    gain = mutual_inhibition_gain(gs, ccw, cw, 0.5)
    assert tuple(gain.shape) == (50, 200, 3)
    np.testing.assert_allclose(gain[3].numpy(), mutual_inhibition_gain(gs[3], ccw, cw, 0.5)[0].numpy())
    with pytest.raises(ValueError, match="signs"):
        theta_gate(200, 0.005, 8.0, signs=alternating[:2])
    # sweeps that follow their gate: the shuffled gate's sweeps agree with the shuffled signs, and the
    # per-trajectory alternation is exposed for the paired comparison
    planted = np.radians(20) * np.cumsum(gs, 1) / np.abs(np.cumsum(gs, 1)).max()
    st = sweep_statistics(planted, cyc, s)
    assert st.gate_agreement == 1.0 and st.alternation_by_trajectory.shape == (50,)
    assert st.alternation == pytest.approx(st.alternation_by_trajectory.mean()) and st.alternation < 0.8


def test_random_groups_are_disjoint_size_matched_and_refuse_impossible_sizes():
    """Catches a random-groups control (the theta_alternation control) whose groups overlap, differ in size
    from the learned CW/CCW groups, or are the same on every draw (then it would test one arbitrary split)."""
    from neurips26.path_integration.theta import random_groups

    rng = np.random.default_rng(0)
    draws = [random_groups(64, 10, 12, rng) for _ in range(5)]
    for ccw, cw in draws:
        assert ccw.sum() == 10 and cw.sum() == 12 and not (ccw & cw).any()
    assert len({tuple(np.flatnonzero(c)) for c, _ in draws}) == 5
    ccw, cw = random_groups(4, 2, 2, rng)                                   # the whole module split in two
    assert (ccw | cw).all()
    with pytest.raises(ValueError, match="together"):
        random_groups(10, 6, 5, rng)
