"""An HTML page for sweep results: a headline (which policy is cheapest at which budgets, by how
much, which runs failed), the plots, the compare table per budget, and the run list.

Offline: no scripts, fonts or styles from elsewhere, only the plot files written beside it; no
timestamps, so the same results give the same page."""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path
from typing import Any

from ctxbench.bench.compare import PolicyRow, compare_rows, failed_runs, served_pairs, table
from ctxbench.bench.plots import budget_name, plot_results

CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}img{max-width:100%;margin:0.5em 0}
.note{color:#666;font-size:13px}.headline{font-size:15px;line-height:1.5;background:#f6f8fa;
border-left:4px solid #2a6;padding:0.6em 1em}.headline .fail{color:#b00}
.plots{display:flex;flex-wrap:wrap;gap:1em}.plots img{max-width:48%;min-width:420px}
.plots img.wide{max-width:100%;width:100%}details.budget{margin:0.2em 0}
details.budget>summary{cursor:pointer;font-size:14px;padding:2px 0}"""

# Figures with two panels side by side are drawn at full width, so their ticks stay as legible as
# the one-panel figures' (issue 31 #6).
WIDE = ("compactions_failures_vs_budget",)


def _k(budget: int) -> str:
    return f"{budget / 1000:g}k"


def headline(by_budget: dict[int, list[PolicyRow]]) -> list[str]:
    """Sentences for the top of the page: the cheapest policy whose runs all finished, per run of
    consecutive budgets, with its margin over the runner-up; then every policy that failed where."""
    spans: list[tuple[str, list[int], list[float], str]] = []  # winner, budgets, margins, runner-up
    for budget, prs in sorted(by_budget.items()):
        finished = sorted((p for p in prs if not failed_runs(p)), key=lambda p: p.stats["cost"].mean)
        if not finished:
            spans.append(("", [budget], [], ""))
            continue
        best = finished[0]
        tied = [p.policy for p in finished if p.verdict.startswith("tie for best")]
        if tied:  # equal costs: no winner (bench/verdicts.py)
            name = " = ".join(tied)
            if spans and spans[-1][0] == name and spans[-1][3] == "(tie)":
                spans[-1][1].append(budget)
            else:
                spans.append((name, [budget], [1.0], "(tie)"))
            continue
        rest = finished[1:]
        nxt = rest[0] if rest else None
        margin = nxt.stats["cost"].mean / best.stats["cost"].mean if nxt and best.stats["cost"].mean else 0.0
        runner = nxt.policy if nxt else ""
        if spans and spans[-1][0] == best.policy and spans[-1][3] == runner:
            spans[-1][1].append(budget)
            spans[-1][2].append(margin)
        else:
            spans.append((best.policy, [budget], [margin], runner))
    out = []
    for winner, budgets, margins, runner in spans:
        where = _k(budgets[0]) if len(budgets) == 1 else f"{_k(budgets[0])}–{_k(budgets[-1])}"
        if not winner:
            out.append(
                f"<span class='fail'>At {where} every policy had a run that ended with an error.</span>"
            )
            continue
        if runner == "(tie)":
            out.append(f"At {where}, <b>{html.escape(winner)}</b> tie as the cheapest (equal cost): no best.")
            continue
        text = f"At {where}, <b>{html.escape(winner)}</b> is the cheapest policy whose runs all finished"
        if runner:
            lo, hi = min(margins), max(margins)
            by = f"{lo:.2f}×" if round(lo, 2) == round(hi, 2) else f"{lo:.2f}–{hi:.2f}×"
            text += f": {html.escape(runner)} costs {by} as much"
        out.append(text + ".")
    fails: dict[str, list[int]] = {}
    for budget, prs in sorted(by_budget.items()):
        for p in prs:
            if failed_runs(p):
                fails.setdefault(p.policy, []).append(budget)
    by_where: dict[tuple[int, ...], list[str]] = {}
    for pol, budgets in fails.items():
        by_where.setdefault(tuple(budgets), []).append(pol)
    for budgets_t, pols in by_where.items():
        names = ", ".join(f"<b>{html.escape(p)}</b>" for p in pols)
        verb = "has runs" if len(pols) == 1 else "have runs"
        out.append(
            f"<span class='fail'>{names} {verb} that ended with an error at "
            f"{', '.join(_k(b) for b in budgets_t)} (never ranked; gaps in the plots).</span>"
        )
    if not fails:
        out.append("Every run reached the end of its trace.")
    odd: dict[str, list[int]] = {}
    for budget, prs in sorted(by_budget.items()):
        for p in prs:
            if p.flags:
                odd.setdefault(p.policy, []).append(budget)
    for pol, budgets in odd.items():
        out.append(
            f"<span class='fail'><b>{html.escape(pol)}</b> is degenerate at "
            f"{', '.join(_k(b) for b in budgets)} (a compaction trigger at or below the static prefix, "
            "or a compaction on most requests: flagged in the tables, ringed in the plots).</span>"
        )
    return out


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
        f"{html.escape(', '.join(policies))} · seeds: {len(seeds)} · budgets: {len(by_budget)} · "
        f"served on: {html.escape('; '.join(served_pairs(rows)))}"
        + (f" · from {html.escape(source)}" if source else "")
        + "</p>",
    ]
    ranked = {b: compare_rows(rs) for b, rs in sorted(by_budget.items())}
    parts.append("<div class='headline'>" + "<br>".join(headline(ranked)) + "</div>")
    parts.append("<h2>Plots</h2><div class='plots'>")
    for p in plots:
        if p.suffix == ".svg":
            wide = " class='wide'" if p.stem in WIDE else ""
            parts.append(f"<img{wide} src='{html.escape(p.name)}' alt='{html.escape(p.stem)}'>")
    parts.append("</div>")
    parts.append(
        "<h2>Policies per budget</h2><p class='note'>Costs add up all traces; with several seeds, "
        "mean ± 95 % interval. Verdicts compare each policy with the cheapest seed by seed (same seed, "
        "same traces): 'costlier than X' when the 95 % interval of those paired differences excludes 0, "
        "'NOT SUPPORTED' when it includes 0; equal costs are a tie, with no best. 'retained verbatim' "
        "is the share of the conversation's tokens still in the final context unchanged (the rest "
        "exists only in summaries, or not at all); 'flags' mark degenerate cells. A run that ended "
        "in a failure stops early: its cost is that of the part it ran, so a "
        "policy with such a run is marked FAILED and never ranked best. 'est. err' compares the "
        "harness's own token estimate of each prompt, made before the call, with the prompt's true "
        "size: the mean over requests and the single request furthest off (a summary request "
        "estimated as the whole conversation can be off by several times; `ctxbench run` names it).</p>"
    )
    word = budget_name(rows)  # working budget, model window, or budget when mixed
    for budget, prs in ranked.items():  # one collapsed block per budget: the headline says which to open
        head, body = table(prs)
        best = next((p.policy for p in prs if p.verdict == "best"), "")
        failed = sum(1 for p in prs if failed_runs(p))
        said = (f" · best {html.escape(best)}" if best else "") + (f" · {failed} FAILED" if failed else "")
        parts.append(
            f"<details class='budget'><summary>{word} {budget:,}{said}</summary>"
            + _table(head, body)
            + "</details>"
        )
    run_head = [
        "trace",
        "policy",
        "budget",
        "provider · model",
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
            f"{r.get('provider', '?')} · {r.get('model') or '?'}",
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
