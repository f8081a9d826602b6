"""AFDONet reference and AFD modes: shapes, constraints, quirks, discretisation (in)variance, errors."""

import math

import pytest
import torch

from neurips26.afdonet import (
    AFDONet,
    AFDOperator,
    FNOBaseline,
    ReferenceAFDONet,
    TMDecoder,
    count_parameters,
    fit,
    matched_fno,
)


def test_reference_shapes_parameter_count_and_fixed_grid():
    m = ReferenceAFDONet()
    # released sizes: encoder 8192→256→20, lift 10→32·64·64, two blocks of (complex 32×32×12×12
    # half-spectrum weights, 1×1 conv, BatchNorm), 1×1 projection 32→2
    dense = 8192 * 256 + 256 + 256 * 20 + 20 + 10 * 131072 + 131072
    blocks = 2 * (32 * 32 * 144 * 2 + 32 * 32 + 32 + 2 * 32)
    assert count_parameters(m) == dense + blocks + 32 * 2 + 2
    pred, mu, lv = m(torch.randn(3, 2, 64, 64))
    assert pred.shape == (3, 2, 64, 64) and mu.shape == (3, 10)
    with pytest.raises(ValueError, match="not discretisation-invariant"):
        m(torch.randn(1, 2, 128, 128))
    x = torch.randn(1, 2, 64, 64)
    x[0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        m(x)


def test_released_holomorphic_term_is_gradient_free_but_cauchy_riemann_is_not():
    torch.manual_seed(0)
    x = torch.randn(2, 2, 64, 64)
    grads = {}
    for name, kw in (("off", dict(holomorphic_weight=0.0)), ("released", dict(holomorphic_weight=1.0)),
                     ("cr", dict(holomorphic="cauchy_riemann", holomorphic_weight=1.0))):
        torch.manual_seed(1)
        m = ReferenceAFDONet(**kw).eval()
        pred, mu, lv = m(x)
        m.loss(pred, x, mu, lv).backward()
        grads[name] = m.project.weight.grad.clone()
    assert torch.equal(grads["off"], grads["released"])
    assert not torch.allclose(grads["off"], grads["cr"])


def test_half_spectrum_option_changes_parameter_count():
    full = ReferenceAFDONet(half_spectrum=False)
    assert count_parameters(full) - count_parameters(ReferenceAFDONet()) == 2 * 2 * 32 * 32 * 12 * 12


def test_tm_decoder_poles_stay_inside_disc():
    dec = TMDecoder(6, margin=0.05, n_origin=4)
    z = 100 * torch.randn(5, dec.latent_size)
    _, a, _ = dec.split(z)
    assert a.abs().max() < 0.95 + 1e-6 and torch.all(a[:, :4] == 0)
    assert dec(z, 64).shape == (5, 1, 64)


def test_afd_mode_is_discretisation_invariant_and_explains():
    torch.manual_seed(0)
    m = AFDONet("afd", domain="circle", n_poles=4, n_origin=2, width=8, modes=8, n_layers=2, pool=8).eval()
    t64 = torch.linspace(0, 2 * math.pi, 65)[:-1]
    t128 = torch.linspace(0, 2 * math.pi, 129)[:-1]
    x64, x128 = torch.sin(t64)[None, None], torch.sin(t128)[None, None]
    y64, y128 = m(x64)[0], m(x128)[0]
    # band-limited input: the same function sampled twice as finely gives the same decoded function
    assert torch.allclose(y128[..., ::2], y64, atol=2e-3)
    ex = m.explain(x64)
    # 2 origin terms + (4 − 2/2) = 3 free poles
    assert ex["poles"].shape == (1, 5) and (ex["poles"].abs() < 1).all()


def test_sphere_modes_and_equal_latent_sizes():
    torch.manual_seed(0)
    a = AFDOperator("sphere", "afd", n_poles=13, smooth_degree=3, kernel_lmax=12, width=4, modes=4, n_layers=1, pool=4)
    f = AFDOperator("sphere", "fourier", n_poles=13, smooth_degree=3, width=4, modes=4, n_layers=1, pool=4)
    assert a.decoder.latent_size == f.decoder.latent_size == 81
    assert count_parameters(a) == count_parameters(f)
    x = torch.randn(2, 1, 12, 24)
    assert a(x)[0].shape == f(x)[0].shape == (2, 1, 12, 24)


def test_matched_fno_and_training_reduces_loss():
    torch.manual_seed(0)
    m = AFDOperator("circle", "afd", n_poles=4, n_origin=2, width=8, modes=8, n_layers=2, pool=8)
    fno, _ = matched_fno(count_parameters(m), 1, modes=8)
    assert abs(count_parameters(fno) - count_parameters(m)) < 0.15 * count_parameters(m)
    t = torch.linspace(0, 2 * math.pi, 33)[:-1]
    x = torch.stack([torch.sin(t + s) for s in torch.linspace(0, 6, 32)])[:, None]
    y = torch.roll(x, 3, dims=-1)
    rep = fit(m, x, y, epochs=15, batch_size=8, lr=1e-2, seed=0, grad_clip=None)
    assert rep.losses[-1] < 0.5 * rep.losses[0]


def test_bad_model_inputs():
    with pytest.raises(ValueError, match="arch"):
        AFDONet("bogus")
    with pytest.raises(ValueError, match="margin"):
        TMDecoder(3, margin=0.0)
    m = AFDOperator("circle", "afd", n_poles=2, width=4, modes=4, n_layers=1, pool=4)
    with pytest.raises(ValueError, match="dims"):
        m(torch.zeros(2, 1, 8, 8))
    with pytest.raises(ValueError, match="NaN"):
        m(torch.full((1, 1, 16), float("nan")))
    ramp = torch.linspace(0, 1, 32)[None, None]  # non-periodic: wrap jump 1 vs increments 1/31
    with pytest.raises(ValueError, match="non-periodic"):
        m(ramp)
    shock = torch.where(torch.arange(32) < 16, 1.0, -1.0)[None, None].float()  # periodic square wave passes
    assert m.eval()(shock)[0].shape == (1, 1, 32)
    fno = FNOBaseline(1, 1, 4, 4, 1)
    with pytest.raises(ValueError, match="dims"):
        fno(torch.zeros(1, 16))
