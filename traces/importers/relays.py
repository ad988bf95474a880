"""Which endpoint answered a Claude Code log: Anthropic's API, or a relay in front of it or of
another backend (Claude Code talks to any endpoint of the Anthropic API, `ANTHROPIC_BASE_URL`).
A relay is told by what its usage and ids show; its conversations are sized on their whole
prompts and replayed on the relay's profile (sim/data/profiles/claude-relay.yaml), with a note."""

from __future__ import annotations

from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.tokens import Item

# Anthropic's API answers with a `request-id` header of this prefix, which Claude Code logs as
# `requestId`; a relay in front of another backend (or of Anthropic's API) may not pass it on.
ANTHROPIC_REQUEST_ID = "req_"
RELAY_PROFILE = "claude-relay"  # sim/data/profiles/claude-relay.yaml


def relay_meta(items: list[Item], name: str, report: ImportReport) -> dict[str, str]:
    """The meta of a conversation answered by a relay that reports no cache writes: none of its
    requests carries an Anthropic request id, and its usage reads from the cache but never reports
    a write (its writes are in the input). Such a log is sized on its whole prompts and replayed on
    the relay's profile, and the note says so; {} for any other conversation."""
    usages = [i.usage for i in items if i.kind == "reply" and i.usage is not None]
    if not usages or any(i.request_id.startswith(ANTHROPIC_REQUEST_ID) for i in items if i.kind == "reply"):
        return {}
    if not any(u.cache_read for u in usages) or any(u.cache_write_5m or u.cache_write_1h for u in usages):
        return {}
    report.note(
        f"{name}: no Anthropic request id, and cache reads but no cache write on any of its "
        f"{len(usages)} requests: a relay that bills its writes as input (profile {RELAY_PROFILE})"
    )
    return {"gateway": RELAY_PROFILE, "usage_counts": "whole prompt"}
