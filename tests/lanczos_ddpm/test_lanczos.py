"""Tests of the batched Lanczos square-root sampler against dense linear algebra."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.lanczos_ddpm import dense_sqrt_apply, lanczos_gaussian_sample, lanczos_sqrt, lanczos_tridiagonal


def _spd(d: int, seed: int, kappa: float = 100.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    Q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    lam = torch.logspace(0, math.log10(kappa), d, dtype=torch.float64)
    return (Q * lam) @ Q.T


def _scipy_sqrt(S: torch.Tensor) -> np.ndarray:
    from scipy.linalg import sqrtm

    return np.real(sqrtm(S.numpy()))


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 10), seed=st.integers(0, 10_000), extra=st.integers(0, 4))
def test_exact_when_k_reaches_d(d, seed, extra):
    # Krylov space of dimension <= d: Lanczos is exact; reference is scipy's sqrtm (independent code).
    S = _spd(d, seed)
    z = torch.randn(3, d, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    xi, info = lanczos_gaussian_sample(lambda v: v @ S, z, d + extra)
    ref = z.numpy() @ _scipy_sqrt(S).T
    assert info["k"] == d  # capped at d
    # 1e-8 relative: float64 round-off on kappa = 100 operators, with re-orthogonalisation
    np.testing.assert_allclose(xi.numpy(), ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_error_decreases_geometrically_in_k():
    d = 200
    S = _spd(d, 0, kappa=50.0)
    z = torch.randn(8, d, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref = torch.as_tensor(z.numpy() @ _scipy_sqrt(S).T)
    dec = lanczos_tridiagonal(lambda v: v @ S, z, 8)
    err = [float(((lanczos_sqrt(dec, k)[0] - ref).norm(dim=1) / ref.norm(dim=1)).mean()) for k in range(1, 9)]
    assert all(b < a for a, b in zip(err, err[1:]))
    rho = (math.sqrt(50) - 1) / (math.sqrt(50) + 1)  # Chebyshev rate for kappa = 50
    # after 8 steps the error is below rho^8 (the bound's rate; constants are O(1))
    assert err[-1] < rho**8


def test_nested_prefix_equals_fresh_run():
    S = _spd(30, 3)
    z = torch.randn(4, 30, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    a = lanczos_sqrt(lanczos_tridiagonal(lambda v: v @ S, z, 9), 4)[0]
    b = lanczos_gaussian_sample(lambda v: v @ S, z, 4)[0]
    torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_breakdown_on_invariant_subspace_is_exact_and_counted():
    # Sigma = 2 I: the Krylov space is 1-D; the recursion must stop and still return sqrt(2) z.
    z = torch.randn(5, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    xi, info = lanczos_gaussian_sample(lambda v: 2.0 * v, z, 4)
    torch.testing.assert_close(xi, math.sqrt(2.0) * z, rtol=1e-12, atol=1e-12)
    assert info["breakdown"] == 5


def test_negative_ritz_values_are_clipped_and_counted():
    S = torch.diag(torch.tensor([2.0, 1.0, -1.0], dtype=torch.float64))  # indefinite
    z = torch.ones(1, 3, dtype=torch.float64)
    xi, info = lanczos_gaussian_sample(lambda v: v @ S, z, 3)
    assert info["clipped"] == 1
    # the clipped result is the PSD part's square root applied to z
    torch.testing.assert_close(xi, torch.tensor([[math.sqrt(2.0), 1.0, 0.0]], dtype=torch.float64),
                               rtol=1e-10, atol=1e-10)


def test_batch_of_different_operators():
    S1, S2 = _spd(12, 1), _spd(12, 2)
    Ss = torch.stack([S1, S2])
    z = torch.randn(2, 12, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    xi, _ = lanczos_gaussian_sample(lambda v: torch.einsum("bij,bj->bi", Ss, v), z, 12)
    ref, clipped = dense_sqrt_apply(Ss, z)
    assert clipped == 0
    torch.testing.assert_close(xi, ref, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_k(k):
    with pytest.raises(ValueError, match="positive integer"):
        lanczos_gaussian_sample(lambda v: v, torch.ones(1, 3), k)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"shape \(B, d\)"):
        lanczos_gaussian_sample(lambda v: v, torch.ones(1, 1, 3), 2)   # a single vector (d,) is accepted
    with pytest.raises(ValueError, match="zero row"):
        lanczos_gaussian_sample(lambda v: v, torch.zeros(1, 3), 2)
    with pytest.raises(ValueError, match="NaN"):
        lanczos_gaussian_sample(lambda v: v * float("nan"), torch.ones(1, 3), 2)
    with pytest.raises(ValueError, match="matvec returned shape"):
        lanczos_gaussian_sample(lambda v: v[:, :2], torch.ones(1, 3), 2)
    with pytest.raises(ValueError, match=r"cov must be \(B, d, d\)"):
        dense_sqrt_apply(torch.eye(3)[None], torch.ones(1, 4))


def test_review_inputs_numpy_k_empty_batch_nonfinite_cov_and_half_precision():
    # a NumPy integer k is a valid k (it used to be rejected as "not a positive integer")
    S = torch.diag(torch.tensor([1.0, 4.0, 9.0], dtype=torch.float64))
    z = torch.randn(2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    xi, info = lanczos_gaussian_sample(lambda v: v @ S, z, np.int64(3))
    assert info["k"] == 3
    torch.testing.assert_close(xi, z * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="B >= 1"):               # used to be a torch RuntimeError
        lanczos_gaussian_sample(lambda v: v, torch.ones(0, 3), 2)
    with pytest.raises(ValueError, match="NaN or infinite"):      # used to be an eigh LinAlgError
        dense_sqrt_apply(torch.full((1, 3, 3), float("nan")), torch.ones(1, 3))
    # float16 has no eigh kernel on CPU: the k×k eigenproblem is solved in float32, output stays half
    zh = z.half()
    xh, _ = lanczos_gaussian_sample(lambda v: v @ S.half(), zh, 3)
    assert xh.dtype == torch.float16
    torch.testing.assert_close(xh.double(), xi, rtol=1e-2, atol=1e-2)
    dh, _ = dense_sqrt_apply(S.half().expand(2, 3, 3), zh)
    assert dh.dtype == torch.float16
    torch.testing.assert_close(dh.double(), xi, rtol=1e-2, atol=1e-2)
