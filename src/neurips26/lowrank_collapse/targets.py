"""Targets and data: Gaussian mixtures with a log-density (for VI) and sample sets (for flow matching).

- :class:`GaussianMixture` — isotropic mixture with ``log_prob`` (torch, differentiable) and
  ``sample``; :func:`eight_gaussians` is the classic 2-D mode-collapse test (8 components of
  std 0.1 on a circle of radius 2).
- :func:`subspace_mixture` — a k-dimensional Gaussian mixture embedded in R^D by a random
  orthonormal map plus small isotropic noise (data on a low-dimensional subspace).
- :func:`moons`, :func:`digits` — scikit-learn's ``make_moons`` and ``load_digits`` (shipped with
  scikit-learn, nothing downloaded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class GaussianMixture:
    """p(x) = Σ_k w_k N(x; μ_k, s² I).

    Attributes:
        means: ``(K, d)`` float64 component means.
        std: the common component standard deviation s > 0.
        weights: ``(K,)`` mixture weights (positive, summing to 1).

    Raises:
        ValueError: bad shapes, s ≤ 0, or weights that are not a probability vector.
    """

    means: np.ndarray
    std: float
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.means = np.asarray(self.means, dtype=np.float64)
        if self.means.ndim != 2 or len(self.means) < 1:
            raise ValueError(f"GaussianMixture: means has shape {self.means.shape}; expected (K >= 1, d)")
        if not (math.isfinite(self.std) and self.std > 0):
            raise ValueError(f"GaussianMixture: std={self.std!r}; allowed: a finite value > 0")
        K = len(self.means)
        w = np.full(K, 1.0 / K) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        if w.shape != (K,) or np.any(w <= 0) or abs(w.sum() - 1) > 1e-9:
            raise ValueError(f"GaussianMixture: weights {w.tolist()} must be {K} positive numbers summing to 1")
        self.weights = w

    @property
    def dim(self) -> int:
        """State dimension d."""
        return self.means.shape[1]

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        """log p(x) for ``x`` of shape ``(B, d)`` (any float dtype) → ``(B,)``, differentiable."""
        mu = torch.as_tensor(self.means, dtype=x.dtype, device=x.device)
        logw = torch.as_tensor(np.log(self.weights), dtype=x.dtype, device=x.device)
        s2 = self.std ** 2
        sq = torch.cdist(x, mu).pow(2)  # (B, K) ‖x − μ_k‖²
        # log N(x; μ, s² I) = −‖x − μ‖²/(2 s²) − (d/2) log(2π s²)
        comp = -sq / (2 * s2) - 0.5 * self.dim * math.log(2 * math.pi * s2)
        return torch.logsumexp(comp + logw, dim=1)

    def sample(self, n: int, generator: torch.Generator | None = None, dtype=torch.float32) -> torch.Tensor:
        """n samples, shape ``(n, d)``, and nothing else (component labels via :meth:`sample_labeled`)."""
        return self.sample_labeled(n, generator, dtype)[0]

    def sample_labeled(self, n: int, generator: torch.Generator | None = None,
                       dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
        """``(x, k)``: n samples ``(n, d)`` and their component indices ``(n,)`` (int64)."""
        if int(n) != n or n < 1:
            raise ValueError(f"GaussianMixture.sample: n={n!r}; allowed: an integer >= 1")
        k = torch.multinomial(torch.as_tensor(self.weights), int(n), replacement=True, generator=generator)
        eps = torch.randn(int(n), self.dim, generator=generator, dtype=torch.float64)
        x = torch.as_tensor(self.means)[k] + self.std * eps
        return x.to(dtype), k


def eight_gaussians(radius: float = 2.0, std: float = 0.1) -> GaussianMixture:
    """Eight equal-weight 2-D components of std ``std`` at angles 2πk/8 on a circle of ``radius``.

    Source: the standard mode-collapse toy of the flow / VI literature (e.g. Grathwohl et al. 2019).
    """
    angles = 2 * np.pi * np.arange(8) / 8
    return GaussianMixture(radius * np.stack([np.cos(angles), np.sin(angles)], 1), std)


@dataclass
class SubspaceData:
    """Samples on a k-dimensional subspace of R^D.

    Attributes:
        x: ``(n, D)`` float32 samples.
        basis: ``(D, k)`` orthonormal basis U of the subspace (x ≈ U y + noise).
        latent: the k-dimensional :class:`GaussianMixture` of y.
    """

    x: torch.Tensor
    basis: np.ndarray
    latent: GaussianMixture


def subspace_mixture(n: int, ambient_dim: int, subspace_dim: int, n_components: int = 6,
                     mean_scale: float = 2.0, component_std: float = 0.5, noise_std: float = 1e-3,
                     rng: np.random.Generator | None = None) -> SubspaceData:
    """A ``subspace_dim``-D Gaussian mixture mapped into R^``ambient_dim`` by a random orthonormal U.

    x = U y + ε, y ~ Σ_k (1/K) N(μ_k, s² I_k), μ_k ~ N(0, mean_scale² I_k), ε ~ N(0, noise_std² I_D).

    Raises:
        ValueError: ``subspace_dim`` not in 1..ambient_dim−1, or non-positive sizes.

    Source: inferred (the synthetic "data on a low-dimensional subspace" used to expose a
    low-rank bias of the flow-matching updates).
    """
    if not 1 <= subspace_dim < ambient_dim:
        raise ValueError(f"subspace_mixture: subspace_dim={subspace_dim}; allowed: 1..{ambient_dim - 1} "
                         f"(strictly below ambient_dim={ambient_dim})")
    if n < 1 or n_components < 1:
        raise ValueError(f"subspace_mixture: n={n}, n_components={n_components}; both must be >= 1")
    rng = np.random.default_rng(0) if rng is None else rng
    U, _ = np.linalg.qr(rng.normal(size=(ambient_dim, subspace_dim)))
    latent = GaussianMixture(mean_scale * rng.normal(size=(n_components, subspace_dim)), component_std)
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    y = latent.sample(n, g, dtype=torch.float64).numpy()
    x = y @ U.T + noise_std * rng.normal(size=(n, ambient_dim))
    return SubspaceData(torch.as_tensor(x, dtype=torch.float32), U, latent)


def moons(n: int, noise: float = 0.05, seed: int = 0) -> torch.Tensor:
    """``n`` points of scikit-learn's ``make_moons`` (standardised to zero mean, unit variance
    per coordinate), float32 ``(n, 2)``."""
    from sklearn.datasets import make_moons

    if n < 2:
        raise ValueError(f"moons: n={n}; allowed: >= 2")
    x, _ = make_moons(n, noise=noise, random_state=seed)
    x = (x - np.array([0.5, 0.25])) / np.array([0.87, 0.50])  # population mean/std of make_moons
    return torch.as_tensor(x, dtype=torch.float32)


def digits() -> torch.Tensor:
    """scikit-learn's 1797 8×8 digits as ``(1797, 64)`` float32, centred and scaled to unit
    average per-pixel variance (shipped with scikit-learn)."""
    from sklearn.datasets import load_digits

    x = load_digits().data.astype(np.float64)
    x = x - x.mean(0)
    x = x / np.sqrt((x ** 2).mean())
    return torch.as_tensor(x, dtype=torch.float32)
