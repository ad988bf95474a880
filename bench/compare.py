"""Compare policies on the same traces: one row per policy, computed from run rows afterwards.

Per seed a policy's runs over all traces are added up (cost, tokens, misses, compactions, ...);
over seeds each number is a mean with a 95 % interval (Student t). Verdicts compare each policy
with the cheapest paired by seed, and declare ties (bench/verdicts.py; peers.md "Ideas worth
absorbing" 2: honest verdicts). Beside cost, what each policy kept of the conversation verbatim and
the flags of a degenerate cell (bench/retention.py). Outputs: terminal, Markdown, CSV, JSON.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxbench.bench.retention import flags
from ctxbench.bench.stats import Stat, stat
from ctxbench.bench.verdicts import rank as rank_verdicts
from ctxbench.sim.core.records import MISS_CAUSES

if TYPE_CHECKING:
    from ctxbench.bench.runs import RunOptions

SUM_FIELDS = (
    "cost",
    "requests",
    "failed_requests",
    "uncached",
    "cache_read",
    "cache_write",
    "output",
    "true_input",
    "compactions",
    "tokens_saved",
    "evictions",
    "evicted_images",
    "miss_tokens",
    "conversation_tokens",
    "verbatim_tokens",
    "summary_tokens",
)


def combine(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One seed's runs of one policy over all traces, added up."""
    out: dict[str, Any] = {k: sum(r.get(k, 0) for r in rows) for k in SUM_FIELDS}
    for k in {k for r in rows for k in r if k.startswith(("miss_", "failures_")) and k != "miss_tokens"}:
        out[k] = sum(r.get(k, 0) or 0 for r in rows)
    total_in = out["uncached"] + out["cache_read"] + out["cache_write"]
    out["cache_read_share"] = out["cache_read"] / total_in if total_in else 0.0
    weights = [max(1, r.get("requests", 1) - r.get("failed_requests", 0)) for r in rows]
    out["estimate_error_mean"] = sum(
        w * r.get("estimate_error_mean", 0.0) for w, r in zip(weights, rows, strict=True)
    ) / max(1, sum(weights))
    out["estimate_error_worst"] = max(
        (r.get("estimate_error_worst", 0.0) for r in rows), key=abs, default=0.0
    )
    out["failed_runs"] = sum(1 for r in rows if r.get("status", "ok") != "ok")
    conv = out["conversation_tokens"]
    out["retained_share"] = out["verbatim_tokens"] / conv if conv else 1.0
    out["low_trigger_runs"] = sum(
        1
        for r in rows
        if r.get("trigger", "") != "" and int(r["trigger"]) <= int(r.get("static_prefix") or 0)
    )
    return out


@dataclass
class PolicyRow:
    policy: str
    runs: int
    seeds: int
    stats: dict[str, Stat] = field(default_factory=dict)
    rel_best: float = 1.0
    verdict: str = ""
    served: str = ""  # the provider · model pair(s) its runs were served on
    per_seed: dict[int, float] = field(default_factory=dict)  # summed cost per seed (paired verdicts)

    @property
    def flags(self) -> list[str]:
        """Why the cell is degenerate (bench/retention.py); empty when it is not."""
        s = self.stats
        zero = Stat(0.0, 0.0, 0.0, 0)
        return flags(
            s.get("compactions", zero).mean,
            s.get("requests", zero).mean,
            s.get("low_trigger_runs", zero).mean,
        )


def compare_rows(rows: list[dict[str, Any]]) -> list[PolicyRow]:
    """Policy rows from run rows (one per trace x policy x seed), in the order policies appear."""
    by: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["policy"]][int(r["seed"])].append(r)
    out = []
    for pol, seeds in by.items():
        per_seed = [combine(rs) for _, rs in sorted(seeds.items())]
        keys = sorted({k for c in per_seed for k in c})
        pr = PolicyRow(pol, sum(len(v) for v in seeds.values()), len(seeds))
        pr.stats = {k: stat([float(c.get(k, 0)) for c in per_seed]) for k in keys}
        pr.served = ", ".join(served_pairs([r for rs in seeds.values() for r in rs]))
        pr.per_seed = {seed: float(c["cost"]) for seed, c in zip(sorted(seeds), per_seed, strict=True)}
        out.append(pr)
    rank(out)
    return out


def compare_runs(
    traces: list[str],
    policies: list[str],
    seeds: list[int],
    budget: int | None = None,
    provider: str | None = None,
    options: RunOptions | None = None,
    jobs: int | None = None,
    model: str | None = None,
) -> tuple[list[dict[str, Any]], list[PolicyRow]]:
    """Every policy on every trace and seed (`ctxbench compare`): the flat rows, ordered by the
    policies as given, trace and seed, and the table rows they combine into. `jobs` worker
    processes (default: all cores, 1 for fewer than 8 runs); every run on the trace's provider and
    model unless `provider`/`model` say otherwise (bench/runs.py `serve`)."""
    from ctxbench.bench.runs import cached_policy, make_tasks  # the engine only when runs are made
    from ctxbench.bench.sweep import execute

    tasks = make_tasks(traces, policies, [budget], [provider], seeds, options, model)
    rows: list[dict[str, Any]] = []
    jobs = jobs or (1 if len(tasks) < 8 else min(len(tasks), os.cpu_count() or 1))
    execute(tasks, rows.append, jobs)
    pset = options.policy_set if options else ()
    order = {cached_policy(p, pset).name: i for i, p in reversed(list(enumerate(policies)))}
    rows.sort(key=lambda r: (order[r["policy"]], r["trace"], r["seed"]))
    return rows, compare_rows(rows)


def failed_runs(p: PolicyRow) -> int:
    """How many of the policy's runs ended with an error (any seed, any trace)."""
    s = p.stats.get("failed_runs")
    return round(s.mean * s.n) if s else 0


def rank(prs: list[PolicyRow]) -> None:
    """Cost relative to the cheapest policy whose every run reached the end, and each row's
    verdict (bench/verdicts.py): a run that ended with an error (cut short, so cheap) is never
    ranked; such rows say FAILED instead."""
    rank_verdicts(prs, {id(p): failed_runs(p) for p in prs})


def served_pairs(rows: list[dict[str, Any]]) -> list[str]:
    """Each distinct "provider · model" the runs were served on, in order of first appearance
    (the one choice of bench/runs.py `serve`); rows of older results lack the model."""
    seen: dict[str, None] = {}
    for r in rows:
        model = r.get("model") or "?"
        seen[f"{r.get('provider', '?')} · {model}"] = None
    return list(seen)


def served_on(rows: list[dict[str, Any]]) -> str:
    """The provider and model a table's runs were served on, for its title."""
    pairs = served_pairs(rows)
    if len(pairs) == 1:
        return f"served on {pairs[0]}"
    return f"served on {len(pairs)} provider · model pairs (column `served on`)"


def nothing_varied(prs: list[PolicyRow]) -> bool:
    """More than one seed, and every policy's every number was the same under each of them."""
    return any(p.seeds > 1 for p in prs) and all(
        s.hi - s.lo <= 1e-9 * max(1.0, abs(s.mean)) for p in prs for s in p.stats.values()
    )


NOTHING_VARIED = (
    "note: every seed gave the same result: nothing in these traces, policies and providers draws "
    "from the seed (a gen: trace without seed= takes the run's seed; add faults or best-effort "
    "eviction to the provider for draws)"
)


def _active(prs: list[PolicyRow], prefix: str, order: tuple[str, ...] = ()) -> list[str]:
    keys = {k for p in prs for k, s in p.stats.items() if k.startswith(prefix) and s.mean}
    keys.discard("miss_tokens")
    known = [f"{prefix}{c}" for c in order if f"{prefix}{c}" in keys]
    return known + sorted(keys - set(known))


def _spread(s: Stat) -> bool:
    """Whether a cell shows its ± : more than one seed, and they did not all give the same value
    (no `±0.0000` in every cell of a deterministic table, issue 31 #9)."""
    return s.n > 1 and s.half > 1e-9 * max(1.0, abs(s.mean))


def _fmt(s: Stat, kind: str) -> str:
    if kind == "$":
        v = f"${s.mean:,.4f}"
        return v + (f" ±{s.half:,.4f}" if _spread(s) else "")
    if kind == "%":
        v = f"{s.mean:.1%}"
        return v + (f" ±{s.half:.1%}" if _spread(s) else "")
    if kind == "+%":
        v = f"{s.mean:+.1%}"
        return v + (f" ±{s.half:.1%}" if _spread(s) else "")
    v = f"{s.mean:,.0f}" if s.mean == int(s.mean) or abs(s.mean) >= 100 else f"{s.mean:,.1f}"
    return v + (f" ±{s.half:,.1f}" if _spread(s) else "")


def _vs_best(p: PolicyRow) -> str:
    """Cost over the best finished policy's; none for a FAILED row, whose runs were cut short
    (so cheap) and are not comparable (issue 31 #9)."""
    if failed_runs(p) or math.isnan(p.rel_best):
        return "-"
    return f"{p.rel_best:.2f}x"


def _with_zeros(p: PolicyRow) -> dict[str, Stat]:
    """The policy's stats, with a zero for metrics only other policies have."""
    zero = Stat(0.0, 0.0, 0.0, p.seeds)
    return defaultdict(lambda: zero, p.stats)


def table(prs: list[PolicyRow]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the human table (terminal and Markdown)."""
    misses = _active(prs, "miss_", MISS_CAUSES)
    fails = _active(prs, "failures_")
    head = [
        "policy",
        "cost",
        "vs best",
        "read from cache",
        *(f"miss {m[5:]}" for m in misses),
        "compactions",
        "tokens saved",
        "evictions",
        *(f"req. errors {f[9:]}" for f in fails),
        "runs ended by error",
        "est. err mean",
        "est. err worst",
        "verdict",
        "retained verbatim",
        "summary tokens",
        "flags",
        "served on",
    ]
    body = []
    for p in prs:
        s = _with_zeros(p)
        body.append(
            [
                p.policy,
                _fmt(s["cost"], "$"),
                _vs_best(p),
                _fmt(s["cache_read_share"], "%"),
                *(_fmt(s[m], "n") for m in misses),
                _fmt(s["compactions"], "n"),
                _fmt(s["tokens_saved"], "n"),
                _fmt(s["evictions"], "n"),
                *(_fmt(s[f], "n") for f in fails),
                f"{failed_runs(p):,}",  # a count of runs over every seed, never a mean (issue 31 #2)
                _fmt(s["estimate_error_mean"], "+%"),
                _fmt(s["estimate_error_worst"], "+%"),
                p.verdict,
                "-" if not s["conversation_tokens"].mean else _fmt(s["retained_share"], "%"),
                _fmt(s["summary_tokens"], "n"),
                "; ".join(p.flags),
                p.served,
            ]
        )
    return head, body


def format_terminal(prs: list[PolicyRow], title: str = "") -> str:
    head, body = table(prs)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = [title] if title else []

    def fmt(r: list[str]) -> str:
        cells = zip(r, widths, strict=True)
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))

    lines.append(fmt(head).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += [fmt(r).rstrip() for r in body]
    return "\n".join(lines)


def format_markdown(prs: list[PolicyRow], title: str = "") -> str:
    head, body = table(prs)
    lines = [f"**{title}**", ""] if title else []
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


def flat(prs: list[PolicyRow]) -> list[dict[str, Any]]:
    """Machine rows: every metric as mean, lo, hi (the 95 % interval)."""
    keys = sorted({k for p in prs for k in p.stats})
    out = []
    for p in prs:
        d: dict[str, Any] = {
            "policy": p.policy,
            "runs": p.runs,
            "seeds": p.seeds,
            "cost_rel_best": None if math.isnan(p.rel_best) else round(p.rel_best, 6),
            "failed_runs_total": failed_runs(p),
            "verdict": p.verdict,
            "flags": list(p.flags),
            "served": p.served,
        }
        for k in keys:
            s = p.stats.get(k, Stat(0.0, 0.0, 0.0, p.seeds))
            d[k] = round(s.mean, 9)
            d[f"{k}_lo"] = round(s.lo, 9)
            d[f"{k}_hi"] = round(s.hi, 9)
        out.append(d)
    return out


def format_csv(prs: list[PolicyRow]) -> str:
    rows = flat(prs)
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def format_json(prs: list[PolicyRow], meta: dict[str, Any] | None = None) -> str:
    varied = not nothing_varied(prs)
    return json.dumps({**(meta or {}), "seeds_varied": varied, "policies": flat(prs)}, indent=2)


FORMATS = ("terminal", "markdown", "csv", "json")


def render(prs: list[PolicyRow], fmt: str, title: str = "", meta: dict[str, Any] | None = None) -> str:
    note = f"\n\n{NOTHING_VARIED}" if nothing_varied(prs) else ""
    if fmt == "terminal":
        return format_terminal(prs, title) + note
    if fmt == "markdown":
        return format_markdown(prs, title) + note
    if fmt == "csv":
        return format_csv(prs)
    if fmt == "json":
        return format_json(prs, meta)
    raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
