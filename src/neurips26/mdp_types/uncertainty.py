"""KL uncertainty sets around the plug-in kernel, pessimistic V/Q, tests, and baseline sets.

**KL set** (brief §2; direction and radius are the brief's; both are options here):

    U_n(δ) = { T' : Σ_{s,a} Q̂_1(s,a) KL(T̂(·|s,a) ‖ T'(·|s,a)) ≤ r_n },
    r_n = [log(1/δ) + |Z|² log(m+1)] / m          (radius="pair_types").

Coverage ``P(T ∈ U_n) ≥ 1 − δ`` follows from the type bound: the statistic is the dynamics part
of ``D(Q̂‖Q̂_1⊗P) ≥`` it, ``P(Q_n = Q) ≤ e^{−mD}`` and there are at most ``(m+1)^{|Z|²}`` types.
This is why the default direction is ``KL(T̂ ‖ T')`` (data first): the guarantee is proved for it.

**Rectangular relaxation** (what the per-(s,a) dual solves): ``U_n ⊂ ×_z B_z`` with
``B_z = {p : KL(T̂_z ‖ p) ≤ ε_z}``, ``ε_z = m r_n / N_z`` (the radius split by ``Q̂_1``). Option
``radius="per_pair"`` (inferred, tighter for large ``|Z|``): successors of each pair are i.i.d.
``T_z`` (table-of-successors construction), so a union bound over pairs and sample sizes gives
``ε_z = [log(|Z| m / δ) + (k_z − 1) log(N_z + 1)] / N_z`` with ``k_z`` the support size.

**Per-(s,a) dual** (Nilim & El Ghaoui 2005, derived here for the ``KL(q‖p)`` ball):

    min_{p ∈ Δ(K_z): KL(q‖p) ≤ ε} p·v = max_{μ ≤ min_{K_z} v} μ + e^{−ε} Π_i (v_i − μ)^{q_i},

a concave 1-D problem solved by vectorised bisection on its derivative. Unvisited pairs
(``N_z = 0``) get the whole simplex on their support ``K_z``: ``σ_z = min_{K_z} v``.

**Pessimistic values**: the robust Bellman operator
``V(s) = Σ_a π_e(a|s) [r(s,a) + γ σ_{s,a}(V)]`` is a ``γ``-contraction; its fixed point is
``V_low = min_{T' ∈ ×B_z} V^{π_e}(T') ≤ min_{T' ∈ U_n} V^{π_e}(T')``, so ``V_low ≤ V^{π_e}(T)``
whenever ``T ∈ U_n``. The joint convex program (``method="convex"``) solves the same fixed point
at once: ``max Σ_s V(s)`` s.t. ``V ≤ robust Bellman(V)``, with ``σ_z`` written through its dual
``y_z ≤ μ_z + λ_z(1 − ε_z) − Σ_i q_i rel_entr(λ_z, V_i − μ_z)`` (jointly concave).

Baselines (same interface): L1 / Weissman balls ``‖p − q‖_1 ≤ sqrt(2[log(2^k − 2) + log(|Z|m/δ)]/N)``
(Weissman et al. 2003) and Hoeffding boxes ``|p_i − q_i| ≤ sqrt(log(2k|Z|m/δ) / (2N))``,
each with the same union over pairs and sample sizes, and the parametric bootstrap.

References:
    Csiszár (1998); Nilim & El Ghaoui (2005), "Robust control of MDPs with uncertain transition
    matrices"; Iyengar (2005); Weissman et al. (2003); Li, Kuhn & Sutter (2025, arXiv 2503.12283).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import rel_entr

from .mdp import validate_gamma, validate_policy, validate_rewards
from .pair_types import plug_in_kernel

RADII = ("pair_types", "per_pair")
SETS = ("kl", "l1", "hoeffding")


def _check_delta(delta: float) -> float:
    if not 0 < delta < 1:
        raise ValueError(f"delta = {delta!r}: the error probability must lie in (0, 1)")
    return float(delta)


def kl_radius(m: int, n_pairs: int, delta: float) -> float:
    """Joint radius ``r_n = [log(1/δ) + |Z|² log(m+1)] / m`` (brief §2; conservative, from type counting).

    Raises:
        ValueError: if ``m < 1``, ``n_pairs < 1`` or ``δ ∉ (0, 1)``.
    """
    delta = _check_delta(delta)
    if m < 1 or n_pairs < 1:
        raise ValueError(f"need m >= 1 and n_pairs >= 1; got m={m}, n_pairs={n_pairs}")
    return (np.log(1 / delta) + n_pairs**2 * np.log(m + 1)) / m


def set_radii(counts: np.ndarray, delta: float, kind: str = "kl", radius: str = "pair_types",
              support: np.ndarray | None = None) -> np.ndarray:
    """Per-pair radii ``ε_z`` ``(S, A)`` of a rectangular confidence set from counts ``(S, A, S)``.

    Args:
        counts: transition counts; ``m = counts.sum()``.
        delta: error probability of the whole (joint) set.
        kind: ``"kl"``, ``"l1"`` (Weissman) or ``"hoeffding"``.
        radius: for ``kind="kl"``: ``"pair_types"`` (``m r_n / N_z``) or ``"per_pair"``.
        support: ``(S, A, S)`` bool, allowed next states (default all); ``k_z`` = its row sums.

    Returns:
        float ``(S, A)``; ``inf`` for unvisited pairs (whole simplex).

    Raises:
        ValueError: unknown ``kind``/``radius`` or bad ``delta``.
    """
    delta = _check_delta(delta)
    N = np.asarray(counts, dtype=float)
    S, A, _ = N.shape
    n_z = N.sum(axis=2)
    m = max(int(N.sum()), 1)
    Zn = S * A
    k = (np.ones(N.shape, bool) if support is None else np.asarray(support, bool)).sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "kl":
            if radius == "pair_types":
                eps = m * kl_radius(m, Zn, delta) / n_z
            elif radius == "per_pair":
                eps = (np.log(Zn * m / delta) + (k - 1) * np.log(n_z + 1)) / n_z
            else:
                raise ValueError(f"radius = {radius!r}; allowed: {', '.join(RADII)}")
        elif kind == "l1":
            eps = np.sqrt(2 * (np.log(np.maximum(2.0**k - 2, 1.0)) + np.log(Zn * m / delta)) / n_z)
        elif kind == "hoeffding":
            eps = np.sqrt(np.log(2 * k * Zn * m / delta) / (2 * n_z))
        else:
            raise ValueError(f"kind = {kind!r}; allowed: {', '.join(SETS)}")
    return np.where(n_z > 0, eps, np.inf)


def kl_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray, support: np.ndarray | None = None,
                  iters: int = 100) -> np.ndarray:
    """``σ_z = min { p·v : p ∈ Δ(K_z), KL(q_z ‖ p) ≤ ε_z }`` for a batch of rows, by the 1-D dual.

    Args:
        q: ``(K, S)`` nominal rows (plug-in ``T̂_z``); v: ``(S,)`` values of next states.
        eps: ``(K,)`` radii in nats (``inf`` = whole simplex on the support).
        support: ``(K, S)`` bool allowed next states ``K_z`` (default all).
        iters: bisection steps (each halves the bracket).

    Returns:
        ``(K,)`` worst-case expectations (a lower bound within bisection error, never above the
        true minimum by more than ``~2^-iters`` of the bracket).

    Raises:
        ValueError: negative radii, or ``q`` with mass outside its support (the set is empty:
            the data contradict the declared support).
    """
    q = np.atleast_2d(np.asarray(q, float))
    v = np.asarray(v, float)
    eps = np.broadcast_to(np.asarray(eps, float), (q.shape[0],))
    K, S = q.shape
    supp = np.ones((K, S), bool) if support is None else np.asarray(support, bool)
    if np.any(eps < 0) or np.any(np.isnan(eps)):
        raise ValueError("radii eps must be >= 0")
    if np.any((q > 0) & ~supp):
        z = int(np.argwhere((q > 0) & ~supp)[0, 0])
        raise ValueError(f"row {z} of q has mass outside its support: the KL set is empty "
                         "(infinite divergence); widen the support or check the data")
    vs = np.where(supp, v[None, :], np.inf)
    b = vs.min(axis=1)                       # min over support
    vmax = np.where(supp, v[None, :], -np.inf).max(axis=1)
    out = b.copy()
    nominal = (q * v[None, :]).sum(axis=1)
    finite = np.isfinite(eps) & (q.sum(axis=1) > 0)
    zero = finite & (eps == 0)
    out[zero] = nominal[zero]
    act = finite & (eps > 0) & (vmax > b)
    if not np.any(act):
        return out
    qa, ea, ba, vm = q[act], eps[act], b[act], vmax[act]
    diff_full = v[None, :] - ba[:, None]     # >= 0 on the support
    pos = qa > 0

    def grad(mu):  # g'(μ) = 1 − λ(μ) Σ q_i / (v_i − μ), λ = e^{−ε} Π (v_i − μ)^{q_i}
        d = np.where(pos, diff_full + (ba - mu)[:, None], 1.0)
        with np.errstate(divide="ignore"):
            logd = np.log(d)
        lam = np.exp(-ea + np.sum(np.where(pos, qa * logd, 0.0), axis=1))
        return 1.0 - lam * np.sum(np.where(pos, qa / d, 0.0), axis=1)

    def g(mu):
        d = np.where(pos, diff_full + (ba - mu)[:, None], 1.0)
        with np.errstate(divide="ignore"):
            return mu + np.exp(-ea + np.sum(np.where(pos, qa * np.log(d), 0.0), axis=1))

    one_m = -np.expm1(-ea)
    lo = ba - (vm - ba) / one_m - 1e-12
    hi = ba.copy()
    at_b = np.all(np.where(pos, diff_full > 0, True), axis=1)  # q puts no mass on the argmin
    with np.errstate(divide="ignore", invalid="ignore"):
        boundary = at_b & (grad(hi) >= 0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        up = grad(mid) > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    mu = np.where(boundary, ba, lo)
    val = g(mu)
    out[act] = np.minimum(val, nominal[act])
    return out


def l1_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """``min { p·v : p ∈ Δ(K_z), ‖p − q_z‖_1 ≤ ε_z }`` per row: move ``ε/2`` mass from the highest
    values to the lowest supported value (exact greedy solution of the LP). Shapes as :func:`kl_worst_case`."""
    q = np.atleast_2d(np.asarray(q, float))
    K, S = q.shape
    supp = np.ones((K, S), bool) if support is None else np.asarray(support, bool)
    eps = np.broadcast_to(np.asarray(eps, float), (K,))
    vs = np.where(supp, v[None, :], np.inf)
    imin = np.argmin(vs, axis=1)
    b = vs[np.arange(K), imin]
    qmin = q[np.arange(K), imin]
    with np.errstate(invalid="ignore"):
        move = np.minimum(eps / 2, 1 - qmin)
    move = np.where(np.isfinite(move), move, 1 - qmin)
    order = np.argsort(-v, kind="stable")
    qs = q[:, order]
    before = np.cumsum(qs, axis=1) - qs
    take = np.clip(move[:, None] - before, 0, qs)
    val = (q * v).sum(axis=1) - (take * v[order]).sum(axis=1) + move * b
    unvisited = q.sum(axis=1) == 0
    return np.where(unvisited | ~np.isfinite(eps), b, val)


def hoeffding_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray, support: np.ndarray | None = None) -> np.ndarray:
    """``min { p·v : p ∈ Δ(K_z), |p_i − q_i| ≤ ε_z }`` per row (exact greedy: start at the lower
    limits, fill the lowest values first). Shapes as :func:`kl_worst_case`."""
    q = np.atleast_2d(np.asarray(q, float))
    K, S = q.shape
    supp = np.ones((K, S), bool) if support is None else np.asarray(support, bool)
    eps = np.broadcast_to(np.asarray(eps, float), (K,))
    e = np.where(np.isfinite(eps), eps, 1.0)[:, None]
    lo = np.where(supp, np.clip(q - e, 0, 1), 0.0)
    hi = np.where(supp, np.clip(q + e, 0, 1), 0.0)
    rest = 1 - lo.sum(axis=1)
    order = np.argsort(v, kind="stable")
    cap = (hi - lo)[:, order]
    before = np.cumsum(cap, axis=1) - cap
    add = np.clip(rest[:, None] - before, 0, cap)
    val = (lo * v).sum(axis=1) + (add * v[order]).sum(axis=1)
    vs = np.where(supp, v[None, :], np.inf).min(axis=1)
    return np.where(q.sum(axis=1) == 0, vs, val)


_WORST = {"kl": kl_worst_case, "l1": l1_worst_case, "hoeffding": hoeffding_worst_case}


@dataclass(frozen=True)
class PessimisticResult:
    """Pessimistic (robust) values over a rectangular confidence set.

    Attributes:
        V: ``(S,)`` lower value bound ``V_low``; Q: ``(S, A)`` lower Q bound ``r + γ σ(V_low)``.
        policy: ``(S, A)`` the evaluated policy, or the pessimistic greedy policy (``control=True``).
        eps: ``(S, A)`` radii used (``inf`` = unvisited pair, whole simplex).
        vacuous: ``(S,)`` bool, ``V_low`` equals the trivial bound ``r_min / (1 − γ)`` (no information).
        iterations: robust Bellman sweeps.
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    eps: np.ndarray
    vacuous: np.ndarray
    iterations: int


def pessimistic_values(counts: np.ndarray, r: np.ndarray, gamma: float, pi_eval: np.ndarray | None = None,
                       delta: float = 0.05, kind: str = "kl", radius: str = "pair_types",
                       support: np.ndarray | None = None, r_range: tuple[float, float] = (0.0, 1.0),
                       eps: np.ndarray | None = None, tol: float = 1e-9, max_iter: int = 100_000,
                       method: str = "dual") -> PessimisticResult:
    """Pessimistic value and Q bounds from transition counts (offline RL, brief §2 "KL set and pessimism").

    Args:
        counts: ``(S, A, S)`` logged transition counts.
        r: ``(S, A)`` expected rewards in ``r_range``; gamma in ``[0, 1)``.
        pi_eval: ``(S, A)`` policy to evaluate; ``None`` = control: return the pessimistic greedy
            policy ``argmax_a Q_low`` and its robust value.
        delta: error probability of the confidence set.
        kind: ``"kl"`` (the method), ``"l1"`` or ``"hoeffding"`` (baselines).
        radius: KL radius rule, see :func:`set_radii`.
        support: ``(S, A, S)`` allowed next states (structural zeros known a priori), default all.
        eps: explicit ``(S, A)`` radii (overrides ``delta``/``radius``; used for calibration).
        method: ``"dual"`` (per-(s,a) dual + value iteration) or ``"convex"`` (joint cvxpy
            program; evaluation only, ``kind="kl"``).

    Returns:
        :class:`PessimisticResult`.

    Raises:
        ValueError: ``gamma ∉ [0, 1)``, rewards outside ``r_range``, bad shapes, counts outside
            the declared support (infinite divergence), unknown ``kind``/``method``.
        RuntimeError: if value iteration does not converge in ``max_iter`` sweeps.
    """
    gamma = validate_gamma(gamma)
    N = np.asarray(counts)
    if N.ndim != 3 or N.shape[0] != N.shape[2]:
        raise ValueError(f"counts must have shape (S, A, S); got {N.shape}")
    S, A, _ = N.shape
    r = validate_rewards(r, S, A, r_range)
    if kind not in _WORST:
        raise ValueError(f"kind = {kind!r}; allowed: {', '.join(SETS)}")
    supp = np.ones(N.shape, bool) if support is None else np.asarray(support, bool)
    if supp.shape != N.shape:
        raise ValueError(f"support must have shape {N.shape}; got {supp.shape}")
    if np.any((N > 0) & ~supp):
        s, a, s2 = np.argwhere((N > 0) & ~supp)[0]
        raise ValueError(f"counts[{s}, {a}, {s2}] = {N[s, a, s2]} > 0 where the support forbids the "
                         "transition: the divergence is infinite; fix the support or the data")
    T_hat, visited = plug_in_kernel(N)
    T_hat = np.where(visited[:, :, None], T_hat, 0.0)
    eps = set_radii(N, delta, kind, radius, supp) if eps is None else np.asarray(eps, float)
    if pi_eval is not None:
        pi_eval = validate_policy(pi_eval, S, A, "pi_eval")
    if method == "convex":
        if pi_eval is None or kind != "kl":
            raise ValueError("method='convex' evaluates a given pi_eval with kind='kl' only")
        V = _robust_eval_convex(T_hat, r, gamma, pi_eval, eps.reshape(-1), supp)
        it = 0
    elif method == "dual":
        worst = _WORST[kind]
        qf, ef, sf = T_hat.reshape(S * A, S), eps.reshape(-1), supp.reshape(S * A, S)
        V = np.full(S, r_range[0] / (1 - gamma))
        for it in range(1, max_iter + 1):
            Qv = r + gamma * worst(qf, V, ef, sf).reshape(S, A)
            V_new = Qv.max(axis=1) if pi_eval is None else (pi_eval * Qv).sum(axis=1)
            if np.max(np.abs(V_new - V)) < tol * (1 - gamma):
                V = V_new
                break
            V = V_new
        else:
            raise RuntimeError(f"robust value iteration did not converge in {max_iter} sweeps")
    else:
        raise ValueError(f"method = {method!r}; allowed: 'dual', 'convex'")
    Qv = r + gamma * _WORST[kind](T_hat.reshape(S * A, S), V, eps.reshape(-1), supp.reshape(S * A, S)).reshape(S, A)
    policy = pi_eval if pi_eval is not None else _greedy(Qv)
    trivial = r_range[0] / (1 - gamma)
    return PessimisticResult(V=V, Q=Qv, policy=policy, eps=eps, vacuous=V <= trivial + 1e-9 * max(1, abs(trivial)),
                             iterations=it)


def _greedy(Q):
    pi = np.zeros_like(Q)
    pi[np.arange(Q.shape[0]), np.argmax(Q, axis=1)] = 1.0
    return pi


def _robust_eval_convex(T_hat, r, gamma, pi_eval, eps, supp, solver=None):
    """Joint convex program for the rectangular robust evaluation (see module docstring)."""
    import cvxpy as cp
    import scipy.sparse as sp

    S, A, _ = T_hat.shape
    K = S * A
    q = T_hat.reshape(K, S)
    sf = supp.reshape(K, S)
    V = cp.Variable(S)
    y = cp.Variable(K)
    cons = [V <= cp.sum(cp.multiply(pi_eval, r + gamma * cp.reshape(y, (S, A), order="C")), axis=1)]
    vis = np.isfinite(eps) & (q.sum(axis=1) > 0)
    uz, ui = np.nonzero(sf & ~vis[:, None])
    if len(uz):
        cons.append(y[uz] <= V[ui])
    zv = np.flatnonzero(vis)
    if len(zv):
        idx = -np.ones(K, dtype=int)
        idx[zv] = np.arange(len(zv))
        mu = cp.Variable(len(zv))
        lam = cp.Variable(len(zv), nonneg=True)
        ez, ei = np.nonzero((q > 0) & vis[:, None])
        w = q[ez, ei]
        agg = sp.csr_matrix((w, (idx[ez], np.arange(len(ez)))), shape=(len(zv), len(ez)))
        term = agg @ cp.rel_entr(lam[idx[ez]], V[ei] - mu[idx[ez]])
        cons.append(y[zv] <= mu + cp.multiply(lam, 1 - eps[zv]) - term)
        sz, si = np.nonzero(sf & vis[:, None])
        cons.append(mu[idx[sz]] <= V[si])
    prob = cp.Problem(cp.Maximize(cp.sum(V)), cons)
    try:
        prob.solve(solver=solver or cp.CLARABEL)
    except cp.SolverError:
        prob.solve(solver=cp.SCS, eps=1e-9, max_iters=200_000)
    if V.value is None:
        raise RuntimeError(f"convex robust evaluation failed: status {prob.status}")
    return np.asarray(V.value, float)


def set_statistic(counts: np.ndarray, T: np.ndarray, kind: str = "kl") -> np.ndarray:
    """Per-pair distance ``(S, A)`` from the plug-in rows to ``T``: ``KL(T̂_z ‖ T_z)``, ``‖T̂_z − T_z‖_1``
    or ``max_i |T̂_zi − T_zi|`` (0 for unvisited pairs). ``T`` lies in a rectangular set iff
    ``statistic ≤ ε`` for every pair; ``inf`` when the data hit a zero of ``T``."""
    T_hat, visited = plug_in_kernel(counts)
    if kind == "kl":
        d = np.sum(rel_entr(T_hat, T), axis=2)
    elif kind == "l1":
        d = np.abs(T_hat - T).sum(axis=2)
    elif kind == "hoeffding":
        d = np.abs(T_hat - T).max(axis=2)
    else:
        raise ValueError(f"kind = {kind!r}; allowed: {', '.join(SETS)}")
    return np.where(visited, d, 0.0)


@dataclass(frozen=True)
class KLTest:
    """Result of the universal test of ``H0: T = T0``.

    Attributes:
        statistic: ``Σ_z Q̂_1(z) KL(T̂_z ‖ T0_z)`` (``inf`` if the data hit a zero of ``T0``).
        threshold: ``r_n``; reject: ``statistic > threshold``.
        vacuous: the threshold exceeds ``log S`` (tiny sample: the test has almost no power).
    """

    statistic: float
    threshold: float
    reject: bool
    vacuous: bool


def kl_test(counts: np.ndarray, T0: np.ndarray, delta: float = 0.05) -> KLTest:
    """Hoeffding-type universal test of ``H0: T = T0`` at level ``δ`` (brief §2 "Test"; inferred).

    Rejects when ``Σ_z Q̂_1(z) KL(T̂_z ‖ T0_z) > r_n``; the type bound gives type-I error ``≤ δ``.
    A kernel with a zero where the data have counts gives statistic ``inf`` and rejects.

    Raises:
        ValueError: bad ``delta``, shapes, or no transitions.
    """
    N = np.asarray(counts, dtype=float)
    if N.shape != np.shape(T0):
        raise ValueError(f"counts {N.shape} and T0 {np.shape(T0)} differ in shape")
    m = int(N.sum())
    if m < 1:
        raise ValueError("counts hold no transitions")
    S, A, _ = N.shape
    stat = float(np.sum(N.sum(axis=2) / m * set_statistic(N, T0, "kl")))
    thr = kl_radius(m, S * A, delta)
    return KLTest(statistic=stat, threshold=thr, reject=bool(stat > thr), vacuous=bool(thr > np.log(S)))


def bootstrap_lower_bound(counts: np.ndarray, r: np.ndarray, gamma: float, pi_eval: np.ndarray,
                          delta: float, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Parametric-bootstrap lower bound ``(S,)``: the ``δ``-quantile of plug-in values ``V̂*`` with
    rows resampled as ``N*_z ~ Multinomial(N_z, T̂_z)`` (the OPE toolkits' baseline; no finite-sample
    guarantee). Unvisited pairs keep the plug-in's uniform row.

    Raises:
        ValueError: if ``n_boot < 10``.
    """
    if n_boot < 10:
        raise ValueError(f"n_boot = {n_boot}: use at least 10 bootstrap replicates")
    N = np.asarray(counts, dtype=np.int64)
    S, A, _ = N.shape
    T_hat, visited = plug_in_kernel(N)
    n_z = N.sum(axis=2)
    draws = rng.multinomial(n_z[None].repeat(n_boot, 0), T_hat[None].repeat(n_boot, 0))
    Tb = np.where(visited[None, :, :, None], draws / np.maximum(n_z, 1)[None, :, :, None], T_hat[None])
    P_pi = np.einsum("sa,bsat->bst", pi_eval, Tb)
    r_pi = (pi_eval * r).sum(axis=1)
    Vb = np.linalg.solve(np.eye(S)[None] - gamma * P_pi, np.broadcast_to(r_pi, (n_boot, S))[..., None])[..., 0]
    return np.quantile(Vb, delta, axis=0)
