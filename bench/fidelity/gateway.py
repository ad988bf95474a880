"""Usage of a gateway that does not report cache writes (sim/data/profiles/cline.yaml and
claude-relay.yaml, `report_cache_writes: false`), seen from both sides of a fidelity replay:

- the prediction is compared with the log in the shape the gateway reports (writes counted in the
  input: sim/providers/anthropic.py `reported_usage`);
- the log's usage is priced as the gateway charges it: the input beyond the read was written to the
  cache at the recorded TTL (the Cline log's own cost field bills it at the 5m write rate on every
  Opus request, FORMATS.md §2.4), so the billed cost is not understated by pricing writes as input;
  a relay that bills what it reports (`bill_unreported_writes: false`, the Claude Code relays) is
  priced as reported, on both sides.
"""

from __future__ import annotations

from dataclasses import replace

from ctxbench.sim.core.profiles import profile
from ctxbench.traces.model import Usage


def reports_cache_writes(profile_name: str) -> bool:
    """False for a profile whose provider reports no cache writes (AnthropicConfig)."""
    return bool(profile(profile_name).get("report_cache_writes", True))


def bills_unreported_writes(profile_name: str) -> bool:
    """True for a profile whose gateway bills the writes it does not report at the write rate."""
    return bool(profile(profile_name).get("bill_unreported_writes", True))


def as_charged(billed: Usage, ttl: str) -> Usage:
    """The log's usage with the unreported writes (the input beyond the read) as cache writes."""
    hidden = billed.input_tokens
    if ttl == "1h":
        return replace(billed, input_tokens=0, cache_write_1h=billed.cache_write_1h + hidden)
    return replace(billed, input_tokens=0, cache_write_5m=billed.cache_write_5m + hidden)
