"""Shared fixtures: the authors' Gaussian example at small size."""

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import GaussianFit, VPSchedule


def make_fit(d: int, n: int, seed: int, prior_scale: float = 1.0) -> GaussianFit:
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    s0 = prior_scale * q @ np.diag(np.exp(rng.standard_normal(d) + 1)) @ q.T
    mu0 = np.ones(d)
    theta = rng.multivariate_normal(mu0, s0)
    x = rng.multivariate_normal(theta, 2 * np.eye(d), size=n)
    return GaussianFit.linear_gaussian(mu0, s0, 2 * np.eye(d), x)


def analytic_single_scores(fit: GaussianFit, schedule: VPSchedule):
    """Exact diffused single-posterior scores: θ (b, d) -> (b, n, d), or paired (b, n, d)."""
    ms = torch.tensor(fit.post_means)
    covs = torch.tensor(fit.post_covs)
    d = fit.d

    def f(theta, t):
        a = schedule.alpha(t)
        prec = torch.linalg.inv(a * covs + (1 - a) * torch.eye(d, dtype=torch.float64))   # (n, d, d)
        th = theta[:, None, :] if theta.ndim == 2 else theta
        diff = th - np.sqrt(a) * ms
        return -torch.einsum("nij,bnj->bni", prec, diff)

    return f


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
