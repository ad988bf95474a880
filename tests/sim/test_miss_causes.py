"""Every cache miss is named: TTL expiry after an idle gap, the 20-block lookback (H-23), the
first request, a prefix change nobody declared."""

from __future__ import annotations

from dataclasses import replace

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.registry import create
from ctxbench.sim.runner import run_trace
from ctxbench.traces.model import Content, Header, MessageEvent, SystemEvent, ToolDef, ToolsEvent, Trace


def _trace(turns: int, calls_per_turn: int = 1, gap_at: int = -1, gap: float = 0.0) -> Trace:
    ev: list = [
        ToolsEvent(tuple(ToolDef(f"tool{i}", nbytes=600) for i in range(26))),
        SystemEvent((Content("text", nbytes=8000, key="system"),)),
        MessageEvent("user", (Content("text", nbytes=2500, key="prep"),), "prep", True, t=0.0),
        MessageEvent("assistant", (Content("text", text="BEGIN"),), "reply", True, t=1.0, output_tokens=2),
    ]
    t = 1.0
    prev_results: tuple[Content, ...] = ()
    for k in range(turns):
        t += gap if k == gap_at else 5.0
        uses = tuple(
            Content("tool_use", nbytes=60, key=f"u{k}.{j}", tool_id=f"t{k}.{j}", name="tool1")
            for j in range(calls_per_turn)
        )
        results = tuple(
            Content("tool_result", nbytes=200, key=f"r{k}.{j}", tool_id=f"t{k}.{j}")
            for j in range(calls_per_turn)
        )
        if k:
            ev.append(
                MessageEvent(
                    "user",
                    (*prev_results, Content("text", nbytes=900, key=f"o{k}", lang="json")),
                    "observation",
                    t=t,
                )
            )
        else:
            ev.append(
                MessageEvent(
                    "user", (Content("text", nbytes=900, key=f"o{k}", lang="json"),), "observation", t=t
                )
            )
        t += 2.0
        ev.append(
            MessageEvent(
                "assistant",
                (Content("text", nbytes=300, key=f"a{k}"), *uses),
                "reply",
                t=t,
                output_tokens=100,
            )
        )
        prev_results = results
    return Trace(Header("test", "H", "claude-sonnet-4-6", 200_000), tuple(ev))


def test_idle_gap_longer_than_ttl_is_a_ttl_expiry_miss() -> None:
    res = run_trace(_trace(20, gap_at=10, gap=400.0), load_policy("h-direct"))
    causes = [(r.index, r.miss_cause) for r in res.records if r.miss_cause]
    assert causes[0] == (0, "first_request")
    assert [c for _, c in causes[1:]] == ["ttl_expiry"]
    quick = run_trace(_trace(20, gap_at=10, gap=250.0), load_policy("h-direct"))
    assert [r.miss_cause for r in quick.records if r.miss_cause] == ["first_request"]


def test_many_tool_calls_need_a_mark_on_the_previous_end() -> None:
    """H-23: the provider looks back only ~20 blocks from a mark; a turn with many tool calls adds
    more, so a lone mark on the newest message misses while H's four marks read the cache."""
    trace = _trace(12, calls_per_turn=12)
    four = run_trace(trace, load_policy("h-openrouter"))
    assert [r.miss_cause for r in four.records if r.miss_cause] == ["first_request"]
    pol = load_policy("h-openrouter")
    lone = run_trace(trace, replace(pol, marks=create("marks", "last-block")))
    causes = [r.miss_cause for r in lone.records if r.miss_cause]
    assert causes.count("lookback_exceeded") >= 10
    assert sum(r.cost for r in lone.records) > 1.5 * sum(r.cost for r in four.records)


def test_no_marks_caches_nothing_on_an_explicit_breakpoint_provider() -> None:
    pol = load_policy("h-openrouter")
    res = run_trace(_trace(10), replace(pol, marks=create("marks", "none")))
    assert sum(r.cache_read + r.cache_write_5m for r in res.records) == 0
    assert all(r.breakpoints == 0 for r in res.records)
