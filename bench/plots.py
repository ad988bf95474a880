"""Plots of sweep results (matplotlib, Agg): cost vs budget per policy with 95 % bands over seeds,
share read from cache vs budget, compactions and failed runs vs budget (integer axes). A budget
where a run ended with an error is a gap in the cost and cache lines, marked on the axis floor; a
degenerate cell (bench/retention.py) is ringed in red; the titles name the provider and model.
PNG and SVG, written deterministically (no dates, fixed SVG ids) so committed plots only change
when results do."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import ScaledTranslation

from ctxbench.bench.compare import served_pairs
from ctxbench.bench.retention import flags
from ctxbench.bench.stats import Stat, stat

PLOTS = ("cost_vs_budget", "cache_share_vs_budget", "compactions_failures_vs_budget")

# What a run's budget is, by the preset's `budget_means` (policies/budget.py); `none` presets
# refuse a budget, so they never reach a sweep over budgets.
BUDGET_WORDS = {"working": "working budget", "window": "model window"}


def _means(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Per policy, what its budget means ("" for results written before rows said)."""
    out: dict[str, str] = {}
    for r in rows:
        out.setdefault(str(r["policy"]), str(r.get("budget_means") or ""))
    return out


def budget_name(rows: list[dict[str, Any]]) -> str:
    """What the budgets of `rows` are: `working budget` (the H presets), `model window` (the
    window presets), or `budget` when a sweep mixes them or the results predate the column."""
    kinds = set(_means(rows).values())
    return BUDGET_WORDS.get(kinds.pop(), "budget") if len(kinds) == 1 else "budget"


def budget_axis(rows: list[dict[str, Any]]) -> str:
    """The x-axis label of every plot over budgets; a sweep that mixes meanings says which
    policy's budget is which."""
    means = _means(rows)
    label = f"{budget_name(rows)} (k tokens)"
    if len(set(means.values())) == 1:
        return label
    by: dict[str, list[str]] = defaultdict(list)
    for pol, m in means.items():
        by[BUDGET_WORDS.get(m, "unknown")].append(pol)
    return label + ": " + "; ".join(f"{w} for {', '.join(ps)}" for w, ps in sorted(by.items()))


def series(rows: list[dict[str, Any]], metric: str) -> dict[str, list[tuple[int, Stat]]]:
    """Per policy, per budget: the metric summed over traces for each seed, then mean and 95 %
    interval over seeds. `cache_read_share` is recomputed from the summed tokens; `failed_runs` is
    the total over seeds (a count of runs, like the tables' "runs ended by error")."""
    cells: dict[tuple[str, int, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(str(r["policy"]), int(r["budget"]), int(r["seed"]))].append(r)
    per: dict[tuple[str, int], list[float]] = defaultdict(list)
    for (pol, budget, _seed), rs in sorted(cells.items()):
        if metric == "cache_read_share":
            tot = sum(r["uncached"] + r["cache_read"] + r["cache_write"] for r in rs)
            v = sum(r["cache_read"] for r in rs) / tot if tot else 0.0
        elif metric == "failed_runs":
            v = float(sum(1 for r in rs if r.get("status", "ok") != "ok"))
        else:
            v = float(sum(float(r.get(metric, 0) or 0) for r in rs))
        per[(pol, budget)].append(v)
    out: dict[str, list[tuple[int, Stat]]] = defaultdict(list)
    for (pol, budget), vals in sorted(per.items()):
        # failed runs are counted, not averaged: 3 failed runs over 3 seeds is 3 (issue 31 #2)
        out[pol].append((budget, stat([sum(vals)]) if metric == "failed_runs" else stat(vals)))
    return dict(out)


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")


def failed_budgets(rows: list[dict[str, Any]]) -> dict[str, set[int]]:
    """Per policy, the budgets at which at least one run ended with an error."""
    out: dict[str, set[int]] = defaultdict(set)
    for r in rows:
        if r.get("status", "ok") != "ok":
            out[str(r["policy"])].add(int(r["budget"]))
    return dict(out)


def degenerate_budgets(rows: list[dict[str, Any]]) -> dict[str, set[int]]:
    """Per policy, the budgets whose cell is degenerate (bench/retention.py `flags`): a run whose
    compaction trigger is at or below its static prefix, or compactions on most requests."""
    cells: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(str(r["policy"]), int(r["budget"]))].append(r)
    out: dict[str, set[int]] = defaultdict(set)
    for (pol, budget), rs in cells.items():
        low = sum(
            1
            for r in rs
            if r.get("trigger", "") != "" and int(r["trigger"]) <= int(r.get("static_prefix") or 0)
        )
        comp = sum(float(r.get("compactions", 0) or 0) for r in rs)
        reqs = sum(float(r.get("requests", 0) or 0) for r in rs)
        if flags(comp, reqs, low):
            out[pol].add(budget)
    return dict(out)


def _line(
    ax: Any,
    data: dict[str, list[tuple[int, Stat]]],
    scale: float = 1.0,
    failed: dict[str, set[int]] | None = None,
    degenerate: dict[str, set[int]] | None = None,
) -> None:
    """One line per policy, each with its own marker shape and dash (hollow markers, so
    policies that coincide stay visible), a 95 % band over seeds, and a gap with a marker on
    the floor of the axes wherever a run ended with an error (its cost covers only the part it
    ran, so it is not drawn as a value)."""
    failed = failed or {}
    degenerate = degenerate or {}
    floor_x: list[float] = []
    ringed = False
    for i, (pol, pts) in enumerate(data.items()):
        bad = failed.get(pol, set())
        xs = [b / 1000 for b, _ in pts]
        ys = [float("nan") if b in bad else s.mean * scale for b, s in pts]
        (ln,) = ax.plot(
            xs,
            ys,
            LINESTYLES[i % len(LINESTYLES)],
            marker=MARKERS[i % len(MARKERS)],
            markersize=5,
            markerfacecolor="none",
            label=pol,
            zorder=3 + i,
        )
        if any(s.n > 1 for _, s in pts):
            ax.fill_between(
                xs,
                [float("nan") if b in bad else s.lo * scale for b, s in pts],
                [float("nan") if b in bad else s.hi * scale for b, s in pts],
                color=ln.get_color(),
                alpha=0.2,
                linewidth=0,
            )
        odd = [(b / 1000, s.mean * scale) for b, s in pts if b in degenerate.get(pol, set()) and b not in bad]
        if odd:  # a degenerate cell: drawn, but ringed so it never reads as ordinary data
            ax.plot(*zip(*odd, strict=True), "o", markersize=12, markerfacecolor="none",
                    markeredgecolor="red", mew=1.2, zorder=9)  # fmt: skip
            ringed = True
        fx = [b / 1000 for b, _ in pts if b in bad]
        if fx:
            # on the axis floor (y = 0 in axes coordinates, which is $0 / 0 % since both axes start
            # there), each policy nudged sideways by a few points so crosses at one budget stay
            # apart; never at a height that reads as a value (issue 31 #1)
            nudge = ScaledTranslation((i - (len(data) - 1) / 2) * 4 / 72, 0, ax.figure.dpi_scale_trans)
            ax.plot(
                fx,
                [0.0] * len(fx),
                "x",
                color=ln.get_color(),
                markersize=8,
                mew=2,
                transform=ax.get_xaxis_transform() + nudge,
                clip_on=False,
                zorder=10,
            )
            floor_x += fx
    if floor_x:
        ax.plot([], [], "x", color="0.3", markersize=8, mew=2, label="run ended with an error (gap)")
    if ringed:
        odd_label = "degenerate cell (trigger <= static prefix, or compacting on most requests)"
        ring = {"markerfacecolor": "none", "markeredgecolor": "red", "mew": 1.2}
        ax.plot([], [], "o", markersize=9, label=odd_label, **ring)


SAVE_META = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}  # no dates, no versions


def _save(fig: Any, out: Path, name: str) -> list[Path]:
    paths = []
    for ext, meta in SAVE_META.items():
        p = out / f"{name}.{ext}"
        fig.savefig(p, format=ext, dpi=110, metadata=meta, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def save_png(fig: Any, path: Path) -> Path:
    """`fig` as one PNG, written like `ctxbench plot` writes its own (the README's figure)."""
    fig.savefig(path, format="png", dpi=110, metadata=SAVE_META["png"], bbox_inches="tight")
    plt.close(fig)
    return path


def cost_figure(rows: list[dict[str, Any]], title: str = "") -> Any:
    """The cost-versus-budget figure. Its y-axis starts at $0, so the crosses that mark failed
    runs on the axis floor sit at zero and never read as a cost somewhere above it."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    _line(ax, series(rows, "cost"), failed=failed_budgets(rows), degenerate=degenerate_budgets(rows))
    ax.set_ylim(bottom=0)
    ax.set(xlabel=budget_axis(rows), ylabel="cost ($, all traces)", title="Cost versus budget" + title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_results(rows: list[dict[str, Any]], out_dir: str | Path, title: str = "") -> list[Path]:
    """Write the three plots into `out_dir`; returns the files written."""
    if not rows:
        raise ValueError("no results to plot")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt.rcParams["svg.hashsalt"] = "ctxbench"
    written: list[Path] = []
    served = "; ".join(served_pairs(rows))  # every plot names the provider and model
    suffix = f" — {title}" if title else ""
    suffix += f"\n{served}" if served else ""

    written += _save(cost_figure(rows, suffix), out, "cost_vs_budget")

    failed, odd = failed_budgets(rows), degenerate_budgets(rows)
    xlabel = budget_axis(rows)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    _line(ax, series(rows, "cache_read_share"), 100.0, failed=failed, degenerate=odd)
    ax.set(
        xlabel=xlabel,
        ylabel="input read from cache (%)",
        title="Cache reads versus budget" + suffix,
    )
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    written += _save(fig, out, "cache_share_vs_budget")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.0))
    _line(a1, series(rows, "compactions"), degenerate=odd, failed=failed)  # a failed count is no value
    a1.set(xlabel=xlabel, ylabel="compactions", title="Compactions")
    _line(a2, series(rows, "failed_runs"))
    a2.set(xlabel=xlabel, ylabel="runs ended by a failure (all seeds)", title="Failed runs")
    for a in (a1, a2):
        a.yaxis.set_major_locator(MaxNLocator(integer=True))
        a.set_ylim(0, max(1.0, a.get_ylim()[1]))  # counts: whole ticks even when all are 0
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    written += _save(fig, out, "compactions_failures_vs_budget")
    return written
