"""Automatic-prefix providers: longest cached prefix, no breakpoints, per-replica caches.

One model covers OpenAI ≤ 5.5 (providers.md §2.1: automatic ≥ 1,024 tokens, hits in 128-token
steps, per-machine caches routed by the first ~256 tokens + `prompt_cache_key`, overflow above
~15 RPM, writes free), Gemini implicit (§3: per-model minimum, ~3–5 min idle, reads 0.1×),
and Meta-style per-replica caches (H-22: `prompt_cache_key` → one replica, no key → spread).
Profiles in `sim/data/profiles/` set the numbers, each with its source.

Breakpoints on the request are ignored (these APIs have no markers). Every hit is reported at the
provider's granularity: the matched prefix (whole blocks) rounded down to `min + k·granularity`;
below the minimum nothing is read. A model whose reads fall on a coarser grid of its own (a
profile's `read_units`: gpt-5.5 and gpt-5.4-mini read 384 + 512·k tokens, not the documented
128·k) is rounded down to that grid instead (`read_grid`). After a successful call the whole
prompt is cached on the replica that served it (writes cost nothing: uncached input is billed at
the base price).
On the models a profile lists in `output_cached`, what a response generated stays readable too:
a request that extends the previous prompt of its conversation with that response (a tool call's
continuation, not a new user turn) reads into it, up to one step short of its end
(`AutoPrefixProvider._through_output`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.provider import Faults, Latency, Outcome, Request, Usage, price
from ctxbench.sim.providers.chain_store import ChainStore
from ctxbench.sim.providers.common import DialectProvider
from ctxbench.sim.providers.dialects import fault_error
from ctxbench.sim.providers.routing import ReplicaRouter, Route
from ctxbench.sim.providers.thinking import real_user


@dataclass(frozen=True)
class AutoConfig:
    dialect: str = "openai-chat"  # usage fields and error texts (sim/providers/dialects.py)
    min_cacheable: int | None = None  # None: the model's row in models.yaml
    granularity: int = 1  # hits are min + k·granularity tokens (OpenAI: 128, §2.1)
    ttl: float = 600.0  # idle seconds before an entry expires
    ready: str = "ttft"  # a written prefix is readable from the first token ("ttft") or the end ("end")
    ready_delay: float = 0.0  # extra seconds before a write is readable
    replicas: int = 1
    routing: str = "single"  # prefix | key | single (sim/providers/routing.py)
    route_tokens: int = 256
    overflow_rpm: float | None = None  # per (prefix, key) per minute; None = no overflow
    overflow_pool: int = 4  # machines one (prefix, key) can overflow to, home included
    capacity_tokens: int | None = None  # per replica, LRU; None = unbounded
    random_evict_rate: float = 0.0  # per hit: chance the entry was lost (best-effort caches)
    # What replacing or removing an image already sent does to the cache (appending new images
    # never does): "none" = only the prefix from the change on is lost (a plain prefix match);
    # "messages" = only the tools + system prefix stays readable (Anthropic's documented rule,
    # providers.md §1.6, "Images added/removed anywhere"); "all" = nothing is read. Judged against
    # the images of the conversation's previous request on that replica (its latest entry).
    image_change: Literal["none", "messages", "all"] = "none"
    # Model ids (prefixes: "gpt-5.4" covers gpt-5.4-mini) whose cache holds the tokens a response
    # generated as well as its prompt; the profile names the measurement each rests on.
    output_cached: tuple[str, ...] = ()
    # (model id, step, residue): that model's reads are `residue + k·step` tokens, at least the
    # minimum (`read_grid`); the profile names the measurement each rests on.
    read_units: tuple[tuple[str, int, int], ...] = ()
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)


def granular(matched: int, minimum: int, step: int) -> int:
    """Tokens reported as read: 0 below the minimum, else rounded down to minimum + k·step."""
    if matched < minimum or matched <= 0:
        return 0
    return minimum + (matched - minimum) // max(1, step) * max(1, step)


def read_grid(units: Iterable[tuple[str, int, int]], model: str, minimum: int, step: int) -> tuple[int, int]:
    """The smallest read and the step between reads of `model` (for `granular`): those of its
    `units` row (by model id), the first grid point at or above `minimum`; `minimum` and `step`
    when no row names it."""
    for name, unit, residue in units:
        if name == model:
            return grid_start(minimum, unit, residue), unit
    return minimum, step


def grid_start(minimum: int, step: int, residue: int) -> int:
    """The first point of the grid `residue + k·step` at or above `minimum`."""
    return residue + -(-max(0, minimum - residue) // step) * step


def lists_model(models: Iterable[str], model: str) -> bool:
    """`model` is one of `models` or a variant of one (a prefix: "gpt-5.4" lists gpt-5.4-mini)."""
    return any(model.startswith(m) for m in models)


class AutoPrefixProvider(DialectProvider):
    """A provider whose cache matches the longest prefix on the replica a request is routed to."""

    def __init__(self, name: str, model: ModelInfo, prices: Prices, cfg: AutoConfig, seed: int = 0) -> None:
        super().__init__(name, model, prices, cfg, seed)
        self.router = ReplicaRouter(
            cfg.replicas, cfg.routing, self.rng, cfg.route_tokens, cfg.overflow_rpm, cfg.overflow_pool
        )
        self.stores = [
            ChainStore(cfg.ttl, cfg.capacity_tokens, cfg.random_evict_rate, self.rng)
            for _ in range(self.router.replicas)
        ]
        self._planned: dict[tuple[str, int, float], Route] = {}  # route fixed by a pre-call diagnose
        self._called: tuple[str, int, float] | None = None  # (conversation, index, time) of the latest call
        self._route: dict[str, Route] = {}  # conversation -> route of its latest call
        self._served: dict[str, int] = {}  # conversation -> replica of its latest successful call
        self._left: dict[str, int] = {}  # conversation -> hash of the prefix its last call left cached
        self._images: dict[tuple[int, str], tuple[int, int]] = {}  # (replica, conv) -> (images, image hash)
        self._why: dict[
            str, tuple[int, str]
        ] = {}  # conversation -> (that hash, reason before this call's write)
        self._generated: dict[str, tuple[int, int]] = {}  # conversation -> (prompt end hash, output)
        self._grids: dict[str, tuple[int, int]] = {}  # model -> (smallest read, step): `read_grid`

    def call(self, req: Request, now: float) -> Outcome:
        rejected, fault = self._admit(req, now)
        if rejected is not None:
            return rejected
        total = req.input_tokens
        route = self._plan(req, now)
        self._planned.clear()
        self._called = (req.conversation, req.index, now)
        self._route[req.conversation] = route
        store = self.stores[route.replica]
        tr, n = req.tr, req.n
        p = store.lookup(tr.hashes, n, now)
        if self.cfg.image_change != "none" and p >= tr.system_end and self._image_changed(req, route.replica):
            p = tr.system_end - 1 if self.cfg.image_change == "messages" else -1
        matched = tr.cum_tokens[p] if p >= 0 else 0
        matched = min(total, matched + self._through_output(req, p))
        first, step = self._grid(req.model)
        read = granular(matched, first, step)
        left = self._left.get(req.conversation)
        if left is not None:  # diagnose against the state before this call writes (harness asks after)
            self._why[req.conversation] = (left, self._reason(left, req.conversation, route, now))
        uncached = total - read
        lat = self.cfg.latency
        ttft = lat.ttft(uncached)
        output = 0 if fault == "stream_error" else req.output_tokens
        duration = ttft + output / lat.output_tps
        cached_pos = -1
        if total >= self.min_cacheable and n > 0:
            ready = now + (ttft if self.cfg.ready == "ttft" else duration) + self.cfg.ready_delay
            store.write(tr.hashes, tr.cum_tokens, n - 1, now, ready, known=p)
            if self.cfg.image_change != "none":
                self._images[(route.replica, req.conversation)] = (req.images, tr.img_hashes[req.images])
            top = granular(total, first, step)
            cached_pos = bisect.bisect_right(tr.cum_tokens, top, 0, n) - 1
            if cached_pos >= 0:
                self._left[req.conversation] = tr.hashes[cached_pos]
            if output and lists_model(self.cfg.output_cached, req.model):
                self._generated[req.conversation] = (tr.hashes[n - 1], output)
            else:
                self._generated.pop(req.conversation, None)
        usage = Usage(uncached=uncached, cache_read=read, output=output)
        tag = f"replica-{route.replica}" + ("+overflow" if route.overflow else "")
        self._served[req.conversation] = route.replica
        err = fault_error(self.cfg.dialect, fault, None) if fault == "stream_error" else None
        return Outcome(
            usage,
            price(self.prices, usage),
            ttft,
            duration,
            err,
            cached_pos,
            tag,
            self.wire,
        )

    def _grid(self, model: str) -> tuple[int, int]:
        grid = self._grids.get(model)
        if grid is None:
            grid = self._grids[model] = read_grid(
                self.cfg.read_units, model, self.min_cacheable, self.cfg.granularity
            )
        return grid

    def _through_output(self, req: Request, p: int) -> int:
        """Tokens past the matched prefix that the conversation's previous response left readable
        (`AutoConfig.output_cached`): when the match ends where the previous prompt ended and no
        real user message follows it, its output less one step (the bill reads the previous prompt
        and output rounded down, one 128-token step short of their end: openai-auto.yaml). At a
        user turn the reasoning that opened the output is dropped from the prompt (OpenAI's
        reasoning guide), so the match ends with the previous prompt."""
        left = self._generated.get(req.conversation)
        tr = req.tr
        if left is None or p < 0 or tr.hashes[p] != left[0] or p + 1 >= req.n:
            return 0
        first, last = max(0, tr.message_at(p + 1)), tr.message_at(req.n - 1)
        if any(real_user(tr.messages[m]) for m in range(first, last + 1)):
            return 0
        return max(0, left[1] - self.cfg.granularity)

    def _image_changed(self, req: Request, replica: int) -> bool:
        """The request's images do not extend those of the conversation's latest entry there."""
        last = self._images.get((replica, req.conversation))
        if last is None:
            return False
        count, digest = last
        return count > req.images or req.tr.img_hashes[count] != digest

    def _plan(self, req: Request, now: float) -> Route:
        """The route of this request, decided once: a diagnosis before the call must see the
        replica the call will use."""
        key = (req.conversation, req.index, now)
        route = self._planned.get(key)
        if route is None:
            route = self._planned[key] = self.router.route(req, now)
        return route

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        """Why the prefix ending at `pos` was not read: another replica holds it ("routing"), or
        this replica's own reason (not_ready, ttl_expiry, evicted, below_minimum, not_written)."""
        h = req.tr.hashes[pos]
        if req.tr.cum_tokens[pos] < self.min_cacheable:
            return "below_minimum"
        if self._called != (req.conversation, req.index, now):  # asked before the call
            return self._reason(h, req.conversation, self._plan(req, now), now)
        snap = self._why.get(req.conversation)
        if snap is not None and snap[0] == h:
            return snap[1]
        return self._reason(h, req.conversation, self._route.get(req.conversation), now)

    def _reason(self, h: int, conv: str, route: Route | None, now: float) -> str:
        used = self.stores[route.replica] if route else self.stores[0]
        if not used.holds(h, now) and any(s.holds(h, now) for s in self.stores if s is not used):
            return "routing"
        why = used.reason(h, now)
        if (
            why == "not_written"
            and route is not None
            and self._served.get(conv, route.replica) != route.replica
        ):
            return "routing"
        return why or "not_written"
