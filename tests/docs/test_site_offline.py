"""The docs site renders math and works offline.

Catches: a CDN URL (KaTeX, MathJax, Google Fonts) slipping into ``mkdocs.yml``, so the built site
shows raw ``\\(…\\)`` without a network; a script or style sheet listed in ``mkdocs.yml`` that is
missing from ``docs/`` (mkdocs does not check ``extra_javascript``); arithmatex switched off.
"""

from __future__ import annotations

import re

import yaml

from ._examples import ROOT


def _config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !!python/name tags; none are used here, but do not fail on unknown tags
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def test_math_and_assets_are_served_by_the_site():
    cfg = _config()
    text = (ROOT / "mkdocs.yml").read_text()
    assert not re.search(r"https?://", "\n".join(cfg.get("extra_javascript", []) + cfg.get("extra_css", [])))
    assert cfg["theme"].get("font") is False, "theme.font must be false (Google Fonts need the network)"
    assert "pymdownx.arithmatex" in text
    for asset in cfg.get("extra_javascript", []) + cfg.get("extra_css", []):
        assert (ROOT / "docs" / asset).is_file(), f"mkdocs.yml lists {asset}, missing under docs/"
    css = (ROOT / "docs" / "assets" / "katex" / "katex.min.css").read_text()
    for font in re.findall(r"url\((fonts/[^)]+)\)", css):
        assert (ROOT / "docs" / "assets" / "katex" / font).is_file(), f"KaTeX font {font} missing"
