"""Every code example on the API reference pages runs.

The API pages render each package's docstring (``::: neurips26.<package>``); an ``Example::``
block there is shown as code by ``scripts/griffe_rest.py``. This test runs each such block of
every package docstring in a fresh namespace.

Catches: an example that uses a name it never defines (``NameError``: ``behaviour``, ``pi_eval``
in the mdp-types example), a renamed function, a reST literal block the converter would miss
(the page would show ``Example::`` again).

Examples that cannot run here are listed in ``KNOWN`` with the reason: each is expected to fail
(strict xfail), so a fixed example makes the test fail until it is removed from the list, and a
newly broken one fails at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import pytest
import torch
from threadpoolctl import threadpool_limits

from ._examples import ROOT

_spec = importlib.util.spec_from_file_location("griffe_rest", ROOT / "scripts" / "griffe_rest.py")
griffe_rest = importlib.util.module_from_spec(_spec)
sys.modules["griffe_rest"] = griffe_rest
_spec.loader.exec_module(griffe_rest)
_api = importlib.util.spec_from_file_location("docs_api_pages", ROOT / "scripts" / "docs_api_pages.py")
API = importlib.util.module_from_spec(_api)
_api.loader.exec_module(API)

#: package -> why its docstring example cannot run here (the docstring lives in the system's code;
#: fix it there, then remove the entry)
KNOWN: dict[str, str] = {
    "bit_mask_tuning": "NameError: uses `model` without building one",
    "counting_readout": "needs a local checkpoint at /path/to/Qwen3-8B (the example says so; nothing is downloaded)",
    "feature_learning": "NameError: uses `model` without building one",
    "flood_bifiltration": "NameError: uses `X` without defining it",
    "lanczos_ddpm": "NameError: uses `model` without building one",
    "mdp_types": "NameError: uses `behaviour` and `pi_eval` without defining them",
    "backends": "NameError: uses `backend` without building one",
}


def _cases():
    out = []
    for package in API.packages():
        doc = importlib.import_module(f"neurips26.{package}").__doc__ or ""
        for i, (_title, code) in enumerate(griffe_rest.literal_blocks(doc)):
            marks = [pytest.mark.xfail(reason=KNOWN[package], strict=True)] if package in KNOWN else []
            out.append(pytest.param(package, code, id=f"{package}[{i}]", marks=marks))
    return out


@pytest.mark.parametrize(("package", "code"), _cases())
def test_api_docstring_example_runs(package, code, tmp_path, monkeypatch):
    """Run one docstring example in a fresh namespace, in a scratch folder, one thread."""
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            exec(compile(code, f"<neurips26.{package} docstring example>", "exec"), {"__name__": "__example__"})
    finally:
        torch.set_num_threads(threads)


def test_converter_leaves_no_literal_example_marker():
    """After conversion no package docstring shown on an API page keeps a reST ``Title::`` line."""
    left = []
    for package in API.packages():
        doc = importlib.import_module(f"neurips26.{package}").__doc__ or ""
        md = griffe_rest.rest_to_markdown(doc)
        left += [f"{package}: {ln.strip()}" for ln in md.splitlines() if ln.rstrip().endswith("::")]
    assert not left, left
