"""Claims: a statement, its kind and source, the paper's number, ours with its interval, the
tolerance and why, the seeds it was judged over, and a verdict computed in code.

Kinds (:class:`Kind`):

- ``paper``: a statement of the paper. Only the papers' abstracts and first pages could be read,
  so ``source`` must name one of them (``"abstract"``, ``"first page"``).
- ``reconstruction``: a statement about *our reconstruction* where the paper's own rule, setup or
  theorem is unknown. A failure counts against the reconstruction, not the paper. ``source``
  says what was inferred and why (``"inferred: step rule from the W2 bound"``).
- ``check``: an implementation invariant or sanity check. Shown in the report, never counted as
  a confirmation of a paper.

Verdicts (:class:`Verdict`): ``holds``, ``does_not_hold``, ``inconclusive`` (the measurement's
interval straddles the threshold, or seeds disagree), ``not_checkable`` (what this machine
lacks; the note says what the full configuration does instead).

The verdict is always computed by code from ``measured``, its ``interval`` and the tolerance —
never written by hand. Build claims with the helpers below (:func:`close`, :func:`at_least`,
:func:`at_most`, :func:`within`, :func:`check`, :func:`not_checkable`) and combine per-seed
claims with :func:`over_seeds`. The helpers require ``kind`` (keyword-only; a missing kind is a
``TypeError``); :class:`Claim` itself still reads older results that have none. With an ``interval=(lo, hi)`` a helper judges the whole interval:
entirely inside the accepted region → holds, entirely outside → does not hold, across the
boundary → inconclusive. Intervals come from :func:`mean_interval` (Student-t over seeds or
replicates) or :func:`proportion_interval` (Clopper–Pearson for a success count).

A measured value (or interval end) that is NaN or ±inf never holds: the verdict is
``does_not_hold`` and the note says why.

Thresholds are fixed before looking at our result: they come from the paper's statement or
from noise, and ``reason`` says which, in words — never a pointer to a document that does not
ship with the project (a research brief, an issue, an unread section of the paper).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Sequence


class Verdict(str, Enum):
    """Outcome of checking one claim."""

    HOLDS = "holds"
    DOES_NOT_HOLD = "does_not_hold"
    INCONCLUSIVE = "inconclusive"
    NOT_CHECKABLE = "not_checkable"

    @property
    def label(self) -> str:
        """Human label used in tables: ``holds``, ``does not hold``, ``inconclusive``, …"""
        return {
            "holds": "holds",
            "does_not_hold": "does not hold",
            "inconclusive": "inconclusive",
            "not_checkable": "not checkable at this scale",
        }[self.value]


class Kind(str, Enum):
    """What a claim is about: the paper, our reconstruction of it, or our implementation."""

    PAPER = "paper"
    RECONSTRUCTION = "reconstruction"
    CHECK = "check"


#: Words that point to documents a user does not have, or to parts of a paper nobody read.
#: Only abstracts and first pages were readable (see the module docstring).
_FORBIDDEN_CITATIONS = re.compile(
    r"\bbrief\b|\bissue item\b|\bissue #?\d|§|\b(theorem|thm\.?|lemma|proposition|corollary|"
    r"figure|fig\.|table|section|sec\.|appendix|eq\.|equation)\s*\(?[A-Z]?\d",
    re.IGNORECASE)
_PAPER_SOURCES = ("abstract", "first page")


def forbidden_citation(text: str) -> str | None:
    """The first citation in ``text`` of a document that does not ship, or of an unread part.

    Returns the matched text (``"brief"``, ``"Theorem 3"``, ``"§4"``) or ``None``. Used to keep
    claims honest: only abstracts and first pages of the papers were read.
    """
    m = _FORBIDDEN_CITATIONS.search(text or "")
    return m.group(0) if m else None


@dataclass
class SeedRecord:
    """How a claim fared over seeds.

    Attributes:
        seeds: the seeds judged, in order (chosen before looking).
        held: in how many of them the per-seed claim held.
        values: the per-seed measured values (same order as ``seeds``).
        verdicts: the per-seed verdict values (``"holds"``, …).
        rule: the pre-declared aggregation rule in words.
    """

    seeds: list[int]
    held: int
    values: list[Any] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    rule: str = "unanimous"

    @property
    def n(self) -> int:
        """Number of seeds judged."""
        return len(self.seeds)


@dataclass
class Claim:
    """One checked claim.

    Attributes:
        id: short stable identifier, unique within a system (``easy_phase_xi``).
        statement: the claim in one sentence.
        paper_value: the paper's number or short text; ``None`` if the paper gives none.
        measured: our number(s) (float, list, dict or text); ``None`` if not checkable.
        tolerance: what counts as agreement, as a readable rule (``|x - 0.54| <= 0.1``).
        reason: why that tolerance, in words (sampling error, finite size, the paper's wording).
        verdict: computed by the helper that built the claim.
        note: scale caveats, inferred choices, what the full configuration changes.
        kind: :class:`Kind` — ``paper``, ``reconstruction`` or ``check``.
        source: where the statement comes from: ``"abstract"``, ``"first page"``, or
            ``"inferred: <what and why>"``.
        interval: ``(lo, hi)`` uncertainty interval of ``measured`` (e.g. 95 % over seeds), or
            ``None`` for a deterministic measurement.
        seeds: :class:`SeedRecord` when the claim was judged over several seeds.

    Raises:
        ValueError: if ``kind`` is unknown, ``source`` is missing, a ``paper`` claim's source is
            not its abstract or first page, or statement/source/tolerance/reason cite a document
            that does not ship or an unread part of a paper (:func:`forbidden_citation`).
    """

    id: str
    statement: str
    paper_value: Any
    measured: Any
    tolerance: str
    reason: str
    verdict: Verdict
    note: str = ""
    kind: Kind | None = None
    source: str = ""
    interval: tuple[float, float] | None = None
    seeds: SeedRecord | None = None

    def __post_init__(self) -> None:
        if self.kind is not None:
            try:
                self.kind = Kind(self.kind)
            except ValueError:
                raise ValueError(f"claim {self.id!r}: kind={self.kind!r}; allowed: "
                                 f"{', '.join(k.value for k in Kind)}") from None
            if not (self.source or "").strip():
                raise ValueError(f"claim {self.id!r}: source is empty; give 'abstract', "
                                 "'first page' or 'inferred: <what and why>'")
            if self.kind is Kind.PAPER and not self.source.lower().startswith(_PAPER_SOURCES):
                raise ValueError(f"claim {self.id!r}: a paper claim's source must be the paper's "
                                 f"abstract or first page (the only parts read), got {self.source!r}")
        for name in ("statement", "source", "tolerance", "reason"):
            bad = forbidden_citation(getattr(self, name)) if self.kind is not None else None
            if bad:
                raise ValueError(f"claim {self.id!r}: {name} cites {bad!r}, a document that does "
                                 "not ship or a part of the paper nobody read; state the reason itself")
        if self.interval is not None:
            lo, hi = (float(v) for v in self.interval)
            if lo > hi:
                raise ValueError(f"claim {self.id!r}: interval ({lo}, {hi}) has lo > hi")
            self.interval = (lo, hi)
        if isinstance(self.seeds, dict):
            self.seeds = SeedRecord(**self.seeds)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (verdict and kind as their string values)."""
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["kind"] = self.kind.value if self.kind is not None else None
        d["interval"] = list(self.interval) if self.interval is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Claim":
        """Inverse of :meth:`to_dict`; a record without kind/source/interval/seeds (older
        results) reads with those unset."""
        d = dict(d)
        interval = d.get("interval")
        if interval is not None:
            d["interval"] = tuple(float(v) for v in interval)
        return cls(**{**d, "verdict": Verdict(d["verdict"])})


# --------------------------------------------------------------------------- intervals

def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Mean of ``values`` and its Student-t confidence interval.

    Args:
        values: per-seed or per-replicate measurements, at least 2, all finite.
        level: confidence level in (0, 1).

    Returns:
        ``(mean, (lo, hi))``.

    Raises:
        ValueError: fewer than 2 values, a non-finite value, or ``level`` outside (0, 1).
    """
    from scipy import stats

    xs = [float(v) for v in values]
    if len(xs) < 2:
        raise ValueError(f"mean_interval(): need at least 2 values, got {len(xs)}")
    if not all(math.isfinite(x) for x in xs):
        raise ValueError(f"mean_interval(): values must be finite, got {xs}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"mean_interval(): level={level}; allowed: 0 < level < 1")
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)


def proportion_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Success rate and its exact (Clopper–Pearson) confidence interval.

    Raises:
        ValueError: ``trials < 1``, ``successes`` outside ``0..trials``, or ``level`` outside (0, 1).
    """
    from scipy import stats

    k, n = int(successes), int(trials)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"proportion_interval(): successes={successes}, trials={trials}; "
                         "allowed: trials >= 1 and 0 <= successes <= trials")
    if not 0.0 < level < 1.0:
        raise ValueError(f"proportion_interval(): level={level}; allowed: 0 < level < 1")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return k / n, (float(ci.low), float(ci.high))


# --------------------------------------------------------------------------- helpers

def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _nonfinite_note(measured: Any, note: str) -> str:
    return (f"measured value {measured!r} is not a finite number. " + note).strip()


def _judge(measured: float, interval: tuple[float, float] | None,
           inside: "callable", outside: "callable") -> Verdict:
    """Verdict for a point (interval None) or an interval (both ends inside → holds, both
    outside on the same side → does not hold, else inconclusive)."""
    if interval is None:
        return Verdict.HOLDS if inside(measured) else Verdict.DOES_NOT_HOLD
    lo, hi = interval
    if inside(lo) and inside(hi):
        return Verdict.HOLDS
    if outside(lo, hi):
        return Verdict.DOES_NOT_HOLD
    return Verdict.INCONCLUSIVE


def _make(id, statement, pv, measured, rule, reason, note, kind, source, interval, seeds,
          inside, outside) -> Claim:
    if not _finite(measured) or (interval is not None and not all(_finite(v) for v in interval)):
        bad = measured if not _finite(measured) else interval
        return Claim(id, statement, pv, measured, rule, reason, Verdict.DOES_NOT_HOLD,
                     _nonfinite_note(bad, note), kind, source, None, seeds)
    iv = None if interval is None else (float(interval[0]), float(interval[1]))
    verdict = _judge(float(measured), iv, inside, outside)
    return Claim(id, statement, pv, float(measured), rule, reason, verdict, note, kind, source,
                 iv, seeds)


def close(id: str, statement: str, *, measured: float, target: float, reason: str,
          abs_tol: float | None = None, rel_tol: float | None = None,
          paper_value: Any = "__target__", note: str = "", kind: Kind | str,
          source: str = "", interval: tuple[float, float] | None = None) -> Claim:
    """Claim that ``measured`` is within ``abs_tol`` (or ``rel_tol``·|target|) of ``target``.

    ``paper_value`` defaults to ``target``. Exactly one of ``abs_tol``/``rel_tol`` is required.
    With ``interval``: holds if the whole interval lies within the tolerance band, does not
    hold if it lies entirely outside it, inconclusive otherwise.

    Raises:
        ValueError: if neither or both tolerances are given, or a tolerance is negative.
    """
    if (abs_tol is None) == (rel_tol is None):
        raise ValueError("close(): give exactly one of abs_tol or rel_tol")
    tol = abs_tol if abs_tol is not None else rel_tol * abs(target)  # type: ignore[operator]
    if tol < 0:
        raise ValueError(f"close(): tolerance must be >= 0, got {tol}")
    rule = (f"|measured - {target:.4g}| <= {abs_tol:.3g}" if abs_tol is not None
            else f"|measured - {target:.4g}| <= {rel_tol:.3g}·|{target:.4g}|")
    pv = target if isinstance(paper_value, str) and paper_value == "__target__" else paper_value
    return _make(id, statement, pv, measured, rule, reason, note, kind, source, interval, None,
                 lambda x: abs(x - target) <= tol,
                 lambda lo, hi: hi < target - tol or lo > target + tol)


def at_least(id: str, statement: str, *, measured: float, bound: float, reason: str,
             paper_value: Any = None, note: str = "", kind: Kind | str,
             source: str = "", interval: tuple[float, float] | None = None) -> Claim:
    """Claim that ``measured >= bound`` (with ``interval``: lo >= bound holds, hi < bound does
    not hold, otherwise inconclusive)."""
    return _make(id, statement, paper_value, measured, f"measured >= {bound:.4g}", reason, note,
                 kind, source, interval, None, lambda x: x >= bound, lambda lo, hi: hi < bound)


def at_most(id: str, statement: str, *, measured: float, bound: float, reason: str,
            paper_value: Any = None, note: str = "", kind: Kind | str,
            source: str = "", interval: tuple[float, float] | None = None) -> Claim:
    """Claim that ``measured <= bound`` (with ``interval``: hi <= bound holds, lo > bound does
    not hold, otherwise inconclusive)."""
    return _make(id, statement, paper_value, measured, f"measured <= {bound:.4g}", reason, note,
                 kind, source, interval, None, lambda x: x <= bound, lambda lo, hi: lo > bound)


def within(id: str, statement: str, *, measured: float, low: float, high: float, reason: str,
           paper_value: Any = None, note: str = "", kind: Kind | str,
           source: str = "", interval: tuple[float, float] | None = None) -> Claim:
    """Claim that ``low <= measured <= high`` (interval semantics as in :func:`close`).

    Raises:
        ValueError: if ``low > high``.
    """
    if low > high:
        raise ValueError(f"within(): low={low} > high={high}")
    return _make(id, statement, paper_value, measured, f"{low:.4g} <= measured <= {high:.4g}",
                 reason, note, kind, source, interval, None, lambda x: low <= x <= high,
                 lambda lo, hi: hi < low or lo > high)


def check(id: str, statement: str, *, measured: Any, holds: bool | None, tolerance: str,
          reason: str, paper_value: Any = None, note: str = "", kind: Kind | str,
          source: str = "", interval: tuple[float, float] | None = None) -> Claim:
    """Claim whose rule is a composite condition evaluated by the caller's code.

    ``holds`` must be the boolean result of evaluating ``tolerance`` on ``measured`` in code
    (e.g. ``all(np.diff(fractions) < 0)``); ``tolerance`` states that rule in words. ``None``
    means the caller's own uncertainty rule (stated in ``tolerance``) could not decide: the
    verdict is ``inconclusive``.

    Raises:
        TypeError: if ``holds`` is not a bool or None (a numpy bool is accepted).
    """
    if holds is not None and not isinstance(holds, bool):
        if type(holds).__name__ == "bool_":  # numpy.bool_
            holds = bool(holds)
        else:
            raise TypeError(f"check(): holds must be a bool computed from measured, got {holds!r}")
    verdict = (Verdict.INCONCLUSIVE if holds is None
               else Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD)
    return Claim(id, statement, paper_value, measured, tolerance, reason, verdict, note, kind,
                 source, None if interval is None else tuple(interval), None)


def not_checkable(id: str, statement: str, *, paper_value: Any, reason: str, full_scale: str,
                  note: str = "", kind: Kind | str, source: str = "") -> Claim:
    """Claim this machine cannot check (frontier models, paper-scale data).

    Args:
        reason: what is missing here (``no GPT-5 offline``).
        full_scale: what the full configuration does instead (required, non-empty).

    Raises:
        ValueError: if ``full_scale`` is empty.
    """
    if not full_scale.strip():
        raise ValueError("not_checkable(): say what the full configuration does instead")
    return Claim(id, statement, paper_value, None, "—", reason, Verdict.NOT_CHECKABLE,
                 (f"Full configuration: {full_scale}. " + note).strip(), kind, source)


def over_seeds(per_seed: Sequence[Claim], seeds: Sequence[int], *, min_held: int | None = None,
               level: float = 0.95) -> Claim:
    """Combine one claim judged separately on each seed into one claim with a :class:`SeedRecord`.

    Rule (declared before looking): with ``min_held=None`` the rule is *unanimous* — holds if it
    held in every seed, does not hold if it held in none, otherwise ``inconclusive``. With
    ``min_held=k`` it holds if it held in at least ``k`` seeds, else does not hold. Any seed
    ``not_checkable`` makes the whole claim not checkable.

    ``measured`` becomes the mean of the per-seed values when they are all finite numbers (with
    a Student-t ``interval`` at ``level``), otherwise the list of per-seed values. The id,
    statement, kind, source, tolerance, reason and paper value are taken from the first claim.

    Raises:
        ValueError: no claims, ``len(per_seed) != len(seeds)``, claims with different ids, or
            ``min_held`` outside ``1..len(seeds)``.
    """
    claims = list(per_seed)
    if not claims:
        raise ValueError("over_seeds(): no per-seed claims")
    if len(claims) != len(seeds):
        raise ValueError(f"over_seeds(): {len(claims)} claims for {len(seeds)} seeds")
    if len({c.id for c in claims}) != 1:
        raise ValueError(f"over_seeds(): claims have different ids {sorted({c.id for c in claims})}")
    n = len(claims)
    if min_held is not None and not 1 <= min_held <= n:
        raise ValueError(f"over_seeds(): min_held={min_held}; allowed: 1..{n}")
    first = claims[0]
    held = sum(c.verdict is Verdict.HOLDS for c in claims)
    values = [c.measured for c in claims]
    rule = "unanimous" if min_held is None else f"holds in at least {min_held} of {n} seeds"
    record = SeedRecord([int(s) for s in seeds], held, values, [c.verdict.value for c in claims], rule)
    if any(c.verdict is Verdict.NOT_CHECKABLE for c in claims):
        verdict = Verdict.NOT_CHECKABLE
    elif min_held is not None:
        verdict = Verdict.HOLDS if held >= min_held else Verdict.DOES_NOT_HOLD
    elif held == n:
        verdict = Verdict.HOLDS
    elif held == 0 and all(c.verdict is Verdict.DOES_NOT_HOLD for c in claims):
        verdict = Verdict.DOES_NOT_HOLD
    else:
        verdict = Verdict.INCONCLUSIVE
    measured: Any = values
    interval = None
    if n >= 2 and all(_finite(v) and not isinstance(v, bool) for v in values):
        measured, interval = mean_interval(values, level)
    note = f"held in {held} of {n} seeds ({rule}). " + first.note
    return Claim(first.id, first.statement, first.paper_value, measured, first.tolerance,
                 first.reason, verdict, note.strip(), first.kind, first.source, interval, record)


def counts_by_kind(claims: Sequence[Claim]) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` for kinds paper, reconstruction, check (and ``unclassified``
    for claims without a kind), every verdict present with 0 where none."""
    out: dict[str, dict[str, int]] = {}
    for c in claims:
        k = c.kind.value if c.kind is not None else "unclassified"
        row = out.setdefault(k, {v.value: 0 for v in Verdict})
        row[c.verdict.value] += 1
    order = [k.value for k in Kind] + ["unclassified"]
    return {k: out[k] for k in order if k in out}


@dataclass
class Outcome:
    """What a system's ``run(config, ctx)`` returns.

    Attributes:
        metrics: JSON-able numbers and small arrays (lists); numpy values are converted.
        claims: the checked claims, in the order the report shows them.
        notes: free text shown under the system's section (inferred choices, caveats).
    """

    metrics: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    notes: str = ""
