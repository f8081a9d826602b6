"""Every code example on the API reference pages runs.

The API pages render each package's docstring and the docstrings of its public names
(``::: neurips26.<package>`` with ``members: __all__``: functions, classes and their public
methods); an ``Example::`` (any ``Title::``) block there is shown as code by
``scripts/griffe_rest.py``. This test runs each such block in a fresh namespace, in a scratch
folder, on one thread. Every example prints what it computes (no value left in a comment).

Catches: an example that uses a name it never defines (``NameError``: ``behaviour``, ``pi_eval``
in the mdp-types example, ``model`` in bit-mask-tuning's, ``X`` in flood-bifiltration's), a
renamed function or attribute (``mdp.R`` for ``mdp.r``), an example in a function's or a
class's docstring (``FeatureRecorder``, ``capture_layer_signals``) that the package-level check
alone never ran, an example that computes without printing, and a reST literal block the
converter would miss (the page would show ``Example::`` again).

Examples that cannot run here would be listed in ``KNOWN`` with the reason, each expected to fail
(strict xfail), so a fixed example makes the test fail until it is removed from the list, and a
newly broken one fails at once. The list is empty: every example builds what it uses.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
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

#: example id -> why it cannot run here (the docstring lives in the system's code; fix it there,
#: then remove the entry)
KNOWN: dict[str, str] = {}


def documented(package: str) -> list[tuple[str, str]]:
    """``(qualified name, docstring)`` of everything ``neurips26.<package>``'s API page shows: the
    package, each name of its ``__all__``, and each public method or property of those classes."""
    mod = importlib.import_module(f"neurips26.{package}")
    out = [(package, mod.__doc__ or "")]
    for name in API.public_names(package):
        obj = getattr(mod, name)
        if inspect.ismodule(obj):
            continue  # a submodule listed in __all__: the page links it, shows no docstring of it
        out.append((f"{package}.{name}", inspect.getdoc(obj) or ""))
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                doc = getattr(member, "__doc__", None) if isinstance(member, (property, staticmethod, classmethod)) \
                    else (member.__doc__ if inspect.isfunction(member) else None)
                if doc:
                    out.append((f"{package}.{name}.{attr}", inspect.cleandoc(doc)))
    return out


def _cases():
    out = []
    for package in API.packages():
        for where, doc in documented(package):
            for i, (_title, code) in enumerate(griffe_rest.literal_blocks(doc)):
                case = f"{where}[{i}]"
                marks = [pytest.mark.xfail(reason=KNOWN[case], strict=True)] if case in KNOWN else []
                out.append(pytest.param(where, code, id=case, marks=marks))
    return out


@pytest.mark.parametrize(("where", "code"), _cases())
def test_api_docstring_example_runs(where, code, tmp_path, monkeypatch, capsys):
    """Run one docstring example in a fresh namespace, in a scratch folder, one thread; it prints."""
    monkeypatch.chdir(tmp_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            exec(compile(code, f"<neurips26.{where} docstring example>", "exec"), {"__name__": "__example__"})
    finally:
        torch.set_num_threads(threads)
    assert capsys.readouterr().out.strip(), f"neurips26.{where}: the example prints nothing (show its result)"


def test_known_failures_name_existing_examples():
    """The known-failure list names only examples that exist (a stale entry would hide nothing),
    and the collection finds examples beyond the package docstrings (member docstrings too)."""
    ids = {c.id for c in _cases()}
    assert any("." in i.split("[")[0] for i in ids), "no example found in a member docstring"
    assert set(KNOWN) <= ids, sorted(set(KNOWN) - ids)


def test_converter_leaves_no_literal_example_marker():
    """After conversion no package docstring shown on an API page keeps a reST ``Title::`` line."""
    left = []
    for package in API.packages():
        for where, doc in documented(package):
            md = griffe_rest.rest_to_markdown(doc)
            left += [f"{where}: {ln.strip()}" for ln in md.splitlines() if ln.rstrip().endswith("::")]
    assert not left, left
