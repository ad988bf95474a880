"""OpenRouter: routing over upstream providers, each with its own (cold) cache (H-21, providers.md §5).

[DOC OR-PC] Provider sticky routing: later requests "for the same model are routed to the same
provider"; sticky sessions expire after 10 minutes of inactivity; each successful request resets
the timer, an error does not; falls back if the sticky provider is unavailable; disabled when
`provider.order` is set. Session = `session_id` (body) / `x-session-id`, else
`prompt_cache_key`, else a hash of the first system message + first non-system message. "With
`session_id`, stickiness starts on any successful request; without it, only after a cache hit
is observed." [DOC provider-routing] `provider.{order, only, allow_fallbacks}`; default = load
balancing over providers without recent outages (equal prices → a uniform seeded draw).

A provider switch lands on a cold cache: the miss is attributed to `provider_switch`. Usage is
the OpenAI shape plus `cost` (what the request was billed), `cost_details` and `cache_discount`
(money saved vs. the full input price: negative when writes cost more than they save, §5).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.names import is_fault
from ctxbench.sim.core.provider import Faults, Latency, Outcome, Provider, ProviderError, Request, Usage
from ctxbench.sim.providers.dialects import fault_error, too_long, wire_usage


@dataclass(frozen=True)
class OpenRouterConfig:
    upstreams: tuple[str, ...] = (
        "anthropic",
        "amazon-bedrock",
        "google-vertex",
    )  # allow-list (provider.only)
    upstream_profile: str = "anthropic"  # the cache model each upstream endpoint runs
    order: tuple[str, ...] = ()  # provider.order: tried in order, disables stickiness
    allow_fallbacks: bool = True  # provider.allow_fallbacks (default true)
    sticky: bool = True  # provider sticky routing [OR-PC]
    sticky_idle: float = 600.0  # "expire after 10 minutes of inactivity" [OR-PC]
    down: dict[int, str] = field(default_factory=dict)  # request index -> upstream unavailable (scripted)
    down_windows: tuple[tuple[float, float, str], ...] = ()  # (start, end, upstream) outages in sim time
    outage_rate: float = 0.0  # per request and upstream: chance it is unavailable
    dialect: str = "openrouter"
    latency: Latency = field(default_factory=Latency)
    faults: Faults = field(default_factory=Faults)  # OpenRouter's own errors (408/429/502/503)


def conversation_id(req: Request) -> str:
    """OR-PC default: hash of the first system message + the first non-system message."""
    tr = req.tr
    end = min(tr.message_end(0), req.n) - 1 if tr.messages else req.n - 1
    return f"conv:{tr.hashes[end]:016x}" if end >= 0 else "conv:empty"


class OpenRouterProvider:
    def __init__(
        self,
        model: ModelInfo,
        prices: Prices,
        cfg: OpenRouterConfig,
        upstreams: dict[str, Provider],
        seed: int = 0,
    ) -> None:
        self.name = "openrouter"
        self.model = model
        self.prices = prices
        self.cfg = cfg
        self.rng = random.Random(seed)
        self.upstreams = upstreams
        self.sticky: dict[str, tuple[str, float]] = {}  # session -> (upstream, last successful request)
        self._route: dict[str, str] = {}
        self._served: dict[str, str] = {}
        self._prev: dict[str, str] = {}
        self._planned: dict[tuple[str, int, float], tuple[str | None, str]] = {}
        self._called: tuple[str, int, float] | None = None

    def _error(self, err: ProviderError, route: str = "") -> Outcome:
        lat = self.cfg.latency.base_ttft
        return Outcome(Usage(), 0.0, lat, lat, err, -1, route, partial(self._wire, cost=0.0, upstream=""))

    def _wire(self, u: Usage, cost: float, upstream: str) -> dict[str, Any]:
        w = wire_usage(self.cfg.dialect, u)
        p = self.prices
        saved = (
            u.cache_read * (p.input - p.cache_read)
            + u.cache_write_5m * (p.input - p.cache_write_5m)
            + u.cache_write_1h * (p.input - p.cache_write_1h)
        ) / 1e6
        w["cost"] = round(cost, 10)
        w["is_byok"] = False
        w["cost_details"] = {"upstream_inference_cost": None}
        w["cache_discount"] = round(saved, 10)
        w["provider"] = upstream
        return w

    def _down(self, up: str, req: Request, now: float) -> bool:
        if self.cfg.down.get(req.index) == up:
            return True
        if any(s <= now < e and u == up for s, e, u in self.cfg.down_windows):
            return True
        return bool(self.cfg.outage_rate) and self.rng.random() < self.cfg.outage_rate

    def choose(self, req: Request, now: float) -> tuple[str | None, str]:
        """(upstream or None, session id)."""
        sid = req.session_id or req.cache_key or conversation_id(req)
        cfg = self.cfg
        if cfg.down or cfg.down_windows or cfg.outage_rate:
            avail = [u for u in cfg.upstreams if not self._down(u, req, now)]
        else:  # no outage configured: every upstream is up (and no draw is made)
            avail = list(cfg.upstreams)
        if self.cfg.order:
            for u in self.cfg.order:
                if u in avail:
                    return u, sid
                if not self.cfg.allow_fallbacks:
                    return None, sid
            return None, sid
        st = self.sticky.get(sid) if self.cfg.sticky else None
        if st is not None and now - st[1] < self.cfg.sticky_idle:
            if st[0] in avail:
                return st[0], sid
            if not self.cfg.allow_fallbacks:
                return None, sid
        if not avail:
            return None, sid
        return avail[self.rng.randrange(len(avail))], sid

    def call(self, req: Request, now: float) -> Outcome:
        total = req.input_tokens
        if total > self.model.window:
            return self._error(too_long(self.cfg.dialect, total, self.model.window, req.output_tokens))
        fault = self.cfg.faults.draw(req.index, self.rng, now)
        if fault is not None and fault != "stream_error":
            return self._error(fault_error(self.cfg.dialect, fault, self.cfg.faults.retry_after))
        up, sid = self._plan(req, now)
        self._planned.clear()
        self._called = (req.conversation, req.index, now)
        if up is None:
            return self._error(fault_error(self.cfg.dialect, "overloaded", self.cfg.faults.retry_after))
        self._route[req.conversation] = up
        out = self.upstreams[up].call(req, now)
        err = out.error
        if err is not None:
            if err.kind == "too_long":
                err = too_long(self.cfg.dialect, total, self.model.window, req.output_tokens)
            elif is_fault(err.kind):
                err = fault_error(self.cfg.dialect, err.kind, err.retry_after)
        elif fault == "stream_error":
            err = fault_error(self.cfg.dialect, fault, None)
            u = out.usage
            out.usage = Usage(u.uncached, u.cache_read, u.cache_write_5m, u.cache_write_1h, 0)
            out.cost -= u.output * self.prices.output / 1e6  # cut off: input billed, no output (H-20)
        if err is None or err.billed:
            self._prev[req.conversation] = self._served.get(req.conversation, up)
            self._served[req.conversation] = up
        if err is None and self.cfg.sticky and not self.cfg.order:
            st = self.sticky.get(sid)
            if req.session_id is not None or out.usage.cache_read > 0 or (st is not None and st[0] == up):
                self.sticky[sid] = (up, now)
        cost = out.cost if err is None or err.billed else 0.0
        return Outcome(
            out.usage,
            cost,
            out.ttft,
            out.duration,
            err,
            out.cached_pos,
            up,
            partial(self._wire, cost=cost, upstream=up),
        )

    def _plan(self, req: Request, now: float) -> tuple[str | None, str]:
        """The routing choice for this request, made once (a diagnosis before the call sees it)."""
        key = (req.conversation, req.index, now)
        if key not in self._planned:
            self._planned[key] = self.choose(req, now)
        return self._planned[key]

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        """A switch of upstream provider is a cold cache: `provider_switch`; else the upstream's reason."""
        if self._called != (req.conversation, req.index, now):  # asked before the call
            up_next = self._plan(req, now)[0]
            served = self._served.get(req.conversation)
            if up_next is None or served is None:
                return "not_written"
            return "provider_switch" if up_next != served else self.upstreams[up_next].diagnose(req, pos, now)
        up = self._route.get(req.conversation)
        if up is None:
            return "not_written"
        if self._prev.get(req.conversation, up) != up:
            return "provider_switch"
        return self.upstreams[up].diagnose(req, pos, now)
