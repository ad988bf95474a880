"""A later `tools` event (traces/FORMAT.md) and deferred tools (Anthropic `defer_loading`,
providers.md §1.6): the transcript keeps a deferred tool out of the prefix chain, a tools change is
applied at its time and declared as "tools_change", and the Anthropic model's
`deferred_tools_prefix` decides what the first deferred tool does to the rendered prefix."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.provider import Request
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.prepared import prepare
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.runner import factory_for, run_prepared
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

F = BlockFactory()
MODEL = "claude-sonnet-4-6"
SYS = F.text("system", None, 0, key="sys", tokens=3000)


def tool(name: str, deferred: bool = False) -> Block:
    return F.tool_def(name, None, 400, deferred)


def test_a_deferred_tool_is_a_position_outside_the_prefix_chain() -> None:
    plain = Transcript([tool("Read")], [SYS])
    deferred = Transcript([tool("Read"), tool("WebFetch", True)], [SYS])
    other = Transcript([tool("Read"), tool("WebFetch")], [SYS])
    assert deferred.first_deferred == 1 and plain.first_deferred == -1
    assert deferred.hashes[-1] == plain.hashes[-1] != other.hashes[-1]
    assert deferred.total_tokens == plain.total_tokens  # not rendered where it is listed: 0 tokens
    assert deferred.total_bytes == plain.total_bytes + 400  # but sent


def test_replace_tools_rehashes_from_the_first_changed_tool_and_equals_a_fresh_transcript() -> None:
    tr = Transcript([tool("Read")], [SYS])
    tr.append(Message.of("user", (F.text("user", "hello"),)))
    tr.mark_sent()
    before = list(tr.hashes)
    assert tr.replace_tools([tool("Read"), tool("WebFetch", True)]) == 1
    assert tr.tools_end == 2 and tr.system_end == 3 and tr.msg_starts == [3]
    assert tr.hashes[1:] == before  # the deferred tool moved no hash after it
    assert tr.replace_tools([tool("Read"), tool("WebFetch", True)]) is None
    assert tr.replace_tools([tool("Read"), tool("Grep")]) == 1 and tr.first_deferred == -1
    fresh = Transcript([tool("Read"), tool("Grep")], [SYS])
    fresh.append(tr.messages[0])
    assert (tr.hashes, tr.cum_tokens, tr.msg_starts) == (fresh.hashes, fresh.cum_tokens, fresh.msg_starts)
    assert tr.changed_from == 1


def _calls(rule: str) -> list[int]:
    """Cache reads of three requests: before any deferred tool, after the first one is loaded,
    after a second one (each request marks the system block and its last message)."""
    prov = AnthropicProvider(model_info(MODEL), prices(MODEL), AnthropicConfig(deferred_tools_prefix=rule))
    tr = Transcript([tool("Read")], [SYS])
    reads = []
    for k, loaded in enumerate(([], ["WebFetch"], ["WebFetch", "WebSearch"])):
        tr.replace_tools([tool("Read"), *(tool(n, True) for n in loaded)])
        tr.append(Message.of("user", (F.text("user", None, 0, key=f"u{k}", tokens=2000),)))
        marks = ((tr.system_end - 1, "5m"), (len(tr) - 1, "5m"))
        out = prov.call(Request(tr, len(tr), MODEL, 10, marks, index=k), 10.0 * k)
        reads.append(out.usage.cache_read)
        tr.append(Message.of("assistant", (F.text("assistant", None, 0, key=f"a{k}", tokens=100),)))
    return reads


def test_deferred_tools_keep_the_prefix_as_documented_by_default() -> None:
    t = F.tool_def("Read", None, 400).tokens
    assert _calls("append") == [0, t + 5000, t + 7100]  # §1.6: tool search keeps the prefix


def test_first_deferred_tool_changes_the_rendered_prefix_further_ones_do_not() -> None:
    """The what-if `deferred_tools_prefix` "first" (one Claude Code 2.1.114 session billed it; not the
    fidelity replay's rule, bench/fidelity/replay.py): the first request with deferred tools re-writes
    everything from the tools on; later loads read the previous request in full."""
    t = F.tool_def("Read", None, 400).tokens
    assert _calls("first") == [0, 0, t + 7100]


def _trace(later: tuple[ToolDef, ...]) -> Trace:
    def user(k: int) -> MessageEvent:
        return MessageEvent("user", (Content("text", text=f"question {k} " * 200),), t=float(k))

    def reply(k: int) -> MessageEvent:
        text = Content("text", text=f"answer {k} " * 50)
        return MessageEvent("assistant", (text,), t=float(k), usage=Usage())

    events = [
        ToolsEvent((ToolDef("Read", nbytes=800),), t=0.0),
        SystemEvent((Content("text", text="You are a coding agent. " * 1500),), t=0.0),
        user(0), reply(0), user(1), reply(1),
        ToolsEvent((ToolDef("Read", nbytes=800), *later), t=2.0),
        user(2), reply(2), user(3), reply(3),
    ]  # fmt: skip
    return Trace(Header(source="test", harness="C", model=MODEL), tuple(events))


@pytest.mark.parametrize(
    ("later", "rule", "miss"),
    [
        ((ToolDef("Grep", nbytes=600),), "append", True),  # a new tool: everything from it on
        ((ToolDef("WebFetch", nbytes=600, deferred=True),), "append", False),
        ((ToolDef("WebFetch", nbytes=600, deferred=True),), "first", True),
    ],
)
def test_a_later_tools_event_is_applied_at_its_time_and_named(
    later: tuple[ToolDef, ...], rule: str, miss: bool
) -> None:
    trace = _trace(later)
    prep = prepare(trace, factory_for(MODEL))
    assert [s.kind for s in prep.steps].count("tools") == 1 and len(prep.tools) == 1
    policy = load_policy("recorded")
    params = {"deferred_tools_prefix": rule}
    recs = run_prepared([prep], policy, "anthropic", 0, params).records
    assert len(recs) == 4 and "tools_change" in recs[2].edit
    if miss:
        assert recs[2].miss_cause == "tools_change" and recs[2].cache_read == 0
    else:
        assert recs[2].miss_cause == "" and recs[2].cache_read == recs[1].cache_read + recs[1].cache_write_5m
    assert recs[3].miss_cause == "" and recs[3].cache_read > 0


def test_a_miss_after_deferred_tools_is_named_by_its_own_cause() -> None:
    """Deferred tools move no block of the rendered prefix (§1.6): a lookup failure on the request
    that first sends them is a lookup failure, not a tools change (the previous request's cached
    prefix is followed to where the deferred tools moved it)."""
    prep = prepare(_trace((ToolDef("WebFetch", nbytes=600, deferred=True),)), factory_for(MODEL))
    params = {"lookup_failure_at": (("", 2),)}
    recs = run_prepared([prep], load_policy("recorded"), "anthropic", 0, params).records
    assert "tools_change" in recs[2].edit
    assert recs[2].miss_cause == "server_lookup_failure" and 0 < recs[2].cache_read < recs[1].true_input


def test_the_thinking_stripper_follows_a_tools_change() -> None:
    """Haiku strips thinking (§1.6): its stripped prompt is rebuilt when the tools change."""
    trace = _trace((ToolDef("Grep", nbytes=600),))
    trace = replace(trace, header=replace(trace.header, model="claude-haiku-4-5"))
    prep = prepare(trace, factory_for("claude-haiku-4-5"))
    recs = run_prepared([prep], load_policy("recorded"), "anthropic", 0).records
    assert recs[2].miss_cause == "tools_change" and recs[2].cache_read == 0 and recs[3].cache_read > 0
