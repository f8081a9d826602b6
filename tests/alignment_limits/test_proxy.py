"""Proxy gap and ensembles: invariances, the effective ensemble size, the two monotone trends."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.alignment_limits import effective_ensemble_size, ensemble_reward, proxy_gap, tilted_frontier


def _policy(k=500, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.0, k)
    p = np.exp(logits - logits.max())
    return p / p.sum(), rng.normal(size=k)


def test_exact_or_shifted_proxy_has_no_gap():
    pi0, r = _policy()
    betas = [0.1, 1.0]
    for proxy in (r, r + 5.0):                          # a constant shift does not change pi_beta
        g = proxy_gap(pi0, r, proxy, betas)
        np.testing.assert_allclose(g.gap, 0.0, atol=1e-12)
    np.testing.assert_allclose(g.ideal_gain, tilted_frontier(pi0, r, betas).gain, rtol=1e-12)


def test_gap_grows_as_beta_falls_and_shrinks_with_ensembles():
    pi0, r = _policy(1000, 1)
    betas = np.array([0.5, 0.25, 0.1])
    rng = np.random.default_rng(2)
    gaps = np.zeros((3, 3))
    for _ in range(60):
        errs = rng.normal(size=(16, r.size))
        for i, m in enumerate((1, 4, 16)):
            gaps[i] += proxy_gap(pi0, r, r + errs[:m].mean(0), betas).gap / 60
    # 60 draws: the differences tested are > 10x their Monte Carlo sd (checked when written)
    assert np.all(np.diff(gaps, axis=1) > 0)            # grows as beta falls
    assert np.all(np.diff(gaps, axis=0) < 0)            # shrinks with M


def test_effective_ensemble_size():
    rng = np.random.default_rng(3)
    k = 20_000
    indep = rng.normal(size=(8, k))
    # independent: M_eff = 8 up to O(sqrt(M^2 / K)) sampling error in the covariances
    assert effective_ensemble_size(indep) == pytest.approx(8, rel=0.05)
    same = np.tile(rng.normal(size=k), (8, 1))
    assert effective_ensemble_size(same) == pytest.approx(1.0, rel=1e-12)
    # equicorrelated rho = 0.5: M / (1 + (M - 1) rho) = 8 / 4.5
    shared = rng.normal(size=k)
    corr = np.sqrt(0.5) * shared + np.sqrt(0.5) * rng.normal(size=(8, k))
    assert effective_ensemble_size(corr) == pytest.approx(8 / 4.5, rel=0.05)
    assert effective_ensemble_size(np.zeros((3, 10))) == 3.0


def test_ensemble_reward_and_bad_inputs():
    np.testing.assert_allclose(ensemble_reward([[1.0, 2.0], [3.0, 4.0]]), [2.0, 3.0])
    with pytest.raises(ValueError, match=r"\(M, K\)"):
        ensemble_reward(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="finite"):
        ensemble_reward([[1.0, np.inf]])
    with pytest.raises(ValueError, match="same length"):
        proxy_gap([0.5, 0.5], [0.0, 1.0], [0.0, 1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="pi0 must have one entry per outcome"):
        effective_ensemble_size(np.zeros((2, 3)), pi0=[0.5, 0.5])


def test_cancelling_errors_give_infinite_effective_size():
    # perfectly anti-correlated errors cancel in the mean: no error left (was reported as M = 2)
    e = np.array([[1.0, -1.0, 1.0, -1.0], [-1.0, 1.0, -1.0, 1.0]])
    assert effective_ensemble_size(e) == np.inf
    assert np.allclose(ensemble_reward(np.arange(4.0) + e), np.arange(4.0))
    # negatively correlated but not cancelling: finite and above M
    e2 = np.array([[1.0, -1.0, 1.0, -1.0], [-0.5, 0.5, -0.5, 0.5]])
    assert 2.0 < effective_ensemble_size(e2) < np.inf
