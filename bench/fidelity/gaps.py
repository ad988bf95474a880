"""How long caches keep an entry, from the idle gaps of real logs (bench/fidelity/measure.py):
for each request, the gap since the previous one and whether it read at least half of that
request's prompt (kept) or not (lost). The counts set a profile's `ttl` where the provider
publishes none or a range (sim/data/profiles/zai.yaml, deepseek.yaml, claude-relay.yaml), on the
development part only."""

from __future__ import annotations

import itertools
from collections import Counter

from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.bench.fidelity.unsure import other_backend, past_ttl

# the gap bins (seconds) of the retention counts: each bin from one bound to the next
GAP_BOUNDS = (0, 300, 600, 900, 1200, 1800, 3600, 7200, 21_600, 86_400, 259_200)


def prompt_of(r: RequestCompare) -> int:
    """The billed prompt a request read from and wrote to the cache (what the next may read)."""
    return r.billed.input_tokens + r.billed.cache_read


def served_by_first_backend(sf: SessionFidelity, r: RequestCompare) -> bool:
    """Whether `r` ran on the vendor of the conversation's first model: the cache whose misses the
    conversation is counted under (interval.py `miss_kind`). A Claude Code conversation that
    switches backend mid-way (a relay's Claude model, then zai's glm-5.1) has its other backend's
    requests left out: they are another cache's, and counting them under the first gave one such
    conversation 27 % of the relays' reads at a 34 % miss rate (ahmedarafa994/eq-prediction,
    agent-acompact-2d537417)."""
    return not r.model or not other_backend(r.model, sf.model)


def _pairs(sf: SessionFidelity) -> list[tuple[RequestCompare, RequestCompare]]:
    """Consecutive requests of one backend (a switch of backend is another cache)."""
    return [
        (a, b) for a, b in itertools.pairwise(sf.requests)
        if served_by_first_backend(sf, a) and served_by_first_backend(sf, b)
    ]  # fmt: skip


def count_relay(sf: SessionFidelity, acc: Counter[str]) -> None:
    """Relay requests by the gap since the previous one, and those that read less than half of
    the previous prompt."""
    for a, b in _pairs(sf):
        late = "after 5 min" if b.t - a.t >= 300 else "within 5 min"
        acc[late] += 1
        acc[f"{late}, read < half"] += b.billed.cache_read < prompt_of(a) / 2


def gap_bin(gap: float, bounds: tuple[int, ...] = GAP_BOUNDS) -> str:
    """The bin of `bounds` (retention bins by default) `gap` seconds fall in, e.g. "300-600 s" or
    "259200+ s"."""
    lo = max(b for b in bounds if gap >= b)
    i = bounds.index(lo)
    return f"{lo}-{bounds[i + 1]} s" if i + 1 < len(bounds) else f"{lo}+ s"


def count_retention(sf: SessionFidelity, acc: Counter[str]) -> None:
    """Each request after the first by the gap since the previous one: kept (it read at least half
    of the previous prompt) or lost."""
    for a, b in _pairs(sf):
        kept = b.billed.cache_read >= prompt_of(a) / 2
        acc[f"{gap_bin(b.t - a.t)} {'kept' if kept else 'lost'}"] += 1


# the bins (seconds past the TTL) of the expiry breaks counted at the TTL's edge (unsure.py TTL_EDGE)
EDGE_BOUNDS = (0, 20, 40, 100)


def count_edge(sf: SessionFidelity, ttls: tuple[float, ...], acc: Counter[str]) -> None:
    """The `ttl_expiry` breaks of a session on Anthropic's cache (entries living `ttls` seconds,
    unsure.py `entry_lives`) sent less than 100 s past a TTL, by how far past it, and those whose
    bill read at least half the previous prompt (the entry was still there): the evidence of
    unsure.py `TTL_EDGE`. Requests on another backend are another cache's and left out."""
    for a, b in _pairs(sf):
        past = past_ttl(b.t - a.t, ttls)
        if b.miss_cause != "ttl_expiry" or not 0 <= past < EDGE_BOUNDS[-1]:
            continue
        key = f"{gap_bin(past, EDGE_BOUNDS)} past"
        acc[key] += 1
        acc[f"{key}, kept"] += b.billed.cache_read >= prompt_of(a) / 2
