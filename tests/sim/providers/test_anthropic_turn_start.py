"""Unlogged non-tool-result content inside a tool loop (sim/providers/anthropic.py
`read_to_turn_start_at`): on a model that strips thinking (providers.md §1.6) the turn's earlier
thinking is gone, so the read stops at the turn's start and the rest is re-written; a second such
request in the same turn reads up to the first one's prompt, the turn that content opened."""

from __future__ import annotations

from typing import Any

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.model import (
    Content,
    Header,
    MessageEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
    Usage,
)

STRIPS = "claude-sonnet-4-5"  # §1.6: thinking stripped on Sonnet < 4.6


def _trace(model: str = STRIPS, steps: int = 10) -> Trace:
    """One real prompt, then a tool loop: each reply thinks and calls a tool, each result answers."""
    events: list[Any] = [
        ToolsEvent((ToolDef("Edit", nbytes=2000),), t=0.0),
        SystemEvent((Content("text", text="You are a coding agent. " * 1500),), t=0.0),
        MessageEvent("user", (Content("text", text="fix the bug " * 300),), t=0.0),
    ]
    for k in range(steps):
        reply = (
            Content("thinking", text=f"think {k} " * 200),
            Content("tool_use", text=f'{{"file": "f{k}.py"}}', tool_id=f"t{k}", name="Edit"),
        )
        events.append(MessageEvent("assistant", reply, t=5.0 * k, usage=Usage()))
        result = Content("tool_result", text=f"edited f{k}.py " * 100, tool_id=f"t{k}")
        events.append(MessageEvent("user", (result,), t=5.0 * k + 1))
    return Trace(Header(source="test", harness="C", model=model), tuple(events))


def _run(trace: Trace, **params: Any) -> list[RequestRecord]:
    return run_prepared([prepare_for(trace)], load_policy("recorded"), "anthropic", 3, params).records


def test_the_read_stops_at_the_turn_start_then_at_the_first_such_request() -> None:
    plain = _run(_trace())
    first = _run(_trace(), read_to_turn_start_at=(("", 4),))
    turn_start = plain[0].cache_read + plain[0].cache_write_5m  # the prompt's request wrote it
    assert first[:4] == plain[:4]
    assert turn_start < first[4].cache_read + first[4].cache_write_5m
    assert first[4].cache_read == turn_start < plain[4].cache_read
    total = plain[4].cache_read + plain[4].cache_write_5m
    assert first[4].cache_read + first[4].cache_write_5m == total  # the rest is re-written
    assert first[5].cache_read == plain[5].cache_read  # what it wrote is read next
    both = _run(_trace(), read_to_turn_start_at=(("", 4), ("", 7)))
    assert both[7].cache_read == total < plain[7].cache_read  # request 4's prompt opened the turn


def test_not_scripted_or_no_real_prompt_changes_nothing() -> None:
    plain = _run(_trace())
    assert _run(_trace(), read_to_turn_start_at=(("other", 4),)) == plain  # another conversation
    events = [
        e for e in _trace().events if not (isinstance(e, MessageEvent) and e.role == "user" and e.t == 0.0)
    ]
    no_prompt = Trace(_trace().header, tuple(events))
    assert _run(no_prompt, read_to_turn_start_at=(("", 4),)) == _run(no_prompt)
