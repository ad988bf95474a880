"""Traces recorded from live traffic (sim/serve/linearize.py), checked on the ledger `ctxbench serve`
kept of Claude Code 2.1.197 from npm compacting three times (tests/traces/importers/data): its
summariser requests are forked from the prompt before the messages the compaction keeps, and each
new conversation opens with the summary and those kept messages. Before, every request that did
not extend the conversation re-sent its whole history as new messages, so each replayed assistant
message of that history became a request no bill shows."""

from __future__ import annotations

import lzma
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.live.ledger import load_ledger
from ctxbench.sim.core.provider import Usage
from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.linearize import TraceRecorder
from ctxbench.sim.serve.wire import parse
from ctxbench.traces.format import read_trace
from ctxbench.traces.model import CompactionEvent, MessageEvent, SystemEvent, ToolsEvent, Trace

DATA = Path(__file__).parents[2] / "traces" / "importers" / "data"
LEDGER = DATA / "claude-code-2.1.197-kept.requests.jsonl.xz"


def _record(reqs: list[tuple[Any, tuple[dict[str, Any], ...], dict[str, int]]], tmp_path: Path) -> Trace:
    rec = TraceRecorder()
    for t, (p, reply, u) in enumerate(reqs):
        usage = Usage(u["uncached"], u["cache_read"], u["cache_write_5m"], u["cache_write_1h"], 0)
        rec.add(p, reply, usage, u.get("output", 80), float(t))
    (path,) = rec.write(tmp_path)
    return read_trace(path)


def _ledger_trace(ledger: Path, folder: Path) -> Trace:
    with lzma.open(ledger, "rt", encoding="utf-8") as f:
        (folder / "requests.jsonl").write_text(f.read(), encoding="utf-8")
    reqs, _ = load_ledger(folder)
    return _record([(r.parsed, tuple(r.reply), r.usage) for r in reqs], folder)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    return _ledger_trace(LEDGER, tmp_path_factory.mktemp("ledger"))


def test_every_assistant_message_is_a_billed_request(live: Trace) -> None:
    replies = [e for e in live.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert len(replies) == 28 and all(e.usage is not None for e in replies)
    assert sum(e.tag == "summary" for e in replies) == 3


def test_each_new_conversation_keeps_the_last_tool_call(live: Trace) -> None:
    messages = [e for e in live.events if isinstance(e, MessageEvent)]
    compactions = [e for e in live.events if isinstance(e, CompactionEvent)]
    assert len(compactions) == 3
    for c in compactions:
        assert c.summary and "This session is being continued" in "".join(x.text or "" for x in c.summary)
        assert c.kept_from is not None
        kept = messages[c.kept_from]
        assert kept.role == "assistant" and any(x.kind == "tool_use" for x in kept.content)
    instructions = [e for e in messages if e.role == "user" and e.tag == "summary"]
    assert all("TEXT ONLY" in (e.content[0].text or "") for e in instructions)


def test_the_replay_sends_what_the_server_received(live: Trace) -> None:
    """Every request within tolerance of its bill and the cost exact: the summariser requests too,
    forked from the prompt before the kept messages and marked one API message back, as the
    ledger's marks say (policies/recorded.py RecordedMarks: Claude Code's skipCacheWrite)."""
    sf = compare(live, condition=False)
    assert sf.n == 28 and sf.share_within == 1.0
    assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=1e-9)
    summarisers = [r for r in sf.requests if r.billed.input_tokens > 1000]  # the instruction, unmarked
    assert [r.index for r in summarisers] == [8, 16, 24]


def test_the_marks_sent_are_recorded(live: Trace) -> None:
    """Claude Code 2.1.197 marks the last two system blocks and its last message's last block."""
    system = next(e for e in live.events if isinstance(e, SystemEvent))
    assert [c.cache for c in system.content][-2:] == ["5m", "5m"]
    users = [e for e in live.events if isinstance(e, MessageEvent) and e.role == "user"]
    assert all(e.content[-1].cache == "5m" for e in users if e.tag != "summary")
    summaries = [e for e in users if e.tag == "summary"]
    assert summaries and all(not c.cache for e in summaries for c in e.content)


def test_a_codex_ledger_replays_on_the_profile_that_served_it(tmp_path: Path) -> None:
    """Codex 0.171.0 from npm against serve (`run_harness codex`, data/): its compaction request
    sends no tools, so it reads nothing; the trace records that tool list and the next request's,
    and replays on OpenAI's automatic cache (its model's, meta `format: live`), every request within
    tolerance (before: on the preset's Anthropic profile, none)."""
    tr = _ledger_trace(Path(__file__).parent / "data" / "codex-0.171.0-compact.requests.jsonl.xz", tmp_path)
    assert tr.header.meta["format"] == "live"
    assert [len(e.tools) for e in tr.events if isinstance(e, ToolsEvent)] == [9, 0, 9]
    sf = compare(tr, condition=False)
    assert sf.n > 0 and sf.share_within == 1.0
    assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=0.01)


def _parsed(messages: list[dict[str, Any]]) -> Any:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages,
            "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]}  # fmt: skip
    return parse("anthropic", body, {"x-claude-code-session-id": "s"}, factory_for("claude-sonnet-4-5"))


def test_a_new_conversation_repeating_nothing_is_sent_anew(tmp_path: Path) -> None:
    u = {"uncached": 10, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0}
    call = ({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},)
    first = _parsed([{"role": "user", "content": "list"}])
    second = _parsed([
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": [dict(call[0])]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a b"}]},
    ])  # fmt: skip
    fresh = _parsed([{"role": "user", "content": "something else"}])
    done = ({"type": "text", "text": "done"},)
    tr = _record([(first, call, u), (second, done, u), (fresh, (), u)], tmp_path)
    (c,) = [e for e in tr.events if isinstance(e, CompactionEvent)]
    assert c.kept_from is None and not c.summary
    assert [e.role for e in tr.events if isinstance(e, MessageEvent)] == [
        "user", "assistant", "user", "assistant", "user", "assistant"
    ]
