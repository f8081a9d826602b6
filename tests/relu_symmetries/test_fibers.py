"""Jacobian, ranks and fiber dimensions at constructed parameters (our derivation's counts)."""

import numpy as np
import pytest

from neurips26.relu_symmetries import (
    Box,
    ReluNet3,
    exact_jacobian,
    exact_rank,
    fiber_dimension,
    jacobian,
    kink_margin,
    numerical_rank,
    random_network,
    sample_away_from_kinks,
)
from neurips26.relu_symmetries.constructions import constructions, generic_switching_network


def test_jacobian_matches_central_differences_away_from_kinks():
    rng = np.random.default_rng(0)
    net = random_network((3, 5, 4, 2), rng)
    box = Box.cube(3, 2.0)
    X = sample_away_from_kinks(net, box, 20, rng, margin=1e-3)
    J = jacobian(net, X)
    th, h = net.flat(), 1e-6
    for k in range(th.size):
        e = np.zeros_like(th)
        e[k] = h
        fd = (ReluNet3.from_flat(net.architecture, th + e)(X) - ReluNet3.from_flat(net.architecture, th - e)(X)) / (2 * h)
        # central differences: O(h²) truncation, O(1e-16/h) rounding; margins 1e-3 ≫ h keep patterns fixed
        assert np.allclose(J[:, k], fd.ravel(), atol=1e-7), k


def test_exact_jacobian_equals_float_on_dyadic_parameters():
    con = constructions()[0]
    X = sample_away_from_kinks(con.net, con.box, 30, np.random.default_rng(1))
    E = np.array([[float(v) for v in row] for row in exact_jacobian(con.net, X)])
    assert np.allclose(E, jacobian(con.net, X), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("k", range(4))
def test_fiber_dimension_at_constructions(k):
    con = constructions()[k]
    rng = np.random.default_rng(k)
    fl = fiber_dimension(con.net, con.box, rng, 400)
    ex = fiber_dimension(con.net, con.box, rng, 120, exact=True)
    assert fl.fiber == ex.fiber == con.predicted_fiber, con.name
    assert fl.gap > 1e6  # a clear singular-value gap: the numerical rank is trustworthy


def test_generic_fiber_is_number_of_hidden_units():
    box = Box.cube(3, 3.0)
    rng = np.random.default_rng(5)
    net = generic_switching_network((3, 4, 3, 1), box, rng)
    assert fiber_dimension(net, box, rng, 2000).fiber == net.n_hidden


def test_kink_free_sampling_covers_flat_regions():
    """Regression: units with zero x-gradient (a width-1 layer switched off) have no kink there;
    a margin of 0 used to reject all of {t < 0} and give fiber 5 instead of 4 for case A."""
    con = constructions()[0]
    X = sample_away_from_kinks(con.net, con.box, 400, np.random.default_rng(0))
    t = X @ con.net.W1[0] + con.net.b1[0]
    assert (t < 0).mean() > 0.2
    assert np.all(kink_margin(con.net, X) >= 1e-6)


def test_exact_rank_backends_and_errors():
    M = [[1, 2, 3], [2, 4, 6], [0, 1, 1]]
    assert exact_rank(M, backend="sympy") == 2
    assert exact_rank(np.array([[0.1, 0.2], [0.2, 0.4000000000000001]])) == 2  # exact: not rank 1
    assert numerical_rank(np.array([[0.1, 0.2], [0.2, 0.4000000000000001]]))[0] == 1
    with pytest.raises(ValueError, match="backend='gpu'"):
        exact_rank(M, backend="gpu")
    with pytest.raises(ValueError, match="different lengths"):
        exact_rank([[1, 2], [1]])


def test_flint_backend_agrees_when_installed():
    pytest.importorskip("flint")
    M = [[1, 2, 3], [2, 4, 6], [0, 1, 1]]
    assert exact_rank(M, backend="flint") == exact_rank(M, backend="sympy") == 2


def test_fiber_dimension_carries_the_stratum_of_its_samples():
    """Issue 33 item 11: a fiber dimension is only meaningful with its stratum (a dead unit adds to the
    fiber). Catches a FiberDimension without a stratum, or one computed on other points than the rank."""
    rng = np.random.default_rng(3)
    net = random_network((2, 4, 3, 1), rng)
    b1 = net.b1.copy()
    b1[0] = -50.0                       # unit 0 of layer 1 is dead on the box
    net = net.replace(b1=b1)
    box = Box.cube(2, 1.0)
    fd = fiber_dimension(net, box, np.random.default_rng(4), 200)
    assert fd.stratum["layer1"]["dead"] >= 1
    # the same samples as the rank: recomputing from the same rng stream gives the same stratum
    X = sample_away_from_kinks(net, box, 200, np.random.default_rng(4), 1e-6)
    from neurips26.relu_symmetries import stratum
    assert fd.stratum == stratum(net, X)
    assert sum(fd.stratum["layer1"].values()) == 4 and sum(fd.stratum["layer2"].values()) == 3
