"""The ``neurips26`` command: list · reproduce · fullcheck · sweep · report · show."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .harness.catalogue import (
    PAPERS,
    Paper,
    get_paper,
    implemented_papers,
    install_command,
    load_experiment,
    missing_packages,
    missing_text,
)
from .harness.config import ConfigError, parse_assignment
from .harness.report import write_report
from .harness.results import latest_results

os.environ.setdefault("MPLBACKEND", "Agg")

def _n_implemented() -> int:
    """How many catalogue systems have an ``experiment.py`` (a file check: imports nothing)."""
    root = Path(__file__).resolve().parent
    return sum((root / p.system / "experiment.py").is_file() for p in PAPERS)


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help=f"Implement and reproduce NeurIPS 2026 papers at laptop scale, with an honest "
                       f"verdict per claim: {_n_implemented()} of the {len(PAPERS)} catalogue papers "
                       "are implemented (`neurips26 list`).")
console = Console()
err = Console(stderr=True, soft_wrap=True)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)  # values like [nan] are not markup
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        from importlib import metadata

        try:
            version = metadata.version("neurips26")
        except metadata.PackageNotFoundError:  # run from a source tree without installing
            version = "unknown (not installed)"
        console.print(f"neurips26 {version}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """Implement and reproduce NeurIPS 2026 papers at laptop scale."""


@app.command("list")
def list_systems() -> None:
    """Print the catalogue's nineteen papers: implemented or not, and whether each can run here
    (the optional packages it needs are installed) or what is missing."""
    table = Table(title="neurips26 catalogue")
    table.add_column("#", no_wrap=True)
    table.add_column("system", no_wrap=True)  # the name to type: never cut
    table.add_column("paper (arXiv / venue)", overflow="fold", min_width=22)  # an id of 21 characters fits whole
    table.add_column("here", overflow="fold", min_width=12)
    extras: list[str] = []
    for p in PAPERS:
        missing = missing_packages(p.system) if p.implemented else []
        for n in missing:
            extras += [n.extra] if n.extra not in extras else []
        if not p.implemented:
            status = "[dim]not implemented yet[/]"
        elif missing:
            labels = ", ".join(dict.fromkeys(n.label for n in missing))
            status = f"[yellow]{escape('needs [' + ','.join(dict.fromkeys(n.extra for n in missing)) + ']: ' + labels)}[/]"
        else:
            status = "[green]ready[/]"
        table.add_row(str(p.number), p.cli_name, f"{escape(p.title)}\n[dim]{escape(p.arxiv)}[/]", status)
    console.print(table)
    n_ready = sum(p.implemented and not missing_packages(p.system) for p in PAPERS)
    console.print(f"{sum(p.implemented for p in PAPERS)} of {len(PAPERS)} papers implemented; "
                  f"{n_ready} can run here.", highlight=False)
    if extras:
        console.print(f"to run the others: {install_command(extras)} "
                      "(a full configuration may need more: `neurips26 show SYSTEM`)", highlight=False, markup=False)


def _load(paper: Paper):
    """The system's experiment module, or one line naming the extra to install (never "not
    implemented" for a missing optional package)."""
    line = missing_text(paper.system, missing_packages(paper.system))
    if line:
        _fail(line)
    try:
        return load_experiment(paper)
    except ImportError as exc:
        _fail(str(exc))


def _check_missing(specs: list, configs: list) -> None:
    """Fail before any work when a selected system's config needs packages missing here: one line
    per system, then a line saying what to do. ``specs`` may be papers (``configs`` ``None`` each:
    the packages every config needs, checked before importing the systems)."""
    lines = [line for s, c in zip(specs, configs)
             if (line := missing_text(getattr(s, "name", None) or s.system,
                                      missing_packages(getattr(s, "name", None) or s.system, c)))]
    if not lines:
        return
    for line in lines[:-1]:
        err.print(f"[bold red]error:[/] {escape(line)}", highlight=False)
    _fail(lines[-1] if len(lines) == 1 else
          f"{lines[-1]}\n{len(lines)} systems need packages missing here; install them or name the systems "
          "to run (`neurips26 list` shows what runs here)")


def _select(systems: list[str]) -> list[Paper]:
    if not systems:
        papers = implemented_papers()
        if not papers:
            _fail("no system is implemented yet")
        return papers
    papers = []
    for name in systems:
        try:
            paper = get_paper(name)
        except KeyError as exc:
            _fail(exc.args[0])
        if not paper.implemented:
            done = ", ".join(p.cli_name for p in implemented_papers()) or "none"
            _fail(f"system {paper.cli_name!r} is not implemented yet; implemented: {done}")
        if paper not in papers:
            papers.append(paper)
    return papers


def _check_device(device: str) -> None:
    """Fail with one line unless torch knows ``device`` and, for cuda/mps, it is available."""
    import torch

    try:
        kind = torch.device(device).type
    except (RuntimeError, ValueError):
        _fail(f"--device {device!r}: not a torch device; allowed: cpu, cuda, cuda:N, mps")
    available = {"cuda": torch.cuda.is_available(),
                 "mps": getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()}
    if not available.get(kind, True):
        _fail(f"--device {device!r}: torch sees no {kind} device here; use --device cpu (or omit --device)")


def _apply_sets(specs: list, set_: list[str]) -> None:
    """Apply ``--set [system:]key=value`` items to the specs' overrides (one-line errors)."""
    for item in set_:
        target, key, value = parse_assignment(item)
        matched = [s for s in specs if (target is None or s.name == target)
                   and key in s.module.Config.model_fields]
        names = ", ".join(s.name.replace("_", "-") for s in specs)
        if target is not None and target not in {s.name for s in specs}:
            try:
                get_paper(target)
                what = "is not among those being run"
            except KeyError:
                what = "is not a known system"
            _fail(f"--set {item!r}: system {target.replace('_', '-')!r} {what}; selected: {names}")
        if not matched:
            keys = "; ".join(f"{s.name.replace('_', '-')}: {', '.join(s.module.Config.model_fields)}"
                             for s in specs if target is None or s.name == target)
            _fail(f"--set {item!r}: no selected system has a config key {key!r}; keys: {keys}")
        raw = item.split("=", 1)[1]
        for s in matched:  # a text field takes the text as typed: --set model=1 means "1"
            text_field = s.module.Config.model_fields[key].annotation is str
            s.overrides[key] = raw if text_field and not isinstance(value, str) else value


def _prepare_out(out: Path) -> None:
    """Create the results folder or fail with one line (a file, not creatable, not writable)."""
    if out.exists() and not out.is_dir():
        _fail(f"--out {str(out)!r}: is a file; give a folder (created if missing)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"--out {str(out)!r}: cannot create the folder ({exc.strerror or exc})")
    if not os.access(out, os.W_OK | os.X_OK):
        _fail(f"--out {str(out)!r}: the folder is not writable; give a writable folder")


def _seed_list(seed: Optional[int], seeds: Optional[str]) -> list[int]:
    """``--seed N`` or ``--seeds 0,1,2`` / ``--seeds 5`` (= 0..4) as a list (default ``[0]``)."""
    from .harness.runner import parse_seeds

    if seed is not None and seeds is not None:
        _fail(f"--seed {seed} and --seeds {seeds!r}: give one of them")
    if seeds is not None:
        try:
            return parse_seeds(seeds)
        except ConfigError as exc:
            _fail(str(exc))
    seed = 0 if seed is None else seed
    if not 0 <= seed < 2**32:  # numpy's and every system's seeding accept this range
        _fail(f"--seed {seed}: allowed: an integer from 0 to {2**32 - 1}")
    return [seed]


def _check_executor(executor: str, address: Optional[str], workers: Optional[int]) -> None:
    from .harness.runner import EXECUTORS

    if executor not in EXECUTORS:
        _fail(f"--executor {executor!r}: allowed values are {', '.join(EXECUTORS)}")
    if address is not None and executor != "ray":
        _fail(f"--address {address!r} needs --executor ray")
    if workers is not None and workers < 1:
        _fail(f"--workers {workers}: allowed: an integer >= 1")
    if executor == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            _fail(f"--executor ray needs Ray, which is not installed: {install_command('cluster')}")


_SEEDS_HELP = "Seeds: a count (5 = seeds 0..4) or a list (0,1,2); each seed is one run per system."
_EXECUTOR_HELP = ("Where runs happen: local (in this process, one after another), pool (a process per run, "
                  "in parallel on this machine) or ray (Ray tasks; a local Ray instance, or --address).")
_ADDRESS_HELP = "Ray cluster to join (HOST:PORT of `ray start --head`, or ray://HOST:PORT); needs --executor ray."
_WORKERS_HELP = "Cores to use for pool / a local Ray instance (default: all)."


_DRY_RUN_HELP = ("Check instead of running: validate each config, build its models at full size on the meta "
                 "device, run its fast data generators, print the plan (tasks, resources, GPU-hours); exit 1 "
                 "naming the stage that would crash.")


def _dry_run(specs: list, scale: str, seeds: list[int], confirm: bool, workers: Optional[int]) -> None:
    """``reproduce --dry-run``: check every config's stages and print the plan (exit 1 on a failure)."""
    from .harness.dryrun import dry_run, print_plan

    names = ", ".join(s.name.replace("_", "-") for s in specs)
    console.print(f"dry run of {len(specs)} system(s) at scale {scale}, seeds {_seeds_text(seeds)}: {names}",
                  highlight=False)

    def done(plan) -> None:
        f = plan.failure
        mark = "[green]✓[/]" if f is None else "[red]✗[/]"
        console.print(f"{mark} {plan.system.replace('_', '-')}"
                      + ("" if f is None else f": stage {escape(f.name)!r} {f.status}: {escape(f.detail)}"),
                      highlight=False)

    try:
        plans = dry_run(specs, scale=scale, seeds=seeds, confirm=confirm, workers=workers, on_done=done)
    except ConfigError as exc:
        _fail(str(exc))
    print_plan(plans, console, seeds)
    failed = [p for p in plans if not p.ok]
    if failed:
        _fail(f"dry run: {len(failed)} of {len(plans)} system(s) would fail: "
              + "; ".join(f"{p.system.replace('_', '-')} at stage {p.failure.name!r}" for p in failed), code=1)


def _seeds_text(seeds: list[int]) -> str:
    if len(seeds) > 3 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]}"
    return ",".join(map(str, seeds))


def _install_auto_model(specs: list, scale: str) -> None:
    """When a selected system's config would resolve ``backend=auto`` / ``model=auto`` and the
    local model's package is installed but not yet converted, convert it now (once, before any
    run), so that the main command runs the model claims on a fresh machine."""
    from .harness.config import AUTO_MODEL

    def wants_auto(s) -> bool:
        try:
            base = getattr(s.module.Config, scale)()
        except Exception:  # noqa: BLE001 - the real validation comes next, with its own message
            return False
        values = {**base.model_dump(), **s.overrides}
        return values.get("backend") == "auto" or ("backend" not in values and values.get("model") == "auto")

    if not any(wants_auto(s) for s in specs):
        return
    from .backends.models import ensure_installed_from_package

    try:
        ensure_installed_from_package(AUTO_MODEL, log=lambda m: console.print(m, highlight=False, markup=False))
    except (RuntimeError, OSError, ValueError) as exc:
        _fail(f"installing {AUTO_MODEL} from its package failed: {' '.join(str(exc).split())}", code=1)


@app.command()
def reproduce(
    systems: Annotated[Optional[list[str]], typer.Argument(help="Systems to run (default: every implemented one).")] = None,
    scale: Annotated[str, typer.Option(help="quick (2 CPU cores, minutes) or full (paper scale, GPU/cluster).")] = "quick",
    out: Annotated[Path, typer.Option(help="Results folder.")] = Path("results"),
    seed: Annotated[Optional[int], typer.Option(help="Random seed  [default: 0]", show_default=False)] = None,
    seeds: Annotated[Optional[str], typer.Option(help=_SEEDS_HELP)] = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Config override key=value or system:key=value (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Rerun systems whose result already exists.")] = False,
    device: Annotated[Optional[str], typer.Option(help="torch device (default: cuda if available, else cpu).")] = None,
    executor: Annotated[str, typer.Option(help=_EXECUTOR_HELP)] = "local",
    address: Annotated[Optional[str], typer.Option(help=_ADDRESS_HELP)] = None,
    workers: Annotated[Optional[int], typer.Option(help=_WORKERS_HELP)] = None,
    open_report: Annotated[bool, typer.Option("--open", help="Open report.html in a browser when done.")] = False,
    confirm: Annotated[bool, typer.Option(help="Also run each system's confirmation seeds (they judge claims tuned after a look; only those verdicts count in the headline).")] = True,
    dry_run: Annotated[bool, typer.Option("--dry-run", help=_DRY_RUN_HELP)] = False,
) -> None:
    """Run the reproductions (each system once per seed), write results and report.html."""
    from .harness.executor import check_requirements
    from .harness.runner import SystemSpec, git_commit, make_task, preflight_inputs, resolve_config
    from .harness.runner import reproduce as run_all

    if scale not in ("quick", "full"):
        _fail(f"--scale {scale!r}: allowed values are quick, full")
    seed_list = _seed_list(seed, seeds)
    _check_executor(executor, address, workers)
    if device is not None:
        _check_device(device)
    papers = _select(systems or [])
    _check_missing(papers, [None] * len(papers))  # every system's missing packages, in one go
    specs = [SystemSpec(p.system, _load(p), {}) for p in papers]
    if dry_run:
        _apply_sets(specs, set_ or [])
        _dry_run(specs, scale, seed_list, confirm, workers)
        return
    try:
        _apply_sets(specs, set_ or [])
        _install_auto_model(specs, scale)
        commit = git_commit()
        configs = [resolve_config(s.module, scale, s.overrides, s.name) for s in specs]
        _check_missing(specs, configs)  # optional packages, before any other check or work
        for s, config in zip(specs, configs):  # validate every config and its requirements before touching the disk
            check_requirements([make_task(s, config, scale=scale, seed=seed_list[0], commit=commit)],
                               executor=executor, address=address, device=device)
            preflight_inputs(s.module, config, s.name)
        _prepare_out(out)
        results, interrupted = run_all(specs, scale=scale, seeds=seed_list, out=out, device=device,
                                       force=force, console=console, executor=executor, address=address,
                                       workers=workers, confirm=confirm, preflight=False)
    except ConfigError as exc:
        _fail(str(exc))
    except OSError as exc:  # disk full, folder removed mid-run, ...
        _fail(f"cannot write results under {str(out)!r}: {exc}", code=1)
    report = (out / "report.html").resolve()
    console.print(f"report: [link=file://{report}]{report}[/link]")
    if open_report:
        import webbrowser

        webbrowser.open(report.as_uri())
    if interrupted:
        raise typer.Exit(130)
    if any(r.status != "ok" for r in results):
        raise typer.Exit(1)


@app.command()
def fullcheck(
    systems: Annotated[Optional[list[str]], typer.Argument(help="Systems to check (default: every implemented one).")] = None,
    budget_minutes: Annotated[float, typer.Option(help="Minutes each system's run may take before it is stopped.")] = 5.0,
    scale: Annotated[str, typer.Option(help="full (default) or quick: the configuration to run.")] = "full",
    device: Annotated[Optional[str], typer.Option(help="torch device (default: cuda if available, else cpu).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the checked run.")] = 0,
    seeds: Annotated[str, typer.Option(help="Seeds of the planned run (a count or a list), for the plan's ETA.")] = "10",
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Config override key=value or system:key=value (repeatable).")] = None,
    out: Annotated[Optional[Path], typer.Option(help="Also write the measurements as JSON to this file.")] = None,
) -> None:
    """Time-boxed full-scale check: run each system's full configuration for at most
    --budget-minutes on the device, then stop it and report per stage throughput (steps/s), device
    memory, utilisation, torch forward passes by device and the ETA of the run and of the whole
    plan. Exits 1 when a system that declares device work (``Resources.on_device``) ran no torch
    module on a non-CPU device. Writes no results."""
    from .harness.executor import check_requirements
    from .harness.fullcheck import check_one, total_lines, write_json
    from .harness.runner import SystemSpec, confirmation_seeds, default_device, git_commit, make_task, resolve_config

    if scale not in ("quick", "full"):
        _fail(f"--scale {scale!r}: allowed values are quick, full")
    if not (budget_minutes > 0 and budget_minutes <= 24 * 60):
        _fail(f"--budget-minutes {budget_minutes:g}: allowed: a number of minutes > 0 and at most 1440")
    plan_seeds = _seed_list(None, seeds)
    _seed_list(seed, None)
    if device is not None:
        _check_device(device)
    device = device or default_device()
    papers = _select(systems or [])
    _check_missing(papers, [None] * len(papers))
    specs = [SystemSpec(p.system, _load(p), {}) for p in papers]
    try:
        _apply_sets(specs, set_ or [])
        configs = [resolve_config(s.module, scale, s.overrides, s.name) for s in specs]
        _check_missing(specs, configs)
        commit = git_commit()
        tasks = [make_task(s, c, scale=scale, seed=seed, commit=commit) for s, c in zip(specs, configs)]
        check_requirements(tasks, device=device)
    except ConfigError as exc:
        _fail(str(exc))
    checks = []
    try:
        for s, task in zip(specs, tasks):
            console.print(f"checking {s.name.replace('_', '-')} ({scale}) on {device} for up to "
                          f"{budget_minutes:g} min", highlight=False)
            check = check_one(task, device=device, budget_s=budget_minutes * 60,
                              declared_hours=task.resources.hours,
                              on_line=lambda line: console.print(f"  {escape(line)}", highlight=False))
            checks.append(check)
            for line in check.lines():
                console.print(escape(line), highlight=False)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted; the checks so far:[/]")
    per = {s.name: len(plan_seeds) + len(confirmation_seeds(s.module)) for s in specs}
    for line in total_lines(checks, per):
        console.print(escape(line), highlight=False)
    if out is not None:
        try:
            console.print(f"wrote {write_json(checks, out)}", highlight=False)
        except OSError as exc:
            _fail(f"--out {str(out)!r}: cannot write ({exc.strerror or exc})", code=1)
    declared = {t.system: t.resources.on_device for t in tasks}
    missed = [c for c in checks if declared.get(c.system) and c.reached_device is False]
    for c in missed:
        console.print(f"[red]{c.system.replace('_', '-')}: declares device work ({declared[c.system]}) but no "
                      f"torch module ran on {device}[/]", highlight=False)
    if len(checks) < len(tasks):
        raise typer.Exit(130)
    if missed or any(c.outcome in ("error", "died") or c.status == "failed" for c in checks):
        raise typer.Exit(1)


@app.command()
def sweep(
    system: Annotated[str, typer.Argument(help="The system to sweep, e.g. lr-schedules.")],
    grid: Annotated[list[str], typer.Option(help="key=v1,v2,... (repeatable: the grid is the product).")],
    metric: Annotated[Optional[str], typer.Option(help="Metric to tabulate and plot (dots reach into nested metrics).")] = None,
    claim: Annotated[Optional[str], typer.Option(help="Claim id to tabulate and plot (verdict, held in k of n seeds).")] = None,
    scale: Annotated[str, typer.Option(help="quick or full: the base config of every point.")] = "quick",
    seeds: Annotated[str, typer.Option(help=_SEEDS_HELP)] = "1",
    out: Annotated[Path, typer.Option(help="Folder for the runs, the table (CSV) and the figure.")] = Path("sweeps"),
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Config override applied at every point (repeatable).")] = None,
    force: Annotated[bool, typer.Option(help="Rerun points whose result already exists.")] = False,
    device: Annotated[Optional[str], typer.Option(help="torch device (default: cuda if available, else cpu).")] = None,
    executor: Annotated[str, typer.Option(help=_EXECUTOR_HELP)] = "local",
    address: Annotated[Optional[str], typer.Option(help=_ADDRESS_HELP)] = None,
    workers: Annotated[Optional[int], typer.Option(help=_WORKERS_HELP)] = None,
) -> None:
    """Run SYSTEM over a grid of config values (x seeds); tabulate and plot a metric or claim."""
    from .harness.runner import SystemSpec
    from .harness.sweep import parse_grid, rich_table, run_sweep

    if scale not in ("quick", "full"):
        _fail(f"--scale {scale!r}: allowed values are quick, full")
    if metric and claim:
        _fail("give --metric or --claim, not both")
    seed_list = _seed_list(None, seeds)
    _check_executor(executor, address, workers)
    if device is not None:
        _check_device(device)
    paper = _select([system])[0]
    spec = SystemSpec(paper.system, _load(paper), {})
    try:
        _apply_sets([spec], set_ or [])
        grid_values = parse_grid(grid, spec.module.Config, spec.name)
        clash = sorted(set(grid_values) & set(spec.overrides))
        if clash:
            _fail(f"--grid and --set both give {clash[0]!r}; give it in one of them")
        _prepare_out(out)
        res = run_sweep(spec, grid_values, scale=scale, seeds=seed_list, out=out, metric=metric, claim=claim,
                        executor=executor, address=address, workers=workers, device=device, force=force,
                        console=console)
    except ConfigError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write results under {str(out)!r}: {exc}", code=1)
    what = metric or (f"claim {claim}" if claim else "claims held")
    console.print(rich_table(res.rows, res.keys, what, f"{paper.cli_name}: {what} across {', '.join(res.keys)}"))
    for path in (res.csv_path, res.png_path):
        if path is not None:
            console.print(f"wrote {path}", highlight=False)
    if res.missing:
        _fail(res.missing)
    if res.interrupted:
        raise typer.Exit(130)
    if any(r.status != "ok" for r in res.results):
        raise typer.Exit(1)


@app.command()
def report(
    folder: Annotated[Optional[Path], typer.Argument(help="Results folder (same as --out).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(help="Results folder (default: results).", show_default=False)] = None,
) -> None:
    """Rebuild report.html in the results folder from the results in it.

    Exits 1 when a result.json could not be read (damaged, or an older format); the report is
    still written and lists it.
    """
    if folder is not None and out is not None and folder != out:
        _fail(f"two results folders given: {str(folder)!r} and --out {str(out)!r}; give one")
    out = out or folder or Path("results")
    if not out.is_dir():
        _fail(f"results folder {str(out)!r} does not exist")
    skipped: list[tuple[Path, str]] = []
    found = latest_results(out, skipped)
    for path, why in skipped:
        err.print(f"[yellow]warning:[/] skipped {escape(str(path))}: {escape(why)}", highlight=False)
    if not found:
        _fail(f"no readable results under {str(out)!r}; run `neurips26 reproduce --out {out}` first")
    try:
        path = write_report(out)
    except OSError as exc:
        _fail(f"cannot write {str(out / 'report.html')!r}: {exc.strerror or exc}", code=1)
    console.print(f"report: {path.resolve()}", highlight=False)
    if skipped:
        err.print(f"[red]{len(skipped)} result file{'s' if len(skipped) > 1 else ''} could not be read[/] "
                  "(listed under Problems in the report)", highlight=False)
        raise typer.Exit(1)


@app.command()
def show(
    system: Annotated[str, typer.Argument(help="System name, e.g. lr-schedules.")],
    out: Annotated[Path, typer.Option(help="Results folder to read the latest claims from.")] = Path("results"),
) -> None:
    """Show a system's paper, its quick/full configs and its latest claims."""
    try:
        paper = get_paper(system)
    except KeyError as exc:
        _fail(exc.args[0])
    from .harness.report import paper_link

    authors = "authors not known" if paper.authors.startswith("not found") else paper.authors
    where = paper_link(paper.arxiv) or "no arXiv or OpenReview id known"
    console.print(f"[bold]{paper.number}. {paper.cli_name}[/] — {escape(paper.title)}\n{escape(authors)} · {where}",
                  highlight=False)
    if not paper.implemented:
        console.print("[dim]not implemented yet[/]")
        return
    from .harness.report import format_value, system_section

    def settings(config) -> str:
        return ", ".join(f"{k}={format_value(v, max_items=4, max_chars=60)}" for k, v in config.model_dump().items())

    line = missing_text(paper.system, missing_packages(paper.system))
    module = None
    if not line:
        try:
            module = load_experiment(paper)
        except ImportError as exc:
            line = str(exc)
    if line:  # said first; the results (if any) are still shown
        console.print(f"[yellow]cannot run here:[/] {escape(line)}", highlight=False)
    else:
        quick = module.Config.quick()
        console.print(f"[bold]quick config:[/] {escape(settings(quick))}", highlight=False)
        try:
            full = module.Config.full()
            console.print(f"[bold]full config:[/] {escape(settings(full))}", highlight=False)
        except NotImplementedError as exc:
            full = None
            console.print(f"[bold]full config:[/] [red]{escape(str(exc))}[/]")
        for scale, config in (("quick", quick), ("full", full)):
            more = missing_text(paper.system, missing_packages(paper.system, config)) if config is not None else ""
            if more:
                console.print(f"[yellow]the {scale} configuration cannot run here:[/] {escape(more)}", highlight=False)
    from .harness.report import scan_results

    section = system_section(out, paper) if out.is_dir() else None
    unreadable = scan_results(out, paper.system)[1] if out.is_dir() else []
    for path, why in unreadable:  # a damaged record is never "no results"
        err.print(f"[yellow]warning:[/] {escape(str(path))} is corrupt or unreadable: {escape(why)}",
                  highlight=False)
    if section is None:
        if unreadable:
            _fail(f"{len(unreadable)} result file{'s' if len(unreadable) > 1 else ''} of {paper.cli_name} under "
                  f"{str(out)!r} could not be read (corrupt), e.g. {str(unreadable[0][0])!r}; rerun "
                  f"`neurips26 reproduce {paper.cli_name} --out {out}` to replace it", code=1)
        console.print(f"no results under {str(out)!r} yet: "
                      f"`neurips26 reproduce {paper.cli_name} --out {out}`", highlight=False)
        return
    run = section.latest.result
    seeds = ", ".join(map(str, section.seeds))
    console.print(f"\n[bold]latest result[/] in {escape(str(out))}: {run.scale} scale, seed{'s' if len(section.seeds) > 1 else ''} "
                  f"{seeds}, {section.status}, finished {run.finished_at}, code {escape(run.code_version)}"
                  + (f" [yellow](stale: the code is now {section.latest.current_version}; rerun to refresh)[/]"
                     if section.stale else ""), highlight=False)
    shown = [_shown_claim(row) for row in section.rows]
    for line in _summary_lines(shown):
        console.print(f"  {line}", highlight=False)
    _claims_table(shown, console)
    colour = _VERDICT_COLOUR
    for row in section.rows:
        shown_verdict = row.counted if row.counted is not None else row.verdict
        if shown_verdict.value != "holds":
            console.print(f"[{colour[shown_verdict.value]}]{escape(row.claim.id)}[/]: {escape(row.reason_line())}",
                          highlight=False)
    for fr in section.failed_runs:
        last = fr.result.error.strip().splitlines()[-1] if fr.result.error.strip() else "error"
        console.print(f"[red]seed {fr.result.seed} failed:[/] {escape(last)}", highlight=False)


_VERDICT_COLOUR = {"holds": "green", "does_not_hold": "red", "inconclusive": "yellow", "not_checkable": "dim"}


def _shown_claim(row) -> dict:
    """One claim as ``show`` prints it, from a :class:`~neurips26.harness.report.ClaimRow`: the
    verdict shown is the one that counts (a tuned claim's confirmed verdict), else the exploratory
    one, marked. The summary lines and the table both read these dicts (one source)."""
    from .harness.report import format_interval, format_value

    c = row.claim
    ours = format_value(c.measured, max_items=4, max_chars=50)
    if len(row.per_seed) > 1 and all(isinstance(pc.measured, (int, float)) for _, pc in row.per_seed):
        ours = ", ".join(format_value(pc.measured, max_items=2, max_chars=16) for _, pc in row.per_seed)
    elif c.interval is not None:
        ours += f" {format_interval(c.interval)}"
    verdict = row.counted if row.counted is not None else row.verdict
    label = verdict.label if verdict.value != "not_checkable" else "not checkable"
    if row.tuned and row.confirmed_enough:
        label += " (confirmation seeds)"
    elif row.tuned:
        label += " (exploratory: tuned, not confirmed)"
    elif row.held is not None:
        label += f" ({row.held[0]}/{row.held[1]} seeds)"
    return {"id": c.id, "kind": row.kind, "verdict": verdict.value, "counted": row.counted is not None,
            "label": label, "paper": format_value(c.paper_value, max_items=3, max_chars=200), "ours": ours}


def _summary_lines(shown: list[dict]) -> list[str]:
    """Per kind, the counted verdicts of ``shown`` in words; exploratory ones on their own line."""
    from .harness.report import counts_text

    lines = []
    for counted, what in ((True, "claims"), (False, "claims, exploratory (not counted)")):
        kinds: dict[str, dict[str, int]] = {}
        for d in shown:
            if d["counted"] is counted:
                row = kinds.setdefault(d["kind"], {})
                row[d["verdict"]] = row.get(d["verdict"], 0) + 1
        order = ["paper", "reconstruction", "check"]
        for kind in sorted(kinds, key=lambda k: (order.index(k) if k in order else len(order), k)):
            lines.append(f"{kind} {what}: {counts_text(kinds[kind])}")
    return lines


def _claims_table(shown: list[dict], out: Console) -> None:
    """The claims as a table when the width allows value columns of 24 characters, else one block
    per claim (id, kind and verdict on a line, then paper and ours wrapped below): an id is never
    cut and no column shrinks to nothing, on a terminal or in a file (80 columns)."""
    import textwrap

    if not shown:
        return
    fixed = (max(len(d["id"]) for d in shown) + max(len(d["kind"]) for d in shown)
             + max(len(d["label"]) for d in shown))
    if fixed + 2 * 24 + 16 <= out.width:
        table = Table(show_lines=False)
        table.add_column("claim", no_wrap=True)
        table.add_column("kind", no_wrap=True)
        table.add_column("paper", min_width=24, overflow="fold")
        table.add_column("ours", min_width=24, overflow="fold")
        table.add_column("verdict", no_wrap=True)
        for d in shown:
            table.add_row(escape(d["id"]), d["kind"], escape(d["paper"]), escape(d["ours"]),
                          f"[{_VERDICT_COLOUR[d['verdict']]}]{escape(d['label'])}[/]")
        out.print(table)
        return
    width = max(40, out.width)
    for d in shown:
        out.print(f"[bold]{escape(d['id'])}[/] · {d['kind']} · "
                  f"[{_VERDICT_COLOUR[d['verdict']]}]{escape(d['label'])}[/]", highlight=False, soft_wrap=True)
        for name in ("paper", "ours"):
            text = textwrap.fill(d[name], width=width, initial_indent=f"    {name}: ",
                                 subsequent_indent=" " * (6 + len(name)), break_long_words=True)
            out.print(escape(text), highlight=False, soft_wrap=True)


# --- neurips26 models: registry-shipped language models (self-contained block) ---
models_app = typer.Typer(no_args_is_help=True, help="Real pretrained language models shipped in registry "
                         "packages (the [models] extra), converted once into a transformers folder; nothing is "
                         "downloaded from a hub.")
app.add_typer(models_app, name="models")


@models_app.command("list")
def _models_list() -> None:
    """The known model ids, their package, licence and where each is installed."""
    from .backends.models import list_models, models_dir

    table = Table(title=f"models (cache: {models_dir()})", title_justify="left")
    for col in ("id", "model", "package", "licence", "chat", "installed"):
        table.add_column(col, overflow="fold")
    for m in list_models():
        table.add_row(m["id"], m["name"], m["package"], m["licence"], "yes" if m["chat"] else "no (base)",
                      escape(m["installed"] or "no"))
    console.print(table)


@models_app.command("install")
def _models_install(
    model_id: Annotated[str, typer.Argument(help="A model id from `neurips26 models list`.")],
    force: Annotated[bool, typer.Option(help="Reinstall even when installed.")] = False,
) -> None:
    """Convert the model once into the models cache and check it (weights hash, one-token generation)."""
    from .backends.models import install

    try:
        path = install(model_id, force=force, log=lambda s: err.print(escape(s), highlight=False))
    except (ValueError, RuntimeError) as exc:
        _fail(" ".join(str(exc).split()))
    console.print(str(path), highlight=False)


@models_app.command("path")
def _models_path(model_id: Annotated[str, typer.Argument(help="A model id from `neurips26 models list`.")]) -> None:
    """Print the installed folder of a model (exit 2 if it is not installed)."""
    from .backends.models import resolve_model

    try:
        path = resolve_model(model_id, install_missing=False)
    except ValueError as exc:
        _fail(str(exc))
    console.print(str(path), highlight=False)
# --- end of the models block ---


def _given_value(param, argv: list[str]) -> str | None:
    """The value the command line gave an option (``--seed abc`` or ``--seed=abc``), for naming it in
    a usage error; ``None`` when ``param`` is not an option or it was not given a value."""
    for opt in getattr(param, "opts", None) or ():
        for i, tok in enumerate(argv):
            if tok == opt and i + 1 < len(argv):
                return argv[i + 1]
            if tok.startswith(opt + "="):
                return tok[len(opt) + 1:]
    return None


def main() -> None:
    """Entry point of the ``neurips26`` script.

    A usage error (an unknown option, ``--seed abc``) is one line on stderr naming the option,
    the value and what is allowed, with exit code 2, like every other refusal of the command —
    not Click's boxed panel; ``--help`` and the normal exits are Click's.
    """
    from typer.exceptions import TyperException

    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        err.print("interrupted", highlight=False)
        raise SystemExit(130) from None
    except TyperException as exc:  # Click's usage errors (typer vendors Click)
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            console.print(ctx.get_help(), highlight=False, markup=False)
            raise SystemExit(0) from None
        fmt = getattr(exc, "format_message", None)
        text = " ".join((fmt() if fmt else str(exc)).split()).rstrip(".")
        given = _given_value(getattr(exc, "param", None), sys.argv[1:])
        if given is not None and repr(given) not in text:
            text += f" (got {given!r})"
        where = f"neurips26 {ctx.info_name}: " if ctx is not None and ctx.parent is not None else ""
        err.print(f"[bold red]error:[/] {escape(where + text)}; see --help", highlight=False)
        raise SystemExit(getattr(exc, "exit_code", 2)) from None
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
