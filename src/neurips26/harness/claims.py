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

Verdicts (:class:`Verdict`): ``holds``, ``does_not_hold``, ``inconclusive``, ``not_checkable``
(what this machine lacks, or a measurement that would rest on failed backend calls; the note says
what the full configuration does instead).

**One verdict rule** (:func:`rule_verdict`), computed by code, never written by hand: a claim holds
only if its whole interval lies on the holding side of its threshold, does not hold only if the
whole interval lies on the other side, and is inconclusive otherwise; a deterministic measurement
(no interval) is judged as a point. Every numeric claim stores its threshold as a structured
``rule`` and :class:`Claim` refuses a verdict that contradicts it. Over seeds
(:func:`over_seeds`) the interval is that of the seed-aggregated quantity (Student-t interval of
the mean, kept inside the quantity's ``domain``); per-seed verdicts are shown as stability, never
as the verdict. A composite condition (:func:`check`) has no interval.

Build claims with the helpers (:func:`close`, :func:`at_least`, :func:`at_most`, :func:`within`,
:func:`check`, :func:`not_checkable`); they require ``kind`` (keyword-only; a missing kind is a
``TypeError``). ``domain=(lo, hi)`` declares the quantity's range (a value or interval outside it
raises). Intervals come from :func:`mean_interval` or :func:`proportion_interval` (Clopper–Pearson).
A measured value (or interval end) that is NaN or ±inf never holds.

Exploratory and confirmatory: thresholds and settings are fixed before looking at our result
(``preregistered``). One chosen after a look says what changed in ``tuned_after_look``; its
verdict on the development seeds is exploratory, and it counts in the headline only when judged on
confirmation seeds never used while choosing (:func:`confirmed`; ``role="confirmation"``). The
``reason`` says where a threshold comes from, in words — never a pointer to a document that does
not ship with the project (a research brief, an issue, an unread section of the paper).

Backends: a run that calls a model returns :class:`BackendUse` in its :class:`Outcome`; claims that
rest on failed calls are not checkable (:func:`unless_backend_ok`), and too many failures fail the run.
"""

from __future__ import annotations

import contextvars
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
    rule: dict[str, Any] | None = None
    domain: tuple[float, float] | None = None
    preregistered: bool = True
    tuned_after_look: str = ""
    role: str = "development"
    object: str | None = None
    control: str = ""
    falsifiable_by: str = ""

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
        self.control = (self.control or "").strip()
        self.falsifiable_by = (self.falsifiable_by or "").strip()
        if self.object is not None and self.object not in OBJECTS:
            raise ValueError(f"claim {self.id!r}: object={self.object!r}; allowed: {', '.join(OBJECTS)}")
        if self.kind is Kind.PAPER and not _LEGACY.get():
            if self.object is None:
                raise ValueError(f"claim {self.id!r}: a paper claim must say what it was tested on: "
                                 f"object= one of {', '.join(OBJECTS)}")
            if (self.verdict is not Verdict.NOT_CHECKABLE and not self.control
                    and not self.falsifiable_by):
                raise ValueError(
                    f"claim {self.id!r}: a paper claim needs control= (the control that removes its "
                    "mechanism, run on the same seeds) or falsifiable_by= (how the measurement could "
                    "fail); a claim that cannot fail is kind='check'")
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
        self.tuned_after_look = (self.tuned_after_look or "").strip()
        if self.tuned_after_look:
            self.preregistered = False
        elif not self.preregistered:
            raise ValueError(f"claim {self.id!r}: preregistered=False needs tuned_after_look (what was "
                             "chosen after seeing a result)")
        if self.role not in ROLES:
            raise ValueError(f"claim {self.id!r}: role={self.role!r}; allowed: {', '.join(ROLES)}")
        if self.domain is not None:
            self.domain = _check_domain(self.id, self.domain)
            _check_in_domain(self, self.domain)
        if self.rule is not None:
            self.rule = _check_rule(self.id, self.rule)
            expected = rule_verdict(self.rule, self.measured, self.interval)
            if (expected is not None and self.verdict is not Verdict.NOT_CHECKABLE
                    and self.verdict is not expected):
                raise ValueError(
                    f"claim {self.id!r}: verdict {self.verdict.value!r} contradicts its rule "
                    f"{describe_rule(self.rule)} on measured={self.measured!r}, interval={self.interval!r} "
                    f"(the rule gives {expected.value!r})")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (verdict and kind as their string values)."""
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["kind"] = self.kind.value if self.kind is not None else None
        d["interval"] = list(self.interval) if self.interval is not None else None
        d["domain"] = list(self.domain) if self.domain is not None else None
        return d

    @property
    def exploratory(self) -> bool:
        """True when the threshold or a setting was chosen after a look and this verdict was not
        judged on confirmation seeds (so it is not counted in the headline)."""
        return not self.preregistered and self.role != "confirmation"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Claim":
        """Inverse of :meth:`to_dict`; a record without kind/source/interval/seeds (older
        results) reads with those unset."""
        d = dict(d)
        interval = d.get("interval")
        if interval is not None:
            d["interval"] = tuple(float(v) for v in interval)
        if d.get("domain") is not None:
            d["domain"] = tuple(float(v) for v in d["domain"])
        token = _LEGACY.set(True)  # a stored record is read as it was written (older results)
        try:
            return cls(**{**d, "verdict": Verdict(d["verdict"])})
        finally:
            _LEGACY.reset(token)

    def evidence(self) -> dict[str, str]:
        """What the claim was tested on and how it could fail, for copying onto a derived claim:
        ``{"object": …, "control": …, "falsifiable_by": …}``."""
        return {"object": self.object, "control": self.control, "falsifiable_by": self.falsifiable_by}


# --------------------------------------------------------------------------- rules and domains

#: ``Claim.object``: what the claim was tested on. ``real``: real data or a real pretrained
#: model; ``theory``: the paper's own mathematical setting, exact or solvable; ``toy``: a
#: synthetic world this reproduction built.
OBJECTS = ("real", "theory", "toy")
#: Set while reading stored records (:meth:`Claim.from_dict`): older results may lack
#: ``object``/``control``, and a record is shown as it was written.
_LEGACY: contextvars.ContextVar[bool] = contextvars.ContextVar("neurips26_claims_legacy", default=False)

#: A tuned claim counts in the headline only when judged on at least this many confirmation
#: seeds (pooled by :func:`over_seeds`); one lucky seed is not a confirmation.
MIN_CONFIRMATION_SEEDS = 3

#: ``Claim.role``: judged on the development seeds (any seed a user runs), or on confirmation
#: seeds that were never used while choosing a threshold or setting.
ROLES = ("development", "confirmation")
_RULE_OPS = ("at_least", "at_most", "within")
#: Relative slack when checking a value against its domain (floating-point round-off).
_DOMAIN_SLACK = 1e-9


def _check_domain(cid: str, domain: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in domain)
    except (TypeError, ValueError):
        raise ValueError(f"claim {cid!r}: domain={domain!r}; allowed: (lo, hi) with lo < hi") from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise ValueError(f"claim {cid!r}: domain={domain!r}; allowed: (lo, hi) with lo < hi")
    return lo, hi


def _slack(v: float) -> float:
    return _DOMAIN_SLACK * max(1.0, abs(v)) if math.isfinite(v) else 0.0


def _check_in_domain(c: "Claim", domain: tuple[float, float]) -> None:
    lo, hi = domain
    values = []
    if _finite(c.measured) and not isinstance(c.measured, bool):
        values.append(("measured", float(c.measured)))
    if c.interval is not None:
        values += [("interval", v) for v in c.interval if math.isfinite(v)]
    for what, v in values:
        if v < lo - _slack(lo) or v > hi + _slack(hi):
            raise ValueError(f"claim {c.id!r}: {what} {v!r} lies outside the quantity's domain "
                             f"[{lo:g}, {hi:g}]; an interval must stay in the quantity's range")


def _check_rule(cid: str, rule: dict[str, Any]) -> dict[str, Any]:
    rule = dict(rule)
    op = rule.get("op")
    if op not in _RULE_OPS:
        raise ValueError(f"claim {cid!r}: rule op {op!r}; allowed: {', '.join(_RULE_OPS)}")
    keys = ("bound",) if op in ("at_least", "at_most") else ("low", "high")
    for k in keys:
        if k not in rule:
            raise ValueError(f"claim {cid!r}: rule {op!r} needs {k!r}")
        rule[k] = float(rule[k])
    if op == "within" and not rule["low"] <= rule["high"]:
        raise ValueError(f"claim {cid!r}: rule within low={rule['low']} > high={rule['high']}")
    return rule


def describe_rule(rule: dict[str, Any]) -> str:
    """A structured rule in words: ``measured >= 0.5``, ``0.1 <= measured <= 0.3``."""
    if rule["op"] == "at_least":
        return f"measured >= {rule['bound']:.4g}"
    if rule["op"] == "at_most":
        return f"measured <= {rule['bound']:.4g}"
    return f"{rule['low']:.4g} <= measured <= {rule['high']:.4g}"


def rule_verdict(rule: dict[str, Any], measured: Any, interval: Sequence[float] | None) -> Verdict | None:
    """The one verdict rule, applied to a point or an interval.

    With ``interval=(lo, hi)``: **holds** only if the whole interval lies on the holding side of the
    threshold (inside the accepted region), **does not hold** only if it lies wholly on the other
    side, **inconclusive** otherwise. Without an interval (a deterministic measurement) the point
    decides. A NaN or infinite measurement never holds: ``does_not_hold``. Returns ``None`` when
    ``measured`` is not a number (the rule does not apply).

    Args:
        rule: ``{"op": "at_least" | "at_most", "bound": b}`` or ``{"op": "within", "low": l,
            "high": h}`` (as stored in :attr:`Claim.rule`).
    """
    if isinstance(measured, bool) or measured is None:
        return None
    try:
        x = float(measured)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x) or (interval is not None and not all(math.isfinite(float(v)) for v in interval)):
        return Verdict.DOES_NOT_HOLD
    op = rule["op"]
    if op == "at_least":
        b = rule["bound"]
        inside, outside = (lambda v: v >= b), (lambda lo, hi: hi < b)
    elif op == "at_most":
        b = rule["bound"]
        inside, outside = (lambda v: v <= b), (lambda lo, hi: lo > b)
    else:
        low, high = rule["low"], rule["high"]
        inside = lambda v: low <= v <= high  # noqa: E731
        outside = lambda lo, hi: hi < low or lo > high  # noqa: E731
    if interval is None:
        return Verdict.HOLDS if inside(x) else Verdict.DOES_NOT_HOLD
    lo, hi = (float(v) for v in interval)
    if inside(lo) and inside(hi):
        return Verdict.HOLDS
    if outside(lo, hi):
        return Verdict.DOES_NOT_HOLD
    return Verdict.INCONCLUSIVE


# --------------------------------------------------------------------------- intervals

def mean_interval(values: Sequence[float], level: float = 0.95,
                  domain: Sequence[float] | None = None) -> tuple[float, tuple[float, float]]:
    """Mean of ``values`` and its Student-t confidence interval, kept inside ``domain``.

    The interval is ``mean ± t_{(1+level)/2, n-1} · s / sqrt(n)`` with ``s`` the sample standard
    deviation (ddof = 1), intersected with ``domain`` when given. The intersection never loses
    coverage (the true mean lies in the domain) and keeps the interval in the quantity's range
    (a distance never gets a negative end, a rate never passes 1). Its width is zero only when
    all values are equal.

    Args:
        values: per-seed or per-replicate measurements, at least 2, all finite.
        level: confidence level in (0, 1).
        domain: ``(lo, hi)`` range of the quantity (``None``: the real line).

    Returns:
        ``(mean, (lo, hi))``.

    Raises:
        ValueError: fewer than 2 values, a non-finite value, or ``level`` outside (0, 1).

    References:
        Student (1908), *The probable error of a mean*, Biometrika 6(1).
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
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if domain is not None:
        dlo, dhi = (float(v) for v in domain)
        lo, hi = max(lo, dlo), min(hi, dhi)
    return mean, (lo, hi)


def proportion_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Success rate and its exact (Clopper–Pearson) confidence interval (always inside [0, 1]).

    Raises:
        ValueError: ``trials < 1``, ``successes`` outside ``0..trials``, or ``level`` outside (0, 1).

    References:
        Clopper & Pearson (1934), *The use of confidence or fiducial limits illustrated in the case
        of the binomial*, Biometrika 26(4).
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


def _make(id, statement, pv, measured, text, reason, note, kind, source, interval, rule,
          domain, tuned_after_look, object=None, control="", falsifiable_by="") -> Claim:
    extra = dict(rule=rule, domain=None if domain is None else tuple(domain),
                 tuned_after_look=tuned_after_look, object=object, control=control,
                 falsifiable_by=falsifiable_by)
    if not _finite(measured) or (interval is not None and not all(_finite(v) for v in interval)):
        bad = measured if not _finite(measured) else interval
        extra["rule"] = None  # no usable number to judge: the rule is kept in words (tolerance)
        return Claim(id, statement, pv, measured if _finite(measured) else None, text, reason,
                     Verdict.DOES_NOT_HOLD, _nonfinite_note(bad, note), kind, source, None, None, **extra)
    iv = None if interval is None else (float(interval[0]), float(interval[1]))
    verdict = rule_verdict(_check_rule(id, rule), float(measured), iv)
    return Claim(id, statement, pv, float(measured), text, reason, verdict, note, kind, source,
                 iv, None, **extra)


def close(id: str, statement: str, *, measured: float, target: float, reason: str,
          abs_tol: float | None = None, rel_tol: float | None = None,
          paper_value: Any = "__target__", note: str = "", kind: Kind | str,
          source: str = "", interval: tuple[float, float] | None = None,
          domain: tuple[float, float] | None = None, tuned_after_look: str = "",
          object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim that ``measured`` is within ``abs_tol`` (or ``rel_tol``·|target|) of ``target``.

    ``paper_value`` defaults to ``target``. Exactly one of ``abs_tol``/``rel_tol`` is required.
    With ``interval``: holds if the whole interval lies within the tolerance band, does not
    hold if it lies entirely outside it, inconclusive otherwise (:func:`rule_verdict`).
    ``domain``: the quantity's range (a value or interval outside it raises ValueError).
    ``tuned_after_look``: what was chosen after seeing a result (marks the claim exploratory).

    Raises:
        ValueError: if neither or both tolerances are given, or a tolerance is negative.
    """
    if (abs_tol is None) == (rel_tol is None):
        raise ValueError("close(): give exactly one of abs_tol or rel_tol")
    tol = abs_tol if abs_tol is not None else rel_tol * abs(target)  # type: ignore[operator]
    if tol < 0:
        raise ValueError(f"close(): tolerance must be >= 0, got {tol}")
    text = (f"|measured - {target:.4g}| <= {abs_tol:.3g}" if abs_tol is not None
            else f"|measured - {target:.4g}| <= {rel_tol:.3g}·|{target:.4g}|")
    pv = target if isinstance(paper_value, str) and paper_value == "__target__" else paper_value
    return _make(id, statement, pv, measured, text, reason, note, kind, source, interval,
                 {"op": "within", "low": target - tol, "high": target + tol}, domain, tuned_after_look,
                 object, control, falsifiable_by)


def at_least(id: str, statement: str, *, measured: float, bound: float, reason: str,
             paper_value: Any = None, note: str = "", kind: Kind | str,
             source: str = "", interval: tuple[float, float] | None = None,
             domain: tuple[float, float] | None = None, tuned_after_look: str = "",
          object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim that ``measured >= bound`` (with ``interval``: lo >= bound holds, hi < bound does
    not hold, otherwise inconclusive). ``domain``/``tuned_after_look`` as in :func:`close`."""
    return _make(id, statement, paper_value, measured, f"measured >= {bound:.4g}", reason, note,
                 kind, source, interval, {"op": "at_least", "bound": bound}, domain, tuned_after_look,
                 object, control, falsifiable_by)


def at_most(id: str, statement: str, *, measured: float, bound: float, reason: str,
            paper_value: Any = None, note: str = "", kind: Kind | str,
            source: str = "", interval: tuple[float, float] | None = None,
            domain: tuple[float, float] | None = None, tuned_after_look: str = "",
          object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim that ``measured <= bound`` (with ``interval``: hi <= bound holds, lo > bound does
    not hold, otherwise inconclusive). ``domain``/``tuned_after_look`` as in :func:`close`."""
    return _make(id, statement, paper_value, measured, f"measured <= {bound:.4g}", reason, note,
                 kind, source, interval, {"op": "at_most", "bound": bound}, domain, tuned_after_look,
                 object, control, falsifiable_by)


def within(id: str, statement: str, *, measured: float, low: float, high: float, reason: str,
           paper_value: Any = None, note: str = "", kind: Kind | str,
           source: str = "", interval: tuple[float, float] | None = None,
           domain: tuple[float, float] | None = None, tuned_after_look: str = "",
          object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim that ``low <= measured <= high`` (interval semantics as in :func:`close`).

    Raises:
        ValueError: if ``low > high``.
    """
    if low > high:
        raise ValueError(f"within(): low={low} > high={high}")
    return _make(id, statement, paper_value, measured, f"{low:.4g} <= measured <= {high:.4g}",
                 reason, note, kind, source, interval, {"op": "within", "low": low, "high": high},
                 domain, tuned_after_look, object, control, falsifiable_by)


def check(id: str, statement: str, *, measured: Any, holds: bool | None, tolerance: str,
          reason: str, paper_value: Any = None, note: str = "", kind: Kind | str,
          source: str = "", interval: None = None, tuned_after_look: str = "",
          object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim whose rule is a composite condition evaluated by the caller's code.

    ``holds`` must be the boolean result of evaluating ``tolerance`` on ``measured`` in code
    (e.g. ``all(np.diff(fractions) < 0)``); ``tolerance`` states that rule in words. ``None``
    means the caller's own rule could not decide: the verdict is ``inconclusive``.

    A composite condition has no interval to judge: a claim with an uncertainty interval is a
    number against a threshold — build it with :func:`at_least`, :func:`at_most`,
    :func:`within` or :func:`close`, so the one verdict rule applies.

    Raises:
        TypeError: if ``holds`` is not a bool or None (a numpy bool is accepted), or an
            ``interval`` is given.
    """
    if interval is not None:
        raise TypeError(f"check({id!r}): a composite condition takes no interval; express the claim "
                        "as at_least/at_most/within on a number so its interval decides the verdict")
    if holds is not None and not isinstance(holds, bool):
        if type(holds).__name__ == "bool_":  # numpy.bool_
            holds = bool(holds)
        else:
            raise TypeError(f"check(): holds must be a bool computed from measured, got {holds!r}")
    verdict = (Verdict.INCONCLUSIVE if holds is None
               else Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD)
    return Claim(id, statement, paper_value, measured, tolerance, reason, verdict, note, kind,
                 source, None, None, tuned_after_look=tuned_after_look, object=object, control=control,
                 falsifiable_by=falsifiable_by)


def not_checkable(id: str, statement: str, *, paper_value: Any, reason: str, full_scale: str,
                  note: str = "", kind: Kind | str, source: str = "", tuned_after_look: str = "",
                  object: str | None = None, control: str = "", falsifiable_by: str = "") -> Claim:
    """Claim this machine cannot check (frontier models, paper-scale data, failed backend calls).

    Args:
        reason: what is missing here (``no GPT-5 offline``).
        full_scale: what the full configuration does instead (required, non-empty).

    Raises:
        ValueError: if ``full_scale`` is empty.
    """
    if not full_scale.strip():
        raise ValueError("not_checkable(): say what the full configuration does instead")
    return Claim(id, statement, paper_value, None, "—", reason, Verdict.NOT_CHECKABLE,
                 (f"Full configuration: {full_scale}. " + note).strip(), kind, source,
                 tuned_after_look=tuned_after_look, object=object, control=control,
                 falsifiable_by=falsifiable_by)


def as_not_checkable(claim: Claim, *, reason: str, full_scale: str) -> Claim:
    """``claim`` (id, statement, kind, source, paper value, note, tuning record kept) made not
    checkable: for a measurement whose precondition failed at this scale (an untrained model, a
    control that does not cover), so that no verdict rests on it.

    Args:
        reason: why this run cannot judge it (the failed precondition, with its numbers).
        full_scale: what the full configuration does instead (required, non-empty).

    Raises:
        ValueError: if ``full_scale`` is empty.
    """
    return not_checkable(claim.id, claim.statement, paper_value=claim.paper_value, reason=reason,
                         full_scale=full_scale, note=claim.note, kind=claim.kind, source=claim.source,
                         tuned_after_look=claim.tuned_after_look, **claim.evidence())


def over_seeds(per_seed: Sequence[Claim], seeds: Sequence[int], *, level: float = 0.95) -> Claim:
    """Combine one claim judged separately on each seed into one claim judged over the seeds.

    The verdict is that of the **seed-aggregated quantity**, by the one rule of
    :func:`rule_verdict`; per-seed verdicts are kept in a :class:`SeedRecord` as stability.
    Each run's own uncertainty is kept (identical runs never give a zero-width interval):

    - numeric claims (built with a rule: :func:`close`, :func:`at_least`, :func:`at_most`,
      :func:`within`), ``measured`` = the mean of the per-seed values ``m_i``:

      * **identical runs** (same value and interval on every seed: a deterministic system, or
        one that ignores the seed) keep the single run's claim; the note says the seeds did not
        change it;
      * **runs that agree** (every seed holds, or every seed does not hold): the interval is the
        union of the per-seed intervals (points where a run has none), so the verdict is the one
        every run gave;
      * otherwise the **pooled** interval ``mean ± sqrt((t_{n-1} s/√n)² + mean_i h_i²)``, with
        ``s`` the between-seed standard deviation (ddof = 1) and ``h_i`` each run's own interval
        half-width (0 for a point), intersected with the claim's domain. Its half-width is never
        below the root-mean-square of the runs' own, so it is never narrower than a typical run's
        interval, and it cannot hold (or fail) when every run is inconclusive.

    - composite conditions (:func:`check`) of kind ``check`` (implementation invariants): the
      invariant holds over the seeds when it holds on every seed, and does not hold as soon as it
      fails on one (a logical conjunction: an invariant that fails once is broken).
    - composite conditions of kind ``paper`` or ``reconstruction``: the single-run verdict when
      every seed agrees; otherwise the fraction of seeds on which the condition held, with its
      Clopper–Pearson interval, judged against ``measured >= 0.5``.

    Any seed ``not_checkable`` makes the whole claim not checkable. A per-seed value (or interval
    end) that is not a finite number makes a numeric claim ``does_not_hold``, naming the seeds.

    Raises:
        ValueError: no claims, ``len(per_seed) != len(seeds)``, or claims with different ids.
    """
    claims = list(per_seed)
    if not claims:
        raise ValueError("over_seeds(): no per-seed claims")
    if len(claims) != len(seeds):
        raise ValueError(f"over_seeds(): {len(claims)} claims for {len(seeds)} seeds")
    if len({c.id for c in claims}) != 1:
        raise ValueError(f"over_seeds(): claims have different ids {sorted({c.id for c in claims})}")
    if any(c.kind is Kind.PAPER and c.object is None for c in claims):  # older records: read as written
        token = _LEGACY.set(True)
        try:
            return _over_seeds(claims, seeds, level)
        finally:
            _LEGACY.reset(token)
    return _over_seeds(claims, seeds, level)


def _composite(c: Claim) -> bool:
    """A composite condition (built by :func:`check`): no rule, and a measured value that is not a
    number (a bool, a list, a text). A numeric claim whose value was not finite has no measured."""
    return c.rule is None and c.measured is not None and not (_finite(c.measured) and not isinstance(c.measured, bool))


def _over_seeds(claims: list[Claim], seeds: Sequence[int], level: float) -> Claim:
    n = len(claims)
    first = claims[0]
    composite = any(_composite(c) for c in claims)
    rule = None if composite else next((c.rule for c in claims if c.rule is not None), None)
    if rule is not None and first.rule is None:  # the first seed had no finite value: its rule was dropped
        first = next(c for c in claims if c.rule is not None)
    held = sum(c.verdict is Verdict.HOLDS for c in claims)
    values = [c.measured for c in claims]
    rule_text = ("verdict from the pooled interval of the seed mean (each run's own interval kept)"
                 if rule is not None
                 else "invariant: must hold on every seed" if first.kind is Kind.CHECK
                 else "the common verdict when every seed agrees, else the fraction of seeds where it held")
    record = SeedRecord([int(s) for s in seeds], held, values, [c.verdict.value for c in claims], rule_text)
    common = dict(domain=first.domain, tuned_after_look=first.tuned_after_look,
                  preregistered=first.preregistered, role=first.role, **first.evidence())
    stability = f"held on {held} of {n} seeds (stability, not the verdict). "

    def same(verdict: Verdict, measured: Any, interval, note: str, rule=first.rule, **kw) -> Claim:
        return Claim(first.id, first.statement, first.paper_value, measured, kw.pop("tolerance", first.tolerance),
                     first.reason, verdict, note.strip(), first.kind, first.source, interval, record,
                     rule=rule, **{**common, **kw})

    if any(c.verdict is Verdict.NOT_CHECKABLE for c in claims):
        nc = next(c for c in claims if c.verdict is Verdict.NOT_CHECKABLE)
        return Claim(first.id, first.statement, first.paper_value, None, first.tolerance, nc.reason,
                     Verdict.NOT_CHECKABLE, nc.note, first.kind, first.source, None, record,
                     rule=None, **common)
    if n == 1:
        c = claims[0]
        return Claim(c.id, c.statement, c.paper_value, c.measured, c.tolerance, c.reason, c.verdict,
                     c.note, c.kind, c.source, c.interval, record, rule=c.rule, **common)
    identical = rule is not None and all(c.measured == first.measured and c.interval == first.interval
                                         and c.verdict is first.verdict for c in claims[1:])
    if identical:
        return same(first.verdict, first.measured, first.interval,
                    f"identical on all {n} seeds: the seeds do not change this measurement (deterministic), "
                    "so it is judged once. " + first.note)
    if rule is not None:
        def finite_claim(c: Claim) -> bool:
            return (_finite(c.measured) and not isinstance(c.measured, bool)
                    and (c.interval is None or all(_finite(v) for v in c.interval)))
        bad = [s for s, c in zip(seeds, claims) if not finite_claim(c)]
        if bad:
            return same(Verdict.DOES_NOT_HOLD, None, None,
                        f"measured value not a finite number on seed(s) {list(bad)} "
                        f"({', '.join(repr(c.measured) for c in claims if not finite_claim(c))}). "
                        + stability + first.note, rule=None)
        ms = [float(c.measured) for c in claims]
        mean = math.fsum(ms) / n
        verdicts = {c.verdict for c in claims}
        if len(verdicts) == 1 and verdicts <= {Verdict.HOLDS, Verdict.DOES_NOT_HOLD}:
            los = [c.interval[0] if c.interval is not None else float(c.measured) for c in claims]
            his = [c.interval[1] if c.interval is not None else float(c.measured) for c in claims]
            interval = (min(los), max(his))
            how = "every seed gave the same verdict: interval = the union of the seeds' intervals. "
        else:
            interval = pooled_interval(ms, [c.interval for c in claims], level, first.domain)
            how = "interval pooled from the spread of the seed means and each run's own interval. "
        verdict = rule_verdict(first.rule, mean, interval)
        return same(verdict, mean, interval, how + stability + first.note)
    if first.kind is Kind.CHECK:
        if all(c.verdict is Verdict.HOLDS for c in claims):
            verdict = Verdict.HOLDS
        elif any(c.verdict is Verdict.DOES_NOT_HOLD for c in claims):
            verdict = Verdict.DOES_NOT_HOLD
        else:
            verdict = Verdict.INCONCLUSIVE
        return same(verdict, values, None, stability + first.note, rule=None)
    if len({c.verdict for c in claims}) == 1:
        return same(first.verdict, values, None, f"every seed gave {first.verdict.label}. " + stability + first.note,
                    rule=None)
    frac, interval = proportion_interval(held, n, level)
    vote = {"op": "at_least", "bound": 0.5}
    return same(rule_verdict(vote, frac, interval), frac, interval, stability + first.note, rule=vote,
                tolerance=f"fraction of seeds where [{first.tolerance}] held >= 0.5", domain=(0.0, 1.0))


def pooled_interval(means: Sequence[float], intervals: Sequence[Sequence[float] | None], level: float = 0.95,
                    domain: Sequence[float] | None = None) -> tuple[float, float]:
    """Interval of the mean of per-run estimates that keeps each run's own uncertainty.

    ``mean ± sqrt((t_{(1+level)/2, n-1} · s / sqrt(n))² + mean_i h_i²)``, with ``s`` the sample
    standard deviation of ``means`` (ddof = 1) and ``h_i`` the half-width of run ``i``'s own
    interval (0 for a run without one; an asymmetric interval counts by its larger side),
    intersected with ``domain``. Identical runs keep their own interval's width; runs without
    intervals get the Student-t interval of the mean.

    Args:
        means: the per-run measured values, at least 2, finite.
        intervals: per run, its ``(lo, hi)`` or ``None`` (same length as ``means``).
        level: confidence level in (0, 1) of the between-run part.
        domain: ``(lo, hi)`` range of the quantity, or ``None``.

    Raises:
        ValueError: fewer than 2 means, lengths differ, or a non-finite value.
    """
    xs = [float(v) for v in means]
    if len(xs) != len(intervals):
        raise ValueError(f"pooled_interval(): {len(xs)} means for {len(intervals)} intervals")
    mean, (lo, hi) = mean_interval(xs, level)
    between = (hi - lo) / 2
    halves = [0.0 if iv is None else max(abs(float(iv[1]) - x), abs(x - float(iv[0])))
              for x, iv in zip(xs, intervals)]
    if not all(math.isfinite(h) for h in halves):
        raise ValueError(f"pooled_interval(): intervals must be finite, got {list(intervals)}")
    half = math.sqrt(between ** 2 + math.fsum(h * h for h in halves) / len(halves))
    lo, hi = mean - half, mean + half
    if domain is not None:
        dlo, dhi = (float(v) for v in domain)
        lo, hi = max(lo, dlo), min(hi, dhi)
    return lo, hi


def confirmed(development: Claim, confirmation: Sequence[Claim], seeds: Sequence[int]) -> Claim:
    """The confirmatory verdict of a claim tuned after a look: ``development``'s claim judged on
    the ``confirmation`` seeds (never used while choosing), combined by :func:`over_seeds`, with
    ``role="confirmation"``. Statement, rule and domain are those fixed at development.

    Raises:
        ValueError: no confirmation claims, or ids that differ from ``development``'s.
    """
    if not confirmation:
        raise ValueError(f"confirmed({development.id!r}): no confirmation claims")
    if any(c.id != development.id for c in confirmation):
        raise ValueError(f"confirmed({development.id!r}): confirmation claims have other ids")
    combined = over_seeds(list(confirmation), seeds)
    d = combined.to_dict()
    d["role"] = "confirmation"
    d["note"] = (f"confirmation seeds {list(seeds)}, never used while choosing. " + combined.note).strip()
    return Claim.from_dict(d)


def unless_backend_ok(claims: Sequence[Claim], use: "BackendUse") -> list[Claim]:
    """``claims`` unchanged when every backend call they rest on succeeded; otherwise each becomes
    ``not_checkable`` with ``"k of n backend calls failed"`` in its reason (a measurement that
    rests on failed calls is never a verdict).

    Args:
        claims: the claims whose measurement used the backend calls counted in ``use``.
        use: calls made and failed (:class:`BackendUse`).
    """
    if use.failed == 0:
        return list(claims)
    why = f"{use.failed} of {use.calls} backend calls failed" + (f" ({use.what})" if use.what else "")
    out = []
    for c in claims:
        if c.verdict is Verdict.NOT_CHECKABLE:
            out.append(c)
            continue
        out.append(Claim(c.id, c.statement, c.paper_value, None, "—", why, Verdict.NOT_CHECKABLE,
                         ("Rerun with a working endpoint; the measurement would have rested on failed "
                          "calls. " + c.note).strip(), c.kind, c.source,
                         tuned_after_look=c.tuned_after_look, role=c.role, **c.evidence()))
    return out


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
class BackendUse:
    """Model-backend calls a run made, for the run's status.

    Attributes:
        calls: calls attempted (cache hits included).
        failed: calls that raised after their retries.
        max_failed_fraction: the declared tolerance: a run with ``failed > max_failed_fraction ·
            calls`` is ``failed`` (exit code 1); below it, the claims resting on failed calls are
            ``not_checkable`` (:func:`unless_backend_ok`).
        what: which backend (kind, URL, model), for messages.
        prompt_tokens, completion_tokens: tokens read and generated over the calls (a
            log-probability readout counts its scored candidate tokens as completion tokens).
        model: the model the calls went to, with its weights hash where known
            (``smollm2-135m (weights sha256 …)``).
    """

    calls: int = 0
    failed: int = 0
    max_failed_fraction: float = 0.05
    what: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""

    def __post_init__(self) -> None:
        if self.calls < 0 or not 0 <= self.failed <= max(self.calls, self.failed) or self.failed < 0:
            raise ValueError(f"BackendUse: calls={self.calls}, failed={self.failed}; allowed: 0 <= failed")
        if not 0.0 <= self.max_failed_fraction <= 1.0:
            raise ValueError(f"BackendUse: max_failed_fraction={self.max_failed_fraction}; allowed: 0..1")

    @property
    def too_many_failed(self) -> bool:
        """True when more calls failed than the declared fraction allows."""
        return self.failed > self.max_failed_fraction * max(self.calls, 1)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass
class Outcome:
    """What a system's ``run(config, ctx)`` returns.

    Attributes:
        metrics: JSON-able numbers and small arrays (lists); numpy values are converted.
        claims: the checked claims, in the order the report shows them.
        notes: free text shown under the system's section (inferred choices, caveats).
        backend: the model-backend calls made and failed (:class:`BackendUse`), or ``None`` when
            the run used no backend. The runner marks the run ``failed`` when too many failed.
    """

    metrics: dict[str, Any] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    notes: str = ""
    backend: BackendUse | None = None
