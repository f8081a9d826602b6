"""Loss pieces of SA-AFL: gradient reversal, ramp, HSIC, orthogonality, balance, dominant mask."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.aigi_detection.losses import (
    contribution_balance,
    cue_removal_consistency,
    dann_ramp,
    dominant_mask,
    gaussian_kl,
    grad_reverse,
    orthogonality,
    pairwise_linear_hsic,
)


def test_grad_reverse_is_identity_forward_and_minus_lambda_backward():
    x = torch.randn(4, 3, requires_grad=True)
    y = grad_reverse(x, 0.3)
    assert torch.equal(y, x)
    (y * torch.arange(12.0).view(4, 3)).sum().backward()
    assert torch.allclose(x.grad, -0.3 * torch.arange(12.0).view(4, 3))
    with pytest.raises(ValueError, match="lam=-1"):
        grad_reverse(x, -1.0)


def test_dann_ramp_endpoints_and_monotone():
    assert dann_ramp(0.0) == 0.0
    assert dann_ramp(1.0) == pytest.approx(2 / (1 + math.exp(-10)) - 1)
    vals = [dann_ramp(p) for p in np.linspace(0, 1, 11)]
    assert all(b > a for a, b in zip(vals, vals[1:]))
    with pytest.raises(ValueError, match="progress=1.5"):
        dann_ramp(1.5)


def test_pairwise_hsic_matches_numpy_reference_and_guards():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 3, 2))
    zc = z - z.mean(0)
    ref = np.mean([np.sum((zc[:, i].T @ zc[:, j] / 49) ** 2) for i in range(3) for j in range(i + 1, 3)])
    assert float(pairwise_linear_hsic(torch.from_numpy(z))) == pytest.approx(ref, rel=1e-10)
    assert float(pairwise_linear_hsic(torch.ones(1, 3, 2))) == 0.0   # batch of 1
    assert float(pairwise_linear_hsic(torch.randn(8, 1, 2))) == 0.0  # one cue


def test_hsic_independent_cues_much_smaller_than_dependent():
    g = torch.Generator().manual_seed(0)
    ind = torch.randn(5000, 2, 3, generator=g)
    dep = torch.cat([ind[:, :1], ind[:, :1] + 0.1 * ind[:, 1:]], 1)
    # independent: each Cov entry ~ N(0, 1/5000), so ||Cov||_F^2 ~ 9/5000; dependent: ~3
    assert float(pairwise_linear_hsic(ind)) < 0.01 < 1.0 < float(pairwise_linear_hsic(dep))


def test_orthogonality_zero_for_uncorrelated_and_positive_for_copies():
    s = torch.tensor([[1.0], [-1.0], [1.0], [-1.0]])
    a = torch.tensor([[1.0], [1.0], [-1.0], [-1.0]])
    assert float(orthogonality(s, a)) == pytest.approx(0.0, abs=1e-10)
    assert float(orthogonality(s, s)) > 0.5


def test_contribution_balance_zero_when_equal_and_log_k_when_one_cue():
    assert float(contribution_balance(torch.ones(10, 4))) == pytest.approx(0.0, abs=1e-6)
    one = torch.zeros(10, 4)
    one[:, 2] = 1.0
    assert float(contribution_balance(one)) == pytest.approx(math.log(4), abs=1e-5)


def test_dominant_mask_picks_the_largest_mean_abs_contribution():
    c = torch.tensor([[0.1, -3.0, 0.5], [0.2, 2.0, -0.4]])
    assert dominant_mask(c, 1).tolist() == [False, True, False]
    assert dominant_mask(c, 2).tolist() == [False, True, True]
    with pytest.raises(ValueError, match="n_drop=3"):
        dominant_mask(c, 3)


def test_gaussian_kl_matches_torch_distributions():
    from torch.distributions import Normal, kl_divergence

    g = torch.Generator().manual_seed(0)
    mu, logvar = torch.randn(6, 4, generator=g), torch.randn(6, 4, generator=g)
    ref = kl_divergence(Normal(mu, (0.5 * logvar).exp()), Normal(0.0, 1.0)).sum(-1).mean()
    assert float(gaussian_kl(mu, logvar)) == pytest.approx(float(ref), rel=1e-5)
    assert float(gaussian_kl(torch.zeros(3, 2), torch.zeros(3, 2))) == 0.0


def test_cue_removal_consistency_zero_without_contributions_and_positive_with():
    logit = torch.tensor([2.0, -1.0])
    assert float(cue_removal_consistency(logit, torch.zeros(2, 3))) == pytest.approx(0.0, abs=1e-6)
    c = torch.tensor([[2.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])  # all evidence in cue 0: removing it gives p = 1/2
    p = torch.sigmoid(logit)
    kl = p * torch.log(2 * p) + (1 - p) * torch.log(2 * (1 - p))  # KL(Bernoulli(p) || Bernoulli(1/2))
    assert float(cue_removal_consistency(logit, c)) == pytest.approx(float(kl.sum() / 6), rel=1e-5)
