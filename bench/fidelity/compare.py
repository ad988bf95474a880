"""Fidelity: replay imported real sessions with the recorded harness's behaviour and compare the
predicted usage of every request with what the provider billed (issue #6, DESIGN.md "proves its
answers against ... recorded bills").

Replay (bench/fidelity/replay.py): preset `recorded` (policies/recorded.py: recorded cache marks
and ttl, recorded compactions only) on the provider model of the trace's model, with zero latency so that each
request starts exactly when the recorded one did (TTL decisions use the recorded idle gaps). The
cache starts with what the first request found there: its recorded cache read (`meta.warm_tokens`,
a prefix an earlier session of the same account wrote) is written at t = -1 s.

State outside the conversation that no client model predicts is taken from the bill and counted
apart (bench/fidelity/outside.py): server-side lookup failures and the static prefix warmed by other
sessions, each recognised by one signature and replayed as observed; `SessionFidelity.unconditioned`
keeps the replay without them.

Score: a request matches when its predicted cache read is within max(1 %, 128 tokens) of the billed
read. The naive baseline predicts that each request reads everything the previous one cached
(its read + write), the first request nothing (FORMATS.md: right for about 93 % of requests).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxbench.bench.fidelity.auto import (
    auto_prefix_cause,
    caches,
    grid,
    left_after,
    naive_read,
    unit_read,
    writes_free,
)
from ctxbench.bench.fidelity.auto_interval import auto_interval, cache_of
from ctxbench.bench.fidelity.causes import likely_cause
from ctxbench.bench.fidelity.forks import forked_requests
from ctxbench.bench.fidelity.gateway import as_charged, write_shape
from ctxbench.bench.fidelity.outside import recognise
from ctxbench.bench.fidelity.policy import PolicyTrack, replays_recorded, unlogged_cost
from ctxbench.bench.fidelity.replay import is_anthropic, replay, serving
from ctxbench.bench.fidelity.results import OutsideEvents, RequestCompare, SessionFidelity, near
from ctxbench.bench.fidelity.unsure import READS_INSIDE_MESSAGES, TIMING_CAUSES, keeps_timing, unsure
from ctxbench.bench.trace_knows import apply as trace_knows
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.profiles import profile as profile_config
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.providers.anthropic import reported_usage
from ctxbench.sim.providers.choice import Serving, billed_prompt_max
from ctxbench.sim.runner import prepare_for
from ctxbench.traces.importers.claude_code_wire import at_mentions
from ctxbench.traces.importers.tokens import real_user_content
from ctxbench.traces.model import CompactionEvent, MessageEvent, ModelSwitchEvent, Trace, Usage

# Outside events are recognised on a replay and replayed again at most this many times (each round
# can only add events; the real sessions need 1)
OUTSIDE_ROUNDS = 3


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
    if not replays_recorded(pol):  # P takes what the trace knows, as `run` does (bench/trace_knows.py)
        pol = trace_knows(pol, prepare_for(trace, sv.model), pol.name).policy
    plain = _score(trace, name, pol, sv, warm, keep_warm, OutsideEvents())
    if plain.track is not None:  # P's summary requests the log's bill cannot hold (policy.py)
        plain.unlogged = unlogged_cost(plain, trace)
    # outside events are inferred only when replaying what was recorded (bench/fidelity/policy.py)
    if not condition or not is_anthropic(sv.profile) or not replays_recorded(pol):
        cfg = profile_config(sv.profile)
        # a profile that caches nothing has no chance to draw
        if cfg.get("provider") == "auto-prefix" and caches(cfg) and plain.requests:  # auto_interval.py
            plain.auto_provider = cache_of(sv.profile)
            plain.auto_interval = auto_interval(plain, plain.auto_provider)
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


def _minimum(cfg: dict[str, object], model: str) -> int:
    """The minimum cacheable prefix of an automatic-prefix profile for `model`."""
    own = cfg.get("min_cacheable")
    return int(str(own)) if own is not None else model_info(model).min_cacheable


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
    reported, charges, assumed = write_shape(trace, sv.profile)  # bench/fidelity/gateway.py
    meta.update({"writes_assumption": assumed} if assumed else {})
    cfg = profile_config(sv.profile)
    auto = cfg.get("provider") == "auto-prefix"  # bench/fidelity/auto.py causes and naive reading
    records = replay(trace, pol, sv.profile, warm, keep_warm=keep_warm, model=sv.model, outside=outside)
    records = [r for r in records if r.kind != "warmup"]
    model = records[0].model if records else trace.header.model
    label = name or str(meta.get("conversation", ""))
    sf = SessionFidelity(label, model, pol.name, meta=meta, outside=outside)
    prev_t: float | None = None
    prev_cached = prev_prompt = prev_turn = 0  # prev_prompt, prev_turn: auto.py `left_after`
    turn_start = 0  # billed cached part of the last request sent right after real user content
    real = False
    mentions: tuple[str, ...] = ()  # @-mentions of the current turn's prompt, of the one before
    before: tuple[str, ...] = ()
    written: dict[int, int] = {}  # billed cached part -> request index
    own = not replays_recorded(pol)  # P's own prediction: policy causes (bench/fidelity/policy.py)
    sf.track = track = PolicyTrack(pol.name) if own else None
    doubt, forked = unsure(trace, str(cfg.get("provider", ""))), set(forked_requests(meta))  # forks.py
    free = writes_free(cfg) or not (reported or charges)  # a write is billed as input
    charge_ttl = str(meta.get("ttl", "5m")) if charges else ""
    i, k, stopped = -1, 0, False  # k: the next record
    for ev in trace.events:
        if isinstance(ev, CompactionEvent):
            turn_start, real = 0, True
            if track:
                track.real_pending = True
            continue
        if not isinstance(ev, MessageEvent):
            continue
        if ev.role == "user":
            if real_user_content(ev.content):
                real = True
                before, mentions = mentions, _mentions(ev)
            continue
        summariser = own and ev.tag == "summary"  # the real summariser request, under P
        rec, k, own_summary = _next_record(records, k, track, stopped, summariser, i + 1, sf)
        if rec is None and not summariser:  # the replay stopped (e.g. a prompt over the model's window)
            stopped = True
            i += 1
            if ev.usage is not None:
                sf.not_scored.append(i)
            continue
        i += 1
        t = ev.t or 0.0
        gap = t - prev_t if prev_t is not None else 0.0
        prev_t = t
        if ev.usage is None:
            real = False
            continue
        b = ev.usage
        # the real summariser request P did not send: predicted nothing (bench/fidelity/policy.py)
        rec_model = rec.model if rec is not None else (sf.requests[-1].model if sf.requests else model)
        miss = rec.miss_cause if rec is not None else ""
        out_tokens = rec.output if rec is not None and own_summary else b.output_tokens  # P's own summary
        naive = _naive(cfg, i, b, prev_cached, prev_turn if real else prev_prompt, rec_model, not reported)
        above = rec is not None and i in forked and rec.cache_read > naive  # a fork's read, not a break
        why = "" if own or above else doubt.at(i, rec_model, model, miss, gap)  # P's own: no fallback
        # after the last mark, in no block of the trace (providers.md §1.9), unless the importer
        # sized the blocks on the whole prompt (traces/importers/sizing.py `sized_on`)
        tail = 0 if meta.get("sized_on") == "prompt" or rec is None else b.input_tokens
        edge = track.at_edge(rec, gap, doubt.ttls) if track is not None else None  # policy.py
        p_billed, fallback = edge or _predicted(rec, why, b, naive, tail, _in_steps(cfg), writes_free(cfg))
        p = reported_usage(p_billed, reported)
        charged = as_charged(b, str(meta.get("ttl", "5m"))) if charges else b
        prev_cached = _cached(b) if reported else b.total_input  # a gateway's writes are in its input
        prev_prompt, prev_turn = left_after(cfg, b.input_tokens + b.cache_read, b.output_tokens, rec_model)
        rc = RequestCompare(i, t, gap, b, p, naive, miss, turn_start=turn_start, real_user=real)
        rc.request_id, rc.unsure, rc.fallback, rc.model = ev.request_id, why, fallback, rec_model
        rc.replay_read = rec.cache_read if rec is not None else 0
        rc.fallback_of = written.get(b.cache_read, -1)
        rc.outside = outside.kind_of(i)
        rc.dropped_mentions = before if real else ()
        written[_cached(b)] = i
        sf.requests.append(rc)
        if real or (i and rc.naive_read > b.cache_read and near(b.cache_read, turn_start)):
            # a read that fell back to the turn start marks non-tool-result content the log does
            # not show (e.g. IDE diagnostics reminders, Claude Code 2.0.x): a new turn starts here
            turn_start, real = _cached(b), False
        rc.input_predicted = p.uncached + tail
        if track is not None and not summariser:
            track.at_request(i)
        if not rc.within:
            rc.cause = _cause(rc, sf, track, auto, summariser, own_summary)
        priced = p_billed if reported or charges else p
        _costs(sf, rc, charged, priced if rec is not None else None, tail, out_tokens, free, charge_ttl)
    if sf.not_scored:
        sf.not_scored_why = _why_stopped(records, sf.not_scored[0] - 1, billed_prompt_max(trace))
    return sf


def _why_stopped(records: list[RequestRecord], last: int, billed_top: int) -> str:
    """Why the replay stopped after request `last`: the failed call that ended it (e.g. a prompt
    over the model's window), and where the billed prompts it did not reach are larger than that
    window, that the model which served them has a larger one."""
    failed = next((r for r in records if r.error), None)
    if failed is None:
        return f"the replay stopped after request #{last} (the replayed harness sent no more requests)"
    why = f"{failed.error} on {failed.model}: {failed.true_input:,} prompt tokens"
    window = model_info(failed.model).window
    if billed_top > window:
        why += (
            f"; billed prompts reach {billed_top:,}: the model that served them has a larger "
            f"window than the catalog's {window:,} (--model NAME replays the log as another)"
        )
    return f"the replay stopped after request #{last} ({why})"


def _cause(
    rc: RequestCompare,
    sf: SessionFidelity,
    track: PolicyTrack | None,
    auto: bool,
    summariser: bool,
    own_summary: bool,
) -> str:
    """Why request `rc` (the last of `sf`) is not within the bill: where P decided differently
    (bench/fidelity/policy.py), on automatic-prefix caches given the requests before
    (bench/fidelity/auto.py), else the likeliest cause (bench/fidelity/causes.py)."""
    if track is not None:
        return track.cause(rc.index, rc.miss_cause, summariser, own_summary)
    if auto:
        return auto_prefix_cause(rc, sf.requests[:-1], sf.meta)
    return likely_cause(rc, sf.meta, sf.model, sf.requests[-2] if len(sf.requests) > 1 else None)


def _next_record(
    records: list[RequestRecord],
    k: int,
    track: PolicyTrack | None,
    stopped: bool,
    summariser: bool,
    n: int,
    sf: SessionFidelity,
) -> tuple[RequestRecord | None, int, bool]:
    """The replay's record for the `n`-th real request, the index of the record after it, and
    whether it is P's own summary request. P's summary requests are paired with the real
    summariser request, or are P's own (bench/fidelity/policy.py); None when P sent no such
    request or the replay has stopped."""
    own_summary = False
    if track is not None and not stopped:  # P's summary requests: paired with the real one, or P's own
        while k < len(records) and records[k].error == "too_long":  # refused, not billed (P retried)
            k += 1
        k, own_summary = track.own_before(records, k, summariser, n, sf)
    if summariser and not own_summary:
        return None, k, own_summary  # P sent no such request
    rec = None if stopped else (records[k] if k < len(records) else None)
    return rec, k + (rec is not None), own_summary


def _naive(
    cfg: dict[str, Any],
    i: int,
    b: Usage,
    prev_cached: int,
    prev_prompt: int,
    model: str,
    hidden: bool = False,
) -> int:
    """The naive read of request `i` (billed `b`): everything the previous request cached, the
    first request nothing. On automatic-prefix caches all of the previous prompt (with its output
    on the models the profile lists in `output_cached`, auto.py `left_cached`), rounded to the
    profile's steps or the model's own grid (bench/fidelity/auto.py `naive_read`, `grid`); on
    DeepSeek the previous prompt and its output (`prev_prompt`, auto.py `left_cached`) in whole
    storage units. Behind a gateway that reports no writes (`hidden`) a request cached its whole
    prompt, as far as its usage shows."""
    if not i:
        return 0
    if cfg.get("provider") == "deepseek":
        return unit_read(prev_prompt, b.input_tokens + b.cache_read, int(cfg.get("unit_tokens", 1) or 1))
    if cfg.get("provider") == "auto-prefix":
        if not caches(cfg):  # `no-cache` (ttl 0): nothing is ever read
            return 0
        first, step = grid(cfg, model, _minimum(cfg, model))
        return naive_read(prev_prompt, b.input_tokens + b.cache_read, first, step)
    return min(prev_cached, b.total_input if hidden else _cached(b))


def _in_steps(cfg: dict[str, Any]) -> bool:
    """Whether the cache of profile `cfg` reads in steps: automatic-prefix caches (128 tokens) and
    DeepSeek's 128-token units (bench/fidelity/unsure.py `READS_INSIDE_MESSAGES`)."""
    return cfg.get("provider") == "auto-prefix" or cfg.get("provider") in READS_INSIDE_MESSAGES


def _predicted(
    rec: RequestRecord | None, why: str, b: Usage, naive: int, tail: int, steps: bool, free: bool = False
) -> tuple[SimUsage, str]:
    """The predicted usage of a request and, when the replay is unsure there (`why`,
    bench/fidelity/unsure.py) and its read is not a timing miss (on another backend, even a timing
    miss: unsure.py `keeps_timing`) yet differs from the naive read,
    the naive read instead (no invented break) with the fallback's name. On a cache that reads in
    steps (`steps`: automatic-prefix caches, 128 tokens; DeepSeek's 128-token units) one step is a
    difference; on a cache that bills no writes (`free`) the naive fallback writes nothing."""
    differs = rec is not None and rec.cache_read != naive and (steps or not near(rec.cache_read, naive))
    timing = rec is not None and rec.miss_cause in TIMING_CAUSES and keeps_timing(why)
    if why and rec is not None and not timing and differs:
        return _naive_usage(b, naive, b.input_tokens - tail, rec.output, free), f"naive ({why})"
    return (_usage(rec) if rec is not None else SimUsage(0, 0, 0, 0, 0)), ""


def _costs(
    sf: SessionFidelity,
    rc: RequestCompare,
    c: Usage,
    q: SimUsage | None,
    tail: int,
    out_tokens: int,
    free: bool = False,
    charge_ttl: str = "",
) -> None:
    """Request `rc` priced as billed (`c`: writes a gateway did not report included), as
    predicted (`q`, priced as billed with the uncached tail; None: P sent no such request, 0) and
    as the naive read, on the model it ran on (a `model_switch` changes it); added to the
    session's totals."""
    b, naive = rc.billed, rc.naive_read
    pr = prices(rc.model)
    rc.cost_billed = pr.cost(
        c.input_tokens, c.cache_read, c.cache_write_5m, c.cache_write_1h, b.output_tokens
    )
    rc.cost_predicted = (
        pr.cost(q.uncached + tail, q.cache_read, q.cache_write_5m, q.cache_write_1h, out_tokens)
        if q is not None
        else 0.0
    )
    sf.cost_billed += rc.cost_billed
    sf.cost_predicted += rc.cost_predicted
    nw = _cached(b) - naive  # below 0: the naive read took that much of the uncached input
    n5, n1 = (0, max(0, nw)) if b.cache_write_1h and not b.cache_write_5m else (max(0, nw), 0)
    uncached = max(0, b.input_tokens + min(0, nw))
    if free:  # what the naive read leaves is billed as input (`free`: no write is billed as one)
        n5, n1, uncached = 0, 0, max(0, b.input_tokens + nw)
    if charge_ttl:  # a gateway that charges its unreported writes: the rest of the prompt written
        rest = max(0, b.total_input - naive)
        n5, n1, uncached = (0, rest, 0) if charge_ttl == "1h" else (rest, 0, 0)
    rc.cost_naive = pr.cost(uncached, naive, n5, n1, b.output_tokens)
    sf.cost_naive += rc.cost_naive


def _naive_usage(b: Usage, naive: int, uncached: int, output: int, free: bool = False) -> SimUsage:
    """What the bill implies for a request the replay is unsure of: the naive read, the rest of
    the billed cached part written (at the billed ttl), the billed uncached input; on a cache that
    bills no writes (`free`) the rest is uncached input."""
    write = _cached(b) - naive
    if free:
        return SimUsage(max(0, uncached + write), naive, 0, 0, output)
    if write < 0:  # read more than the bill cached (an automatic cache: the previous prompt), so
        return SimUsage(max(0, uncached + write), naive, 0, 0, output)  # that much less uncached
    w5, w1 = (0, write) if b.cache_write_1h and not b.cache_write_5m else (write, 0)
    return SimUsage(uncached, naive, w5, w1, output)
