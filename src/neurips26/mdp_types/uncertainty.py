"""KL uncertainty sets around the plug-in kernel, pessimistic V/Q, tests, and baseline sets.

**KL set** (inferred from type counting; direction and radius are options here):

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
from scipy.optimize import brentq
from scipy.special import rel_entr

from .mdp import check_reward_table, validate_gamma, validate_kernel, validate_policy, validate_rewards
from .pair_types import plug_in_kernel, validate_counts

RADII = ("pair_types", "per_pair")
SETS = ("kl", "l1", "hoeffding")


def _check_delta(delta: float) -> float:
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta = {delta!r}: the error probability must be a number in (0, 1)") from None
    if not 0 < delta < 1:
        raise ValueError(f"delta = {delta!r}: the error probability must lie in (0, 1)")
    return float(delta)


def kl_radius(m: int, n_pairs: int, delta: float) -> float:
    """Joint radius ``r_n = [log(1/δ) + |Z|² log(m+1)] / m`` (conservative, from type counting:
    at most ``(m+1)^{|Z|²}`` types, each with probability ``≤ e^{−mD}``).

    Raises:
        ValueError: if ``m < 1``, ``n_pairs < 1`` or ``δ ∉ (0, 1)``.
    """
    delta = _check_delta(delta)
    if m < 1 or n_pairs < 1:
        raise ValueError(f"need m >= 1 and n_pairs >= 1; got m={m}, n_pairs={n_pairs}")
    return (np.log(1 / delta) + n_pairs**2 * np.log(m + 1)) / m


REVERSE_RADIUS_MESSAGE = (
    "no radius rule covers the truth for reverse KL balls KL(T'||T_hat) <= eps: KL(T||T_hat) is infinite "
    "whenever the plug-in T_hat misses a successor the true kernel reaches (probability (1-p)^N for a successor "
    "of probability p after N visits, about 0.37 for p = 1/N), so no finite radius has a distribution-free "
    "guarantee; pass explicit radii eps= (e.g. calibrated on simulated data) or use direction='forward'")


def set_radii(counts: np.ndarray, delta: float, kind: str = "kl", radius: str = "pair_types",
              support: np.ndarray | None = None, *, direction: str = "forward") -> np.ndarray:
    """Per-pair radii ``ε_z`` ``(S, A)`` of a rectangular confidence set from counts ``(S, A, S)``.

    Args:
        counts: transition counts; ``m = counts.sum()``.
        delta: error probability of the whole (joint) set.
        kind: ``"kl"``, ``"l1"`` (Weissman) or ``"hoeffding"``.
        radius: for ``kind="kl"``: ``"pair_types"`` (``m r_n / N_z``) or ``"per_pair"``.
        support: ``(S, A, S)`` bool, allowed next states (default all); ``k_z`` = its row sums.
        direction: ``"forward"`` (balls ``KL(T̂‖T')``, the only direction with a coverage proof,
            module docstring). ``"reverse"`` (``KL(T'‖T̂)``) raises: ``KL(T‖T̂) = ∞`` whenever
            ``T̂`` misses a reachable successor, which happens with probability ``(1 − p)^N``, so
            no finite radius covers the truth without assumptions (inferred; pass ``eps=`` to
            :func:`pessimistic_values` instead). The L1 and Hoeffding sets are symmetric: forward.

    Returns:
        float ``(S, A)``; ``inf`` for unvisited pairs (whole simplex).

    Raises:
        ValueError: unknown ``kind``/``radius``/``direction``, ``direction="reverse"`` (see
            above), bad ``delta``, counts that are not non-negative integers of shape
            ``(S, A, S)``, or a ``support`` of another shape.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction = {direction!r}; allowed: {', '.join(DIRECTIONS)}")
    if direction == "reverse":
        raise ValueError(f"set_radii(direction='reverse'): {REVERSE_RADIUS_MESSAGE}")
    delta = _check_delta(delta)
    N = validate_counts(counts)
    S, A, _ = N.shape
    n_z = N.sum(axis=2)
    m = max(int(N.sum()), 1)
    Zn = S * A
    if support is not None and np.shape(support) != N.shape:
        raise ValueError(f"support must have shape {N.shape}; got {np.shape(support)}")
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


def _rows(q, v, eps, support):
    q = np.asarray(q, float)
    if q.ndim == 1 and support is not None and np.ndim(support) == 1:
        support = np.asarray(support, bool)[None, :]
    q = np.atleast_2d(q)
    if q.ndim != 2 or q.shape[1] < 1:
        raise ValueError(f"q must have shape (K, S) with S >= 1; got {q.shape}")
    K, S = q.shape
    v, eps = np.asarray(v, float), np.asarray(eps, float)
    if v.shape not in ((S,), (K, S)) or eps.shape not in ((), (1,), (K,)):
        raise ValueError(f"v must have shape ({S},) or ({K}, {S}) and eps ({K},); got {v.shape} and {eps.shape}")
    v = np.broadcast_to(v, (K, S))
    eps = np.broadcast_to(eps, (K,))
    supp = np.ones((K, S), bool) if support is None else np.asarray(support, bool)
    if supp.shape != (K, S):
        raise ValueError(f"support must have shape ({K}, {S}); got {supp.shape}")
    if np.any(eps < 0) or np.any(np.isnan(eps)):
        raise ValueError(f"radii eps must be >= 0 (inf = whole simplex); got min {np.min(eps)!r}")
    if not np.all(np.isfinite(v)):
        raise ValueError("v must be finite (next-state values)")
    sums = q.sum(axis=1)
    if not np.all(np.isfinite(q)) or np.any(q < 0) or np.any((np.abs(sums - 1) > 1e-6) & (sums != 0)):
        z = int(np.argmax(~np.isfinite(sums) | (np.abs(sums - 1) > 1e-6) | np.any(q < 0, axis=1)))
        raise ValueError(f"row {z} of q (sum {sums[z]!r}) must be a probability vector, or all zero for an "
                         "unvisited pair")
    if np.any((q > 0) & ~supp):
        z = int(np.argwhere((q > 0) & ~supp)[0, 0])
        raise ValueError(f"row {z} of q has mass outside its support: the set is empty "
                         "(infinite divergence); widen the support or check the data")
    vs = np.where(supp, v, np.inf)
    imin = np.argmin(vs, axis=1)
    return q, v, eps, supp, vs, imin


def _point_mass(K, S, idx):
    p = np.zeros((K, S))
    p[np.arange(K), idx] = 1.0
    return p


DIRECTIONS = ("forward", "reverse")


def kl_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray, support: np.ndarray | None = None,
                  iters: int = 64, *, direction: str = "forward") -> tuple[np.ndarray, np.ndarray]:
    """``σ_z = min { p·v_z : p ∈ Δ(K_z), KL(q_z ‖ p) ≤ ε_z }`` for a batch of rows, by the 1-D dual.

    ``direction="forward"`` (default) is the ball ``KL(q‖p) ≤ ε`` (data first: the type bound
    proves coverage for it). ``direction="reverse"`` is ``KL(p‖q) ≤ ε`` (``p`` stays on the
    support of ``q``), solved by its classical dual
    ``σ = max_{λ>0} −λ ε − λ log Σ_i q_i e^{−v_i/λ}`` with worst case ``p_i ∝ q_i e^{−v_i/λ*}``
    (Hu & Hong 2013); ``λ*`` solves ``KL(p_λ‖q) = ε`` (Brent's method on ``log λ``, to round-off:
    the row value ``p_λ·v`` is not stationary in ``λ``, so a coarser ``λ`` would stall policy iteration).

    Args:
        q: ``(K, S)`` nominal rows (plug-in ``T̂_z``; an all-zero row = unvisited), or one law ``(S,)``
            (then ``sigma`` is ``(1,)`` and ``p`` is ``(1, S)``).
        v: ``(S,)`` or ``(K, S)`` values of next states (per row when rewards depend on ``s'``).
        eps: ``(K,)`` radii in nats (``inf`` = whole simplex on the support).
        support: ``(K, S)`` bool allowed next states ``K_z`` (default all).
        iters: bisection steps (each halves the bracket).
        direction: ``"forward"`` (``KL(q‖p)``) or ``"reverse"`` (``KL(p‖q)``).

    Returns:
        ``(sigma, p)``: ``(K,)`` worst-case expectations and ``(K, S)`` the worst-case rows
        ``p_i = λ q_i / (v_i − μ*)`` (+ leftover mass on the lowest supported value). Each
        ``σ`` is a dual value at the bisection point, so by weak duality it never exceeds the
        true minimum (safe for pessimism); it is within ``~2^-iters`` of the bracket of it.

    Raises:
        ValueError: negative radii, ``q`` with mass outside its support (the set is empty:
            the data contradict the declared support), or an unknown ``direction``.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction = {direction!r}; allowed: {', '.join(DIRECTIONS)}")
    q, v, eps, supp, vs, imin = _rows(q, v, eps, support)
    if direction == "reverse":
        return _kl_reverse_worst_case(q, v, eps, supp, vs, imin)
    K, S = q.shape
    b = vs[np.arange(K), imin]
    vmax = np.where(supp, v, -np.inf).max(axis=1)
    p = _point_mass(K, S, imin)
    out = b.copy()
    finite = np.isfinite(eps) & (q.sum(axis=1) > 0)
    keep = finite & ((eps == 0) | (vmax <= b))
    p[keep] = q[keep]
    out[keep] = (q[keep] * v[keep]).sum(axis=1)
    act = finite & (eps > 0) & (vmax > b)
    if not np.any(act):
        return out, p
    qa, ea, ba, vm, va = q[act], eps[act], b[act], vmax[act], v[act]
    pos = qa > 0
    dpos = np.where(pos, va - ba[:, None], 1.0)   # v_i − b on supp(q) (>= 0); 1 elsewhere (weight 0)

    def parts(mu):
        d = dpos + (ba - mu)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.exp(-ea + np.sum(qa * np.log(d), axis=1))
            ratio = qa / d
        return lam, ratio

    def grad(mu):  # g'(μ) = 1 − λ(μ) Σ q_i / (v_i − μ), λ = e^{−ε} Π (v_i − μ)^{q_i}
        lam, ratio = parts(mu)
        with np.errstate(invalid="ignore"):
            out = 1.0 - lam * np.sum(ratio, axis=1)
        return np.where(np.isnan(out), -np.inf, out)

    one_m = -np.expm1(-ea)
    lo = ba - (vm - ba) / one_m - 1e-12
    hi = ba.copy()
    at_b = np.all(dpos > 0, axis=1)  # q puts no mass on the argmin
    boundary = at_b & (grad(hi) >= 0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        up = grad(mid) > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    mu = np.where(boundary, ba, lo)
    lam, ratio = parts(mu)
    val = mu + lam                           # g(μ*) = μ* + λ(μ*)
    pa = lam[:, None] * ratio
    pa = np.where(np.isfinite(pa), pa, 0.0)
    left = np.clip(1.0 - pa.sum(axis=1), 0.0, None)
    pa[np.arange(len(pa)), imin[act]] += left
    pa /= pa.sum(axis=1, keepdims=True)
    nominal = (qa * va).sum(axis=1)
    out[act] = np.minimum(val, nominal)
    p[act] = pa
    return out, p


def _kl_reverse_worst_case(q, v, eps, supp, vs, imin, iters: int = 100):
    """``min { p·v : KL(p‖q) ≤ ε }`` per row by the dual over ``λ > 0`` (see :func:`kl_worst_case`):
    the optimal ``λ`` solves ``KL(p_λ‖q) = ε`` for ``p_λ ∝ q e^{−v/λ}`` (Brent's method on log λ)."""
    K, S = q.shape
    out = vs[np.arange(K), imin].copy()          # unvisited rows / ε = inf: whole simplex on the support
    p = _point_mass(K, S, imin)
    visited = q.sum(axis=1) > 0
    pos = q > 0
    vq = np.where(pos, v, np.inf)
    jmin = np.argmin(vq, axis=1)
    vmin_q = vq[np.arange(K), jmin]
    for k in np.flatnonzero(visited):
        if not np.isfinite(eps[k]):
            continue
        qk, vk = q[k, pos[k]], v[k, pos[k]]
        nominal = float(qk @ vk)
        # ε ≥ log 1/q(argmin) puts all mass on the lowest value q supports: σ = that value
        q_at_min = float(q[k][pos[k] & (v[k] == vmin_q[k])].sum())
        if eps[k] == 0 or np.ptp(vk) == 0:
            out[k], p[k] = nominal, q[k]
            continue
        if eps[k] >= -np.log(q_at_min):
            out[k] = vmin_q[k]
            p[k] = np.where(pos[k] & (v[k] == vmin_q[k]), q[k], 0.0) / q_at_min
            continue
        c = vk - vk.min()

        def kl_gap(log_lam):
            # p_λ ∝ q e^{−c/λ}: KL(p_λ‖q) = −(p_λ·c)/λ − log Σ q e^{−c/λ}, decreasing in λ; the dual's
            # optimum is where it meets ε (complementary slackness, ε < log 1/q(argmin) here)
            lam = np.exp(log_lam)
            w = qk * np.exp(-c / lam)
            z = w.sum()
            return -(w @ c) / (z * lam) - np.log(z) - eps[k]

        a, b = np.log(np.ptp(vk)) - 12.0, np.log(np.ptp(vk)) + 12.0 - np.log(eps[k])
        while kl_gap(a) < 0:
            a -= 12.0
        while kl_gap(b) > 0:
            b += 12.0
        # a root to ~1e-15: the row's value p_λ·v is not stationary in λ (only the dual is), so a
        # λ found to the dual's flat-maximum resolution (~1e-8) made policy iteration stall
        lam = np.exp(brentq(kl_gap, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=iters))
        w = np.zeros(S)
        w[pos[k]] = qk * np.exp(-c / lam)
        p[k] = w / w.sum()
        # the value of the returned row (equal to the dual optimum; the dual itself loses digits to
        # cancellation at large λ, which would stall policy iteration)
        out[k] = min(float(p[k] @ v[k]), nominal)
    return out, p


def l1_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray,
                  support: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``min { p·v_z : p ∈ Δ(K_z), ‖p − q_z‖_1 ≤ ε_z }`` per row: move ``ε/2`` mass from the highest
    values to the lowest supported value (exact greedy solution of the LP). Shapes and returns as
    :func:`kl_worst_case`."""
    q, v, eps, supp, vs, imin = _rows(q, v, eps, support)
    K, S = q.shape
    qmin = q[np.arange(K), imin]
    with np.errstate(invalid="ignore"):
        move = np.minimum(eps / 2, 1 - qmin)
    move = np.where(np.isfinite(move), move, 1 - qmin)
    order = np.argsort(-v, axis=1, kind="stable")
    qs = np.take_along_axis(q, order, axis=1)
    before = np.cumsum(qs, axis=1) - qs
    take_sorted = np.clip(move[:, None] - before, 0, qs)
    take = np.zeros_like(q)
    np.put_along_axis(take, order, take_sorted, axis=1)
    p = q - take
    p[np.arange(K), imin] += move
    unvisited = (q.sum(axis=1) == 0) | ~np.isfinite(eps)
    p[unvisited] = _point_mass(K, S, imin)[unvisited]
    return (p * v).sum(axis=1), p


def hoeffding_worst_case(q: np.ndarray, v: np.ndarray, eps: np.ndarray,
                         support: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``min { p·v_z : p ∈ Δ(K_z), |p_i − q_i| ≤ ε_z }`` per row (exact greedy: start at the lower
    limits, fill the lowest values first). Shapes and returns as :func:`kl_worst_case`."""
    q, v, eps, supp, vs, imin = _rows(q, v, eps, support)
    K, S = q.shape
    e = np.where(np.isfinite(eps), eps, 1.0)[:, None]
    lo = np.where(supp, np.clip(q - e, 0, 1), 0.0)
    hi = np.where(supp, np.clip(q + e, 0, 1), 0.0)
    rest = 1 - lo.sum(axis=1)
    order = np.argsort(vs, axis=1, kind="stable")
    cap = np.take_along_axis(hi - lo, order, axis=1)
    before = np.cumsum(cap, axis=1) - cap
    add_sorted = np.clip(rest[:, None] - before, 0, cap)
    p = lo.copy()
    add = np.zeros_like(q)
    np.put_along_axis(add, order, add_sorted, axis=1)
    p += add
    unvisited = q.sum(axis=1) == 0
    p[unvisited] = _point_mass(K, S, imin)[unvisited]
    return (p * v).sum(axis=1), p


_WORST = {"kl": kl_worst_case, "l1": l1_worst_case, "hoeffding": hoeffding_worst_case}


@dataclass(frozen=True)
class PessimisticResult:
    """Pessimistic (robust) values over a rectangular confidence set.

    Attributes:
        V: ``(S,)`` lower value bound ``V_low`` (certified: the fixed-point residual bound
            ``‖TV − V‖/(1 − γ)`` is subtracted). Q: ``(S, A)`` lower Q bound ``σ_z(R_z + γ V_low)``.
        policy: ``(S, A)`` the evaluated policy, or the pessimistic greedy policy (``pi_eval=None``).
        kernel: ``(S, A, S)`` the worst-case kernel found (a member of the set).
        eps: ``(S, A)`` radii used (``inf`` = unvisited pair, whole simplex).
        vacuous: ``(S,)`` bool, ``V_low`` is within 0.1% of the value range ``(r_max − r_min)/(1 − γ)``
            of the trivial bound ``r_min / (1 − γ)`` (the data say next to nothing).
        iterations: outer iterations (adversary policy iteration / robust policy iteration).
    """

    V: np.ndarray
    Q: np.ndarray
    policy: np.ndarray
    kernel: np.ndarray
    eps: np.ndarray
    vacuous: np.ndarray
    iterations: int


def _reward_table(r, S, A, r_range):
    r = np.asarray(r, dtype=float)
    if r.shape == (S, A, S):
        validate_rewards(r.reshape(S, A * S), S, A * S, r_range)
        return r
    return validate_rewards(r, S, A, r_range)[:, :, None] * np.ones((1, 1, S))


def pessimistic_values(counts: np.ndarray, r: np.ndarray, *, pi_eval: np.ndarray | None = None, gamma: float,
                       delta: float = 0.05, kind: str = "kl", radius: str = "pair_types",
                       support: np.ndarray | None = None, r_range: tuple[float, float] = (0.0, 1.0),
                       eps: np.ndarray | None = None, tol: float = 1e-9, max_iter: int = 1000,
                       method: str = "dual", direction: str = "forward") -> PessimisticResult:
    """Pessimistic value and Q bounds from transition counts (offline RL, pessimism over the KL set).

    Evaluation (``pi_eval`` given) runs policy iteration for the adversary: worst-case rows
    ``p_z`` from the per-(s,a) dual at the current ``V``, then ``V = V^{π_e}(p)`` exactly, until
    ``‖TV − V‖ < tol (1 − γ)`` (Newton-like; far fewer sweeps than value iteration at ``γ → 1``).
    Control (``pi_eval=None``) runs robust policy iteration (Iyengar 2005): greedy in ``Q_low``,
    then robust evaluation, until the policy is stable.

    Args:
        counts: ``(S, A, S)`` logged transition counts.
        r: ``(S, A)`` expected rewards or ``(S, A, S)`` rewards ``R(s, a, s')``, in ``r_range``.
        pi_eval: ``(S, A)`` policy to evaluate; ``None`` = control. Keyword-only, like ``gamma``
            and everything after it (the same order as :func:`~neurips26.mdp_types.policy_evaluation`).
        gamma: discount in ``[0, 1)``.
        delta: error probability of the confidence set.
        kind: ``"kl"`` (the method), ``"l1"`` or ``"hoeffding"`` (baselines).
        radius: KL radius rule, see :func:`set_radii`.
        support: ``(S, A, S)`` allowed next states (structural zeros known a priori), default all.
        eps: explicit ``(S, A)`` radii (overrides ``delta``/``radius``; used for calibration).
        method: ``"dual"`` (per-(s,a) dual + iteration) or ``"convex"`` (one joint cvxpy
            program; evaluation only, ``kind="kl"``).
        direction: for ``kind="kl"``: ``"forward"`` balls ``KL(T̂‖T')`` (default; the radii's
            coverage guarantee is proved for them) or ``"reverse"`` balls ``KL(T'‖T̂)``, solved by
            their own 1-D dual (``method="dual"`` only); reverse balls need explicit ``eps``
            (no radius rule covers the truth for them, see :func:`set_radii`).

    Returns:
        :class:`PessimisticResult`.

    Raises:
        ValueError: ``gamma ∉ [0, 1)``, rewards outside ``r_range``, bad shapes, counts outside
            the declared support (infinite divergence), unknown ``kind``/``method``.
        RuntimeError: if the iteration does not converge in ``max_iter`` rounds.
    """
    gamma = validate_gamma(gamma)
    N = validate_counts(counts)
    S, A, _ = N.shape
    R = _reward_table(r, S, A, r_range)
    if kind not in _WORST:
        raise ValueError(f"kind = {kind!r}; allowed: {', '.join(SETS)}")
    supp = np.ones(N.shape, bool) if support is None else np.asarray(support, bool)
    if supp.shape != N.shape:
        raise ValueError(f"support must have shape {N.shape}; got {supp.shape}")
    if np.any(supp.sum(axis=2) == 0):
        raise ValueError("every (s, a) needs at least one allowed next state in support")
    if np.any((N > 0) & ~supp):
        s, a, s2 = np.argwhere((N > 0) & ~supp)[0]
        raise ValueError(f"counts[{s}, {a}, {s2}] = {N[s, a, s2]} > 0 where the support forbids the "
                         "transition: the divergence is infinite; fix the support or the data")
    T_hat, visited = plug_in_kernel(N)
    T_hat = np.where(visited[:, :, None], T_hat, 0.0)
    if direction not in DIRECTIONS:
        raise ValueError(f"direction = {direction!r}; allowed: {', '.join(DIRECTIONS)}")
    if direction == "reverse" and eps is None:
        raise ValueError(f"pessimistic_values(direction='reverse') needs eps=: {REVERSE_RADIUS_MESSAGE}")
    eps = set_radii(N, delta, kind, radius, supp) if eps is None else np.asarray(eps, float)
    if eps.shape != (S, A):
        raise ValueError(f"eps must have shape {(S, A)}; got {eps.shape}")
    if pi_eval is not None:
        pi_eval = validate_policy(pi_eval, S, A, "pi_eval")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction = {direction!r}; allowed: {', '.join(DIRECTIONS)}")
    if direction == "reverse" and (kind != "kl" or method != "dual"):
        raise ValueError("direction='reverse' needs kind='kl' and method='dual'")
    worst = (lambda *a: kl_worst_case(*a, direction="reverse")) if direction == "reverse" else _WORST[kind]
    qf, ef, sf, Rf = T_hat.reshape(S * A, S), eps.reshape(-1), supp.reshape(S * A, S), R.reshape(S * A, S)

    def backup(V):
        sig, p = worst(qf, Rf + gamma * V[None, :], ef, sf)
        return sig.reshape(S, A), p.reshape(S, A, S)

    def evaluate(pi, V):
        for it in range(1, max_iter + 1):
            Qv, p = backup(V)
            TV = (pi * Qv).sum(axis=1)
            if np.max(np.abs(TV - V)) < tol * (1 - gamma) and it > 1:
                return V, it
            P_pi = np.einsum("sa,sat->st", pi, p)
            r_pi = np.einsum("sa,sat,sat->s", pi, p, R)
            V = np.linalg.solve(np.eye(S) - gamma * P_pi, r_pi)
        raise RuntimeError(f"robust evaluation did not converge in {max_iter} rounds")

    if method == "convex":
        if pi_eval is None or kind != "kl":
            raise ValueError("method='convex' evaluates a given pi_eval with kind='kl' only")
        V, it = _robust_eval_convex(T_hat, R, gamma, pi_eval, ef, supp), 1
        policy = pi_eval
    elif method == "dual":
        V0 = np.full(S, r_range[0] / (1 - gamma))
        if pi_eval is not None:
            policy = pi_eval
            V, it = evaluate(pi_eval, V0)
        else:
            policy = _greedy(backup(V0)[0])
            V, it = evaluate(policy, V0)
            for _ in range(max_iter):
                new = _greedy(backup(V)[0])
                Qv = backup(V)[0]
                if np.all((Qv * new).sum(axis=1) <= (Qv * policy).sum(axis=1) + 1e-12):
                    break
                policy = new
                V, k = evaluate(policy, V)
                it += k
    else:
        raise ValueError(f"method = {method!r}; allowed: 'dual', 'convex'")
    Qv, p = backup(V)
    TV = (policy * Qv).sum(axis=1)
    V = V - np.max(np.abs(TV - V)) / (1 - gamma) if method == "dual" else V
    Qv, p = backup(V)
    trivial = r_range[0] / (1 - gamma)
    return PessimisticResult(V=V, Q=Qv, policy=policy, kernel=p, eps=eps,
                             vacuous=V - trivial <= 1e-3 * (r_range[1] - r_range[0]) / (1 - gamma), iterations=it)


def _greedy(Q):
    pi = np.zeros_like(Q)
    pi[np.arange(Q.shape[0]), np.argmax(Q, axis=1)] = 1.0
    return pi


def _robust_eval_convex(T_hat, R, gamma, pi_eval, eps, supp, solver=None):
    """Joint convex program for the rectangular robust evaluation (see module docstring).

    ``y_z`` bounds ``σ_z(R_z + γV)``; the inner minimum is replaced by its dual, which is jointly
    concave in ``(V, μ, λ)``; maximising ``Σ V`` returns the greatest fixed point.
    """
    import cvxpy as cp
    import scipy.sparse as sp

    S, A, _ = T_hat.shape
    K = S * A
    q = T_hat.reshape(K, S)
    sf = supp.reshape(K, S)
    V = cp.Variable(S)
    y = cp.Variable(K)
    Rf = R.reshape(K, S)
    cons = [V <= cp.sum(cp.multiply(pi_eval, cp.reshape(y, (S, A), order="C")), axis=1)]
    vis = np.isfinite(eps) & (q.sum(axis=1) > 0)
    uz, ui = np.nonzero(sf & ~vis[:, None])
    if len(uz):
        cons.append(y[uz] <= Rf[uz, ui] + gamma * V[ui])
    zv = np.flatnonzero(vis)
    if len(zv):
        idx = -np.ones(K, dtype=int)
        idx[zv] = np.arange(len(zv))
        mu = cp.Variable(len(zv))
        lam = cp.Variable(len(zv), nonneg=True)
        ez, ei = np.nonzero((q > 0) & vis[:, None])
        w = q[ez, ei]
        agg = sp.csr_matrix((w, (idx[ez], np.arange(len(ez)))), shape=(len(zv), len(ez)))
        term = agg @ cp.rel_entr(lam[idx[ez]], Rf[ez, ei] + gamma * V[ei] - mu[idx[ez]])
        cons.append(y[zv] <= mu + cp.multiply(lam, 1 - eps[zv]) - term)
        sz, si = np.nonzero(sf & vis[:, None])
        cons.append(mu[idx[sz]] <= Rf[sz, si] + gamma * V[si])
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
    ``statistic ≤ ε`` for every pair; ``inf`` when the data hit a zero of ``T``.

    Raises:
        ValueError: bad counts, a ``T`` that is not a kernel of the counts' shape, unknown ``kind``.
    """
    T = validate_kernel(T)
    if np.shape(counts) != T.shape:
        raise ValueError(f"counts {np.shape(counts)} and T {T.shape} differ in shape")
    T_hat, visited = plug_in_kernel(validate_counts(counts))
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
    """Hoeffding-type universal test of ``H0: T = T0`` at level ``δ`` (inferred: the set's statistic as a test).

    Rejects when ``Σ_z Q̂_1(z) KL(T̂_z ‖ T0_z) > r_n``; the type bound gives type-I error ``≤ δ``.
    A kernel with a zero where the data have counts gives statistic ``inf`` and rejects.

    Raises:
        ValueError: bad ``delta``, shapes, counts that are not non-negative integers, a ``T0`` that
            is not a kernel, or no transitions.
    """
    N = validate_counts(counts)
    T0 = validate_kernel(T0, "T0")
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
    """Parametric-bootstrap lower bound ``(S,)`` (``r``: ``(S, A)`` or ``(S, A, S)``): the ``δ``-quantile of plug-in values ``V̂*`` with
    rows resampled as ``N*_z ~ Multinomial(N_z, T̂_z)`` (the OPE toolkits' baseline; no finite-sample
    guarantee). Unvisited pairs keep the plug-in's uniform row.

    Raises:
        ValueError: if ``n_boot < 10``, or bad ``gamma``, ``delta``, counts, policy or rewards.
    """
    if n_boot < 10:
        raise ValueError(f"n_boot = {n_boot}: use at least 10 bootstrap replicates")
    gamma = validate_gamma(gamma)
    delta = _check_delta(delta)
    N = validate_counts(counts).astype(np.int64)
    S, A, _ = N.shape
    pi_eval = validate_policy(pi_eval, S, A, "pi_eval")
    r = np.asarray(r, float)
    if r.shape == (S, A, S):
        check_reward_table(r.reshape(S, A * S), S, A * S)
    else:
        check_reward_table(r, S, A)
    T_hat, visited = plug_in_kernel(N)
    n_z = N.sum(axis=2)
    draws = rng.multinomial(n_z[None].repeat(n_boot, 0), T_hat[None].repeat(n_boot, 0))
    Tb = np.where(visited[None, :, :, None], draws / np.maximum(n_z, 1)[None, :, :, None], T_hat[None])
    P_pi = np.einsum("sa,bsat->bst", pi_eval, Tb)
    if r.ndim == 3:
        r_pi = np.einsum("sa,bsat,sat->bs", pi_eval, Tb, r)
    else:
        r_pi = np.broadcast_to((pi_eval * r).sum(axis=1), (n_boot, S))
    Vb = np.linalg.solve(np.eye(S)[None] - gamma * P_pi, r_pi[..., None])[..., 0]
    return np.quantile(Vb, delta, axis=0)


def pessimistic_values_batch(counts: np.ndarray, r: np.ndarray, *, pi_eval: np.ndarray, gamma: float,
                             delta: float = 0.05, kind: str = "kl", eps: np.ndarray | None = None,
                             r_range: tuple[float, float] = (0.0, 1.0), tol: float = 1e-9,
                             max_iter: int = 1000) -> np.ndarray:
    """Pessimistic values ``V_low`` ``(B, S)`` of ``pi_eval`` for a batch of count tables at once.

    The same computation as ``pessimistic_values(counts[b], r, pi_eval=pi_eval, gamma=gamma,
    delta=delta, kind=kind, eps=eps[b]).V`` for each ``b`` (forward sets, ``radius="pair_types"``,
    full support, the per-(s,a) dual): every row of the worst case is solved independently, so
    stacking the ``B·S·A`` rows of all replicates into one call gives the same numbers; each
    replicate leaves the adversary's policy iteration at its own convergence round. It exists
    because the replicate loops of the experiment spent their time in Python overhead per call.

    Args:
        counts: ``(B, S, A, S)`` transition counts.
        r: ``(S, A)`` or ``(S, A, S)`` rewards in ``r_range``.
        pi_eval: ``(S, A)`` evaluated policy.
        gamma: discount in ``[0, 1)``.
        delta: error probability of each confidence set (ignored when ``eps`` is given).
        kind: ``"kl"``, ``"l1"`` or ``"hoeffding"`` (as :func:`pessimistic_values`).
        eps: explicit ``(B, S, A)`` radii, default the ``pair_types`` radii of each table.

    Returns:
        ``(B, S)`` pessimistic values.

    Raises:
        ValueError: bad shapes or values (as :func:`pessimistic_values`).
        RuntimeError: if some replicate does not converge in ``max_iter`` rounds.
    """
    gamma = validate_gamma(gamma)
    counts = np.asarray(counts, float)
    if counts.ndim != 4:
        raise ValueError(f"counts must have shape (B, S, A, S); got {counts.shape}")
    B, S, A, _ = counts.shape
    Ns = [validate_counts(Ni) for Ni in counts]
    R = _reward_table(r, S, A, r_range)
    pi = validate_policy(pi_eval, S, A, "pi_eval")
    if kind not in _WORST:
        raise ValueError(f"kind = {kind!r}; allowed: {', '.join(SETS)}")
    worst = _WORST[kind]
    E = np.stack([set_radii(Ni, delta, kind, "pair_types") for Ni in Ns]) if eps is None else np.asarray(eps, float)
    if E.shape != (B, S, A):
        raise ValueError(f"eps must have shape {(B, S, A)}; got {E.shape}")
    T_hat = np.stack([np.where(vis[:, :, None], T, 0.0) for T, vis in map(plug_in_kernel, Ns)])
    Rf = R.reshape(S * A, S)

    def backup(V, idx):   # V: (len(idx), S) -> Q (len(idx), S, A), worst rows (len(idx), S, A, S)
        n = len(idx)
        v = (Rf[None, :, :] + gamma * V[:, None, :]).reshape(n * S * A, S)
        sig, p = worst(T_hat[idx].reshape(n * S * A, S), v, E[idx].reshape(-1))
        return sig.reshape(n, S, A), p.reshape(n, S, A, S)

    V = np.full((B, S), r_range[0] / (1 - gamma))
    todo = np.arange(B)
    for it in range(1, max_iter + 1):
        Qv, p = backup(V[todo], todo)
        TV = (pi[None] * Qv).sum(axis=2)
        done = (np.max(np.abs(TV - V[todo]), axis=1) < tol * (1 - gamma)) & (it > 1)
        todo, p = todo[~done], p[~done]
        if not len(todo):
            break
        P_pi = np.einsum("sa,bsat->bst", pi, p)
        r_pi = np.einsum("sa,bsat,sat->bs", pi, p, R)
        V[todo] = np.linalg.solve(np.eye(S)[None] - gamma * P_pi, r_pi[..., None])[..., 0]
    else:
        raise RuntimeError(f"robust evaluation did not converge in {max_iter} rounds")
    Qv = backup(V, np.arange(B))[0]
    TV = (pi[None] * Qv).sum(axis=2)
    return V - np.max(np.abs(TV - V), axis=1, keepdims=True) / (1 - gamma)
