"""`ctxbench view` (bench/view/): the data it embeds is the run's (every request's prompt rebuilt
from its deltas adds up to the request's true size), a 5,000-request session stays a few MB, and
the page renders in headless Chromium offline: its script draws, lists the events and, for the
request named in the address, the request's blocks."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import matplotlib.image as mpimg
import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.render import chromium_path, dump_dom, page_height, screenshot
from tests.real import REAL, needs_real

ROOT = Path(__file__).resolve().parents[2]
GAME = str(ROOT / "traces" / "samples" / "game-300.jsonl")
CC_LOG = REAL / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"  # 144 requests, 1 compaction
SHOTS = Path("/work/tools")  # where the closing note's screenshots go, when that folder exists
needs_chromium = pytest.mark.skipif(
    chromium_path() is None, reason="no chromium on PATH (Debian: apt-get install -y chromium)"
)


def page_json(page: Path) -> dict:
    m = re.search(r"<script id='data' type='application/json'>(.*?)</script>", page.read_text(), re.S)
    assert m is not None
    return json.loads(m.group(1).replace("<\\/", "</"))


def prompt(run: dict, i: int) -> list[int]:
    """Request i's block ids from the deltas, as view.js rebuilds them."""
    pr, chain = run["prompt"], []
    j = i
    while j >= 0:
        chain.append(j)
        j = pr["base"][j]
    ids: list[int] = []
    for j in reversed(chain):
        ids = ids[: pr["keep"][j]] + pr["add"][j]
    return ids


def events(data: dict) -> int:
    """The events view.js lists: edits, cache breaks, errors and, under fidelity, requests off the bill."""
    n = 0
    for run in data["runs"]:
        q = run["req"]
        n += sum(bool(q["edit"][i]) + bool(q["miss"][i]) + bool(q["err"][i]) for i in range(len(q["read"])))
    bill = data.get("billed")
    if bill:
        n += sum(1 for w in bill["within"] if w == 0)
    return n


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("view")
    out = {"run": d / "run.html", "compare": d / "compare.html"}
    assert main(["view", GAME, "--policy", "h-direct", "-o", str(out["run"])]) == 0
    two = ["--policy", "h-direct", "--policy", "h-keep-last-2"]
    assert main(["view", GAME, *two, "-o", str(out["compare"])]) == 0
    if REAL.is_dir():
        out["fidelity"] = d / "fidelity.html"
        assert main(["view", str(CC_LOG), "--fidelity", "-o", str(out["fidelity"])]) == 0
    return out


def test_every_prompt_adds_up_to_its_requests_true_size(pages: dict[str, Path]) -> None:
    data = page_json(pages["compare"])
    assert data["kind"] == "compare" and [r["policy"] for r in data["runs"]] == ["h-direct", "h-keep-last-2"]
    tok = data["blocks"]["tok"]
    for run in data["runs"]:
        q = run["req"]
        assert len(q["read"]) == len(run["prompt"]["add"]) > 300
        for i in range(len(q["read"])):
            assert sum(tok[b] for b in prompt(run, i)) == q["size"][i]
    codes = data["codes"]
    direct = data["runs"][0]
    assert {codes[c] for c in direct["req"]["edit"]} == {"", "eviction", "compaction"}
    assert ["compaction trigger (65%)", 78000] in direct["thresholds"]  # H-14: 65 % of 120,000
    assert direct["summary"]["compactions"] == 3 and direct["summary"]["evictions"] == 15


def test_the_page_loads_nothing_from_elsewhere(pages: dict[str, Path]) -> None:
    text = pages["run"].read_text()
    assert "http://" not in text and "https://" not in text and "src=" not in text
    assert text.count("<script") == 2  # the data and the drawing, both inline


def test_a_5000_request_session_stays_a_few_mb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "long.html"
    assert main(["view", "gen:game?turns=5000", "--policy", "h-direct", "-o", str(page)]) == 0
    data = page_json(page)
    n = len(data["runs"][0]["req"]["read"])
    assert n > 5000
    assert page.stat().st_size < 6e6, f"{page.stat().st_size / 1e6:.1f} MB for {n} requests"
    assert f"wrote {page}: {n:,} requests" in capsys.readouterr().out


@needs_real
def test_fidelity_puts_the_bill_beside_the_prediction(
    pages: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = page_json(pages["fidelity"])
    bill = data["billed"]
    assert data["kind"] == "fidelity" and data["runs"][0]["policy"] == "recorded"
    assert main(["fidelity", str(CC_LOG), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)[0]
    assert bill["total"]["scored"] == doc["requests"]
    assert bill["total"]["within"] == round(doc["within_tolerance"] * doc["requests"])
    billed_read = sum(v for v in bill["read"] if v is not None)
    assert billed_read == doc["billed"]["cache_read"]
    assert "billed (the log)" in pages["fidelity"].read_text() or "billed" in json.dumps(data)


def test_wrong_uses_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", GAME, "-o", str(tmp_path / "x.html")]) == 2
    assert "name a --policy" in capsys.readouterr().err
    three = ["--policy", "h-direct"] * 3
    assert main(["view", GAME, *three, "-o", str(tmp_path / "x.html")]) == 2
    assert "at most two --policy" in capsys.readouterr().err
    if REAL.is_dir():
        assert main(["view", str(CC_LOG), "--policy", "c-default", "-o", str(tmp_path / "x.html")]) == 2
        assert "`ctxbench import" in capsys.readouterr().err


# ---------------------------------------------------------------------------- in Chromium
def _body(dom: str) -> str:
    m = re.search(r"<body[^>]*>", dom)
    assert m is not None, "no body in the dumped DOM"
    return m.group(0)


@needs_chromium
@pytest.mark.parametrize("kind", ["run", "compare", "fidelity"])
def test_the_page_renders_and_clicks_through_to_blocks(
    kind: str, pages: dict[str, Path], tmp_path: Path
) -> None:
    if kind not in pages:
        pytest.skip(f"shared real traces not found at {REAL}")
    src = pages[kind]
    data = page_json(src)
    run_k, at = (1, 40) if kind == "compare" else (0, 30)
    linked = tmp_path / f"{kind}.html"  # the same page opened at #req=N: the click's code path
    shutil.copy(src, linked)
    dom = dump_dom(linked, 1300, 900)
    body = _body(dom)
    assert 'data-ready="1"' in body, "the script ran to its end"
    assert f'data-events="{events(data)}"' in body
    n = [len(r["req"]["read"]) for r in data["runs"]]
    assert f'data-requests="{",".join(map(str, n))}"' in body
    assert dom.count("<canvas") == len(data["runs"]) * (2 if kind == "fidelity" else 1) + 1
    # a click on an event row selects its request: the selection hash does the same on load
    dom = _dump_at(linked, at, run_k)
    assert f'data-selected="{run_k}:{at}"' in _body(dom)
    table = re.search(r'<table id="blocks">(.*?)</table>', dom, re.S)
    assert table is not None, "the request's blocks are listed"
    rows = table.group(1).count("<tr")  # a header row, then one per block
    assert rows - 1 == len(prompt(data["runs"][run_k], at))
    assert html.escape(data["blocks"]["dig"][prompt(data["runs"][run_k], at)[0]]) in table.group(1)
    at_url = f"{linked.resolve().as_uri()}#req={at}&run={run_k}"  # with the request's blocks listed
    png = screenshot(at_url, tmp_path / f"{kind}.png", width=1300)
    img = mpimg.imread(png)
    assert img.shape[0] == min(16384, page_height(at_url, 1300)) and img.shape[1] == 1300
    assert img.shape[0] > page_height(src, 1300)  # the blocks table is part of the full page
    chart = img[150:450, 60:1200, :3]
    assert (chart < 0.8).mean() > 0.03, "the timeline is drawn"
    blue = (chart[..., 2] > 0.7) & (chart[..., 0] < 0.45)
    assert blue.mean() > 0.01, "cache-read bars are drawn"
    if SHOTS.is_dir():
        shutil.copy(png, SHOTS / f"view-{kind}.png")


def _dump_at(page: Path, at: int, run: int) -> str:
    """The DOM of `page` opened at `#req=AT&run=RUN`."""
    return dump_dom(f"{page.resolve().as_uri()}#req={at}&run={run}", 1300, 900)


@needs_chromium
def test_render_takes_the_full_page(tmp_path: Path) -> None:
    """Issue 31 #6: `python -m ctxbench.bench.render` shoots the whole page, not 1280x2400."""
    page = tmp_path / "tall.html"
    page.write_text("<!doctype html><body style='margin:0'><div style='height:5231px;background:#08f'></div>")
    png = screenshot(page, tmp_path / "tall.png", width=800)
    img = mpimg.imread(png)
    assert img.shape[:2] == (5231, 800)
    assert img[5200, 400, 2] > 0.9  # the bottom of the page is drawn (blue), not cut
