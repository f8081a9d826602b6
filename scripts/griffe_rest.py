"""A griffe extension for the API pages: the reST the docstrings use, rendered as Markdown.

The docstrings are Google style, but some write reST: ``Example::`` followed by an indented code
block, ``:math:`...```, ``:mod:`...``` / ``:func:`...``` / ``:class:`...``` / ``:meth:`...```
roles. mkdocstrings shows those literally (a page would show ``Example::``). This extension
rewrites each docstring as the site loads it (the source is unchanged): a literal block becomes a
fenced ``python`` block under a bold title, a ``.. math::`` block becomes display math ``$$ … $$``
and ``:math:`x``` becomes ``$x$`` (both rendered by KaTeX, :mod:`pymdownx.arithmatex`).
Cross-reference roles stay as written.

Loaded by ``mkdocs.yml`` (``extensions: [scripts/griffe_rest.py]``).
``tests/docs/test_api_examples.py`` runs the code blocks found by :func:`literal_blocks`.
"""

from __future__ import annotations

import re

import griffe

_LITERAL = re.compile(r"(?m)^(?P<indent>[ \t]*)(?P<title>[A-Z][^\n]*?)::[ \t]*\n(?P<body>(?:[ \t]*\n|(?P=indent)[ \t]+\S.*\n?)+)")
_MATH = re.compile(r":math:`([^`]+)`")
_MATH_BLOCK = re.compile(r"(?m)^(?P<indent>[ \t]*)\.\. math::[ \t]*\n(?P<body>(?:[ \t]*\n|(?P=indent)[ \t]+\S.*\n?)+)")


def literal_blocks(doc: str) -> list[tuple[str, str]]:
    """``(title, code)`` of each reST literal block introduced by ``Title::`` in ``doc``; the
    code dedented. Example: ``"Example::\\n\\n    x = 1\\n"`` gives ``[("Example", "x = 1\\n")]``."""
    out = []
    for m in _LITERAL.finditer(doc if doc.endswith("\n") else doc + "\n"):
        lines = m.group("body").split("\n")
        width = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
        out.append((m.group("title"), "\n".join(ln[width:] for ln in lines).strip("\n") + "\n"))
    return out


def rest_to_markdown(doc: str) -> str:
    """``doc`` with literal blocks as fenced code, ``.. math::`` blocks as ``$$ … $$`` and
    ``:math:`` as ``$…$``."""
    def math_block(m: re.Match) -> str:
        ind = m.group("indent")
        lines = [ln for ln in m.group("body").split("\n") if ln.strip()]
        width = min(len(ln) - len(ln.lstrip()) for ln in lines)
        body = "\n".join(ind + ln[width:] for ln in lines)
        return f"{ind}$$\n{body}\n{ind}$$\n\n"

    def block(m: re.Match) -> str:
        ((title, code),) = literal_blocks(m.group(0))
        ind = m.group("indent")
        fenced = "\n".join(ind + ln if ln else ln for ln in code.rstrip("\n").split("\n"))
        return f"{ind}**{title}**\n\n{ind}```python\n{fenced}\n{ind}```\n\n"

    doc = _MATH_BLOCK.sub(math_block, doc if doc.endswith("\n") else doc + "\n")
    doc = _LITERAL.sub(block, doc)
    # cross-reference roles (:func:`x`) stay as written: a Raises section parses "Name: text"
    # and reads a role's colon as that separator, so rewriting them would change the parse
    return _MATH.sub(lambda m: f"${m.group(1)}$", doc).rstrip("\n")


class RestToMarkdown(griffe.Extension):
    """Rewrite every loaded object's docstring with :func:`rest_to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:  # noqa: D102 - griffe hook
        if obj.docstring is not None and obj.docstring.value:
            obj.docstring.value = rest_to_markdown(obj.docstring.value)
