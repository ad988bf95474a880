"""What every dialect-speaking provider model shares: identity, a seeded rng, the minimum
cacheable prefix, error outcomes, and the checks every call starts with (window, injected faults)."""

from __future__ import annotations

import random
from typing import Any

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.names import FaultKind
from ctxbench.sim.core.provider import Outcome, ProviderError, Request, Usage
from ctxbench.sim.providers.dialects import fault_error, too_long, wire_renderer


class DialectProvider:
    """Base of the provider models configured with a `dialect`, `faults` and `latency`."""

    def __init__(self, name: str, model: ModelInfo, prices: Prices, cfg: Any, seed: int = 0) -> None:
        self.name = name
        self.model = model
        self.prices = prices
        self.cfg = cfg
        self.rng = random.Random(seed)
        own = getattr(cfg, "min_cacheable", None)
        self.min_cacheable: int = own if own is not None else model.min_cacheable
        self.wire = wire_renderer(cfg.dialect)  # Outcome.wire_of

    def _error(self, err: ProviderError, route: str = "") -> Outcome:
        """A rejected request: nothing billed, the base time to the error (H-20 prices it at 0)."""
        lat = self.cfg.latency.base_ttft
        return Outcome(Usage(), 0.0, lat, lat, err, -1, route, self.wire)

    def _admit(self, req: Request, now: float) -> tuple[Outcome | None, FaultKind | None]:
        """The outcome of a request rejected before any work (too long, an injected fault), else
        None and the fault to apply after streaming started (`stream_error`) if one was drawn."""
        total = req.input_tokens
        if total > self.model.window:
            return self._error(too_long(self.cfg.dialect, total, self.model.window, req.output_tokens)), None
        fault = self.cfg.faults.draw(req.index, self.rng, now)
        if fault is not None and fault != "stream_error":
            return self._error(fault_error(self.cfg.dialect, fault, self.cfg.faults.retry_after)), None
        return None, fault
