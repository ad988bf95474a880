"""Claude Code's compaction summariser file (traces/importers/summariser_file.py): read without its
session, its last request is the summary request and a compaction follows it."""

from __future__ import annotations

from pathlib import Path

from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import ImportReport
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
