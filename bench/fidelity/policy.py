"""`fidelity --policy P` with P other than `recorded`: the replay is P's prediction of the session,
so a request whose read differs from the bill differs first because P decided differently from
the real harness (issue 29). Its cause is named "policy: ..." from where each compacted:

- the real harness compacted before request i and P did not (or the billed request is the real
  summariser request, which P did not send);
- P compacted before request i and the real harness did not;
- both compacted at the same points so far, yet P's context differs: its summaries, marks, TTL or
  evictions (the replay's miss cause named);
- the compaction points differ earlier: P's context differs since the first such request.

P's entry that expired less than `TTL_EDGE` past its TTL is taken as kept, as the recorded replay
falls back to the naive read there (bench/fidelity/unsure.py `AT_TTL_EDGE`): whether the provider
still held it the log's clock cannot say (`kept_at_edge`).

Outside events (lookup failures, outside warming, unlogged turn content) and the Claude Code
<= 2.0.x causes (IDE diagnostics, turn-scoped attachments) describe the recorded harness's own
requests: they are inferred only when replaying what was recorded (policy `recorded`,
bench/fidelity/compare.py). A compaction point is "before request i": i is the first billed
request, other than a summariser request, after the compaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxbench.bench.fidelity.results import SessionFidelity
from ctxbench.bench.fidelity.unsure import AT_TTL_EDGE, TTL_EDGE, past_ttl
from ctxbench.policies.preset import Policy
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.sim.core.records import RequestRecord
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

TURNS = 1  # issue 29: a compaction of P's within +-1 request of the real harness's is the same one


def kept_at_edge(
    rec: RequestRecord, prev: RequestRecord | None, gap: float, ttls: tuple[float, ...]
) -> tuple[SimUsage, str] | None:
    """P's usage at `rec` with its entry kept, and the fallback's name, where its `ttl_expiry` break
    came less than `TTL_EDGE` past a lifetime of `ttls` (`gap` seconds after the request before):
    it reads what P's previous request `prev` cached, its prompt starting with it, and writes the
    rest; None elsewhere (module docstring)."""
    if prev is None or rec.miss_cause != "ttl_expiry" or not 0 <= past_ttl(gap, ttls) < TTL_EDGE:
        return None
    before = prev.cache_read + prev.cache_write_5m + prev.cache_write_1h
    cached = rec.cache_read + rec.cache_write_5m + rec.cache_write_1h
    if not rec.cache_read < before <= cached:
        return None
    write = cached - before
    w5, w1 = (write, 0) if rec.cache_write_5m or not rec.cache_write_1h else (0, write)
    return SimUsage(rec.uncached, before, w5, w1, rec.output), f"the policy's previous prefix ({AT_TTL_EDGE})"


def replays_recorded(policy: Policy) -> bool:
    """The policy's compaction replays the recorded harness's compactions (`recorded` preset)."""
    return bool(getattr(policy.compaction, "replays_recorded", False))


@dataclass
class PolicyTrack:
    """Where the real harness and policy P compacted, as the scoring walks the session."""

    policy: str
    real: list[int] = field(default_factory=list)  # requests the real harness compacted before
    own: list[int] = field(default_factory=list)  # requests P compacted before
    real_pending: bool = False  # a recorded compaction since the last ordinary request
    own_pending: int = 0  # P's summary requests since the last ordinary request
    prev: RequestRecord | None = None  # P's request before the one scored (`kept_at_edge`)

    def at_edge(
        self, rec: RequestRecord | None, gap: float, ttls: tuple[float, ...]
    ) -> tuple[SimUsage, str] | None:
        """`kept_at_edge` at P's request `rec` (None: P sent none) after the one before it."""
        prev = self.prev
        self.prev = rec if rec is not None else prev
        return kept_at_edge(rec, prev, gap, ttls) if rec is not None else None

    def own_before(
        self, records: list[RequestRecord], k: int, summariser: bool, before: int, sf: Any
    ) -> tuple[int, bool]:
        """P's summary records from `k` on, before billed request `before`: with the real
        summariser request (`summariser`) the first is its pair; otherwise each is P's own, its
        cost added to `sf` (SessionFidelity: own_requests, cost_predicted). Returns the next
        record and whether the real summariser request has its pair."""
        while not summariser and k < len(records) and records[k].kind == "summary":
            r = records[k]
            cost = prices(r.model).cost(
                r.uncached, r.cache_read, r.cache_write_5m, r.cache_write_1h, r.output
            )
            sf.own_requests.append((before, cost))
            sf.cost_predicted += cost
            self.own_pending += 1
            k += 1
        paired = summariser and k < len(records) and records[k].kind == "summary"
        self.own_pending += paired
        if not paired and k < len(records) and "compaction" in records[k].edit:  # one without a summary
            self.own_pending += 1
        return k, paired

    def at_request(self, index: int) -> None:
        """An ordinary billed request `index`: the compactions pending land before it."""
        if self.real_pending:
            self.real.append(index)
        if self.own_pending:
            self.own.append(index)
        self.real_pending, self.own_pending = False, 0

    def cause(
        self, index: int, miss_cause: str, real_summariser: bool = False, own_summary: bool = False
    ) -> str:
        """Why P's read of request `index` differs from the bill (module docstring)."""
        p = self.policy
        if real_summariser and not own_summary:
            return (
                f"policy: the real harness compacted at request {index} (its summariser request); {p} did not"
            )
        if real_summariser:
            return f"policy: both compacted at request {index}; {p}'s summariser request differs"
        real_here, own_here = index in self.real, index in self.own
        if real_here and not own_here:
            return f"policy: the real harness compacted before request {index}; {p} did not"
        if own_here and not real_here:
            return f"policy: {p} compacted before request {index}; the real harness did not"
        since = self.first_difference(index)
        if since is None:
            what = (
                "the same compactions as the real harness so far"
                if self.real_upto(index)
                else "no compaction yet"
            )
            why = f"the replay's miss cause: {miss_cause}" if miss_cause else "no miss in the replay"
            return (
                f"policy: {p} reads differently with {what} ({why}): its marks, TTL, evictions or "
                "summaries differ, or the provider did what no policy predicts (outside events are "
                "inferred under policy `recorded` only)"
            )
        return (
            f"policy: {p}'s context differs from the real harness's since request {since} "
            f"(compactions before requests: real {self.real_upto(index)}, {p} {self.own_upto(index)})"
        )

    def real_upto(self, index: int) -> list[int]:
        return [i for i in self.real if i <= index]

    def own_upto(self, index: int) -> list[int]:
        return [i for i in self.own if i <= index]

    def first_difference(self, index: int) -> int | None:
        """The first request up to `index` before which only one of the two compacted."""
        diff = sorted(set(self.real_upto(index)) ^ set(self.own_upto(index)))
        return diff[0] if diff else None


def unbilled_summarisers(trace: Trace) -> list[bool]:
    """For each recorded compaction in order: True when the log holds no bill of its summariser
    request (no billed summariser reply since the previous request: a proxy log that missed it)."""
    out: list[bool] = []
    billed = False
    for ev in trace.events:
        if isinstance(ev, CompactionEvent):
            out.append(not billed)
            billed = False
        elif isinstance(ev, MessageEvent) and ev.role == "assistant":
            billed = ev.tag == "summary" and ev.usage is not None
    return out


def unlogged_cost(sf: SessionFidelity, trace: Trace) -> float:
    """P's own summary requests (SessionFidelity `own_requests`) within +-`TURNS` of a real
    compaction whose summariser request the log holds no bill of (each real compaction paired
    once): the provider billed that summariser, the log does not show it, so the bill's own
    requests are P's prediction without them."""
    real = list(sf.track.real) if sf.track else []
    open_points = [i for i, unbilled in zip(real, unbilled_summarisers(trace), strict=False) if unbilled]
    cost = 0.0
    for before, c in sf.own_requests:
        near = next((i for i in open_points if abs(i - before) <= TURNS), None)
        if near is not None:
            open_points.remove(near)
            cost += c
    return cost
