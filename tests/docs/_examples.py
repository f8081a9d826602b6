"""Collects and runs the fenced code blocks of README.md and docs/**/*.md (with Sybil).

Every ```` ```python ```` block runs in one namespace per page, in page order (a block may use
names from the blocks above it); a block starting with ``>>>`` is a doctest, so its printed output
is checked. Every ```` ```bash ```` block runs with ``bash -euo pipefail`` in the page's scratch
folder, where ``.venv`` links to the running interpreter's environment (so ``.venv/bin/neurips26``
works as written, and results land in the scratch folder, not in the repository).

An HTML comment right before a block changes how it is run:

* ``<!-- docs-test: not-runnable REASON -->`` — the block is not run; REASON is counted and
  printed in the summary (e.g. "needs a local Qwen3-8B checkpoint").
* ``<!-- docs-test: slow -->`` — the block runs only under ``pytest -m slow``; it must not define
  names that later blocks need.

``<!-- invisible-code-block: python ... -->`` (Sybil's own directive) runs set-up code the reader
does not see (counted apart). Any other fence language must be one of :data:`NOT_CODE`; a block
in another language (``py``, ``sh``, no language) fails the check, so no example escapes the run.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer

ROOT = Path(__file__).resolve().parents[2]
NOT_CODE = ("text", "console-output", "yaml", "toml", "json", "csv")  # shown, never run
RUNNABLE = ("python", "bash")
SHELL_TIMEOUT_S = 600


def pages() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass
class Tally:
    """What happened to the blocks of the pages run in this session (printed by conftest)."""

    run: int = 0
    setup: int = 0
    slow_skipped: int = 0
    not_runnable: collections.Counter = field(default_factory=collections.Counter)
    cpu_s: dict = field(default_factory=dict)  # page -> CPU seconds (this process + its children)


TALLY = Tally()


class Directive:
    """Evaluator of a ``docs-test`` comment: it labels the next code block of the page."""

    def __call__(self, example: Example) -> None:
        kind, _, reason = example.parsed.strip().partition(" ")
        if kind not in ("not-runnable", "slow"):
            raise ValueError(f"{example.path}:{example.line}: unknown docs-test directive {kind!r}; "
                             "allowed: not-runnable REASON, slow")
        if kind == "not-runnable" and not reason.strip():
            raise ValueError(f"{example.path}:{example.line}: docs-test: not-runnable needs a reason")
        example.namespace["__docs_next__"] = (kind, reason.strip())


def directive_parser(document: Document):
    """Yield a region for each ``<!-- docs-test: ... -->`` comment."""
    for lexed in DirectiveInHTMLCommentLexer("docs-test")(document):
        yield Region(lexed.start, lexed.end, lexed.lexemes["arguments"], Directive())


def _gate(example: Example) -> bool:
    """Apply a pending directive to this block; True when the block should run."""
    kind, reason = example.namespace.pop("__docs_next__", (None, ""))
    if kind == "not-runnable":
        TALLY.not_runnable[reason] += 1
        return False
    if kind == "slow" and not example.namespace.get("__docs_slow__", False):
        TALLY.slow_skipped += 1
        return False
    if example.document.text[example.start:example.start + 4] == "<!--":
        TALLY.setup += 1
    else:
        TALLY.run += 1
    return True


class GatedPython(PythonCodeBlockParser):
    """Sybil's Python parser (code blocks and doctests) behind the ``docs-test`` gate."""

    def __call__(self, document: Document):
        for block in self.codeblock_parser(document):
            source = block.parsed
            if source.startswith(">>>"):
                regions = list(self.doctest_parser(source, document.path))
                for r in regions:
                    r.adjust(block, source)
            else:
                regions = [block]
            for i, region in enumerate(regions):
                region.evaluator = _gated(region.evaluator, block.start, first=i == 0)
                yield region


def _gated(inner, block: int, first: bool):
    """Wrap an evaluator: the block's first region asks the gate; the others follow its answer."""

    def evaluate(example: Example):
        __tracebackhide__ = True
        skipped = example.namespace.setdefault("__docs_skip_blocks__", set())
        if first and not _gate(example):
            skipped.add(block)
        if block in skipped:
            return None
        return inner(example)

    return evaluate


def run_bash(example: Example) -> None:
    """Run one bash block in the page's scratch folder; a non-zero exit fails with its output."""
    __tracebackhide__ = True
    if not _gate(example):
        return
    cwd = example.namespace["__docs_cwd__"]
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", example.parsed], cwd=cwd, capture_output=True,
                          text=True, timeout=SHELL_TIMEOUT_S, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120", "OMP_NUM_THREADS": "1",
                               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    if proc.returncode != 0:
        raise AssertionError(f"{example.path}:{example.line}: bash block exited {proc.returncode}\n"
                             f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")


SYBIL = Sybil(parsers=[directive_parser, GatedPython(), CodeBlockParser("bash", run_bash)])

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>[^\n`]*)$", re.MULTILINE)


def fence_languages(text: str) -> list[tuple[int, str]]:
    """(line, info string) of every opening fence of a Markdown text."""
    out, open_fence = [], None
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if open_fence is None:
            open_fence = m.group("fence")
            out.append((line, m.group("info").strip()))
        elif m.group("fence").startswith(open_fence) and not m.group("info").strip():
            open_fence = None
    return out


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (bash blocks), in s."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def scratch_folder(tmp: Path) -> Path:
    """A folder where ``.venv`` points at the running environment (for ``.venv/bin/...`` commands)."""
    venv = Path(sys.prefix)
    (tmp / ".venv").symlink_to(venv, target_is_directory=True)
    return tmp
