"""Aggregate episode results: success rates by slice, the TB–FB gap overall and at equal length.

Episodes with ``status == "error"`` (backend failures) are left out of every rate and counted
separately. The **length-matched gap** compares TB and FB goals only at minimal plan lengths
where both occur, weighting each length :math:`\\ell` by its number of episodes :math:`n_\\ell`:

.. math::

    \\Delta_{\\text{matched}} = \\frac{\\sum_\\ell n_\\ell\\,(\\hat p_{TB,\\ell} - \\hat p_{FB,\\ell})}{\\sum_\\ell n_\\ell}

Its 95% interval is a stratified bootstrap over instances (resampling within each
length × TB/FB cell). The overall gap :math:`\\hat p_{TB} - \\hat p_{FB}` mixes plan lengths:
FB goals need longer plans, so a ToM-free agent already shows a gap.

Source: inferred. FB goals need longer plans, so the gap is also reported at equal minimal plan
length, where plan length cannot explain it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import numpy as np

from .baselines import EpisodeResult


def scored(episodes: Iterable[EpisodeResult]) -> list[EpisodeResult]:
    """Episodes that count towards rates (status ``success`` or ``failure``)."""
    return [e for e in episodes if e.status != "error"]


def rate(episodes: Iterable[EpisodeResult]) -> float:
    """Success rate over scored episodes (NaN when there are none)."""
    eps = scored(episodes)
    return float(np.mean([e.success for e in eps])) if eps else float("nan")


def by(episodes: Iterable[EpisodeResult], key: Callable[[EpisodeResult], object]) -> dict:
    """Success rate and count per ``key(episode)``: ``{k: {"rate": r, "n": n}}`` (sorted keys)."""
    groups: dict = defaultdict(list)
    for e in scored(episodes):
        groups[key(e)].append(e.success)
    return {k: {"rate": float(np.mean(v)), "n": len(v)} for k, v in sorted(groups.items(), key=lambda kv: str(kv[0]))}


def _check_episodes(episodes, where: str) -> list[EpisodeResult]:
    """A non-empty list of :class:`EpisodeResult` (an empty list would give NaN rates silently)."""
    eps = list(episodes)
    if not eps:
        raise ValueError(f"{where}: no episodes given; pass at least one EpisodeResult")
    bad = [type(e).__name__ for e in eps if not isinstance(e, EpisodeResult)]
    if bad:
        raise TypeError(f"{where}: episodes must be EpisodeResult objects; got {bad[0]}")
    return eps


def summary(episodes: list[EpisodeResult]) -> dict:
    """Rates overall, by TB/FB, goal type, order, context and minimal plan length, plus counts of
    invalid actions, re-asks, early stops, errors and plan efficiency (steps / oracle length on
    successes).

    Raises:
        ValueError: no episodes; TypeError: an element is not an :class:`EpisodeResult`.
    """
    episodes = _check_episodes(episodes, "summary()")
    eps = scored(episodes)
    ok = [e for e in eps if e.success and e.min_plan_length]
    steps = sum(e.steps for e in eps)
    ctx_rates = [v["rate"] for v in by(eps, lambda e: e.context).values()]
    return {
        "success": rate(eps), "n": len(eps), "errors": len(episodes) - len(eps),
        "tb": rate(e for e in eps if e.goal_type.startswith("TB")),
        "fb": rate(e for e in eps if e.goal_type.startswith("FB")),
        "by_goal_type": by(eps, lambda e: e.goal_type),
        "by_length": by(eps, lambda e: e.min_plan_length),
        "by_type_length": {f"{k[0]}@{k[1]}": v for k, v in by(eps, lambda e: (e.goal_type, e.min_plan_length)).items()},
        "by_context": by(eps, lambda e: e.context),
        "context_spread": float(np.ptp(ctx_rates)) if ctx_rates else float("nan"),
        "invalid_action_rate": (sum(e.failed_preconditions + e.unknown_entities + e.malformed for e in eps) / steps
                                if steps else 0.0),
        "failed_preconditions": sum(e.failed_preconditions for e in eps),
        "unknown_entities": sum(e.unknown_entities for e in eps),
        "malformed": sum(e.malformed for e in eps), "reasks": sum(e.reasks for e in eps),
        "stopped_early": sum(e.stopped_early for e in eps), "over_cap": sum(e.over_cap for e in eps),
        "efficiency": float(np.mean([e.steps / e.min_plan_length for e in ok])) if ok else float("nan"),
        "prompt_tokens": sum(e.prompt_tokens for e in episodes),
        "completion_tokens": sum(e.completion_tokens for e in episodes),
        "latency_s": float(sum(e.latency_s for e in episodes)),
    }


def tb_fb_gap(episodes: list[EpisodeResult], rng: np.random.Generator, n_boot: int = 2000) -> dict:
    """TB − FB success gap, overall and length-matched, each with a 95% bootstrap interval.

    Repeated episodes of one instance (the random agent) are first averaged per instance, and
    the bootstrap resamples *instances*: within TB and FB for the overall gap, within each
    length × TB/FB cell for the matched gap (so repeats never shrink the interval).

    The matched interval is only as good as its smallest cell: a cell of one instance is never
    varied by the resampling, and a cell whose outcomes are all equal (all 0 or all 1) neither,
    so with a handful of instances per cell the interval is far too narrow (two TB successes and
    two FB failures at one length give ``[1, 1]``). ``matched_min_cell`` reports the smallest
    cell so a caller can refuse to judge such an interval.

    Returns:
        ``{"overall": g, "overall_ci": [lo, hi], "matched": g_m, "matched_ci": [lo, hi],
        "matched_min_cell": k, "lengths": [shared lengths],
        "per_length": {ell: {"tb", "fb", "n_tb", "n_fb"}}}`` (``n_*`` and ``k`` count instances;
        ``k = 0`` when no length is shared); values are NaN when a side is empty.

    Raises:
        ValueError: if ``n_boot < 1`` or no episodes are given; TypeError: an element is not an
            :class:`EpisodeResult`.
    """
    episodes = _check_episodes(episodes, "tb_fb_gap()")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    per_inst: dict[str, list] = {}
    for e in scored(episodes):
        rec = per_inst.setdefault(e.instance_id, [e.goal_type.startswith("TB"), e.min_plan_length, []])
        rec[2].append(float(e.success))
    cells: dict[tuple[bool, int], list[float]] = defaultdict(list)
    for tb, ell, succ in per_inst.values():
        cells[(tb, ell)].append(float(np.mean(succ)))
    arrays = {k: np.asarray(v) for k, v in cells.items()}
    lengths = sorted({ell for (_, ell) in arrays if (True, ell) in arrays and (False, ell) in arrays})
    side = {t: np.concatenate([v for (tt, _), v in arrays.items() if tt == t]) if any(tt == t for tt, _ in arrays)
            else np.array([]) for t in (True, False)}
    nan = float("nan")

    def resample(v: np.ndarray) -> np.ndarray:  # (n,) -> (n_boot, n)
        return v[rng.integers(0, len(v), size=(n_boot, len(v)))]

    def ci(x: np.ndarray) -> list[float]:
        return [float(np.percentile(x, 2.5)), float(np.percentile(x, 97.5))]

    out: dict = {"overall": nan, "overall_ci": [nan, nan], "matched": nan, "matched_ci": [nan, nan],
                 "matched_min_cell": 0, "lengths": [int(x) for x in lengths], "per_length": {}}
    if side[True].size and side[False].size:
        out["overall"] = float(side[True].mean() - side[False].mean())
        out["overall_ci"] = ci(resample(side[True]).mean(1) - resample(side[False]).mean(1))
    if lengths:
        w = np.array([arrays[(True, ell)].size + arrays[(False, ell)].size for ell in lengths], float)
        point = np.array([arrays[(True, ell)].mean() - arrays[(False, ell)].mean() for ell in lengths])
        boot = np.stack([resample(arrays[(True, ell)]).mean(1) - resample(arrays[(False, ell)]).mean(1)
                         for ell in lengths], axis=1)
        out["matched"] = float(point @ w / w.sum())
        out["matched_ci"] = ci(boot @ w / w.sum())
        out["matched_min_cell"] = int(min(arrays[(t, ell)].size for ell in lengths for t in (True, False)))
        out["per_length"] = {int(ell): {"tb": float(arrays[(True, ell)].mean()), "fb": float(arrays[(False, ell)].mean()),
                                        "n_tb": int(arrays[(True, ell)].size), "n_fb": int(arrays[(False, ell)].size)}
                             for ell in lengths}
    return out
