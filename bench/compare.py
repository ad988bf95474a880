"""Compare policies on the same traces: one row per policy, computed from run rows afterwards.

Per seed a policy's runs over all traces are added up (cost, tokens, misses, compactions, ...);
over seeds each number is a mean with a 95 % interval (Student t). When the best policy's
interval overlaps another's, the gap is smaller than the spread and that row says so
(peers.md "Ideas worth absorbing" 2: honest verdicts). Outputs: terminal, Markdown, CSV, JSON.
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

from ctxbench.sim.core.records import MISS_CAUSES

if TYPE_CHECKING:
    from ctxbench.bench.runs import RunOptions

# two-sided 95 % Student t quantiles by degrees of freedom (standard table); 1.96 beyond 30
_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)

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
)


@dataclass(frozen=True)
class Stat:
    mean: float
    lo: float
    hi: float
    n: int

    @property
    def half(self) -> float:
        return (self.hi - self.lo) / 2


def stat(values: list[float]) -> Stat:
    """Mean and 95 % interval; the interval is the point itself for one value."""
    n = len(values)
    if n == 0:
        return Stat(0.0, 0.0, 0.0, 0)
    m = sum(values) / n
    if n == 1:
        return Stat(m, m, m, 1)
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    h = t * sd / math.sqrt(n)
    return Stat(m, m - h, m + h, n)


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
    return out


@dataclass
class PolicyRow:
    policy: str
    runs: int
    seeds: int
    stats: dict[str, Stat] = field(default_factory=dict)
    rel_best: float = 1.0
    verdict: str = ""


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
) -> tuple[list[dict[str, Any]], list[PolicyRow]]:
    """Every policy on every trace and seed (`ctxbench compare`): the flat rows, ordered by the
    policies as given, trace and seed, and the table rows they combine into. `jobs` worker
    processes (default: all cores, 1 for fewer than 8 runs)."""
    from ctxbench.bench.runs import cached_policy, make_tasks  # the engine only when runs are made
    from ctxbench.bench.sweep import execute

    tasks = make_tasks(traces, policies, [budget], [provider], seeds, options)
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
    """Cost relative to the cheapest policy whose every run reached the end: a run that ended
    with an error (cut short, so cheap) is never ranked best; such rows say FAILED instead."""
    finished = [p for p in prs if not failed_runs(p)]
    best = min(finished, key=lambda p: p.stats["cost"].mean) if finished else None
    for p in prs:
        c = p.stats["cost"]
        ref = best.stats["cost"].mean if best else 0.0
        p.rel_best = c.mean / ref if ref else float("nan")
        if failed_runs(p):
            p.verdict = f"FAILED ({failed_runs(p)} of {p.runs} runs ended by an error)"
        elif p is best:
            p.verdict = "best"
        elif best is not None and p.seeds > 1 and c.lo <= best.stats["cost"].hi:
            p.verdict = "NOT SUPPORTED (gap < spread)"


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


def _fmt(s: Stat, kind: str) -> str:
    if kind == "$":
        v = f"${s.mean:,.4f}"
        return v + (f" ±{s.half:,.4f}" if s.n > 1 else "")
    if kind == "%":
        v = f"{s.mean:.1%}"
        return v + (f" ±{s.half:.1%}" if s.n > 1 else "")
    if kind == "+%":
        v = f"{s.mean:+.1%}"
        return v + (f" ±{s.half:.1%}" if s.n > 1 else "")
    v = f"{s.mean:,.0f}" if s.mean == int(s.mean) or abs(s.mean) >= 100 else f"{s.mean:,.1f}"
    return v + (f" ±{s.half:,.1f}" if s.n > 1 and s.half else "")


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
    ]
    body = []
    for p in prs:
        s = _with_zeros(p)
        body.append(
            [
                p.policy,
                _fmt(s["cost"], "$"),
                "-" if math.isnan(p.rel_best) else f"{p.rel_best:.2f}x",
                _fmt(s["cache_read_share"], "%"),
                *(_fmt(s[m], "n") for m in misses),
                _fmt(s["compactions"], "n"),
                _fmt(s["tokens_saved"], "n"),
                _fmt(s["evictions"], "n"),
                *(_fmt(s[f], "n") for f in fails),
                _fmt(s["failed_runs"], "n"),
                _fmt(s["estimate_error_mean"], "+%"),
                _fmt(s["estimate_error_worst"], "+%"),
                p.verdict,
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
