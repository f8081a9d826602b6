"""Parameter tuples, exact evaluation, boxes and the torch conversion (one [out, in] convention)."""

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.relu_symmetries import (
    Box,
    ReluNet3,
    exact_forward,
    exact_forward_fractions,
    from_sequential,
    random_network,
    to_sequential,
)


@settings(max_examples=25, deadline=None)
@given(st.tuples(*[st.integers(1, 5)] * 4), st.integers(0, 2**31 - 1))
def test_sequential_round_trip_and_outputs(arch, seed):
    rng = np.random.default_rng(seed)
    net = random_network(arch, rng)
    seq = to_sequential(net)
    back = from_sequential(seq)
    for a, b in zip(net.params(), back.params()):
        assert np.array_equal(a, b)  # float64 copies are exact
    X = rng.normal(size=(7, arch[0]))
    with torch.no_grad():
        ft = seq(torch.as_tensor(X)).numpy()
    assert np.max(np.abs(ft - net(X))) <= 1e-12 * (1 + np.abs(ft).max())  # same math, float64 rounding only


def test_weight_convention_is_out_in():
    seq = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2), torch.nn.ReLU(),
                              torch.nn.Linear(2, 1))
    assert from_sequential(seq).architecture == (3, 5, 2, 1)
    assert from_sequential(seq).W1.shape == (5, 3)


def test_flat_round_trip_and_counts():
    net = random_network((3, 4, 2, 2), np.random.default_rng(0))
    assert net.n_params == 4 * 4 + 2 * 5 + 2 * 3 == net.flat().size
    back = ReluNet3.from_flat(net.architecture, net.flat())
    assert np.array_equal(back.flat(), net.flat())


def test_exact_forward_matches_float_and_is_exact():
    net = ReluNet3([[0.5, -1.0]], [0.25], [[2.0]], [-0.5], [[3.0]], [0.125])
    # f(1, 0) = 3·σ(2·σ(0.75) − 0.5) + 0.125 = 3·1 + 0.125
    assert exact_forward(net, [1.0, 0.0]) == [Fraction(25, 8)]
    rng = np.random.default_rng(1)
    big = random_network((3, 6, 5, 2), rng)
    x = rng.normal(size=3)
    assert np.allclose([float(v) for v in exact_forward(big, x)], big(x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("make, match", [
    (lambda: ReluNet3(np.ones((2, 3)), np.ones(3), np.ones((1, 2)), [0.0], [[1.0]], [0.0]), r"b1 has shape \(3,\)"),
    (lambda: ReluNet3(np.ones((2, 3)), np.ones(2), np.ones((1, 3)), [0.0], [[1.0]], [0.0]), r"W2 has shape \(1, 3\)"),
    (lambda: ReluNet3([[np.nan, 1.0]], [0.0], [[1.0]], [0.0], [[1.0]], [0.0]), r"W1\(0, 0\) = nan"),
    (lambda: ReluNet3([[1.0]], [np.inf], [[1.0]], [0.0], [[1.0]], [0.0]), r"b1\(0,\) = inf"),
    (lambda: ReluNet3.from_flat((2, 3, 1), np.zeros(10)), "needs 4 widths"),
    (lambda: ReluNet3.from_flat((2, 3, 1, 1), np.zeros(10)), "needs 15"),
    (lambda: Box([0.0, 1.0], [1.0, 1.0]), r"low\[1\] = 1.0 >= high\[1\]"),
    (lambda: random_network((2, 0, 1, 1), np.random.default_rng(0)), "4 positive widths"),
])
def test_bad_parameters_are_clear_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_other_architectures_are_refused():
    from torch import nn

    two_layer = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    with pytest.raises(ValueError, match=r"exactly \['Linear', 'ReLU', 'Linear', 'ReLU', 'Linear'\]"):
        from_sequential(two_layer)
    leaky = nn.Sequential(nn.Linear(2, 3), nn.LeakyReLU(), nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    with pytest.raises(ValueError, match="LeakyReLU"):
        from_sequential(leaky)
    no_bias = nn.Sequential(nn.Linear(2, 3, bias=False), nn.ReLU(), nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    with pytest.raises(ValueError, match="no bias"):
        from_sequential(no_bias)


def test_inputs_are_validated():
    net = random_network((2, 3, 3, 1), np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"expected \[N, 2\]"):
        net(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="finite"):
        net(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="dimension 3"):
        Box.cube(3, 1.0).check(net)


@settings(max_examples=30, deadline=None)
@given(st.tuples(*[st.integers(1, 6)] * 4), st.integers(0, 2**31 - 1), st.sampled_from([1e-300, 1e-8, 1.0, 1e8]))
def test_dyadic_exact_forward_equals_fraction_reference(arch, seed, scale):
    rng = np.random.default_rng(seed)
    net = random_network(arch, rng)
    x = rng.normal(size=arch[0]) * scale  # tiny and huge inputs: long dyadic expansions
    assert exact_forward(net, x) == exact_forward_fractions(net, x)
