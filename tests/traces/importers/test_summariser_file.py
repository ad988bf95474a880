"""Claude Code's compaction summariser file (traces/importers/summariser_file.py): read without its
session, its last request is the summary request and a compaction follows it."""

from __future__ import annotations

from pathlib import Path

from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.importers.sizing_shares import PRECOMPUTED
from ctxbench.traces.importers.summariser_file import close_compaction
from ctxbench.traces.importers.tokens import Item
from ctxbench.traces.model import CompactionEvent, MessageEvent
from tests.traces.importers.claude_code_lines import turn, write_log

MODEL = "claude-sonnet-4-6"


def _usage(read: int) -> dict[str, int]:
    return {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": 400,
        "output_tokens": 50,
    }


def test_a_summariser_file_read_alone_ends_with_its_summary_request_and_a_compaction(tmp_path: Path) -> None:
    lines = []
    for k in range(3):
        stamp = f"2026-04-03T10:00:{10 * k:02d}Z"
        lines += turn(k, MODEL, _usage(20_000 + 400 * k), asked=stamp, answered=stamp, message_id=f"m{k}")
    sub = tmp_path / "s" / "subagents"
    sub.mkdir(parents=True)
    res = import_paths([write_log(sub / "agent-acompact-0a1b2c.jsonl", lines)])
    (tr,) = res.traces
    replies = [e for e in tr.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert [r.tag for r in replies] == ["", "", "summary"]
    assert isinstance(tr.events[-1], CompactionEvent) and tr.events[-1].trigger == "auto"
    counts = res.report.counts
    assert counts["compaction sub-agent files read without their session (last request: the summariser)"] == 1


def test_a_summariser_file_without_a_request_is_named() -> None:
    report = ImportReport("x", "claude-code")
    items = [Item("user", t=1.0)]
    close_compaction(items, "agent-acompact-x", report)
    assert [i.kind for i in items] == ["user"] and report.skipped


def _session_with_summariser(tmp_path: Path, summariser_read: int) -> Path:
    """A session of four requests (prompts 20,403 .. 21,603 tokens), a compaction, one request
    after it; its summariser's file beside it, billed `summariser_read` + 403 tokens."""
    lines = []
    for k in range(4):
        stamp = f"2026-04-03T10:00:{10 * k:02d}Z"
        lines += turn(k, MODEL, _usage(20_000 + 400 * k), asked=stamp, answered=stamp, message_id=f"m{k}")
    lines.append({"type": "system", "subtype": "compact_boundary", "sessionId": "s", "uuid": "b",
                  "timestamp": "2026-04-03T10:01:00Z", "compactMetadata": {"trigger": "auto"}})  # fmt: skip
    lines.append({"type": "user", "isCompactSummary": True, "sessionId": "s", "uuid": "sum",
                  "timestamp": "2026-04-03T10:01:01Z",
                  "message": {"role": "user", "content": "Summary: work so far."}})  # fmt: skip
    lines += turn(4, MODEL, _usage(5_000), asked="2026-04-03T10:01:02Z", answered="2026-04-03T10:01:03Z",
                  message_id="m4")  # fmt: skip
    sub = tmp_path / "s" / "subagents"
    sub.mkdir(parents=True)
    instruction = [{"type": "text", "text": "Summarise. " * 40}]
    ask = {"type": "user", "uuid": "c0", "sessionId": "s", "timestamp": "2026-04-03T10:00:50Z",
           "message": {"role": "user", "content": instruction}}  # fmt: skip
    answer = {"type": "assistant", "uuid": "c1", "sessionId": "s", "timestamp": "2026-04-03T10:00:55Z",
              "message": {"id": "mc", "model": MODEL, "role": "assistant", "usage": _usage(summariser_read),
                          "content": [{"type": "text", "text": "Summary: work so far."}]}}  # fmt: skip
    write_log(sub / "agent-acompact-0a1b2c.jsonl", [ask, answer])
    return write_log(tmp_path / "s.jsonl", lines)


def test_a_summary_precomputed_from_an_earlier_point_sizes_none_of_the_rounds_since(tmp_path: Path) -> None:
    """Claude Code can summarise in the background and compact later with that summary
    (anthropics/claude-code#70459): the summariser's prompt ends where it started, and bills less
    than the request before it. Its bill says nothing of the rounds since: they keep the sizes the
    main requests' bills gave them, where taking its shortfall back from them sized them 0."""
    res = import_paths([_session_with_summariser(tmp_path, 20_000)])  # 20,403 < 21,603: precomputed
    (tr,) = res.traces
    messages = [e for e in tr.events if isinstance(e, MessageEvent)]
    results = [c.tokens for e in messages for c in e.content if c.kind == "tool_result"]
    assert min(results[:3]) > 390  # each round's bill added 400 tokens (its tool call and result)
    assert results[3] > 0  # the round no bill covers: sized by rate, not 0
    assert res.report.counts[PRECOMPUTED] == 1
    fresh = import_paths([_session_with_summariser(tmp_path / "fresh", 21_700)])  # the whole conversation
    assert PRECOMPUTED not in fresh.report.counts
