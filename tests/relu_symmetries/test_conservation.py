"""Conservation laws under gradient descent: conserved to O(lr) where the symmetry holds."""

import numpy as np
import pytest

from neurips26.relu_symmetries import (
    ReluNet3,
    bias_trade_generator,
    generator_curl,
    local_gl_invariant,
    mse_gradient,
    per_neuron_invariants,
    scaling_generator,
    train_gd,
)
from neurips26.relu_symmetries.constructions import case_b
from neurips26.relu_symmetries.experiment import conservation_setup


def test_gradient_matches_jacobian_gradient():
    net, X, y = conservation_setup(64, np.random.default_rng(0))
    _, g = mse_gradient(net, X, y)
    tr = train_gd(net, X, y, 1e-3, 1, record_every=1)
    step = (net.flat() - tr.final.flat()) / 1e-3
    assert np.allclose(step, g, rtol=1e-10, atol=1e-12)


def test_laws_conserved_to_order_lr_and_switching_quantity_drifts():
    net, X, y = conservation_setup(128, np.random.default_rng(1))
    a = train_gd(net, X, y, 2e-3, 2000, block=[0, 1, 2], record_every=50)
    b = train_gd(net, X, y, 8e-3, 500, block=[0, 1, 2], record_every=50)
    assert a.always_on[:2] == [True, True] and a.always_on[2] is False
    da, db = a.drift(), b.drift()
    assert da["per_neuron"] < 1e-3 and da["gl"][0][1] < 1e-3
    # explicit Euler on a fixed horizon: drift ∝ lr (4× lr → 2–8×, allowing higher-order terms)
    assert 2 <= db["per_neuron"] / da["per_neuron"] <= 8
    assert da["gl"][0][2] > 10 * da["gl"][0][1]
    assert a.frozen_max_change == 0.0  # unit 3 is dead on the data


def test_invariants_and_generators():
    net = case_b(True).net
    q = per_neuron_invariants(net)
    assert q.shape == (4,)
    assert np.isclose(q[0], 1.0 + 0.0 - 1.0)  # ‖(1, 0)‖² + 0² − 1²
    Q = local_gl_invariant(net, [0, 1])
    assert np.allclose(np.diag(Q), q[:2])
    assert generator_curl(lambda n: scaling_generator(n, 2, 0), net) < 1e-8
    assert generator_curl(lambda n: bias_trade_generator(n, 1), net) > 0.1
    with pytest.raises(ValueError, match="first-layer indices"):
        local_gl_invariant(net, [5])
    with pytest.raises(ValueError, match="v = 0"):
        bias_trade_generator(net.replace(W2=np.array([[0.0, 1.0, 1.0]])), 0)


def test_bad_training_input():
    net, X, y = conservation_setup(16, np.random.default_rng(0))
    with pytest.raises(ValueError, match="lr=0"):
        train_gd(net, X, y, 0.0, 10)
    with pytest.raises(ValueError, match="targets"):
        train_gd(net, X, y[:3], 1e-3, 10)
    with pytest.raises(FloatingPointError, match="too large"):
        train_gd(ReluNet3(net.W1 * 50, net.b1 * 50, net.W2 * 50, net.b2, net.W3 * 50, net.b3), X, y * 1e3, 10.0, 200)
