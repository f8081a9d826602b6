"""Exact diffusion quantities for a Gaussian-mixture data law (the ground truth of the checks).

For x_0 ~ Σ_j π_j N(m_j, S_j) and x_t = √ᾱ x_0 + √(1-ᾱ) ε, with S_j = U_j diag(λ_j) U_jᵀ:

* marginal      q_t = Σ_j π_j N(√ᾱ m_j, U_j diag(ᾱλ_j + 1 - ᾱ) U_jᵀ)
* posterior     p(j | x_t) ∝ π_j N(x_t; √ᾱ m_j, ·),  r_j = U_jᵀ (x_t − √ᾱ m_j)
                E[x_0 | x_t, j] = m_j + U_j (√ᾱ λ_j / (ᾱλ_j + 1 − ᾱ) ⊙ r_j)
                Cov[x_0 | x_t, j] = U_j diag(λ_j (1−ᾱ) / (ᾱλ_j + 1 − ᾱ)) U_jᵀ
* reverse step  q(x_s | x_t) = Σ_j p(j | x_t) N(·) — a mixture, exact in closed form.

Everything is torch (float64 by default) and differentiable, so :func:`gmm_denoiser` is a
closed-form "network" whose JVPs give the exact posterior covariance (Tweedie is exact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .schedule import StepCoefficients

_LOG2PI = math.log(2 * math.pi)


@dataclass
class GaussianMixtureLaw:
    """A Gaussian mixture with pre-computed eigendecompositions of its covariances.

    Attributes:
        weights: π, shape (K,), positive, sums to 1.
        means: m, shape (K, d). eigvals: λ, shape (K, d), positive. eigvecs: U, (K, d, d).
    """

    weights: torch.Tensor
    means: torch.Tensor
    eigvals: torch.Tensor
    eigvecs: torch.Tensor

    @property
    def dim(self) -> int:
        """Data dimension d."""
        return int(self.means.shape[1])

    @property
    def covariances(self) -> torch.Tensor:
        """S_j = U_j diag(λ_j) U_jᵀ, shape (K, d, d)."""
        return torch.einsum("kij,kj,klj->kil", self.eigvecs, self.eigvals, self.eigvecs)


def gaussian_mixture_law(weights, means, covariances, dtype: torch.dtype = torch.float64) -> GaussianMixtureLaw:
    """Validate a mixture and eigendecompose its covariances.

    Args:
        weights: (K,) non-negative, summing to 1 (±1e-6). means: (K, d). covariances: (K, d, d),
            symmetric positive definite.

    Raises:
        ValueError: on shape mismatches, NaN/inf entries, bad weights, or a covariance that is not SPD.
    """
    w = torch.as_tensor(np.asarray(weights), dtype=dtype)
    m = torch.as_tensor(np.asarray(means), dtype=dtype)
    S = torch.as_tensor(np.asarray(covariances), dtype=dtype)
    if w.ndim != 1 or m.ndim != 2 or S.ndim != 3 or not (len(w) == m.shape[0] == S.shape[0]) \
            or S.shape[1:] != (m.shape[1], m.shape[1]):
        raise ValueError(f"need weights (K,), means (K, d), covariances (K, d, d); got "
                         f"{tuple(w.shape)}, {tuple(m.shape)}, {tuple(S.shape)}")
    for name, a in (("weights", w), ("means", m), ("covariances", S)):
        if not torch.isfinite(a).all():
            raise ValueError(f"{name} contain NaN or infinite entries")
    if (w < 0).any() or abs(float(w.sum()) - 1) > 1e-6:
        raise ValueError(f"weights must be non-negative and sum to 1, got sum {float(w.sum())}")
    if not torch.allclose(S, S.transpose(1, 2), atol=1e-8 * float(S.abs().max())):
        raise ValueError("covariances must be symmetric")
    lam, U = torch.linalg.eigh(S)
    if (lam <= 0).any():
        raise ValueError(f"covariances must be positive definite; smallest eigenvalue {float(lam.min()):.3g}")
    return GaussianMixtureLaw(w, m, lam, U)


def gmm_sample(law: GaussianMixtureLaw, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """n draws of x_0, shape (n, d)."""
    j = torch.multinomial(law.weights, n, replacement=True, generator=generator)
    z = torch.randn(n, law.dim, generator=generator, dtype=law.means.dtype)
    return law.means[j] + torch.einsum("nij,nj->ni", law.eigvecs[j], law.eigvals[j].sqrt() * z)


def _components(law: GaussianMixtureLaw, x: torch.Tensor, alpha_bar: float):
    a = float(alpha_bar)
    var = a * law.eigvals + (1 - a)                                   # (K, d)
    r = torch.bmm(x[None] - math.sqrt(a) * law.means[:, None, :], law.eigvecs)   # (K, n, d): U_jᵀ(x − √ᾱ m_j)
    logp = (torch.log(law.weights)[:, None] - 0.5 * (torch.log(var).sum(1) + law.dim * _LOG2PI)[:, None]
            - 0.5 * (r**2 / var[:, None, :]).sum(2))                  # (K, n)
    return var, r, logp.T


def gmm_logpdf(law: GaussianMixtureLaw, x: torch.Tensor, alpha_bar: float = 1.0) -> torch.Tensor:
    """log q_t(x) of the noised mixture at level ᾱ (ᾱ = 1: the data law), shape (n,)."""
    return torch.logsumexp(_components(law, x, alpha_bar)[2], dim=1)


def gmm_posterior_mean(law: GaussianMixtureLaw, x: torch.Tensor, alpha_bar: float) -> torch.Tensor:
    """E[x_0 | x_t = x], shape (n, d); differentiable in x (Tweedie, exact)."""
    a = float(alpha_bar)
    var, r, logp = _components(law, x, a)
    w = torch.softmax(logp, dim=1)
    shrink = math.sqrt(a) * law.eigvals / var                           # (K, d)
    # Σ_j w_j (m_j + U_j (shrink_j ⊙ r_j)) as one batched matmul
    return w @ law.means + torch.bmm(w.T[:, :, None] * shrink[:, None, :] * r, law.eigvecs.transpose(1, 2)).sum(0)


def gmm_posterior_covariance(law: GaussianMixtureLaw, x: torch.Tensor, alpha_bar: float) -> torch.Tensor:
    """Cov[x_0 | x_t = x], shape (n, d, d) (law of total covariance over components)."""
    a = float(alpha_bar)
    var, r, logp = _components(law, x, a)
    w = torch.softmax(logp, dim=1)
    mj = (law.means[:, None, :] + torch.bmm((math.sqrt(a) * law.eigvals / var)[:, None, :] * r,
                                             law.eigvecs.transpose(1, 2))).transpose(0, 1)   # (n, K, d)
    cj = torch.einsum("kij,kj,klj->kil", law.eigvecs, law.eigvals * (1 - a) / var, law.eigvecs)
    mean = torch.einsum("nk,nki->ni", w, mj)
    second = torch.einsum("nk,kil->nil", w, cj) + torch.einsum("nk,nki,nkl->nil", w, mj, mj)
    return second - mean[:, :, None] * mean[:, None, :]


def gmm_denoiser(law: GaussianMixtureLaw, alphas_cumprod):
    """A closed-form x_0-prediction network ``model(x, t)`` (use ``prediction_type="sample"``).

    Args:
        alphas_cumprod: ᾱ over the training grid, shape (N,).

    Returns:
        ``model(x, t)`` with x of shape (B, d) and t a LongTensor (B,) of equal indices.
    """
    ac = np.asarray(alphas_cumprod, dtype=np.float64)

    def model(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        ti = int(t.reshape(-1)[0])
        if not bool((t == ti).all()):
            raise ValueError("gmm_denoiser expects one timestep for the whole batch")
        return gmm_posterior_mean(law, x.to(law.means.dtype), float(ac[ti])).to(x.dtype)

    return model


def gmm_covariance_oracle(law: GaussianMixtureLaw, alphas_cumprod):
    """Closed-form ``(x, t) -> Cov[x_0 | x_t = x]`` (B, d, d) for the sampler's oracle covariances."""
    ac = np.asarray(alphas_cumprod, dtype=np.float64)

    def cov(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return gmm_posterior_covariance(law, x.to(law.means.dtype), float(ac[int(t.reshape(-1)[0])])).to(x.dtype)

    return cov


def gmm_reverse_logpdf(law: GaussianMixtureLaw, x_prev: torch.Tensor, x_t: torch.Tensor,
                       coeffs: StepCoefficients) -> torch.Tensor:
    """Exact log q(x_s = x_prev | x_t) of the reverse step t → s, shape (n,).

    Per component, in the eigenbasis: prior variance p = ᾱ_s λ + 1 − ᾱ_s, posterior variance
    v = p β / (β + (1−β) p) and mean √ᾱ_s m + U (v √(1−β)/β ⊙ r), r = Uᵀ(x_t − √ᾱ_t m).
    """
    a, ap, beta = coeffs.alpha_bar, coeffs.alpha_bar_prev, coeffs.beta
    _, r, logw = _components(law, x_t, a)
    logw = logw - torch.logsumexp(logw, dim=1, keepdim=True)
    p = ap * law.eigvals + (1 - ap)
    v = p * beta / (beta + (1 - beta) * p)                            # (K, d)
    y = torch.bmm(x_prev[None] - math.sqrt(ap) * law.means[:, None, :], law.eigvecs)   # (K, n, d)
    mean_y = v[:, None, :] * math.sqrt(1 - beta) / beta * r
    logn = -0.5 * (torch.log(v).sum(1)[:, None] + law.dim * _LOG2PI + ((y - mean_y) ** 2 / v[:, None, :]).sum(2))
    return torch.logsumexp(logw + logn.T, dim=1)
