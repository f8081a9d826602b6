"""The Feature Learning Equation and the Gram / Virtual Covariance relation on recorded gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F

from neurips26.feature_learning import (
    FeatureRecorder,
    feature_learning_equation,
    feature_learning_residual,
    first_order_mismatch,
    gram_change,
    gram_vc_residual,
    mlp,
    second_order_gap,
    virtual_covariance,
)


def _recorded(net, x, y):
    rec = FeatureRecorder(net)
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    return rec


@settings(max_examples=15, deadline=None)
@given(width=st.integers(2, 24), depth=st.integers(0, 3), n=st.integers(1, 40), bias=st.booleans(),
       seed=st.integers(0, 10_000))
def test_fl_identity_and_vc_relation_hold_to_float64_precision(width, depth, n, bias, seed):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = mlp(5, width, depth, 3, bias=bias).double()
    x = torch.randn(n, 5, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (n,), generator=g)
    rec = _recorded(net, x, y)
    for k in rec.names:
        W, GW, H, GH = rec.W(k), rec.G_W(k), rec.H(k), rec.G_H(k)
        # exact identities: 1e-10 leaves 5 orders of magnitude over float64 rounding
        assert feature_learning_residual(W, GW, H, GH) < 1e-10
        assert gram_vc_residual(W, GW, H, GH, 0.3) < 1e-10
    rec.remove()


def test_first_order_agreement_is_linear_in_eta():
    torch.manual_seed(0)
    net = mlp(6, 16, 2, 4).double()
    x, y = torch.randn(30, 6, dtype=torch.float64), torch.randint(0, 4, (30,))
    rec = _recorded(net, x, y)
    for k in rec.names:
        args = rec.W(k), rec.G_W(k), rec.H(k), rec.G_H(k)
        ratio = first_order_mismatch(*args, 1e-2) / first_order_mismatch(*args, 1e-3)
        assert 8 < ratio < 12  # O(η) mismatch: 10× smaller η → 10× smaller, up to O(η²) corrections


def test_second_order_gap_closes_the_relation_explicitly():
    rng = np.random.default_rng(0)
    W, GW = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    H = rng.normal(size=(7, 3))
    GH = rng.normal(size=(7, 3))
    eta = 0.2
    # with arbitrary (non-matching) G_H only the η² terms' difference and the first-order parts differ
    d = gram_change(W, GW, eta) - virtual_covariance(H, GH, eta) - second_order_gap(GW, GH, eta)
    first = -eta * (W.T @ GW + GW.T @ W) + eta * (H.T @ GH + GH.T @ H)
    assert np.allclose(d.numpy(), first, atol=1e-12)


def test_conv_unfolded_gradients_fold_back_to_autograd():
    torch.manual_seed(1)
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1, stride=2, dilation=1), nn.Tanh(), nn.Flatten(),
                        nn.Linear(3 * 4 * 4, 2)).double()
    x = torch.randn(4, 2, 8, 8, dtype=torch.float64, requires_grad=True)
    with FeatureRecorder(net) as rec:
        net(x).pow(2).sum().backward()
        assert feature_learning_residual(rec.W("0"), rec.G_W("0"), rec.H("0"), rec.G_H("0")) < 1e-10
        GH = rec.G_H("0")
        folded = F.fold(GH.reshape(4, -1, GH.shape[1]).transpose(1, 2), (8, 8), 3, padding=1, stride=2)
        assert torch.allclose(folded, x.grad, atol=1e-12)


def test_recorder_does_not_change_the_model_and_records_input_gradient_of_its_own_layer():
    torch.manual_seed(2)
    net = mlp(4, 8, 2, 3)
    x = torch.randn(10, 4)
    ref = net(x)
    with FeatureRecorder(net) as rec:
        out = net(x)
        out.sum().backward()
        assert torch.equal(out, ref)
        # G_H of layer "2" is ∂L/∂h1 = G_Z(2) W(2)
        assert torch.allclose(rec.G_H("2"), rec.G_Z("2") @ rec.W("2"), atol=1e-6)
    assert not net[0]._forward_pre_hooks and not net[0]._forward_hooks


def test_bad_inputs_raise_precise_errors():
    with pytest.raises(TypeError, match="nn.Linear, nn.Conv2d"):
        FeatureRecorder(nn.Sequential(nn.Linear(2, 2), nn.LSTM(2, 2)), layers=["1"])
    with pytest.raises(ValueError, match="no supported layer"):
        FeatureRecorder(nn.Sequential(nn.ReLU()))
    with pytest.raises(TypeError, match="groups=2"):
        FeatureRecorder(nn.Conv2d(4, 4, 3, groups=2))
    with pytest.raises(KeyError, match="nope"):
        FeatureRecorder(mlp(2, 2, 1, 2), layers=["nope"])
    with pytest.raises(ValueError, match="same shape"):
        feature_learning_equation(np.ones((3, 2)), np.ones((3, 3)), np.ones((5, 2)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="eta"):
        virtual_covariance(np.ones((3, 2)), np.ones((3, 2)), -1.0)
    with pytest.raises(ValueError, match="non-finite"):
        virtual_covariance(np.full((3, 2), math.nan), np.ones((3, 2)), 0.1)


def test_nan_gradients_are_reported_not_returned():
    net = mlp(3, 4, 1, 2)
    x = torch.randn(5, 3)
    with FeatureRecorder(net) as rec:
        (net(x).sum() * float("nan")).backward()
        with pytest.raises(FloatingPointError, match="non-finite"):
            rec.G_H("0")
        with pytest.raises(FloatingPointError, match="G_W"):
            rec.G_W("0")
    with FeatureRecorder(net) as rec:
        with pytest.raises(RuntimeError, match="forward pass"):
            rec.H("0")
