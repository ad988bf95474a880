"""Gemini explicit context caching: `cachedContents` resources with storage billed per token-hour.

(Gemini *implicit* caching is the automatic-prefix model, `auto_prefix.py`, with the `gemini`
dialect: see profile `gemini-implicit`.)

providers.md §3 [DOC G-generate-content/caching]: a cached content is a prefix of the prompt,
created explicitly, usable only with its model; "If not set, the TTL defaults to 1 hour … no
minimum or maximum bounds"; only the expiry can be changed (reuse does not refresh it); creation
is billed as normal input; reads at the model's context-caching price; storage per 1M tokens per
hour, a rate per model (prices.yaml `storage_per_mtok_hour`). Token limits include cached tokens.

How a policy drives it here: the request's *last* breakpoint names the prefix to keep as a
resource (OpenRouter does the same for Gemini: "only the last breakpoint is used", §5). A request
uses the longest live resource of its conversation that prefixes it; if its last breakpoint lies
beyond, a new resource is created there (billed as input, `cache_write_5m` = input price in
prices.yaml) and, with `max_resources` = 1, the older one is deleted. Storage is billed
pro rata to each request for the token-hours its conversation's resources were held since the
previous request (`Outcome.cost` includes it); storage after a conversation's last request is
not billed (the harness is assumed to delete its resources at the end).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.profiles import ProfileError
from ctxbench.sim.core.provider import Faults, Latency, Outcome, Request, Usage, price
from ctxbench.sim.providers.common import DialectProvider
from ctxbench.sim.providers.dialects import fault_error


@dataclass(frozen=True)
class GeminiExplicitConfig:
    dialect: str = "gemini"
    ttl: float = 3600.0  # "the TTL defaults to 1 hour" [DOC G-caching]
    storage_per_mtok_hour: float | None = None  # None: the model's price row (prices.yaml, §3)
    max_resources: int = 1  # live resources per conversation; creating one more deletes the oldest
    min_cacheable: int | None = None  # None: the model's (explicit minimum UNCONFIRMED, §9)
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)


@dataclass
class _Resource:
    h: int
    pos: int
    tokens: int
    expires: float
    billed_to: float  # storage billed up to this time


class GeminiExplicitProvider(DialectProvider):
    def __init__(
        self, name: str, model: ModelInfo, prices: Prices, cfg: GeminiExplicitConfig, seed: int = 0
    ) -> None:
        super().__init__(name, model, prices, cfg, seed)
        self.resources: dict[str, list[_Resource]] = {}
        self.expired: set[int] = set()
        self.deleted: set[int] = set()
        self.storage_cost = 0.0
        rate = cfg.storage_per_mtok_hour
        if rate is None:
            rate = prices.storage_per_mtok_hour
        if rate is None:
            raise ProfileError(
                f"gemini-explicit: no storage price for model {prices.model!r} (its prices.yaml row names "
                "no storage_per_mtok_hour); give it with --provider-set storage_per_mtok_hour=RATE "
                "(USD per 1M tokens·hour) or in a --prices row"
            )
        self.storage_rate = rate

    def _owner(self, req: Request) -> str:
        return req.cache_key or req.conversation

    def _storage(self, res: list[_Resource], now: float) -> float:
        """Bill storage held since the last bill; drop expired resources."""
        cost = 0.0
        keep = []
        for r in res:
            until = min(now, r.expires)
            if until > r.billed_to:
                cost += r.tokens * self.storage_rate * (until - r.billed_to) / 3600 / 1e6
                r.billed_to = until
            if r.expires > now:
                keep.append(r)
            else:
                self.expired.add(r.h)
        res[:] = keep
        return cost

    def call(self, req: Request, now: float) -> Outcome:
        rejected, fault = self._admit(req, now)
        if rejected is not None:
            return rejected
        total = req.input_tokens
        tr = req.tr
        res = self.resources.setdefault(self._owner(req), [])
        storage = self._storage(res, now)
        read, read_pos = 0, -1
        for r in res:
            if r.pos < req.n and tr.hashes[r.pos] == r.h and r.tokens > read:
                read, read_pos = r.tokens, r.pos
        top, top_pos = read, read_pos
        last = max((b for b, _ in req.breakpoints if b < req.n), default=-1)
        if last >= 0 and tr.cum_tokens[last] > read and tr.cum_tokens[last] >= self.min_cacheable:
            top, top_pos = tr.cum_tokens[last], last
            res.append(_Resource(tr.hashes[last], last, top, now + self.cfg.ttl, now))
            while len(res) > self.cfg.max_resources:
                storage += self._storage([res[0]], now)
                self.deleted.add(res.pop(0).h)
        lat = self.cfg.latency
        ttft = lat.ttft(total - read)
        output = 0 if fault == "stream_error" else req.output_tokens
        usage = Usage(uncached=total - top, cache_read=read, cache_write_5m=top - read, output=output)
        self.storage_cost += storage
        err = fault_error(self.cfg.dialect, fault, None) if fault == "stream_error" else None
        return Outcome(
            usage,
            price(self.prices, usage) + storage,
            ttft,
            ttft + output / lat.output_tps,
            err,
            top_pos,
            "",
            self.wire,
        )

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        h = req.tr.hashes[pos]
        if h in self.expired:
            return "ttl_expiry"
        if h in self.deleted:
            return "evicted"
        if req.tr.cum_tokens[pos] < self.min_cacheable:
            return "below_minimum"
        return "not_written"
