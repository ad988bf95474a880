"""compare table (stats, formats, verdicts), plots and the HTML report, and the commands on samples."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.compare import compare_rows, render
from ctxbench.bench.plots import cost_figure, plot_results
from ctxbench.bench.report import write_report
from ctxbench.bench.stats import stat

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "traces" / "samples").glob("*.jsonl"))


def row(policy: str, seed: int, cost: float, budget: int = 64000, trace: str = "t", **kw: object) -> dict:
    base = {
        "key": f"{policy}{seed}{budget}{trace}",
        "trace": trace,
        "policy": policy,
        "budget": budget,
        "seed": seed,
        "status": "ok",
        "cost": cost,
        "requests": 10,
        "failed_requests": 0,
        "uncached": 10,
        "cache_read": 80,
        "cache_write": 10,
        "output": 5,
        "true_input": 100,
        "compactions": 1,
        "tokens_saved": 50,
        "evictions": 2,
        "evicted_images": 8,
        "estimate_error_mean": 0.1,
        "estimate_error_worst": 0.5,
        "miss_tokens": 3,
        "miss_eviction": 2,
        "cache_read_share": 0.8,
    }
    return {**base, **kw}


def test_stat_interval() -> None:
    s = stat([1.0, 2.0, 3.0])
    assert s.mean == 2.0 and s.lo == pytest.approx(2 - 4.303 / 3**0.5) and s.n == 3
    assert stat([5.0]).lo == stat([5.0]).hi == 5.0


def test_compare_sums_traces_per_seed_and_gives_verdicts() -> None:
    rows = [row("a", s, 1.0 + s * 0.01, trace=t) for s in range(3) for t in ("t1", "t2")]
    rows += [row("b", s, 1.005 + s * 0.01, trace=t) for s in range(3) for t in ("t1", "t2")]
    rows += [
        row("c", s, 3.0, trace=t, status="too_long" if s == 0 else "ok", failures_too_long=int(s == 0))
        for s in range(3)
        for t in ("t1", "t2")
    ]
    prs = {p.policy: p for p in compare_rows(rows)}
    assert prs["a"].stats["cost"].mean == pytest.approx(2.02)
    assert prs["a"].verdict == "best"
    # b costs 0.01 more than a on every seed: paired, the gap holds however much both move
    assert prs["b"].verdict.startswith("costlier than a: +$0.0100, paired 95 % CI")
    assert prs["c"].verdict == "FAILED (2 of 6 runs ended by an error)"
    assert prs["c"].rel_best == pytest.approx(6.0 / 2.02)
    assert prs["a"].stats["cache_read_share"].mean == pytest.approx(0.8)
    assert prs["c"].stats["failures_too_long"].mean == pytest.approx(2 / 3)
    lst = list(prs.values())
    md = render(lst, "markdown")
    assert "| policy |" in md and "req. errors too_long" in md and "miss eviction" in md
    parsed = list(csv.DictReader(io.StringIO(render(lst, "csv"))))
    assert [p["policy"] for p in parsed] == ["a", "b", "c"] and "cost_lo" in parsed[0]
    assert json.loads(render(lst, "json"))["policies"][0]["policy"] == "a"
    assert "best" in render(lst, "terminal").splitlines()[2]


def test_a_gap_within_the_seeds_noise_is_not_a_verdict() -> None:
    """Paired differences that change sign across seeds: the interval includes 0."""
    rows = [row("a", s, 2.0 + s) for s in range(4)]
    rows += [row("b", s, 2.0 + s + d) for s, d in enumerate((0.3, -0.2, 0.25, -0.1))]
    prs = {p.policy: p for p in compare_rows(rows)}
    assert prs["a"].verdict == "best"
    assert prs["b"].verdict.startswith("NOT SUPPORTED (the paired 95 % CI of the gap to a includes 0")


def test_equal_costs_are_a_tie_not_a_best() -> None:
    rows = [row(p, s, 1.6205 + s) for p in ("x", "y", "z") for s in range(2)]
    rows += [row("w", s, 1.7 + s) for s in range(2)]
    prs = {p.policy: p for p in compare_rows(rows)}
    assert [prs[p].verdict for p in "xyz"] == ["tie for best (3 policies, equal cost)"] * 3
    assert not any(p.verdict == "best" for p in prs.values())
    assert prs["w"].verdict.startswith("costlier than x")


def test_degenerate_cells_are_flagged() -> None:
    """A trigger at or below the static prefix, a compaction on most requests (issue 29: 143
    compactions in 144 requests, the trigger below the 21k system prompt)."""
    rows = [row("low", 0, 1.0, trigger=20_000, static_prefix=21_000, compactions=9, requests=10)]
    rows += [row("fine", 0, 2.0, trigger=160_000, static_prefix=21_000, compactions=1, requests=10)]
    prs = {p.policy: p for p in compare_rows(rows)}
    assert prs["low"].flags == ["trigger <= static prefix", "compacts on 90% of requests"]
    assert prs["fine"].flags == []
    text = render(list(prs.values()), "terminal")
    assert "trigger <= static prefix; compacts on 90% of requests" in text
    assert (
        json.loads(render(list(prs.values()), "json"))["policies"][0]["flags"][0]
        == "trigger <= static prefix"
    )


def test_plots_and_report_are_deterministic(tmp_path: Path) -> None:
    rows = [
        row(p, s, c * (1 + s / 50) * b / 64000, budget=b)
        for p, c in (("a", 1.0), ("b", 2.0))
        for b in (32000, 64000, 96000)
        for s in range(3)
    ]
    files = plot_results(rows, tmp_path / "p1")
    assert {f.name for f in files} >= {
        "cost_vs_budget.png",
        "cost_vs_budget.svg",
        "cache_share_vs_budget.svg",
    }
    plot_results(rows, tmp_path / "p2")
    for f in files:
        assert f.read_bytes() == (tmp_path / "p2" / f.name).read_bytes(), f.name
    page = write_report(rows, tmp_path / "rep", "demo")
    text = page.read_text()
    assert "cost_vs_budget.svg" in text and "budget 96,000" in text and "<td>a</td>" in text


def test_cost_axis_starts_at_zero_so_failure_crosses_are_not_values() -> None:
    """Costs far from zero would let matplotlib start the axis near them; the axis must still
    start at $0, where the crosses of failed runs sit."""
    rows = [row(p, 0, c, budget=b) for p, c in (("a", 100.0), ("b", 101.0)) for b in (32000, 64000)]
    rows.append(row("a", 0, 3.0, budget=96000, status="error"))
    fig = cost_figure(rows)
    try:
        bottom, top = fig.axes[0].get_ylim()
        assert bottom == 0.0 and top > 101.0
    finally:
        plt.close(fig)


@pytest.mark.parametrize(
    ("means", "label"),
    [
        ({"a": "working", "b": "working"}, "working budget (k tokens)"),
        ({"a": "window", "b": "window"}, "model window (k tokens)"),
        ({"a": "window", "b": "working"}, "budget (k tokens): model window for a; working budget for b"),
        ({}, "budget (k tokens)"),  # results written before rows said what their budget means
    ],
)
def test_the_budget_axis_says_what_the_budget_is(means: dict[str, str], label: str, tmp_path: Path) -> None:
    """The preset's budget_means names the x-axis: H's working budget, or the model window of the
    presets whose thresholds are fractions of it (policies/budget.py)."""
    rows = [
        row(p, 0, 1.0, budget=b, **({"budget_means": means[p]} if p in means else {}))
        for p in ("a", "b")
        for b in (64000, 128000)
    ]
    fig = cost_figure(rows)
    try:
        assert fig.axes[0].get_xlabel() == label
    finally:
        plt.close(fig)
    page = write_report(rows, tmp_path / "rep").read_text()
    word = label.split(" (")[0] if len(set(means.values())) == 1 else "budget"
    assert f"<summary>{word} 128,000" in page  # each budget a collapsed block (issue 31 #6)


def test_count_axes_show_whole_numbers_when_nothing_failed(tmp_path: Path) -> None:
    rows = [row("a", 0, 1.0, budget=b, budget_means="working") for b in (64000, 128000)]
    import matplotlib.figure

    saved: list[matplotlib.figure.Figure] = []
    with pytest.MonkeyPatch.context() as mp:
        from ctxbench.bench import plots

        mp.setattr(plots, "_save", lambda fig, out, name: saved.append(fig) or [])
        plot_results(rows, tmp_path)
    failed_axis = saved[-1].axes[1]
    assert failed_axis.get_ylim() == (0.0, 1.0)
    assert all(float(t).is_integer() for t in failed_axis.get_yticks() if 0 <= t <= 1)
    for fig in saved:
        plt.close(fig)


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str) -> Result:
    """Run the CLI in this process (no interpreter start-up per call)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(args))
    return Result(rc, out.getvalue(), err.getvalue())


def test_commands_on_the_sample_traces(tmp_path: Path) -> None:
    assert SAMPLES, "sample traces missing"
    r = cli("compare", *SAMPLES, "--policy", "h-openrouter", "--policy", "h-keep-last-2", "--format", "json")
    assert r.returncode == 0, r.stderr
    pols = json.loads(r.stdout)["policies"]
    assert [p["policy"] for p in pols] == ["h-openrouter", "h-keep-last-2"]
    assert pols[1]["cost"] > pols[0]["cost"]  # H-8: keeping only two screenshots costs more
    out = tmp_path / "s.csv"
    r = cli(
        "sweep", *SAMPLES, "--policy", "h-direct", "--budgets", "64k,128k", "--seeds", "2", "-o", str(out)
    )
    assert r.returncode == 0, r.stderr
    assert len(out.read_text().splitlines()) == 1 + len(SAMPLES) * 2 * 2
    assert cli("plot", str(out), "-o", str(tmp_path / "plots")).returncode == 0
    assert (tmp_path / "plots" / "cost_vs_budget.png").stat().st_size > 1000
    assert cli("report", str(out), "-o", str(tmp_path / "rep")).returncode == 0
    assert (tmp_path / "rep" / "index.html").exists()
    for s in SAMPLES:
        r = cli("check-prefix", s, "--policy", "h-direct")
        assert r.returncode == 0, r.stdout


def test_bad_inputs_give_one_line_errors(tmp_path: Path) -> None:
    for args in (
        ("compare", "nope.jsonl"),
        ("sweep", "nope.jsonl", "--policy", "h-direct", "-o", str(tmp_path / "x.csv")),
        ("compare", SAMPLES[0], "--policy", "no-such-preset"),
        ("plot", "nope.csv", "-o", str(tmp_path)),
        ("sweep", SAMPLES[0], "--policy", "h-direct", "--budgets", "1k:2k:1k", "-o", str(tmp_path / "y.csv")),
    ):
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.startswith("ctxbench: error:"), r.stderr
