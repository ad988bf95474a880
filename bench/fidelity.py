"""Fidelity: replay imported real sessions with the recorded harness's behaviour and compare the
predicted usage of every request with what the provider billed (issue #6, DESIGN.md "proves its
answers against ... recorded bills").

Replay: preset `recorded` (policies/recorded.py: recorded cache marks and ttl, recorded
compactions only) on the provider model of the trace's model, with zero latency so that each
request starts exactly when the recorded one did (TTL decisions use the recorded idle gaps). The
cache starts with what the first request found there: its recorded cache read (`meta.warm_tokens`,
a prefix an earlier session of the same account wrote) is written at t = -1 s.

State outside the conversation that no client model predicts is taken from the bill and counted
apart (bench/fidelity_outside.py): server-side lookup failures and the static prefix warmed by other
sessions, each recognised by one signature and replayed as observed; `SessionFidelity.unconditioned`
keeps the replay without them.

Score: a request matches when its predicted cache read is within max(1 %, 128 tokens) of the billed
read. The naive baseline predicts that each request reads everything the previous one cached
(its read + write), the first request nothing (FORMATS.md: right for about 93 % of requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import simpy

from ctxbench.bench.fidelity_auto import auto_prefix_cause
from ctxbench.bench.fidelity_causes import likely_cause, near, tolerance
from ctxbench.bench.fidelity_forks import ForkedRequests, forked_requests
from ctxbench.bench.fidelity_gateway import as_charged, reports_cache_writes
from ctxbench.bench.fidelity_outside import (
    OutsideEvents,
    OutsideWarming,
    recognise,
    static_entry,
)
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.catalog import prices
from ctxbench.sim.names import Ttl, is_ttl
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.providers.anthropic import reported_usage
from ctxbench.sim.providers.base import Latency, Provider
from ctxbench.sim.providers.base import Usage as SimUsage
from ctxbench.sim.providers.choice import Serving, choose
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.providers.registry import profile as profile_config
from ctxbench.sim.records import RequestRecord
from ctxbench.sim.runner import ProviderFor, RunHooks, prepare_for, run_prepared
from ctxbench.traces.importers.claude_code_wire import at_mentions
from ctxbench.traces.importers.tokens import real_user_content
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace, Usage

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
# - deferred_tools_prefix "first": the request that first sends deferred tools (Claude Code 2.1.x
#   after its first ToolSearch result) re-wrote its prompt from the tools on (ef958aa1 main #1 and
#   agent a4ca #2 read 0; agent a528 #3 read only the static prefix a sibling wrote after its own
#   first load), while later loads kept the prefix (main #12, a528 #4/#5 read in full); the doc
#   says tool search keeps the prefix (providers.md §1.6).
# - refresh_ttl "reader": a read re-times the entry it hits to the ttl of the mark that found it.
#   ef958aa1 main #10 (Claude Code 2.1.114, 1h marks) read request #8's entry, not #9's, 616 s
#   after #9 wrote it with a 1h ttl; in between (183 s after #9) Claude Code sent its away summary,
#   a forked query with 5m marks (bench/fidelity_forks.py) that read #9's entry and no other:
#   re-timed to 5m, it had expired, while #8's 1h entry had not. One observation; the doc is
#   silent on mixed-ttl refreshes (providers.md §1.5).
OBSERVED: dict[str, Any] = {
    "lookback": 21,
    "tool_result_images_nested": True,
    "refresh_marks_in_read": True,
    "deferred_tools_prefix": "first",
    "refresh_ttl": "reader",
}
# Per model, on top of OBSERVED (catalog names). claude-opus-4-7, extension_readable_after 3 s: in
# the Claude Code 2.1.114 conversations (ef958aa1, April 2026) every request sent 2.2-2.8 s after
# the previous one started missed the entry that one wrote on top of its own read (main #4, agent
# a4ca #14 and #16, agent a528 #12: each read the previous request's read instead), the 34 sent
# 3.4 s or more after read it (within tolerance), and the two sent 2.5 s and 3.0 s after a request
# that had read nothing (a4ca #1, a528 #14) read its entry in full. The Haiku 4.5 sessions (2.1.97,
# same month) read such entries 1.5-2.9 s after in full: no such delay there. Four observations on
# one model and one day (bench/claude_code_wire.md §2).
OBSERVED_BY_MODEL: dict[str, dict[str, Any]] = {
    "claude-opus-4-7": {"extension_readable_after": 3.0},
}
# The first request of most sessions reads a static prefix an earlier session wrote (meta
# warm_tokens), and after idle gaps longer than the TTL the read falls back to exactly that
# prefix (coderabbit cb2e607c #23/#72 after 484/374 s, danieldemmel 9e953218 #91/#99 after 12 h /
# 647 s): other sessions of the same account keep it warm. Assumed: it is re-read every 60 s.
KEEP_WARM_EVERY_S = 60.0
# Outside events are recognised on a replay and replayed again at most this many times (each round
# can only add events; the real sessions need 1)
OUTSIDE_ROUNDS = 3


@dataclass
class RequestCompare:
    index: int
    t: float
    gap: float
    billed: Usage
    predicted: SimUsage
    naive_read: int
    miss_cause: str = ""
    cause: str = ""
    turn_start: int = 0  # billed cached part of the request that started this turn
    real_user: bool = False  # the user message before this request has non-tool-result content
    fallback_of: int = -1  # the latest earlier request whose whole cached prompt equals the billed read
    cost_billed: float = 0.0
    cost_predicted: float = 0.0  # billed output and uncached tail, predicted cache usage
    input_predicted: int = 0  # predicted uncached input, the uncached tail included
    outside: str = ""  # the outside event replayed as observed at this request (fidelity_outside.py)
    # first request of a turn: the paths the previous turn's prompt @-mentioned (Claude Code
    # attachments the log does not show; claude_code_wire.py `at_mentions`)
    dropped_mentions: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return abs(self.predicted.cache_read - self.billed.cache_read) <= tolerance(self.billed.cache_read)

    @property
    def within(self) -> bool:
        """Cache read, cache write (5m + 1h) and uncached input each within tolerance of the bill."""
        b, p = self.billed, self.predicted
        bw = b.cache_write_5m + b.cache_write_1h
        return (
            self.ok
            and abs(p.cache_write_5m + p.cache_write_1h - bw) <= tolerance(bw)
            and abs(self.input_predicted - b.input_tokens) <= tolerance(b.input_tokens)
        )

    @property
    def naive_ok(self) -> bool:
        return abs(self.naive_read - self.billed.cache_read) <= tolerance(self.billed.cache_read)


@dataclass
class SessionFidelity:
    name: str
    model: str
    policy: str
    requests: list[RequestCompare] = field(default_factory=list)
    cost_billed: float = 0.0
    cost_predicted: float = 0.0
    cost_naive: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    outside: OutsideEvents = field(default_factory=OutsideEvents)  # replayed as observed
    unconditioned: SessionFidelity | None = None  # the replay without them (None: it is this one)

    @property
    def baseline(self) -> SessionFidelity:
        """The replay without the outside events (this one when there are none)."""
        return self.unconditioned or self

    def request(self, index: int) -> RequestCompare:
        """The scored request of this index (requests without usage are not scored)."""
        return next(r for r in self.requests if r.index == index)

    def outside_cost(self, kind: str) -> float:
        """What replaying the `kind` events changes in the predicted cost of their requests."""
        base = self.baseline
        return sum(
            self.request(i).cost_predicted - base.request(i).cost_predicted for i in self.outside.at(kind)
        )

    @property
    def n(self) -> int:
        return len(self.requests)

    @property
    def share_ok(self) -> float:
        return sum(r.ok for r in self.requests) / self.n if self.n else 1.0

    @property
    def has_usage(self) -> bool:
        """The log records per-request usage (SWE-agent keeps totals only, FORMATS.md §2.7)."""
        return self.n > 0

    @property
    def share_within(self) -> float:
        return sum(r.within for r in self.requests) / self.n if self.n else 0.0

    @property
    def share_naive_ok(self) -> float:
        return sum(r.naive_ok for r in self.requests) / self.n if self.n else 1.0

    def total(self, what: str) -> int:
        if what == "billed":
            return sum(r.billed.cache_read for r in self.requests)
        if what == "predicted":
            return sum(r.predicted.cache_read for r in self.requests)
        return sum(r.naive_read for r in self.requests)

    @property
    def mismatches(self) -> list[RequestCompare]:
        """Requests whose cache read is off (`misses` also counts writes and uncached input)."""
        return [r for r in self.requests if not r.ok]

    @property
    def misses(self) -> list[RequestCompare]:
        """Requests not within tolerance (cache read, cache write or uncached input off)."""
        return [r for r in self.requests if not r.within]

    def cost_gap(self, only_mismatches: bool = False) -> float:
        """Predicted minus billed cost, of all requests or of those not within tolerance only (a
        read missed by N tokens costs N x (write - read) price: the few misses carry the session's
        whole cost gap when the other requests match)."""
        rs = self.misses if only_mismatches else self.requests
        return sum(r.cost_predicted - r.cost_billed for r in rs)


def _mentions(ev: MessageEvent) -> tuple[str, ...]:
    """What a user message's texts @-mention (claude_code_wire.py `at_mentions`)."""
    return tuple(m for c in ev.content if c.kind == "text" and c.text for m in at_mentions(c.text))


def _usage(r: RequestRecord) -> SimUsage:
    return SimUsage(r.uncached, r.cache_read, r.cache_write_5m, r.cache_write_1h, r.output)


def _cached(u: Usage) -> int:
    return u.cache_read + u.cache_write_5m + u.cache_write_1h


def warm_up(provider: Provider, prep: PreparedTrace, tokens: int, ttl: Ttl, now: float = -1.0) -> bool:
    """Write (or read and so refresh) the cache entry an earlier session left: the system block
    whose end is at `tokens`."""
    return static_entry(provider, prep.tools, prep.system, prep.model, tokens, ttl, now)


def serving(trace: Trace, profile: str | None = None, model: str | None = None) -> Serving:
    """The profile and model a fidelity replay uses (sim/providers/choice.py; the recorded
    harness's provider unless `profile` says otherwise)."""
    # the bill is the recorded model's: a profile of another family never replaces it
    return choose(trace, "anthropic", profile, model or trace.header.model or None)


def _anthropic(profile: str) -> bool:
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
    replays events outside the conversation at their requests (bench/fidelity_outside.py;
    lookup failures on anthropic profiles only)."""
    prep = prepare_for(trace, model)
    params: dict[str, Any] = {"latency": ZERO_LATENCY} if zero_latency else {}
    anthropic = _anthropic(profile)
    if observed and anthropic:
        params.update(OBSERVED)
        params.update(OBSERVED_BY_MODEL.get(prep.model, {}))
    w = int(trace.header.meta.get("warm_tokens", 0) or 0)
    recorded_ttl = str(trace.header.meta.get("ttl", "5m"))
    ttl: Ttl = recorded_ttl if is_ttl(recorded_ttl) else "5m"
    outside = outside or OutsideEvents()
    if outside.lookup_failures and anthropic:  # "": the one conversation this replay runs
        params["lookup_failure_at"] = tuple(("", i) for i in outside.lookup_failures)
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


def compare(
    trace: Trace,
    name: str = "",
    policy: str | Policy = "recorded",
    profile: str | None = None,
    warm: bool = True,
    keep_warm: bool = False,
    model: str | None = None,
    condition: bool = True,
) -> SessionFidelity:
    """Replay `trace` and score every request against its bill (module docstring). With
    `condition`, the outside events its bill shows are replayed as observed (at most
    `OUTSIDE_ROUNDS` times recognised anew) and the replay without them is kept beside."""
    pol = load_policy(policy) if isinstance(policy, str) else policy
    meta = dict(trace.header.meta)
    if not any(isinstance(e, MessageEvent) and e.usage is not None for e in trace.events):
        return SessionFidelity(
            name or str(meta.get("conversation", "")), trace.header.model, pol.name, meta=meta
        )
    sv = serving(trace, profile, model)
    plain = _score(trace, name, pol, sv, warm, keep_warm, OutsideEvents())
    if not condition or not _anthropic(sv.profile):  # the signatures are the Anthropic cache's
        return plain
    sf, events = plain, OutsideEvents()
    for _ in range(OUTSIDE_ROUNDS):
        more = events | recognise(sf.requests, meta)
        if more == events:
            break
        events = more
        sf = _score(trace, name, pol, sv, warm, keep_warm, events)
    if sf is not plain:
        sf.unconditioned = plain
        for r in plain.requests:  # recognised there: named as such in the replay without them
            r.outside = events.kind_of(r.index)
    return sf


def _score(
    trace: Trace,
    name: str,
    pol: Policy,
    sv: Serving,
    warm: bool,
    keep_warm: bool,
    outside: OutsideEvents,
) -> SessionFidelity:
    """One replay of `trace`, every request scored against its bill."""
    meta = dict(trace.header.meta)
    reported = reports_cache_writes(sv.profile)  # else compared as the gateway reports, priced as charged
    auto = profile_config(sv.profile).get("provider") == "auto-prefix"  # bench/fidelity_auto.py causes
    records = replay(trace, pol, sv.profile, warm, keep_warm=keep_warm, model=sv.model, outside=outside)
    records = [r for r in records if r.kind != "warmup"]
    model = records[0].model if records else trace.header.model
    pr = prices(model)
    label = name or str(meta.get("conversation", ""))
    sf = SessionFidelity(label, model, pol.name, meta=meta, outside=outside)
    prev_t: float | None = None
    prev_cached = 0
    turn_start = 0  # billed cached part of the last request sent right after real user content
    real = False
    mentions: tuple[str, ...] = ()  # @-mentions of the current turn's prompt, of the one before
    before: tuple[str, ...] = ()
    written: dict[int, int] = {}  # billed cached part -> request index
    i = -1
    recs = iter(records)
    for ev in trace.events:
        if isinstance(ev, CompactionEvent):
            turn_start, real = 0, True
            continue
        if not isinstance(ev, MessageEvent):
            continue
        if ev.role == "user":
            if real_user_content(ev.content):
                real = True
                before, mentions = mentions, _mentions(ev)
            continue
        rec = next(recs, None)
        if rec is None:
            break
        i += 1
        t = ev.t or 0.0
        gap = t - prev_t if prev_t is not None else 0.0
        prev_t = t
        if ev.usage is None:
            real = False
            continue
        b = ev.usage
        p_billed = _usage(rec)
        p = reported_usage(p_billed, reported)
        charged = b if reported else as_charged(b, str(meta.get("ttl", "5m")))
        naive = min(prev_cached, _cached(b)) if i else 0
        prev_cached = _cached(b)
        rc = RequestCompare(i, t, gap, b, p, naive, rec.miss_cause, turn_start=turn_start, real_user=real)
        rc.fallback_of = written.get(b.cache_read, -1)
        rc.outside = outside.kind_of(i)
        rc.dropped_mentions = before if real else ()
        written[_cached(b)] = i
        sf.requests.append(rc)
        if real or (i and rc.naive_read > b.cache_read and near(b.cache_read, turn_start)):
            # a read that fell back to the turn start marks non-tool-result content the log does
            # not show (e.g. IDE diagnostics reminders, Claude Code 2.0.x): a new turn starts here
            turn_start, real = _cached(b), False
        # after the last mark, in no block of the trace (providers.md §1.9), unless the importer
        # sized the blocks on the whole prompt (traces/importers/sizing.py `sized_on`)
        tail = 0 if meta.get("sized_on") == "prompt" else b.input_tokens
        rc.input_predicted = p.uncached + tail
        if not rc.within:  # automatic-prefix caches: bench/fidelity_auto.py, given the requests before
            rc.cause = (
                auto_prefix_cause(rc, sf.requests[:-1], meta) if auto else likely_cause(rc, sf.meta, model)
            )
        c, q = charged, p_billed  # priced as billed: writes a gateway did not report included
        rc.cost_billed = pr.cost(
            c.input_tokens, c.cache_read, c.cache_write_5m, c.cache_write_1h, b.output_tokens
        )
        rc.cost_predicted = pr.cost(
            q.uncached + tail, q.cache_read, q.cache_write_5m, q.cache_write_1h, b.output_tokens
        )
        sf.cost_billed += rc.cost_billed
        sf.cost_predicted += rc.cost_predicted
        nw = _cached(b) - naive
        n5, n1 = (0, nw) if b.cache_write_1h and not b.cache_write_5m else (nw, 0)
        sf.cost_naive += pr.cost(b.input_tokens, naive, n5, n1, b.output_tokens)
    return sf
