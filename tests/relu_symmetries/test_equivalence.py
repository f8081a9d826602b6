"""The decision procedure: orbit pairs, perturbations, bottleneck moves, degenerate inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.relu_symmetries import (
    Box,
    Equivalent,
    NotEquivalent,
    ReluNet3,
    Undecided,
    deepen_hidden_inhibition,
    equivalent,
    exact_forward,
    match_orbit,
    move_dead_unit,
    move_hidden_hyperplane,
    naive_canonical_equal,
    random_network,
    random_orbit_element,
    reduce_network,
    segment_breakpoints,
)
from neurips26.relu_symmetries.constructions import case_a, case_b, generic_switching_network
from neurips26.relu_symmetries.regions import activation_cells

BOX3 = Box.cube(3, 3.0)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_orbit_pairs_decided_equivalent_and_perturbations_not(seed):
    rng = np.random.default_rng(seed)
    net = generic_switching_network((3, 4, 3, 1), BOX3, rng)
    moved = random_orbit_element(net, rng).net
    X = BOX3.sample(20_000, rng)
    f = net(X)
    assert np.max(np.abs(f - moved(X)) / (1 + np.abs(f))) <= 1e-12
    d = equivalent(net, moved, BOX3)
    assert isinstance(d, Equivalent) and d.proof == "orbit"
    assert d.evidence["residual"] <= 1e-12
    W1 = net.W1.copy()
    W1[rng.integers(4), rng.integers(3)] += 1e-3
    p = equivalent(net, net.replace(W1=W1), BOX3)
    assert isinstance(p, NotEquivalent) and p.gap > 1e-6
    # the witness is checked in exact arithmetic, independently here
    fa, fb = exact_forward(net, p.witness), exact_forward(net.replace(W1=W1), p.witness)
    assert float(max(abs(a - b) for a, b in zip(fa, fb))) == p.gap


def test_orbit_element_is_recovered():
    rng = np.random.default_rng(3)
    net = generic_switching_network((3, 4, 3, 1), BOX3, rng)
    g = random_orbit_element(net, rng)
    m = match_orbit(net, g.net)
    assert m is not None
    assert m.perm1 == g.perm1.tolist() and m.perm2 == g.perm2.tolist()
    assert np.allclose(m.scales1, g.scales1, rtol=1e-12) and np.allclose(m.scales2, g.scales2, rtol=1e-12)


def test_bottleneck_moves_equivalent_but_naive_comparer_fails():
    """Regression: canonical comparison of the orbit alone says 'different' for hidden moves."""
    a = case_a(False)
    moved = move_hidden_hyperplane(a.net, 0.375)
    assert not naive_canonical_equal(a.net, moved)
    d = equivalent(a.net, moved, a.box)
    assert isinstance(d, Equivalent) and d.proof == "segment"
    b = case_b(True)
    deeper = deepen_hidden_inhibition(b.net, 2, 0.75, b.box, verify_with=activation_cells)
    assert not naive_canonical_equal(b.net, deeper)
    d = equivalent(b.net, deeper, b.box)
    assert isinstance(d, Equivalent) and d.proof == "cells" and d.evidence["n_cells"] > 1


def test_segment_step_finds_a_far_witness():
    a = case_a(True)
    c = a.net.b2.copy()
    c[2] -= 0.5  # moves the last breakpoint from t = 3 to t = 3.25
    d = equivalent(a.net, a.net.replace(b2=c), a.box, n_probe=1)
    assert isinstance(d, NotEquivalent) and d.gap > 1e-3


def test_cells_step_finds_witness_random_probes_miss():
    # the two networks differ only where x1 > 1.9 (0.25 % of the box): one probe misses it
    b = case_b(False)
    extra = ReluNet3(np.r_[b.net.W1, [[1.0, 0.0]]], np.r_[b.net.b1, -1.9], np.c_[b.net.W2, [[5.0]]], b.net.b2,
                     b.net.W3, b.net.b3)
    d = equivalent(b.net, extra, b.box, n_probe=1)
    assert isinstance(d, NotEquivalent)
    assert d.witness[0] > 1.9 and d.evidence["step"] == "cells"


def test_widths_may_differ_through_dead_units():
    net = random_network((2, 3, 3, 1), np.random.default_rng(0))
    wide = ReluNet3(np.r_[net.W1, [[1.0, 1.0]]], np.r_[net.b1, -50.0], np.c_[net.W2, [7.0, 7.0, 7.0]], net.b2,
                    net.W3, net.b3)
    box = Box.cube(2, 2.0)
    reduced, kept = reduce_network(wide, box)
    assert 3 not in kept["kept1"]
    assert isinstance(equivalent(net, wide, box), Equivalent)
    moved = move_dead_unit(wide, 1, 3, box, np.random.default_rng(1))
    assert isinstance(equivalent(wide, moved, box), Equivalent)


def test_point_domain():
    net = random_network((2, 4, 4, 2), np.random.default_rng(0))
    X = np.random.default_rng(1).normal(size=(64, 2))
    d = equivalent(net, random_orbit_element(net, np.random.default_rng(2)).net, X)
    assert isinstance(d, Equivalent) and d.proof == "points" and d.evidence["n_points"] == 64
    b3 = net.b3 + np.array([0.0, 1e-3])
    p = equivalent(net, net.replace(b3=b3), X)
    assert isinstance(p, NotEquivalent) and abs(p.gap - 1e-3) < 1e-12


def test_near_coincident_kinks_are_undecided_not_guessed():
    """A hidden-unit move (off the orbit) plus one hyperplane moved by 1e-11: a sliver cell. The
    functions differ by ~1e-11 (below the tolerance) and no certificate exists — the answer must
    be Undecided with the reason, never a guess."""
    b = case_b(True)
    moved = deepen_hidden_inhibition(b.net, 2, 0.75, b.box, verify_with=activation_cells)
    b1 = moved.b1.copy()
    b1[1] += 1e-11
    d = equivalent(b.net, moved.replace(b1=b1), b.box)
    assert isinstance(d, Undecided) and "sliver" in d.reason
    # within the tolerance, an orbit pair with the same 1e-11 change is accepted as the orbit
    d = equivalent(b.net, b.net.replace(b1=b.net.b1 + np.array([0.0, 1e-11, 0.0])), b.box)
    assert isinstance(d, Equivalent) and d.proof == "orbit" and d.evidence["residual"] < 1e-10


def _with_split_duplicate(net):
    """Same function: first-layer unit 0 duplicated, its outgoing weight split in half."""
    W2 = np.c_[net.W2, 0.5 * net.W2[:, :1]]
    W2[:, 0] *= 0.5
    return ReluNet3(np.r_[net.W1, net.W1[:1]], np.r_[net.b1, net.b1[:1]], W2, net.b2, net.W3, net.b3)


def test_split_duplicate_units_decided_by_cells_or_budget():
    rng = np.random.default_rng(0)
    small = generic_switching_network((2, 3, 2, 1), Box.cube(2, 1.0), rng)
    d = equivalent(small, _with_split_duplicate(small), Box.cube(2, 1.0))
    assert isinstance(d, Equivalent) and d.proof == "cells"  # off the orbit (widths differ), merged on cells
    big = random_network((6, 12, 12, 1), rng)
    d = equivalent(big, _with_split_duplicate(big), Box.cube(6, 1.0), max_cells=20)
    assert isinstance(d, Undecided) and "max_cells" in d.reason


def test_segment_breakpoints_are_the_kinks():
    a = case_a(True)
    x0, x1 = np.array([-3.0, -3.0, 3.0]), np.array([3.0, 3.0, -3.0])  # t = 6τ·2 − 5.5 along it
    taus = segment_breakpoints(a.net, x0, x1)
    ts = [(a.net.W1 @ (x0 + s * (x1 - x0)) + a.net.b1)[0] for s in taus]
    assert np.allclose(ts, [0.0, 1.0, 2.0, 3.0], atol=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda n, m: equivalent(n, m, Box.cube(2, 1.0)), ValueError, "dimension 2"),
    (lambda n, m: equivalent(n, random_network((3, 2, 2, 2), np.random.default_rng(0)), BOX3), ValueError,
     "input and output widths must agree"),
    (lambda n, m: equivalent(n, "net", BOX3), TypeError, "from_sequential"),
    (lambda n, m: equivalent(n, m, BOX3, rtol=0.0), ValueError, "rtol=0.0"),
    (lambda n, m: equivalent(n, m, np.full((3, 3), np.nan)), ValueError, "finite"),
])
def test_bad_input(call, exc, match):
    n = random_network((3, 2, 2, 1), np.random.default_rng(0))
    with pytest.raises(exc, match=match):
        call(n, n)


def test_a_domain_that_is_neither_box_nor_points_is_refused_in_one_line():
    """Bad input found while hardening: equivalent(net, net, "box") raised numpy's "could not convert
    string to float" without naming the argument or what is allowed."""
    import numpy as np
    import pytest

    from neurips26.relu_symmetries import equivalent, random_network

    net = random_network((2, 3, 3, 1), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"domain='box'.*allowed: a Box or an array of points"):
        equivalent(net, net, "box")
