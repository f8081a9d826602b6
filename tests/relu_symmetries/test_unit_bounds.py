"""Soundness of the interval bounds that decide which units are dead or always active on a box.

Bugs caught (issue 34, item 8): a second-layer lower bound that is not sound (e.g. built from the
upper ends of the first-layer activations for positive weights, or with the signs of W2 swapped)
labels units "active" that go negative inside the box; then ``redistribute_affine`` and the dead-
unit moves change the function while claiming they keep it. Checked: with lo2 built from the upper
ends (Wp @ hh + Wn @ hl) both tests below fail, while the older symmetry tests all pass.
"""

import itertools

import numpy as np

from neurips26.relu_symmetries import Box, random_network, unit_bounds, unit_status

# float64 round-off in two affine layers of width <= 8 with O(1) weights: a few ulps of values of
# size <= ~20; 1e-9 is ~6 orders above that and far below the gaps a wrong bound leaves (O(0.1..1)).
_TOL = 1e-9


def _points(box: Box, rng, n: int = 4000) -> np.ndarray:
    """Uniform samples plus every vertex of the box (where the first-layer bounds are attained)."""
    corners = np.array(list(itertools.product(*zip(box.low, box.high))))
    return np.vstack([box.sample(n, rng), corners])


def _networks(count: int = 50):
    for k in range(count):
        rng = np.random.default_rng([34, 8, k])
        arch = (int(rng.integers(1, 4)), int(rng.integers(2, 8)), int(rng.integers(2, 8)), 1)
        # biases shifted up so that many units are active on the box (the case the bug mislabels)
        net = random_network(arch, rng)
        net = net.replace(b1=net.b1 + 1.0, b2=net.b2 + 1.0)
        yield net, Box.cube(arch[0], float(rng.uniform(0.5, 3.0))), rng


def test_sampled_pre_activations_lie_inside_the_bounds_of_every_layer():
    """Every sampled pre-activation of layers 1 and 2 lies in [lo, hi]; layer 1 is attained at a vertex."""
    for net, box, rng in _networks():
        lo1, hi1, lo2, hi2 = unit_bounds(net, box)
        z1, z2 = net.pre_activations(_points(box, rng))
        assert np.all(z1 >= lo1 - _TOL) and np.all(z1 <= hi1 + _TOL)
        assert np.all(z2 >= lo2 - _TOL) and np.all(z2 <= hi2 + _TOL)
        # layer 1 is documented as exact: the extremes are reached at box vertices
        np.testing.assert_allclose(z1.min(0), lo1, atol=_TOL)
        np.testing.assert_allclose(z1.max(0), hi1, atol=_TOL)
        assert np.all(lo1 <= hi1) and np.all(lo2 <= hi2)


def test_no_unit_labelled_active_goes_negative_and_no_dead_unit_positive():
    """Labels are proofs: "active" never negative, "dead" never positive on samples of the box."""
    n_active = 0
    for net, box, rng in _networks():
        st = unit_status(net, box)
        z1, z2 = net.pre_activations(_points(box, rng))
        for labels, z in ((st.layer1, z1), (st.layer2, z2)):
            lab = np.array(labels)
            assert np.all(z[:, lab == "active"] >= -_TOL)
            assert np.all(z[:, lab == "dead"] <= _TOL)
            n_active += int(np.sum(lab == "active"))
    # the test must exercise the labels it protects (counted on the seeds above: well over 100)
    assert n_active >= 50
