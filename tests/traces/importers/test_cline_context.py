"""Cline's context truncation read from a task folder (traces/importers/cline_context.py), on small
folders shaped like the real one of tests/traces/importers/test_cline_task_live.py."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.cline_context import NOTICE, opening_updates, request_ranges, text_at
from ctxbench.traces.model import CompactionEvent, MessageEvent

RANGE = "conversationHistoryDeletedRange"


def _req(ts: int, tin: int, read: int, **extra: object) -> dict:
    info = {"tokensIn": tin, "tokensOut": 10, "cacheWrites": 0, "cacheReads": read, "cost": 0.01}
    return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info), **extra}


def _say(ts: int, text: str, **extra: object) -> dict:
    return {"ts": ts, "type": "say", "say": "text", "text": text, **extra}


def test_a_requests_range_is_on_the_rows_after_it() -> None:
    """Cline stores the range once the request's context is built, after its api_req_started row."""
    rows = [
        _req(1, 100, 0),
        _say(2, "a"),
        _req(3, 100, 0),
        _say(4, "b", **{RANGE: [2, 1]}),
        _req(5, 100, 0, **{RANGE: [2, 1]}),
        _say(6, "c", **{RANGE: [2, 3]}),
        _req(7, 100, 0),
        _say(8, "d"),
    ]
    got = request_ranges(rows, [0, 2, 4, 6])
    assert got == [None, ((2, 1), 4.0), ((2, 3), 6.0), ((2, 3), 6.0)]


def test_updates_of_the_opening_messages_are_read_and_others_counted(tmp_path: Path) -> None:
    doc = [
        [1, [0, [[0, [[100, "text", ["[NOTE] removed."], []]]]]]],
        [0, [0, [[0, [[100, "text", ["[Continue assisting the user!]"], []]]]]]],
        [4, [0, [[1, [[120, "text", ["[file content removed]"], []]]]]]],
    ]
    (tmp_path / "context_history.json").write_text(json.dumps(doc))
    found, other = opening_updates(tmp_path)
    assert found == {
        (1, 0): [(100.0, "[NOTE] removed.")],
        (0, 0): [(100.0, "[Continue assisting the user!]")],
    }
    assert other == 1
    assert text_at(found[(1, 0)], 150) == "[NOTE] removed."
    assert text_at(found[(1, 0)], 50) is None  # before it


def test_a_missing_or_broken_context_history_holds_no_update(tmp_path: Path) -> None:
    assert opening_updates(tmp_path) == ({}, 0)
    (tmp_path / "context_history.json").write_text("[[1, {")
    assert opening_updates(tmp_path) == ({}, 0)
    (tmp_path / "context_history.json").write_text(json.dumps([["x"], 3, [1, [0, "y"]], [1, [0, [[0, 5]]]]]))
    assert opening_updates(tmp_path) == ({}, 0)


def _folder(tmp_path: Path, first: int) -> Path:
    folder = tmp_path / "tasks" / "1"
    folder.mkdir(parents=True)
    rows = [
        _say(0, "task"),
        _req(1, 1000, 0),
        _say(2, "one"),
        _req(3, 1100, 1000),
        _say(4, "two"),
        _req(5, 1200, 1000),
        _say(6, "three", **{RANGE: [first, 3]}),
    ]
    hist = [
        {"role": "user", "content": [{"type": "text", "text": "<task>do it</task>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "one"}]},
        {"role": "user", "content": [{"type": "text", "text": "result one"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "two"}]},
        {"role": "user", "content": [{"type": "text", "text": "result two"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "three"}]},
    ]
    (folder / "ui_messages.json").write_text(json.dumps(rows))
    (folder / "api_conversation_history.json").write_text(json.dumps(hist))
    return folder


def test_a_truncation_is_a_compaction_that_keeps_the_task_and_the_latest_messages(tmp_path: Path) -> None:
    res = import_paths([_folder(tmp_path, 2)])
    events = res.traces[0].events
    (c,) = [e for e in events if isinstance(e, CompactionEvent)]
    assert [x.text for x in c.summary] == ["<task>do it</task>", NOTICE]
    assert c.kept_from is None  # range [2, 3]: nothing before the third request's own message kept
    before = [e for e in events[: events.index(c)] if isinstance(e, MessageEvent)]
    assert len(before) == 4  # the two requests before it and their prompts; the third's prompt after
    assert not res.report.skipped


def test_a_truncation_that_does_not_keep_the_first_pair_is_not_replayed_and_said(tmp_path: Path) -> None:
    res = import_paths([_folder(tmp_path, 1)])
    assert not any(isinstance(e, CompactionEvent) for e in res.traces[0].events)
    assert any("context truncation from message 1" in n for n in res.report.notes)


def test_a_truncation_keeps_the_messages_after_its_range(tmp_path: Path) -> None:
    """A fourth request with range [2, 3] keeps history messages 4 and 5 before its own (6)."""
    folder = _folder(tmp_path, 2)
    rows = json.loads((folder / "ui_messages.json").read_text())
    rows[-1].pop(RANGE)
    rows += [_req(7, 1300, 1000), _say(8, "four", **{RANGE: [2, 3]})]
    hist = json.loads((folder / "api_conversation_history.json").read_text())
    hist += [
        {"role": "user", "content": [{"type": "text", "text": "result three"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "four"}]},
    ]
    (folder / "ui_messages.json").write_text(json.dumps(rows))
    (folder / "api_conversation_history.json").write_text(json.dumps(hist))
    res = import_paths([folder])
    (c,) = [e for e in res.traces[0].events if isinstance(e, CompactionEvent)]
    assert c.kept_from == 4 and not res.report.skipped
