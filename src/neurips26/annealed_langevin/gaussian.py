"""Closed forms in the Gaussian setting (the abstract says all quantities have closed forms there;
the formulas are checked against the first author's public code ``touronc/diffusions-for-sbi``).

Model: prior λ = N(μ₀, Σ₀), likelihood x_j | θ ~ N(θ, Σ_l), j = 1..n. Then

    single posteriors   p(θ | x_j) = N(m_j, S),  S = (Σ₀⁻¹ + Σ_l⁻¹)⁻¹,  m_j = S(Σ_l⁻¹ x_j + Σ₀⁻¹ μ₀)
    tall posterior      p(θ | x_{1:n}) = N(μ_n, S_n),  S_n⁻¹ = Σ_j S_j⁻¹ − (n−1) Σ₀⁻¹
    VP-diffused         p_t(θ | x_j) = N(√α_t m_j, α_t S + (1−α_t) I)

Every function below takes the general form (prior N(μ₀, Σ₀), single posteriors N(m_j, S_j)),
so that the same code serves a Gaussian *fit* of a non-Gaussian problem (the transfer rule).

Bridging densities π_t (Gaussian, given by precision P_t and mean μ_t):

    Geffner, diffused prior:   P_t = Σ_j A_j,t − (n−1) A_λ,t,   A_·,t = (α_t Σ_· + (1−α_t) I)⁻¹
    Geffner, sbi ``fnpe``:     P_t = Σ_j A_j,t − (n−1) w_t Σ₀⁻¹,  w_t = (t_max − t)/t_max
    Linhart (GAUSS, exact precisions): π_t = p_t(θ | x_{1:n}) = N(√α_t μ_n, α_t S_n + (1−α_t) I)

m_t and M_t (strong log-concavity and smoothness) are the extreme eigenvalues of P_t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .schedule import VPSchedule

BRIDGES = ("geffner", "geffner_undiffused", "linhart")


@dataclass(frozen=True)
class GaussianBridge:
    """One Gaussian bridging density π_t = N(mean, inv(precision)).

    Attributes:
        t: diffusion time.
        mean: shape ``(d,)``.
        precision: shape ``(d, d)``, symmetric; positive definite iff π_t is normalisable.
        m: smallest eigenvalue of ``precision`` (strong log-concavity constant m_t).
        M: largest eigenvalue (smoothness constant M_t).
    """

    t: float
    mean: np.ndarray
    precision: np.ndarray
    m: float
    M: float

    @property
    def cov(self) -> np.ndarray:
        """Covariance inv(precision), shape ``(d, d)``. Raises ValueError if not normalisable."""
        if self.m <= 0:
            raise ValueError(f"bridging density at t={self.t:.4g} is not normalisable "
                             f"(smallest precision eigenvalue m_t={self.m:.4g} <= 0)")
        return np.linalg.inv(self.precision)


def _spd(name: str, a, d: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.shape != (d, d):
        raise ValueError(f"{name} must have shape ({d}, {d}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    if not np.allclose(a, a.T, atol=1e-10 * max(1.0, np.abs(a).max())):
        raise ValueError(f"{name} must be symmetric")
    lo = np.linalg.eigvalsh(a).min()
    if lo <= 0:
        raise ValueError(f"{name} must be positive definite (smallest eigenvalue {lo:.4g})")
    return _sym(a)


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + np.swapaxes(a, -1, -2))


@dataclass(frozen=True)
class GaussianFit:
    """Gaussian prior N(μ₀, Σ₀) and n Gaussian single-observation posteriors N(m_j, S_j).

    Exact for the linear-Gaussian model (:meth:`linear_gaussian`); a moment fit otherwise (the
    transfer rule tunes on it). Validated on construction.

    Attributes:
        prior_mean: μ₀, shape ``(d,)``.
        prior_cov: Σ₀, SPD ``(d, d)``.
        post_means: m_j, shape ``(n, d)``.
        post_covs: S_j, SPD, shape ``(n, d, d)`` (a single ``(d, d)`` is broadcast).

    Raises:
        ValueError: shape mismatch, NaN/inf, non-symmetric or non-positive-definite covariance.
    """

    prior_mean: np.ndarray
    prior_cov: np.ndarray
    post_means: np.ndarray
    post_covs: np.ndarray

    def __post_init__(self) -> None:
        mu0 = np.asarray(self.prior_mean, dtype=float)
        if mu0.ndim != 1:
            raise ValueError(f"prior_mean must have shape (d,), got {mu0.shape}")
        if not np.all(np.isfinite(mu0)):
            raise ValueError("prior_mean contains NaN or inf")
        d = mu0.shape[0]
        s0 = _spd("prior_cov", self.prior_cov, d)
        ms = np.asarray(self.post_means, dtype=float)
        if ms.ndim != 2 or ms.shape[1] != d:
            raise ValueError(f"post_means must have shape (n, {d}), got {ms.shape}")
        if ms.shape[0] == 0:
            raise ValueError("need at least one observation (post_means has n = 0 rows)")
        if not np.all(np.isfinite(ms)):
            raise ValueError("post_means contains NaN or inf")
        ss = np.asarray(self.post_covs, dtype=float)
        if ss.shape == (d, d):
            _spd("post_covs", ss, d)
            ss = np.broadcast_to(ss, (ms.shape[0], d, d))
        elif ss.shape == (ms.shape[0], d, d):
            for j in range(ss.shape[0]):
                _spd(f"post_covs[{j}]", ss[j], d)
        else:
            raise ValueError(f"post_covs must have shape ({ms.shape[0]}, {d}, {d}) or ({d}, {d}), got {ss.shape}")
        object.__setattr__(self, "prior_mean", mu0)
        object.__setattr__(self, "prior_cov", s0)
        object.__setattr__(self, "post_means", ms)
        object.__setattr__(self, "post_covs", _sym(np.array(ss)))

    @property
    def n(self) -> int:
        """Number of observations."""
        return self.post_means.shape[0]

    @property
    def d(self) -> int:
        """Parameter dimension."""
        return self.prior_mean.shape[0]

    @classmethod
    def linear_gaussian(cls, prior_mean, prior_cov, likelihood_cov, x) -> "GaussianFit":
        """Exact single posteriors of x | θ ~ N(θ, Σ_l), θ ~ N(μ₀, Σ₀):
        S = (Σ₀⁻¹ + Σ_l⁻¹)⁻¹, m_j = S(Σ_l⁻¹ x_j + Σ₀⁻¹ μ₀).

        Args:
            prior_mean: prior mean μ₀, shape ``(d,)``.
            prior_cov: prior covariance Σ₀, shape ``(d, d)``.
            likelihood_cov: likelihood covariance Σ_l, shape ``(d, d)``.
            x: the ``n`` observations, shape ``(n, d)``.

        Raises:
            ValueError: on shape mismatches, NaN, non-SPD covariances.
        """
        mu0 = np.asarray(prior_mean, dtype=float)
        if mu0.ndim != 1:
            raise ValueError(f"prior_mean must have shape (d,), got {mu0.shape}")
        d = mu0.shape[0]
        s0 = _spd("prior_cov", prior_cov, d)
        sl = _spd("likelihood_cov", likelihood_cov, d)
        x = np.asarray(x, dtype=float)
        if x.ndim != 2 or x.shape[1] != d:
            raise ValueError(f"x must have shape (n, {d}), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains NaN or inf")
        p0, pl = np.linalg.inv(s0), np.linalg.inv(sl)
        S = _sym(np.linalg.inv(p0 + pl))
        means = (S @ (pl @ x.T + (p0 @ mu0)[:, None])).T
        return cls(mu0, s0, means, S)

    def tall_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Exact tall posterior N(μ_n, S_n) ∝ λ^{1−n} Π_j N(m_j, S_j):
        S_n⁻¹ = Σ_j S_j⁻¹ − (n−1)Σ₀⁻¹, μ_n = S_n(Σ_j S_j⁻¹ m_j − (n−1)Σ₀⁻¹μ₀).

        Returns:
            ``(mean (d,), cov (d, d))``.

        Raises:
            ValueError: if S_n⁻¹ is not positive definite (an inconsistent Gaussian fit).
        """
        n = self.n
        p0 = np.linalg.inv(self.prior_cov)
        ps = np.linalg.inv(self.post_covs)
        prec = _sym(ps.sum(0) - (n - 1) * p0)
        lo = np.linalg.eigvalsh(prec).min()
        if lo <= 0:
            raise ValueError("tall-posterior precision sum_j S_j^-1 - (n-1) Sigma0^-1 is not positive "
                             f"definite (smallest eigenvalue {lo:.4g})")
        cov = _sym(np.linalg.inv(prec))
        mean = cov @ (np.einsum("nij,nj->i", ps, self.post_means) - (n - 1) * p0 @ self.prior_mean)
        return mean, cov


def bridge(kind: str, t: float, schedule: VPSchedule, fit: GaussianFit) -> GaussianBridge:
    """The Gaussian bridging density π_t of a composite score (closed form, module docstring).

    Args:
        kind: ``"geffner"`` (diffused prior; authors' code), ``"geffner_undiffused"`` (sbi
            ``fnpe``: undiffused prior score weighted by (t_max − t)/t_max) or ``"linhart"``
            (GAUSS with the exact Gaussian precisions).
        t: diffusion time in [0, 1].
        schedule: the VP schedule (gives α_t and t_max).
        fit: prior and single posteriors, :class:`GaussianFit`.

    Returns:
        :class:`GaussianBridge`. It is returned even when not normalisable (m ≤ 0, mean NaN) so
        callers can report the eigenvalue; :func:`require_normalisable` refuses it.

    Raises:
        ValueError: unknown ``kind``, t outside [0, 1].
    """
    if kind not in BRIDGES:
        raise ValueError(f"kind must be one of {BRIDGES}, got {kind!r}")
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"t must be in [0, 1], got {t!r}")
    n, d = fit.n, fit.d
    a = schedule.alpha(t)
    eye = np.eye(d)
    if kind == "linhart":
        mu_n, s_n = fit.tall_posterior()
        prec = _sym(np.linalg.inv(a * s_n + (1 - a) * eye))
        lin = prec @ (np.sqrt(a) * mu_n)
    else:
        A = np.linalg.inv(a * fit.post_covs + (1 - a) * eye)                    # (n, d, d)
        lin = np.sqrt(a) * np.einsum("nij,nj->i", A, fit.post_means)
        if kind == "geffner":
            Al = np.linalg.inv(a * fit.prior_cov + (1 - a) * eye)
            prec = _sym(A.sum(0) - (n - 1) * Al)
            lin = lin - (n - 1) * np.sqrt(a) * Al @ fit.prior_mean
        else:
            w = (schedule.t_max - t) / schedule.t_max
            p0 = np.linalg.inv(fit.prior_cov)
            prec = _sym(A.sum(0) - (n - 1) * w * p0)
            lin = lin - (n - 1) * w * p0 @ fit.prior_mean
    ev = np.linalg.eigvalsh(prec)
    mean = np.linalg.solve(prec, lin) if ev.min() > 0 else np.full(d, np.nan)
    return GaussianBridge(float(t), mean, prec, float(ev.min()), float(ev.max()))


def require_normalisable(b: GaussianBridge, kind: str = "") -> GaussianBridge:
    """Return ``b`` if m_t > 0, else raise.

    Raises:
        NonNormalisableBridgeError: naming t and the smallest precision eigenvalue.
    """
    if not b.m > 0:
        raise NonNormalisableBridgeError(
            f"{kind or 'bridging'} density at t={b.t:.4g} is not normalisable: its precision has "
            f"smallest eigenvalue m_t={b.m:.4g} <= 0 (typical of the sbi-style undiffused prior with a "
            "narrow prior); use the diffused-prior Geffner score or the Linhart (GAUSS) score")
    return b


class NonNormalisableBridgeError(ValueError):
    """A composite score's bridging density λ_t^{1−n} Π_j p_t(θ|x_j) has no finite integral."""


def w2_gaussian(mean1, cov1, mean2, cov2) -> float:
    """Exact 2-Wasserstein distance between two Gaussians (Bures formula):

        W2² = |μ₁ − μ₂|² + tr(Σ₁ + Σ₂ − 2 (Σ₁^{½} Σ₂ Σ₁^{½})^{½})

    Args: means ``(d,)``, covariances ``(d, d)`` symmetric PSD. Returns W2 (not squared), ≥ 0.
    Raises ValueError on shape mismatch, NaN/inf, or a covariance that is not PSD.

    References: Peyré & Cuturi, Computational Optimal Transport (2019), Gaussian case; cross-checked
    against POT's ``ot.gaussian.bures_wasserstein_distance`` in the tests.
    """
    m1, m2 = np.asarray(mean1, float), np.asarray(mean2, float)
    c1, c2 = _sym(np.asarray(cov1, float)), _sym(np.asarray(cov2, float))
    if m1.shape != m2.shape or c1.shape != c2.shape or c1.shape != (m1.shape[0],) * 2:
        raise ValueError(f"shape mismatch: means {m1.shape}, {m2.shape}; covs {c1.shape}, {c2.shape}")
    for name, a in (("mean1", m1), ("cov1", c1), ("mean2", m2), ("cov2", c2)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN or inf")
    for name, c in (("cov1", c1), ("cov2", c2)):
        ev = np.linalg.eigvalsh(c)
        if ev[0] < -1e-8 * max(1.0, abs(ev[-1])):
            raise ValueError(f"{name} must be positive semi-definite (smallest eigenvalue {ev[0]:.4g})")
    r1 = _psd_sqrt(c1)
    cross = _psd_sqrt(_sym(r1 @ c2 @ r1))
    w2sq = float(np.sum((m1 - m2) ** 2) + np.trace(c1 + c2 - 2 * cross))
    return float(np.sqrt(max(w2sq, 0.0)))


def _psd_sqrt(c: np.ndarray) -> np.ndarray:
    ev, q = np.linalg.eigh(c)
    return (q * np.sqrt(np.clip(ev, 0, None))) @ q.T


def ald_output(mean0, cov0, bridges, step_sizes, n_steps, score_bias=None):
    """Exact law of annealed Langevin on Gaussian bridging densities (no sampling).

    At level ℓ the score is affine, s(θ) = −P_ℓ(θ − μ_ℓ) + δ_ℓ (``score_bias`` models a constant
    score error), so one ULA step θ ← θ + h s(θ) + √(2h) ξ maps N(m, C) to
    N((I − hP)m + h(Pμ + δ), (I − hP) C (I − hP) + 2h I). K steps in P's eigenbasis
    (B = I − hP = Q diag(b) Qᵀ):

        C_K = B^K C_0 B^K + 2h Q diag((1 − b^{2K}) / (1 − b²)) Qᵀ,
        m_K = B^K m_0 + (I − B^K)(μ + P⁻¹δ).

    Args:
        mean0, cov0: initial law, ``(d,)`` and ``(d, d)`` (ALD starts from N(0, I)).
        bridges: sequence of :class:`GaussianBridge` in sampling order.
        step_sizes: h_ℓ per level, shape ``(L,)``; each must satisfy 0 < h_ℓ < 2/M_ℓ.
        n_steps: K_ℓ per level (integers ≥ 0), shape ``(L,)``.
        score_bias: None or ``(d,)`` constant error added to every score evaluation.

    Returns:
        ``(mean (d,), cov (d, d))`` of the final iterate.

    Raises:
        ValueError: length mismatch, non-normalisable level, or h_ℓ ≥ 2/M_ℓ (the iteration
            diverges).
    """
    m = np.asarray(mean0, float).copy()
    c = _sym(np.asarray(cov0, float))
    d = m.shape[0]
    hs = np.broadcast_to(np.asarray(step_sizes, float), (len(bridges),))
    ks = np.broadcast_to(np.asarray(n_steps), (len(bridges),))
    delta = np.zeros(d) if score_bias is None else np.asarray(score_bias, float)
    for b, h, k in zip(bridges, hs, ks):
        require_normalisable(b)
        if not 0 < h < 2.0 / b.M:
            raise ValueError(f"step size h={h:.4g} at t={b.t:.4g} is outside (0, 2/M_t={2.0 / b.M:.4g}): "
                             "the Langevin iteration diverges")
        ev, q = np.linalg.eigh(b.precision)
        bb = 1.0 - h * ev
        bk = bb ** int(k)
        Bk = (q * bk) @ q.T
        target = b.mean + np.linalg.solve(b.precision, delta)
        m = Bk @ m + (np.eye(d) - Bk) @ target
        c = _sym(Bk @ c @ Bk + 2 * h * (q * ((1 - bk**2) / (1 - bb**2))) @ q.T)
    return m, c


def reverse_sde_output(mean0, cov0, bridges, schedule: VPSchedule, score_bias=None):
    """Exact law of the Euler–Maruyama reverse VP SDE driven by a composite (affine) score.

        θ ← θ + Δ_k β(t_k) [½ θ + s_{t_k}(θ)] + √(β(t_k) Δ_k) ξ,   s_t(θ) = −P_t(θ − μ_t) + δ

    from t_max down to t_min over the times of ``bridges`` (Δ_k = t_k − t_{k+1}; the last bridge
    only ends the grid). This is the baseline whose bias does not vanish with more steps when the
    composite score is not the score of the diffused tall posterior (abstract).

    Returns:
        ``(mean (d,), cov (d, d))``.
    """
    m = np.asarray(mean0, float).copy()
    c = _sym(np.asarray(cov0, float))
    d = m.shape[0]
    delta = np.zeros(d) if score_bias is None else np.asarray(score_bias, float)
    eye = np.eye(d)
    for b, b_next in zip(bridges[:-1], bridges[1:]):
        require_normalisable(b)
        dt = b.t - b_next.t
        beta = float(schedule.beta(b.t))
        F = eye + dt * beta * (0.5 * eye - b.precision)
        m = F @ m + dt * beta * (b.precision @ b.mean + delta)
        c = _sym(F @ c @ F.T + beta * dt * eye)
    return m, c
