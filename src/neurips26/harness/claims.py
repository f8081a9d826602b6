"""Claims: a paper's statement, its number, ours, the tolerance and why, and a verdict.

The verdict is always computed by code from ``measured`` and the tolerance — never written by
hand. Build claims with the helpers below (:func:`close`, :func:`at_least`, :func:`at_most`,
:func:`within`, :func:`check`, :func:`not_checkable`); each returns a :class:`Claim`.

A measured value that is NaN or infinite never holds: the verdict is ``does_not_hold`` and the
note says why.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    """Outcome of checking one claim."""

    HOLDS = "holds"
    DOES_NOT_HOLD = "does_not_hold"
    NOT_CHECKABLE = "not_checkable"

    @property
    def label(self) -> str:
        """Human label used in tables: ``holds``, ``does not hold``, ``not checkable at this scale``."""
        return {
            "holds": "holds",
            "does_not_hold": "does not hold",
            "not_checkable": "not checkable at this scale",
        }[self.value]


@dataclass
class Claim:
    """One checked claim of a paper.

    Attributes:
        id: short stable identifier, unique within a system (``easy_phase_xi``).
        statement: the paper's claim in one sentence, with section/figure where known.
        paper_value: the paper's number or short text; ``None`` if the paper gives none.
        measured: our number(s) (float, list, dict or text); ``None`` if not checkable.
        tolerance: what counts as agreement, as a readable rule (``|x - 0.54| <= 0.1``).
        reason: why that tolerance (sampling error, finite size, the brief's choice, …).
        verdict: computed by the helper that built the claim.
        note: scale caveats, inferred choices, what the full configuration changes.
    """

    id: str
    statement: str
    paper_value: Any
    measured: Any
    tolerance: str
    reason: str
    verdict: Verdict
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (verdict as its string value)."""
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Claim":
        """Inverse of :meth:`to_dict`."""
        return cls(**{**d, "verdict": Verdict(d["verdict"])})


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _nonfinite_note(measured: Any, note: str) -> str:
    return (f"measured value {measured!r} is not a finite number. " + note).strip()


def close(id: str, statement: str, *, measured: float, target: float, reason: str,
          abs_tol: float | None = None, rel_tol: float | None = None,
          paper_value: Any = "__target__", note: str = "") -> Claim:
    """Claim that ``measured`` is within ``abs_tol`` (or ``rel_tol``·|target|) of ``target``.

    ``paper_value`` defaults to ``target``. Exactly one of ``abs_tol``/``rel_tol`` is required.

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
    pv = target if paper_value == "__target__" else paper_value
    if not _finite(measured):
        return Claim(id, statement, pv, measured, rule, reason, Verdict.DOES_NOT_HOLD,
                     _nonfinite_note(measured, note))
    ok = abs(float(measured) - target) <= tol
    return Claim(id, statement, pv, float(measured), rule, reason,
                 Verdict.HOLDS if ok else Verdict.DOES_NOT_HOLD, note)


def at_least(id: str, statement: str, *, measured: float, bound: float, reason: str,
             paper_value: Any = None, note: str = "") -> Claim:
    """Claim that ``measured >= bound``."""
    rule = f"measured >= {bound:.4g}"
    if not _finite(measured):
        return Claim(id, statement, paper_value, measured, rule, reason, Verdict.DOES_NOT_HOLD,
                     _nonfinite_note(measured, note))
    ok = float(measured) >= bound
    return Claim(id, statement, paper_value, float(measured), rule, reason,
                 Verdict.HOLDS if ok else Verdict.DOES_NOT_HOLD, note)


def at_most(id: str, statement: str, *, measured: float, bound: float, reason: str,
            paper_value: Any = None, note: str = "") -> Claim:
    """Claim that ``measured <= bound``."""
    rule = f"measured <= {bound:.4g}"
    if not _finite(measured):
        return Claim(id, statement, paper_value, measured, rule, reason, Verdict.DOES_NOT_HOLD,
                     _nonfinite_note(measured, note))
    ok = float(measured) <= bound
    return Claim(id, statement, paper_value, float(measured), rule, reason,
                 Verdict.HOLDS if ok else Verdict.DOES_NOT_HOLD, note)


def within(id: str, statement: str, *, measured: float, low: float, high: float, reason: str,
           paper_value: Any = None, note: str = "") -> Claim:
    """Claim that ``low <= measured <= high``.

    Raises:
        ValueError: if ``low > high``.
    """
    if low > high:
        raise ValueError(f"within(): low={low} > high={high}")
    rule = f"{low:.4g} <= measured <= {high:.4g}"
    if not _finite(measured):
        return Claim(id, statement, paper_value, measured, rule, reason, Verdict.DOES_NOT_HOLD,
                     _nonfinite_note(measured, note))
    ok = low <= float(measured) <= high
    return Claim(id, statement, paper_value, float(measured), rule, reason,
                 Verdict.HOLDS if ok else Verdict.DOES_NOT_HOLD, note)


def check(id: str, statement: str, *, measured: Any, holds: bool, tolerance: str, reason: str,
          paper_value: Any = None, note: str = "") -> Claim:
    """Claim whose rule is a composite condition evaluated by the caller's code.

    ``holds`` must be the boolean result of evaluating ``tolerance`` on ``measured`` in code
    (e.g. ``all(np.diff(fractions) < 0)``); ``tolerance`` states that rule in words.

    Raises:
        TypeError: if ``holds`` is not a bool (a numpy bool is accepted).
    """
    if not isinstance(holds, bool):
        if type(holds).__name__ == "bool_":  # numpy.bool_
            holds = bool(holds)
        else:
            raise TypeError(f"check(): holds must be a bool computed from measured, got {holds!r}")
    return Claim(id, statement, paper_value, measured, tolerance, reason,
                 Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD, note)


def not_checkable(id: str, statement: str, *, paper_value: Any, reason: str, full_scale: str,
                  note: str = "") -> Claim:
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
                 (f"Full configuration: {full_scale}. " + note).strip())


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
