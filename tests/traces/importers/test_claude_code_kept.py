"""A compaction that kept the latest messages (Claude Code 2.1.x: "Recent messages are preserved
verbatim", policies.md §1): the boundary's `compactMetadata.preservedSegment` names the first kept
line; the new conversation is the summary, then those messages, then what follows. Checked on a
real session: Claude Code 2.1.197 from npm run against `ctxbench serve` with a scripted task that
compacts three times (data/claude-code-2.1.197-kept.jsonl.xz, its session log; the server's ledger of
every request it received beside it). Each new conversation opens with the last tool call of the one
before, its id differing from the previous new conversation's and nothing else: the replay is exact
only when the kept messages follow the summary and a tool call's id is part of the cached prefix."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.prefix.request_log import trace_log
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.claude_code_wire import kept_lines
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

DATA = Path(__file__).parent / "data"
LOG = DATA / "claude-code-2.1.197-kept.jsonl.xz"
LEDGER = DATA / "claude-code-2.1.197-kept.requests.jsonl.xz"


def _trace() -> Trace:
    return import_paths([LOG]).traces[0]


def _tool_ids(messages: list[dict[str, Any]]) -> list[str]:
    return [
        str(b.get("id") or b.get("tool_use_id"))
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") in ("tool_use", "tool_result")
    ]


def _wire_requests() -> list[list[dict[str, Any]]]:
    """The messages of every conversation request the server received (not the summariser's)."""
    out = []
    with lzma.open(LEDGER, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    for line in lines:
        r = json.loads(line)
        body = r.get("body")
        if not body or "<summary>" in json.dumps(r.get("reply")):
            continue
        out.append(body["messages"])
    return out


def test_each_compaction_keeps_the_last_tool_call_after_its_summary() -> None:
    tr = _trace()
    messages = [e for e in tr.events if isinstance(e, MessageEvent)]
    compactions = [e for e in tr.events if isinstance(e, CompactionEvent)]
    assert len(compactions) == 3
    heads = []
    for c in compactions:
        assert c.kept_from is not None
        heads.append([x.tool_id for x in messages[c.kept_from].content if x.kind == "tool_use"])
    assert heads == [["toolu_ctx000008"], ["toolu_ctx000015"], ["toolu_ctx000022"]]


def test_every_rebuilt_request_carries_the_tool_calls_sent() -> None:
    """The prompts the trace implies (bench/prefix/request_log.py) hold the tool calls of the requests the
    server received, in order: the kept call after each summary, none of the calls it replaced."""
    rebuilt = [_tool_ids(e["body"]["messages"]) for e in trace_log(_trace())]
    sent = [_tool_ids(m) for m in _wire_requests()]
    assert len(rebuilt) == len(sent) == 25
    assert rebuilt == sent


def test_the_replay_matches_every_bill_without_outside_events() -> None:
    sf = compare(_trace())
    assert sf.n == 25
    assert sf.share_within == 1.0
    assert len(sf.outside) == 0 and sf.unconditioned is None
    assert abs(sf.cost_predicted - sf.cost_billed) < 1e-9


def test_the_kept_lines_are_read_from_either_field() -> None:
    seg = {"preservedSegment": {"headUuid": "a", "anchorUuid": "s", "tailUuid": "c"}}
    assert kept_lines(seg) == ["a"]
    assert kept_lines({**seg, "preservedMessages": {"uuids": ["b", "c"]}}) == ["b", "c"]
    assert kept_lines({"trigger": "auto", "preTokens": 1000}) == []
    assert kept_lines({"preservedSegment": None, "preservedMessages": {"uuids": [3]}}) == []
    assert kept_lines("not an object") == []


def _log(tmp_path: Path, kept: dict[str, Any]) -> Path:
    """prompt, reply r1 (a tool call), its result, reply r2, its result, a boundary keeping `kept`,
    the summary, reply r3."""
    lines: list[dict[str, Any]] = []

    def add(**kw: Any) -> None:
        n = len(lines) + 1
        lines.append({"sessionId": "s", "uuid": f"l{n}", "timestamp": f"2026-12-01T00:00:{n:02d}Z",
                      "version": "2.1.197", **kw})  # fmt: skip

    def reply(rid: str, read: int, tool: str) -> None:
        usage = {"input_tokens": 1, "cache_read_input_tokens": read, "cache_creation_input_tokens": 500}
        content = [{"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}}]
        add(type="assistant", requestId=rid, message={"id": rid, "role": "assistant", "usage": usage,
            "model": "claude-sonnet-4-5-20250929", "content": content})  # fmt: skip

    def result(tool: str) -> None:
        add(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool, "content": "a.txt b.txt"}]})  # fmt: skip

    add(type="user", message={"role": "user", "content": "list the files"})
    reply("r1", 0, "t1")
    result("t1")
    reply("r2", 3000, "t2")
    result("t2")
    add(type="system", subtype="compact_boundary", compactMetadata={"trigger": "auto", **kept})
    add(type="user", isCompactSummary=True, message={"role": "user", "content": "Summary: files listed."})
    reply("r3", 2000, "t3")
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_kept_messages_that_are_the_latest_ones_need_no_note(tmp_path: Path) -> None:
    res = import_paths([_log(tmp_path, {"preservedMessages": {"uuids": ["l4", "l5"]}})])
    (c,) = [e for e in res.traces[0].events if isinstance(e, CompactionEvent)]
    assert c.kept_from == 3  # prompt, r1, t1's result, then r2 (line l4) and t2's result kept
    assert not any("other than the latest" in n for n in res.report.notes)


def test_kept_messages_other_than_the_latest_are_named(tmp_path: Path) -> None:
    """Kept from the first listed on (what kept_from can say), and the import says so."""
    res = import_paths([_log(tmp_path, {"preservedMessages": {"uuids": ["l2", "l3"]}})])
    (c,) = [e for e in res.traces[0].events if isinstance(e, CompactionEvent)]
    assert c.kept_from == 1
    assert any("other than the latest" in n for n in res.report.notes)


def test_a_kept_line_missing_from_the_log_keeps_none(tmp_path: Path) -> None:
    res = import_paths([_log(tmp_path, {"preservedSegment": {"headUuid": "gone", "tailUuid": "l5"}})])
    (c,) = [e for e in res.traces[0].events if isinstance(e, CompactionEvent)]
    assert c.kept_from is None
    assert res.report.skipped["compaction keeps messages from a line not in the log (none kept)"] == 1


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6) | st.sampled_from(["l2", "l4", "l9"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seg=_json,
    kept=_json,
    shape=st.sampled_from(["segment", "messages", "both", "raw"]),
)
def test_any_compact_metadata_imports(tmp_path: Path, seg: Any, kept: Any, shape: str) -> None:
    """Whatever a boundary's metadata holds, the import keeps some messages (at most what precedes
    the boundary) or none, and never raises."""
    meta: Any = {
        "segment": {"preservedSegment": seg},
        "messages": {"preservedMessages": kept},
        "both": {"preservedSegment": seg, "preservedMessages": {"uuids": kept}},
        "raw": seg,
    }[shape]
    res = import_paths([_log(tmp_path, meta if isinstance(meta, dict) else {"x": meta})])
    (c,) = [e for e in res.traces[0].events if isinstance(e, CompactionEvent)]
    assert c.kept_from is None or 0 <= c.kept_from <= 5
