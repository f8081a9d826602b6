"""The sweep over insertion rates: paired documents, seeds, bootstrap CIs and a U-shape test.

Design (inferred; the paper's grid and statistics could not be read):

* Paired design: the same documents at every rate p; each (document, seed) is fragmented with
  draws coupled across p (see :mod:`.perturbation`). Per document, F1 is averaged over seeds;
  documents are the bootstrap unit.
* Curve: mean F1 per rate with a paired percentile bootstrap CI over documents.
* U-shape test with sample splitting, so the valley's location is not chosen on the data that
  judge it: documents are split at random into a *selection* half (picks p_min = argmin of
  mean F1) and a *test* half (estimates depth = min(F1(p_0), F1(p_last)) - F1(p_min) with a
  bootstrap CI). A U is found when p_min is strictly inside the range and the depth's CI lies
  above 0; inconclusive when the CI straddles 0.
* Backend failures are counted and left out (NaN), never scored as a miss.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from .scoring import MATCHERS, score
from .tasks import DetectionItem, render


@dataclass
class SweepResult:
    """F1 per matcher, shape (n_rates, n_docs, n_seeds), NaN where the subject failed."""

    rates: np.ndarray
    doc_ids: list[str]
    seeds: list[int]
    f1: dict[str, np.ndarray]
    failures: int = 0
    calls: int = 0

    def per_doc(self, matcher: str = "normalised") -> np.ndarray:
        """F1 averaged over seeds: (n_rates, n_docs) (NaN-aware)."""
        with np.errstate(invalid="ignore"):
            return np.nanmean(self.f1[matcher], axis=2)


def run_sweep(items: Sequence[DetectionItem], subject: Callable, rates: Sequence[float], *,
              seeds: Sequence[int] = (0,), mode: str = "random", matchers: Sequence[str] = MATCHERS,
              icl: int = 0, track: Callable[[Iterable, str], Iterable] | None = None) -> SweepResult:
    """Ask ``subject`` every item at every rate and seed; score with every matcher.

    Args:
        items: detection documents (clean).
        subject: ``Rendered -> str``; raising ``neurips26.backends.BackendError`` counts a failure.
        rates: insertion rates in [0, 1], increasing.
        mode: ``random`` or ``per_type`` (regularised arm).
        icl: number of solved examples shown first (the in-context-learning arm); the examples
            are the next items in the list (cyclically), rendered at the same rate.
        track: optional progress wrapper ``(iterable, description) -> iterable``.

    Raises:
        ValueError: no items, no rates, rates not increasing or outside [0, 1], unknown matcher.
    """
    from neurips26.backends import BackendError

    rates = np.asarray(list(rates), dtype=float)
    if not len(items):
        raise ValueError("items is empty")
    if rates.size < 1 or np.any(np.diff(rates) <= 0) or rates.min() < 0 or rates.max() > 1:
        raise ValueError(f"rates={rates.tolist()}; allowed: increasing values in [0, 1]")
    bad = [m for m in matchers if m not in MATCHERS]
    if bad:
        raise ValueError(f"matcher {bad[0]!r}; allowed: {', '.join(MATCHERS)}")
    f1 = {m: np.full((rates.size, len(items), len(seeds)), np.nan) for m in matchers}
    failures = calls = 0
    grid = [(ri, si) for ri in range(rates.size) for si in range(len(seeds))]
    for ri, si in (track(grid, "rates × seeds") if track else grid):
        p, seed = float(rates[ri]), int(seeds[si])
        for di, item in enumerate(items):
            examples = [items[(di + j + 1) % len(items)] for j in range(icl)]
            shots = [render(ex, p, seed, mode=mode) for ex in examples]
            answers = ["\n".join(sh.shown[t] for t in ex.targets) for sh, ex in zip(shots, examples)]
            rendered = render(item, p, seed, mode=mode, icl_examples=shots, icl_answers=answers)
            calls += 1
            try:
                response = subject(rendered)
            except BackendError:
                failures += 1
                continue
            for m in matchers:
                f1[m][ri, di, si] = score(item.targets, item.candidates, response, m).f1
    return SweepResult(rates, [it.doc_id for it in items], [int(s) for s in seeds], f1, failures, calls)


def bootstrap_curve(per_doc: np.ndarray, n_boot: int = 2000, seed: int = 0,
                    level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over documents per rate and its paired percentile bootstrap CI.

    Args:
        per_doc: (n_rates, n_docs) F1 (NaN = failed; ignored).

    Returns:
        ``(mean, lo, hi)``, each (n_rates,).
    """
    per_doc = np.asarray(per_doc, dtype=float)
    n_docs = per_doc.shape[1]
    idx = np.random.default_rng(seed).integers(0, n_docs, size=(n_boot, n_docs))
    with np.errstate(invalid="ignore"):
        boots = np.nanmean(per_doc[:, idx], axis=2)  # (n_rates, n_boot): documents resampled jointly
        mean = np.nanmean(per_doc, axis=1)
    a = (1 - level) / 2
    return mean, np.nanquantile(boots, a, axis=1), np.nanquantile(boots, 1 - a, axis=1)


@dataclass
class UTest:
    """Result of :func:`u_shape_test`.

    Attributes:
        p_min: rate of the minimum chosen on the selection half.
        interior: whether p_min is strictly inside the rate range.
        depth: min(F1(first rate), F1(last rate)) - F1(p_min) on the test half.
        depth_ci: its bootstrap CI.
        verdict: ``u`` (interior and CI above 0), ``no_u`` (endpoint minimum or CI below or at 0
            entirely), ``inconclusive`` (CI straddles 0).
        curve: mean F1 per rate over all documents with its bootstrap band (for figures).
        selection: column indices of the documents that chose ``p_min``; the others judged it.
    """

    p_min: float
    interior: bool
    depth: float
    depth_ci: tuple[float, float]
    verdict: str
    curve: dict = field(default_factory=dict)
    selection: list = field(default_factory=list)


def u_shape_test(per_doc: np.ndarray, rates: Sequence[float], *, n_boot: int = 2000, seed: int = 0,
                 level: float = 0.95) -> UTest:
    """Sample-split U-shape test (module docstring).

    Raises:
        ValueError: fewer than 3 rates or fewer than 4 documents.
    """
    per_doc = np.asarray(per_doc, dtype=float)
    rates = np.asarray(list(rates), dtype=float)
    if rates.size < 3:
        raise ValueError(f"a U needs at least 3 rates, got {rates.size}")
    if per_doc.shape != (rates.size, per_doc.shape[1]) or per_doc.shape[1] < 4:
        raise ValueError(f"per_doc must be (n_rates, n_docs >= 4), got {per_doc.shape}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(per_doc.shape[1])
    sel, test = perm[: perm.size // 2], perm[perm.size // 2:]
    with np.errstate(invalid="ignore"):
        i_min = int(np.nanargmin(np.nanmean(per_doc[:, sel], axis=1)))
    interior = 0 < i_min < rates.size - 1

    def depth_of(cols: np.ndarray) -> float:
        with np.errstate(invalid="ignore"):
            m = np.nanmean(per_doc[:, cols], axis=1)
        return float(min(m[0], m[-1]) - m[i_min])

    d = depth_of(test)
    idx = rng.integers(0, test.size, size=(n_boot, test.size))
    with np.errstate(invalid="ignore"):
        means = np.nanmean(per_doc[:, test[idx]], axis=2)  # (n_rates, n_boot)
    boots = np.minimum(means[0], means[-1]) - means[i_min]
    a = (1 - level) / 2
    lo, hi = float(np.nanquantile(boots, a)), float(np.nanquantile(boots, 1 - a))
    if not interior or hi <= 0:
        verdict = "no_u"
    elif lo > 0:
        verdict = "u"
    else:
        verdict = "inconclusive"
    mean, clo, chi = bootstrap_curve(per_doc, n_boot, seed, level)
    return UTest(float(rates[i_min]), interior, d, (lo, hi), verdict,
                 {"mean": mean.tolist(), "lo": clo.tolist(), "hi": chi.tolist()}, sorted(int(i) for i in sel))



def shuffled_rate_control(per_doc: np.ndarray, rates: Sequence[float], test: UTest, *, n_perm: int = 20,
                          n_boot: int = 2000, seed: int = 0,
                          level: float = 0.95) -> tuple[float, float, tuple[float, float]]:
    """Valley depth against a shuffled-rate control: the same curves with the rate labels permuted
    within each document, which removes any dependence of F1 on the insertion rate.

    Each of ``n_perm`` permuted copies goes through the same sample split as ``test`` (its own
    minimum chosen on ``test.selection``, its depth on the other documents), so the control's depth
    is what the selection finds by chance. The statistic is the paired difference, on the held-out
    documents, depth(observed) − mean over permutations of depth(shuffled); its interval is a
    percentile bootstrap over those documents (resampled jointly for both arms).

    Args:
        per_doc: (n_rates, n_docs) F1 per document (NaN allowed), the curves ``test`` was run on.
        rates: the n_rates insertion rates (the grid ``test`` was run on).
        test: the :func:`u_shape_test` result of ``per_doc``; its ``p_min`` must be interior.
        n_perm, n_boot, seed, level: permutations, bootstrap draws, generator seed, interval level.

    Returns:
        (difference, control depth, (lo, hi)): the paired difference, the mean shuffled depth on
        the held-out documents, and the difference's bootstrap interval.

    Raises:
        ValueError: ``per_doc`` does not match ``rates`` or ``test``, or ``test.p_min`` is at an end.

    Source: inferred (a shuffled-label control for the U-shape claim).
    """
    per_doc = np.asarray(per_doc, dtype=float)
    rates = np.asarray(list(rates), dtype=float)
    n_rates, n_docs = per_doc.shape
    sel = np.asarray(test.selection, dtype=int)
    if rates.size != n_rates or sel.size == 0 or sel.max() >= n_docs:
        raise ValueError(f"per_doc {per_doc.shape} does not match {rates.size} rates and the selection half "
                         f"{test.selection!r}")
    i_min = int(np.argmin(np.abs(rates - test.p_min)))
    if not 0 < i_min < n_rates - 1:
        raise ValueError(f"shuffled_rate_control needs an interior minimum, got p_min = {test.p_min}")
    held = np.setdiff1d(np.arange(n_docs), sel)
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((n_perm, n_rates, n_docs)), axis=1)      # a rate permutation per document
    shuffled = np.take_along_axis(np.broadcast_to(per_doc, order.shape), order, axis=1)  # (n_perm, n_rates, n_docs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a rate with no scored document in a resample
        k_min = np.nanargmin(np.nanmean(shuffled[:, :, sel], axis=2), axis=1)  # (n_perm,): chosen on the selection half

        def diff(cols: np.ndarray) -> tuple[float, float]:
            m = np.nanmean(per_doc[:, cols], axis=1)
            obs = min(m[0], m[-1]) - m[i_min]                                # depth at the chosen p_min
            ms = np.nanmean(shuffled[:, :, cols], axis=2)                    # (n_perm, n_rates)
            ctrl = np.mean(np.minimum(ms[:, 0], ms[:, -1]) - ms[np.arange(n_perm), k_min])
            return float(obs - ctrl), float(ctrl)

        d, ctrl = diff(held)
        boots = [diff(held[idx])[0] for idx in rng.integers(0, held.size, size=(n_boot, held.size))]
        a = (1 - level) / 2
        return d, ctrl, (float(np.nanquantile(boots, a)), float(np.nanquantile(boots, 1 - a)))
