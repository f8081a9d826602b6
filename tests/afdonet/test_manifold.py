"""Pre-orthogonal AFD with heat kernels on the sphere and on meshes."""

import numpy as np
import pytest
import torch

from neurips26.afdonet import (heat_kernel_from_eigenpairs, icosphere, mesh_eigenpairs, pre_orthogonal_afd,
                               sphere_heat_kernel, sphere_points, validate_mesh)


def test_sphere_heat_kernel_integrates_to_one():
    nlat, nlon = 32, 64
    pts = sphere_points(nlat, nlon, "legendre-gauss").reshape(-1, 3)
    _, w = np.polynomial.legendre.leggauss(nlat)
    qw = torch.tensor(np.repeat(w[::-1].copy(), nlon) * 2 * np.pi / nlon)
    k = sphere_heat_kernel(pts[:5], pts, 0.2, lmax=30)
    assert torch.allclose(k @ qw, torch.ones(5, dtype=torch.float64), atol=1e-12)  # exact quadrature


def test_poafd_recovers_kernel_atoms_and_energy_identity():
    cand = sphere_points(10, 20, "legendre-gauss").reshape(-1, 3)
    gram = sphere_heat_kernel(cand, cand, 0.1, lmax=40)
    idx, c = [4, 77, 150], torch.tensor([1.0, -0.6, 0.3], dtype=torch.float64)
    n2 = float(c @ gram[idx][:, idx] @ c)
    res = pre_orthogonal_afd(gram, gram[:, idx] @ c, 8, n2)
    assert sorted(res.indices.tolist()) == idx
    assert float(res.remainder_energy[-1]) < 1e-10 * n2
    w = res.kernel_expansion()
    assert torch.allclose(gram @ w, gram[:, idx] @ c, atol=1e-8)


def test_mesh_eigenvalues_match_sphere_spectrum():
    v, f = icosphere(2)
    lam, phi, mass = mesh_eigenpairs(v, f, k=9)
    assert abs(lam[0]) < 1e-8
    assert np.allclose(lam[1:4], 2.0, rtol=0.05) and np.allclose(lam[4:9], 6.0, rtol=0.08)  # coarse mesh: ~h² error
    k = heat_kernel_from_eigenpairs(lam, phi, 0.1)
    assert torch.allclose(k, k.T)


def test_degenerate_mesh_is_refused():
    v, f = icosphere(1)
    bad = f.copy()
    bad[3] = [bad[3, 0], bad[3, 0], bad[3, 2]]
    with pytest.raises(ValueError, match="degenerate face"):
        validate_mesh(v, bad)
    v2 = v.copy()
    v2[f[5, 2]] = (v2[f[5, 0]] + v2[f[5, 1]]) / 2  # collinear → zero area
    with pytest.raises(ValueError, match="degenerate"):
        mesh_eigenpairs(v2, f, k=4)
    with pytest.raises(ValueError, match="index vertices"):
        validate_mesh(v, f + 1000)
