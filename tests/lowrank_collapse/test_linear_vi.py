"""The solvable linear-field VI case: gradient at zero, exact rank-k invariance, KL closed form."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.distributions import MultivariateNormal, kl_divergence

from neurips26.lowrank_collapse import (
    LinearVectorField,
    linear_field_kl,
    lowrank_precision_target,
    sample_flow,
    train_linear_vi,
)


def test_kl_closed_form_matches_torch_distributions_on_the_flow_maps_covariance():
    # q = law of x(1) = e^A z: its covariance from the integrated flow (dopri5), then torch's Gaussian KL
    rng = np.random.default_rng(0)
    Sigma, _ = lowrank_precision_target(4, 2, rng)
    A = torch.as_tensor(0.3 * rng.normal(size=(4, 4)))
    with torch.no_grad():
        M = sample_flow(LinearVectorField(4, A), torch.eye(4, dtype=torch.float64), method="dopri5",
                        rtol=1e-10, atol=1e-10).T                       # columns: images of e_i → e^A
    q = MultivariateNormal(torch.zeros(4, dtype=torch.float64), covariance_matrix=M @ M.T)
    p = MultivariateNormal(torch.zeros(4, dtype=torch.float64), covariance_matrix=torch.as_tensor(Sigma))
    assert float(linear_field_kl(A, torch.as_tensor(Sigma))) == pytest.approx(float(kl_divergence(q, p)), abs=1e-7)


def test_gradient_at_zero_is_precision_minus_identity():
    rng = np.random.default_rng(1)
    Sigma, U = lowrank_precision_target(6, 2, rng)
    A = torch.zeros(6, 6, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(linear_field_kl(A, torch.as_tensor(Sigma)), A)
    assert torch.allclose(g, torch.linalg.inv(torch.as_tensor(Sigma)) - torch.eye(6, dtype=torch.float64), atol=1e-12)
    assert np.linalg.matrix_rank(g.numpy(), tol=1e-10) == 2


@pytest.mark.parametrize("d,k", [(8, 1), (12, 3), (16, 5)])
def test_rank_stays_at_most_k_from_zero_init(d, k):
    Sigma, U = lowrank_precision_target(d, k, np.random.default_rng(d))
    run = train_linear_vi(Sigma, n_steps=150, lr=0.1, record_every=10)
    for A in run.A:
        s = np.linalg.svd(A, compute_uv=False)
        assert s[k] <= 1e-10 * max(s[0], 1e-300)          # float64 round-off only
        assert np.linalg.norm(A - U @ U.T @ A @ U @ U.T) < 1e-10
    assert np.all(np.diff(run.kl) <= 1e-12) and run.kl[-1] < run.kl[0]


def test_optimum_is_half_log_covariance():
    Sigma, _ = lowrank_precision_target(5, 2, np.random.default_rng(3))
    run = train_linear_vi(Sigma, n_steps=600, lr=0.2, record_every=600)
    w, V = np.linalg.eigh(Sigma)
    A_star = (V * (0.5 * np.log(w))) @ V.T        # e^{2A*} = Σ
    assert np.allclose(run.A[-1], A_star, atol=1e-5)
    assert run.kl[-1] < 1e-9


def test_bad_inputs():
    with pytest.raises(ValueError, match="rank=4; allowed: 1..3"):
        lowrank_precision_target(4, 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="symmetric positive-definite"):
        train_linear_vi(-np.eye(3))
