"""Fidelity: replay imported real sessions with the recorded harness's behaviour and compare the
predicted usage of every request with what the provider billed (issue #6, DESIGN.md "proves its
answers against ... recorded bills").

Replay (bench/fidelity_replay.py): preset `recorded` (policies/recorded.py: recorded cache marks
and ttl, recorded compactions only) on the provider model of the trace's model, with zero latency so that each
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

from dataclasses import dataclass, field, replace
from typing import Any

from ctxbench.bench.fidelity_auto import auto_prefix_cause
from ctxbench.bench.fidelity_causes import likely_cause, near, tolerance
from ctxbench.bench.fidelity_gateway import as_charged, reports_cache_writes
from ctxbench.bench.fidelity_outside import (
    OutsideEvents,
    recognise,
)
from ctxbench.bench.fidelity_replay import is_anthropic, replay, serving
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.catalog import prices
from ctxbench.sim.providers.anthropic import reported_usage
from ctxbench.sim.providers.base import Usage as SimUsage
from ctxbench.sim.providers.choice import Serving
from ctxbench.sim.providers.registry import profile as profile_config
from ctxbench.sim.records import RequestRecord
from ctxbench.traces.importers.claude_code_wire import at_mentions
from ctxbench.traces.importers.tokens import real_user_content
from ctxbench.traces.model import CompactionEvent, MessageEvent, ModelSwitchEvent, Trace, Usage

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
    request_id: str = ""  # the provider's id (a forked session's copies carry the original's)
    cost_naive: float = 0.0
    model: str = ""  # the model it ran on and is priced as (a `model_switch` changes it)

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
    copied: int = 0  # requests left out: copies of requests an earlier session billed

    def without(self, ids: set[str]) -> SessionFidelity:
        """This session scored without the requests of `ids` (copies a forked or resumed session
        holds of requests an earlier session billed: replayed, since they build its prompt, but
        billed once, where they were made; bench/billed.py)."""
        keep = [r for r in self.requests if not (r.request_id and r.request_id in ids)]
        if len(keep) == len(self.requests):
            return self
        return replace(
            self,
            requests=keep,
            cost_billed=sum(r.cost_billed for r in keep),
            cost_predicted=sum(r.cost_predicted for r in keep),
            cost_naive=sum(r.cost_naive for r in keep),
            outside=self.outside.only({r.index for r in keep}),
            unconditioned=self.unconditioned.without(ids) if self.unconditioned else None,
            copied=self.copied + len(self.requests) - len(keep),
        )

    @property
    def models(self) -> list[str]:
        """The models its requests ran on, in order of first use (several after a `model_switch`)."""
        return list(dict.fromkeys(r.model for r in self.requests if r.model)) or [self.model]

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
    if model:  # every request as this model: the log's own switches (`/model`, fast mode) not applied
        trace = replace(trace, events=tuple(e for e in trace.events if not isinstance(e, ModelSwitchEvent)))
    sv = serving(trace, profile, model)
    plain = _score(trace, name, pol, sv, warm, keep_warm, OutsideEvents())
    if not condition or not is_anthropic(sv.profile):  # the signatures are the Anthropic cache's
        return plain
    sf, events = plain, OutsideEvents()
    for _ in range(OUTSIDE_ROUNDS):
        more = events | recognise(sf.requests, meta, sf.model)
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
        rc.request_id = ev.request_id
        rc.model = rec.model
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
        pr = prices(rec.model)  # the model of this request (a `model_switch` changes it)
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
        rc.cost_naive = pr.cost(b.input_tokens, naive, n5, n1, b.output_tokens)
        sf.cost_naive += rc.cost_naive
    return sf
