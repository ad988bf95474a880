"""Render an HTML report the way a reader sees it: headless Chromium takes a full-page screenshot.

Why: parsing the HTML says nothing about whether the headline is on top, the plots load offline
and the tables are legible; a screenshot does. Needs the `chromium` binary (Debian package
`chromium`); `chromium_path()` is None where it is absent, so tests can skip with that reason.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium_path() -> str | None:
    """The first Chromium-family browser on PATH, or None."""
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


def screenshot(page: str | Path, png: str | Path, width: int = 1280, height: int = 2400) -> Path:
    """Write a `width` x `height` PNG of `page` as headless Chromium renders it, with the network
    off (a page that needs anything from elsewhere shows it missing)."""
    browser = chromium_path()
    if browser is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install -y chromium)")
    out = Path(png).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ctxbench-chromium-") as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--proxy-server=127.0.0.1:9",  # nothing from elsewhere: the report must be offline
            f"--window-size={width},{height}",
            f"--screenshot={out}",
            Path(page).resolve().as_uri(),
        ]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot for {page}")
    return out


if __name__ == "__main__":  # python -m ctxbench.bench.render REPORT.html OUT.png
    import sys

    if len(sys.argv) != 3:
        sys.exit("usage: python -m ctxbench.bench.render REPORT.html OUT.png")
    print(screenshot(sys.argv[1], sys.argv[2]))
