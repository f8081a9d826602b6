"""Wasserstein bounds for annealed Langevin with approximate scores, and the decision rules that
choose step sizes h_ℓ, steps per level K_ℓ and the number of levels L for a prescribed accuracy ε.

Per level (Dalalyan & Karagulyan 2019, "LMC with inexact gradients"; the paper's abstract says it
derives Wasserstein bounds for ALD with approximate scores, of which this is our per-level form):
if π_ℓ is m_ℓ-strongly log-concave and M_ℓ-smooth, h_ℓ ≤ 2/(m_ℓ + M_ℓ) and the score error
is at most δ,

    W2(ρ_ℓ^{(K)}, π_ℓ) ≤ (1 − m_ℓ h_ℓ)^{K} W2(ρ_ℓ^{(0)}, π_ℓ) + B_ℓ,
    B_ℓ = 1.65 (M_ℓ/m_ℓ) √(h_ℓ d) + δ/m_ℓ                          ("lipschitz")
    B_ℓ = (H h_ℓ d)/(2 m_ℓ) + 11 M_ℓ h_ℓ √(M_ℓ d)/(5 m_ℓ) + δ/m_ℓ   ("hessian_lipschitz", the same
          authors' bound for H-Hessian-Lipschitz targets; H = 0 for Gaussian bridges).

Chaining (inferred; ρ_ℓ^{(0)} = ρ_{ℓ+1}^{(K)}, triangle inequality):

    e_ℓ ≤ (1 − m_ℓ h_ℓ)^{K_ℓ} (e_{ℓ+1} + W2(π_{ℓ+1}, π_ℓ)) + B_ℓ,   e_{L+1} + W := W2(ρ_init, π_L).

Decision rule (inferred — the paper's exact rule could not be read, only its abstract and first
page; ours follows the bound):
keep every level within the prescribed accuracy, e_ℓ ≤ ε, spending a fraction ``bias_fraction``
= r of ε on the stationary bias and the rest on contraction:

    h_ℓ = min{ 2/(m_ℓ + M_ℓ),  largest h with B_ℓ(h) ≤ r ε }
    K_ℓ = ⌈ log((1 − r) ε / (e_{ℓ+1} + W_ℓ)) / log(1 − m_ℓ h_ℓ) ⌉  (at least 1)
    L   = smallest L whose consecutive bridging densities are ε-close in W2 (``max_gap``), or
          the L minimising the guaranteed total Σ_ℓ K_ℓ (``min_total``).

References:
    A. Dalalyan, A. Karagulyan, "User-friendly guarantees for the Langevin Monte Carlo with
    inaccurate gradient", Stoch. Proc. Appl. 2019.
    C. Touron, G. Cardoso, J. Arbel, P. Rodrigues, "Theoretical guidelines for annealed Langevin
    dynamics in compositional SBI", arXiv:2605.21253 (2026).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .gaussian import BRIDGES, GaussianFit, bridge, require_normalisable, w2_gaussian
from .schedule import VPSchedule

BIAS_TERMS = ("lipschitz", "hessian_lipschitz")
LMC_CONSTANT = 1.65          # Dalalyan & Karagulyan 2019, bound for M-smooth targets with inexact gradients
HESSIAN_CONSTANT = 11.0 / 5  # Dalalyan & Karagulyan 2019, bound for Hessian-Lipschitz targets
MAX_STEPS_PER_LEVEL = 10**9  # beyond this a run would take days: the rule refuses (InfeasibleAccuracyError)
DEFAULT_BIAS_TERM = "hessian_lipschitz"


class NotLogConcaveWarning(UserWarning):
    """A bridging density is not strongly log-concave (m_t ≤ 0): the bound does not apply and
    the rule's values are only a heuristic."""


class StepCapWarning(UserWarning):
    """The rule asked for more Langevin steps than ``max_total_steps``: the steps per level were
    scaled down to the cap, and the chained bound of the capped values (reported) may exceed ε."""


class InfeasibleAccuracyError(ValueError):
    """The prescribed ε cannot be guaranteed (score error δ/m_t already uses the bias budget)."""


def max_step_size(m: float, M: float) -> float:
    """Stability/contraction bound h_max = 2/(m + M) of one Langevin step (Dalalyan & Karagulyan 2019).

    Raises:
        ValueError: if not 0 < m ≤ M (finite).
    """
    if not (math.isfinite(m) and math.isfinite(M) and 0 < m <= M * (1 + 1e-12)):
        raise ValueError(f"need 0 < m <= M finite, got m={m!r}, M={M!r}")
    return 2.0 / (m + M)


def level_bias(h: float, m: float, M: float, d: int, delta: float = 0.0,
               bias_term: str = DEFAULT_BIAS_TERM, hessian_lipschitz: float = 0.0) -> float:
    """Stationary bias B of K→∞ Langevin steps at one level (module docstring, B_ℓ).

    Args:
        h: step size > 0. m, M: strong log-concavity and smoothness. d: dimension.
        delta: bound on the score error norm (≥ 0). bias_term: ``"lipschitz"`` or
        ``"hessian_lipschitz"``. hessian_lipschitz: H for the latter (0 for Gaussians).

    Returns:
        B in the units of θ (a W2 distance).
    """
    if bias_term not in BIAS_TERMS:
        raise ValueError(f"bias_term must be one of {BIAS_TERMS}, got {bias_term!r}")
    if bias_term == "lipschitz":
        disc = LMC_CONSTANT * (M / m) * math.sqrt(h * d)
    else:
        disc = hessian_lipschitz * h * d / (2 * m) + HESSIAN_CONSTANT * M * h * math.sqrt(M * d) / m
    return disc + delta / m


def level_bound(w_in: float, h: float, K: int, m: float, M: float, d: int, delta: float = 0.0,
                bias_term: str = DEFAULT_BIAS_TERM, hessian_lipschitz: float = 0.0) -> float:
    """W2 bound after K steps at one level: (1 − m h)^K w_in + B (module docstring).

    Raises:
        ValueError: if h > 2/(m + M) (the theorem's condition), naming the bound.
    """
    hmax = max_step_size(m, M)
    if h > hmax * (1 + 1e-12):
        raise ValueError(f"step size h={h:.4g} exceeds the stability bound 2/(m+M)={hmax:.4g}")
    return contraction_factor(m, h) ** K * w_in + level_bias(h, m, M, d, delta, bias_term, hessian_lipschitz)


def contraction_factor(m: float, h: float) -> float:
    """Per-step W2 contraction 1 − m h of Langevin with h ≤ 2/(m + M), floored at 0.

    m·h ≥ 1 happens only when m = M and h = 2/(m + M) = 1/m (up to round-off): the step then maps
    every point to the target's mean plus noise, a one-step contraction (factor 0), and
    log(1 − m h) is undefined — callers must not take it.
    """
    return max(0.0, 1.0 - m * h)


def _h_for_bias(budget: float, m: float, M: float, d: int, bias_term: str, H: float) -> float:
    """Largest h with discretisation part of B ≤ budget (budget > 0)."""
    if bias_term == "lipschitz":
        return (budget * m / (LMC_CONSTANT * M)) ** 2 / d
    rate = H * d / (2 * m) + HESSIAN_CONSTANT * M * math.sqrt(M * d) / m   # B_disc = rate · h
    return budget / rate


@dataclass
class ALDHyperparameters:
    """Tuned (or hand-set) annealed Langevin hyperparameters and their guarantee.

    Attributes:
        times: levels t_L > … > t_1 in sampling order, shape ``(L,)``.
        step_sizes: h_ℓ, shape ``(L,)``.
        n_steps: K_ℓ, int array ``(L,)``.
        bound: guaranteed W2 to π_{t_1} after the last level (``nan`` if no guarantee).
        level_bounds: the chained bound e_ℓ per level, shape ``(L,)``.
        m, M: constants per level, shape ``(L,)``.
        kind: the bridging family the rule was computed for.
        epsilon: the prescribed accuracy (``nan`` for hand-set values).
        notes: how the values were chosen (tracking multiplier, a step cap).
        requested_total_steps: Σ K_ℓ the rule asked for when ``max_total_steps`` capped it (then
            ``bound`` is the chained bound of the capped values, possibly above ε), else ``None``.
    """

    times: np.ndarray
    step_sizes: np.ndarray
    n_steps: np.ndarray
    bound: float
    level_bounds: np.ndarray
    m: np.ndarray
    M: np.ndarray
    kind: str = ""
    epsilon: float = float("nan")
    notes: list[str] = field(default_factory=list)
    requested_total_steps: int | None = None

    @property
    def num_levels(self) -> int:
        """L."""
        return int(len(self.times))

    @property
    def total_steps(self) -> int:
        """Σ_ℓ K_ℓ (score evaluations per particle are n × this)."""
        return int(np.sum(self.n_steps))


def _bridges_for(kind: str, times: np.ndarray, schedule: VPSchedule, fit: GaussianFit):
    bs = [bridge(kind, float(t), schedule, fit) for t in times]
    bad = [b for b in bs if not b.m > 0]
    if bad:
        require_normalisable(bad[0], kind)
    return bs


def tune_for_levels(kind: str, times: Sequence[float], schedule: VPSchedule, fit: GaussianFit,
                    epsilon: float, delta: float = 0.0, bias_fraction: float = 0.5,
                    bias_term: str = DEFAULT_BIAS_TERM, hessian_lipschitz: float = 0.0,
                    init_mean=None, init_cov=None, track: float = 1.0,
                    bridges: Sequence | None = None, gaps: Sequence[float] | None = None) -> ALDHyperparameters:
    """The decision rule for h_ℓ and K_ℓ on given levels (module docstring), Gaussian setting.

    Args:
        kind: bridging family, one of ``gaussian.BRIDGES``.
        times: levels in sampling order (decreasing), each in [0, 1].
        schedule: VP schedule. fit: :class:`GaussianFit` (exact or a moment fit).
        epsilon: prescribed W2 accuracy ε > 0 (units of θ).
        delta: bound on the composite-score error norm, ≥ 0.
        bias_fraction: r ∈ (0, 1), share of ε given to the stationary bias.
        bias_term, hessian_lipschitz: which per-level bias. Default ``"hessian_lipschitz"`` with
            H = 0: the Gaussian-setting rule (exact for Gaussian bridging densities; for other
            targets a heuristic unless you pass their H). ``"lipschitz"`` is the strict bound for
            any M-smooth target and needs ~10–30× more steps. The same default is used by
            :func:`tune` and ``sample_tall_posterior``.
        init_mean, init_cov: the initial law (default N(0, I), as the authors' code).
        track: tolerance multiplier of the intermediate levels (≥ 1): levels before the last are
            kept within ``track·epsilon`` of their bridging density (bias budget and contraction
            target scaled alike), only the last within ``epsilon``. 1 keeps every level within ε;
            larger values take bigger steps while annealing and spend the contraction once, at
            the end. The chained bound of the last level stays ≤ ε either way.
        bridges: the bridging densities at ``times`` if already computed (``gaussian.bridge`` per
            level; :func:`tune` reuses them across its candidates), else computed here.
        gaps: W2 between consecutive bridging densities (``len(times) − 1`` values, as
            :func:`level_gaps`) if already computed (:func:`tune` reuses them across its tracks and,
            with a ``cache``, across calls), else computed here. Same numbers either way.

    Returns:
        :class:`ALDHyperparameters` with ``bound ≤ epsilon``.

    Raises:
        NonNormalisableBridgeError: a level's bridging density is not normalisable.
        InfeasibleAccuracyError: δ/m_ℓ ≥ r ε at some level (the score is too inaccurate).
        ValueError: bad arguments.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
    if not 0 < bias_fraction < 1:
        raise ValueError(f"bias_fraction must be in (0, 1), got {bias_fraction!r}")
    if bias_term not in BIAS_TERMS:
        raise ValueError(f"bias_term must be one of {BIAS_TERMS}, got {bias_term!r}")
    if not (math.isfinite(track) and track >= 1):
        raise ValueError(f"track must be a finite number >= 1, got {track!r}")
    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or len(times) == 0 or np.any(np.diff(times) >= 0):
        raise ValueError("times must be a non-empty, strictly decreasing 1-D sequence (sampling order)")
    d = fit.d
    if bridges is not None and len(bridges) != len(times):
        raise ValueError(f"bridges has {len(bridges)} entries for {len(times)} levels")
    bs = list(bridges) if bridges is not None else _bridges_for(kind, times, schedule, fit)
    if gaps is not None and len(gaps) != len(times) - 1:
        raise ValueError(f"gaps has {len(gaps)} entries for {len(times)} levels (need one fewer)")
    m0 = np.zeros(d) if init_mean is None else np.asarray(init_mean, float)
    c0 = np.eye(d) if init_cov is None else np.asarray(init_cov, float)
    w_in = w2_gaussian(m0, c0, bs[0].mean, bs[0].cov)
    hs, ks, es = [], [], []
    e_prev = None
    for i, b in enumerate(bs):
        if i > 0:
            w_in = e_prev + (gaps[i - 1] if gaps is not None else w2_gaussian(bs[i - 1].mean, bs[i - 1].cov,
                                                                                b.mean, b.cov))
        eps_l = epsilon if i == len(bs) - 1 else track * epsilon      # this level's tolerance
        budget = bias_fraction * eps_l - delta / b.m
        if budget <= 0:
            raise InfeasibleAccuracyError(
                f"score error delta={delta:.4g} gives delta/m_t={delta / b.m:.4g} at t={b.t:.4g}, which "
                f"exceeds the bias budget {bias_fraction}*{eps_l:.4g}={bias_fraction * eps_l:.4g}: "
                "epsilon cannot be guaranteed; raise epsilon or improve the score")
        h = min(max_step_size(b.m, b.M), _h_for_bias(budget, b.m, b.M, d, bias_term, hessian_lipschitz))
        target = (1 - bias_fraction) * eps_l
        if w_in <= target or contraction_factor(b.m, h) == 0.0:
            k = 1                                # already within target, or m = M and h = 1/m: one step contracts
        else:
            log_rate = math.log1p(-b.m * h)      # log(1 − m h), exact also when m h is below float resolution
            k = max(1, math.ceil(math.log(target / w_in) / log_rate))
        if k > MAX_STEPS_PER_LEVEL:
            raise InfeasibleAccuracyError(
                f"epsilon={epsilon:.4g} needs K={k:.3g} Langevin steps at level t={b.t:.4g} (step size {h:.3g}), "
                f"more than {MAX_STEPS_PER_LEVEL:.0e}: raise epsilon")
        e = level_bound(w_in, h, k, b.m, b.M, d, delta, bias_term, hessian_lipschitz)
        hs.append(h)
        ks.append(k)
        es.append(e)
        e_prev = e
    return ALDHyperparameters(times, np.array(hs), np.array(ks, dtype=int), float(es[-1]), np.array(es),
                              np.array([b.m for b in bs]), np.array([b.M for b in bs]), kind, float(epsilon))


DEFAULT_LEVEL_CANDIDATES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 65, 80, 100, 130, 160, 200,
                            250, 320, 400, 500, 650, 800, 1000)
LEVEL_RULES = ("max_gap", "min_total")
TRACK_CANDIDATES = (1.0, 2.0, 4.0, 8.0)   # tolerance multipliers of the intermediate levels tried by tune(track="auto")


def level_gaps(kind: str, times: Sequence[float], schedule: VPSchedule, fit: GaussianFit) -> np.ndarray:
    """W2(π_{ℓ+1}, π_ℓ) between consecutive bridging densities (Bures), shape ``(L−1,)``."""
    bs = _bridges_for(kind, np.asarray(times, float), schedule, fit)
    return np.array([w2_gaussian(a.mean, a.cov, b.mean, b.cov) for a, b in zip(bs[:-1], bs[1:])])


def tune(kind: str, schedule: VPSchedule, fit: GaussianFit, epsilon: float, delta: float = 0.0,
         bias_fraction: float = 0.5, bias_term: str = DEFAULT_BIAS_TERM, hessian_lipschitz: float = 0.0,
         level_rule: str = "max_gap", max_gap: float | None = None,
         level_candidates: Sequence[int] = DEFAULT_LEVEL_CANDIDATES,
         track: float | str = "auto", cache: dict | None = None,
         max_total_steps: int | None = None) -> ALDHyperparameters:
    """Full decision rule (:func:`_tune_uncapped`, documented there), with an optional cap on Σ K_ℓ.

    ``max_total_steps`` (an integer ≥ 1, or ``None`` for no cap): if the rule asks for more total
    Langevin steps, every K_ℓ is scaled by cap/Σ K_ℓ (rounded down, at least 1, so the total is at
    most max(cap, L)), the chained bound of the capped values is recomputed on the same bridging
    densities (it may exceed ε: no guarantee then), ``requested_total_steps`` records what the rule
    asked for, and a :class:`StepCapWarning` says so. Why: a badly conditioned bridge (a Gaussian fit
    from a poorly trained network) makes the rule's steps tiny and their number huge (45,576 network
    steps for one seed against ~200 for others), a cost far out of proportion with any accuracy the
    network's own score error allows.

    Raises:
        ValueError: ``max_total_steps`` not an integer ≥ 1; and everything :func:`_tune_uncapped` raises.
    """
    if max_total_steps is not None and (isinstance(max_total_steps, bool)
                                        or not isinstance(max_total_steps, (int, np.integer)) or max_total_steps < 1):
        raise ValueError(f"max_total_steps must be an integer >= 1 or None, got {max_total_steps!r}")
    hp = _tune_uncapped(kind, schedule, fit, epsilon, delta, bias_fraction, bias_term, hessian_lipschitz,
                        level_rule, max_gap, level_candidates, track, cache)
    if max_total_steps is None or hp.total_steps <= max_total_steps:
        return hp
    asked = hp.total_steps
    ks = np.maximum(1, np.floor(hp.n_steps * (max_total_steps / asked))).astype(int)
    bs = _bridges_for(kind, hp.times, schedule, fit)
    d = fit.d
    w_in = w2_gaussian(np.zeros(d), np.eye(d), bs[0].mean, bs[0].cov)
    es = []
    for i, (b, h, k) in enumerate(zip(bs, hp.step_sizes, ks)):
        if i > 0:
            w_in = es[-1] + w2_gaussian(bs[i - 1].mean, bs[i - 1].cov, b.mean, b.cov)
        es.append(level_bound(w_in, float(h), int(k), b.m, b.M, d, delta, bias_term, hessian_lipschitz))
    note = (f"steps capped: the rule asked for {asked} total Langevin steps, more than max_total_steps="
            f"{max_total_steps}; K_ℓ scaled down to {int(ks.sum())}, chained bound {es[-1]:.4g} (ε = {epsilon:.4g})")
    warnings.warn(note + ("; the accuracy ε is no longer guaranteed" if es[-1] > epsilon else ""),
                  StepCapWarning, stacklevel=2)
    return ALDHyperparameters(hp.times, hp.step_sizes, ks, float(es[-1]), np.array(es), hp.m, hp.M, kind,
                              hp.epsilon, [*hp.notes, note], asked)


def _tune_uncapped(kind: str, schedule: VPSchedule, fit: GaussianFit, epsilon: float, delta: float = 0.0,
                   bias_fraction: float = 0.5, bias_term: str = DEFAULT_BIAS_TERM, hessian_lipschitz: float = 0.0,
                   level_rule: str = "max_gap", max_gap: float | None = None,
                   level_candidates: Sequence[int] = DEFAULT_LEVEL_CANDIDATES,
                   track: float | str = "auto", cache: dict | None = None) -> ALDHyperparameters:
    """Full decision rule: L, then h_ℓ and K_ℓ by :func:`tune_for_levels` on ``schedule.levels(L)``.

    L (inferred rule, two variants):
        ``"max_gap"`` (default): the smallest candidate L whose consecutive bridging densities are
        all within ``max_gap`` (default ε) in W2, so every level starts within 2ε of its target
        and needs a contraction of only (1 − r)/2;
        ``"min_total"``: the candidate L minimising the guaranteed total Σ_ℓ K_ℓ. For strongly
        log-concave (e.g. Gaussian) targets this usually picks L = 1: from the bound's point of
        view annealing costs steps, its benefit is robustness for multimodal targets.

    Intermediate levels (``track``): ``"auto"`` (default) takes, on the chosen levels, the
    tolerance multiplier of the intermediate levels in :data:`TRACK_CANDIDATES` (1, 2, 4, 8) with
    the smallest guaranteed total; a number fixes it (1 = every level within ε, the earlier
    rule). Why: keeping *every* level within ε makes each of the L levels pay a full
    contraction from e_ℓ₊₁ + W2(π_ℓ₊₁, π_ℓ) down to (1 − r)ε with the small step of an ε bias
    budget. Geffner's bridging densities move about 3× more per level than Linhart's early in the
    annealing (W2 gaps 0.09 against 0.03 at d = 2, n = 10, ε = 0.1), so the max-gap rule needs
    more levels (65 against 50) and the per-level contractions added up to 2.3× the evaluations of
    hand-tuned ALD. Tracking within a few ε and contracting once at the last level keeps the
    guarantee on the output (the chained bound of the last level is still ≤ ε) at a fraction of
    the cost.

    The arguments are those of :func:`tune_for_levels`, plus ``level_rule``, ``max_gap`` (> 0),
    ``level_candidates`` (increasing integers ≥ 1) and ``track`` ("auto" or a number ≥ 1).
    ``cache``: an optional dict owned by the caller for ONE (``schedule``, ``fit``) pair; the bridging
    densities and their consecutive W2 gaps per (kind, L) are kept there, so repeated calls on the same
    problem (other ε, δ, bias terms) skip recomputing them. The result is the same with or without it.

    Returns:
        :class:`ALDHyperparameters` whose bound is ≤ ε.

    Raises:
        InfeasibleAccuracyError: no candidate L gives a guarantee (or meets ``max_gap``).
        NonNormalisableBridgeError: as :func:`tune_for_levels`.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if kind not in BRIDGES:
        raise ValueError(f"kind must be one of {BRIDGES}, got {kind!r}")
    if level_rule not in LEVEL_RULES:
        raise ValueError(f"level_rule must be one of {LEVEL_RULES}, got {level_rule!r}")
    if not level_candidates or any(int(c) != c or c < 1 for c in level_candidates):
        raise ValueError(f"level_candidates must be integers >= 1, got {level_candidates!r}")
    gap = epsilon if max_gap is None else float(max_gap)
    if not (math.isfinite(gap) and gap > 0):
        raise ValueError(f"max_gap must be a finite number > 0, got {max_gap!r}")
    if track == "auto":
        tracks = TRACK_CANDIDATES
    elif isinstance(track, (int, float, np.integer, np.floating)) and not isinstance(track, bool) \
            and math.isfinite(track) and track >= 1:
        tracks = (float(track),)
    else:
        raise ValueError(f"track must be 'auto' or a finite number >= 1, got {track!r}")
    best, last_err = None, None
    for L in sorted(int(c) for c in level_candidates):
        times = schedule.levels(L)
        if cache is not None and (kind, L) in cache:
            bs, gaps = cache[(kind, L)]
        else:
            bs = _bridges_for(kind, np.asarray(times, float), schedule, fit)     # once per L, for every track
            gaps = [w2_gaussian(a.mean, a.cov, b.mean, b.cov) for a, b in zip(bs[:-1], bs[1:])]
            if cache is not None:
                cache[(kind, L)] = (bs, gaps)
        if level_rule == "max_gap" and L > 1 and max(gaps) > gap:
            continue
        hp = None
        for tr in tracks:
            try:
                cand = tune_for_levels(kind, times, schedule, fit, epsilon, delta, bias_fraction,
                                       bias_term, hessian_lipschitz, track=tr, bridges=bs, gaps=gaps)
            except InfeasibleAccuracyError as err:
                last_err = err
                continue
            if hp is None or cand.total_steps < hp.total_steps:
                hp = cand
                hp.notes.append(f"intermediate levels within {tr:g}·epsilon")
        if hp is None:
            continue
        if level_rule == "max_gap" and L > 1:
            return hp
        if best is None or hp.total_steps < best.total_steps:
            best = hp
    if level_rule == "max_gap":
        raise last_err if last_err else InfeasibleAccuracyError(
            f"no candidate number of levels (max {max(level_candidates)}) keeps consecutive bridging "
            f"densities within max_gap={gap:.4g}; add larger candidates or raise max_gap")
    if best is None:
        raise last_err if last_err else InfeasibleAccuracyError("no candidate number of levels works")
    return best


def hand_tuned(kind: str, schedule: VPSchedule, fit: GaussianFit | None = None, num_levels: int = 25,
               step_size: float = 1e-3, n_steps: int = 5) -> ALDHyperparameters:
    """Hand-tuned ALD defaults of the authors' code (h = 1e-3, K = 5, L = 25), no guarantee.

    ``fit`` (optional) only fills in m_ℓ, M_ℓ for reporting.

    Raises:
        ValueError: ``step_size`` not a finite number > 0, ``n_steps`` not an integer >= 0, or
            ``num_levels`` not an integer >= 1.
    """
    if isinstance(step_size, bool) or not (isinstance(step_size, (int, float, np.floating, np.integer))
                                           and math.isfinite(step_size) and step_size > 0):
        raise ValueError(f"step_size must be a finite number > 0, got {step_size!r}")
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 0:
        raise ValueError(f"n_steps must be an integer >= 0, got {n_steps!r}")
    times = schedule.levels(num_levels)
    L = len(times)
    if fit is not None:
        bs = [bridge(kind, float(t), schedule, fit) for t in times]
        m, M = np.array([b.m for b in bs]), np.array([b.M for b in bs])
    else:
        m = M = np.full(L, np.nan)
    return ALDHyperparameters(times, np.full(L, float(step_size)), np.full(L, int(n_steps)), float("nan"),
                              np.full(L, np.nan), m, M, kind)


def max_step_profile(kind: str, times: Sequence[float], schedule: VPSchedule, fit: GaussianFit) -> np.ndarray:
    """h_max(t) = 2/(m_t + M_t) of the bridging family at each time; ``nan`` where π_t is not
    strongly log-concave. Shape ``(len(times),)``. Paper claim: h^L_max(t) ≥ h^G_max(t)."""
    out = []
    for t in times:
        b = bridge(kind, float(t), schedule, fit)
        out.append(2.0 / (b.m + b.M) if b.m > 0 else float("nan"))
    return np.array(out)


def warn_if_not_log_concave(m_values, where: str = "") -> bool:
    """Warn (:class:`NotLogConcaveWarning`) if any estimated m_t ≤ 0; return True if warned."""
    m_values = np.asarray(m_values, dtype=float)
    if np.any(~(m_values > 0)):
        warnings.warn(f"bridging density not strongly log-concave {where}(min m_t={np.nanmin(m_values):.3g}): "
                      "the W2 bounds do not apply; the tuned values are only a heuristic",
                      NotLogConcaveWarning, stacklevel=2)
        return True
    return False
