"""DeepSeek context caching on disk: prefix *units* that must match in full (providers.md §4).

[DOC DS-KV, fetched 2026-08-13]: "Each cached prefix is an independent, complete unit. A
subsequent request can only hit the cache if it fully matches a cache prefix unit." Units are
persisted at
1. request boundaries: the end of the user input and the end of the model output;
2. common prefixes detected across requests (A+B then A+C misses; then A is persisted; A+D hits);
3. fixed token intervals inside long inputs (size undocumented → `interval_tokens`, off by default).
"Cache construction takes seconds" (`ready_delay`); unused caches are cleared "within a few hours
to a few days" (`ttl`). Writes cost nothing extra; hits at the cache-hit price. Usage:
`prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` = `prompt_tokens`.

Finding the longest unit: the longest prefix this provider has *seen* (a `ChainStore`, binary
search), then units at that point and at message ends below it, at most `max_probes` of them.
The end-of-output unit is recorded when the next request of the conversation arrives carrying
that output (the reply's blocks exist only then); it became readable `ready_delay` after the
reply ended.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.provider import Faults, Latency, Outcome, Request, Usage, price
from ctxbench.sim.providers.chain_store import ChainStore
from ctxbench.sim.providers.common import DialectProvider
from ctxbench.sim.providers.dialects import fault_error


@dataclass(frozen=True)
class DeepSeekConfig:
    dialect: str = "deepseek"
    ttl: float = 6 * 3600.0  # "a few hours to a few days" (assumed 6 h within that range)
    ready_delay: float = 3.0  # "Cache construction takes seconds" (assumed 3 s)
    unit_tokens: int = 128  # measured under V4 (sim/data/profiles/deepseek.yaml); 64 in the 2024-08 doc
    interval_tokens: int | None = None  # fixed-interval units: size undocumented (UNCONFIRMED)
    max_probes: int = 64  # message boundaries probed below the longest seen prefix
    min_cacheable: int | None = None
    random_evict_rate: float = 0.0
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)


class _Unit:
    __slots__ = ("last_use", "ready", "tokens")

    def __init__(self, tokens: int, ready: float, now: float) -> None:
        self.tokens = tokens
        self.ready = ready
        self.last_use = now


class DeepSeekProvider(DialectProvider):
    def __init__(
        self, name: str, model: ModelInfo, prices: Prices, cfg: DeepSeekConfig, seed: int = 0
    ) -> None:
        super().__init__(name, model, prices, cfg, seed)
        self.seen = ChainStore(cfg.ttl)
        self.units: dict[int, _Unit] = {}
        self.gone: dict[int, str] = {}
        self.pending: dict[str, tuple[int, int, float]] = {}  # conv -> (hash at input end, n, output ready)
        self._called: tuple[str, int, float] | None = None
        self.before: dict[
            str, tuple[int, int, float]
        ] = {}  # conv -> the pending entry before the latest call

    def _unit(self, h: int, now: float) -> _Unit | None:
        u = self.units.get(h)
        if u is not None and u.last_use + self.cfg.ttl <= now:
            del self.units[h]
            self.gone[h] = "ttl_expiry"
            return None
        return u

    def _add(self, h: int, tokens: int, ready: float, now: float) -> None:
        if tokens < max(self.min_cacheable, self.cfg.unit_tokens) or h in self.units:
            return
        self.units[h] = _Unit(tokens, ready, now)
        self.gone.pop(h, None)

    def _output_unit(self, req: Request, now: float) -> None:
        """Persist the end of the previous reply once its blocks are visible (rule 1)."""
        pend = self.pending.get(req.conversation)
        if pend is None:
            return
        h, n_prev, ready = pend
        tr = req.tr
        if n_prev >= req.n or tr.hashes[n_prev - 1] != h:
            return
        m = bisect.bisect_left(tr.msg_starts, n_prev)
        if m < len(tr.messages) and tr.msg_starts[m] == n_prev and tr.messages[m].role == "assistant":
            end = min(tr.message_end(m), req.n) - 1
            self.seen.write(tr.hashes, tr.cum_tokens, end, now, now)  # the output was seen, too
            self._add(tr.hashes[end], tr.cum_tokens[end], ready, ready)

    def _candidates(self, req: Request, p: int) -> list[int]:
        tr = req.tr
        out = [p]
        m = bisect.bisect_right(tr.msg_starts, p) - 1
        while m >= 0 and len(out) < self.cfg.max_probes:
            end = tr.message_end(m) - 1
            if end < p:
                out.append(end)
            m -= 1
        if self.cfg.interval_tokens:
            k = tr.cum_tokens[p] // self.cfg.interval_tokens * self.cfg.interval_tokens
            q = bisect.bisect_left(tr.cum_tokens, k, 0, p + 1)
            if q <= p and tr.cum_tokens[q] == k:
                out.append(q)
        return out

    def lookup(self, req: Request, now: float) -> tuple[int, int, int]:
        """(tokens read, unit position, longest seen prefix position)."""
        tr = req.tr
        p = self.seen.longest(tr.hashes, req.n, now, ready_only=False)
        if p < 0:
            return 0, -1, -1
        best, best_pos = 0, -1
        for q in self._candidates(req, p):
            u = self._unit(tr.hashes[q], now)
            if u is None or u.ready > now or u.tokens <= best:
                continue
            if self.cfg.random_evict_rate and self.rng.random() < self.cfg.random_evict_rate:
                del self.units[tr.hashes[q]]
                self.gone[tr.hashes[q]] = "evicted"
                continue
            best, best_pos = u.tokens, q
        if best_pos >= 0:
            self.units[tr.hashes[best_pos]].last_use = now
        return best, best_pos, p

    def call(self, req: Request, now: float) -> Outcome:
        rejected, fault = self._admit(req, now)
        if rejected is not None:
            return rejected
        total = req.input_tokens
        self._called = (req.conversation, req.index, now)
        self.seen.expire(now)
        self._output_unit(req, now)
        tr, n = req.tr, req.n
        matched, _pos, seen_p = self.lookup(req, now)
        step = max(1, self.cfg.unit_tokens)
        read = matched // step * step
        lat = self.cfg.latency
        ttft = lat.ttft(total - read)
        output = 0 if fault == "stream_error" else req.output_tokens
        duration = ttft + output / lat.output_tps
        if 0 <= seen_p < n - 1:  # rule 2: the common prefix with an earlier request becomes a unit
            self._add(tr.hashes[seen_p], tr.cum_tokens[seen_p], now + ttft + self.cfg.ready_delay, now)
        cached_pos = -1
        if n > 0:
            self.seen.write(tr.hashes, tr.cum_tokens, n - 1, now, now)
            ready = now + duration + self.cfg.ready_delay
            self._add(tr.hashes[n - 1], total, ready, now)  # rule 1: end of the user input
            if tr.hashes[n - 1] in self.units:  # reported hits are whole storage units
                cached_pos = bisect.bisect_right(tr.cum_tokens, total // step * step, 0, n) - 1
            if fault is None:
                old = self.pending.get(req.conversation)
                if old is not None:
                    self.before[req.conversation] = old
                self.pending[req.conversation] = (tr.hashes[n - 1], n, ready)
        usage = Usage(uncached=total - read, cache_read=read, output=output)
        err = fault_error(self.cfg.dialect, fault, None) if fault == "stream_error" else None
        return Outcome(usage, price(self.prices, usage), ttft, duration, err, cached_pos, "", self.wire)

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        h = req.tr.hashes[pos]
        after = self._called == (req.conversation, req.index, now)  # asked after the call (else before)
        pend = (self.before if after else self.pending).get(req.conversation)
        if h not in self.units and pend is not None and pend[1] > pos and pend[1] <= req.n:
            h = pend[0] if req.tr.hashes[pend[1] - 1] == pend[0] else h  # the unit ending that input
        u = self.units.get(h)
        if u is None:
            if h in self.gone:
                return self.gone[h]
            return "below_minimum" if req.tr.cum_tokens[pos] < self.min_cacheable else "not_written"
        if u.last_use + self.cfg.ttl <= now:
            return "ttl_expiry"
        if u.ready > now:
            return "not_ready"
        return "lookback_exceeded"
