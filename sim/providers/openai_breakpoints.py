"""OpenAI GPT-5.6+ prompt cache: exact matching at breakpoints (providers.md §2.2).

- Writes: in `implicit` mode (default) the service places an implicit breakpoint at the latest
  user or tool message and writes it plus the latest 3 explicit breakpoints; in `explicit` mode
  the latest 4 explicit breakpoints; more are ignored, no error ("only the last four are
  written"). Explicit mode with no markers caches nothing [DOC O-PC; O-SDK].
- Reads: exact prefix match at a breakpoint, no fallback to unmarked prefixes; the service
  "considers up to the latest 80 breakpoints in the conversation" (SDK docstring; the guide
  says 50 → `read_window` setting). Modelled as: the request's own breakpoints plus the latest
  `read_window` entries written under the same `prompt_cache_key`; longest live match wins.
- Minimum: strict 1,024 tokens through the breakpoint, not rounded [O-SDK].
- TTL: 30 minutes from the write, refreshed on reuse at no charge [O-PC].
- Prices: written tokens at 1.25×, reads 0.1× (prices.yaml `cache_write_5m`, `cache_read`).
- Usage: Responses `input_tokens_details.{cached_tokens, cache_write_tokens}` (§2.3).

Per call: (breakpoints + read_window) dictionary probes, independent of prompt length.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.provider import Faults, Latency, Outcome, Request, Usage, price
from ctxbench.sim.providers.common import DialectProvider
from ctxbench.sim.providers.dialects import fault_error


@dataclass(frozen=True)
class BreakpointConfig:
    dialect: str = "openai-responses"
    mode: str = "implicit"  # implicit | explicit (prompt_cache_options.mode, §2.2)
    max_writes: int = 4  # "only the last four are written"
    read_window: int = 80  # SDK docstring 80 vs guide 50 (providers.md §9 conflict)
    ttl: float = 1800.0  # prompt_cache_options.ttl "30m"
    min_cacheable: int | None = None  # None: the model's (1,024 strict)
    max_entries: int | None = None  # best-effort LRU capacity (entries); None = unbounded
    random_evict_rate: float = 0.0
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)


class _Entry:
    __slots__ = ("expires", "pos", "ready", "tokens")

    def __init__(self, tokens: int, pos: int, expires: float, ready: float) -> None:
        self.tokens = tokens
        self.pos = pos
        self.expires = expires
        self.ready = ready


def implicit_breakpoint(req: Request) -> int:
    """Last block of the latest user (or tool-result) message in the request, or -1."""
    tr = req.tr
    for m in range(len(tr.messages) - 1, -1, -1):
        start = tr.msg_starts[m]
        if start >= req.n:
            continue
        if tr.messages[m].role == "user":
            return min(tr.message_end(m), req.n) - 1
        if len(tr.messages) - m > 8:  # bounded walk: a tail of assistant turns has no user message
            break
    return -1


class OpenAIBreakpointProvider(DialectProvider):
    def __init__(
        self, name: str, model: ModelInfo, prices: Prices, cfg: BreakpointConfig, seed: int = 0
    ) -> None:
        super().__init__(name, model, prices, cfg, seed)
        self.entries: OrderedDict[int, _Entry] = OrderedDict()
        self.gone: dict[int, str] = {}
        self.recent: dict[str, deque[int]] = {}  # cache key -> hashes of its latest writes
        self._left: dict[str, int] = {}  # conversation -> hash its last call left cached
        self._why: dict[
            str, tuple[int, str]
        ] = {}  # conversation -> (that hash, reason before this call's writes)

    def write_points(self, req: Request) -> list[int]:
        explicit = sorted({b for b, _ttl in req.breakpoints if 0 <= b < req.n})
        if self.cfg.mode == "explicit":
            return explicit[-self.cfg.max_writes :]
        imp = implicit_breakpoint(req)
        rest = (
            [b for b in explicit if b != imp][-(self.cfg.max_writes - 1) :] if self.cfg.max_writes > 1 else []
        )
        return sorted({*rest, *([imp] if imp >= 0 else [])})

    def _live(self, h: int, now: float) -> _Entry | None:
        e = self.entries.get(h)
        if e is None:
            return None
        if e.expires <= now:
            del self.entries[h]
            self.gone[h] = "ttl_expiry"
            return None
        return e

    def lookup(self, req: Request, points: list[int], now: float) -> tuple[int, int]:
        key = req.cache_key or ""
        hashes = req.tr.hashes
        cands = {(hashes[p], p) for p in points}
        for h in self.recent.get(key, ()):
            e = self.entries.get(h)
            if e is not None and e.pos < req.n and hashes[e.pos] == h:
                cands.add((h, e.pos))
        best, best_pos = 0, -1
        for h, p in cands:
            e = self._live(h, now)
            # the read is this request's own prefix: an imported trace sizes the same content
            # per request, so the entry's size when written may exceed this prompt
            tokens = req.tr.cum_tokens[p]
            if e is None or e.ready > now or tokens <= best:
                continue
            if self.cfg.random_evict_rate and self.rng.random() < self.cfg.random_evict_rate:
                del self.entries[h]
                self.gone[h] = "evicted"
                continue
            best, best_pos = tokens, p
        return best, best_pos

    def call(self, req: Request, now: float) -> Outcome:
        rejected, fault = self._admit(req, now)
        if rejected is not None:
            return rejected
        total = req.input_tokens
        points = self.write_points(req)
        read, read_pos = self.lookup(req, points, now)
        tr = req.tr
        lat = self.cfg.latency
        if read_pos >= 0:  # refresh on reuse, no write charge
            e = self.entries[tr.hashes[read_pos]]
            e.expires = now + self.cfg.ttl
            self.entries.move_to_end(tr.hashes[read_pos])
        left = self._left.get(req.conversation)
        if left is not None:
            self._why[req.conversation] = (left, self._reason(left, now))
        top, top_pos = read, read_pos
        writes = [p for p in points if tr.cum_tokens[p] > read and tr.cum_tokens[p] >= self.min_cacheable]
        if writes:
            top_pos = max(writes)
            top = tr.cum_tokens[top_pos]
        uncached = total - top
        ttft = lat.ttft(total - read)
        output = 0 if fault == "stream_error" else req.output_tokens
        key = req.cache_key or ""
        recent = self.recent.setdefault(key, deque(maxlen=self.cfg.read_window))
        for p in writes:
            h = tr.hashes[p]
            self.entries.pop(h, None)
            self.entries[h] = _Entry(tr.cum_tokens[p], p, now + self.cfg.ttl, now + ttft)
            self.gone.pop(h, None)
            recent.append(h)
        cap = self.cfg.max_entries
        while cap is not None and len(self.entries) > cap:
            h = next(iter(self.entries))
            del self.entries[h]
            self.gone[h] = "evicted"
        if top_pos >= 0:
            self._left[req.conversation] = tr.hashes[top_pos]
        usage = Usage(uncached=uncached, cache_read=read, cache_write_5m=top - read, output=output)
        err = fault_error(self.cfg.dialect, fault, None) if fault == "stream_error" else None
        return Outcome(
            usage,
            price(self.prices, usage),
            ttft,
            ttft + output / lat.output_tps,
            err,
            top_pos,
            "",
            self.wire,
        )

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        h = req.tr.hashes[pos]
        if req.tr.cum_tokens[pos] < self.min_cacheable:
            return "below_minimum"
        snap = self._why.get(req.conversation)
        if snap is not None and snap[0] == h:
            return snap[1]
        return self._reason(h, now)

    def _reason(self, h: int, now: float) -> str:
        e = self.entries.get(h)
        if e is None:
            return self.gone.get(h, "not_written")
        if e.expires <= now:
            return "ttl_expiry"
        if e.ready > now:
            return "not_ready"
        return "lookback_exceeded"  # live, but outside the latest `read_window` breakpoints
