"""Screenshot the top of a results folder's ``report.html`` in headless Chromium.

Usage::

    .venv/bin/neurips26 reproduce mdp-types flood-bifiltration --out /tmp/rep_results
    .venv/bin/python scripts/report_screenshot.py /tmp/rep_results docs/report-top.png

The report is rebuilt from the results first (as ``neurips26 report`` does), then opened at
1280×800 CSS pixels and the visible top of the page is saved as PNG. ``--dark`` renders with
``prefers-color-scheme: dark``; ``--full`` saves the whole page instead of its top.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install chromium
chromium-driver``) and ``selenium`` (the ``test`` extra). The browser test of the report
(``tests/harness/test_report_browser.py``) drives the browser with the same functions.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

WIDTH, HEIGHT = 1280, 800


def find_chromium() -> tuple[str, str] | None:
    """Paths of the Chromium binary and its driver, or ``None`` if either is missing."""
    browser = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser")) if p), None)
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
    return (browser, driver) if browser and driver else None


def open_browser(width: int = WIDTH, height: int = HEIGHT, dark: bool = False):
    """A headless Chromium (selenium WebDriver) with a ``width``×``height`` CSS-pixel viewport.

    Raises:
        RuntimeError: if Chromium or chromedriver is not installed.
    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    found = find_chromium()
    if found is None:
        raise RuntimeError("chromium and chromium-driver are not installed "
                           "(apt-get install -y chromium chromium-driver)")
    browser, driver_path = found
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(options=opts, service=Service(driver_path))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
        {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    return driver


def screenshot(driver, png: Path, full: bool = False) -> Path:
    """Save the visible viewport (or, with ``full``, the whole page) of ``driver`` as ``png``."""
    import base64

    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    if full:
        data = driver.execute_cdp_cmd("Page.captureScreenshot", {"captureBeyondViewport": True, "clip": {
            "x": 0, "y": 0, "scale": 1, "width": WIDTH,
            "height": driver.execute_script("return document.documentElement.scrollHeight")}})
        png.write_bytes(base64.b64decode(data["data"]))
    else:
        driver.save_screenshot(str(png))
    return png


def main() -> None:
    """Command line: rebuild the report of RESULTS and save a screenshot of its top as PNG."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="results folder (holds <system>/<run>/result.json)")
    ap.add_argument("png", type=Path, help="where to save the screenshot")
    ap.add_argument("--dark", action="store_true", help="prefers-color-scheme: dark")
    ap.add_argument("--full", action="store_true", help="the whole page, not just its top")
    args = ap.parse_args()
    from neurips26.harness.report import write_report

    html = write_report(args.results)
    driver = open_browser(dark=args.dark)
    try:
        driver.get(html.resolve().as_uri())
        print(screenshot(driver, args.png, full=args.full))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
