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


def main(argv: list[str]) -> int:
    """`python -m ctxbench.bench.render REPORT.html OUT.png`: 0 with the PNG's path printed; 2 with
    one line when the page is missing or no browser is installed (no traceback)."""
    import sys

    if len(argv) != 2:
        print("usage: python -m ctxbench.bench.render REPORT.html OUT.png", file=sys.stderr)
        return 2
    if not Path(argv[0]).is_file():
        print(f"render: error: {argv[0]}: no such page", file=sys.stderr)
        return 2
    try:
        print(screenshot(argv[0], argv[1]))
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        print(f"render: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
