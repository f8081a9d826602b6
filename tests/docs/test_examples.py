"""Every fenced Python and bash block of README.md and docs/ runs, and its shown output matches.

Catches examples that rot: a renamed function, a missing import, a config key that does not
exist, a CLI call that crashes, a doctest whose printed value changed. The rules for marking a
block not runnable (with its reason) or slow are in ``tests/docs/_examples.py``.
"""

from __future__ import annotations

import pytest
import torch
from threadpoolctl import threadpool_limits

from ._examples import NOT_CODE, ROOT, RUNNABLE, SYBIL, TALLY, cpu_seconds, fence_languages, pages, scratch_folder

PAGES = pages()


def _params():
    out = []
    for p in PAGES:
        rel = p.relative_to(ROOT).as_posix()
        out.append(pytest.param(p, False, id=rel))
        if "<!-- docs-test: slow" in p.read_text():
            out.append(pytest.param(p, True, id=rel + "[slow]", marks=pytest.mark.slow))
    return out


@pytest.mark.parametrize(("page", "slow"), _params())
def test_page_examples(page, slow, tmp_path, monkeypatch):
    """Runs the page's blocks in order in one namespace; slow blocks only in the slow variant."""
    cwd = scratch_folder(tmp_path)
    monkeypatch.chdir(cwd)
    document = SYBIL.parse(page)
    document.namespace["__docs_cwd__"] = cwd
    document.namespace["__docs_slow__"] = slow
    t0 = cpu_seconds()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: on a shared 2-core machine a second BLAS/torch thread spin-waits
    try:
        with threadpool_limits(1):
            for example in document:
                example.evaluate()
    finally:
        torch.set_num_threads(threads)
        TALLY.cpu_s[page.relative_to(ROOT).as_posix() + (" [slow]" if slow else "")] = cpu_seconds() - t0


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_block_has_a_known_language(page):
    """A block in an unknown language (``py``, ``sh``, none) would silently escape the run above."""
    bad = [(line, info) for line, info in fence_languages(page.read_text())
           if info.split(" ")[0] not in RUNNABLE + NOT_CODE]
    assert not bad, (f"{page.relative_to(ROOT)}: fenced blocks at lines {bad} must be one of "
                     f"{RUNNABLE} (run) or {NOT_CODE} (shown only)")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_python_example_shows_its_output(page):
    """A Python example prints what it computes or is a doctest: an expression whose value sits
    only in a comment (``low.V[0]   # about 0.4``) shows the reader nothing when run, and its
    comment is never checked."""
    import re

    silent = []
    text = page.read_text()
    for m in re.finditer(r"(?ms)^```python\n(.*?)^```", text):
        block = m.group(1)
        if "print(" not in block and not block.lstrip().startswith(">>>"):
            silent.append(text.count("\n", 0, m.start()) + 1)
    assert not silent, (f"{page.relative_to(ROOT)}: python blocks at lines {silent} print nothing; "
                        "print the result (or write a doctest)")
