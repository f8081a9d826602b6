"""Path KL between the exact reverse chain and a Gaussian reverse process (exact for mixtures).

    KL(q_{0:T} ‖ p_{0:T}) = KL(q_T ‖ p_T) + Σ_t E_{q(x_t)} KL(q(x_s | x_t) ‖ N(μ*_t, Σ_t))

with the exact mean μ*_t and a covariance choice Σ_t (derived here). Because log N is
quadratic, every Gaussian with the exact first two moments (μ*, Σ*) splits the step term
exactly into a non-Gaussianity part, common to all covariance choices, and a closed-form
covariance-mismatch part:

    KL(q(·|x_t) ‖ N(μ*, Σ)) = E_q[log q(x_s|x_t) − log N(x_s; μ*, Σ*)]       (Monte Carlo, paired)
                            + KL(N(μ*, Σ*) ‖ N(μ*, Σ))                           (closed form)

so the estimator is paired across covariance choices by construction (same samples, same
non-Gaussian term) and its Monte Carlo noise only enters through E over x_t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from .gmm import (
    GaussianMixtureLaw,
    gmm_logpdf,
    gmm_posterior_covariance,
    gmm_posterior_mean,
    gmm_reverse_logpdf,
    gmm_sample,
)
from .schedule import schedule_steps

PATH_KL_COVARIANCES = ("beta", "beta_tilde", "trace", "diagonal", "full")


def gaussian_kl_same_mean(sigma_star: torch.Tensor, covariance: str, beta: float, beta_tilde: float) -> torch.Tensor:
    """KL(N(μ, Σ*) ‖ N(μ, Σ)) = ½[tr(Σ⁻¹Σ*) − d + log det Σ − log det Σ*] per sample, shape (n,).

    Args:
        sigma_star: Σ*, shape (n, d, d), SPD. covariance: one of ``PATH_KL_COVARIANCES``
            ("full" is Σ = Σ*, KL 0). beta, beta_tilde: the step's β and β̃.

    Returns:
        float tensor (n,); +inf where Σ is singular (β̃ = 0 at the last step).

    Raises:
        ValueError: unknown covariance.
    """
    n, d, _ = sigma_star.shape
    if covariance == "full":
        return sigma_star.new_zeros(n)
    diag = torch.diagonal(sigma_star, dim1=1, dim2=2)
    if covariance == "beta":
        var = torch.full_like(diag, beta)
    elif covariance == "beta_tilde":
        var = torch.full_like(diag, beta_tilde)
    elif covariance == "trace":
        var = diag.mean(1, keepdim=True).expand_as(diag)
    elif covariance == "diagonal":
        var = diag
    else:
        raise ValueError(f"covariance {covariance!r} is not one of {PATH_KL_COVARIANCES}")
    if (var <= 0).any():
        return torch.full((n,), math.inf, dtype=sigma_star.dtype)
    logdet_star = 2 * torch.log(torch.diagonal(torch.linalg.cholesky(sigma_star), dim1=1, dim2=2)).sum(1)
    return 0.5 * ((diag / var).sum(1) - d + torch.log(var).sum(1) - logdet_star)


@dataclass
class PathKL:
    """Path-KL estimate, per step (in sampling order: noisiest first).

    Attributes:
        prior: KL(q_T ‖ N(0, I)) (Monte Carlo).
        non_gaussian: E[KL(q(x_s|x_t) ‖ N(μ*, Σ*))] per step, shape (T,) (Monte Carlo).
        mismatch: covariance name → E[KL(N(μ*,Σ*) ‖ N(μ*,Σ))] per step, shape (T,).
        stderr: covariance name → Monte Carlo standard error of the total.
        cov: covariance name → covariance name → Monte Carlo covariance of the two totals (the
            estimates share their draws, so differences between choices are paired; the diagonal
            is ``stderr**2``).
    """

    prior: float
    non_gaussian: np.ndarray
    mismatch: dict[str, np.ndarray]
    stderr: dict[str, float] = field(default_factory=dict)
    cov: dict[str, dict[str, float]] = field(default_factory=dict)

    def total(self, covariance: str) -> float:
        """The path KL of one covariance choice: prior + Σ_t (non-Gaussian + mismatch)."""
        return float(self.prior + self.non_gaussian.sum() + self.mismatch[covariance].sum())


def path_kl_gaussian_mixture(law: GaussianMixtureLaw, alphas_cumprod, timesteps, covariances=PATH_KL_COVARIANCES,
                             num_samples: int = 20000, generator: torch.Generator | None = None,
                             chunk: int = 20000) -> PathKL:
    """Monte Carlo path KL of Gaussian reverse processes with the exact mean, for a mixture law.

    Args:
        law: the data law. alphas_cumprod: ᾱ over the training grid (N,). timesteps: descending
            subset (T steps; the last goes to x_0). covariances: names in ``PATH_KL_COVARIANCES``.
        num_samples: Monte Carlo samples of (x_0, x_s, x_t) per step (≥ 20k gave a stable
            2-D slope in a prototype run). generator: torch generator. chunk: samples per batch.

    Returns:
        :class:`PathKL`.

    Raises:
        ValueError: unknown covariance name or num_samples < 2.
    """
    for c in covariances:
        if c not in PATH_KL_COVARIANCES:
            raise ValueError(f"covariance {c!r} is not one of {PATH_KL_COVARIANCES}")
    if num_samples < 2:
        raise ValueError(f"num_samples must be >= 2, got {num_samples}")
    steps = schedule_steps(alphas_cumprod, timesteps)
    dt = law.means.dtype
    d = law.dim
    # prior term: x_T ~ q_T
    aT = steps[0][1].alpha_bar
    x0 = gmm_sample(law, num_samples, generator)
    xT = math.sqrt(aT) * x0 + math.sqrt(1 - aT) * torch.randn(num_samples, d, generator=generator, dtype=dt)
    log_std = -0.5 * ((xT**2).sum(1) + d * math.log(2 * math.pi))
    prior_terms = gmm_logpdf(law, xT, aT) - log_std
    prior = float(prior_terms.mean())
    ng = np.zeros(len(steps))
    mism = {c: np.zeros(len(steps)) for c in covariances}
    per_sample_total = {c: prior_terms.clone() for c in covariances}
    for i, (_, co) in enumerate(steps):
        ng_parts, mm_parts = [], {c: [] for c in covariances}
        for start in range(0, num_samples, chunk):
            n = min(chunk, num_samples - start)
            x0 = gmm_sample(law, n, generator)
            xs = math.sqrt(co.alpha_bar_prev) * x0 + math.sqrt(1 - co.alpha_bar_prev) * torch.randn(n, d, generator=generator, dtype=dt)
            xt = math.sqrt(1 - co.beta) * xs + math.sqrt(co.beta) * torch.randn(n, d, generator=generator, dtype=dt)
            mu = co.c0 * gmm_posterior_mean(law, xt, co.alpha_bar) + co.c1 * xt
            sig = co.beta_tilde * torch.eye(d, dtype=dt) + co.c0**2 * gmm_posterior_covariance(law, xt, co.alpha_bar)
            sig = 0.5 * (sig + sig.transpose(1, 2))
            L = torch.linalg.cholesky(sig)
            sol = torch.linalg.solve_triangular(L, (xs - mu)[:, :, None], upper=False)[:, :, 0]
            log_gauss = -0.5 * ((sol**2).sum(1) + 2 * torch.log(torch.diagonal(L, dim1=1, dim2=2)).sum(1)
                                + d * math.log(2 * math.pi))
            ng_parts.append(gmm_reverse_logpdf(law, xs, xt, co) - log_gauss)
            for c in covariances:
                mm_parts[c].append(gaussian_kl_same_mean(sig, c, co.beta, co.beta_tilde))
        ng_i = torch.cat(ng_parts)
        ng[i] = float(ng_i.mean())
        for c in covariances:
            m_i = torch.cat(mm_parts[c])
            mism[c][i] = float(m_i.mean())
            per_sample_total[c] = per_sample_total[c] + ng_i + m_i
    stderr = {c: float(v.std() / math.sqrt(num_samples)) for c, v in per_sample_total.items()}
    names = list(per_sample_total)
    finite = {c: bool(torch.isfinite(per_sample_total[c]).all()) for c in names}
    # sample covariance (ddof = 1, as the standard errors) of the per-sample totals, over num_samples
    cov = {a: {b: (float(((per_sample_total[a] - per_sample_total[a].mean())
                          * (per_sample_total[b] - per_sample_total[b].mean())).sum()) / (num_samples - 1) / num_samples)
                   if finite[a] and finite[b] else math.inf for b in names} for a in names}
    return PathKL(prior, ng, mism, stderr, cov)
