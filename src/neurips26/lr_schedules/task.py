"""The power-law random-feature task and its spectrum (Bordelon & Mori 2026, abstract: a power-law random
feature model).

Features ψ(x) ∈ R^M in their eigenbasis, ⟨ψ_k ψ_l⟩ = δ_kl λ_k; labels y = w*·ψ(x) + σ0 z; the
student sees only the top N features. In the power-law task (Bordelon convention, inferred: it makes the
gradient-flow loss decay as t^{-β})

    λ_k = k^{-α},        λ_k w*_k² = k^{-αβ-1},

so that gradient flow on the full model has loss ∝ t^{-β}. The modes k > N cannot be learned:
their target power is the residual R_N = Σ_{k>N} λ_k w*_k², which enters the SGD dynamics like
extra label noise (σ0² + R_N) and sets the floor of the test loss.

References:
    B. Bordelon, F. Mori. Theory of Optimal Learning Rate Schedules and Scaling Laws for a Random
    Feature Model. arXiv:2602.04774 (2026).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import zeta

__all__ = ["PowerLawTask", "Spectrum"]


@dataclass(frozen=True)
class Spectrum:
    """What the SGD dynamics need: the learned modes' eigenvalues, initial errors and noise.

    Attributes:
        lambdas: (N,) float64, eigenvalues λ_k > 0 of the N learned features (any order).
        c0: (N,) float64, initial per-mode error c_{0,k} = E(w_{0,k} − w*_k)² = w*_k² for w_0 = 0.
        residual: R_N ≥ 0, target power of the unlearnable modes (part of the test loss).
        sigma0_sq: label-noise variance σ0² ≥ 0 (not part of the test loss L, which is the
            excess risk Σ_k λ_k c_k + R_N).

    Raises:
        ValueError: on a non-positive or non-finite eigenvalue, a negative or non-finite c0,
            mismatched shapes, or a negative residual or noise.
    """

    lambdas: np.ndarray
    c0: np.ndarray
    residual: float = 0.0
    sigma0_sq: float = 0.0

    def __post_init__(self) -> None:
        lam = np.asarray(self.lambdas, dtype=np.float64)
        c0 = np.asarray(self.c0, dtype=np.float64)
        if lam.ndim != 1 or lam.size == 0:
            raise ValueError(f"lambdas must be a non-empty 1-d array, got shape {lam.shape}")
        if c0.shape != lam.shape:
            raise ValueError(f"c0 shape {c0.shape} must equal lambdas shape {lam.shape}")
        if not np.all(np.isfinite(lam)) or np.any(lam <= 0):
            raise ValueError(f"lambdas must be finite and > 0; min is {lam.min()!r}")
        if not np.all(np.isfinite(c0)) or np.any(c0 < 0):
            raise ValueError(f"c0 must be finite and >= 0; min is {c0.min()!r}")
        if not np.isfinite(self.residual) or self.residual < 0:
            raise ValueError(f"residual R_N must be finite and >= 0, got {self.residual!r}")
        if not np.isfinite(self.sigma0_sq) or self.sigma0_sq < 0:
            raise ValueError(f"sigma0_sq (label noise σ0²) must be finite and >= 0, got {self.sigma0_sq!r}")
        object.__setattr__(self, "lambdas", lam)
        object.__setattr__(self, "c0", c0)
        object.__setattr__(self, "residual", float(self.residual))
        object.__setattr__(self, "sigma0_sq", float(self.sigma0_sq))

    @property
    def N(self) -> int:
        """Number of learned modes."""
        return int(self.lambdas.size)

    @property
    def noise(self) -> float:
        """Effective additive noise σ0² + R_N in the gradient-noise term (the unlearnable
        residual acts like extra label noise)."""
        return self.sigma0_sq + self.residual

    @property
    def initial_loss(self) -> float:
        """L_0 = Σ_k λ_k c_{0,k} + R_N."""
        return float(self.lambdas @ self.c0 + self.residual)

    @classmethod
    def from_target_power(cls, lambdas: np.ndarray, target_power: np.ndarray, n_learned: int | None = None,
                          sigma0_sq: float = 0.0) -> "Spectrum":
        """Build a spectrum from eigenvalues and target powers λ_k w*_k² (e.g. fitted on real data).

        Args:
            lambdas: (M,) eigenvalues, descending (the student learns the first ``n_learned``).
            target_power: (M,) λ_k w*_k² ≥ 0.
            n_learned: N ≤ M learned modes (default: all); the rest form the residual R_N.
            sigma0_sq: label-noise variance σ0² ≥ 0.

        Raises:
            ValueError: on shape mismatch or ``n_learned`` outside [1, M].
        """
        lam = np.asarray(lambdas, dtype=np.float64)
        tp = np.asarray(target_power, dtype=np.float64)
        if lam.shape != tp.shape or lam.ndim != 1:
            raise ValueError(f"lambdas {lam.shape} and target_power {tp.shape} must be equal 1-d shapes")
        n = lam.size if n_learned is None else int(n_learned)
        if not 1 <= n <= lam.size:
            raise ValueError(f"n_learned must be in [1, {lam.size}], got {n_learned!r}")
        if np.any(lam <= 0):
            raise ValueError(f"lambdas must be > 0; min is {lam.min()!r}")
        return cls(lam[:n], tp[:n] / lam[:n], float(tp[n:].sum()), sigma0_sq)


@dataclass(frozen=True)
class PowerLawTask:
    """The power-law random-feature regression task (α, β, N, M, σ0²).

    Attributes:
        alpha: spectral decay α of λ_k = k^{-α}; α > 1 is required when M is None (unbounded
            modes), since otherwise Σ_k λ_k diverges.
        beta: source exponent β > 0 of λ_k w*_k² = k^{-αβ-1} (β ≤ 0: infinite initial loss).
        N: number of learned features (student dimension), ≥ 1.
        M: mode truncation M ≥ 10 N (so the truncated tail is negligible), or None for unbounded modes (the residual
            R_N is then the Hurwitz zeta ζ(αβ+1, N+1)).
        sigma0_sq: label-noise variance σ0² ≥ 0.

    Raises:
        ValueError: naming the bad value and the allowed range.
    """

    alpha: float
    beta: float
    N: int
    M: int | None = None
    sigma0_sq: float = 0.0

    def __post_init__(self) -> None:
        if not np.isfinite(self.alpha) or self.alpha <= 0:
            raise ValueError(f"alpha must be finite and > 0, got {self.alpha!r}")
        if self.M is None and self.alpha <= 1:
            raise ValueError(f"alpha={self.alpha!r} <= 1 with unbounded modes (M=None): Σλ_k diverges; "
                             "use alpha > 1 or a finite mode truncation M >= 10 N")
        if not np.isfinite(self.beta) or self.beta <= 0:
            raise ValueError(f"beta must be finite and > 0 (beta <= 0 gives an infinite initial loss), "
                             f"got {self.beta!r}")
        if int(self.N) != self.N or self.N < 1:
            raise ValueError(f"N (learned features) must be an integer >= 1, got {self.N!r}")
        if self.M is not None and (int(self.M) != self.M or self.M < 10 * self.N):
            raise ValueError(f"M (mode truncation) must be an integer >= 10 N = {10 * self.N}, got {self.M!r}")
        if not np.isfinite(self.sigma0_sq) or self.sigma0_sq < 0:
            raise ValueError(f"sigma0_sq (label noise σ0²) must be finite and >= 0, got {self.sigma0_sq!r}")

    @property
    def lambdas(self) -> np.ndarray:
        """(N,) float64 eigenvalues λ_k = k^{-α} of the learned modes."""
        return np.arange(1, self.N + 1, dtype=np.float64) ** (-self.alpha)

    @property
    def target_power(self) -> np.ndarray:
        """(N,) float64 λ_k w*_k² = k^{-αβ-1} of the learned modes."""
        return np.arange(1, self.N + 1, dtype=np.float64) ** (-self.alpha * self.beta - 1.0)

    @property
    def residual(self) -> float:
        """R_N = Σ_{N<k≤M} k^{-αβ-1} (M = None: the Hurwitz zeta ζ(αβ+1, N+1))."""
        s = self.alpha * self.beta + 1.0
        if self.M is None:
            return float(zeta(s, self.N + 1))
        k = np.arange(self.N + 1, self.M + 1, dtype=np.float64)
        return float(np.sum(k ** (-s)))

    def spectrum(self) -> Spectrum:
        """The :class:`Spectrum` for the dynamics (w_0 = 0, so c_{0,k} = w*_k² = k^{-αβ-1+α})."""
        lam = self.lambdas
        if lam[-1] <= 0:
            raise ValueError(f"alpha={self.alpha!r}: λ_N = N^-α underflows to 0 in float64 at N={self.N}; "
                             "use a smaller alpha or N")
        return Spectrum(lam, self.target_power / lam, self.residual, self.sigma0_sq)

    def constant_lr_exponent(self) -> float:
        r"""ξ_c of the best *constant* learning rate η_c ∝ T^{-ξ_c}, derived from the moment dynamics:
        ξ_c = β/(β + 1) (and L_T ∝ T^{-β/(β+1)}).

        Derivation (continuous time, O(η²λ²) terms dropped): at constant η each mode relaxes as
        c_k(T) = c_k(0) e^{-2ηλ_k T} + (η s/2m)(1 − e^{-2ηλ_k T}), s = L + σ0² + R_N, so

            L_T ≈ Σ_k k^{-αβ-1} e^{-2ηT k^{-α}} + (η s/2m) Σ_k λ_k ≈ A (ηT)^{-β} + B η

        (bias: the sum over k is Γ(β)/α · (2ηT)^{-β}; noise: Σλ_k converges for α > 1). Minimising
        over η gives η_c ∝ T^{-β/(β+1)}. Valid when the noise s stays > 0 (σ0² + R_N > 0) and
        η T λ_N ≪ 1 (the N learned modes are not exhausted).

        Source: inferred (derived here); the abstract names the optimal constant rate η ∝ T^{-ξ} as a
        baseline without its value.
        """
        return self.beta / (self.beta + 1.0)

    def decaying_schedule_exponent(self) -> float:
        """ξ = 1 − α/(αβ+1): the peak exponent of the optimal *decaying* schedule in the noise-limited
        easy phase (inferred from the functional scaling laws of Li, Wu et al., arXiv:2509.19189; kept
        for comparison — it is not the constant-LR exponent, see :meth:`constant_lr_exponent`)."""
        return 1.0 - self.alpha / (self.alpha * self.beta + 1.0)
