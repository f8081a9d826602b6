"""Head-direction and place-cell codes and their decoders."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.path_integration import Arena, HeadDirectionCells, PlaceCells


def test_hd_targets_normalised_and_decodable():
    hd = HeadDirectionCells(64)
    theta = torch.linspace(-3.1, 3.1, 101)
    y = hd.targets(theta)
    assert torch.allclose(y.sum(-1), torch.ones(101), atol=1e-5)
    err = torch.remainder(hd.decode(y) - theta + math.pi, 2 * math.pi) - math.pi
    assert err.abs().max() < 2 * math.pi / 64          # top-3 decoding: within one cell spacing
    err_pv = torch.remainder(hd.population_vector(torch.log(y)) - theta + math.pi, 2 * math.pi) - math.pi
    assert err_pv.abs().max() < 1e-3                   # population vector of the exact code is unbiased


def test_hd_narrow_tuning_does_not_overflow():
    y = HeadDirectionCells(32, sigma=1e-3).targets(torch.tensor([0.3]))  # κ = 10^6: log-space softmax
    assert torch.isfinite(y).all() and abs(float(y.sum()) - 1) < 1e-5


@pytest.mark.parametrize("surround", [2.0, None])
def test_place_targets_and_decoding(surround):
    pc = PlaceCells(512, Arena(2.2), surround_scale=surround, seed=0)
    x = torch.rand(500, 2, generator=torch.Generator().manual_seed(0)) * 2.0 - 1.0
    y = pc.targets(x)
    assert (y >= 0).all() and torch.allclose(y.sum(-1), torch.ones(500), atol=1e-5)
    # 512 random centres in a 2.2 m box: mean nearest-3 error ≈ 5 cm; 8 cm allows for sparse regions
    assert float((pc.decode(y) - x).norm(dim=-1).mean()) < 0.08


def test_cell_validation():
    with pytest.raises(ValueError, match="n=2"):
        HeadDirectionCells(2)
    with pytest.raises(ValueError, match="surround_scale"):
        PlaceCells(10, surround_scale=0.5)
    with pytest.raises(ValueError, match="sigma"):
        PlaceCells(10, sigma=0.0)


@pytest.mark.parametrize("surround", [None, 2.0])
def test_in_place_place_targets_equal_out_of_place_formula(surround):
    """Catches a change of arithmetic in the in-place fast path of ``PlaceCells.targets`` (d² and −d²/2σ²
    computed in the buffers of dx, dy): it must equal the out-of-place formula bit for bit, and the
    autograd path (positions that require grad) must still work."""
    pc = PlaceCells(64, Arena(2.2), surround_scale=surround, seed=1)
    pos = torch.rand(8, 5, 2) * 2.0 - 1.0
    c = pc.centres
    dx, dy = pos[..., None, 0] - c[:, 0], pos[..., None, 1] - c[:, 1]
    d2 = dx * dx + dy * dy
    ref = torch.softmax(-d2 / (2 * pc.sigma ** 2), -1)
    if surround is not None:
        ref = ref - torch.softmax(-d2 / (2 * surround * pc.sigma ** 2), -1)
        ref = ref - ref.min(-1, keepdim=True).values
        ref = ref / ref.sum(-1, keepdim=True)
    assert torch.equal(pc.targets(pos), ref)
    p = pos.clone().requires_grad_(True)
    out = pc.targets(p)
    assert torch.equal(out.detach(), ref)
    out[..., 0].sum().backward()
    assert p.grad is not None and torch.isfinite(p.grad).all()
