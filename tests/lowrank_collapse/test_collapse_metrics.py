"""Mode coverage and memorisation metrics on constructed samples."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.lowrank_collapse import eight_gaussians, memorisation_fraction, memorisation_report, mode_coverage


def test_coverage_counts_only_components_with_enough_mass():
    target = eight_gaussians()
    g = torch.Generator().manual_seed(0)
    x, k = target.sample_labeled(4000, g)
    assert mode_coverage(x, target.means, target.std).n_covered == 8
    keep = x[(k == 0) | (k == 3)]
    cov = mode_coverage(keep, target.means, target.std)
    assert cov.n_covered == 2 and cov.covered[[0, 3]].all()
    # 3σ holds 1 − e^{−9/2} = 98.9% of a 2-D Gaussian; ~1000 points: s.e. 0.0033, tolerance ≈ 4 s.e.
    assert cov.weights.sum() == pytest.approx(1 - np.exp(-4.5), abs=0.015)
    far = torch.full((100, 2), 10.0)
    assert mode_coverage(far, target.means, target.std).outside == 1.0


def test_coverage_requires_component_locations():
    with pytest.raises(ValueError, match="component locations and std are required"):
        mode_coverage(np.zeros((3, 2)), None, 0.1)
    with pytest.raises(ValueError, match="samples have d=3, means d=2"):
        mode_coverage(np.zeros((3, 3)), np.zeros((2, 2)), 0.1)
    with pytest.raises(ValueError, match="contain NaN or inf"):
        mode_coverage(np.array([[np.nan, 0.0]]), np.zeros((2, 2)), 0.1)


def test_memorisation_of_copies_and_of_fresh_draws():
    rng = np.random.default_rng(0)
    train = rng.normal(size=(50, 2))
    copies = train[rng.integers(50, size=500)] + 1e-4 * rng.normal(size=(500, 2))
    assert memorisation_fraction(copies, train) == 1.0
    fresh = rng.normal(size=(500, 2))
    assert memorisation_fraction(fresh, train) < 0.3      # chance rate of the 1/3 rule on 50 points
    held = rng.normal(size=(50, 2))
    rep = memorisation_report(copies, train, held)
    assert rep.train == 1.0 and rep.heldout < 0.3 and rep.nn_distance_ratio < 0.01
    with pytest.raises(ValueError, match="equal sizes"):
        memorisation_report(copies, train, held[:10])
    with pytest.raises(ValueError, match="need >= 2 reference points"):
        memorisation_fraction(copies, train[:1])
