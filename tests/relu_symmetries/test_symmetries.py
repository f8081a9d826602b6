"""Every symmetry keeps the function; every refused move names its violated precondition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.relu_symmetries import (
    Box,
    deepen_hidden_inhibition,
    first_layer_slope_at_zero,
    flip_unit,
    move_dead_unit,
    move_hidden_hyperplane,
    permute_hidden,
    random_network,
    random_orbit_element,
    redistribute_affine,
    rescale_hidden,
    unit_status,
)
from neurips26.relu_symmetries.constructions import case_a, case_b
from neurips26.relu_symmetries.regions import activation_cells


def _max_rel(a, b, box, n=20000, seed=0):
    X = box.sample(n, np.random.default_rng(seed))
    fa = a(X)
    return float(np.max(np.abs(fa - b(X)) / (1 + np.abs(fa))))


@settings(max_examples=30, deadline=None)
@given(st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3)),
       st.integers(0, 2**31 - 1))
def test_random_orbit_elements_keep_f(arch, seed):
    rng = np.random.default_rng(seed)
    net = random_network(arch, rng)
    g = random_orbit_element(net, rng)
    # scales in [0.1, 10]: relative rounding of a few ulps per layer; 1e-12 is 4 orders above it
    assert _max_rel(net, g.net, Box.cube(arch[0], 3.0), 2000, seed) <= 1e-12


def test_permutation_is_exact_and_rescaling_validates():
    net = random_network((2, 3, 3, 1), np.random.default_rng(0))
    p = permute_hidden(net, 2, [2, 0, 1])
    X = np.random.default_rng(1).normal(size=(50, 2))
    assert np.array_equal(net(X), p(X)) or np.max(np.abs(net(X) - p(X))) < 1e-15
    with pytest.raises(ValueError, match="not a permutation"):
        permute_hidden(net, 1, [0, 0, 1])
    with pytest.raises(ValueError, match="finite positive"):
        rescale_hidden(net, 1, [1.0, -1.0, 2.0])
    with pytest.raises(ValueError, match="hidden layers are 1 and 2"):
        rescale_hidden(net, 3, [1.0])


def test_dead_unit_moves_keep_f_and_live_units_refuse():
    box = Box.cube(2, 1.0)
    net = random_network((2, 3, 3, 1), np.random.default_rng(0))
    b1 = net.b1.copy()
    b1[1] = -10.0  # dead on the box
    net = net.replace(b1=b1)
    assert unit_status(net, box).layer1[1] == "dead"
    moved = move_dead_unit(net, 1, 1, box, np.random.default_rng(1))
    assert not np.array_equal(moved.W2[:, 1], net.W2[:, 1])
    assert _max_rel(net, moved, box) == 0.0
    live = [i for i, s in enumerate(unit_status(net, box).layer1) if s != "dead"][0]
    with pytest.raises(ValueError, match="only provably dead units"):
        move_dead_unit(net, 1, live, box, np.random.default_rng(1))


@settings(max_examples=20, deadline=None)
@given(st.floats(-0.99, 3.0))
def test_hidden_hyperplane_move_keeps_f(delta):
    con = case_a(False)
    assert first_layer_slope_at_zero(con.net)[0] == 0.0
    moved = move_hidden_hyperplane(con.net, delta)
    assert _max_rel(con.net, moved, con.box, 5000) <= 1e-13  # an exact identity; rounding only


def test_hidden_hyperplane_move_refused_when_visible():
    con = case_a(True)
    assert first_layer_slope_at_zero(con.net)[0] != 0.0
    with pytest.raises(ValueError, match="on at s = 0"):
        move_hidden_hyperplane(con.net, 0.1)
    with pytest.raises(ValueError, match="switch it on"):
        move_hidden_hyperplane(case_a(False).net, -1.5)  # beyond the first breakpoint t = 1


def test_flip_and_redistribution_keep_f():
    from neurips26.relu_symmetries.experiment import _flip_construction, _redistribute_construction

    box = Box.cube(3, 3.0)
    fl = _flip_construction()
    flipped = flip_unit(fl, 1, 2, box)
    assert flipped.W2[1, 0] > 0 > fl.W2[1, 0]
    assert _max_rel(fl, flipped, box) <= 1e-13
    rd = _redistribute_construction()
    assert _max_rel(rd, redistribute_affine(rd, 2, 1, 0.5, box), box) <= 1e-13
    with pytest.raises(ValueError, match="only units with v < 0 flip"):
        flip_unit(fl, 0, 2, box)
    with pytest.raises(ValueError, match="not active"):
        flip_unit(fl, 1, 0, box)


def test_deeper_inhibition_keeps_f_only_for_hidden_units():
    con = case_b(True)
    moved = deepen_hidden_inhibition(con.net, 2, 2.0, con.box, verify_with=activation_cells)
    assert _max_rel(con.net, moved, con.box) == 0.0
    # unit 1 is inhibitory but visible inside {g > 0}: the region check must refuse it
    with pytest.raises(ValueError, match="is on inside"):
        deepen_hidden_inhibition(con.net, 1, 2.0, con.box, verify_with=activation_cells)
    with pytest.raises(ValueError, match="without a region check"):
        deepen_hidden_inhibition(con.net, 2, 2.0, con.box)
