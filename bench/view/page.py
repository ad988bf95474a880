"""The session view's page: one HTML file holding its CSS, its script (bench/view/view.js) and
its data (bench/view/data.py) inline, so it opens anywhere, offline, from one file.

What it shows: a header per run (policy, provider, model, budget, totals); the request timeline
of each run (stacked cache read / cache write / uncached input per request on one token axis, the
harness's estimate as a line, the budget and compaction thresholds dashed), with compactions,
evictions, cache breaks (their cause on hover) and errors marked along its top; the cumulative
cost of every run (and of the bill); a table of those events; and, for the request clicked, its
blocks (kind, role, tokens, digest, name, and which part of the prompt the cache read, wrote or
left uncached). Under fidelity, the replay's prediction and the log's bill are two timelines on
the same axes, and the requests off the bill are events with fidelity's cause."""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

from ctxbench.bench.view.data import dumps


def _asset(name: str) -> str:
    return resources.files("ctxbench.bench.view").joinpath(name).read_text(encoding="utf-8")


def _run_header(run: dict[str, Any], bill: dict[str, Any] | None) -> str:
    s = run["summary"]
    thr = " · ".join(f"{html.escape(n)} {t:,}" for n, t in run["thresholds"])
    misses = ", ".join(f"{html.escape(k)} {v}" for k, v in s["misses"].items()) or "none"
    status = (
        "reached the end of the trace"
        if s["status"] == "ok"
        else f"<span class='fail'>ENDED EARLY, {html.escape(s['status'])}</span>"
    )
    # under fidelity the costs are the bill's and the prediction's, priced alike (bench/view/bill.py)
    cost = "" if bill else f"cost ${s['cost']:,.4f} · "
    lines = [
        f"<div class='sum'><b>{html.escape(run['label'])}</b> · provider {html.escape(run['provider'])} · "
        f"model {html.escape(run['model'])} · window {run['window']:,} · {thr}</div>",
        f"<div class='sum'>{s['requests']:,} requests · {cost}read from cache "
        f"{s['cache_read_share']:.1%} · compactions {s['compactions']} · evictions {s['evictions']} · "
        f"cache misses: {misses} · {status}</div>",
    ]
    if bill:
        t = bill["total"]
        lines.append(
            f"<div class='sum'>billed ${t['billed']:,.4f} · predicted ${t['predicted']:,.4f} · "
            f"{t['within']} of {t['scored']} requests within fidelity's tolerance of the bill</div>"
        )
    return "\n".join(lines)


LEGEND = (
    "<div class='legend'><span><i style='background:#4a90d9'></i>cache read</span>"
    "<span><i style='background:#f0a030'></i>cache write</span>"
    "<span><i style='background:#d9534f'></i>uncached input</span>"
    "<span><i style='background:#222;height:2px'></i>harness estimate</span>"
    "<span><i style='border-top:2px dashed #000;height:0'></i>budget</span>"
    "<span><i style='border-top:2px dashed #7b3fbf;height:0'></i>compaction thresholds</span>"
    "<span style='color:#7b3fbf'>▼ compaction</span><span style='color:#2a9d5c'>■ eviction / trim</span>"
    "<span style='color:#999'>● other change (tools, system, model)</span>"
    "<span style='color:#d9534f'>| cache break</span><span>✕ error</span></div>"
)


def render_page(data: dict[str, Any]) -> str:
    """The whole page for `data` (bench/view/data.py `page_data`)."""
    title = html.escape(data["title"])
    heads = "\n".join(_run_header(r, data.get("billed")) for r in data["runs"])
    return "\n".join(
        [
            "<!doctype html><html><head><meta charset='utf-8'>",
            f"<title>ctxbench view · {title}</title>",
            f"<style>{_asset('view.css')}</style></head>",
            f"<body data-kind='{html.escape(data['kind'])}'>",
            f"<h1>ctxbench view · {title}</h1>",
            f"<div class='note'>{html.escape(data['trace'])}</div>",
            heads,
            LEGEND,
            "<div id='charts'></div>",
            "<p class='note'>Hover a request for its numbers; click it (or an event below) for its "
            "blocks; ← → step through requests.</p>",
            "<h2>Events</h2><div class='note' id='evnote'></div>",
            "<div class='scroll'><table id='events'><thead><tr><th class='l'>run</th><th>request</th>"
            "<th class='l'>what</th><th class='l'>cause / detail</th></tr></thead>"
            "<tbody></tbody></table></div>",
            "<div id='details'><p class='note'>No request selected.</p></div>",
            "<div id='tip'></div>",
            f"<script id='data' type='application/json'>{dumps(data)}</script>",
            f"<script>{_asset('view.js')}</script>",
            "</body></html>",
            "",
        ]
    )
