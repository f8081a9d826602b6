"""A non-Gaussian test problem with exact scores and exact reference posterior: Gaussian-mixture
prior λ = Σ_k w_k N(μ_k, Σ_k), likelihood x_j | θ ~ N(θ, Σ_l).

Single posteriors, their VP-diffused versions, the diffused prior and the tall posterior are all
Gaussian mixtures (conjugacy), so the composite scores use exact single scores (no network) and
the reference posterior is sampled exactly. Used to test whether Gaussian-tuned ALD
hyperparameters transfer to a non-Gaussian (possibly bimodal) posterior. (Our construction.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class MixtureModel:
    """Attributes: weights ``(K,)`` summing to 1; means ``(K, d)``; covs ``(K, d, d)`` SPD;
    likelihood_cov ``(d, d)`` SPD. Raises ValueError on bad shapes/values."""

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    likelihood_cov: np.ndarray

    def __post_init__(self) -> None:
        w, mu, c, sl = (np.asarray(a, float) for a in (self.weights, self.means, self.covs, self.likelihood_cov))
        if w.ndim != 1 or np.any(w <= 0) or abs(w.sum() - 1) > 1e-9:
            raise ValueError(f"weights must be positive and sum to 1, got {w}")
        K, d = mu.shape
        if w.shape[0] != K or c.shape != (K, d, d) or sl.shape != (d, d):
            raise ValueError(f"shape mismatch: weights {w.shape}, means {mu.shape}, covs {c.shape}, "
                             f"likelihood_cov {sl.shape}")
        for name, v in (("weights", w), ("means", mu), ("covs", c), ("likelihood_cov", sl)):
            object.__setattr__(self, name, v)

    @property
    def d(self) -> int:
        """Parameter dimension."""
        return self.means.shape[1]

    def prior_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``(d,)`` and covariance ``(d, d)`` of the prior mixture."""
        return _moments(self.weights, self.means, self.covs)

    def posterior(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact posterior given observations ``x`` ``(n, d)``: mixture (weights, means, covs).

        Π_j N(x_j; θ, Σ_l) ∝ N(θ; x̄, Σ_l/n), so component k becomes N(m_k, S_k) with
        S_k = (Σ_k⁻¹ + nΣ_l⁻¹)⁻¹, m_k = S_k(Σ_k⁻¹μ_k + nΣ_l⁻¹x̄), weight ∝ w_k N(x̄; μ_k, Σ_k + Σ_l/n).
        """
        x = np.atleast_2d(np.asarray(x, float))
        n = x.shape[0]
        xbar = x.mean(0)
        pl = np.linalg.inv(self.likelihood_cov)
        logw, ms, ss = [], [], []
        for w, mu, c in zip(self.weights, self.means, self.covs):
            pk = np.linalg.inv(c)
            s = np.linalg.inv(pk + n * pl)
            ms.append(s @ (pk @ mu + n * pl @ xbar))
            ss.append(0.5 * (s + s.T))
            cc = c + self.likelihood_cov / n
            diff = xbar - mu
            logw.append(np.log(w) - 0.5 * diff @ np.linalg.solve(cc, diff) - 0.5 * np.linalg.slogdet(cc)[1])
        logw = np.array(logw)
        wts = np.exp(logw - logw.max())
        return wts / wts.sum(), np.array(ms), np.array(ss)

    def sample_posterior(self, x: np.ndarray, num: int, rng: np.random.Generator) -> np.ndarray:
        """Exact samples ``(num, d)`` of p(θ | x_{1:n})."""
        w, ms, ss = self.posterior(x)
        k = rng.choice(len(w), size=num, p=w)
        z = rng.standard_normal((num, self.d))
        chol = np.linalg.cholesky(ss)
        return ms[k] + np.einsum("nij,nj->ni", chol[k], z)

    def simulate(self, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """n observations x_j ~ N(θ, Σ_l), shape ``(n, d)``."""
        return rng.multivariate_normal(theta, self.likelihood_cov, size=n)


def _moments(w, ms, ss):
    mean = np.einsum("k,ki->i", w, ms)
    diff = ms - mean
    cov = np.einsum("k,kij->ij", w, ss) + np.einsum("k,ki,kj->ij", w, diff, diff)
    return mean, 0.5 * (cov + cov.T)


def single_posterior_moments(model: MixtureModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact means ``(n, d)`` and covariances ``(n, d, d)`` of each p(θ | x_j) (the Gaussian fit)."""
    out = [_moments(*model.posterior(xj[None])) for xj in np.atleast_2d(x)]
    return np.array([o[0] for o in out]), np.array([o[1] for o in out])


def diffused_mixture_score(weights, means, covs, alpha: float):
    """Score of VP-diffused mixtures Σ_k w_jk N(√α μ_jk, αΣ_jk + (1 − α)I), one per row j.

    Args: weights ``(J, K)``, means ``(J, K, d)``, covs ``(J, K, d, d)`` (torch float64);
        alpha: α_t ∈ (0, 1].

    Returns:
        callable θ ``(b, J, d)`` → score ``(b, J, d)`` (row j of θ scored under mixture j).
    """
    d = means.shape[-1]
    c = alpha * covs + (1 - alpha) * torch.eye(d, dtype=covs.dtype)
    prec = torch.linalg.inv(c)                                          # (J, K, d, d)
    logdet = torch.linalg.slogdet(c)[1]                                 # (J, K)
    mu = float(np.sqrt(alpha)) * means                                  # (J, K, d)
    logw = torch.log(weights)

    def score(theta: torch.Tensor) -> torch.Tensor:
        diff = theta[:, :, None, :] - mu[None]                          # (b, J, K, d)
        pd = torch.einsum("jkil,bjkl->bjki", prec, diff)
        logp = logw[None] - 0.5 * (diff * pd).sum(-1) - 0.5 * logdet[None]
        r = torch.softmax(logp, dim=-1)                                 # (b, J, K)
        return -(r.unsqueeze(-1) * pd).sum(-2)

    return score
