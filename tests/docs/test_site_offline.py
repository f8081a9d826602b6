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


def test_long_code_lines_wrap():
    """Code blocks wrap long lines instead of cutting them off on the right: the site's own style
    sheet (listed in ``mkdocs.yml``, loaded after the theme's) sets ``pre-wrap`` and lets a long
    token break. Catches the style sheet dropped from ``extra_css`` or its rule removed."""
    cfg = _config()
    assert "assets/stylesheets/extra.css" in cfg.get("extra_css", [])
    css = (ROOT / "docs" / "assets" / "stylesheets" / "extra.css").read_text()
    rule = re.search(r"\.md-typeset pre > code\s*\{([^}]*)\}", css)
    assert rule and "white-space: pre-wrap" in rule.group(1) and "overflow-wrap: anywhere" in rule.group(1), rule


# operators that only a formula uses: such text outside $…$ is a formula shown as plain text
FORMULA = re.compile(r"[Σ∂√‖∝∇∑∏∫⊙ᵀ²³ᾱ]")


def test_formulas_on_hand_written_pages_are_math():
    """On the system pages, the guides and the home page, formula symbols appear only inside
    ``$…$`` / ``$$…$$`` (rendered by KaTeX), in code blocks, or in the generated Results and
    Benchmark sections. Catches a formula typed as plain text or as inline code, e.g.
    ``Σ*_t = β̃_t I + c0²·((1−ᾱ_t)/√ᾱ_t)·∂E[x0|x_t]/∂x_t``, which the site shows unrendered."""
    pages = sorted((ROOT / "docs" / "systems").glob("*.md")) + sorted((ROOT / "docs" / "guide").glob("*.md")) \
        + [ROOT / "docs" / "index.md"]
    bad = []
    for page in pages:
        text = re.sub(r"(?ms)^```.*?^```", "", page.read_text())
        text = re.sub(r"(?ms)^## (?:Results|Benchmark)$.*?(?=^## |\Z)", "", text)
        text = re.sub(r"(?s)\$\$.*?\$\$|\$[^$\n]+\$", "", text)
        bad += [f"{page.relative_to(ROOT)}: {ln.strip()[:100]}" for ln in text.splitlines() if FORMULA.search(ln)]
    assert not bad, bad
