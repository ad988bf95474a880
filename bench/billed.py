"""What the provider billed, summed from the recorded usage of an imported log: per session (a
main conversation and its sub-agents, as ccusage's `session` view groups them) the uncached
input, output, cache writes (5m + 1h), cache reads and their cost at the catalog's prices
(sim/catalog.py; per request, so long-context tiers apply where a prompt exceeds them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxbench.sim.catalog import CatalogError, Prices, prices
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
    cost: float  # of the priced requests only
    unpriced: tuple[str, ...] = ()  # why some requests have no cost: unknown models (H-20)


def billed_totals(traces: list[Trace], model: str | None = None) -> BilledTotals:
    """The sums of every billed request of `traces`, priced as each trace's model (or `model`).
    The tokens of a conversation on a model without prices are counted; its cost is not guessed:
    the catalog's error (closest known ids, the options that add one) goes to `unpriced`."""
    n = i = o = w = w1 = r = 0
    cost = 0.0
    unpriced: list[str] = []
    for tr in traces:
        usages = [ev.usage for ev in tr.events if isinstance(ev, MessageEvent) and ev.usage is not None]
        try:  # a conversation without billed requests needs no price
            pr: Prices | None = prices(model or tr.header.model) if usages else None
        except CatalogError as e:
            pr = None
            unpriced.append(str(e))
        for u in usages:
            n += 1
            i += u.input_tokens
            o += u.output_tokens
            w += u.cache_write_5m + u.cache_write_1h
            w1 += u.cache_write_1h
            r += u.cache_read
            if pr is not None:
                cost += pr.cost(
                    u.input_tokens, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output_tokens
                )
    return BilledTotals(n, i, o, w, w1, r, cost, tuple(dict.fromkeys(unpriced)))


def session_totals(path: Path) -> BilledTotals:
    """Billed totals of one Claude Code session file with its sub-agents."""
    return billed_totals(list(import_paths([path]).traces))
