"""An expiry break on Anthropic's cache sent less than `TTL_EDGE` seconds past the entry's TTL is
unsure, and falls back to the naive read: entries are deleted "promptly, though not immediately"
and the log's clock is the client's (bench/fidelity/unsure.py `TTL_EDGE`); the counts that set it
(bench/fidelity/gaps.py `count_edge`)."""

from __future__ import annotations

from collections import Counter

from ctxbench.bench.fidelity.compare import _predicted
from ctxbench.bench.fidelity.gaps import count_edge
from ctxbench.bench.fidelity.policy import kept_at_edge
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.bench.fidelity.unsure import AT_TTL_EDGE, TTL_EDGE, Unsure, keeps_timing, unsure
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.sim.core.records import RequestRecord
from ctxbench.traces.model import Header, Trace, Usage


def _record(read: int, write: int, cause: str) -> RequestRecord:
    return RequestRecord(
        "c", 3, "turn", 0, 900.0, 0.0, "claude-sonnet-4-6", read + write + 100, 0, 100, read, write, 0,
        50, 0.0, 0.0, 0.0, miss_cause=cause,
    )  # fmt: skip


def test_only_an_expiry_just_past_the_ttl_is_at_its_edge() -> None:
    five = Unsure(ttls=(300.0,))
    assert five.at(3, miss="ttl_expiry", gap=300.0) == AT_TTL_EDGE
    assert five.at(3, miss="ttl_expiry", gap=300.0 + TTL_EDGE - 0.1) == AT_TTL_EDGE
    assert five.at(3, miss="ttl_expiry", gap=300.0 + TTL_EDGE) == ""  # past the edge: expired
    assert five.at(3, miss="compaction", gap=310.0) == ""  # another cause at that gap stands
    both = Unsure(ttls=(300.0, 3600.0))  # a session with 1h marks: its messages may be 5m
    assert both.at(3, miss="ttl_expiry", gap=3610.0) == AT_TTL_EDGE
    assert both.at(3, miss="ttl_expiry", gap=310.0) == AT_TTL_EDGE
    assert both.at(3, miss="ttl_expiry", gap=400.0) == ""
    assert five.at(3, miss="ttl_expiry", gap=3610.0) == ""  # 5m entries only: long expired
    assert Unsure().at(3, miss="ttl_expiry", gap=310.0) == ""  # not Anthropic's cache: no edge rule
    assert not keeps_timing(AT_TTL_EDGE) and keeps_timing("version 2.1.88 not checked")


def test_the_edge_is_the_sessions_ttl_on_anthropic_only() -> None:
    one_hour = Trace(Header("t", meta={"ttl": "1h"}), ())
    assert unsure(one_hour, "anthropic").ttls == (300.0, 3600.0)
    assert unsure(Trace(Header("t"), ()), "anthropic").ttls == (300.0,)
    assert unsure(one_hour, "auto-prefix").ttls == ()  # retention measured by gap, not a TTL
    assert unsure(one_hour, "deepseek").ttls == ()


def test_an_expiry_at_the_edge_falls_back_to_the_naive_read() -> None:
    billed = Usage(100, 80_000, 2_000, 0, 50)
    expired = _record(0, 82_000, "ttl_expiry")
    fell, why = _predicted(expired, AT_TTL_EDGE, billed, 80_000, 0, False)
    assert fell.cache_read == 80_000 and fell.cache_write_5m == 2_000
    assert why == f"naive ({AT_TTL_EDGE})"


def _rc(i: int, t: float, read: int, cause: str = "") -> RequestCompare:
    return RequestCompare(
        i, t, 0.0, Usage(1000, read, 0, 0, 10), SimUsage(1000, read), 0, miss_cause=cause,
        model="claude-sonnet-4-6",
    )  # fmt: skip


def test_expiry_breaks_are_counted_by_how_far_past_the_ttl() -> None:
    reqs = [
        _rc(0, 0, 0),
        _rc(1, 310, 1000, "ttl_expiry"),  # 10 s past, read the whole previous prompt: kept
        _rc(2, 640, 0, "ttl_expiry"),  # 30 s past, read nothing: lost
        _rc(3, 700, 2000),  # no expiry: not counted
        _rc(4, 1500, 0, "ttl_expiry"),  # 500 s past: beyond the bins
    ]
    acc: Counter[str] = Counter()
    count_edge(SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs), (300.0,), acc)
    assert acc == Counter({"0-20 s past": 1, "0-20 s past, kept": 1, "20-40 s past": 1})
    assert acc["20-40 s past, kept"] == 0


def test_a_policys_own_expiry_at_the_edge_reads_its_previous_prefix() -> None:
    """`fidelity --policy P`: P's expiry break at the TTL's edge is taken as kept, as the recorded
    replay's is (bench/fidelity/policy.py `kept_at_edge`): P reads what its request before cached."""
    prev = _record(40_000, 2_000, "")
    broke = _record(0, 45_000, "ttl_expiry")
    kept = kept_at_edge(broke, prev, 305.0, (300.0,))
    assert kept is not None
    usage, name = kept
    assert (usage.cache_read, usage.cache_write_5m, usage.uncached) == (42_000, 3_000, 100)
    assert AT_TTL_EDGE in name
    assert kept_at_edge(broke, prev, 300.0 + TTL_EDGE, (300.0,)) is None  # past the edge: expired
    assert kept_at_edge(_record(0, 45_000, "compaction"), prev, 305.0, (300.0,)) is None
    assert kept_at_edge(broke, None, 305.0, (300.0,)) is None  # no request of P's before
    assert kept_at_edge(_record(0, 30_000, "ttl_expiry"), prev, 305.0, (300.0,)) is None  # not P's prefix
