"""Typed names for what would otherwise be bare `str` / `int`: each set is spelled once, here.

- `Ttl`: the cache_control ttl values of the Anthropic API ("5m" default, "1h"), providers.md §1.2,
  §1.5; other providers' TTLs are durations in their configs, not names.
- `FaultKind`: the transient failures a provider model injects (`sim/providers/base.Faults`).
- `ErrorKind`: every `ProviderError.kind`: a fault, a prompt over the window, or a bad request.
- `MissCause`: why tokens the previous request left cached were not read (DESIGN.md "every miss
  has a cause"); the values a `RequestRecord.miss_cause` takes besides "".
- `RequestKind`: what a harness made a request for (`RequestRecord.kind`).
- `StepKind`: what one step of a prepared trace does (`sim/prepared.py Step`).
- `BlockHash`: a block's chained prefix hash (DESIGN.md "content is immutable and hashed once").
- `Breakpoints`: a request's cache marks, (block index, ttl) in ascending block order.
"""

from __future__ import annotations

from typing import Final, Literal, NewType, TypeGuard, get_args

Ttl = Literal["5m", "1h"]
TTLS: Final[tuple[Ttl, ...]] = get_args(Ttl)
TTL_SECONDS: Final[dict[Ttl, float]] = {"5m": 300.0, "1h": 3600.0}  # providers.md §1.5

FaultKind = Literal["rate_limit", "overloaded", "server_error", "timeout", "stream_error"]
FAULT_KINDS: Final[tuple[FaultKind, ...]] = get_args(FaultKind)
ErrorKind = Literal[FaultKind, "too_long", "invalid"]

MissCause = Literal[
    "first_request",
    "compaction",
    "eviction",
    "trim",
    "ttl_expiry",
    "routing",
    "lookback_exceeded",
    "prefix_change",
    "below_minimum",
    "evicted",
    "not_ready",
    "image_change",
    "not_written",
    "model_switch",
    "provider_switch",  # OpenRouter fell back / re-routed to another upstream: a cold cache (H-21)
    "memory_edit",  # a memory file edited mid-session: the system part changed from it on (C-1, C-2)
    "system_change",  # any other change of the system part by a later `system` event
    "tools_change",  # a later `tools` event changed the tool list (e.g. deferred tools a search loaded)
    "server_lookup_failure",  # a live entry not found by the provider (anthropics/claude-code#87966)
    "turn_scoped",  # the recorded harness dropped its previous turn's attachments (trace `turn`)
    "thought_signatures",  # Gemini CLI: the last loop's calls lost their signatures (harness/signatures.py)
]
MISS_CAUSES: Final[tuple[MissCause, ...]] = get_args(MissCause)

RequestKind = Literal[
    "preparation",  # H-23: the pinned preparation exchange
    "gameplay",  # H: an ordinary turn
    "turn",  # C and the recorded harness (imported sessions): an ordinary turn
    "summary",  # a summarizer call (H-15, C-11)
    "summary_text",  # H-15: the text-only retry of the handoff request
    "reflection",  # H-30/H-21: a reflection request repeating the conversation (billed with the run)
    "interview",  # H-29: the post-episode interview (billed apart)
    "warmup",  # bench/fidelity/compare.py: an earlier session's cache entry
    "live",  # a request `ctxbench serve` received from a real client
    "recorded",  # a request a trace implies by itself (bench/prefix/request_log.py trace_log)
    "fork",  # bench/fidelity/forks.py: a side request forked from a recorded session's prefix
]
REQUEST_KINDS: Final[tuple[RequestKind, ...]] = get_args(RequestKind)

StepKind = Literal["message", "reply", "switch", "compaction", "resume", "system", "tools"]

BlockHash = NewType("BlockHash", int)
Breakpoints = tuple[tuple[int, Ttl], ...]


def is_fault(value: object) -> TypeGuard[FaultKind]:
    """True for a fault kind a provider model injects (its error is transient)."""
    return value in FAULT_KINDS


def is_ttl(value: object) -> TypeGuard[Ttl]:
    """True for a ttl name the API accepts (providers.md §1.2)."""
    return value in TTLS


def ttl_of(value: object, default: Ttl) -> Ttl:
    """`value` when it is a ttl name (a recorded block's `cache`), else `default`."""
    return value if is_ttl(value) else default
