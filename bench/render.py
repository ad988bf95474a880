"""Render an HTML page the way a reader sees it: headless Chromium takes a full-page screenshot
(the page's height measured first), or dumps the DOM its scripts leave (`dump_dom`).

Why: parsing the HTML says nothing about whether the headline is on top, the plots load offline
and the tables are legible; a screenshot does. Needs the `chromium` binary (Debian package
`chromium`); `chromium_path()` is None where it is absent, so tests can skip with that reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium_path() -> str | None:
    """The first Chromium-family browser on PATH, or None."""
    return next((p for p in map(shutil.which, BROWSERS) if p), None)


def _command(browser: str, profile: str, width: int, height: int) -> list[str]:
    return [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--proxy-server=127.0.0.1:9",  # nothing from elsewhere: the page must be offline
        "--allow-file-access-from-files",
        "--virtual-time-budget=10000",  # scripts run and images load before the dump or shot
        f"--window-size={width},{height}",
    ]


def _browser() -> str:
    browser = chromium_path()
    if browser is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install -y chromium)")
    return browser


def _address(page: str | Path) -> tuple[Path, str]:
    """The file of `page` (a path, or a file: URL) and its `#fragment` ("" when none)."""
    text = str(page)
    if text.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(text)
        return Path(unquote(parts.path)), f"#{parts.fragment}" if parts.fragment else ""
    return Path(page).resolve(), ""


def dump_dom(page: str | Path, width: int = 1280, height: int = 900) -> str:
    """The page's DOM as headless Chromium leaves it after its scripts ran (network off): what
    tests of a scripted page assert on. `page` is a path, or a file: URL (with a #fragment)."""
    browser = _browser()
    path, frag = _address(page)
    with tempfile.TemporaryDirectory(prefix="ctxbench-chromium-") as profile:
        cmd = [*_command(browser, profile, width, height), "--dump-dom", path.as_uri() + frag]
        done = subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return done.stdout.decode("utf-8", "replace")


_MEASURE = (
    "<script>addEventListener('load',()=>setTimeout(()=>document.documentElement.setAttribute("
    "'data-ctxbench-height',Math.ceil(document.documentElement.scrollHeight)),0))</script>"
)


def page_height(page: str | Path, width: int = 1280) -> int:
    """The height in CSS pixels of `page` laid out `width` wide: a copy beside it (so its relative
    images resolve) with a line of script that writes `scrollHeight` into the DOM once the page's
    own scripts ran, read back from Chromium's dump; the copy is removed."""
    src, frag = _address(page)
    probe = src.with_name(f".ctxbench-measure-{os.getpid()}-{src.name}")
    try:
        probe.write_text(src.read_text(encoding="utf-8") + _MEASURE, encoding="utf-8")
        dom = dump_dom(probe.as_uri() + frag, width, 900)
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r'data-ctxbench-height="(\d+)"', dom)
    if m is None:
        raise RuntimeError(f"chromium could not measure {page}")
    return int(m.group(1))


MAX_HEIGHT = 16384  # Chromium's largest screenshot side


def screenshot(page: str | Path, png: str | Path, width: int = 1280, height: int | None = None) -> Path:
    """Write a PNG of `page` as headless Chromium renders it `width` wide, with the network off (a
    page that needs anything from elsewhere shows it missing): the full page (its measured height,
    `page_height`) unless `height` is given (issue 31 #6: the report was cut at 2,400 px)."""
    browser = _browser()
    full = min(MAX_HEIGHT, height or page_height(page, width))
    out = Path(png).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    path, frag = _address(page)
    with tempfile.TemporaryDirectory(prefix="ctxbench-chromium-") as profile:
        cmd = [*_command(browser, profile, width, full), f"--screenshot={out}", path.as_uri() + frag]
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
