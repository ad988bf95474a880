"""What the provider billed, summed from the recorded usage of an imported log: per session (a
main conversation and its sub-agents, as ccusage's `session` view groups them) the uncached
input, output, cache writes (5m + 1h), cache reads and their cost at the catalog's prices
(sim/catalog.py; per request, so long-context tiers apply where a prompt exceeds them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxbench.sim.catalog import prices
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent, Trace


@dataclass(frozen=True)
class BilledTotals:
    requests: int
    input: int  # uncached input (Anthropic `input_tokens`)
    output: int
    cache_write: int  # 5m + 1h
    cache_write_1h: int
    cache_read: int
    cost: float


def billed_totals(traces: list[Trace]) -> BilledTotals:
    n = i = o = w = w1 = r = 0
    cost = 0.0
    for tr in traces:
        pr = prices(tr.header.model)
        for ev in tr.events:
            if not isinstance(ev, MessageEvent) or ev.usage is None:
                continue
            u = ev.usage
            n += 1
            i += u.input_tokens
            o += u.output_tokens
            w += u.cache_write_5m + u.cache_write_1h
            w1 += u.cache_write_1h
            r += u.cache_read
            cost += pr.cost(u.input_tokens, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output_tokens)
    return BilledTotals(n, i, o, w, w1, r, cost)


def session_totals(path: Path) -> BilledTotals:
    """Billed totals of one Claude Code session file with its sub-agents."""
    return billed_totals(list(import_paths([path]).traces))
