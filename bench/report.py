"""An HTML page for sweep results: the plots, the compare table per budget, and the run list.

Self-contained apart from the plot files written beside it; no timestamps, so the same results
give the same page."""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path
from typing import Any

from ctxbench.bench.compare import compare_rows, table
from ctxbench.bench.plots import plot_results

CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}img{max-width:100%;margin:0.5em 0}
.note{color:#666;font-size:13px}"""


def _table(head: list[str], body: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><tr>{h}</tr>{rows}</table>"


def write_report(rows: list[dict[str, Any]], out_dir: str | Path, name: str = "", source: str = "") -> Path:
    """Write `index.html` and the plots into `out_dir`; returns the page's path."""
    out = Path(out_dir)
    plots = plot_results(rows, out)
    name = name or out.name
    traces = sorted({str(r["trace"]) for r in rows})
    policies = list(dict.fromkeys(str(r["policy"]) for r in rows))
    seeds = sorted({int(r["seed"]) for r in rows})
    by_budget: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_budget[int(r["budget"])].append(r)
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>ctxbench · {html.escape(name)}</title>",
        f"<style>{CSS}</style></head><body><h1>ctxbench report · {html.escape(name)}</h1>",
        f"<p class='note'>{len(rows)} runs · traces: {html.escape(', '.join(traces))} · policies: "
        f"{html.escape(', '.join(policies))} · seeds: {len(seeds)} · budgets: {len(by_budget)}"
        + (f" · from {html.escape(source)}" if source else "")
        + "</p>",
        "<h2>Plots</h2>",
    ]
    for p in plots:
        if p.suffix == ".svg":
            parts.append(f"<img src='{html.escape(p.name)}' alt='{html.escape(p.stem)}'>")
    parts.append(
        "<h2>Policies per budget</h2><p class='note'>Costs add up all traces; with several seeds, "
        "mean ± 95 % interval. A verdict 'NOT SUPPORTED' means the gap to the best is smaller than the "
        "spread. A run that ended in a failure stops early: its cost is that of the part it ran.</p>"
    )
    for budget in sorted(by_budget):
        head, body = table(compare_rows(by_budget[budget]))
        parts.append(f"<h3>budget {budget:,}</h3>" + _table(head, body))
    run_head = [
        "trace",
        "policy",
        "budget",
        "seed",
        "status",
        "cost",
        "read from cache",
        "compactions",
        "evictions",
    ]
    run_body = [
        [
            str(r["trace"]),
            str(r["policy"]),
            f"{int(r['budget']):,}",
            str(r["seed"]),
            str(r["status"]),
            f"${float(r['cost']):.4f}",
            f"{float(r['cache_read_share']):.1%}",
            str(r["compactions"]),
            str(r["evictions"]),
        ]
        for r in rows
    ]
    parts.append("<details><summary>All runs</summary>" + _table(run_head, run_body) + "</details>")
    parts.append("</body></html>\n")
    page = out / "index.html"
    page.write_text("\n".join(parts), encoding="utf-8")
    return page
