"""``report.html``: one self-contained page (figures embedded) from the results on disk."""

from __future__ import annotations

import base64
import datetime as _dt
import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from .catalogue import PAPERS, Paper
from .results import atomic_write_text, latest_results


def _round(x: Any) -> Any:
    """Floats (also inside lists and dicts) to 4 significant digits, for display."""
    if isinstance(x, float):
        return float(f"{x:.4g}")
    if isinstance(x, list):
        return [_round(v) for v in x]
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    return x


def _fmt(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, (list, dict)):
        text = json.dumps(_round(x), ensure_ascii=False, default=str)
        if len(text) > 300:
            text = text[:297] + "…"
        return text
    return str(x)


def build_report(out_dir: Path) -> str:
    """Render the report HTML for the latest result of each system under ``out_dir``."""
    out_dir = Path(out_dir)
    skipped: list[tuple[Path, str]] = []
    latest = latest_results(out_dir, skipped)
    sections, summary = [], []
    known = {p.system: p for p in PAPERS}
    extra = sorted(set(latest) - set(known))  # systems outside the catalogue (plugins, tests)
    for i, system in enumerate([p.system for p in PAPERS if p.system in latest] + extra):
        paper = known.get(system) or Paper(len(PAPERS) + 1 + i, system, system, "", "", "")
        run_dir, res = latest[system]
        figures = []  # (name, base64 PNG or None when the file is missing)
        for rel in res.figures:
            path = run_dir / rel
            try:
                figures.append((Path(rel).stem, base64.b64encode(path.read_bytes()).decode("ascii")))
            except OSError:
                figures.append((Path(rel).stem, None))
        counts = res.counts()
        summary.append({"paper": paper, "res": res, "counts": counts})
        sections.append({"paper": paper, "res": res, "figures": figures, "counts": counts})
    env = Environment(loader=PackageLoader("neurips26.harness", "templates"),
                      autoescape=select_autoescape(["html", "j2"]))
    env.filters["fmt"] = _fmt
    totals = {k: sum(s["counts"][k] for s in summary) for k in ("holds", "does_not_hold", "not_checkable")}
    environment = sections[0]["res"].environment if sections else {}
    return env.get_template("report.html.j2").render(
        sections=sections, summary=summary, totals=totals, environment=environment,
        seeds=sorted({s["res"].seed for s in sections}),
        skipped=[(str(p.relative_to(out_dir)), why) for p, why in skipped],
        generated=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        n_papers=len(PAPERS))


def write_report(out_dir: Path) -> Path:
    """Write ``out_dir/report.html`` atomically; returns its path."""
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, build_report(out_dir))
    return path
