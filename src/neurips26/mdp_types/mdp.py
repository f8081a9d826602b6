"""Finite MDPs: validation, the state–action pair chain, policy evaluation, sampling, gymnasium tables.

Conventions (used by every module of :mod:`neurips26.mdp_types`):

* ``T`` — transition kernel, shape ``(S, A, S)``, float64, ``T[s, a, s'] = T(s'|s, a)``.
* ``pi`` — stationary policy, shape ``(S, A)``, ``pi[s, a] = π(a|s)``.
* ``r`` — expected reward, shape ``(S, A)``, in a declared range ``[r_min, r_max]``.
* Pairs ``z = (s, a)`` are flattened as ``z = s * A + a``; ``|Z| = S * A``.
* The pair kernel ``P[z, z'] = T(s'|s, a) π(a'|s')``.

References:
    Csiszár (1998), "The method of types", IEEE Trans. IT 44(6) — Markov types.
    Paper 16 (only its abstract was read; objects reconstructed from Csiszár 1998).
"""

from __future__ import annotations

import bisect
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

_ATOL = 1e-8


def validate_kernel(T: np.ndarray, name: str = "T") -> np.ndarray:
    """Check a transition kernel and return it as float64.

    Args:
        T: array ``(S, A, S)``; every row ``T[s, a, :]`` must be a probability vector.

    Returns:
        ``T`` as a float64 array.

    Raises:
        ValueError: wrong shape, negative or non-finite entries, or a row not summing to 1
            (names the first bad ``(s, a)`` and its sum).
    """
    T = np.asarray(T, dtype=float)
    if T.ndim != 3 or T.shape[0] != T.shape[2] or T.shape[0] < 1 or T.shape[1] < 1:
        raise ValueError(f"{name} must have shape (S, A, S) with S, A >= 1; got {T.shape}")
    if not np.all(np.isfinite(T)) or np.any(T < 0):
        bad = np.argwhere(~np.isfinite(T) | (T < 0))[0]
        raise ValueError(f"{name}{tuple(int(i) for i in bad)} = {T[tuple(bad)]!r}; entries must be finite and >= 0")
    sums = T.sum(axis=2)
    if np.any(np.abs(sums - 1) > 1e-6):
        s, a = np.argwhere(np.abs(sums - 1) > 1e-6)[0]
        raise ValueError(f"{name}[{s}, {a}, :] sums to {sums[s, a]:.6g}; each row must sum to 1")
    return T


def validate_policy(pi: np.ndarray, S: int, A: int, name: str = "pi") -> np.ndarray:
    """Check a stationary policy ``(S, A)`` (rows are distributions over actions).

    Raises:
        ValueError: wrong shape, negative/non-finite entries or rows not summing to 1.
    """
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (S, A):
        raise ValueError(f"{name} must have shape (S, A) = {(S, A)}; got {pi.shape}")
    if not np.all(np.isfinite(pi)) or np.any(pi < 0):
        raise ValueError(f"{name} has negative or non-finite entries (min {np.nanmin(pi)!r})")
    sums = pi.sum(axis=1)
    if np.any(np.abs(sums - 1) > 1e-6):
        s = int(np.argmax(np.abs(sums - 1)))
        raise ValueError(f"{name}[{s}, :] sums to {sums[s]:.6g}; each row must sum to 1")
    return pi


def validate_rewards(r: np.ndarray, S: int, A: int, r_range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """Check expected rewards ``(S, A)`` against the declared range ``r_range = (r_min, r_max)``.

    The value bounds of :mod:`.uncertainty` use ``r_range``; a reward outside it would
    invalidate them, so it is an error, not a clip.

    Raises:
        ValueError: wrong shape, non-finite entries, ``r_min > r_max`` or a reward outside the range
            (names the first offending ``(s, a)``).
    """
    r = np.asarray(r, dtype=float)
    lo, hi = float(r_range[0]), float(r_range[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise ValueError(f"r_range = {r_range!r}: need finite r_min <= r_max (the value bounds and the "
                         "vacuous flag use the range)")
    if r.shape != (S, A):
        raise ValueError(f"r must have shape (S, A) = {(S, A)}; got {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError("r has non-finite entries")
    out = (r < lo - 1e-12) | (r > hi + 1e-12)
    if np.any(out):
        s, a = np.argwhere(out)[0]
        raise ValueError(f"r[{s}, {a}] = {r[s, a]:.6g} is outside the declared range [{lo}, {hi}]")
    return r


def validate_gamma(gamma: float) -> float:
    """Check a discount factor: ``0 <= gamma < 1`` (``gamma = 1`` makes ``I - gamma P`` singular).

    Raises:
        ValueError: if ``gamma`` is not in ``[0, 1)``.
    """
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma = {gamma!r}: the discount factor must be a number with 0 <= gamma < 1") from None
    if not (0.0 <= g < 1.0):
        raise ValueError(f"gamma = {gamma!r}: the discount factor must satisfy 0 <= gamma < 1")
    return g


def check_reward_table(r: np.ndarray, S: int, A: int) -> np.ndarray:
    """Check expected rewards have shape ``(S, A)`` and finite entries (no declared range needed).

    Raises:
        ValueError: wrong shape (no silent broadcasting) or non-finite entries.
    """
    r = np.asarray(r, dtype=float)
    if r.shape != (S, A):
        raise ValueError(f"r must have shape (S, A) = {(S, A)}; got {r.shape}")
    if not np.all(np.isfinite(r)):
        s, a = np.argwhere(~np.isfinite(r))[0]
        raise ValueError(f"r[{s}, {a}] = {r[s, a]!r}; rewards must be finite")
    return r


def validate_pair_kernel(P: np.ndarray, name: str = "P") -> np.ndarray:
    """Check a square row-stochastic matrix (a pair kernel) and return it as float64.

    Raises:
        ValueError: not square, empty, negative/non-finite entries or a row not summing to 1.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] < 1:
        raise ValueError(f"{name} must be a square (n, n) matrix with n >= 1; got shape {P.shape}")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(P) | (P < 0))[0])
        raise ValueError(f"{name}{bad} = {P[bad]!r}; entries must be finite and >= 0")
    sums = P.sum(axis=1)
    if np.any(np.abs(sums - 1) > 1e-6):
        z = int(np.argmax(np.abs(sums - 1)))
        raise ValueError(f"{name}[{z}, :] sums to {sums[z]:.6g}; each row must sum to 1")
    return P


def validate_distribution(mu: np.ndarray, n: int, name: str = "mu0") -> np.ndarray:
    """Check a probability vector of length ``n``.

    Raises:
        ValueError: wrong shape, negative/non-finite entries or a sum other than 1.
    """
    mu = np.asarray(mu, dtype=float)
    if mu.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},); got {mu.shape}")
    if not np.all(np.isfinite(mu)) or np.any(mu < 0):
        raise ValueError(f"{name} has negative or non-finite entries: {mu}")
    if abs(mu.sum() - 1) > 1e-6:
        raise ValueError(f"{name} sums to {mu.sum():.6g}; a distribution must sum to 1")
    return mu


def pair_kernel(T: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """The state–action chain's kernel ``P[(s,a),(s',a')] = T(s'|s,a) π(a'|s')`` (standard).

    Args:
        T: ``(S, A, S)`` kernel; pi: ``(S, A)`` policy.

    Returns:
        ``(S*A, S*A)`` row-stochastic float64 matrix.
    """
    T = validate_kernel(T)
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    return (T[:, :, :, None] * pi[None, None, :, :]).reshape(S * A, S * A)


def is_irreducible(P: np.ndarray) -> bool:
    """Whether the row-stochastic matrix ``P`` is irreducible (one strongly connected class).

    Only states with positive probability edges count; a chain on ``n`` states is irreducible
    iff its directed graph has one strongly connected component.
    """
    n, _ = connected_components(csr_matrix(np.asarray(P) > 0), directed=True, connection="strong")
    return n == 1


def stationary_distribution(P: np.ndarray, require_irreducible: bool = True) -> np.ndarray:
    """The stationary law ``μ = μ P`` of a row-stochastic matrix.

    Args:
        P: ``(n, n)`` row-stochastic matrix.
        require_irreducible: raise when ``P`` is not irreducible (``μ`` is then not unique and the
            type/LDP results of the paper do not apply).

    Returns:
        ``(n,)`` probability vector.

    Raises:
        ValueError: if ``P`` is not square row-stochastic, or is reducible and ``require_irreducible``.
    """
    P = validate_pair_kernel(P)
    if require_irreducible and not is_irreducible(P):
        raise ValueError("the chain is not irreducible (absorbing states or unreachable pairs): its "
                         "stationary law is not unique and the method-of-types results need an "
                         "irreducible (ergodic) logging chain")
    n = P.shape[0]
    M = np.vstack([P.T - np.eye(n), np.ones((1, n))])
    b = np.zeros(n + 1)
    b[-1] = 1.0
    mu, *_ = np.linalg.lstsq(M, b, rcond=None)
    mu = np.clip(mu, 0, None)
    return mu / mu.sum()


def policy_evaluation(T: np.ndarray, r: np.ndarray, *, pi: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact discounted values: ``V = (I − γ P^π)^{-1} r^π`` and ``Q = r + γ T V`` (standard).

    Args:
        T: ``(S, A, S)``; r: ``(S, A)``; pi: ``(S, A)``; gamma in ``[0, 1)``. ``pi`` and
            ``gamma`` are keyword-only, as in :func:`~neurips26.mdp_types.pessimistic_values`.

    Returns:
        ``(V, Q)`` with shapes ``(S,)`` and ``(S, A)``.

    Raises:
        ValueError: bad ``gamma``, kernel, policy, or rewards not of shape ``(S, A)`` / non-finite.
    """
    gamma = validate_gamma(gamma)
    T = validate_kernel(T)
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    r = check_reward_table(r, S, A)
    P_pi = np.einsum("sa,sat->st", pi, T)
    r_pi = (pi * r).sum(axis=1)
    V = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi)
    return V, r + gamma * T @ V


def optimal_values(T: np.ndarray, r: np.ndarray, gamma: float, tol: float = 1e-10,
                   max_iter: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Optimal ``(V*, Q*)`` by value iteration (stops when the sup-norm change < ``tol``).

    Raises:
        ValueError: bad ``gamma``, kernel, or rewards not of shape ``(S, A)`` / non-finite.
        RuntimeError: if value iteration has not converged in ``max_iter`` sweeps.
    """
    gamma = validate_gamma(gamma)
    T = validate_kernel(T)
    r = check_reward_table(r, T.shape[0], T.shape[1])
    V = np.zeros(T.shape[0])
    for _ in range(max_iter):
        Q = r + gamma * T @ V
        V_new = Q.max(axis=1)
        if np.max(np.abs(V_new - V)) < tol:
            return V_new, r + gamma * T @ V_new
        V = V_new
    raise RuntimeError(f"value iteration did not converge in {max_iter} sweeps (gamma={gamma})")


def greedy_policy(Q: np.ndarray) -> np.ndarray:
    """Deterministic policy ``(S, A)`` putting mass 1 on ``argmax_a Q[s, a]`` (lowest index on ties).

    Raises:
        ValueError: if ``Q`` is not a 2-D ``(S, A)`` array or holds NaN (argmax would silently pick
            action 0 there).
    """
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[0] < 1 or Q.shape[1] < 1:
        raise ValueError(f"Q must be a 2-D (S, A) array of action values; got shape {Q.shape}")
    if np.isnan(Q).any():
        bad = tuple(int(i) for i in np.argwhere(np.isnan(Q))[0])
        raise ValueError(f"Q holds NaN (first at (s, a) = {bad}); greedy_policy needs comparable values")
    pi = np.zeros_like(Q, dtype=float)
    pi[np.arange(Q.shape[0]), np.argmax(Q, axis=1)] = 1.0
    return pi


def sample_pair_chain(P: np.ndarray, n: int, rng: np.random.Generator, n_chains: int = 1,
                      z0: np.ndarray | None = None, mu0: np.ndarray | None = None) -> np.ndarray:
    """Simulate ``n_chains`` independent paths ``Z_1..Z_n`` of the pair chain, vectorised over chains.

    Args:
        P: ``(Z, Z)`` row-stochastic pair kernel.
        n: path length (number of visited pairs, so ``m = n − 1`` transitions).
        rng: numpy generator.
        n_chains: number of independent paths.
        z0: ``(n_chains,)`` start pairs; else drawn from ``mu0`` (default: stationary law).

    Returns:
        int array ``(n_chains, n)`` of pair indices.

    Raises:
        ValueError: if ``n < 1`` or ``n_chains < 1``, ``P`` is not row-stochastic or ``mu0`` is not a
            distribution.
    """
    if n < 1 or n_chains < 1:
        raise ValueError(f"need n >= 1 and n_chains >= 1; got n={n}, n_chains={n_chains}")
    P = validate_pair_kernel(P)
    Zn = P.shape[0]
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0 + 1e-12
    if z0 is None:
        mu0 = (stationary_distribution(P, require_irreducible=False) if mu0 is None
               else validate_distribution(mu0, Zn, "mu0"))
        z0 = rng.choice(Zn, size=n_chains, p=mu0 / mu0.sum())
    path = np.empty((n_chains, n), dtype=np.int64)
    path[:, 0] = z0
    u = rng.random((n_chains, n - 1))
    for t in range(1, n):
        path[:, t] = (cdf[path[:, t - 1]] < u[:, t - 1, None]).sum(axis=1)
    return path


def check_logging_chain(T: np.ndarray, pi: np.ndarray) -> bool:
    """Warn (``RuntimeWarning``) and return False when the logging pair chain is not irreducible.

    Non-ergodic logging (absorbing states, never-taken actions) voids the LDP and coverage
    results; estimates can still be computed but carry no guarantee.
    """
    # The pair chain is irreducible iff every π(a|s) > 0 and the state chain P^π is irreducible
    # (a pair (s,a) with π(a|s) = 0 is never entered; otherwise reach s by P^π, then take a).
    # Checking the (S, S) chain is ~10x cheaper than the (SA, SA) one (kernel_rate calls this).
    T = validate_kernel(T)
    pi = validate_policy(pi, T.shape[0], T.shape[1])
    ok = bool(np.all(pi > 0)) and is_irreducible(np.einsum("sa,sat->st", pi, T))
    if not ok:
        warnings.warn("the logging state–action chain is not irreducible (absorbing states or actions "
                      "with probability 0): the type bounds, LDP and coverage guarantees do not apply",
                      RuntimeWarning, stacklevel=2)
    return ok


@dataclass(frozen=True)
class TabularMDP:
    """Exact tables of a finite MDP.

    Attributes:
        T: ``(S, A, S)`` kernel.
        r: ``(S, A)`` expected reward ``Σ_{s'} T(s'|s,a) R(s,a,s')``.
        R: ``(S, A, S)`` reward of each transition (what a logged data set observes).
        r_range: declared reward range ``(r_min, r_max)``.
        terminal: ``(S,)`` bool, absorbing terminal states (self-loop, zero reward).
        initial: ``(S,)`` initial-state distribution.
        name: environment id.
    """

    T: np.ndarray
    r: np.ndarray
    R: np.ndarray
    r_range: tuple[float, float]
    terminal: np.ndarray
    initial: np.ndarray
    name: str


def toy_text_mdp(env_id: str = "FrozenLake-v1", **make_kwargs) -> TabularMDP:
    """Exact tables of a gymnasium toy-text environment from ``env.unwrapped.P`` (shipped with gymnasium).

    Terminal transitions become absorbing self-loops with zero reward (the standard episodic
    reading of ``terminated``), so ``T`` is a proper kernel.

    Args:
        env_id: e.g. ``"FrozenLake-v1"`` (pass ``map_name="8x8"``) or ``"Taxi-v4"``.
        make_kwargs: forwarded to ``gymnasium.make``.

    Raises:
        ValueError: if the environment has no tabular ``P`` attribute.
    """
    import gymnasium as gym

    env = gym.make(env_id, **make_kwargs)
    u = env.unwrapped
    if not hasattr(u, "P"):
        raise ValueError(f"{env_id!r} exposes no tabular transition table env.unwrapped.P")
    S, A = int(u.observation_space.n), int(u.action_space.n)
    T = np.zeros((S, A, S))
    r = np.zeros((S, A))
    R = np.zeros((S, A, S))
    terminal = np.zeros(S, dtype=bool)
    rewards = []
    for s in range(S):
        for a in range(A):
            for p, s2, rew, done in u.P[s][a]:
                T[s, a, s2] += p
                r[s, a] += p * rew
                R[s, a, s2] = rew
                rewards.append(rew)
                if done:
                    terminal[s2] = True
    # make terminal states absorbing with zero reward
    for s in np.flatnonzero(terminal):
        T[s] = 0.0
        T[s, :, s] = 1.0
        r[s] = 0.0
        R[s] = 0.0
    init = np.asarray(getattr(u, "initial_state_distrib", np.ones(S) / S), dtype=float)
    env.close()
    return TabularMDP(T=T, r=r, R=R, r_range=(float(min(rewards + [0.0])), float(max(rewards + [0.0]))),
                      terminal=terminal, initial=init / init.sum(), name=env_id)


def log_episodes(env_id: str, behaviour: np.ndarray, n_steps: int, seed: int, **make_kwargs) -> np.ndarray:
    """Log transitions by stepping the real gymnasium environment with a stationary behaviour policy.

    Episodes are restarted with ``env.reset()`` when terminated or truncated; transitions across
    a reset are not recorded, so the returned triples are exactly the environment's transitions.

    Args:
        env_id: gymnasium id (``"FrozenLake-v1"``); behaviour: ``(S, A)`` logging policy.
        n_steps: number of logged transitions; seed: seeds the environment and the policy.

    Returns:
        int array ``(n_steps, 3)`` of ``(s, a, s')`` triples.

    Raises:
        ValueError: if ``n_steps < 1`` or ``behaviour`` has the wrong shape.
    """
    import gymnasium as gym

    if n_steps < 1:
        raise ValueError(f"n_steps = {n_steps}: need at least one transition")
    env = gym.make(env_id, **make_kwargs)
    S, A = int(env.observation_space.n), int(env.action_space.n)
    behaviour = validate_policy(behaviour, S, A, name="behaviour")
    rng = np.random.default_rng(seed)
    # plain Python lists in the loop: bisect_right on a row of the cdf is np.searchsorted(side="right")
    # without numpy's per-call overhead (same floats, same actions)
    cdf = np.cumsum(behaviour, axis=1).tolist()
    u = rng.random(n_steps).tolist()
    out = []
    s, _ = env.reset(seed=seed)
    for t in range(n_steps):
        a = min(bisect.bisect_right(cdf[s], u[t]), A - 1)
        s2, _, terminated, truncated, _ = env.step(a)
        out.append((s, a, int(s2)))
        s = env.reset()[0] if (terminated or truncated) else s2
    env.close()
    return np.array(out, dtype=np.int64).reshape(n_steps, 3)
