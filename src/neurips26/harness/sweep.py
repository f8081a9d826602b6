"""Sweeps: run one system over a grid of config overrides (× seeds) and tabulate a metric or a
claim across the grid.

``neurips26 sweep lr-schedules --grid alpha=1.2,1.5,2.0 --grid beta=0.25,0.5 --seeds 3 --metric
easy.xi`` runs every point of the grid (the Cartesian product of the ``--grid`` values) for
every seed, as tasks of the chosen executor; each point and seed writes its own result folder
(``<out>/<system>/<scale>-seed<N>-<hash>/``, the hash covering that point's config), so a rerun
reuses every finished point. The table (:class:`SweepRow` per point) goes to
``<out>/<system>/sweep-<keys>[-<metric or claim>].csv`` and is printed; the figure of the metric
or claim across the grid goes beside it as ``.png``.

Per point, over its seeds: a metric is summarised by its mean and a 95 % Student-t interval
(:func:`neurips26.harness.claims.mean_interval`); a claim by its verdict combined over the
seeds (:func:`neurips26.harness.claims.over_seeds`, unanimous rule) and in how many seeds it
held. Without ``--metric``/``--claim`` the table counts the claims that hold.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claims import Claim, Verdict, mean_interval, over_seeds
from .config import ConfigError, parse_value
from .results import Result, atomic_write_bytes, atomic_write_text

#: At most this many grid points × seeds in one sweep (a typo like 0..1e6 must not run for days).
MAX_TASKS = 10_000


def split_values(text: str) -> list[str]:
    """Split ``v1,v2,[1,2],v4`` at top-level commas (commas inside ``[]``/``{}``/quotes stay)."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_grid(items: Sequence[str], config_cls: type, system: str) -> dict[str, list[Any]]:
    """``["alpha=1.2,1.5", "N=[100,200]"]`` → ``{"alpha": [1.2, 1.5], "N": [[100, 200]]}``.

    Values are JSON where they parse, else text (a text field keeps the text as typed).
    Validation of the values themselves happens when each point's config is built.

    Raises:
        ConfigError: no ``=``, an unknown key, a key given twice, or an empty value.
    """
    grid: dict[str, list[Any]] = {}
    name = system.replace("_", "-")
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--grid {item!r}: expected key=v1,v2,...")
        key, raw = (s.strip() for s in item.split("=", 1))
        if key not in config_cls.model_fields:
            raise ConfigError(f"--grid {item!r}: {name} has no config key {key!r}; keys: "
                              f"{', '.join(config_cls.model_fields)}")
        if key in grid:
            raise ConfigError(f"--grid {item!r}: key {key!r} given twice; list its values once (k=v1,v2)")
        texts = split_values(raw)
        if any(not t for t in texts):
            raise ConfigError(f"--grid {item!r}: an empty value; give key=v1,v2,...")
        text_field = config_cls.model_fields[key].annotation is str
        grid[key] = [t if text_field else parse_value(t) for t in texts]
    if not grid:
        raise ConfigError("sweep: give at least one --grid key=v1,v2,...")
    return grid


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of the grid, first key varying slowest."""
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def metric_value(metrics: dict[str, Any], name: str) -> Any:
    """``metrics[name]``, following dots into nested dicts (``easy.xi``); ``None`` if absent."""
    if name in metrics:
        return metrics[name]
    cur: Any = metrics
    for part in name.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def scalar_metric_names(metrics: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the numeric (scalar) entries of a metrics dict."""
    names = []
    for k, v in metrics.items():
        if isinstance(v, dict):
            names += scalar_metric_names(v, f"{prefix}{k}.")
        elif _number(v) is not None:
            names.append(f"{prefix}{k}")
    return names


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(float(x)) else None


@dataclass
class SweepRow:
    """One grid point summarised over its seeds.

    Attributes:
        point: the overrides of this point.
        seeds: seeds with an ``ok`` result; ``failed``: seeds that failed.
        values: the metric (or the claim's measured value) per ok seed; ``None`` where absent.
        mean / interval: mean of the finite ``values`` and its 95 % interval (two or more).
        verdict: the claim's verdict over the seeds (``--claim``), else ``None``.
        held: seeds in which the claim held (``--claim``), or claims that held summed over
            seeds (no metric nor claim); ``judged``: seeds judged (claims judged).
    """

    point: dict[str, Any]
    seeds: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    mean: float | None = None
    interval: tuple[float, float] | None = None
    verdict: Verdict | None = None
    held: int = 0
    judged: int = 0


def summarise(points: Sequence[dict[str, Any]], results: Sequence[tuple[int, Result]], *,
              metric: str | None = None, claim: str | None = None) -> list[SweepRow]:
    """One :class:`SweepRow` per point from ``(point index, result)`` pairs."""
    rows = [SweepRow(dict(p)) for p in points]
    per_point: dict[int, list[Result]] = {}
    for i, res in results:
        per_point.setdefault(i, []).append(res)
    for i, row in enumerate(rows):
        runs = sorted(per_point.get(i, []), key=lambda r: r.seed)
        row.failed = [r.seed for r in runs if r.status != "ok"]
        ok = [r for r in runs if r.status == "ok"]
        row.seeds = [r.seed for r in ok]
        if claim is not None:
            pairs = [(r.seed, c) for r in ok for c in r.claims if c.id == claim]
            if pairs:
                combined: Claim = (over_seeds([c for _, c in pairs], [s for s, _ in pairs]) if len(pairs) > 1
                                   else pairs[0][1])
                row.verdict = combined.verdict
                row.held = sum(c.verdict is Verdict.HOLDS for _, c in pairs)
                row.judged = len(pairs)
                row.values = [c.measured for _, c in pairs]
        elif metric is not None:
            row.values = [metric_value(r.metrics, metric) for r in ok]
        else:
            row.held = sum(c.verdict is Verdict.HOLDS for r in ok for c in r.claims)
            row.judged = sum(len(r.claims) for r in ok)
            row.values = [sum(c.verdict is Verdict.HOLDS for c in r.claims) for r in ok]
        nums = [v for v in (_number(x) for x in row.values) if v is not None]
        if len(nums) >= 2:
            row.mean, row.interval = mean_interval(nums)
        elif nums:
            row.mean = nums[0]
    return rows


def _cell(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    if isinstance(x, (list, dict)):
        import json

        return json.dumps(x)
    return str(x)


def table_csv(rows: Sequence[SweepRow], keys: Sequence[str], what: str) -> str:
    """The sweep table as CSV text: grid keys, seeds, failed, mean, lo, hi, [verdict, held, judged], values."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([*keys, "seeds", "failed_seeds", f"{what}_mean", "ci95_lo", "ci95_hi", "verdict", "held",
                "judged", "values"])
    for r in rows:
        lo, hi = r.interval if r.interval else ("", "")
        w.writerow([*(_cell(r.point[k]) for k in keys), " ".join(map(str, r.seeds)), " ".join(map(str, r.failed)),
                    "" if r.mean is None else f"{r.mean:.6g}", "" if lo == "" else f"{lo:.6g}",
                    "" if hi == "" else f"{hi:.6g}", r.verdict.value if r.verdict else "",
                    r.held if r.judged else "", r.judged or "", _cell(r.values)])
    return buf.getvalue()


def rich_table(rows: Sequence[SweepRow], keys: Sequence[str], what: str, title: str) -> Any:
    """The sweep table for the terminal."""
    from rich.markup import escape
    from rich.table import Table

    colour = {"holds": "green", "does_not_hold": "red", "inconclusive": "yellow", "not_checkable": "dim"}
    t = Table(title=title)
    for k in keys:
        t.add_column(k)
    t.add_column("seeds")
    t.add_column(what)
    t.add_column("95 % interval")
    if any(r.verdict for r in rows):
        t.add_column("verdict")
    elif any(r.judged for r in rows):
        t.add_column("held")
    for r in rows:
        cells = [escape(_cell(r.point[k])) for k in keys]
        seeds = ",".join(map(str, r.seeds)) + (f" [red](failed {','.join(map(str, r.failed))})[/]" if r.failed else "")
        mean = "—" if r.mean is None else f"{r.mean:.4g}"
        ci = f"[{r.interval[0]:.4g}, {r.interval[1]:.4g}]" if r.interval else ""
        extra = []
        if any(x.verdict for x in rows):
            extra = [f"[{colour[r.verdict.value]}]{r.verdict.label} ({r.held}/{r.judged})[/]" if r.verdict else "—"]
        elif any(x.judged for x in rows):
            extra = [f"{r.held}/{r.judged}"]
        t.add_row(*cells, seeds or "—", mean, escape(ci), *extra)
    return t


def figure(rows: Sequence[SweepRow], keys: Sequence[str], what: str, title: str) -> Any:
    """The metric (or claim value) across the grid: x = first grid key, one line per
    combination of the other keys, error bars = 95 % interval over seeds; a claim's markers are
    filled by its verdict (green holds, red does not hold, yellow inconclusive; lines then grey)."""
    import matplotlib.pyplot as plt

    x_key, others = keys[0], list(keys[1:])
    xs_raw = [r.point[x_key] for r in rows]
    numeric = all(_number(v) is not None for v in xs_raw)
    cats = list(dict.fromkeys(_cell(v) for v in xs_raw))
    fig, ax = plt.subplots(figsize=(7.5, 4.2), constrained_layout=True)
    groups: dict[str, list[SweepRow]] = {}
    for r in rows:
        groups.setdefault(", ".join(f"{k}={_cell(r.point[k])}" for k in others), []).append(r)
    verdict_colour = {Verdict.HOLDS: "#1a9850", Verdict.DOES_NOT_HOLD: "#d73027",
                      Verdict.INCONCLUSIVE: "#fee08b", Verdict.NOT_CHECKABLE: "white"}
    # with verdict fills, the lines are greys so no line colour reads as a verdict
    greys = plt.cm.Greys([0.5 + 0.4 * i / max(1, len(groups) - 1) for i in range(len(groups))])
    any_verdict = any(r.verdict for r in rows)
    shown: set[Verdict] = set()
    for g, (label, grp) in enumerate(groups.items()):
        pts = [(float(r.point[x_key]) if numeric else cats.index(_cell(r.point[x_key])), r) for r in grp]
        pts = [(x, r) for x, r in pts if r.mean is not None]
        if not pts:
            continue
        pts.sort(key=lambda p: p[0])
        x = [p[0] for p in pts]
        y = [p[1].mean for p in pts]
        err = [[p[1].mean - p[1].interval[0] if p[1].interval else 0 for p in pts],
               [p[1].interval[1] - p[1].mean if p[1].interval else 0 for p in pts]]
        judged = any(p[1].verdict for p in pts)
        line = ax.errorbar(x, y, yerr=err, marker="" if judged else "o", capsize=3, label=label or None,
                           **({"color": greys[g]} if any_verdict else {}))
        if judged:  # the claim's verdict at each point, as the marker's fill
            ax.scatter(x, y, s=60, zorder=3, edgecolors=line.lines[0].get_color(), linewidths=1.5,
                       c=[verdict_colour.get(p[1].verdict, "white") for p in pts])
            shown.update(p[1].verdict for p in pts if p[1].verdict)
    if numeric:
        vals = [float(v) for v in xs_raw]
        if min(vals) > 0 and max(vals) / min(vals) >= 20:
            ax.set_xscale("log")
    else:
        ax.set_xticks(range(len(cats)), cats, rotation=30 if max(len(c) for c in cats) > 6 else 0)
    ax.set_xlabel(x_key)
    ax.set_ylabel(f"{what}: measured" if shown else what)
    ax.set_title(title, fontsize=10)
    if any(groups) and len(groups) > 1:
        first = ax.legend(fontsize=8, title=", ".join(others), title_fontsize=8, loc="upper left")
        ax.add_artist(first)
    if shown:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", ls="", markersize=8, markerfacecolor=verdict_colour[v],
                          markeredgecolor="black", label=v.label.replace(" at this scale", ""))
                   for v in Verdict if v in shown]
        ax.legend(handles=handles, fontsize=8, title="verdict over seeds", title_fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def file_stem(system: str, keys: Sequence[str], what: str | None) -> str:
    """``sweep-<keys>[-<what>]`` with characters outside ``[A-Za-z0-9_.-]`` replaced."""
    stem = "sweep-" + "-".join(keys) + (f"-{what}" if what else "")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", stem)[:150]


def write_outputs(rows: Sequence[SweepRow], keys: Sequence[str], *, out: Path, system: str,
                  metric: str | None, claim: str | None) -> tuple[Path, Path | None]:
    """Write the CSV and (when any point has a number) the PNG; returns their paths."""
    what = metric or (f"claim {claim}" if claim else "claims held")
    stem = file_stem(system, keys, metric or claim)
    folder = Path(out) / system
    csv_path = folder / f"{stem}.csv"
    atomic_write_text(csv_path, table_csv(rows, keys, re.sub(r"\W+", "_", metric or claim or "claims_held")))
    png_path = None
    if any(r.mean is not None for r in rows):
        import matplotlib.pyplot as plt

        fig = figure(rows, keys, what, f"{system.replace('_', '-')}: {what} across {', '.join(keys)}")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        png_path = folder / f"{stem}.png"
        atomic_write_bytes(png_path, buf.getvalue())
    return csv_path, png_path


def unknown_name_line(what: str, name: str, choices: Sequence[str], max_chars: int = 160) -> str:
    """One short line for an unknown ``--metric``/``--claim``: the closest names (``difflib``), else
    the first few, and how many there are — never the whole list (a system has hundreds)."""
    import difflib

    choices = sorted(set(choices))
    if not choices:
        return f"no result has a {what} {name!r}; its results have no {what}s"
    close = difflib.get_close_matches(name, choices, n=4, cutoff=0.5)
    head = f"no result has a {what} {name!r}; {len(choices)} {what}s"
    shown: list[str] = []
    for c in close or choices:
        if len(head) + sum(len(x) + 2 for x in shown) + len(c) + 20 > max_chars:
            break
        shown.append(c)
    rest = len(choices) - len(shown)
    label = "closest" if close else "e.g."
    return f"{head}, {label}: {', '.join(shown)}" + (f" (+{rest} more)" if rest else "")


def _names(results: Sequence[Result]) -> tuple[list[str], list[str]]:
    """(numeric metric names, claim ids) found in ``results``."""
    return (sorted({n for r in results for n in scalar_metric_names(r.metrics)}),
            sorted({c.id for r in results for c in r.claims}))


def _recorded(out: Path, system: str) -> list[Result]:
    """The ``ok`` results of ``system`` already under ``out`` (``[]``: none; then the first run tells)."""
    from .results import RESULT_FILE, load_result

    found = []
    for path in sorted(Path(out).glob(f"{system}/*/{RESULT_FILE}")):
        try:
            res = load_result(path)
        except (OSError, ValueError):
            continue
        if res.status == "ok":
            found.append(res)
    return found


def _check_name(metric: str | None, claim: str | None, results: Sequence[Result]) -> None:
    """Raise :class:`ConfigError` (one short line) when no result of ``results`` has ``metric``
    (:func:`metric_value`) or ``claim``."""
    metrics, claims = _names(results)
    if metric and all(metric_value(r.metrics, metric) is None for r in results):
        raise ConfigError(f"--metric {metric!r}: " + unknown_name_line("metric", metric, metrics))
    if claim and not any(c.id == claim for r in results for c in r.claims):
        raise ConfigError(f"--claim {claim!r}: " + unknown_name_line("claim", claim, claims))


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: the rows, the files written, the results and interrupted?"""

    rows: list[SweepRow]
    keys: list[str]
    csv_path: Path | None
    png_path: Path | None
    results: list[Result]
    interrupted: bool
    missing: str = ""


def run_sweep(spec: Any, grid: dict[str, list[Any]], *, scale: str = "quick", seeds: Sequence[int] = (0,),
              out: Path = Path("sweeps"), metric: str | None = None, claim: str | None = None,
              executor: str = "local", address: str | None = None, workers: int | None = None,
              device: str | None = None, force: bool = False, console: Any = None) -> SweepOutcome:
    """Run ``spec`` (a :class:`~neurips26.harness.runner.SystemSpec`; its overrides apply to
    every point) at every grid point and seed, then write the table and figure.

    Every point's config is built and validated, and requirements checked, before anything
    runs. The ``metric``/``claim`` name is checked against the system's results already under
    ``out`` before any run, or, when there are none, after the first run (the others do not run
    when it is unknown). ``missing`` is set (and nothing plotted) when no result has it.

    Raises:
        ConfigError: an invalid point (names the point), more than :data:`MAX_TASKS` tasks, both
            ``metric`` and ``claim``, an unknown ``metric``/``claim`` (one short line with the
            closest names), or a missing requirement.
    """
    from .executor import check_requirements
    from .runner import EXECUTORS, SystemSpec, default_device, git_commit, make_task, resolve_config, run_tasks

    if metric and claim:
        raise ConfigError("sweep: give --metric or --claim, not both")
    if executor not in EXECUTORS:
        raise ConfigError(f"--executor {executor!r}: allowed: {', '.join(EXECUTORS)}")
    points = grid_points(grid)
    if len(points) * len(seeds) > MAX_TASKS:
        raise ConfigError(f"sweep: {len(points)} points x {len(seeds)} seeds = {len(points) * len(seeds)} runs; "
                          f"at most {MAX_TASKS} in one sweep")
    if executor == "local":
        device = device or default_device()
    commit = git_commit()
    tasks, owner = [], []
    name = spec.name.replace("_", "-")
    for i, point in enumerate(points):
        sub = SystemSpec(spec.name, spec.module, {**spec.overrides, **point})
        try:
            config = resolve_config(spec.module, scale, sub.overrides, spec.name)
        except ConfigError as exc:
            where = ", ".join(f"{k}={_cell(v)}" for k, v in point.items())
            raise ConfigError(f"sweep point {where}: {exc}") from None
        from .catalogue import check_packages

        check_packages(spec.name, config)
        tag = " ".join(f"{k}={_cell(v)}" for k, v in point.items())
        for seed in seeds:
            tasks.append(make_task(sub, config, scale=scale, seed=seed, commit=commit,
                                   label=f"{name} {tag} seed {seed}"))
            owner.append(i)
    check_requirements(tasks, executor=executor, address=address, device=device)
    known = _recorded(out, spec.name)  # the metric or claim asked for, checked before any run
    if known:
        _check_name(metric, claim, known)
    results, interrupted = [], False
    if not known and (metric or claim) and tasks:  # nothing recorded yet: run one task, check, go on
        results, interrupted = run_tasks(tasks[:1], out=out, device=device, force=force, console=console,
                                         executor=executor, address=address, workers=workers)
        ok_first = [r for r in results if r.status == "ok"]
        if ok_first:
            _check_name(metric, claim, ok_first)
        tasks_left = tasks[1:]
    else:
        tasks_left = tasks
    if not interrupted and tasks_left:
        more, interrupted = run_tasks(tasks_left, out=out, device=device, force=force, console=console,
                                      executor=executor, address=address, workers=workers)
        results += more
    by_key = {(t.run_key): owner[j] for j, t in enumerate(tasks)}
    pairs = [(by_key[r.run_key], r) for r in results if r.run_key in by_key]
    rows = summarise(points, pairs, metric=metric, claim=claim)
    keys = list(grid)
    outcome = SweepOutcome(rows, keys, None, None, results, interrupted)
    ok = [r for _, r in pairs if r.status == "ok"]
    if ok and metric and all(metric_value(r.metrics, metric) is None for r in ok):
        outcome.missing = unknown_name_line("metric", metric, _names(ok)[0])
    if ok and claim and not any(c.id == claim for r in ok for c in r.claims):
        outcome.missing = unknown_name_line("claim", claim, _names(ok)[1])
    if pairs:
        outcome.csv_path, outcome.png_path = write_outputs(rows, keys, out=out, system=spec.name,
                                                           metric=metric, claim=claim)
    return outcome


__all__ = ["run_sweep", "SweepOutcome", "parse_grid", "grid_points", "split_values", "summarise", "SweepRow", "table_csv", "rich_table",
           "figure", "write_outputs", "metric_value", "scalar_metric_names", "MAX_TASKS"]
