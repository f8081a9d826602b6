"""Put a run's results and the latest benchmark numbers into the docs (one command).

    .venv/bin/python scripts/docs_snapshot.py --results results   # after `neurips26 reproduce`
    .venv/bin/python scripts/docs_snapshot.py                     # after a benchmark run: tables only
    .venv/bin/python scripts/docs_snapshot.py --check             # exit 1 if a generated file is stale
    .venv/bin/python scripts/docs_snapshot.py --dry-run           # also the README's full-scale plan

With ``--results DIR`` it writes ``docs/results/snapshot.json`` (commit, date, counts, every
claim) and the key figures from the results folder DIR, then regenerates ``docs/results/*.md``
and the README's counts block from the snapshot and ``benchmarks/results/*.json``. See
:mod:`neurips26.harness.docsgen`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from neurips26.harness import docsgen  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, help="results folder of a main job (neurips26 reproduce --out DIR)")
    ap.add_argument("--commit", help="commit the run was made from (default: the one its results record)")
    ap.add_argument("--command", default="neurips26 reproduce", help="the command that made the results")
    ap.add_argument("--dry-run", action="store_true",
                    help="also run the full-scale dry run and put its plan in the README (about a minute)")
    ap.add_argument("--check", action="store_true", help="only check that the generated files are current")
    args = ap.parse_args(argv)
    if args.check:
        stale = [p for p, text in docsgen.generated_files(ROOT).items()
                 if not p.is_file() or p.read_text() != text]
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}")
        print("generated docs are current" if not stale else
              "run .venv/bin/python scripts/docs_snapshot.py to regenerate")
        return 1 if stale else 0
    if args.results is not None:
        try:
            path = docsgen.write_snapshot(args.results, ROOT, commit=args.commit, command=args.command)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {path.relative_to(ROOT)}")
    if args.dry_run:
        print(f"wrote {docsgen.write_dryrun(ROOT).relative_to(ROOT)}")
    for p in docsgen.write_generated(ROOT):
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
