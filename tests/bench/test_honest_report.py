"""Honest comparisons: a failed run is never "best", seeds vary what users expect and the table
says when nothing varied; plots draw failures as gaps; the report opens with a headline and
renders offline in headless Chromium (screenshot)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from ctxbench.bench.compare import NOTHING_VARIED, compare_rows, render
from ctxbench.bench.plots import failed_budgets, plot_results
from ctxbench.bench.render import chromium_path, screenshot
from ctxbench.bench.report import write_report
from ctxbench.bench.runs import make_tasks, seeded_spec
from tests.bench.test_compare_plots import row


def test_a_failed_run_is_never_best() -> None:
    rows = [row("cheap-but-failed", 0, 0.10, status="too_long"), row("finished", 0, 1.0)]
    prs = {p.policy: p for p in compare_rows(rows)}
    assert prs["finished"].verdict == "best" and prs["finished"].rel_best == 1.0
    assert prs["cheap-but-failed"].verdict.startswith("FAILED (1 of 1")
    text = render(list(prs.values()), "terminal")
    assert "runs ended by error" in text and "best" in text


def test_no_best_when_every_policy_failed() -> None:
    prs = compare_rows([row("a", 0, 0.1, status="too_long"), row("b", 0, 0.2, status="too_long")])
    assert all(p.verdict.startswith("FAILED") for p in prs)
    assert '"cost_rel_best": null' in render(prs, "json")


def test_the_table_says_when_nothing_varied() -> None:
    same = [row("a", s, 1.0) for s in range(3)]
    assert NOTHING_VARIED in render(compare_rows(same), "terminal")
    varied = [row("a", s, 1.0 + s) for s in range(3)]
    assert NOTHING_VARIED not in render(compare_rows(varied), "terminal")


def test_seeds_vary_a_gen_trace_without_its_own_seed() -> None:
    assert seeded_spec("gen:game?turns=5", 3) == "gen:game?turns=5&seed=3"
    assert seeded_spec("gen:game?turns=5&seed=1", 3) == "gen:game?turns=5&seed=1"
    assert seeded_spec("traces/samples/game-60.jsonl", 3) == "traces/samples/game-60.jsonl"
    tasks = make_tasks(["gen:game?turns=5"], ["h-direct"], [None], [None], [0, 1])
    assert len({t.trace_hash for t in tasks}) == 2 and {t.trace for t in tasks} == {"gen:game?turns=5"}


def test_plots_leave_gaps_where_runs_failed(tmp_path: Path) -> None:
    rows = [row("p", 0, c, budget=b) for b, c in ((32000, 0.01), (64000, 2.0), (96000, 3.0))]
    rows[0]["status"] = "still_over_budget"
    assert failed_budgets(rows) == {"p": {32000}}
    import matplotlib.pyplot as plt

    from ctxbench.bench import plots

    fig, ax = plt.subplots()
    plots._line(ax, plots.series(rows, "cost"), failed=failed_budgets(rows))
    ys = ax.lines[0].get_ydata()
    assert np.isnan(ys[0]) and list(ys[1:]) == [2.0, 3.0]  # no point at ≈ $0 for the failed run
    plt.close(fig)
    assert plot_results(rows, tmp_path)


def _sweep_rows() -> list[dict]:
    rows = []
    for s in range(2):
        for b in (32000, 64000, 96000):
            rows.append(row("h-direct", s, 1.0 + b / 1e5 + s * 0.01, budget=b))
            failed = b == 32000
            rows.append(
                row("h-keep-last-2", s, 0.1 if failed else 2.5 + b / 1e5, budget=b,
                    status="too_long" if failed else "ok")
            )  # fmt: skip
    return rows


def test_report_opens_with_a_headline_and_is_offline(tmp_path: Path) -> None:
    page = write_report(_sweep_rows(), tmp_path / "rep")
    text = page.read_text()
    head = text.index("class='headline'")
    assert head < text.index("<h2>Plots") < text.index("<h2>Policies per budget")
    assert "<b>h-direct</b> is the cheapest policy whose runs all finished" in text
    assert "<b>h-keep-last-2</b> has runs that ended with an error at 32k" in text
    assert "<script" not in text and "http://" not in text and "https://" not in text


@pytest.mark.skipif(chromium_path() is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = write_report(_sweep_rows(), tmp_path / "rep")
    png = screenshot(page, tmp_path / "shot.png", width=1000, height=1400)
    img = mpimg.imread(png)
    assert img.shape[:2] == (1400, 1000)
    top = img[:300, :, :3]
    assert top.std() > 0.05  # the title and headline are drawn, not a blank page
    plots_band = img[300:900, :, :3]
    assert (plots_band < 0.9).mean() > 0.02  # the plot images loaded from beside the page


def test_render_without_a_browser_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m ctxbench.bench.render` where no Chromium is installed (the README's last
    report command on a fresh machine) says so in one line, exit 2 (it printed a traceback)."""
    from ctxbench.bench import render as render_mod

    page = tmp_path / "index.html"
    page.write_text("<html></html>")
    monkeypatch.setattr(render_mod, "chromium_path", lambda: None)
    assert render_mod.main([str(page), str(tmp_path / "shot.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("render: error: no chromium on PATH") and err.count("\n") == 1
    assert render_mod.main([str(tmp_path / "missing.html"), "x.png"]) == 2
    assert "missing.html: no such page" in capsys.readouterr().err
