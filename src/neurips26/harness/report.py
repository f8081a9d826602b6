"""``report.html``: the page a researcher reads first — one self-contained file (figures embedded
as data URIs, no network) built from the results on disk.

Layout of the page:

1. A headline (how many of the nineteen papers are implemented, paper claims by verdict, then
   our reconstruction's claims and implementation checks apart), then one row per catalogue
   system with its counts, run time and seeds.
2. Every claim that does not hold, is inconclusive or is not checkable, with a one-line reason
   and a link to its row; then the problems: failed runs, unreadable ``result.json`` files
   (damaged, or written by an older version of the result format) and stale results (written by
   code that has changed since).
3. One section per system: the paper, what was run, the key figure with its caption, the claims
   table (statement, kind, source, paper's value, ours, tolerance and why, verdict), the other
   figures, and the raw config/metrics/claims JSON collapsed.

Several seeds. Results live in ``<out>/<system>/<scale>-seed<N>-<hash>/result.json``. For each
system the report takes the most recently finished run and every run with the same scale,
config and code version but another seed (:func:`seed_groups`). With more than one seed each
claim is combined over them by :func:`neurips26.harness.claims.over_seeds` — the verdict of the
seed-aggregated quantity by the one rule (its interval wholly on the holding side: holds; wholly
on the other: does not hold; else inconclusive) — and the per-seed verdicts are shown beside it as
stability, never as the verdict.

Exploratory and confirmed. A claim whose threshold or a setting was chosen after a look
(``tuned_after_look``) is exploratory on the development seeds. Its confirmation runs
(``<scale>-confirm-seed<N>-<hash>``, the experiment's ``CONFIRMATION_SEEDS``) judge it again; only
that confirmed verdict counts in the headline. The page shows exploratory verdicts apart.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from jinja2 import Environment, PackageLoader, select_autoescape

from .catalogue import PAPERS, Paper
from .claims import MIN_CONFIRMATION_SEEDS, OBJECTS, Claim, Kind, Verdict, confirmed, over_seeds
from .results import RESULT_FILE, Result, atomic_write_text, load_result

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_NONFINITE = {"nan": "NaN", "inf": "∞", "-inf": "−∞", "infinity": "∞", "-infinity": "−∞"}
VERDICT_ORDER = [Verdict.DOES_NOT_HOLD, Verdict.INCONCLUSIVE, Verdict.NOT_CHECKABLE, Verdict.HOLDS]


# --------------------------------------------------------------------------- formatting

def format_number(x: float | int, digits: int = 4) -> str:
    """A number for people: ``digits`` significant digits, trailing zeros dropped.

    ``0.123456`` → ``0.1235``; ``3.0`` → ``3``; ``123456.7`` → ``1.235 × 10⁵``;
    ``2.5e-05`` → ``2.5 × 10⁻⁵``; integers below a million as they are; NaN → ``NaN``,
    ±inf → ``∞``/``−∞``; booleans → ``yes``/``no``.

    Raises:
        ValueError: if ``digits < 1``.
    """
    if digits < 1:
        raise ValueError(f"format_number(): digits={digits}; allowed: >= 1")
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) and abs(x) < 10**6:
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        mantissa, exp = f"{x:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa} × 10{str(int(exp)).translate(_SUPERSCRIPT)}".replace("-", "−", 1)
    if abs(x) >= 10**digits:
        return f"{x:.0f}"
    text = f"{x:.{digits}g}"
    return text.replace("-", "−", 1)


def format_interval(interval: Sequence[float] | None) -> str:
    """``[lo, hi]`` with 3 significant digits (more when the two ends would print the same);
    ``""`` for ``None``."""
    if interval is None:
        return ""
    lo, hi = (float(v) for v in interval)
    for digits in (3, 4, 5, 6):
        a, b = format_number(lo, digits), format_number(hi, digits)
        if a != b or lo == hi:
            break
    return f"[{a}, {b}]"


def _is_number(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) or (
        isinstance(x, str) and x.lower() in _NONFINITE)


def _number_text(x: Any, digits: int = 4) -> str:
    return _NONFINITE[x.lower()] if isinstance(x, str) else format_number(x, digits)


def _shape(x: Any) -> tuple[int, ...] | None:
    """Shape of a rectangular nested list of numbers, else ``None``."""
    if _is_number(x):
        return ()
    if not isinstance(x, list) or not x:
        return None
    inner = [_shape(v) for v in x]
    if inner[0] is None or any(s != inner[0] for s in inner):
        return None
    return (len(x),) + inner[0]


def _flat(x: Any) -> list[float]:
    if isinstance(x, list):
        return [v for item in x for v in _flat(item)]
    return [float(x) if not isinstance(x, str) else float(x.replace("infinity", "inf"))]


def format_value(x: Any, *, max_items: int = 8, max_chars: int = 240) -> str:
    """A measured or paper value as one short line.

    - ``None`` → ``—``; numbers via :func:`format_number`; text as it is;
    - a list of numbers → ``[a, b, c]``, or, when longer than ``max_items``, its first values,
      ``…``, the last value and the count;
    - a rectangular nested list (a matrix) larger than a few entries → ``3×50 array, range
      [min, max]``;
    - a dict → ``key: value; key: value`` (at most ``max_items`` entries, then ``+k more``).

    The result is cut to ``max_chars`` characters (ending in ``…``).
    """
    text = _format(x, max_items, depth=0)
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def _format(x: Any, max_items: int, depth: int) -> str:
    if x is None:
        return "—"
    if _is_number(x) or isinstance(x, bool):
        return _number_text(x)
    if isinstance(x, str):
        return x
    if isinstance(x, (list, tuple)):
        x = list(x)
        if not x:
            return "[]"
        shape = _shape(x)
        if shape is not None and len(shape) >= 2 and math.prod(shape) > max_items:
            vals = [v for v in _flat(x) if math.isfinite(v)]
            rng = f", range {format_interval((min(vals), max(vals)))}" if vals else ""
            return "×".join(map(str, shape)) + " array" + rng
        small = max(2, max_items // 2) if depth else max_items
        items = [_format(v, small, depth + 1) for v in (x if len(x) <= small else x[: small - 2] + [x[-1]])]
        if len(x) > small:
            items = items[:-1] + ["…", items[-1]]
            return "[" + ", ".join(items) + f"] ({len(x)} values)"
        return "[" + ", ".join(items) + "]"
    if isinstance(x, dict):
        small = max(2, max_items // 2)
        parts = [f"{k}: {_format(v, small, depth + 1)}" for k, v in list(x.items())[:max_items]]
        more = f"; +{len(x) - max_items} more" if len(x) > max_items else ""
        return ("{" if depth else "") + "; ".join(parts) + more + ("}" if depth else "")
    return str(x)


def format_rule(tolerance: str) -> str:
    """A claim's tolerance rule with ``<=``/``>=``/``!=`` as ``≤``/``≥``/``≠``."""
    return (tolerance or "").replace("<=", "≤").replace(">=", "≥").replace("!=", "≠")


def format_seconds(s: float | None) -> str:
    """``42 s``, ``3.2 min``, ``1.5 h``; ``—`` for ``None``."""
    if s is None:
        return "—"
    if s < 100:
        return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"
    if s < 6000:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


def counts_text(row: dict[str, int]) -> str:
    """``{verdict: count}`` in words, zeros left out: ``3 hold, 1 does not hold``; ``none``."""
    words = {"holds": ("holds", "hold"), "does_not_hold": ("does not hold", "do not hold"),
             "inconclusive": ("inconclusive", "inconclusive"),
             "not_checkable": ("not checkable", "not checkable")}
    parts = [f"{row[v]} {one if row[v] == 1 else many}" for v, (one, many) in words.items() if row.get(v)]
    return ", ".join(parts) if parts else "none"


def paper_link(arxiv: str) -> str | None:
    """The URL of an ``arXiv:ID`` or ``OpenReview:ID`` reference, else ``None``."""
    m = re.fullmatch(r"arXiv:(\S+)", arxiv.strip())
    if m:
        return f"https://arxiv.org/abs/{m.group(1)}"
    m = re.fullmatch(r"OpenReview:(\S+)", arxiv.strip())
    if m:
        return f"https://openreview.net/forum?id={m.group(1)}"
    return None


# --------------------------------------------------------------------------- reading results

@dataclass
class Run:
    """One readable ``result.json`` and whether the code that wrote it has changed since.

    Attributes:
        run_dir: the run folder.
        result: the record.
        stale: the record's code version differs from the current code's (see
            :func:`neurips26.harness.runner.code_version`).
        current_version: the current code version of its system.
    """

    run_dir: Path
    result: Result
    stale: bool = False
    current_version: str = ""


def _version_hash(code_version: str) -> str:
    return (code_version or "").split(" ", 1)[0]


def scan_results(out_dir: Path, system: str | None = None) -> tuple[list[Run], list[tuple[Path, str]]]:
    """Every ``<out>/<system>/<run>/result.json`` (only ``system``'s folder if given): the
    readable runs (with staleness) and the unreadable files with the reason (damaged JSON, not a
    result record, older format)."""
    from .task import code_version

    runs: list[Run] = []
    unreadable: list[tuple[Path, str]] = []
    versions: dict[str, str] = {}
    for path in sorted(Path(out_dir).glob(f"{system or '*'}/*/{RESULT_FILE}")):
        try:
            res = load_result(path)
        except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            unreadable.append((path, str(exc)))
            continue
        if res.system not in versions:
            versions[res.system] = code_version(res.system)
        current = versions[res.system]
        runs.append(Run(path.parent, res, _version_hash(res.code_version) != current, current))
    return runs, unreadable


def seed_groups(runs: Sequence[Run]) -> dict[str, tuple[list[Run], int]]:
    """Per system: the runs of its latest run's seed group, sorted by seed, and how many other
    (older or differently configured) runs of that system were left out.

    The seed group of a run is every run of the same system with the same scale, config and
    code version; there is one run folder per seed in it (the folder name hashes the config and
    code version).
    """
    by_system: dict[str, list[Run]] = {}
    for run in runs:
        if run.result.role == "confirmation":
            continue
        by_system.setdefault(run.result.system, []).append(run)
    out: dict[str, tuple[list[Run], int]] = {}
    for system, items in by_system.items():
        latest = max(items, key=lambda r: r.result.finished_at)
        key = _group_key(latest.result)
        group: dict[int, Run] = {}
        for run in items:
            if _group_key(run.result) == key:
                cur = group.get(run.result.seed)
                if cur is None or run.result.finished_at > cur.result.finished_at:
                    group[run.result.seed] = run
        chosen = [group[s] for s in sorted(group)]
        out[system] = (chosen, len(items) - len(chosen))
    return out


def _group_key(res: Result) -> tuple[str, str, str]:
    return res.scale, json.dumps(res.config, sort_keys=True), _version_hash(res.code_version)


def confirmation_runs(runs: Sequence[Run], group: Sequence[Run]) -> list[Run]:
    """The ``ok`` confirmation runs that belong to a development seed group (same system, scale,
    config and code version), one per seed (the most recently finished), by seed."""
    if not group:
        return []
    key, system = _group_key(group[0].result), group[0].result.system
    chosen: dict[int, Run] = {}
    for run in runs:
        res = run.result
        if res.role != "confirmation" or res.system != system or res.status != "ok" or _group_key(res) != key:
            continue
        cur = chosen.get(res.seed)
        if cur is None or res.finished_at > cur.result.finished_at:
            chosen[res.seed] = run
    return [chosen[s] for s in sorted(chosen)]


# --------------------------------------------------------------------------- the page's model

@dataclass
class ClaimRow:
    """One claim as the report shows it (over every seed of the system's seed group).

    Attributes:
        system: the system name.
        claim: the claim from the latest seed that has it (statement, tolerance, …).
        verdict: the verdict shown: the claim's own for one seed; over several seeds the common
            verdict, ``inconclusive`` when seeds disagree, ``not_checkable`` if any seed was.
        per_seed: ``(seed, claim)`` for each seed that has the claim (several seeds only).
        anchor: the HTML id of its row.
        combined: over several seeds, the claim combined by
            :func:`neurips26.harness.claims.over_seeds` (mean and interval of the per-seed
            values where they are numbers; its verdict is ``verdict``).
        confirmation: for a claim tuned after a look, its verdict on the confirmation seeds
            (:func:`neurips26.harness.claims.confirmed`), or ``None`` when none ran.
    """

    system: str
    claim: Claim
    verdict: Verdict
    per_seed: list[tuple[int, Claim]] = field(default_factory=list)
    anchor: str = ""
    combined: Claim | None = None
    confirmation: Claim | None = None

    @property
    def tuned(self) -> bool:
        """True when the claim's threshold or a setting was chosen after a look."""
        return not self.claim.preregistered

    @property
    def confirmed_enough(self) -> bool:
        """True when a tuned claim was judged on at least ``MIN_CONFIRMATION_SEEDS`` confirmation
        seeds (one or two lucky seeds are not a confirmation)."""
        c = self.confirmation
        return c is not None and c.seeds is not None and c.seeds.n >= MIN_CONFIRMATION_SEEDS

    @property
    def counted(self) -> Verdict | None:
        """The verdict that counts in the headline, the attention list, ``neurips26 show`` and the
        docs: the verdict of a preregistered claim, the confirmed verdict of a tuned one judged
        on at least ``MIN_CONFIRMATION_SEEDS`` confirmation seeds, ``None`` otherwise
        (exploratory: shown, not counted)."""
        if not self.tuned:
            return self.verdict
        return self.confirmation.verdict if self.confirmed_enough else None

    @property
    def object(self) -> str:
        """What the claim was tested on: ``real``, ``theory``, ``toy``, or ``unknown`` (older
        results, or a reconstruction/check that did not say)."""
        return self.claim.object or "unknown"

    @property
    def shown_claim(self) -> Claim:
        """The claim whose numbers explain :attr:`verdict` (combined over seeds when there are several)."""
        return self.combined if self.combined is not None else self.claim

    @property
    def kind(self) -> str:
        """``paper``, ``reconstruction``, ``check`` or ``unclassified`` (older results)."""
        return self.claim.kind.value if self.claim.kind is not None else "unclassified"

    @property
    def held(self) -> tuple[int, int] | None:
        """(seeds held, seeds judged) from the seed group or the claim's own seed record;
        ``None`` for a claim judged once or not checkable."""
        if self.verdict is Verdict.NOT_CHECKABLE:
            return None
        if len(self.per_seed) > 1:
            return sum(c.verdict is Verdict.HOLDS for _, c in self.per_seed), len(self.per_seed)
        if self.claim.seeds is not None:
            return self.claim.seeds.held, self.claim.seeds.n
        return None

    @property
    def counted_claim(self) -> Claim:
        """The claim whose numbers explain the verdict that counts: the confirmation claim of a
        confirmed tuned claim, else :attr:`shown_claim`."""
        return self.confirmation if self.tuned and self.confirmed_enough else self.shown_claim

    def reason_line(self) -> str:
        """Why this claim needs attention, in one line (never a raw dump of a structure), from
        the numbers behind the verdict that counts (the confirmation seeds' for a confirmed tuned
        claim) — never a development number beside a confirmation verdict."""
        c = self.counted_claim
        verdict = self.counted if self.counted is not None else self.verdict
        rule = format_rule(c.tolerance)
        if self.counted_claim is self.confirmation:
            seeds = self.confirmation.seeds.seeds if self.confirmation.seeds else []
            over = f" (confirmation seeds {', '.join(map(str, seeds))})"
        elif len(self.per_seed) > 1:
            over = f" (mean of {len(self.per_seed)} seeds)"
        else:
            over = ""
        if verdict is Verdict.NOT_CHECKABLE:
            return _one_line(c.reason or c.note)
        if not _is_number(c.measured):  # a structure: its rule and reason say more than a dump
            word = {"inconclusive": "undecided", "does_not_hold": "fails"}.get(verdict.value, "")
            return _one_line(f"{word}: {rule} — {c.reason}" if word else f"{rule} — {c.reason}", 240)
        ours = format_value(c.measured)
        held = (c.seeds.held, c.seeds.n) if c is self.confirmation and c.seeds else self.held
        stab = f"; held on {held[0]} of {held[1]} seeds" if held else ""
        if verdict is Verdict.INCONCLUSIVE:
            if c.interval is not None:
                return f"ours {ours}{over}, interval {format_interval(c.interval)} straddles {rule}{stab}"
            return f"undecided: {rule}; ours {ours}{stab}"
        iv = f" {format_interval(c.interval)}" if c.interval is not None else ""
        return f"ours {ours}{over}{iv}; needs {rule}{stab}"


def _sentences(text: str) -> list[str]:
    """``text`` split into sentences (after ``. ``, ``! ``, ``? ``), whitespace normalised."""
    text = " ".join((text or "").split())
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text) if s]


def _one_line(text: str, max_chars: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


@dataclass
class Figure:
    """A figure of a run: its name, caption and PNG as base64 (``None`` if the file is gone)."""

    name: str
    caption: str
    data: str | None


@dataclass
class Section:
    """A catalogue row and, if it has results here, its system section."""

    paper: Paper
    implemented: bool
    runs: list[Run] = field(default_factory=list)
    left_out: int = 0
    rows: list[ClaimRow] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    in_catalogue: bool = True
    figure_seed: int | None = None
    unreadable: int = 0
    confirm_runs: list[Run] = field(default_factory=list)

    @property
    def confirmation_seeds(self) -> list[int]:
        """The seeds of the confirmation runs shown, ascending."""
        return [r.result.seed for r in self.confirm_runs]

    @property
    def common_sentences(self) -> list[str]:
        """Sentences that three or more claim notes of this system repeat: said once, in the
        system's header, and left out of the rows (:meth:`row_note`)."""
        counts: dict[str, int] = {}
        for r in self.rows:
            for sentence in dict.fromkeys(_sentences(r.claim.note)):
                counts[sentence] = counts.get(sentence, 0) + 1
        return [s for s, n in counts.items() if n >= 3]

    @property
    def common_note(self) -> str:
        """The repeated sentences of :attr:`common_sentences` as one paragraph (``""`` if none)."""
        return " ".join(self.common_sentences)

    def row_note(self, row: "ClaimRow") -> str:
        """A claim's note without the sentences said once in the header."""
        common = set(self.common_sentences)
        return " ".join(s for s in _sentences(row.claim.note) if s not in common)

    @property
    def latest(self) -> Run | None:
        """The most recently finished run of the seed group."""
        return max(self.runs, key=lambda r: r.result.finished_at) if self.runs else None

    @property
    def ok_runs(self) -> list[Run]:
        """The runs of the seed group that finished ``ok``."""
        return [r for r in self.runs if r.result.status == "ok"]

    @property
    def failed_runs(self) -> list[Run]:
        """The runs of the seed group that failed (traceback in ``result.error``)."""
        return [r for r in self.runs if r.result.status != "ok"]

    @property
    def status(self) -> str:
        """``no result``, ``ok``, ``failed`` or ``k of n seeds failed``."""
        if not self.runs:
            return "no result"
        bad = len(self.failed_runs)
        if bad == 0:
            return "ok"
        return "failed" if bad == len(self.runs) else f"{bad} of {len(self.runs)} seeds failed"

    @property
    def stale(self) -> bool:
        """Whether the code has changed since any run of the group was written."""
        return any(r.stale for r in self.runs)

    @property
    def seeds(self) -> list[int]:
        """The seeds of the group, ascending."""
        return [r.result.seed for r in self.runs]

    @property
    def mean_time(self) -> float | None:
        """Mean wall time of the group's runs in seconds (``None`` without runs)."""
        times = [r.result.wall_time_s for r in self.runs]
        return sum(times) / len(times) if times else None

    @property
    def mean_cpu_time(self) -> float | None:
        """Mean CPU time (``cpu_time_s``) of the group's runs in seconds (``None`` when no run
        recorded it)."""
        times = [r.result.cpu_time_s for r in self.runs if r.result.cpu_time_s is not None]
        return sum(times) / len(times) if times else None

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` over the verdicts that count: preregistered claims and the
        confirmed verdicts of tuned ones (every kind present). Exploratory verdicts are left out
        (:attr:`exploratory_counts`)."""
        return _tally((r.kind, r.counted) for r in self.rows if r.counted is not None)

    @property
    def exploratory_counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` of tuned claims without a confirmed verdict (shown apart,
        not counted in the headline)."""
        return _tally((r.kind, r.verdict) for r in self.rows if r.counted is None)

    @property
    def confirmed_counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` of tuned claims judged on confirmation seeds."""
        return _tally((r.kind, r.confirmation.verdict) for r in self.rows
                      if r.tuned and r.confirmation is not None)


def _tally(pairs) -> dict[str, dict[str, int]]:
    """``{kind: {verdict: count}}`` from (kind, verdict) pairs; every kind and verdict present."""
    out: dict[str, dict[str, int]] = {k.value: {v.value: 0 for v in Verdict} for k in Kind}
    for kind, verdict in pairs:
        out.setdefault(kind, {v.value: 0 for v in Verdict})[verdict.value] += 1
    return out


def _anchor(system: str, claim_id: str) -> str:
    return "c-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{system}--{claim_id}")


def _claim_rows(system: str, runs: list[Run], confirm: Sequence[Run] = ()) -> list[ClaimRow]:
    ok = [r for r in runs if r.result.status == "ok"]
    order: list[str] = []
    by_id: dict[str, list[tuple[int, Claim]]] = {}
    for run in sorted(ok, key=lambda r: r.result.finished_at, reverse=True):
        for c in run.result.claims:
            if c.id not in by_id:
                order.append(c.id)
            by_id.setdefault(c.id, []).append((run.result.seed, c))
    rows = []
    for cid in order:
        per_seed = sorted(by_id[cid], key=lambda sc: sc[0])
        claim = by_id[cid][0][1]
        if len(ok) > 1:
            combined = over_seeds([c for _, c in per_seed], [seed for seed, _ in per_seed])
            row = ClaimRow(system, claim, combined.verdict, per_seed, _anchor(system, cid), combined)
        else:
            row = ClaimRow(system, claim, claim.verdict, [], _anchor(system, cid))
        if row.tuned:
            pairs = [(r.result.seed, c) for r in confirm for c in r.result.claims if c.id == cid]
            if pairs:
                row.confirmation = confirmed(claim, [c for _, c in pairs], [s for s, _ in pairs])
        rows.append(row)
    return rows


def _figures(run: Run) -> list[Figure]:
    out = []
    for rel in run.result.figures:
        name = Path(rel).stem
        try:
            data = base64.b64encode((run.run_dir / rel).read_bytes()).decode("ascii")
        except OSError:
            data = None
        out.append(Figure(name, run.result.captions.get(rel, ""), data))
    return out


@dataclass
class ReportData:
    """Everything the page shows (also used by ``neurips26 report`` for its exit code)."""

    sections: list[Section]
    unreadable: list[tuple[str, str]]
    out_dir: Path

    @property
    def with_results(self) -> list[Section]:
        """The sections that have at least one readable run."""
        return [s for s in self.sections if s.runs]

    @property
    def n_implemented(self) -> int:
        """How many catalogue papers are implemented."""
        return sum(s.implemented for s in self.sections if s.in_catalogue)

    @property
    def attention(self) -> list[ClaimRow]:
        """Counted claims (the same verdicts as the headline: :attr:`ClaimRow.counted`) that do
        not hold, are inconclusive or not checkable: by verdict, then kind (paper first), then
        catalogue order. Exploratory claims are listed apart (:attr:`exploratory_attention`)."""
        rows = [r for s in self.sections for r in s.rows
                if r.counted is not None and r.counted is not Verdict.HOLDS]
        kinds = [k.value for k in Kind] + ["unclassified"]
        return sorted(rows, key=lambda r: (VERDICT_ORDER.index(r.counted), kinds.index(r.kind)))

    @property
    def exploratory_attention(self) -> list[ClaimRow]:
        """Tuned claims without a confirmation on enough seeds (not counted anywhere), any verdict."""
        return [r for s in self.sections for r in s.rows if r.counted is None]

    @property
    def paper_by_object(self) -> dict[str, dict[str, int]]:
        """``{object: {verdict: count}}`` of the counted, judged paper claims (not-checkable ones
        tested nothing and are left out), objects ``real``, ``theory``, ``toy`` (and ``unknown``
        for older results) — the headline's split."""
        out: dict[str, dict[str, int]] = {o: {v.value: 0 for v in Verdict} for o in OBJECTS}
        for s in self.sections:
            for r in s.rows:
                if r.kind == Kind.PAPER.value and r.counted not in (None, Verdict.NOT_CHECKABLE):
                    out.setdefault(r.object, {v.value: 0 for v in Verdict})[r.counted.value] += 1
        return out

    @property
    def tuned_confirmation(self) -> tuple[int, int]:
        """(tuned claims confirmed — held on their pooled confirmation seeds —, tuned claims tried)."""
        rows = [r for s in self.sections for r in s.rows if r.tuned]
        return sum(r.counted is Verdict.HOLDS for r in rows), len(rows)

    def _sum(self, attr: str) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for s in self.sections:
            for kind, row in getattr(s, attr).items():
                acc = out.setdefault(kind, {v.value: 0 for v in Verdict})
                for v, n in row.items():
                    acc[v] += n
        return out

    @property
    def totals(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` of the verdicts that count (preregistered claims and
        confirmed verdicts of tuned ones) over every system with results."""
        return self._sum("counts")

    @property
    def exploratory_totals(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` of tuned claims without confirmation (not counted)."""
        return self._sum("exploratory_counts")

    @property
    def confirmed_totals(self) -> dict[str, dict[str, int]]:
        """``{kind: {verdict: count}}`` of tuned claims judged on confirmation seeds."""
        return self._sum("confirmed_counts")


def system_section(out_dir: Path, paper: Paper) -> Section | None:
    """The section of one system (its seed group and claim rows, without figures), or ``None``
    when ``out_dir`` holds no readable result of it."""
    runs, _ = scan_results(out_dir, paper.system)
    group = seed_groups([r for r in runs if r.result.system == paper.system]).get(paper.system)
    if group is None:
        return None
    s = Section(paper, paper.implemented, *group)
    s.confirm_runs = confirmation_runs(runs, s.runs)
    s.rows = _claim_rows(paper.system, s.runs, s.confirm_runs)
    return s


def collect(out_dir: Path) -> ReportData:
    """Read every result under ``out_dir`` into the page's model: one section per catalogue
    paper (in catalogue order), then systems outside the catalogue (plugins, tests)."""
    out_dir = Path(out_dir)
    runs, unreadable = scan_results(out_dir)
    groups = seed_groups(runs)
    known = {p.system for p in PAPERS}
    sections = [Section(p, p.implemented) for p in PAPERS]
    for i, system in enumerate(sorted(set(groups) - known)):
        sections.append(Section(Paper(len(PAPERS) + 1 + i, system, system, "", "", ""), True,
                                in_catalogue=False))
    for s in sections:
        if s.paper.system in groups:
            s.runs, s.left_out = groups[s.paper.system]
            s.confirm_runs = confirmation_runs(runs, s.runs)
            s.rows = _claim_rows(s.paper.system, s.runs, s.confirm_runs)
            figure_run = max(s.ok_runs or s.runs, key=lambda r: r.result.finished_at)
            s.figures, s.figure_seed = _figures(figure_run), figure_run.result.seed
    for s in sections:
        s.unreadable = sum(p.parent.parent.name == s.paper.system for p, _ in unreadable)
    rel = [(str(p.relative_to(out_dir)) if p.is_relative_to(out_dir) else str(p), why)
           for p, why in unreadable]
    return ReportData(sections, rel, out_dir)


# --------------------------------------------------------------------------- rendering

def _environment() -> Environment:
    env = Environment(loader=PackageLoader("neurips26.harness", "templates"),
                      autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)
    env.filters.update(value=format_value, number=format_number, interval=format_interval,
                       rule=format_rule, seconds=format_seconds, counts_text=counts_text)
    env.globals.update(paper_link=paper_link, Verdict=Verdict)
    return env


def render(data: ReportData) -> str:
    """The report HTML for ``data``."""
    environment = {}
    for s in data.with_results:
        environment = s.latest.result.environment  # type: ignore[union-attr]
        break
    seeds = sorted({seed for s in data.with_results for seed in s.seeds})
    return _environment().get_template("report.html.j2").render(
        data=data, environment=environment, seeds=seeds, n_papers=len(PAPERS), min_confirm=MIN_CONFIRMATION_SEEDS,
        verdicts=[Verdict.HOLDS, Verdict.DOES_NOT_HOLD, Verdict.INCONCLUSIVE, Verdict.NOT_CHECKABLE],
        generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def build_report(out_dir: Path) -> str:
    """Render the report HTML for the results under ``out_dir``."""
    return render(collect(out_dir))


def write_report(out_dir: Path) -> Path:
    """Write ``out_dir/report.html`` atomically; returns its path."""
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, build_report(out_dir))
    return path
