"""AFD on the disc: kernels, TM basis, selection, energy identity, bad input."""

import math

import pytest
import torch

from neurips26.afdonet import (
    adaptive_fourier_decomposition,
    analytic_signal,
    boundary_points,
    default_radii,
    evaluate_inside,
    evaluate_polar_grid,
    hardy_inner,
    maximal_selection,
    maximal_selection_loop,
    szego_kernel,
    takenaka_malmquist,
    taylor_coefficients,
    truncated_fourier_error,
)

M = 1024


def test_szego_kernel_unit_norm_and_reproducing():
    z = boundary_points(M)
    a = torch.tensor([0.0, 0.5 + 0.3j, -0.8j], dtype=torch.complex128)
    e = szego_kernel(a, z)
    # ‖e_a‖ = 1 up to aliasing ~|a|^M (negligible for |a| ≤ 0.8)
    assert torch.allclose(hardy_inner(e, e).real, torch.ones(3, dtype=torch.float64), atol=1e-12)
    f = 1 / (1 - 0.3 * z) + z ** 2
    # reproducing property ⟨f, e_a⟩ = √(1−|a|²) f(a)
    for ai in a.tolist():
        fa = 1 / (1 - 0.3 * ai) + ai ** 2
        got = complex(hardy_inner(f, szego_kernel(torch.tensor([ai], dtype=torch.complex128), z)[0]))
        assert abs(got - math.sqrt(1 - abs(ai) ** 2) * fa) < 1e-12


def test_tm_orthonormal_for_arbitrary_and_repeated_poles():
    z = boundary_points(M)
    poles = torch.tensor([0.0, 0.9, 0.9, -0.5 + 0.5j, 0.3j], dtype=torch.complex128)
    b = takenaka_malmquist(poles, z)
    gram = b @ b.conj().T / M
    assert (gram - torch.eye(5, dtype=gram.dtype)).abs().max() < 1e-12  # exact up to 0.9^1024 aliasing


def test_polar_grid_matches_pointwise_evaluation_and_folding():
    z = boundary_points(256)
    g = 1 / (1 - (0.4 - 0.2j) * z) + 0.5 * z ** 3
    coef = taylor_coefficients(g)
    radii = torch.tensor([0.0, 0.3, 0.7], dtype=torch.float64)
    for p in (256, 32):
        grid = evaluate_polar_grid(coef, radii, p)
        ang = 2 * math.pi * torch.arange(p, dtype=torch.float64) / p
        pts = torch.polar(radii[:, None].expand(-1, p), ang[None].expand(3, -1)).flatten()
        exact = 1 / (1 - (0.4 - 0.2j) * pts) + 0.5 * pts ** 3
        assert (grid.flatten() - exact).abs().max() < 1e-12
        assert (evaluate_inside(coef, pts) - exact).abs().max() < 1e-12


def test_evaluate_inside_blocked_powers_equal_the_direct_power_sum():
    # evaluate_inside splits aⁿ = (a^B)^q · a^r (B ≈ √M); compare with Σ ĝ_n aⁿ from direct powers for
    # lengths that are not squares (padding) and for M = 1; 1e-12 relative: round-off of ~M products only
    pts = torch.tensor([0.0, 0.5 + 0.3j, -0.97j, 0.9 * complex(math.cos(2.0), math.sin(2.0))],
                       dtype=torch.complex128)
    gen = torch.Generator().manual_seed(0)
    for m in (1, 2, 7, 65, 1000):
        coef = torch.complex(torch.randn(m, generator=gen, dtype=torch.float64),
                             torch.randn(m, generator=gen, dtype=torch.float64))
        n = torch.arange(m, dtype=torch.float64)
        direct = torch.polar(pts.abs()[:, None] ** n, n * pts.angle()[:, None]) @ coef
        assert (evaluate_inside(coef, pts) - direct).abs().max() <= 1e-12 * max(1.0, float(direct.abs().max()))


def test_vectorised_selection_equals_loop():
    z = boundary_points(M)
    g = 1 / (1 - 0.85j * z) ** 2 + 0.2 * z
    radii = default_radii(0.9, 6)
    a_vec, v_vec = maximal_selection(g, radii, 32, refine_rounds=0, r_max=0.9)
    ang = 2 * math.pi * torch.arange(32, dtype=torch.float64) / 32
    cands = torch.polar(radii[:, None].expand(-1, 32), ang[None].expand(6, -1)).flatten()
    a_loop, v_loop = maximal_selection_loop(g, cands)
    assert abs(a_vec - a_loop) < 1e-12 and abs(v_vec - v_loop) < 1e-9 * v_loop


def test_energy_identity_and_pole_recovery():
    z = boundary_points(2048)
    a_true = 0.9 * complex(math.cos(1.0), math.sin(1.0))
    f = 2 / (1 - a_true.conjugate() * z)
    res = adaptive_fourier_decomposition(f, 6)
    # a single Szegő kernel: the maximiser is its pole; grid + 6 zoom rounds resolve it to ~1e-5
    assert abs(res.poles[0] - a_true) < 1e-4
    f = f + 0.5 * z
    res = adaptive_fourier_decomposition(f, 6)
    for n in range(res.n_terms + 1):
        r = f - res.reconstruct(n)
        direct = float(hardy_inner(r, r).real)
        assert abs(direct - float(res.remainder_energy[n])) < 1e-10 * res.energy  # identity, round-off only
    assert all(b <= a + 1e-12 for a, b in zip(res.remainder_energy, res.remainder_energy[1:]))


def test_afd_beats_fourier_on_sharp_function():
    z = boundary_points(2048)
    f = 1 / (1 - 0.97 * z) + 0.3 * z ** 2
    res = adaptive_fourier_decomposition(f, 4)
    afd_err = math.sqrt(max(float(res.remainder_energy[-1]), 0) / res.energy)
    # free maximal selection does not hit the pole exactly (the z² term shifts the maximiser), so
    # AFD is not exact in 3 terms, but 4 AFD terms must beat 4 Fourier terms (~0.97⁴ left) tenfold
    assert afd_err < 0.1 * truncated_fourier_error(f, 4)


def test_zero_function_gives_empty_expansion():
    res = adaptive_fourier_decomposition(torch.zeros(64, dtype=torch.complex128), 5)
    assert res.n_terms == 0 and not torch.isnan(res.remainder_energy).any()


def test_analytic_signal_real_part():
    t = 2 * math.pi * torch.arange(128, dtype=torch.float64) / 128
    f = torch.cos(3 * t) + 0.5 * torch.sin(t) + 0.2
    F = analytic_signal(f)
    assert (F.real - f).abs().max() < 1e-13
    assert (torch.fft.fft(F)[65:]).abs().max() < 1e-10  # no negative frequencies


def test_bad_inputs_raise_clear_errors():
    z = boundary_points(64)
    with pytest.raises(ValueError, match="|a|"):
        szego_kernel(torch.tensor([1.0 + 0j]), z)
    with pytest.raises(ValueError, match="strictly inside"):
        szego_kernel(torch.tensor([1.5j]), z)
    with pytest.raises(ValueError, match="NaN"):
        adaptive_fourier_decomposition(torch.tensor([float("nan")] * 64), 2)
    with pytest.raises(ValueError, match="M >= 8"):
        adaptive_fourier_decomposition(torch.ones(4), 2)
    with pytest.raises(ValueError, match="real"):
        analytic_signal(torch.ones(8, dtype=torch.complex128))
