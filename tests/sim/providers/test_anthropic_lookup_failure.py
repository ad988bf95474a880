"""Server-side lookup failures of the Anthropic model (sim/providers/anthropic.py): a request
reads only the system + tools prefix though a longer entry is live (anthropics/claude-code#87966),
scripted at a request or drawn at a seeded rate; the miss is named `server_lookup_failure`."""

from __future__ import annotations

from typing import Any

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.transcript import Transcript
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

MODEL = "claude-sonnet-4-6"


def _trace(turns: int = 12) -> Trace:
    events: list[Any] = [
        ToolsEvent((ToolDef("Read", nbytes=2000),), t=0.0),
        SystemEvent((Content("text", text="You are a coding agent. " * 1500),), t=0.0),
    ]
    for k in range(turns):
        events.append(MessageEvent("user", (Content("text", text=f"step {k} " * 300),), t=10.0 * k))
        reply = Content("text", text=f"done {k} " * 80)
        events.append(MessageEvent("assistant", (reply,), t=10.0 * k, usage=Usage()))
    return Trace(Header(source="test", harness="C", model=MODEL), tuple(events))


def _run(policy: str = "recorded", **params: Any) -> list[RequestRecord]:
    return run_prepared([prepare_for(_trace())], load_policy(policy), "anthropic", 3, params).records


def test_a_scripted_failure_reads_the_system_prefix_and_heals() -> None:
    plain = _run()
    failed = _run(lookup_failure_at=(("c0", 4),))
    prep = prepare_for(_trace())
    head = Transcript(prep.tools, prep.system).total_tokens  # the system + tools prefix
    assert failed[:4] == plain[:4]
    r = failed[4]
    assert r.miss_cause == "server_lookup_failure" and r.miss_tokens > 0
    assert r.cache_read == head < plain[4].cache_read
    assert r.cache_read + r.cache_write_5m == plain[4].cache_read + plain[4].cache_write_5m  # re-written
    assert failed[5].cache_read == plain[5].cache_read and failed[5].miss_cause == ""  # self-healing


@pytest.mark.parametrize("policy", ["recorded", "c-default"])  # c-default also marks the previous end
def test_failures_at_a_rate_are_seeded_and_off_by_default(policy: str) -> None:
    plain = _run(policy)
    assert _run(policy, lookup_failure_rate=0.0) == plain  # no draw at all: the same records
    a, b = _run(policy, lookup_failure_rate=0.3), _run(policy, lookup_failure_rate=0.3)
    assert a == b
    fails = [r.index for r in a if r.miss_cause == "server_lookup_failure"]
    assert 0 < len(fails) < len(a)
    assert all(a[i].cache_read < plain[i].cache_read for i in fails)
