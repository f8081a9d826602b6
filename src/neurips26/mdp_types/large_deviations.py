"""Large deviations of learned dynamics and of plug-in value / Q estimators.

The pair type ``Q_n`` satisfies an LDP with rate ``D(Q ‖ Q_1⊗P)`` on balanced ``Q``
(Dembo & Zeitouni, pair empirical measure). By contraction (inferred):

* plug-in kernel ``T̂ = N(s,a,s')/N(s,a)``:
  ``J(T') = inf { D(Q ‖ Q_1⊗P) : Q balanced, Q(s'|s,a) = T'(s'|s,a) }``;
* plug-in value ``V̂ = (I − γ P̂^{π_e})^{-1} r^{π_e}``:
  ``I_V(v) = inf { J(T') : V^{π_e}(T')(s_0) ≥ v }`` (and the same for ``Q̂(s_0, a_0)``).

``J`` is solved two ways:

* ``method="bellman"`` (ours, per-state): the minimising ``Q`` has the form
  ``x(s,a) T'(s'|s,a) ρ(a'|s')`` (mixing the action conditional over predecessors can only lower
  ``D`` by joint convexity), so ``J(T')`` is the optimal average cost of choosing ``ρ`` with
  stage cost ``c(s,a) + log ρ(a|s)/π(a|s)``, ``c(s,a) = KL(T'(·|s,a) ‖ T(·|s,a))``. Its Bellman
  equation is ``J + h(s) = −log Σ_a π(a|s) exp(−c(s,a) − Σ_{s'} T'(s'|s,a) h(s'))``, solved by
  soft policy iteration (fallback: damped relative value iteration; the damping is the
  aperiodicity transform, so it is exact).
* ``method="convex"``: the joint convex program over ``Q`` on the support of ``P`` (cvxpy,
  ``rel_entr`` is jointly convex and ``Q_1`` is linear in ``Q``), for cross-checks.

References:
    Dembo & Zeitouni, *Large Deviations Techniques and Applications*, (LDP of the pair empirical
    measure); Csiszár, Cover & Choi (1987); Mannor & Tsitsiklis (2005). The rates are inferred: the
    abstract names LDPs and variational rate functions but not their form.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import rel_entr

from .mdp import (
    check_logging_chain,
    pair_kernel,
    policy_evaluation,
    stationary_distribution,
    validate_kernel,
    validate_policy,
)


def _support_program(P: np.ndarray):
    """cvxpy pieces for a pair measure ``q`` on the support of ``P`` (edges ``e = (z, z')``)."""
    import cvxpy as cp
    import scipy.sparse as sp

    Zn = P.shape[0]
    rows, cols = np.nonzero(P > 0)
    E = len(rows)
    q = cp.Variable(E, nonneg=True)
    R = sp.csr_matrix((np.ones(E), (rows, np.arange(E))), shape=(Zn, E))
    C = sp.csr_matrix((np.ones(E), (cols, np.arange(E))), shape=(Zn, E))
    q1 = R @ q
    D = cp.sum(cp.rel_entr(q, cp.multiply(q1[rows], P[rows, cols])))
    cons = [cp.sum(q) == 1, R @ q == C @ q]
    return q, q1, D, cons, rows, cols


def _solve(problem, solver: str | None):
    import cvxpy as cp

    try:
        problem.solve(solver=solver or cp.CLARABEL)
    except cp.SolverError:
        problem.solve(solver=cp.SCS, eps=1e-9, max_iters=200_000)
    return problem


def kernel_rate(T_prime: np.ndarray, T: np.ndarray, pi: np.ndarray, method: str = "bellman",
                tau: float = 0.5, tol: float = 1e-10, max_iter: int = 200_000,
                solver: str | None = None) -> float:
    """Rate function ``J(T')`` of the plug-in kernel (nats per transition).

    Args:
        T_prime: ``(S, A, S)`` candidate kernel; T: true kernel; pi: logging policy ``(S, A)``.
        method: ``"bellman"`` (per-state soft Bellman equation: soft policy iteration, falling back
            to damped relative value iteration) or ``"convex"`` (joint cvxpy program).
        tau: damping of the relative value iteration (aperiodicity transform), in ``[0, 1)``.
        tol, max_iter: stopping rule of the iteration (span of the Bellman residual ``< tol``).

    Returns:
        ``J(T') >= 0``; ``inf`` if every recurrent behaviour needs a transition ``T'`` has but
        ``T`` forbids. ``method="bellman"`` also returns ``inf`` when some state has no action of
        finite cost (it cannot tell whether that state is avoidable); use ``"convex"`` there.

    Raises:
        ValueError: bad shapes/kernels or an unknown ``method``.
        RuntimeError: if the iteration does not converge (try ``method="convex"``).

    Warns:
        RuntimeWarning: if the logging pair chain of ``(T, pi)`` is not irreducible (absorbing
            states, e.g. raw episodic tables): the value is still computed, but it is not an LDP rate.
    """
    T = validate_kernel(T)
    T_prime = validate_kernel(T_prime, "T_prime")
    if T_prime.shape != T.shape:
        raise ValueError(f"T_prime {T_prime.shape} and T {T.shape} differ in shape")
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    check_logging_chain(T, pi)      # warns: the LDP needs an irreducible logging chain
    if method == "bellman":
        return _rate_bellman(T_prime, T, pi, tau, tol, max_iter)[0]
    if method == "convex":
        return _rate_convex(T_prime, T, pi, solver)
    raise ValueError(f"method = {method!r}; allowed: 'bellman', 'convex'")


def _rate_bellman(T_prime, T, pi, tau=0.5, tol=1e-10, max_iter=200_000):
    """Solve ``J + h = F(h)``; returns ``(J, h, rho)``.

    Soft policy iteration first (evaluate ``ρ`` exactly by a linear solve, then
    ``ρ ∝ π exp(−c − T'h)``; superlinear), damped relative value iteration as the fallback when
    the evaluation system is singular (several recurrent classes).
    """
    if not 0 <= tau < 1:
        raise ValueError(f"tau = {tau}: need 0 <= tau < 1")
    with np.errstate(divide="ignore"):
        c = np.sum(rel_entr(T_prime, T), axis=2)  # (S, A), inf where T' leaves the support of T
        log_pi = np.log(pi)
    S = T.shape[0]

    def soft(h):
        x = log_pi - c - T_prime @ h
        mx = np.max(x, axis=1)
        with np.errstate(invalid="ignore"):
            F = -(mx + np.log(np.sum(np.exp(x - mx[:, None]), axis=1)))
            rho = np.exp(x - mx[:, None])
        return F, rho / rho.sum(axis=1, keepdims=True)

    if np.any(np.all(~np.isfinite(log_pi - c), axis=1)):
        return np.inf, np.zeros(S), None   # a state with no finite-cost action (see kernel_rate)
    h = np.zeros(S)
    F, rho = soft(h)
    for _ in range(200):
        P_rho = np.einsum("sa,sat->st", rho, T_prime)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.sum(np.where(rho > 0, rho * (c + np.log(rho) - log_pi), 0.0), axis=1)
        M = np.eye(S) - P_rho
        M[:, 0] = 1.0
        try:
            x = np.linalg.solve(M, g)
        except np.linalg.LinAlgError:
            break
        h = np.r_[0.0, x[1:]]
        F, rho = soft(h)
        resid = F - h
        if not np.all(np.isfinite(resid)):
            break
        if resid.max() - resid.min() < tol:
            return float(max(np.mean(resid), 0.0)), h, rho
    h = np.zeros(S)
    for _ in range(max_iter):
        F, rho = soft(h)
        if not np.all(np.isfinite(F)):
            return np.inf, h, None
        resid = F - h
        if resid.max() - resid.min() < tol:
            return float(max(np.mean(resid), 0.0)), h, rho
        h = tau * h + (1 - tau) * F
        h = h - h[0]
    raise RuntimeError(f"relative value iteration did not converge in {max_iter} sweeps; "
                       "use method='convex'")


def _rate_convex(T_prime, T, pi, solver):
    import cvxpy as cp
    import scipy.sparse as sp

    S, A, _ = T.shape
    P = pair_kernel(T, pi)
    q, q1, D, cons, rows, cols = _support_program(P)
    # Q(s'|s,a) = T'(s'|s,a):  Σ_{a'} Q(z, (s',a')) = T'(s'|z) Q_1(z) for every (z, s')
    key = rows * S + cols // A
    M = sp.csr_matrix((np.ones(len(rows)), (key, np.arange(len(rows)))), shape=(S * A * S, len(rows)))
    Tflat = T_prime.reshape(S * A, S)
    # rows of T' that leave the support of T force Q_1(z) = 0
    Tp_on = np.where(T.reshape(S * A, S) > 0, Tflat, 0.0)
    lhs = M @ q
    rhs = cp.multiply(cp.reshape(q1, (S * A, 1), order="C") @ np.ones((1, S)), Tp_on).flatten(order="C")
    cons = cons + [lhs == rhs]
    bad = np.flatnonzero((Tflat * (T.reshape(S * A, S) == 0)).sum(axis=1) > 1e-12)
    if len(bad):
        cons.append(q1[bad] == 0)
    prob = _solve(cp.Problem(cp.Minimize(D), cons), solver)
    if prob.status in ("infeasible", "infeasible_inaccurate"):
        return float("inf")
    return float(max(prob.value, 0.0))


@dataclass(frozen=True)
class TailRate:
    """Rate of the event ``T̂(s'|s,a) ≥ x`` and its optimal change of measure.

    Attributes:
        rate: ``inf { D(Q‖Q_1⊗P) : Q balanced, Q(s'|s,a) ≥ x }``.
        Q: ``(Z, Z)`` minimising pair measure.
        P_tilted: ``(Z, Z)`` its pair kernel ``Q / Q_1`` (rows with ``Q_1 = 0`` copy ``P``).
    """

    rate: float
    Q: np.ndarray
    P_tilted: np.ndarray


def _tail_args(T: np.ndarray, pi: np.ndarray, s: int, a: int, s_next: int, x: float) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(T, pi)`` of a tail-rate call; ValueError when ``(s, a, s')`` is out of range or
    ``x`` is not a transition probability threshold in ``(0, 1]``."""
    T = validate_kernel(T)
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    if not (0 <= s < S and 0 <= a < A and 0 <= s_next < S):
        raise ValueError(f"(s, a, s') = {(s, a, s_next)} out of range for S={S}, A={A}")
    if not 0 < x <= 1:
        raise ValueError(f"x = {x}: a transition probability threshold must lie in (0, 1]")
    return T, pi


def kernel_tail_rate(T: np.ndarray, pi: np.ndarray, s: int, a: int, s_next: int, x: float,
                     solver: str | None = None) -> TailRate:
    """Rate of ``{T̂(s_next|s,a) ≥ x}`` by the joint convex program (cross-check of the per-state solver).

    Raises:
        ValueError: if ``x`` is not in ``(0, 1]`` or indices are out of range.
    """
    import cvxpy as cp

    T, pi = _tail_args(T, pi, s, a, s_next, x)
    S, A, _ = T.shape
    P = pair_kernel(T, pi)
    Zn = S * A
    z0 = s * A + a
    q, q1, D, cons, rows, cols = _support_program(P)
    sel = np.flatnonzero((rows == z0) & (cols // A == s_next))
    if len(sel) == 0:
        return TailRate(float("inf"), np.full((Zn, Zn), np.nan), P)
    cons = cons + [cp.sum(q[sel]) >= x * q1[z0]]
    prob = _solve(cp.Problem(cp.Minimize(D), cons), solver)
    Q = np.zeros((Zn, Zn))
    Q[rows, cols] = np.clip(q.value, 0, None)
    q1v = Q.sum(axis=1)
    Pt = P.copy()
    ok = q1v > 1e-12
    Pt[ok] = Q[ok] / q1v[ok, None]
    return TailRate(float(max(prob.value, 0.0)), Q, Pt)


def iid_kernel_tail_rate(T: np.ndarray, pi: np.ndarray, s: int, a: int, s_next: int, x: float) -> float:
    """Rate of ``{T̂(s_next|s,a) ≥ x}`` **without the pair-type structure**: the i.i.d. (generative-model)
    rate ``μ(s,a) · KL(T'(·|s,a) ‖ T(·|s,a))``, as if ``(s,a)`` were visited exactly ``μ(s,a)·m`` times
    with independent successors (``μ`` the stationary pair law of the logging chain). ``T'`` is the
    I-projection of the row onto ``{q(s_next) ≥ x}`` (``x`` at ``s_next``, the other entries scaled by
    ``(1 − x)/(1 − p)``), so the KL is the binary ``kl(x ‖ p)``, ``p = T(s_next|s,a)``; 0 if ``p ≥ x``.

    A control for :func:`kernel_tail_rate`: it removes the Markov mechanism (random visit counts coupled
    to the transitions through the balance constraint) and keeps everything else.

    Returns:
        the rate in nats per transition; ``inf`` when ``p = 0`` (the event is impossible).

    Raises:
        ValueError: ``x`` not in ``(0, 1]`` or indices out of range.
    """
    T, pi = _tail_args(T, pi, s, a, s_next, x)
    S, A, _ = T.shape
    p = float(T[s, a, s_next])
    if p >= x:
        return 0.0
    if p == 0.0:
        return float("inf")
    mu = stationary_distribution(pair_kernel(T, pi)).reshape(S, A)
    kl = x * np.log(x / p) + (0.0 if x == 1 else (1 - x) * np.log((1 - x) / (1 - p)))
    return float(mu[s, a] * kl)


def tail_probability_is(T: np.ndarray, pi: np.ndarray, s: int, a: int, s_next: int, x: float, m: int,
                        n_paths: int, rng: np.random.Generator, tilted: TailRate | None = None,
                        mix: float = 0.02, chunk: int = 2000) -> tuple[float, float]:
    """Importance-sampling estimate of ``log P(T̂(s_next|s,a) ≥ x)`` after ``m`` transitions.

    The chain starts from its stationary law. Paths are drawn from the optimal exponentially
    tilted chain ``(1 − mix) P* + mix P`` (``P*`` from :func:`kernel_tail_rate`; ``mix`` keeps
    the proposal absolutely continuous) and weighted by the likelihood ratio. Paths where
    ``(s, a)`` is never left count as outside the event (``T̂`` undefined there).

    Returns:
        ``(log_p, rel_se)``: log of the estimate and its relative standard error.

    Raises:
        ValueError: if ``m < 1`` or ``n_paths < 2``.
    """
    from .mdp import sample_pair_chain

    if m < 1 or n_paths < 2:
        raise ValueError(f"need m >= 1 and n_paths >= 2; got m={m}, n_paths={n_paths}")
    S, A, _ = T.shape
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    tilted = tilted or kernel_tail_rate(T, pi, s, a, s_next, x)
    Pq = (1 - mix) * tilted.P_tilted + mix * P
    muq = stationary_distribution(Pq, require_irreducible=False)
    with np.errstate(divide="ignore"):
        logLR = np.where(P > 0, np.log(P) - np.log(np.where(Pq > 0, Pq, 1.0)), -np.inf)
    z0 = s * A + a
    w_all = []
    for start in range(0, n_paths, chunk):
        k = min(chunk, n_paths - start)
        path = sample_pair_chain(Pq, m + 1, rng, n_chains=k, mu0=muq)
        lw = np.log(mu[path[:, 0]]) - np.log(muq[path[:, 0]]) + logLR[path[:, :-1], path[:, 1:]].sum(axis=1)
        from_z0 = path[:, :-1] == z0
        n_z0 = from_z0.sum(axis=1)
        hit = (from_z0 & (path[:, 1:] // A == s_next)).sum(axis=1)
        event = (n_z0 > 0) & (hit >= x * n_z0 - 1e-12)
        w_all.append(np.where(event, lw, -np.inf))
    lw = np.concatenate(w_all)
    peak = np.max(lw)
    if not np.isfinite(peak):
        return float("-inf"), float("inf")
    w = np.exp(lw - peak)
    mean = w.mean()
    se = w.std(ddof=1) / np.sqrt(len(w))
    return float(peak + np.log(mean)), float(se / mean)


def value_rate(v: float, T: np.ndarray, pi: np.ndarray, r: np.ndarray, gamma: float, pi_eval: np.ndarray,
               s0: int, a0: int | None = None, upper: bool = True,
               structure: str = "pair_types") -> tuple[float, np.ndarray]:
    """Variational rate of the plug-in value (or Q) estimator (inferred by contraction of the pair-type LDP).

    ``I_V(v) = inf { J(T') : V^{π_e}(T')(s_0) ≥ v }`` (``upper=True``; ``≤ v`` otherwise), or with
    ``Q^{π_e}(T')(s_0, a_0)`` when ``a0`` is given. The constraint is not convex in ``T'``;
    this is a local solve (SLSQP over softmax logits of the rows of ``T'`` on the support of
    ``T``, started at ``T``), meant for small MDPs.

    ``structure="iid"`` replaces ``J(T')`` by the rate **without the pair-type structure**,
    ``Σ_{s,a} μ(s,a) KL(T'(·|s,a) ‖ T(·|s,a))`` (visit counts fixed at their stationary share,
    independent successors: a generative model), the control of the pair-type rate.

    Returns:
        ``(rate, T_star)``: the rate (0 when ``T`` itself satisfies the event) and the minimiser.

    Raises:
        ValueError: bad inputs (see :func:`policy_evaluation`), a non-finite ``v``, or ``s0``/``a0``
            out of range.
        RuntimeError: if no kernel on the support of ``T`` reaches ``v`` (rate is then +inf; the
            error says so rather than returning a finite number).
    """
    from scipy.optimize import minimize

    T = validate_kernel(T)
    S, A, _ = T.shape
    pi = validate_policy(pi, S, A)
    pi_eval = validate_policy(pi_eval, S, A, "pi_eval")
    policy_evaluation(T, r, pi=pi_eval, gamma=gamma)          # validates r (shape, finite) and gamma
    if not np.isfinite(v):
        raise ValueError(f"v = {v!r}: the level must be a finite number")
    if not 0 <= s0 < S or (a0 is not None and not 0 <= a0 < A):
        raise ValueError(f"(s0, a0) = {(s0, a0)} out of range for S={S}, A={A}")
    if structure not in ("pair_types", "iid"):
        raise ValueError(f"structure = {structure!r}; allowed: 'pair_types', 'iid'")
    sign = 1.0 if upper else -1.0
    mu_sa = stationary_distribution(pair_kernel(T, pi)).reshape(S, A) if structure == "iid" else None

    def target(Tp):
        V, Q = policy_evaluation(Tp, r, pi=pi_eval, gamma=gamma)
        return V[s0] if a0 is None else Q[s0, a0]

    if sign * (target(T) - v) >= 0:
        return 0.0, T
    supp = T > 0
    reach = _extreme_value_on_support(supp, r, pi_eval, gamma, s0, a0, upper)
    if sign * (reach - v) < 0:   # beyond what any kernel on the support gives: no local search needed
        raise RuntimeError(f"no kernel on the support of T reaches the level v = {v}: the rate is +inf (the "
                           f"{'largest' if upper else 'smallest'} value any kernel on the support gives is {reach:.6g})")
    idx = np.argwhere(supp)
    base = np.log(T[supp])

    def unpack(theta):
        L = np.full(T.shape, -np.inf)
        L[supp] = base + theta
        L = L - L.max(axis=2, keepdims=True)
        E = np.exp(L)
        return E / E.sum(axis=2, keepdims=True)

    def obj(th):
        Tp = unpack(th)
        if mu_sa is not None:
            return float(np.sum(mu_sa * np.sum(rel_entr(Tp, T), axis=2)))
        try:
            return _rate_bellman(Tp, T, pi, 0.5, 1e-11, 2_000)[0]
        except RuntimeError:
            # SLSQP can probe near-deterministic kernels (several almost-closed classes): relative
            # value iteration then needs ~1/ε sweeps, so the joint convex program answers instead
            return _rate_convex(Tp, T, pi, None)

    con = {"type": "ineq", "fun": lambda th: sign * (target(unpack(th)) - v)}
    best = None
    for scale in (0.0, 1.0, -1.0):
        th0 = np.zeros(len(idx)) + scale * np.sign(np.arange(len(idx)) % 2 - 0.5)
        res = minimize(obj, th0, constraints=[con], method="SLSQP", options={"maxiter": 500, "ftol": 1e-12})
        if con["fun"](res.x) >= -1e-7 and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise RuntimeError(f"no kernel on the support of T reaches the level v = {v}: the rate is +inf")
    return float(best.fun), unpack(best.x)


def _extreme_value_on_support(supp: np.ndarray, r: np.ndarray, pi_eval: np.ndarray, gamma: float, s0: int,
                              a0: int | None, upper: bool) -> float:
    """sup (``upper``) or inf over kernels T' with support in ``supp`` of V^{π_e}(T')(s_0) (or
    Q(s_0, a_0)): the optimistic/pessimistic Bellman fixed point
    ``V(s) = Σ_a π_e(a|s) [r(s,a) + γ ext_{s' ∈ supp(s,a)} V(s')]`` (all mass on the best successor;
    a γ-contraction). Kernels strictly inside the support approach it, so a level beyond it has
    rate +inf (inferred: standard robust-MDP argument)."""
    ext = np.max if upper else np.min
    fill = -np.inf if upper else np.inf
    V = np.zeros(supp.shape[0])
    for _ in range(100_000):
        W = ext(np.where(supp, V[None, None, :], fill), axis=2)               # (S, A)
        new = (pi_eval * (r + gamma * W)).sum(axis=1)
        if np.max(np.abs(new - V)) <= 1e-13 * max(1.0, np.max(np.abs(new))):
            V = new
            break
        V = new
    W = ext(np.where(supp, V[None, None, :], fill), axis=2)
    return float(V[s0] if a0 is None else r[s0, a0] + gamma * W[s0, a0])


def value_tail_probability_is(v: float, T: np.ndarray, pi: np.ndarray, r: np.ndarray, gamma: float,
                              pi_eval: np.ndarray, s0: int, m: int, n_paths: int, rng: np.random.Generator,
                              T_star: np.ndarray | None = None, mix: float = 0.02,
                              chunk: int = 2000) -> tuple[float, float]:
    """Importance-sampling estimate of ``log P(V̂(s_0) ≥ v)`` for the plug-in value after ``m`` transitions.

    The proposal is the pair chain of the minimiser of :func:`value_rate`: kernel ``T*`` with the
    optimal action law ``ρ*`` from the Bellman solution of ``J(T*)`` (the exponential tilt that
    attains the rate), mixed with ``P`` (weight ``mix``) for absolute continuity. ``V̂`` uses the
    plug-in kernel of each path (unvisited rows uniform, as :func:`plug_in_kernel`).

    Returns:
        ``(log_p, rel_se)``.

    Raises:
        ValueError: if ``m < 1``, ``n_paths < 2`` or ``s0`` is out of range.
    """
    from .mdp import sample_pair_chain

    if m < 1 or n_paths < 2:
        raise ValueError(f"need m >= 1 and n_paths >= 2; got m={m}, n_paths={n_paths}")
    S, A, _ = validate_kernel(T).shape
    if not 0 <= s0 < S:
        raise ValueError(f"s0 = {s0} out of range for S={S}")
    if T_star is None:
        T_star = value_rate(v, T, pi, r, gamma, pi_eval, s0)[1]
    _, _, rho = _rate_bellman(T_star, T, pi)
    P = pair_kernel(T, pi)
    mu = stationary_distribution(P)
    Pq = (1 - mix) * pair_kernel(T_star, rho) + mix * P
    muq = stationary_distribution(Pq, require_irreducible=False)
    with np.errstate(divide="ignore"):
        logLR = np.where(P > 0, np.log(P) - np.log(np.where(Pq > 0, Pq, 1.0)), -np.inf)
    r_pi = (pi_eval * r).sum(axis=1)
    out = []
    for start in range(0, n_paths, chunk):
        k = min(chunk, n_paths - start)
        path = sample_pair_chain(Pq, m + 1, rng, n_chains=k, mu0=muq)
        lw = np.log(mu[path[:, 0]]) - np.log(muq[path[:, 0]]) + logLR[path[:, :-1], path[:, 1:]].sum(axis=1)
        flat = (np.arange(k)[:, None] * (S * A * S) + path[:, :-1] * S + path[:, 1:] // A).ravel()
        N = np.bincount(flat, minlength=k * S * A * S).reshape(k, S, A, S).astype(float)
        n_z = N.sum(axis=3, keepdims=True)
        T_hat = np.where(n_z > 0, N / np.maximum(n_z, 1), 1.0 / S)
        P_pi = np.einsum("sa,ksat->kst", pi_eval, T_hat)
        V = np.linalg.solve(np.eye(S)[None] - gamma * P_pi, np.broadcast_to(r_pi, (k, S))[..., None])[..., 0]
        out.append(np.where(V[:, s0] >= v, lw, -np.inf))
    lw = np.concatenate(out)
    peak = np.max(lw)
    if not np.isfinite(peak):
        return float("-inf"), float("inf")
    w = np.exp(lw - peak)
    return float(peak + np.log(w.mean())), float(w.std(ddof=1) / np.sqrt(len(w)) / w.mean())
