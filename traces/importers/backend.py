"""Which backend answered a Claude Code conversation, as its log shows it, and what the replay
assumes about it (issue 28: "a Claude Code log on another backend replays with a stated assumption").

Claude Code talks to any server that speaks Anthropic's Messages API (`ANTHROPIC_BASE_URL`): a relay
in front of Claude models, or another provider's Anthropic-compatible endpoint (DeepSeek's
api.deepseek.com/anthropic, Z.ai's api.z.ai/api/anthropic). The log names the model that answered
(`message.model`); the catalog says whose model it is (sim/core/catalog.py `provider`).

- `relay_meta`: no Anthropic request id, and cache reads but never a write: a relay that bills its
  writes as input (sim/data/profiles/claude-relay.yaml), sized on whole prompts.
- `backend_meta`: a conversation whose models are not Anthropic's ran on their provider's endpoint;
  it is replayed on the profile that serves that provider's models (sim/providers/choice.py
  `served_profile`), which is an assumption: that the Anthropic-compatible endpoint caches and bills
  as the provider's own API does (for Z.ai: automatic prefix cache, cached input at the cached
  price, no write fee; docs.z.ai/guides/capabilities/cache, docs.z.ai/guides/overview/pricing).
  `meta.backend` names the provider(s), `meta.backend_assumption` the assumption; the import
  report notes it and `fidelity` prints it. A model named by a router's `vendor/model` id
  (`moonshotai/kimi-k2.6`, OpenRouter's spelling) ran through that router: the assumption says so
  (OpenRouter passes caching through to whichever upstream serves the request,
  openrouter.ai/docs/guides/best-practices/prompt-caching).
- `drop_unrecorded`: a reply whose usage lines all record 0 tokens in and 0 out (Claude Code on
  Z.ai's endpoint logs only the stream's first usage line in some sub-agent files) has no known
  bill: its usage is dropped (the replay sends the request but scores nothing against it) and
  `meta.usage_unrecorded` counts such requests, so that they are named, never matched at 0.
"""

from __future__ import annotations

from ctxbench.sim.core.catalog import CatalogError, default_profile, model_info
from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.tokens import Item

# Anthropic's API answers with a `request-id` header of this prefix, which Claude Code logs as
# `requestId`; a relay in front of another backend (or of Anthropic's API) may not pass it on.
ANTHROPIC_REQUEST_ID = "req_"
RELAY_PROFILE = "claude-relay"  # sim/data/profiles/claude-relay.yaml
ANTHROPIC = "anthropic"


def _replies(items: list[Item]) -> list[Item]:
    return [i for i in items if i.kind == "reply"]


def drop_unrecorded(items: list[Item], name: str, report: ImportReport) -> dict[str, str]:
    """Drop the usage of replies that record 0 tokens in and out (module docstring); the meta that
    counts them, {} when there is none."""
    gone = [
        i
        for i in _replies(items)
        if i.usage is not None and not (i.usage.total_input or i.usage.output_tokens)
    ]
    for i in gone:
        i.usage = None
    if not gone:
        return {}
    report.counts["requests whose usage records 0 tokens in and out (bill unknown: not scored)"] += len(gone)
    return {"usage_unrecorded": str(len(gone))}


def providers_of(items: list[Item]) -> dict[str, str]:
    """Model -> its provider (the catalog's), for the models of the conversation's replies that the
    catalog knows, in order of first use."""
    out: dict[str, str] = {}
    for i in _replies(items):
        if i.model and i.model not in out:
            try:
                out[i.model] = model_info(i.model).provider
            except CatalogError:
                continue
    return out


def backend_meta(items: list[Item], name: str, report: ImportReport) -> dict[str, str]:
    """The backend and the replay's assumption of a conversation on models that are not Anthropic's
    (module docstring); {} for a conversation on Claude models only."""
    models = providers_of(items)
    other = list(dict.fromkeys(p for p in models.values() if p != ANTHROPIC))
    if not other:
        return {}
    first = next(iter(models))
    served = default_profile(first)
    backends = list(dict.fromkeys(models.values()))
    routed = [m for m in models if "/" in m]  # `moonshotai/kimi-k2.6`: a router's id, not the provider's
    if len(backends) == 1 and routed:
        why = (
            f"Claude Code through a router that names models as OpenRouter does ({routed[0]}): replayed on "
            f"profile {served}, assuming the router's upstream caches and bills as {other[0]}'s own API does"
        )
    elif len(backends) == 1:
        why = (
            f"Claude Code on {other[0]}'s Anthropic-compatible endpoint: replayed on profile {served}, "
            f"assuming that endpoint caches and bills as {other[0]}'s own API does"
        )
    else:
        why = (
            f"Claude Code on several backends ({', '.join(backends)}): replayed on the profile of its "
            f"first model ({served}), each request priced as the model it ran on, its cache that model's own"
        )
    listed = ", ".join(f"{m} ({p})" for m, p in models.items())
    report.note(f"{name} ({listed}): {why}")
    return {"backend": ", ".join(backends), "backend_assumption": why}


def relay_meta(items: list[Item], name: str, report: ImportReport) -> dict[str, str]:
    """The meta of a conversation answered by a relay that reports no cache writes: none of its
    requests carries an Anthropic request id, and its usage reads from the cache but never reports
    a write (its writes are in the input). Such a log is sized on its whole prompts; on Claude
    models it is replayed on the relay's profile, and the note says so (on another provider's
    models, on that provider's profile: `backend_meta`); {} for any other conversation."""
    replies = _replies(items)
    usages = [i.usage for i in replies if i.usage is not None]
    if not usages or any(i.request_id.startswith(ANTHROPIC_REQUEST_ID) for i in replies):
        return {}
    if not any(u.cache_read for u in usages) or any(u.cache_write_5m or u.cache_write_1h for u in usages):
        return {}
    if all(p == ANTHROPIC for p in providers_of(items).values()):
        report.note(
            f"{name}: no Anthropic request id, and cache reads but no cache write on any of its "
            f"{len(usages)} requests: a relay that bills its writes as input (profile {RELAY_PROFILE})"
        )
    return {"gateway": RELAY_PROFILE, "usage_counts": "whole prompt"}
