"""Update-geometry measures on matrices with known answers."""

import math

import pytest
import torch

from neurips26.bit_mask_tuning import (
    effective_rank,
    geometry,
    principal_weight_overlap,
    principal_weights,
    spectrum_drift,
)


def test_effective_rank_of_equal_singular_values_is_the_rank():
    g = torch.Generator().manual_seed(0)
    for r in (1, 3, 7):
        u, _ = torch.linalg.qr(torch.randn(20, r, generator=g, dtype=torch.float64))
        v, _ = torch.linalg.qr(torch.randn(12, r, generator=g, dtype=torch.float64))
        m = 2.5 * u @ v.T
        assert effective_rank(m) == pytest.approx(r, abs=1e-6)
    assert effective_rank(torch.zeros(4, 5)) == 0.0


def test_spectrum_drift_zero_and_scaling():
    w = torch.randn(16, 8, generator=torch.Generator().manual_seed(1))
    assert spectrum_drift(w, torch.zeros_like(w)) == 0.0
    assert spectrum_drift(w, 0.1 * w) == pytest.approx(0.1, rel=1e-6)   # σ(1.1 W) = 1.1 σ(W)
    with pytest.raises(ValueError, match="shapes differ"):
        spectrum_drift(w, torch.zeros(8, 16))
    with pytest.raises(ValueError, match="2-D"):
        effective_rank(torch.zeros(3))


def test_random_support_overlaps_principal_weights_at_rate_alpha():
    g = torch.Generator().manual_seed(2)
    w = torch.randn(200, 100, generator=g)
    alpha = 0.05
    fracs = []
    for _ in range(20):
        delta = torch.zeros_like(w).flatten()
        delta[torch.randperm(w.numel(), generator=g)[:1000]] = 1.0
        fracs.append(principal_weight_overlap(w, delta.view_as(w), q=8, alpha=alpha))
    mean = sum(fracs) / len(fracs)
    sd = math.sqrt(alpha * (1 - alpha) / (1000 * len(fracs)))           # binomial over 20 × 1000 draws
    assert abs(mean - alpha) <= 3 * sd
    p = principal_weights(w, 8, alpha)
    assert int(p.sum()) == math.ceil(alpha * w.numel())
    assert principal_weight_overlap(w, p.double() * 1.0, q=8, alpha=alpha) == 1.0  # updating exactly P
    assert set(geometry(w, 0.01 * w)) == {"effective_rank", "spectrum_drift", "principal_overlap"}
