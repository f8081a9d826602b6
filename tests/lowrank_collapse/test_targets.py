"""Targets: mixture log-density normalisation, subspace data, shipped scikit-learn data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.lowrank_collapse import GaussianMixture, digits, eight_gaussians, moons, subspace_mixture


def test_mixture_density_integrates_to_one():
    target = eight_gaussians()
    g = torch.linspace(-3, 3, 601, dtype=torch.float64)
    X, Y = torch.meshgrid(g, g, indexing="ij")
    p = target.log_prob(torch.stack([X.reshape(-1), Y.reshape(-1)], 1)).exp()
    assert float(p.sum() * (g[1] - g[0]) ** 2) == pytest.approx(1.0, abs=1e-3)   # grid error ≪ 1e-3


def test_subspace_data_lies_in_its_subspace():
    data = subspace_mixture(500, 20, 3, rng=np.random.default_rng(0))
    x = data.x.double().numpy()
    resid = x - x @ data.basis @ data.basis.T
    assert np.sqrt((resid ** 2).sum(1)).max() < 1e-2            # only the 1e-3 isotropic noise
    assert np.allclose(data.basis.T @ data.basis, np.eye(3))
    with pytest.raises(ValueError, match="subspace_dim=20; allowed: 1..19"):
        subspace_mixture(10, 20, 20)


def test_shipped_datasets_and_validation():
    assert moons(100).shape == (100, 2)
    x = digits()
    assert x.shape == (1797, 64) and float(x.pow(2).mean()) == pytest.approx(1.0, rel=1e-5)
    with pytest.raises(ValueError, match="std=0"):
        GaussianMixture([[0.0, 0.0]], 0)
    with pytest.raises(ValueError, match="summing to 1"):
        GaussianMixture([[0.0], [1.0]], 1.0, [0.5, 0.6])
