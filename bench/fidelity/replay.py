"""Fidelity replay: one imported real session run through the recorded harness on the provider model
its bill shows (bench/fidelity/compare.py scores what this returns). The Anthropic options the recorded
bills show (`OBSERVED`), the static prefix an earlier session left (written at
t = -1 s, optionally kept warm), the away-summary forks (bench/fidelity/forks.py) and the outside
events (bench/fidelity/outside.py) are set up here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import simpy

from ctxbench.bench.fidelity.auto import CENTRAL
from ctxbench.bench.fidelity.forks import ForkedRequests, forked_requests
from ctxbench.bench.fidelity.outside import OutsideWarming, static_entry
from ctxbench.bench.fidelity.results import OutsideEvents
from ctxbench.policies.marks import NoMarks
from ctxbench.policies.preset import Policy
from ctxbench.policies.recorded import RecordedMarks
from ctxbench.sim.core.names import Ttl, is_ttl
from ctxbench.sim.core.profiles import profile as profile_config
from ctxbench.sim.core.provider import Latency, Provider
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.providers.choice import Serving, choose, long_tier
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.runner import ProviderFor, RunHooks, prepare_for, run_prepared
from ctxbench.traces.model import Trace

ZERO_LATENCY = Latency(base_ttft=0.0, prefill_tps=1e15, output_tps=1e15)
# Anthropic provider options the recorded bills show (sim/providers/anthropic.py AnthropicConfig):
# - lookback 21: the breakpoint and the 20 blocks before it, as the prompt-caching doc said until
#   early 2026 ("up to approximately 20 blocks before your explicit breakpoint", providers.md §1.3
#   history; the 2026-08 wording counts the breakpoint among the 20). Claude Code 2.1.97 marks the
#   last message only (cli.js), and cua pgadmin #96 and pycharm #65 (April 2026) read an entry 21
#   positions back: 20 positions cannot reach it, and 25 would wrongly reach past pycharm #45's;
# - tool_result_images_nested: a screenshot inside a tool result is not a lookback position of
#   its own (providers.md §1.3 counting granularity UNCONFIRMED; with flat images the same two
#   reads need 24-25 positions, a window no version of the doc describes);
# - refresh_marks_in_read: reading a prefix refreshes the entries at the request's own marks
#   inside it (providers.md §1.5 "refreshed ... each time the cached content is used";
#   coderabbit cb2e607c #20 reads its system-prompt entry 687 s after it was written, read only
#   as part of longer prefixes since).
# - refresh_ttl "reader": a read re-times the entry it hits to the ttl of the mark that found it.
#   ef958aa1 main #10 (Claude Code 2.1.114, 1h marks) read request #8's entry, not #9's, 616 s
#   after #9 wrote it with a 1h ttl; in between (183 s after #9) Claude Code sent its away summary,
#   a forked query with 5m marks (bench/fidelity/forks.py) that read #9's entry and no other:
#   re-timed to 5m, it had expired, while #8's 1h entry had not. One observation; the doc is
#   silent on mixed-ttl refreshes (providers.md §1.5).
OBSERVED: dict[str, Any] = {
    "lookback": 21,
    "tool_result_images_nested": True,
    "refresh_marks_in_read": True,
    "refresh_ttl": "reader",
}
# Removed: the request that first sends deferred tools (Claude Code 2.1.x after its first ToolSearch
# result) re-writes its prompt from the tools on (`deferred_tools_prefix` "first", from traces-real
# ef958aa1, Opus 4.7 / 2.1.114: main #1, agent a4ca #2 read 0). On the corpus's development sessions
# it was not made from, such a request read the whole previous prompt 45 times and missed 0 times
# (Sonnet 4.6 and Opus 4.6, Claude Code 2.1.69-2.1.150; awesumsawz/dotfiles-universal,
# onehandcode-source/claude-config, daphatpharm4/rosesein, 213MD/my-profile-site and 6 more:
# `python -m ctxbench.bench.fidelity.measure` "tools_change"), as the doc says tool search keeps the
# prefix (providers.md §1.6). The replay keeps the documented "append"; the option stays a what-if
# knob (sim/providers/anthropic_config.py).
# Removed: an Opus 4.7 entry written on top of a read readable only 3 s after its request started
# (`extension_readable_after`, from four requests of traces-real ef958aa1, Claude Code 2.1.114). On
# the corpus's development sessions it was not made from, every Opus 4.7 request sent 2.3-2.6 s
# after one that read and wrote read that write in full (3 of 3: JamesTiberiusKirk/dotsv2 74f505ae
# #2, harinathpathipaka-commits/visionweb), so the replay no longer applies it; the provider option
# stays (sim/providers/anthropic_config.py), default 0.
# Per provider family (a profile's `provider:`), on top of its profile. DeepSeek, ready_delay 0: a log
# times responses, not the requests that follow them, and on the development part every DeepSeek
# request read the unit its predecessor's output ended, down to the smallest gap the log has (1.4 s:
# 886caigudong/caigudong- f9d68320, Claude Code 2.1.146 on deepseek-v4-flash; the profile's 3 s
# "construction takes seconds" would have missed the 5 sent sooner than that).
OBSERVED_BY_PROVIDER: dict[str, dict[str, Any]] = {"deepseek": {"ready_delay": 0.0}}
# The first request of most sessions reads a static prefix an earlier session wrote (meta
# warm_tokens), and after idle gaps longer than the TTL the read falls back to exactly that
# prefix (coderabbit cb2e607c #23/#72 after 484/374 s, danieldemmel 9e953218 #91/#99 after 12 h /
# 647 s): other sessions of the same account keep it warm. Assumed: it is re-read every 60 s.
KEEP_WARM_EVERY_S = 60.0


def warm_up(provider: Provider, prep: PreparedTrace, tokens: int, ttl: Ttl, now: float = -1.0) -> bool:
    """Write (or read and so refresh) the cache entry an earlier session left: the system block
    whose end is at `tokens`."""
    return static_entry(provider, prep.tools, prep.system, prep.model, tokens, ttl, now)


def serving(trace: Trace, profile: str | None = None, model: str | None = None) -> Serving:
    """The profile and model a fidelity replay uses (sim/providers/choice.py; the recorded
    harness's provider unless `profile` says otherwise). A log whose billed prompts exceed the
    model's standard window on a model with a 1M tier (`window_1m`, sim/data/models.yaml: Sonnet 4,
    4.5, 4.6 ...) ran on that tier, whatever its model id says (Claude Code logs the id without
    `[1m]`, issue 28): the replay runs as `<model>[1m]` and says so in the note."""
    # the bill is the recorded model's: a profile of another family never replaces it
    sv = choose(trace, "anthropic", profile, model or trace.header.model or None)
    return long_tier(trace, sv)  # choose applies it too; kept for a profile of another family


def is_anthropic(profile: str) -> bool:
    return str(profile_config(profile).get("provider", profile)) == "anthropic"


def replay(
    trace: Trace,
    policy: Policy,
    profile: str = "anthropic",
    warm: bool = True,
    seed: int = 0,
    zero_latency: bool = True,
    keep_warm: bool = False,
    observed: bool = True,
    model: str | None = None,
    outside: OutsideEvents | None = None,
) -> list[RequestRecord]:
    """Replay one trace (one conversation) and return its records in order. `observed` turns on
    the Anthropic options the real sessions show (OBSERVED, anthropic profiles only); `outside`
    replays events outside the conversation at their requests (bench/fidelity/outside.py;
    lookup failures and unlogged turn content on anthropic profiles only)."""
    prep = prepare_for(trace, model)
    if trace.header.meta.get("message_mark") == "user prompt" and isinstance(policy.marks, RecordedMarks):
        policy = replace(policy, marks=replace(policy.marks, prompt_only=True))  # Cline CLI 3.x
    if trace.header.meta.get("message_mark") == "none" and isinstance(policy.marks, RecordedMarks):
        policy = replace(policy, marks=NoMarks())  # sent without cache marks (sizing_marks.py NO_MARKS)
    params: dict[str, Any] = {"latency": ZERO_LATENCY} if zero_latency else {}
    anthropic = is_anthropic(profile)
    if observed and anthropic:
        params.update(OBSERVED)
    cfg = profile_config(profile)
    if observed and cfg.get("provider") == "auto-prefix":  # the central prediction (auto.py)
        params.update(CENTRAL)
    if observed:
        params.update(OBSERVED_BY_PROVIDER.get(str(cfg.get("provider", "")), {}))
    w = int(trace.header.meta.get("warm_tokens", 0) or 0)
    recorded_ttl = str(trace.header.meta.get("ttl", "5m"))
    ttl: Ttl = recorded_ttl if is_ttl(recorded_ttl) else "5m"
    outside = outside or OutsideEvents()
    if outside.lookup_failures and anthropic:  # "": the one conversation this replay runs
        params["lookup_failure_at"] = tuple(("", i) for i in outside.lookup_failures)
    if outside.unlogged_turn_content and anthropic:
        params["read_to_turn_start_at"] = tuple(("", i) for i in outside.unlogged_turn_content)
    forks = forked_requests(trace.header.meta) if observed else {}

    def provider_for(m: str) -> Provider:
        p: Provider = make_provider(profile, m, seed, **params)
        p = ForkedRequests(p, forks) if forks else p
        return OutsideWarming(p, outside.outside_warming, w, ttl) if outside.outside_warming else p

    def before(env: simpy.Environment, provider_for: ProviderFor) -> None:
        if warm and w > 0 and warm_up(provider_for(prep.model), prep, w, ttl) and keep_warm:
            env.process(_keep_warm(env, provider_for(prep.model), prep, w, ttl))

    hooks = RunHooks(before=before, provider_for=provider_for)
    return run_prepared([prep], policy, profile, seed, params, hooks=hooks).records


def _keep_warm(env: simpy.Environment, provider: Provider, prep: PreparedTrace, tokens: int, ttl: Ttl) -> Any:
    """Other sessions of the same account read the shared static prefix (the first request's
    recorded read) often enough that it never expires (assumption, see KEEP_WARM_EVERY_S)."""
    while True:
        yield env.timeout(KEEP_WARM_EVERY_S)
        warm_up(provider, prep, tokens, ttl, env.now)
