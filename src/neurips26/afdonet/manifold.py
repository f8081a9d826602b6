"""Pre-orthogonal AFD (POAFD) in a reproducing-kernel Hilbert space on a manifold.

Kernel: the heat kernel of the Laplace–Beltrami operator, K_τ(x, y) = Σ_j e^{−τλ_j} φ_j(x) φ_j(y),
from its eigenpairs. On the unit sphere S² the addition theorem gives the closed form

    K_τ(x, y) = Σ_{l=0}^{L} (2l+1)/(4π) · e^{−τ l(l+1)} · P_l(x·y);

on a triangle mesh the eigenpairs come from the cotangent Laplacian and lumped mass matrix of
``robust-laplacian`` (generalised problem L φ = λ M φ, solved with ``scipy.sparse.linalg.eigsh``).

POAFD in the RKHS H_K (reproducing property ⟨f, K_a⟩ = f(a)): at step k every candidate kernel
K_a is Gram–Schmidt orthogonalised against the chosen orthonormal atoms B_1..B_{k−1},

    E_a^{(k)} = (K_a − Σ_j ⟨K_a, B_j⟩ B_j) / ‖·‖,   a_k = argmax_a |⟨f, E_a^{(k)}⟩|,

and B_k = E_{a_k}^{(k)}. Energy identity: ‖f − Σ_{j≤k}⟨f,B_j⟩B_j‖² = ‖f‖² − Σ_{j≤k}|⟨f,B_j⟩|².

Sources: pre-orthogonal AFD (Qian, arXiv 1406.2088; survey arXiv 1805.06101); heat kernel as
Σ e^{−τλ}φφ (standard spectral geometry). Implementation is ours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

# --------------------------------------------------------------------------- kernels

def legendre_series(t: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ_l w_l P_l(t) by the three-term recurrence (differentiable in t and w).

    Args:
        t: cosines in [−1, 1], any shape (...,).
        weights: shape (L+1,) or broadcastable (..., L+1).

    Returns:
        tensor of shape (...,).
    """
    p_prev, p = torch.ones_like(t), t
    out = weights[..., 0] * p_prev
    if weights.shape[-1] > 1:
        out = out + weights[..., 1] * p
    for l in range(1, weights.shape[-1] - 1):
        p_prev, p = p, ((2 * l + 1) * t * p - l * p_prev) / (l + 1)  # (l+1)P_{l+1} = (2l+1)tP_l − lP_{l−1}
        out = out + weights[..., l + 1] * p
    return out


def sphere_heat_weights(tau: torch.Tensor, lmax: int) -> torch.Tensor:
    """Weights (2l+1)/(4π) e^{−τ l(l+1)}, l = 0..lmax, for heat-kernel times τ (shape (...,)) → (..., lmax+1)."""
    l = torch.arange(lmax + 1, dtype=tau.dtype if torch.is_tensor(tau) else torch.float64)
    tau = torch.as_tensor(tau, dtype=l.dtype)
    return (2 * l + 1) / (4 * math.pi) * torch.exp(-tau[..., None] * l * (l + 1))


def sphere_heat_kernel(x: torch.Tensor, y: torch.Tensor, tau: float, lmax: int = 64) -> torch.Tensor:
    """Heat kernel K_τ(x, y) on the unit sphere S² truncated at degree ``lmax``.

    Args:
        x: unit vectors (N, 3); y: unit vectors (P, 3) (float64 recommended).
        tau: diffusion time τ > 0.
        lmax: truncation degree; the neglected tail is ~ e^{−τ lmax²}.

    Returns:
        (N, P) tensor. ∫ K_τ(x, y) dy = 1.

    Raises:
        ValueError: τ ≤ 0, lmax < 1, or x/y not unit vectors of shape (·, 3).
    """
    if not tau > 0:
        raise ValueError(f"sphere_heat_kernel(tau={tau}): need tau > 0")
    if lmax < 1:
        raise ValueError(f"sphere_heat_kernel(lmax={lmax}): need lmax >= 1")
    for name, v in (("x", x), ("y", y)):
        if v.ndim != 2 or v.shape[1] != 3 or not torch.allclose(v.norm(dim=1), torch.ones(len(v), dtype=v.dtype),
                                                                 atol=1e-6):
            raise ValueError(f"sphere_heat_kernel(): {name} must be unit vectors of shape (n, 3), got {tuple(v.shape)}")
    t = (x @ y.T).clamp(-1.0, 1.0)
    return legendre_series(t, sphere_heat_weights(torch.tensor(float(tau), dtype=x.dtype), lmax))


def sphere_grid(nlat: int, nlon: int, grid: str = "equiangular") -> tuple[torch.Tensor, torch.Tensor]:
    """Colatitudes θ (nlat,) and longitudes φ (nlon,) of the grids used by torch-harmonics.

    ``equiangular``: θ_j = jπ/(nlat−1) (poles included); ``legendre-gauss``: θ_j = arccos of the
    Gauss–Legendre nodes. Longitudes φ_k = 2πk/nlon. Returns float64 tensors.
    """
    if grid == "equiangular":
        theta = torch.linspace(0, math.pi, nlat, dtype=torch.float64)
    elif grid == "legendre-gauss":
        nodes, _ = np.polynomial.legendre.leggauss(nlat)
        theta = torch.as_tensor(np.arccos(nodes[::-1].copy()), dtype=torch.float64)  # north to south
    else:
        raise ValueError(f"sphere_grid(grid={grid!r}); allowed: 'equiangular', 'legendre-gauss'")
    phi = 2 * math.pi * torch.arange(nlon, dtype=torch.float64) / nlon
    return theta, phi


def sphere_points(nlat: int, nlon: int, grid: str = "equiangular") -> torch.Tensor:
    """Unit vectors of a lat-lon grid, shape (nlat, nlon, 3), float64."""
    theta, phi = sphere_grid(nlat, nlon, grid)
    st, ct = torch.sin(theta)[:, None], torch.cos(theta)[:, None]
    return torch.stack([st * torch.cos(phi), st * torch.sin(phi), ct.expand(-1, nlon)], dim=-1)


def validate_mesh(vertices, faces, area_tol: float = 1e-14) -> tuple[np.ndarray, np.ndarray]:
    """Check a triangle mesh: finite (V, 3) vertices, (F, 3) integer faces in range, no
    degenerate faces (repeated vertex or area ≤ ``area_tol``·mean area), no vertex outside every face.

    Raises:
        ValueError: naming the first offending face or value.
    """
    v = np.asarray(vertices, dtype=np.float64)
    f = np.asarray(faces)
    if v.ndim != 2 or v.shape[1] != 3 or not np.isfinite(v).all():
        raise ValueError(f"vertices must be finite with shape (V, 3), got shape {v.shape}")
    if f.ndim != 2 or f.shape[1] != 3 or not np.issubdtype(f.dtype, np.integer):
        raise ValueError(f"faces must be integer triangles of shape (F, 3), got {f.shape} {f.dtype}")
    if f.min() < 0 or f.max() >= len(v):
        raise ValueError(f"faces index vertices 0..{len(v) - 1}, got range [{f.min()}, {f.max()}]")
    rep = (f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2])
    area = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    bad = rep | (area <= area_tol * max(area.mean(), 1e-300))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"mesh has {int(bad.sum())} degenerate face(s) (repeated vertex or zero area); first is "
                         f"face {i} = {f[i].tolist()} with area {area[i]:.3g}")
    unused = np.setdiff1d(np.arange(len(v)), f)
    if unused.size:
        raise ValueError(f"mesh has {unused.size} vertex(es) used by no face (first: {int(unused[0])}); an isolated "
                         "vertex has zero mass and gives a spurious zero Laplace–Beltrami eigenvalue: remove it")
    return v, f.astype(np.int64)


def mesh_eigenpairs(vertices, faces, k: int = 32) -> tuple[np.ndarray, np.ndarray, "object"]:
    """Lowest k Laplace–Beltrami eigenpairs of a triangle mesh (robust-laplacian + eigsh).

    Solves L φ = λ M φ with L the (positive semi-definite) cotangent Laplacian and M the lumped
    mass matrix; eigenvectors are M-orthonormal (φᵀ M φ = I).

    Returns:
        (λ (k,), φ (V, k), M sparse). Raises ValueError for a degenerate mesh or k ≥ V − 1.
    """
    import robust_laplacian
    from scipy.sparse.linalg import eigsh

    v, f = validate_mesh(vertices, faces)
    if not 1 <= k < len(v) - 1:
        raise ValueError(f"mesh_eigenpairs(k={k}): need 1 <= k < V - 1 = {len(v) - 1}")
    L, M = robust_laplacian.mesh_laplacian(v, f)
    lam, phi = eigsh(L, k=k, M=M, sigma=-1e-8, which="LM")
    order = np.argsort(lam)
    return np.clip(lam[order], 0.0, None), phi[:, order], M


def heat_kernel_from_eigenpairs(lam: np.ndarray, phi: np.ndarray, tau: float) -> torch.Tensor:
    """K_τ = Φ diag(e^{−τλ}) Φᵀ on the vertices, (V, V) float64 tensor."""
    if not tau > 0:
        raise ValueError(f"heat_kernel_from_eigenpairs(tau={tau}): need tau > 0")
    phi_t = torch.as_tensor(phi, dtype=torch.float64)
    return (phi_t * torch.exp(-tau * torch.as_tensor(lam, dtype=torch.float64))) @ phi_t.T


# --------------------------------------------------------------------------- POAFD

@dataclass
class POAFDResult:
    """Output of :func:`pre_orthogonal_afd`.

    Attributes:
        indices: long (n,), chosen candidate indices a_1..a_n.
        coefficients: float64 (n,), ⟨f, B_k⟩.
        atoms: float64 (n, C), B_k = Σ_i atoms[k, i] K_{a_i} over the candidates.
        remainder_energy: float64 (n+1,), ‖f‖² − Σ_{j≤k} ⟨f,B_j⟩² (energy identity), k = 0..n.
    """

    indices: torch.Tensor
    coefficients: torch.Tensor
    atoms: torch.Tensor
    remainder_energy: torch.Tensor

    def kernel_expansion(self) -> torch.Tensor:
        """Coefficients w (C,) with f_n = Σ_i w_i K_{a_i} (so f_n(x) = K(x, cand) @ w)."""
        return self.coefficients @ self.atoms


def pre_orthogonal_afd(gram: torch.Tensor, f_at_candidates: torch.Tensor, n_terms: int,
                       f_norm2: float, eps: float = 1e-10) -> POAFDResult:
    """Pre-orthogonal AFD of f in the RKHS of a (real, positive-definite) kernel, vectorised over candidates.

    Args:
        gram: (C, C) kernel matrix K(a_i, a_j) on the candidate points.
        f_at_candidates: (C,) values f(a_i) = ⟨f, K_{a_i}⟩ (reproducing property).
        n_terms: maximal number of atoms; stops when the remainder energy ≤ eps·‖f‖².
        f_norm2: ‖f‖²_{H_K} (for f = Σ c K_b it is cᵀ K c).
        eps: relative energy / norm threshold; a candidate already in the span
            (‖K_a − proj‖² ≤ eps·K(a,a)) is never selected.

    Returns:
        :class:`POAFDResult`.

    Raises:
        ValueError: shapes disagree, non-finite entries, a non-symmetric Gram matrix,
            n_terms not an integer ≥ 1, f_norm2 < 0 or smaller than the captured energy
            (f_norm2 inconsistent with f_at_candidates: the remainder energy would go negative).

    Source: pre-orthogonal AFD (Qian 2014, arXiv 1406.2088); vectorisation ours. Cost per step
    O(C·k) for the projections plus O(C²) once for one Gram column per selected atom.
    """
    gram = torch.as_tensor(gram, dtype=torch.float64)
    fv = torch.as_tensor(f_at_candidates, dtype=torch.float64)
    c = gram.shape[0]
    if gram.shape != (c, c) or fv.shape != (c,):
        raise ValueError(f"gram must be (C, C) and f_at_candidates (C,), got {tuple(gram.shape)}, {tuple(fv.shape)}")
    if not (torch.isfinite(gram).all() and torch.isfinite(fv).all()):
        raise ValueError("gram or f_at_candidates contains NaN or inf")
    if not f_norm2 >= 0:
        raise ValueError(f"f_norm2={f_norm2}; need >= 0")
    asym = float((gram - gram.T).abs().max()) if c else 0.0
    if asym > 1e-10 * max(float(gram.abs().max()), 1e-300):
        raise ValueError(f"gram is not symmetric (max |K − Kᵀ| = {asym:.3g}); a reproducing kernel's Gram "
                         "matrix is symmetric positive semi-definite")
    if isinstance(n_terms, bool) or int(n_terms) != n_terms or n_terms < 1:
        raise ValueError(f"n_terms={n_terms!r}; need an integer >= 1")
    diag = torch.diagonal(gram).clone()
    proj = torch.zeros(0, c, dtype=torch.float64)         # ⟨B_j, K_a⟩ = B_j(a) for all candidates
    atoms = torch.zeros(0, c, dtype=torch.float64)
    idx, coefs, rem = [], [], [float(f_norm2)]
    for _ in range(int(n_terms)):
        if rem[-1] <= eps * max(f_norm2, 1e-300):
            break
        num = fv - coefs_t(coefs) @ proj                   # ⟨f, K_a − Σ⟨K_a,B_j⟩B_j⟩ = f(a) − Σ⟨f,B_j⟩B_j(a)
        norm2 = diag - (proj ** 2).sum(0)                  # ‖K_a − Σ⟨K_a,B_j⟩B_j‖²
        ok = norm2 > eps * diag
        score = torch.where(ok, num ** 2 / norm2.clamp_min(1e-300), torch.zeros_like(num))
        a = int(score.argmax())
        if not bool(ok[a]):
            break
        # B_k = (K_a − Σ_j B_j(a) B_j)/‖·‖, stored as coefficients over candidate kernels
        w = -proj[:, a] @ atoms
        w[a] += 1.0
        w = w / math.sqrt(float(norm2[a]))
        b_vals = gram @ w                                  # B_k(a_i) = Σ_l w_l K(a_i, a_l)
        atoms = torch.cat([atoms, w[None]], 0)
        proj = torch.cat([proj, b_vals[None]], 0)
        ck = float(num[a]) / math.sqrt(float(norm2[a]))    # ⟨f, B_k⟩
        idx.append(a)
        coefs.append(ck)
        rem.append(rem[-1] - ck ** 2)                      # energy identity
        if rem[-1] < -1e-8 * max(f_norm2, float(fv.abs().max()) ** 2 / max(float(diag.max()), 1e-300)):
            raise ValueError(f"f_norm2={f_norm2} is smaller than the energy already captured "
                             f"({f_norm2 - rem[-1]:.6g}): f_at_candidates and f_norm2 do not describe the same "
                             "f (for f = Σ c_i K_{b_i}, f_norm2 = cᵀ K c)")
    return POAFDResult(torch.tensor(idx, dtype=torch.long), coefs_t(coefs), atoms, torch.tensor(rem, dtype=torch.float64))


def coefs_t(c: list[float]) -> torch.Tensor:
    """List of floats → float64 tensor (helper)."""
    return torch.tensor(c, dtype=torch.float64)


def icosphere(subdivisions: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Unit icosphere mesh: (vertices (V, 3) float64, faces (F, 3) int64); V = 10·4^s + 2.

    Source: the standard icosahedron subdivision (each triangle split in 4, midpoints projected
    to the sphere). Used as a test mesh for the Laplace–Beltrami eigenpairs (λ ≈ l(l+1)).
    """
    if not 0 <= subdivisions <= 6:
        raise ValueError(f"icosphere(subdivisions={subdivisions}); allowed 0..6")
    t = (1 + 5 ** 0.5) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
    verts = [np.array(p, dtype=np.float64) / np.linalg.norm(p) for p in v]
    faces = f
    for _ in range(subdivisions):
        cache: dict = {}

        def mid(i, j):
            key = (min(i, j), max(i, j))
            if key not in cache:
                p = verts[i] + verts[j]
                verts.append(p / np.linalg.norm(p))
                cache[key] = len(verts) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            new += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        faces = new
    return np.array(verts), np.array(faces, dtype=np.int64)
