"""Plots of sweep results (matplotlib, Agg): cost vs budget per policy with 95 % bands over seeds,
share read from cache vs budget, compactions and failed runs vs budget. PNG and SVG, written
deterministically (no dates, fixed SVG ids) so committed plots only change when results do."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ctxbench.bench.compare import Stat, stat

PLOTS = ("cost_vs_budget", "cache_share_vs_budget", "compactions_failures_vs_budget")


def series(rows: list[dict[str, Any]], metric: str) -> dict[str, list[tuple[int, Stat]]]:
    """Per policy, per budget: the metric summed over traces for each seed, then mean and 95 %
    interval over seeds. `cache_read_share` is recomputed from the summed tokens."""
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
        out[pol].append((budget, stat(vals)))
    return dict(out)


def _line(ax: Any, data: dict[str, list[tuple[int, Stat]]], scale: float = 1.0, style: str = "-") -> None:
    for pol, pts in data.items():
        xs = [b / 1000 for b, _ in pts]
        ys = [s.mean * scale for _, s in pts]
        (ln,) = ax.plot(xs, ys, style, marker="o", markersize=3, label=pol)
        if any(s.n > 1 for _, s in pts):
            ax.fill_between(
                xs,
                [s.lo * scale for _, s in pts],
                [s.hi * scale for _, s in pts],
                color=ln.get_color(),
                alpha=0.2,
                linewidth=0,
            )


def _mark_failures(
    ax: Any, data: dict[str, list[tuple[int, Stat]]], failed: dict[str, list[tuple[int, Stat]]]
) -> None:
    """Cross out the points where a run ended with an error: their cost covers only what ran."""
    xs, ys = [], []
    for pol, pts in data.items():
        fails = dict(failed.get(pol, []))
        for budget, st in pts:
            f = fails.get(budget)
            if f is not None and f.mean > 0:
                xs.append(budget / 1000)
                ys.append(st.mean)
    if xs:
        ax.plot(xs, ys, "x", color="crimson", markersize=9, mew=2, label="run ended with an error")


def _save(fig: Any, out: Path, name: str) -> list[Path]:
    paths = []
    for ext, meta in (("png", {"Software": None}), ("svg", {"Date": None, "Creator": None})):
        p = out / f"{name}.{ext}"
        fig.savefig(p, format=ext, dpi=110, metadata=meta, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def plot_results(rows: list[dict[str, Any]], out_dir: str | Path, title: str = "") -> list[Path]:
    """Write the three plots into `out_dir`; returns the files written."""
    if not rows:
        raise ValueError("no results to plot")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt.rcParams["svg.hashsalt"] = "ctxbench"
    written: list[Path] = []
    suffix = f" — {title}" if title else ""

    fig, ax = plt.subplots(figsize=(7, 4.2))
    costs = series(rows, "cost")
    _line(ax, costs)
    _mark_failures(ax, costs, series(rows, "failed_runs"))
    ax.set(
        xlabel="working budget (k tokens)", ylabel="cost ($, all traces)", title="Cost versus budget" + suffix
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    written += _save(fig, out, "cost_vs_budget")

    fig, ax = plt.subplots(figsize=(7, 4.2))
    _line(ax, series(rows, "cache_read_share"), 100.0)
    ax.set(
        xlabel="working budget (k tokens)",
        ylabel="input read from cache (%)",
        title="Cache reads versus budget" + suffix,
    )
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    written += _save(fig, out, "cache_share_vs_budget")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.0))
    _line(a1, series(rows, "compactions"))
    a1.set(xlabel="working budget (k tokens)", ylabel="compactions", title="Compactions")
    _line(a2, series(rows, "failed_runs"))
    a2.set(xlabel="working budget (k tokens)", ylabel="runs ended by a failure", title="Failed runs")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    written += _save(fig, out, "compactions_failures_vs_budget")
    return written
