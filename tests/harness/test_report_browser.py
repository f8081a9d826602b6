"""report.html in a real browser (headless Chromium at 1280×800): no horizontal scrolling, every
figure decoded, the claims-needing-attention links resolve, light/dark/print legible.

The report comes from a real run of the runner over small stand-in systems (registered under
catalogue names) that produce every verdict, kind, a multi-seed group, a failed run, long
unbroken text and wide figures; one result file is damaged on purpose.

A screenshot of the report's top is kept as a test artefact in ``$NEURIPS26_ARTEFACTS``
(default ``build/test-artefacts/``). ``docs/report-top.png`` (shown in the README) is made from
real results with ``scripts/report_screenshot.py``, which this test also uses to drive the browser.
"""

from __future__ import annotations

import importlib.util
import os
import types
from pathlib import Path

import pytest

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig
from neurips26.harness.report import write_report
from neurips26.harness.runner import SystemSpec, reproduce

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("report_screenshot", ROOT / "scripts" / "report_screenshot.py")
shot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shot)  # type: ignore[union-attr]

pytestmark = pytest.mark.skipif(
    shot.find_chromium() is None,
    reason="Chromium and chromedriver are not installed (apt-get install -y chromium chromium-driver; "
           ".ci/run installs them)")
ARTEFACTS = Path(os.environ.get("NEURIPS26_ARTEFACTS", ROOT / "build" / "test-artefacts"))


class Cfg(ExperimentConfig):
    n: int = 3


def _module(run) -> types.ModuleType:
    mod = types.ModuleType("stand_in_experiment")
    mod.Config, mod.run = Cfg, run
    return mod


def _figure(ctx, name: str, caption: str, wide: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3 if wide else 1, figsize=(14 if wide else 5, 3.5), constrained_layout=True)
    for i, ax in enumerate(axes if wide else [axes]):
        ax.plot(ctx.rng.normal(size=50).cumsum(), label=f"method {i}")
        ax.legend(loc="upper left")
    ctx.save_figure(name, fig, caption=caption)


def _all_kinds(config, ctx) -> Outcome:
    _figure(ctx, "key", "The key figure: the curve should bend down past step 20, as the paper predicts.", True)
    _figure(ctx, "second", "", False)
    long_word = "without_any_space_" * 12
    claims = [
        C.close("exponent", "The loss decays with exponent 0.5.", measured=0.52, target=0.5, abs_tol=0.1,
                reason="±0.1: finite-size bias measured 0.05 at small N", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.at_least("accuracy", "Accuracy reaches 0.9 on the benchmark " + long_word, measured=0.7,
                   bound=0.9, reason="the paper's number", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.at_least("gain", "The gain over the baseline is positive.", measured=0.01, bound=0.0,
                   interval=(-0.02, 0.04), reason="sign of the mean gain over 5 replicates",
                   kind="paper", source="first page", object="toy", falsifiable_by="t"),
        C.not_checkable("scale", "It runs on 10^9 points.", paper_value="10^9 points",
                        reason="a 10^9-point cloud needs hours of CPU", full_scale="runs 10^9 points",
                        kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.check("rule", "Our inferred step rule keeps the chain stable.", measured={"max_step": 0.31,
                "bound": 0.3, "per_level": [0.1 * i for i in range(40)], long_word: 1},
                holds=False, tolerance="max_step <= bound", reason="inferred rule",
                kind="reconstruction", source="inferred: the step rule from the stability bound"),
        C.check("invariant", "Grades are monotone.", measured=0, holds=True, tolerance="0 violations",
                reason="exact combinatorial property", kind="check", source="inferred: invariant"),
    ]
    return Outcome(metrics={"matrix": [[float(i * j) for j in range(60)] for i in range(20)]},
                   claims=claims, notes="Stand-in system for the browser test. " + long_word)


def _seeded(config, ctx) -> Outcome:
    _figure(ctx, "curve", "Per-seed curve.", False)
    gain = float(ctx.rng.normal(0.02, 0.05))
    return Outcome(claims=[
        C.at_least("gain", "The gain is positive.", measured=gain, bound=0.0, reason="sign",
                   kind="paper", source="abstract", object="toy", falsifiable_by="t"),
        C.check("inv", "An invariant holds.", measured=0, holds=True, tolerance="0", reason="exact",
                kind="check", source="inferred: invariant")])


def _failing(config, ctx) -> Outcome:
    raise RuntimeError("stand-in failure for the browser test")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    reproduce([SystemSpec("flood_bifiltration", _module(_all_kinds), {}),
               SystemSpec("lr_schedules", _module(_failing), {})], out=out, device="cpu")
    reproduce([SystemSpec("mdp_types", _module(_seeded), {})], out=out, seeds=[0, 1, 2], device="cpu")
    damaged = out / "lanczos_ddpm" / "quick-seed0-0000000000" / "result.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"system": "lanczos_ddpm", "status": "ok", "sc')
    return write_report(out)


@pytest.fixture(scope="module")
def browser():
    driver = shot.open_browser(shot.WIDTH, shot.HEIGHT)
    yield driver
    driver.quit()


def _media(driver, *, dark: bool = False, media: str = "") -> None:
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media, "features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})


def _rgb(css: str) -> tuple[float, ...]:
    return tuple(float(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def _contrast(fg: str, bg: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""
    def lum(rgb):
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    a, b = sorted((lum(_rgb(fg)), lum(_rgb(bg))), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _no_horizontal_overflow(driver) -> None:
    sw, cw = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert cw == shot.WIDTH and sw <= cw, f"page is {sw} px wide in a {cw} px viewport"


def test_report_in_chromium(report, browser):
    browser.get(report.as_uri())
    _media(browser)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    shot.screenshot(browser, ARTEFACTS / "report-top.png")

    _no_horizontal_overflow(browser)
    imgs = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.getBoundingClientRect().right])")
    # two figures of one system, one of the three-seed system (figures of its latest seed only)
    assert len(imgs) == 3 and all(ok and w > 0 for ok, w, _ in imgs), imgs
    assert all(right <= shot.WIDTH for _, _, right in imgs)

    # the failing-claims list: present, every link resolves to an element on the page
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.attention a')).map(a => a.getAttribute('href'))")
    assert len(links) >= 4, links
    missing = browser.execute_script(
        "return arguments[0].filter(h => !document.getElementById(h.slice(1)))", links)
    assert missing == []
    text = browser.find_element("id", "attention").text
    assert "Claims that do not hold" in text
    problems = browser.find_element("id", "problems").find_element("xpath", "..").text
    assert "Unreadable results" in problems and "Runs that failed" in problems
    assert "seeds-summary" not in problems  # the runner's seeds summary is not a result file
    assert "held on" in browser.find_element("id", "sys-mdp_types").text

    # the filter hides claims that hold and nothing else
    holds = "document.querySelectorAll('tr.claim.v-row-holds')"
    assert browser.execute_script(f"return Array.from({holds}).every(r => r.offsetParent !== null)")
    browser.find_element("id", "only-attention").click()
    assert browser.execute_script(f"return Array.from({holds}).every(r => r.offsetParent === null)")
    assert browser.execute_script(
        "return Array.from(document.querySelectorAll('tr.claim:not(.v-row-holds)')).every(r => r.offsetParent !== null)")
    browser.find_element("id", "only-attention").click()

    # legible in light and dark: body text and every verdict badge (WCAG AA, 4.5:1)
    for dark in (False, True):
        _media(browser, dark=dark)
        _no_horizontal_overflow(browser)
        body = browser.execute_script(
            "const s = getComputedStyle(document.body); return [s.color, s.backgroundColor]")
        assert _contrast(*body) >= 7, (dark, body)
        badges = browser.execute_script(
            "return Array.from(document.querySelectorAll('.badge')).map(b => {const s = getComputedStyle(b);"
            " return [b.className, s.color, s.backgroundColor]})")
        assert badges
        for cls, fg, bg in badges:
            assert _contrast(fg, bg) >= 4.5, (dark, cls, fg, bg)
        if dark:
            assert _rgb(body[1])[0] < 60  # the dark scheme is really dark
            shot.screenshot(browser, ARTEFACTS / "report-top-dark.png")

    # printable: no horizontal overflow with print styles either, and dark text on white paper
    # even when the reader's browser prefers a dark scheme
    for dark in (False, True):
        _media(browser, dark=dark, media="print")
        _no_horizontal_overflow(browser)
        assert browser.execute_script("return getComputedStyle(document.querySelector('.controls')).display") == "none"
        color = browser.execute_script("return getComputedStyle(document.body).color")
        assert _contrast(color, "rgb(255, 255, 255)") >= 7, (dark, color)
    _media(browser)
