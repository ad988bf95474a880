"""The provider interface: a request in, usage (or an error) out, with the cause of any miss.

A `Request` is a read-only window onto a conversation's `Transcript` (the first `n` blocks), so a
provider reads hashes and running sums without copying the prompt. Providers are called
synchronously inside one simpy step, so the transcript cannot change during a call.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ctxbench.sim.core.catalog import ModelInfo, Prices
from ctxbench.sim.core.names import FAULT_KINDS, Breakpoints, ErrorKind, FaultKind
from ctxbench.sim.core.transcript import Transcript


@dataclass(slots=True)
class Usage:
    """Provider-neutral usage: the four input parts are disjoint and sum to the true input. A
    value, never changed once made (one per call: not frozen, since a frozen dataclass takes
    several times longer to build)."""

    uncached: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

    @property
    def input_total(self) -> int:
        return self.uncached + self.cache_read + self.cache_write_5m + self.cache_write_1h

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h


@dataclass(frozen=True, slots=True)
class ProviderError:
    """An error as the real API returns it: HTTP status, error type, message text."""

    status: int
    type: str
    message: str
    kind: ErrorKind
    transient: bool
    retry_after: float | None = None
    billed: bool = False  # True when the input was processed (error after streaming started)
    code: str = ""  # the API's machine-readable code where it has one (OpenAI `code`, Gemini `status`)
    param: str | None = None  # OpenAI's `param`: the request field the error is about


@dataclass(slots=True)
class Request:
    """One provider call: the first `n` blocks of `tr`, with cache breakpoints and routing keys.
    Its sizes (`input_tokens`, `images`) are read from the transcript once, when it is made: a
    request is a snapshot, valid while its call runs."""

    tr: Transcript
    n: int
    model: str
    output_tokens: int
    breakpoints: Breakpoints = ()  # (block index, ttl)
    kind: str = "gameplay"  # a RequestKind from the harness; a live client's header may name any
    conversation: str = ""
    index: int = 0
    cache_key: str | None = None
    session_id: str | None = None
    max_tokens: int = 0
    input_tokens: int = field(init=False, default=0)  # true tokens of the first n blocks
    images: int = field(init=False, default=0)  # images among them

    def __post_init__(self) -> None:
        self.input_tokens = self.tr.tokens_before(self.n)
        self.images = self.tr.images_before(self.n)


@dataclass(slots=True)
class Outcome:
    """What a call returned: usage, cost, timing, the error if any, and where the cache now ends.
    `wire_of` renders the usage in the provider's own field names (`wire`) when someone asks (the
    HTTP server, tests); a simulated run never does, so it is not built per call."""

    usage: Usage
    cost: float
    ttft: float
    duration: float
    error: ProviderError | None = None
    cached_pos: int = -1  # highest block whose cache entry is live after this call
    route: str = ""
    wire_of: Callable[[Usage], dict[str, Any]] | None = None

    @property
    def wire(self) -> dict[str, Any]:
        """Usage in the provider's own field names ({} when the provider gives none)."""
        return self.wire_of(self.usage) if self.wire_of is not None else {}


class Provider(Protocol):
    """A provider model. `diagnose` names why the entry at `pos` could not be read."""

    name: str
    model: ModelInfo

    def call(self, req: Request, now: float) -> Outcome: ...

    def diagnose(self, req: Request, pos: int, now: float) -> str: ...


# ---------------------------------------------------------------- latency
@dataclass(frozen=True)
class Latency:
    """Time to first token = base + per uncached (prefilled) token; then output at a fixed rate.

    research/ has no measured latency figures for these providers: the defaults are stated
    assumptions (0.6 s base, 20k uncached tokens/s prefill, 60 output tokens/s), set per profile.
    """

    base_ttft: float = 0.6
    prefill_tps: float = 20_000.0
    output_tps: float = 60.0

    def ttft(self, uncached: int) -> float:
        return self.base_ttft + uncached / self.prefill_tps

    def duration(self, uncached: int, output: int) -> float:
        return self.ttft(uncached) + output / self.output_tps


# ---------------------------------------------------------------- faults


@dataclass(frozen=True)
class Faults:
    """Seeded fault injection: per-kind rates, scripted faults at request indexes, and scripted
    fault windows in simulated time ((start, end, kind): every call with start <= now < end)."""

    rates: dict[str, float] = field(default_factory=dict)
    scripted: dict[int, FaultKind] = field(default_factory=dict)
    retry_after: float = 2.0
    windows: tuple[tuple[float, float, FaultKind], ...] = ()

    def draw(self, index: int, rng: random.Random, now: float | None = None) -> FaultKind | None:
        """The fault of call `index` at `now`, if any: scripted first, then windows, then one
        seeded draw per kind with a rate (every call, in FAULT_KINDS order)."""
        if self.scripted and index in self.scripted:
            return self.scripted[index]
        if self.windows and now is not None:
            for start, end, kind in self.windows:
                if start <= now < end:
                    return kind
        if self.rates:
            for kind in FAULT_KINDS:
                p = self.rates.get(kind, 0.0)
                if p and rng.random() < p:
                    return kind
        return None


def price(prices: Prices, u: Usage) -> float:
    return prices.cost(u.uncached, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output)
