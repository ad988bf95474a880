"""Usage of a gateway that does not report cache writes (sim/data/profiles/cline.yaml and
claude-relay.yaml, `report_cache_writes: false`), seen from both sides of a fidelity replay:

- the prediction is compared with the log in the shape the gateway reports (writes counted in the
  input: sim/providers/anthropic.py `reported_usage`);
- the log's usage is priced as the gateway charges it: the input beyond the read was written to the
  cache at the recorded TTL (the Cline log's own cost field bills it at the 5m write rate on every
  Opus request, FORMATS.md §2.4), so the billed cost is not understated by pricing writes as input;
  a relay that bills what it reports (`bill_unreported_writes: false`, the Claude Code relays) is
  priced as reported, on both sides.

A log on a profile that does report and bill writes can still record none (`writes_unrecorded`):
its usage reads from the cache but shows no write on any request. That is the Claude Code relays'
signature (claude-relay.yaml: on the development part's Damon-Salvetore/claude-code, 773 requests,
0 writes on every one, the written tokens in the input), and it is what a Codex rollout records on
a model whose cache bills writes (OpenAI GPT-5.6 and later, providers.md §2.2): Codex's
`TokenUsage` has input, cached input, output and reasoning tokens only (codex-rs
app-server-protocol schema `TokenUsage.ts`), and its later `cache_write_input_tokens` may be 0.
Whether the endpoint wrote and billed those tokens the log cannot say; what it bills, as ccusage
prices it, is input. So such a log is compared as it reports (the replay's writes counted in the
uncached input) and priced as it is priced (at the input rate), and the comparison names the
assumption (`WRITES_IN_INPUT`).
"""

from __future__ import annotations

from dataclasses import replace

from ctxbench.bench.fidelity.auto import caches, writes_free
from ctxbench.sim.core.profiles import profile
from ctxbench.traces.model import MessageEvent, Trace, Usage

WRITES_IN_INPUT = (
    "the log reads from the cache but records no cache write on any request: compared as it reports "
    "(the replay's writes counted in the uncached input) and priced as it is priced (input rate); "
    "if the endpoint billed writes, its charge was higher than the log shows"
)


def reports_cache_writes(profile_name: str) -> bool:
    """False for a profile whose provider reports no cache writes (AnthropicConfig)."""
    return bool(profile(profile_name).get("report_cache_writes", True))


def bills_unreported_writes(profile_name: str) -> bool:
    """True for a profile whose gateway bills the writes it does not report at the write rate."""
    return bool(profile(profile_name).get("bill_unreported_writes", True))


def writes_unrecorded(trace: Trace, profile_name: str) -> bool:
    """True for a log on a profile that reports and bills cache writes whose usage reads from the
    cache but records no write on any request (module docstring)."""
    cfg = profile(profile_name)
    if not reports_cache_writes(profile_name) or writes_free(cfg) or not caches(cfg):
        return False
    usages = [e.usage for e in trace.events if isinstance(e, MessageEvent) and e.usage is not None]
    return any(u.cache_read for u in usages) and not any(u.cache_write_5m or u.cache_write_1h for u in usages)


def write_shape(trace: Trace, profile_name: str) -> tuple[bool, bool, str]:
    """How a replay on `profile_name` is compared with `trace`'s log: whether the log reports cache
    writes (else the prediction's writes are counted in its input), whether the log's unreported
    writes are priced as charged (at the write rate, `as_charged`), and the assumption to name
    ("" when none: `writes_unrecorded`)."""
    if writes_unrecorded(trace, profile_name):
        return False, False, WRITES_IN_INPUT
    reported = reports_cache_writes(profile_name)
    return reported, not reported and bills_unreported_writes(profile_name), ""


def as_charged(billed: Usage, ttl: str) -> Usage:
    """The log's usage with the unreported writes (the input beyond the read) as cache writes."""
    hidden = billed.input_tokens
    if ttl == "1h":
        return replace(billed, input_tokens=0, cache_write_1h=billed.cache_write_1h + hidden)
    return replace(billed, input_tokens=0, cache_write_5m=billed.cache_write_5m + hidden)
