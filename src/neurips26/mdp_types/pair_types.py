"""Pair types of the state–action process and their finite-sample probability bounds.

For a path ``Z_1..Z_n`` of the pair chain (``Z_t = (S_t, A_t)``, ``m = n − 1`` transitions) the
*pair type* is ``Q_n(z, z') = (1/m) Σ_{t<n} 1{Z_t = z, Z_{t+1} = z'}`` with row marginal ``Q_1``.

* Path probability:  ``P(z_1..z_n) = μ0(z_1) exp(m Σ Q log P)``.
* Type-class size:   ``|T_Q| ≤ exp(m H(Q_{2|1}|Q_1))`` (product of multinomials, Whittle).
* Upper bound:       ``P(Q_n = Q) ≤ exp(−m D(Q ‖ Q_1⊗P))``, with the conditional KL
  ``D(Q ‖ Q_1⊗P) = Σ Q(z,z') log[Q(z,z') / (Q_1(z) P(z,z'))]``.
* Lower bound (inferred constant): ``P(Q_n = Q) ≥ min_z μ0(z) (m+1)^{−|Z|²} exp(−m D)`` for
  every realisable type.
* ``D`` splits into a dynamics part ``Σ_{s,a} Q_1(s,a) KL(Q(·|s,a) ‖ T(·|s,a))`` and a policy
  part ``Σ_{s'} Q(s') KL(Q(·|s') ‖ π(·|s'))``.

Option ``cyclic`` (the paper's convention is unknown): the cyclic convention adds the wrap-around pair
``(Z_n, Z_1)`` so the type is balanced (row = column marginal), with ``m = n``. The default is
the *open* convention because the path-probability identity and the bounds above count exactly
the ``n − 1`` transitions the chain makes.

References:
    Csiszár (1998), "The method of types" (Markov types); Davisson, Longo & Sgarro (1981);
    Whittle (1955) for the exact count.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.special import rel_entr, xlogy

from .mdp import validate_distribution, validate_kernel, validate_pair_kernel, validate_policy


def validate_counts(counts: np.ndarray, integer: bool = True, name: str = "counts") -> np.ndarray:
    """Check transition counts ``(S, A, S)`` (``S, A >= 1``): finite, ``>= 0`` and, when ``integer``,
    whole numbers (the radii use ``m = Σ N``; a fractional count would silently change them).

    Returns:
        ``counts`` as float64.

    Raises:
        ValueError: wrong shape, or the first bad entry named with its value.
    """
    N = np.asarray(counts, dtype=float)
    if N.ndim != 3 or N.shape[0] != N.shape[2] or N.shape[0] < 1 or N.shape[1] < 1:
        raise ValueError(f"{name} must have shape (S, A, S) with S, A >= 1; got {N.shape}")
    bad = ~np.isfinite(N) | (N < 0)
    if integer:
        bad |= np.isfinite(N) & (N != np.round(N))
    if np.any(bad):
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        kind = "non-negative integers" if integer else "finite and non-negative"
        raise ValueError(f"{name}{i} = {N[i]!r}; counts must be {kind}")
    return N


def _integer_indices(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind in "iub":
        return x.astype(np.int64)
    xf = np.asarray(x, dtype=float)
    if xf.size and (not np.all(np.isfinite(xf)) or np.any(xf != np.round(xf))):
        v = xf[~np.isfinite(xf) | (xf != np.round(xf))][0]
        raise ValueError(f"{name} must hold integer indices; got {v!r}")
    return xf.astype(np.int64)


def pair_index(states: np.ndarray, actions: np.ndarray, n_actions: int) -> np.ndarray:
    """Flatten ``(s, a)`` to ``z = s * A + a`` (int64, same shape as the inputs)."""
    return np.asarray(states, dtype=np.int64) * n_actions + np.asarray(actions, dtype=np.int64)


def pair_counts(z: np.ndarray, n_pairs: int, cyclic: bool = False) -> np.ndarray:
    """Pair counts ``N(z, z') = Σ_t 1{Z_t = z, Z_{t+1} = z'}`` of one path or a batch of paths.

    Args:
        z: int array ``(n,)`` or ``(batch, n)`` of pair indices in ``[0, n_pairs)``.
        n_pairs: ``|Z| = S·A``.
        cyclic: also count the wrap-around ``(Z_n, Z_1)`` (balanced type, ``m = n``).

    Returns:
        int64 ``(n_pairs, n_pairs)`` or ``(batch, n_pairs, n_pairs)``; the type is ``N / N.sum()``.

    Raises:
        ValueError: paths shorter than 2, non-integer indices, or indices outside ``[0, n_pairs)``.
    """
    z = _integer_indices(z, "pair indices z")
    if z.ndim not in (1, 2):
        raise ValueError(f"z must be a path (n,) or a batch (batch, n); got shape {z.shape}")
    single = z.ndim == 1
    z = np.atleast_2d(z)
    if z.shape[1] < 2:
        raise ValueError(f"a path needs at least 2 pairs to have a transition; got length {z.shape[1]}")
    if z.min() < 0 or z.max() >= n_pairs:
        raise ValueError(f"pair indices must lie in [0, {n_pairs}); got range [{z.min()}, {z.max()}]")
    a, b = z[:, :-1], z[:, 1:]
    if cyclic:
        a = np.concatenate([a, z[:, -1:]], axis=1)
        b = np.concatenate([b, z[:, :1]], axis=1)
    B = z.shape[0]
    flat = (np.arange(B)[:, None] * n_pairs * n_pairs + a * n_pairs + b).ravel()
    N = np.bincount(flat, minlength=B * n_pairs * n_pairs).reshape(B, n_pairs, n_pairs)
    return N[0] if single else N


def transition_counts(triples: np.ndarray, S: int, A: int) -> np.ndarray:
    """Counts ``N(s, a, s')`` from logged ``(s, a, s')`` triples ``(n, 3)`` (episodic data allowed).

    Raises:
        ValueError: wrong shape, non-integer entries, ``S, A < 1`` or indices outside the
            state/action ranges.
    """
    if S < 1 or A < 1:
        raise ValueError(f"need S >= 1 and A >= 1; got S={S}, A={A}")
    x = np.asarray(triples)
    if x.ndim != 2 or x.shape[1] != 3:
        raise ValueError(f"triples must have shape (n, 3) of (s, a, s'); got {x.shape}")
    x = _integer_indices(x, "triples")
    if x.size and (x.min() < 0 or x[:, [0, 2]].max() >= S or x[:, 1].max() >= A):
        raise ValueError(f"triples hold indices outside S={S}, A={A}")
    flat = (x[:, 0] * A + x[:, 1]) * S + x[:, 2]
    return np.bincount(flat, minlength=S * A * S).reshape(S, A, S)


def counts_from_pair_counts(N: np.ndarray, S: int, A: int) -> np.ndarray:
    """Collapse pair counts ``(..., Z, Z)`` to transition counts ``N(s, a, s') = Σ_{a'} N((s,a),(s',a'))``
    of shape ``(..., S, A, S)``."""
    N = np.asarray(N)
    return N.reshape(N.shape[:-2] + (S, A, S, A)).sum(axis=-1)


def plug_in_kernel(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in kernel ``T̂(s'|s,a) = N(s,a,s') / N(s,a)`` (maximum likelihood).

    Unvisited pairs (``N(s,a) = 0``) are never divided by zero: their row is uniform and the
    returned mask marks them, so that callers treat them as "anything in the simplex".

    Args:
        counts: ``(S, A, S)`` non-negative counts.

    Returns:
        ``(T_hat, visited)``: ``(S, A, S)`` kernel and ``(S, A)`` bool mask of visited pairs.

    Raises:
        ValueError: wrong shape, negative or non-finite counts (fractional pseudo-counts are allowed).
    """
    N = validate_counts(counts, integer=False)
    n_sa = N.sum(axis=2)
    visited = n_sa > 0
    T_hat = np.full(N.shape, 1.0 / N.shape[2])
    T_hat[visited] = N[visited] / n_sa[visited][:, None]
    return T_hat, visited


def conditional_kl(Q: np.ndarray, P: np.ndarray) -> float | np.ndarray:
    """Conditional KL ``D(Q ‖ Q_1⊗P) = Σ Q(z,z') log[Q(z,z') / (Q_1(z) P(z,z'))]`` in nats.

    Args:
        Q: ``(..., Z, Z)`` pair type(s) or pair counts (each normalised here); P: ``(Z, Z)`` pair kernel.

    Returns:
        The divergence (float, or array of the batch shape); ``inf`` when ``Q`` has mass where
        ``P`` is zero (the data are impossible under ``P``).

    Raises:
        ValueError: shape mismatch, negative or non-finite entries, an all-zero ``Q``, or a ``P``
            that is not row-stochastic.
    """
    Q = np.asarray(Q, dtype=float)
    P = validate_pair_kernel(P)
    if Q.shape[-2:] != P.shape:
        raise ValueError(f"Q must end in the shape of P; got {Q.shape} and {P.shape}")
    tot = Q.sum(axis=(-2, -1), keepdims=True)
    if not np.all(np.isfinite(Q)) or np.any(Q < 0) or np.any(tot <= 0):
        raise ValueError("Q must be finite and non-negative with positive total mass")
    Q = Q / tot
    ref = Q.sum(axis=-1, keepdims=True) * P
    D = np.sum(rel_entr(Q, ref), axis=(-2, -1))
    return float(D) if D.ndim == 0 else D


def conditional_entropy(Q: np.ndarray) -> float:
    """``H(Q_{2|1} | Q_1) = −Σ Q(z,z') log[Q(z,z') / Q_1(z)]`` (nats) of a pair type or counts.

    Raises:
        ValueError: ``Q`` not square, negative/non-finite, or with no mass.
    """
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise ValueError(f"Q must be a square (Z, Z) pair type; got shape {Q.shape}")
    if not np.all(np.isfinite(Q)) or np.any(Q < 0) or Q.sum() <= 0:
        raise ValueError("Q must be finite and non-negative with positive total mass")
    Q = Q / Q.sum()
    return float(-np.sum(rel_entr(Q, Q.sum(axis=1, keepdims=True) * np.ones_like(Q))))


def entropy_rate(P: np.ndarray, mu: np.ndarray | None = None) -> float:
    """Entropy rate ``H(P) = −Σ_z μ(z) Σ_{z'} P(z,z') log P(z,z')`` (nats per step) of an irreducible chain."""
    from .mdp import stationary_distribution

    P = validate_pair_kernel(P)
    mu = stationary_distribution(P) if mu is None else validate_distribution(mu, P.shape[0], "mu")
    return float(-np.sum(mu[:, None] * xlogy(P, P)))


def kl_decomposition(Q: np.ndarray, T: np.ndarray, pi: np.ndarray) -> tuple[float, float]:
    """Split ``D(Q‖Q_1⊗P)`` into dynamics and policy parts (chain rule of KL).

    Returns:
        ``(dynamics, policy)`` with dynamics ``Σ_{s,a} Q_1(s,a) KL(Q(·|s,a) ‖ T(·|s,a))`` and policy
        ``Σ_{s,a,s'} Q((s,a),s') KL(Q(·|(s,a),s') ‖ π(·|s'))``; they sum to ``D`` exactly.
    """
    T = validate_kernel(T)
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    Q = np.asarray(Q, dtype=float)
    if Q.shape != (S * A, S * A) or not np.all(np.isfinite(Q)) or np.any(Q < 0) or Q.sum() <= 0:
        raise ValueError(f"Q must be a finite non-negative ({S * A}, {S * A}) pair type with mass; got shape {Q.shape}")
    Q = (Q / Q.sum()).reshape(S, A, S, A)
    q1 = Q.sum(axis=(2, 3))
    y = Q.sum(axis=3)  # Q((s,a), s')
    dyn = float(np.sum(rel_entr(y, q1[:, :, None] * T)))
    pol = float(np.sum(rel_entr(Q, y[..., None] * pi[None, None])))
    return dyn, pol


@dataclass(frozen=True)
class TypeBounds:
    """Log-probability bounds for one pair type (natural log).

    Attributes:
        log_upper: ``−m D(Q‖Q_1⊗P)``.
        log_lower: ``−m D − |Z|² log(m+1) − log(1 / min_z μ0(z))`` (constant inferred).
        divergence: ``D(Q‖Q_1⊗P)``.
        m: number of transitions.
    """

    log_upper: float | np.ndarray
    log_lower: float | np.ndarray
    divergence: float | np.ndarray
    m: int | np.ndarray


def type_probability_bounds(N: np.ndarray, P: np.ndarray, mu0: np.ndarray) -> TypeBounds:
    """Upper and lower bounds on ``P(Q_n = Q)`` for the type with pair counts ``N`` (open convention).

    Upper: ``P(Q_n = Q) ≤ exp(−m D(Q‖Q_1⊗P))`` (Csiszár 1998; rigorous: product-of-multinomials
    count times the path probability, summed over start pairs). Lower (inferred constant,
    checked by exact enumeration in the tests): ``P(Q_n = Q) ≥ min μ0 · (m+1)^{−|Z|²} e^{−mD}``.

    Args:
        N: ``(..., Z, Z)`` integer pair counts (one type or a batch), ``m = N.sum() >= 1``.
        P: ``(Z, Z)`` pair kernel; mu0: ``(Z,)`` law of ``Z_1``.

    Raises:
        ValueError: if ``N`` has no transitions, negative or non-integer counts, the shapes
            disagree, ``P`` is not row-stochastic or ``mu0`` is not a distribution.
    """
    N = np.asarray(N)
    P = validate_pair_kernel(P)
    Zn = P.shape[0]
    mu0 = validate_distribution(mu0, Zn, "mu0")
    Nf = np.asarray(N, dtype=float)
    if not np.all(np.isfinite(Nf)) or np.any(Nf < 0) or np.any(Nf != np.round(Nf)):
        raise ValueError("N must hold non-negative integer pair counts")
    m = N.sum(axis=(-2, -1))
    if np.any(m < 1):
        raise ValueError("N must contain at least one transition")
    D = conditional_kl(N, P)
    mu_min = float(np.min(mu0))
    lower = -m * D - Zn**2 * np.log(m + 1) + (np.log(mu_min) if mu_min > 0 else -np.inf)
    return TypeBounds(log_upper=-m * D, log_lower=lower, divergence=D, m=m)


def exact_type_distribution(P: np.ndarray, mu0: np.ndarray, n: int,
                            max_paths: int = 5_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Exact law of the (open) pair type of ``Z_1..Z_n`` by enumerating all ``|Z|^n`` paths.

    Args:
        P: ``(Z, Z)`` pair kernel; mu0: ``(Z,)`` law of ``Z_1``; n: path length (``m = n − 1``).
        max_paths: refuse larger enumerations.

    Returns:
        ``(counts, log_prob)``: ``(K, Z, Z)`` int pair counts of the K distinct realisable types
        and ``(K,)`` their log-probabilities (``logsumexp(log_prob) = 0``).

    Raises:
        ValueError: if ``|Z|^n > max_paths``, ``n < 2``, ``P`` is not row-stochastic or ``mu0`` is
            not a distribution.
    """
    P = validate_pair_kernel(P)
    Zn = P.shape[0]
    mu0 = validate_distribution(mu0, Zn, "mu0")
    if n < 2:
        raise ValueError(f"n = {n}: need at least 2 pairs")
    if Zn**n > max_paths:
        raise ValueError(f"|Z|^n = {Zn}^{n} = {Zn**n} paths exceeds max_paths = {max_paths}")
    paths = np.array(list(itertools.product(range(Zn), repeat=n)), dtype=np.int64)
    with np.errstate(divide="ignore"):
        logP, logmu = np.log(P), np.log(np.asarray(mu0, float))
    lp = logmu[paths[:, 0]] + logP[paths[:, :-1], paths[:, 1:]].sum(axis=1)
    keep = np.isfinite(lp)
    paths, lp = paths[keep], lp[keep]
    N = pair_counts(paths, Zn).reshape(len(paths), -1)
    uniq, inv = np.unique(N, axis=0, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
    starts = bounds[:-1]
    lps = lp[order]
    peak = np.maximum.reduceat(lps, starts)
    log_prob = peak + np.log(np.add.reduceat(np.exp(lps - np.repeat(peak, np.diff(bounds))), starts))
    return uniq.reshape(-1, Zn, Zn), log_prob
