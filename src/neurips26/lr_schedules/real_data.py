"""Real input for the power-law random-feature theory: scikit-learn's digits.

The theory (the moment dynamics of :mod:`.dynamics`) needs three things of a data set: the spectrum of the feature covariance
``λ_k`` (descending), the target's power on each eigen-direction ``λ_k w*_k²``, and the residual
noise ``σ0²``.  On the power-law task

    λ_k ∝ k^{-α},        λ_k w*_k² ∝ k^{-αβ-1},                                     (inferred)

so that gradient flow learns the target as ``L(t) ∝ t^{-β}``.  This module

1. builds a random-feature regression from the offline ``load_digits`` images
   (:func:`digits_random_features`),
2. measures ``λ_k``, ``λ_k w*_k²``, ``σ0²`` and fits ``α``, ``β`` with standard errors
   (:func:`estimate_power_law`), and
3. runs *real* minibatch SGD on that regression, vectorised over independent repeats
   (:func:`sgd_loss_curve`, :func:`sgd_loss_curves`):

    w_{t+1} = w_t − (η_t / m) Σ_{μ ≤ m} ψ_μ (w_t·ψ_μ − y_μ),   minibatch drawn with replacement.

Conventions (shared with the deterministic dynamics):

* The feature "covariance" is the *uncentred* second-moment matrix ``Σ = Ψᵀ Ψ / n`` — the model
  has no bias, so this is the matrix SGD sees.  Features are scaled so that
  ``tr Σ = Σ_k λ_k = 1`` on the training set; learning rates are then in units of
  ``1 / tr Σ`` (the stability bound for ``m = 1`` is ``η < 2 / (λ_1 + tr Σ)`` ≈ 1.5 here).
* Loss is the plain mean squared error ``L = E (ŷ − y)²`` (no ½).  For the empirical training
  distribution ``L(w) = (w − w*)ᵀ Σ (w − w*) + σ0²`` with ``w*`` the least-squares solution and
  ``σ0²`` its residual, so the theory's ``L_t + σ0²`` is what :func:`sgd_loss_curve` returns with
  ``evaluate_on="train"``; ``evaluate_on="test"`` adds the generalisation gap of held-out data.

References:
    Bordelon & Mori, *Theory of Optimal Learning Rate Schedules and Scaling Laws for a Random
    Feature Model*, arXiv:2602.04774 (2026), abstract (power-law random-feature model).
    Rahimi & Recht, *Random Features for Large-Scale Kernel Machines*, NeurIPS 2007.
    scikit-learn ``sklearn.datasets.load_digits`` (UCI optical digits, 1797 × 64, bundled).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = [
    "RFData",
    "PowerLawFit",
    "digits_random_features",
    "estimate_power_law",
    "eval_steps",
    "sgd_loss_curve",
    "sgd_loss_curves",
]

_KINDS = ("relu", "fourier")
_TARGETS = ("parity", "value")


@dataclass(frozen=True)
class RFData:
    """A random-feature regression problem (all arrays float64).

    Attributes:
        psi_train: ``(n, N)`` training features, scaled so that ``mean_μ |ψ_μ|² = 1``
            (``tr Σ = 1`` for the uncentred covariance ``Σ = ψᵀψ / n``).
        y_train: ``(n,)`` training targets.
        psi_test: ``(n_test, N)`` held-out features (same map and scale as training).
        y_test: ``(n_test,)`` held-out targets.
        description: how the data were made (feature map, target, split), for reports.
    """

    psi_train: np.ndarray
    y_train: np.ndarray
    psi_test: np.ndarray
    y_test: np.ndarray
    description: str = ""

    @property
    def n_features(self) -> int:
        """``N``, the number of random features."""
        return int(self.psi_train.shape[1])

    @property
    def n_train(self) -> int:
        """``n``, the number of training samples."""
        return int(self.psi_train.shape[0])


@dataclass(frozen=True)
class PowerLawFit:
    """Empirical spectrum, target power and fitted power-law exponents of a regression.

    Attributes:
        alpha: fitted ``α`` in ``λ_k ∝ k^{-α}`` (least squares of ``log λ_k`` on ``log k``).
        beta: fitted ``β`` from ``λ_k w*_k² ∝ k^{-(αβ+1)}``: ``β = (a − 1) / α`` with ``a`` the
            fitted target-power exponent.
        alpha_se: standard error of ``alpha`` (OLS, residual scatter about the line).
        beta_se: standard error of ``beta`` (delta method from ``a`` and ``α``, independent).
        target_exponent: ``a = αβ + 1``, the fitted decay exponent of ``λ_k w*_k²``.
        target_exponent_se: its standard error (OLS on log-binned means).
        lambdas: ``(N,)`` eigenvalues of ``Σ = ψᵀψ / n``, descending, clipped at 0.
        target_power: ``(N,)`` ``λ_k w*_k²`` — the target's power on eigen-direction ``k``.
        w_star_eig: ``(N,)`` ``w*_k``, the (ridge-)least-squares weights in the eigenbasis
            (the theory's initial condition ``c_{0,k} = w*_k²`` for ``w_0 = 0``).
        sigma0_sq: ``σ0²`` = mean squared residual ``mean (y − ψ·w*)²`` on the fitted data.
        y_sq_mean: ``mean y²`` — the loss at ``w = 0``.
        k_range_alpha: ``(k_min, k_max)`` (1-based, inclusive) used for the ``α`` fit.
        k_range_target: ``(k_min, k_max)`` used for the target-power fit.
        n_samples: ``n``, number of samples the statistics were computed from.
    """

    alpha: float
    beta: float
    alpha_se: float
    beta_se: float
    target_exponent: float
    target_exponent_se: float
    lambdas: np.ndarray
    target_power: np.ndarray
    w_star_eig: np.ndarray
    sigma0_sq: float
    y_sq_mean: float
    k_range_alpha: tuple[int, int]
    k_range_target: tuple[int, int]
    n_samples: int

    @property
    def noise_floor(self) -> float:
        """``σ̂² / n`` with ``σ̂² = n σ0² / (n − N)``: the per-mode target power pure noise shows.

        Modes whose measured ``λ_k w*_k²`` is near this level carry no resolvable signal, so
        the automatic target fit range stops before them (inferred; least-squares noise of
        variance ``σ²`` in the eigenbasis has ``E v_k² / λ_k = σ² / n``, and the training
        residual ``σ0²`` underestimates ``σ²`` by the factor ``1 − N/n``).
        """
        return self.sigma0_sq / max(self.n_samples - self.lambdas.size, 1)


# --------------------------------------------------------------------------------------------
# 1. Data
# --------------------------------------------------------------------------------------------


def digits_random_features(
    n_features: int,
    seed: int,
    n_train: int | None = None,
    *,
    kind: str = "relu",
    target: str = "parity",
    bandwidth: float = 1.0,
) -> RFData:
    """Random-feature regression built from scikit-learn's bundled digits (offline).

    Steps (all choices documented, inferred — the paper's real-data section uses other data):

    1. ``load_digits`` (1797 images, 64 pixels, classes 0–9); shuffle with ``seed``; the first
       ``n_train`` images train, the rest test.
    2. Subtract the training mean image and put every image on the sphere of radius ``√d``
       (not per-pixel standardisation: near-constant border pixels would blow up to ±30 and
       make a few ``|ψ_μ|²`` 30× the mean, so single SGD steps would diverge far below the
       Gaussian-theory stability bound; on the sphere ``|ψ_μ|²`` stays within 0.7–1.3× its
       mean).
    3. Random features ``ψ(x) = φ(Wᵀx / √d · bandwidth + b)`` with ``W_ij ~ N(0, 1)``,
       ``d = 64``; ``kind="relu"``: ``φ = max(0, ·)``, ``b = 0``; ``kind="fourier"``:
       ``φ = cos``, ``b ~ U[0, 2π)`` (random Fourier features of a Gaussian kernel).
    4. Scale all features by one constant so that ``mean_μ |ψ(x_μ)|² = 1`` on the training
       set, i.e. ``tr Σ = 1`` (learning rates in units of ``1 / tr Σ``).
    5. Target: ``"parity"`` — ``y = +1`` for odd digits, ``−1`` for even ones (balanced,
       ``E y² = 1``); ``"value"`` — the digit value standardised with training mean/std.

    Args:
        n_features: ``N ≥ 1``, number of random features.
        seed: integer seed of the shuffle and of ``W``, ``b`` (fully deterministic).
        n_train: number of training images, ``10 ≤ n_train ≤ 1787`` (at least 10 test images
            remain); ``None`` means 1437 (80 % of 1797).
        kind: ``"relu"`` or ``"fourier"``.
        target: ``"parity"`` or ``"value"``.
        bandwidth: ``> 0``, scale of the random projection (kernel inverse length scale).

    Returns:
        :class:`RFData` with float64 arrays ``psi_train (n, N)``, ``y_train (n,)``,
        ``psi_test (1797 − n, N)``, ``y_test``.

    Raises:
        ValueError: for a non-positive ``n_features`` or ``bandwidth``, an ``n_train`` outside
            ``[10, 1787]``, or an unknown ``kind`` / ``target``.
    """
    from sklearn.datasets import load_digits

    n_features = _check_int("n_features", n_features, lo=1)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {_TARGETS}, got {target!r}")
    if not (np.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth must be a finite number > 0, got {bandwidth!r}")

    X, labels = load_digits(return_X_y=True)
    n_total, d = X.shape
    if n_train is None:
        n_train = int(round(0.8 * n_total))
    n_train = _check_int("n_train", n_train, lo=10, hi=n_total - 10)

    rng = np.random.default_rng(int(seed))
    perm = rng.permutation(n_total)
    X, labels = X[perm].astype(np.float64), labels[perm]
    Xs = X - X[:n_train].mean(axis=0)  # centre with the training mean image
    norms = np.linalg.norm(Xs, axis=1, keepdims=True)
    Xs = Xs / np.where(norms > 0, norms, 1.0) * np.sqrt(d)  # onto the sphere of radius √d

    W = rng.standard_normal((d, n_features))
    pre = (Xs @ W) * (bandwidth / np.sqrt(d))
    if kind == "relu":
        psi = np.maximum(pre, 0.0)
    else:
        psi = np.cos(pre + rng.uniform(0.0, 2.0 * np.pi, size=n_features))
    scale = np.sqrt(np.mean(np.sum(psi[:n_train] ** 2, axis=1)))
    if not scale > 0:  # all-zero ReLU features: cannot happen for N ≥ 1 on digits, but be loud
        raise ValueError("random features are identically zero on the training set")
    psi = psi / scale

    if target == "parity":
        y = np.where(labels % 2 == 1, 1.0, -1.0)
    else:
        mu, sd = labels[:n_train].mean(), labels[:n_train].std()
        y = (labels - mu) / sd
    desc = (
        f"digits (sklearn load_digits), {n_train} train / {n_total - n_train} test, seed {seed}; "
        f"{n_features} {kind} random features (bandwidth {bandwidth}), tr Σ = 1; "
        f"target = {target}"
    )
    return RFData(
        psi_train=np.ascontiguousarray(psi[:n_train]),
        y_train=y[:n_train].astype(np.float64),
        psi_test=np.ascontiguousarray(psi[n_train:]),
        y_test=y[n_train:].astype(np.float64),
        description=desc,
    )


# --------------------------------------------------------------------------------------------
# 2. Spectrum, target power and the power-law fit
# --------------------------------------------------------------------------------------------


def estimate_power_law(
    psi: np.ndarray,
    y: np.ndarray,
    *,
    k_range_alpha: tuple[int, int] | None = None,
    k_range_target: tuple[int, int] | None = None,
    ridge: float = 1e-10,
    bins_per_decade: int = 8,
    floor_factor: float = 3.0,
) -> PowerLawFit:
    """Measure ``λ_k``, ``λ_k w*_k²``, ``σ0²`` of a regression and fit ``α``, ``β``.

    Computation (the task model of :mod:`.task`; the fitting procedure is ours, inferred):

    * ``Σ = ψᵀψ / n = U diag(λ) Uᵀ`` (``numpy.linalg.eigh``; λ descending, clipped at 0).
    * ``v = Uᵀ ψᵀ y / n`` (target–feature correlations in the eigenbasis);
      ridge least squares ``w*_k = v_k / (λ_k + ridge·tr Σ)``; target power
      ``λ_k w*_k²``; residual ``σ0² = mean (y − ψ w*)²``.
    * ``α``: OLS slope of ``log λ_k`` on ``log k`` over ``k_range_alpha``
      (default: ``k = 5 … ⌊N_eff / 2⌋`` with ``N_eff = min(N, n)`` — the top few eigenvalues are
      data-set specific (mean direction, stroke clusters) and the bottom half is distorted by
      finite ``n`` and the end of the spectrum).
    * ``a = αβ + 1``: per-mode powers fluctuate like a χ²₁ variable, so they are averaged in
      log-spaced bins (``bins_per_decade``), the noise floor ``σ0² / (n − N)`` (the mean of
      ``v_k² / λ_k`` for pure residual noise, see :attr:`PowerLawFit.noise_floor`) is subtracted from each bin mean, and ``log`` of
      the result is regressed on ``log`` of the bins' geometric centre.  Default range: from ``k = 5`` up to the last bin
      before the floor-subtracted binned power first drops below ``(floor_factor − 1)`` times
      the noise floor, capped at ``N_eff``.
    * ``β = (a − 1) / α``; ``se(β)² = (se(a)/α)² + ((a − 1) se(α) / α²)²``.

    Args:
        psi: ``(n, N)`` finite features, ``n ≥ 2``, ``N ≥ 8``.
        y: ``(n,)`` finite targets.
        k_range_alpha: optional ``(k_min, k_max)``, 1-based inclusive, ``1 ≤ k_min``,
            ``k_max ≤ N``, at least 3 modes.
        k_range_target: optional ``(k_min, k_max)`` for the target fit, at least 3 bins.
        ridge: ``≥ 0``, relative ridge (times ``tr Σ``) for ``w*``; tiny by default, only to
            keep the solve finite when ``Σ`` is singular.
        bins_per_decade: ``≥ 2``, log-binning resolution of the target power.
        floor_factor: ``> 1``, stop the automatic target range this many times above the
            noise floor.

    Returns:
        :class:`PowerLawFit`.

    Raises:
        ValueError: on wrong shapes or dtypes, non-finite entries, ``N < 8``, an all-zero
            target, an invalid fit range, or fewer than 3 usable points/bins in a fit range
            (e.g. the target power sits in the noise floor from ``k = 5`` on).
    """
    psi, y = _check_xy(psi, y, "psi", "y")
    n, N = psi.shape
    if N < 8:
        raise ValueError(f"need at least 8 features to fit a power law, got N = {N}")
    if n < 2:
        raise ValueError(f"need at least 2 samples, got n = {n}")
    if not (np.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    bins_per_decade = _check_int("bins_per_decade", bins_per_decade, lo=2)
    if not (np.isfinite(floor_factor) and floor_factor > 1):
        raise ValueError(f"floor_factor must be a finite number > 1, got {floor_factor!r}")
    y_sq_mean = float(np.mean(y**2))
    if y_sq_mean == 0.0:
        raise ValueError("y is identically zero: the target power and β are undefined")

    sigma = psi.T @ psi / n
    lam, U = np.linalg.eigh(sigma)
    lam, U = np.clip(lam[::-1], 0.0, None), U[:, ::-1]
    trace = float(lam.sum())
    if trace == 0.0:
        raise ValueError("psi is identically zero: the feature spectrum is empty")
    v = U.T @ (psi.T @ y / n)  # v_k = λ_k w*_k in the ridgeless limit
    denom = lam + ridge * trace
    w_eig = np.divide(v, denom, out=np.zeros_like(v), where=denom > 0)
    target_power = lam * w_eig**2
    resid = y - psi @ (U @ w_eig)
    sigma0_sq = float(np.mean(resid**2))

    n_eff = min(N, n)
    k = np.arange(1, N + 1, dtype=np.float64)

    # ---- α: λ_k ∝ k^{-α} ------------------------------------------------------------------
    ka = _check_range("k_range_alpha", k_range_alpha, N) if k_range_alpha else (5, max(n_eff // 2, 7))
    ka = (min(ka[0], N), min(ka[1], N))
    sel = slice(ka[0] - 1, ka[1])
    pos = lam[sel] > 0
    if pos.sum() < 3:
        raise ValueError(
            f"fewer than 3 positive eigenvalues in k_range_alpha = {ka}; choose a range inside "
            f"the first {int((lam > 0).sum())} modes"
        )
    slope, _, slope_se = _ols(np.log(k[sel][pos]), np.log(lam[sel][pos]))
    alpha, alpha_se = -slope, slope_se

    # ---- a = αβ + 1: λ_k w*_k² ∝ k^{-a}, log-binned ------------------------------------------
    floor = sigma0_sq / max(n - N, 1)  # = σ̂²/n with the unbiased noise estimate σ̂² = n σ0²/(n − N)
    auto = k_range_target is None
    kt = (5, n_eff) if auto else _check_range("k_range_target", k_range_target, N)
    if auto and kt[1] - kt[0] < 2:
        raise ValueError(f"need min(N, n) >= 7 for the automatic target range, got {n_eff}")
    centres, means = _log_bins(target_power, kt, bins_per_decade)
    means = means - floor  # debias: residual noise adds σ0²/n to every v_k²/λ_k on average
    if auto:  # stop before the first bin that sits in the residual-noise floor
        low = np.flatnonzero(means < (floor_factor - 1.0) * floor)
        if low.size:
            cut = int(low[0])
            centres, means = centres[:cut], means[:cut]
            kt = (kt[0], int(_log_bin_edges(kt, bins_per_decade)[cut] - 1))
    good = means > 0
    if good.sum() < 3:
        raise ValueError(
            f"fewer than 3 usable log-bins of the target power in k_range_target = {kt} "
            f"(noise floor σ0²/n = {floor:.3g}); the target's spectrum is not resolved — "
            "use more samples, fewer features, or pass k_range_target explicitly"
        )
    a_slope, _, a_se = _ols(np.log(centres[good]), np.log(means[good]))
    a = -a_slope
    beta = (a - 1.0) / alpha
    beta_se = float(np.hypot(a_se / alpha, (a - 1.0) * alpha_se / alpha**2))
    return PowerLawFit(
        alpha=float(alpha),
        beta=float(beta),
        alpha_se=float(alpha_se),
        beta_se=beta_se,
        target_exponent=float(a),
        target_exponent_se=float(a_se),
        lambdas=lam,
        target_power=target_power,
        w_star_eig=w_eig,
        sigma0_sq=sigma0_sq,
        y_sq_mean=y_sq_mean,
        k_range_alpha=(int(ka[0]), int(ka[1])),
        k_range_target=(int(kt[0]), int(kt[1])),
        n_samples=int(n),
    )


# --------------------------------------------------------------------------------------------
# 3. Real minibatch SGD
# --------------------------------------------------------------------------------------------


def eval_steps(T: int, eval_every: int = 1) -> np.ndarray:
    """Steps at which :func:`sgd_loss_curve` reports the loss: ``0, e, 2e, …`` and always ``T``.

    Returns:
        int64 array, strictly increasing, first ``0``, last ``T``.

    Raises:
        ValueError: ``T < 1`` or ``eval_every < 1``.
    """
    T = _check_int("T", T, lo=1)
    eval_every = _check_int("eval_every", eval_every, lo=1)
    s = np.arange(0, T + 1, eval_every, dtype=np.int64)
    return s if s[-1] == T else np.append(s, T)


def sgd_loss_curves(
    data: RFData,
    eta: np.ndarray,
    batch_size: int,
    seed: int,
    eval_every: int = 1,
    *,
    n_repeats: int = 1,
    evaluate_on: str = "test",
    divergence_factor: float = 1e6,
) -> np.ndarray:
    """Loss curves of ``n_repeats`` independent runs of real minibatch SGD (vectorised).

    ``w_0 = 0``;  for ``t = 0 … T−1``:

        w_{t+1} = w_t − (η_t / m) Σ_{μ ∈ B_t} ψ_μ (w_t·ψ_μ − y_μ),                (minibatch SGD)

    with ``B_t`` ``m`` indices drawn uniformly *with replacement* from the training set
    (independently per step and per repeat).  The loss ``L = mean (ψ·w − y)²`` (no ½) on the
    ``evaluate_on`` set is recorded at :func:`eval_steps` ``(T, eval_every)``.

    Args:
        data: the regression (:func:`digits_random_features` or any :class:`RFData`).
        eta: ``(T,)`` learning rates ``η_0 … η_{T−1}``, finite and ``≥ 0``.
        batch_size: ``m ≥ 1``.
        seed: integer seed of the minibatch draws.
        eval_every: ``≥ 1``, record every this many steps (and at ``T``).
        n_repeats: ``≥ 1`` independent runs, stacked as a ``(R, N)`` weight matrix.
        evaluate_on: ``"test"`` (held-out) or ``"train"`` (the distribution SGD samples from;
            the one the deterministic theory describes).
        divergence_factor: ``> 1``; a run whose minibatch residual exceeds
            ``divergence_factor · sqrt(max(mean y², 1))`` (or is non-finite) counts as diverged.

    Returns:
        ``(n_repeats, len(eval_steps(T, eval_every)))`` float64 losses.

    Raises:
        ValueError: bad shapes/values of ``eta``, ``batch_size``, ``eval_every``,
            ``n_repeats``, ``evaluate_on``, or non-finite data.
        FloatingPointError: SGD diverged — the message names the first step ``t`` and its
            ``η_t`` (lower η or check it against the stability bound ``2 / (λ_1 + tr Σ / m)``).
    """
    psi, y = _check_xy(data.psi_train, data.y_train, "data.psi_train", "data.y_train")
    if evaluate_on == "test":
        psi_ev, y_ev = _check_xy(data.psi_test, data.y_test, "data.psi_test", "data.y_test")
    elif evaluate_on == "train":
        psi_ev, y_ev = psi, y
    else:
        raise ValueError(f"evaluate_on must be 'test' or 'train', got {evaluate_on!r}")
    if psi_ev.shape[1] != psi.shape[1]:
        raise ValueError(
            f"test features have {psi_ev.shape[1]} columns but training features have {psi.shape[1]}"
        )
    eta = np.asarray(eta, dtype=np.float64)
    if eta.ndim != 1 or eta.size < 1:
        raise ValueError(f"eta must be a 1-D array of T >= 1 learning rates, got shape {eta.shape}")
    bad = ~np.isfinite(eta) | (eta < 0)
    if bad.any():
        t_bad = int(np.argmax(bad))
        raise ValueError(f"eta must be finite and >= 0; eta[{t_bad}] = {float(eta[t_bad])!r}")
    m = _check_int("batch_size", batch_size, lo=1)
    R = _check_int("n_repeats", n_repeats, lo=1)
    steps = eval_steps(eta.size, eval_every)
    if not (np.isfinite(divergence_factor) and divergence_factor > 1):
        raise ValueError(f"divergence_factor must be a finite number > 1, got {divergence_factor!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")

    n, N = psi.shape
    T = eta.size
    rng = np.random.default_rng(int(seed))
    limit = divergence_factor * np.sqrt(max(float(np.mean(y**2)), 1.0))
    # precompute the evaluation quadratic form: L(w) = wᵀ S w − 2 wᵀ b + mean y²
    S_ev = psi_ev.T @ psi_ev / psi_ev.shape[0]
    b_ev = psi_ev.T @ y_ev / psi_ev.shape[0]
    y2_ev = float(np.mean(y_ev**2))

    def loss(W: np.ndarray) -> np.ndarray:
        return np.einsum("rn,rn->r", W @ S_ev, W) - 2.0 * (W @ b_ev) + y2_ev

    W = np.zeros((R, N))
    out = np.empty((R, steps.size))
    j = 0
    if steps[0] == 0:
        out[:, 0] = loss(W)
        j = 1
    chunk = 256  # draw minibatch indices in chunks: one RNG call per chunk of steps
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        idx = rng.integers(0, n, size=(t1 - t0, R, m))
        for t in range(t0, t1):
            P = psi[idx[t - t0]]  # (R, m, N)
            r = np.einsum("rmn,rn->rm", P, W) - y[idx[t - t0]]  # residuals (R, m)
            if not np.all(np.abs(r) < limit):  # also catches NaN / inf
                raise FloatingPointError(
                    f"SGD diverged at step t = {t} with eta_t = {eta[t]:.6g} (batch size {m}): "
                    f"minibatch residual {np.max(np.abs(r)):.3g} exceeds {limit:.3g}; lower "
                    "the learning rate below the stability bound 2 / (λ_1 + tr Σ / m)"
                )
            W -= (eta[t] / m) * np.einsum("rmn,rm->rn", P, r)
            while j < steps.size and steps[j] == t + 1:
                out[:, j] = loss(W)
                j += 1
    if not np.all(np.isfinite(out)):
        raise FloatingPointError("SGD produced a non-finite loss at an evaluation step")
    return out


def sgd_loss_curve(
    data: RFData,
    eta: np.ndarray,
    batch_size: int,
    seed: int,
    eval_every: int = 1,
    *,
    n_repeats: int = 1,
    evaluate_on: str = "test",
) -> np.ndarray:
    """Loss ``L = mean (ψ·w − y)²`` of real minibatch SGD at steps ``0, eval_every, …, T``.

    The mean over ``n_repeats`` independent runs of :func:`sgd_loss_curves` (same update,
    conventions, arguments and errors); one run by default.

    Returns:
        ``(len(eval_steps(T, eval_every)),)`` float64.
    """
    return sgd_loss_curves(
        data, eta, batch_size, seed, eval_every, n_repeats=n_repeats, evaluate_on=evaluate_on
    ).mean(axis=0)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _check_int(name: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if lo is not None and v < lo or hi is not None and v > hi:
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be {rng}, got {v}")
    return v


def _check_xy(psi: object, y: object, pname: str, yname: str) -> tuple[np.ndarray, np.ndarray]:
    psi = np.asarray(psi)
    y = np.asarray(y)
    if psi.ndim != 2:
        raise ValueError(f"{pname} must be 2-D (n, N), got shape {psi.shape}")
    if y.ndim != 1 or y.shape[0] != psi.shape[0]:
        raise ValueError(f"{yname} must be 1-D with {psi.shape[0]} entries (rows of {pname}), got shape {y.shape}")
    if not (np.issubdtype(psi.dtype, np.number) and np.issubdtype(y.dtype, np.number)):
        raise ValueError(f"{pname} and {yname} must be numeric, got {psi.dtype} and {y.dtype}")
    psi = psi.astype(np.float64, copy=False)
    y = y.astype(np.float64, copy=False)
    if not np.all(np.isfinite(psi)):
        raise ValueError(f"{pname} contains NaN or inf")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{yname} contains NaN or inf")
    return psi, y


def _check_range(name: str, kr: Sequence[int], N: int) -> tuple[int, int]:
    if len(kr) != 2:
        raise ValueError(f"{name} must be a pair (k_min, k_max), got {kr!r}")
    k0, k1 = (_check_int(name, int(v) if isinstance(v, np.integer) else v) for v in kr)
    if not (1 <= k0 and k1 <= N and k1 - k0 >= 2):
        raise ValueError(f"{name} must satisfy 1 <= k_min, k_max <= N = {N}, k_max - k_min >= 2; got {kr!r}")
    return k0, k1


def _log_bin_edges(kr: tuple[int, int], bins_per_decade: int) -> np.ndarray:
    """Integer bin starts, log-spaced from ``k_min`` to ``k_max + 1`` (the last is an end)."""
    k0, k1 = kr
    nb = max(int(np.ceil(bins_per_decade * np.log10((k1 + 1) / k0))), 1)
    return np.unique(np.floor(np.geomspace(k0, k1 + 1, nb + 1)).astype(np.int64))


def _log_bins(p: np.ndarray, kr: tuple[int, int], bins_per_decade: int) -> tuple[np.ndarray, np.ndarray]:
    """Means of ``p_k`` (1-based k) in log-spaced bins over ``kr``, and the bins' geometric centres."""
    e = _log_bin_edges(kr, bins_per_decade)
    means = np.array([p[s - 1 : t - 1].mean() for s, t in zip(e[:-1], e[1:])])
    centres = np.sqrt(e[:-1] * (e[1:] - 1.0))
    return centres, means


def _ols(x: np.ndarray, z: np.ndarray) -> tuple[float, float, float]:
    """Least-squares line ``z ≈ slope·x + icpt`` via :func:`scipy.stats.linregress`; returns
    ``(slope, icpt, se(slope))``. Fewer than 3 points (no residual degree of freedom): se = inf.

    Raises:
        ValueError: if fewer than 2 points or all x are equal (the slope is undefined).
    """
    from scipy import stats

    x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    if x.size < 2 or np.ptp(x) == 0:
        raise ValueError(f"a line needs >= 2 points with distinct x, got {x.size} point(s)")
    fit = stats.linregress(x, z)
    se = float(fit.stderr) if x.size > 2 else float("inf")
    return float(fit.slope), float(fit.intercept), se
