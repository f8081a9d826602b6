"""Composite scores for n i.i.d. observations from a single-observation score s_φ(θ, x, t).

The tall posterior p(θ | x_{1:n}) ∝ λ(θ)^{1−n} Π_j p(θ | x_j). Two published ways to turn the
n single-observation diffused scores s_j = s_φ(θ, x_j, t) into one score at time t:

    Geffner et al. 2023 (F-NPSE), diffused prior (authors' Gaussian code):
        s^G_t(θ) = Σ_j s_j + (1 − n) ∇log λ_t(θ)
    Geffner, sbi ``fnpe`` variant (undiffused prior, weighted):
        s^{G0}_t(θ) = Σ_j s_j + (1 − n) (t_max − t)/t_max ∇log λ(θ)
    Linhart et al. 2024 (GAUSS):
        s^L_t(θ) = Λ_t⁻¹ [Σ_j P̃_j,t s_j + (1 − n) P̃_λ,t ∇log λ_t(θ)],
        Λ_t = Σ_j P̃_j,t + (1 − n) P̃_λ,t,   P̃_·,t = Σ_·⁻¹ + α_t/(1 − α_t) I

(P̃ is the precision of the Gaussian denoising posterior p(θ_0 | θ_t); with exact Gaussian
precisions s^L_t is the exact diffused tall-posterior score.) Annealed Langevin treats each
composite score as the score of a bridging density π_t (see ``gaussian.bridge``).

Shapes: θ ``(b, d)``; single scores ``(b, n, d)``; prior score ``(b, d)``; result ``(b, d)``.

References:
    T. Geffner, G. Papamakarios, A. Mnih, "Compositional score modeling for SBI", ICML 2023.
    J. Linhart et al., "Diffusion posterior sampling for SBI in tall data settings",
    arXiv:2404.07593; sbi 0.27 ``vector_field_adaptor`` (``fnpe``, ``gauss``).
"""

from __future__ import annotations

import warnings

import torch

COMPOSITE_SCORES = ("geffner", "geffner_undiffused", "linhart")


class IndefinitePrecisionWarning(UserWarning):
    """GAUSS's Λ_t was not positive definite; the per-observation precisions were corrected so
    that it is (sbi's correction, see :func:`gauss_score`)."""


def _check(single_scores: torch.Tensor, prior_score: torch.Tensor) -> tuple[int, int, int]:
    if single_scores.ndim != 3:
        raise ValueError(f"single_scores must have shape (b, n, d), got {tuple(single_scores.shape)}")
    b, n, d = single_scores.shape
    if tuple(prior_score.shape) != (b, d):
        raise ValueError(f"prior_score must have shape ({b}, {d}) to match single_scores "
                         f"{tuple(single_scores.shape)}, got {tuple(prior_score.shape)}")
    if not torch.isfinite(single_scores).all():
        raise FloatingPointError("single-observation scores contain NaN or inf (network diverged or "
                                 "theta left the training range)")
    if not torch.isfinite(prior_score).all():
        raise FloatingPointError("prior score contains NaN or inf")
    return b, n, d


def geffner_score(single_scores: torch.Tensor, prior_score_t: torch.Tensor) -> torch.Tensor:
    """s^G_t = Σ_j s_j + (1 − n) ∇log λ_t(θ) with the *diffused* prior score (Geffner et al. 2023).

    Args:
        single_scores: ``(b, n, d)`` diffused single-observation posterior scores at time t.
        prior_score_t: ``(b, d)`` score of the diffused prior λ_t at θ.

    Returns:
        ``(b, d)`` composite score.

    Raises:
        ValueError: shape mismatch. FloatingPointError: NaN/inf inputs.
    """
    _, n, _ = _check(single_scores, prior_score_t)
    return single_scores.sum(1) + (1 - n) * prior_score_t


def geffner_undiffused_score(single_scores: torch.Tensor, prior_score_0: torch.Tensor, t: float,
                             t_max: float) -> torch.Tensor:
    """sbi's ``fnpe``: s = Σ_j s_j + (1 − n) (t_max − t)/t_max ∇log λ(θ), *undiffused* prior.

    Its bridging density can be non-normalisable for narrow priors (check with
    ``gaussian.bridge(..., kind="geffner_undiffused")`` or :func:`estimate_curvature`).

    Raises:
        ValueError: shape mismatch or t outside [0, t_max].
    """
    _, n, _ = _check(single_scores, prior_score_0)
    if not 0 <= t <= t_max:
        raise ValueError(f"t must be in [0, t_max={t_max}], got {t}")
    return single_scores.sum(1) + (1 - n) * ((t_max - t) / t_max) * prior_score_0


def denoising_precision(precision: torch.Tensor, alpha_t: float) -> torch.Tensor:
    """P̃_t = Σ⁻¹ + α_t/(1 − α_t) I, the precision of p(θ_0 | θ_t) for a Gaussian with precision Σ⁻¹
    (Linhart et al. 2024). ``precision``: ``(..., d, d)``. Raises ValueError if α_t ∉ (0, 1)."""
    if not 0 < alpha_t < 1:
        raise ValueError(f"alpha_t must be in (0, 1) (t > 0), got {alpha_t}")
    d = precision.shape[-1]
    return precision + alpha_t / (1 - alpha_t) * torch.eye(d, dtype=precision.dtype, device=precision.device)


def gauss_score(single_scores: torch.Tensor, prior_score_t: torch.Tensor, posterior_precisions: torch.Tensor,
                prior_precision: torch.Tensor, alpha_t: float, repair: bool = True,
                nugget: float = 0.1) -> torch.Tensor:
    """Linhart et al. (GAUSS) composite score s^L_t (module docstring).

    Args:
        single_scores: ``(b, n, d)``; prior_score_t: ``(b, d)`` diffused prior score.
        posterior_precisions: estimates of Σ_j⁻¹, ``(n, d, d)`` or one ``(d, d)`` for all j.
        prior_precision: Σ_λ⁻¹, ``(d, d)``.
        alpha_t: α_t ∈ (0, 1) at the current time.
        repair: if Λ_t is not positive definite (the posterior-precision estimates are too small
            for n observations), correct every per-observation denoising precision P̃_j,t by

                C = Q diag(max(−λ_i, 0)/(n − 1)) Qᵀ + nugget·I,   Λ_t = Q diag(λ) Qᵀ,

            and use P̃_j,t + C in *both* Λ_t and the weighted sum, so that the result is the
            GAUSS score of slightly more concentrated single posteriors and Λ_t + nC is positive
            definite (sbi's ``ensure_lam_positive_definite``). An
            :class:`IndefinitePrecisionWarning` says so. If False, raise instead.
        nugget: the added precision floor (sbi's default 0.1), > 0.

    Returns:
        ``(b, d)`` composite score.

    Raises:
        ValueError: shape mismatch, a nugget <= 0, or Λ_t indefinite with ``repair=False``.

    References:
        sbi 0.27, ``vector_field_adaptor.ensure_lam_positive_definite`` (the correction above).
    """
    b, n, d = _check(single_scores, prior_score_t)
    if not nugget > 0:
        raise ValueError(f"nugget must be > 0, got {nugget!r}")
    pp = posterior_precisions
    if pp.shape == (d, d):
        pp = pp.expand(n, d, d)
    if tuple(pp.shape) != (n, d, d):
        raise ValueError(f"posterior_precisions must have shape ({n}, {d}, {d}) or ({d}, {d}), got {tuple(pp.shape)}")
    if tuple(prior_precision.shape) != (d, d):
        raise ValueError(f"prior_precision must have shape ({d}, {d}), got {tuple(prior_precision.shape)}")
    pt = denoising_precision(pp, alpha_t)                     # (n, d, d)
    pl = denoising_precision(prior_precision, alpha_t)        # (d, d)
    lam = pt.sum(0) + (1 - n) * pl                            # Λ_t = Σ_j P̃_j,t + (1 − n) P̃_λ,t
    lam = 0.5 * (lam + lam.T)
    ev, q = torch.linalg.eigh(lam)
    if ev.min() <= 0:
        if not repair:
            raise ValueError(f"GAUSS precision Lambda_t is not positive definite (smallest eigenvalue "
                             f"{ev.min().item():.4g}) at alpha_t={alpha_t:.4g}; the posterior precision "
                             "estimates are too small for n observations")
        if n == 1:
            raise ValueError("posterior_precisions must be positive definite (n = 1: Lambda_t is the single "
                             f"denoising precision, smallest eigenvalue {ev.min().item():.4g})")
        corr = (q * (torch.clamp(-ev, min=0) / (n - 1))) @ q.T + nugget * torch.eye(d, dtype=lam.dtype)
        warnings.warn(f"GAUSS Lambda_t indefinite (min eigenvalue {ev.min().item():.3g}) at alpha_t={alpha_t:.3g}: "
                      f"added {torch.linalg.eigvalsh(corr).max().item():.3g} (max) to each per-observation "
                      "precision so that it is positive definite", IndefinitePrecisionWarning, stacklevel=2)
        pt = pt + corr                                        # P̃_j,t + C for every j
        lam = lam + n * corr                                  # Λ_t + nC
    weighted = torch.einsum("nij,bnj->bi", pt, single_scores) + (1 - n) * prior_score_t @ pl.T
    return torch.linalg.solve(lam, weighted.T).T


def gaussian_score(mean: torch.Tensor, cov: torch.Tensor):
    """Score of N(mean, cov) as a callable θ ``(b, d)`` → ``(b, d)``: −cov⁻¹(θ − mean).
    Used for the diffused Gaussian prior N(√α_t μ₀, α_t Σ₀ + (1 − α_t) I)."""
    prec = torch.linalg.inv(cov)

    def score(theta: torch.Tensor) -> torch.Tensor:
        return -(theta - mean) @ prec.T

    return score


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """log(1 − e^x) for x ≤ 0, accurate at both ends (Mächler 2012)."""
    return torch.where(x > -0.6931471805599453, torch.log(-torch.expm1(x)), torch.log1p(-torch.exp(x)))


def box_uniform_diffused_score(theta: torch.Tensor, low: torch.Tensor, high: torch.Tensor,
                               alpha_t: float) -> torch.Tensor:
    """Score of the diffused box-uniform prior λ_t, θ_t = √α_t θ_0 + √(1 − α_t) z, θ_0 ~ U(box):

        λ_t(θ) = Π_i [Φ(u_i^a) − Φ(u_i^b)] / (√α_t (b_i − a_i)),   u_i^c = (θ_i − √α_t c_i)/σ_t,
        ∂_i log λ_t(θ) = [φ(u_i^a) − φ(u_i^b)] / (σ_t [Φ(u_i^a) − Φ(u_i^b)]),   σ_t = √(1 − α_t).

    The difference of Φ's is taken in log space on the tail that keeps it accurate (log_ndtr and
    log(1 − e^x)), so the score stays finite far outside the box (≈ −u^b/σ_t there, pulling back
    in), is ≈ 0 deep inside for small t, and tends to the Gaussian −(θ − √α_t c)/σ_t² when the box
    is narrow against σ_t. Undefined at α_t = 1 (t = 0: the box's faces are not differentiable).

    Args:
        theta: ``(b, d)``; low, high: ``(d,)`` with low < high; alpha_t ∈ (0, 1).

    Returns:
        ``(b, d)`` tensor of theta's dtype.

    Raises:
        ValueError: shape mismatch, low ≥ high somewhere, or alpha_t ∉ (0, 1).

    Source: the convolution of a uniform with a Gaussian (standard); sbi 0.27 uses the same density
    (``UniformNormalConvolution``) with a clamp at 1e-30 that zeroes the score far outside the box.
    """
    if not 0 < alpha_t < 1:
        raise ValueError(f"alpha_t must be in (0, 1) (t > 0), got {alpha_t}")
    low = torch.as_tensor(low, dtype=theta.dtype)
    high = torch.as_tensor(high, dtype=theta.dtype)
    if theta.ndim != 2 or low.shape != (theta.shape[1],) or high.shape != low.shape:
        raise ValueError(f"theta must be (b, d) and low/high (d,); got {tuple(theta.shape)}, "
                         f"{tuple(low.shape)}, {tuple(high.shape)}")
    if not bool((high > low).all()):
        raise ValueError(f"box needs low < high in every coordinate; got low={low.tolist()}, high={high.tolist()}")
    sa, sigma = alpha_t ** 0.5, (1.0 - alpha_t) ** 0.5
    ua, ub = (theta - sa * low) / sigma, (theta - sa * high) / sigma        # ua > ub
    right = ub > 0                                      # both in the right tail: use Φ(−ub) − Φ(−ua)
    hi, lo = torch.where(right, -ub, ua), torch.where(right, -ua, ub)     # D = Φ(hi) − Φ(lo), hi > lo
    lhi = torch.special.log_ndtr(hi)
    log_d = lhi + _log1mexp(torch.special.log_ndtr(lo) - lhi)              # log D
    log_phi = lambda u: -0.5 * u * u - 0.9189385332046727                   # noqa: E731  log φ(u)
    return (torch.exp(log_phi(ua) - log_d) - torch.exp(log_phi(ub) - log_d)) / sigma


def estimate_curvature(score_fn, theta: torch.Tensor, eps: float = 1e-3) -> tuple[float, float]:
    """Estimate (m, M) of a bridging density from its score: extreme eigenvalues of −sym(∂s/∂θ)
    by central finite differences at the points ``theta`` ``(b, d)``; returns the minimum of the
    smallest and the maximum of the largest eigenvalue over the points. m ≤ 0 means the bridging
    density is not log-concave there (warn: the rule is then a heuristic)."""
    b, d = theta.shape
    eye = torch.eye(d, dtype=theta.dtype, device=theta.device)
    cols = []
    for i in range(d):
        cols.append((score_fn(theta + eps * eye[i]) - score_fn(theta - eps * eye[i])) / (2 * eps))
    jac = torch.stack(cols, dim=-1)                       # (b, d, d): ∂s_a/∂θ_i
    hess = -0.5 * (jac + jac.transpose(1, 2))
    ev = torch.linalg.eigvalsh(hess)
    return float(ev[:, 0].min()), float(ev[:, -1].max())
