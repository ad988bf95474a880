"""State of `ctxbench serve` shared by its request threads: the config, the providers and block
factories per model, the ledger and trace recorder, and what each request was billed (`Observation`).

Split from `ctxbench.sim.serve.server`, which keeps the HTTP handler and endpoint dispatch and re-exports
`ServeConfig`, `Observation`, `ServeState` and `ZERO_LATENCY`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ctxbench.sim.core.catalog import canonical, prices
from ctxbench.sim.core.names import Breakpoints
from ctxbench.sim.core.provider import Provider, Usage
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.linearize import TraceRecorder
from ctxbench.sim.serve.record import Ledger
from ctxbench.sim.serve.script import Scripter

ZERO_LATENCY = {"base_ttft": 0.0, "prefill_tps": 1e30, "output_tps": 1e30}


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 0
    profile: str = "anthropic"
    model: str = "claude-sonnet-4-6"  # listed by GET /v1/models; a request may name any catalog model
    seed: int = 0
    clock: str = "wall"  # wall | header
    latency: str = "auto"  # auto (none in wall mode, the profile's in header mode) | none | profile
    tokenizer: str = "rate"
    ledger: str | None = None
    keep_observations: bool = False
    # A request (head and body) not received in full this long after its first byte is answered
    # 408 and its connection closed; an idle keep-alive connection is closed after as long. This
    # project's choice (no provider documents a figure).
    read_timeout: float = 60.0
    max_connections: int = 256  # served at once; more wait in the listen backlog (50 harnesses: 0 wait)
    max_per_client: int = 0  # of one client address at once, more answered 429 (0: max_connections // 2)


@dataclass
class Observation:
    """What the server saw and billed for one request (kept for `validate`)."""

    conversation: str
    index: int
    api: str
    n: int
    tokens: list[int]
    hashes: list[int]
    breakpoints: Breakpoints
    usage: Usage | None
    error: str = ""


@dataclass
class ServeState:
    cfg: ServeConfig
    scripter: Scripter
    ledger: Ledger
    recorder: TraceRecorder = field(default_factory=TraceRecorder)
    providers: dict[str, Provider] = field(default_factory=dict)
    factories: dict[str, BlockFactory] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counters: dict[str, int] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    start: float = field(default_factory=time.monotonic)
    ids: int = 0

    def model_for(self, requested: str) -> str:
        """The catalog model a request's model id stands for (dated ids, aliases, `-fast`, `[1m]`
        resolve as everywhere, sim/core/catalog.py); CatalogError when the catalog has no such model or
        no prices for it: the server answers that request 404, as the real API does."""
        name = canonical(requested)
        prices(name)
        return name

    def provider(self, model: str) -> Provider:
        with self.lock:
            p = self.providers.get(model)
            if p is None:
                zero = self.cfg.latency == "none" or (self.cfg.latency == "auto" and self.cfg.clock == "wall")
                extra: dict[str, Any] = {"latency": dict(ZERO_LATENCY)} if zero else {}
                p = self.providers[model] = make_provider(self.cfg.profile, model, self.cfg.seed, **extra)
            return p

    def factory(self, model: str) -> BlockFactory:
        f = self.factories.get(model)
        if f is None:
            f = self.factories[model] = factory_for(model, self.cfg.tokenizer)
        return f

    def next_id(self, prefix: str) -> str:
        with self.lock:
            self.ids += 1
            return f"{prefix}{self.ids:024d}"
