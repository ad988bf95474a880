"""What Claude Code sends that its transcript does not say (traces/importers/claude_code_wire.py):
cache marks per version, attachments it never sends, reminders folded into string tool results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.runner import RunHooks, prepare_for, run_prepared
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.claude_code_wire import (
    at_mentions,
    marked_messages,
    query_ttl,
    sent_to_model,
    turn_scoped_attachments,
)
from ctxbench.traces.model import MessageEvent


@pytest.mark.parametrize(
    ("version", "marks"),
    [("1.0.51", 2), ("2.0.37", 2), ("2.1.39", 2), ("2.1.68", 2), ("2.1.69", 1), ("2.1.114", 1), ("", 2)],
)
def test_marked_messages_by_version(version: str, marks: int) -> None:
    """cli.js 2.1.68 marks the last two messages, 2.1.69 the last one only."""
    assert marked_messages(version) == marks


@pytest.mark.parametrize(
    ("att", "sent"),
    [
        ({"type": "hook_success", "hookEvent": "PostToolUse", "content": "busy"}, False),
        ({"type": "hook_success", "hookEvent": "Stop", "content": "idle"}, False),
        ({"type": "hook_success", "hookEvent": "SessionStart", "content": ""}, False),
        ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "busy"}, True),
        ({"type": "hook_additional_context", "content": []}, False),
        ({"type": "hook_additional_context", "content": ["x"]}, True),
        ({"type": "already_read_file"}, False),
        ({"type": "todo_reminder", "content": []}, True),
        ({"type": "some_future_type"}, True),
    ],
)
def test_attachments_claude_code_never_sends(att: dict[str, object], sent: bool) -> None:
    assert sent_to_model(att) is sent


def _line(n: int, **kw: object) -> str:
    t = f"2026-04-01T00:00:{n:02d}Z"
    return json.dumps({"sessionId": "s", "uuid": f"l{n}", "timestamp": t, "version": "2.1.114", **kw})


def _reply(n: int, rid: str, content: list[dict[str, object]], read: int, write: int) -> str:
    usage = {"input_tokens": 1, "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
    msg = {"id": rid, "model": "claude-opus-4-7", "content": content, "usage": usage}
    return _line(n, type="assistant", requestId=rid, message=msg)


def _session(tmp_path: Path, version: str) -> Path:
    hook = {"type": "hook_success", "hookEvent": "PostToolUse", "content": "busy"}
    todo = {"type": "todo_reminder", "content": [{"content": "a", "status": "pending"}]}
    lines = [
        _line(0, type="user", message={"role": "user", "content": "go"}),
        _reply(1, "r1", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": 1}}], 0, 5000),
        _line(2, type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "out " * 50}]}),
        _line(3, type="attachment", attachment=hook),
        _line(4, type="attachment", attachment=todo),
        _reply(5, "r2", [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"c": 2}}], 5000, 300),
        _line(6, type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "done"}]}),
        _reply(7, "r3", [{"type": "text", "text": "ok"}], 5300, 100),
    ]  # fmt: skip
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines).replace('"2.1.114"', json.dumps(version)) + "\n", encoding="utf-8")
    return p


def test_dropped_hook_and_reminder_folded_into_the_string_result(tmp_path: Path) -> None:
    """cli.js: a PostToolUse hook_success is never sent; a reminder after a tool result whose
    content is a string joins that result (one block), so the user message has one block."""
    res = import_paths([_session(tmp_path, "2.1.114")])
    users = [e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "user"]
    assert [len(u.content) for u in users] == [1, 1, 1]
    folded = users[1].content[0]
    assert folded.kind == "tool_result" and "todo_reminder" in (folded.text or "")
    assert res.report.counts["attachments Claude Code does not send (dropped)"] == 1
    assert res.report.counts["attachments folded into a tool result"] == 1


@pytest.mark.parametrize(("version", "marks"), [("2.1.114", 1), ("2.1.39", 2)])
def test_replay_marks_as_many_messages_as_the_recorded_version(
    tmp_path: Path, version: str, marks: int
) -> None:
    """The sizer records the reply's mark only for versions that mark the last two messages, and
    the recorded marks place exactly those (plus the system block)."""
    tr = import_paths([_session(tmp_path, version)]).main
    assert tr.header.meta["marked_messages"] == marks
    seen: list[int] = []

    def on_call(req: object, out: object) -> None:
        seen.append(len(req.breakpoints))  # type: ignore[attr-defined]

    run_prepared([prepare_for(tr)], load_policy("recorded"), hooks=RunHooks(on_call=on_call))
    assert seen[1:] == [1 + marks, 1 + marks]  # the system block + the message marks


@pytest.mark.parametrize(
    ("source", "ttl"),
    [("repl_main_thread", "1h"), ("repl_main_thread:outputStyle:x", "1h"), ("sdk", "1h"),
     ("away_summary", "5m"), ("prompt_suggestion", "5m"), ("agent:custom", "5m")],
)  # fmt: skip
def test_query_ttl_follows_the_1h_allowlist(source: str, ttl: str) -> None:
    """cli.js 2.1.114 `dd7`: 1h marks only for the allowlisted query sources (`*` a prefix)."""
    assert query_ttl(source) == ttl


def test_an_away_summary_line_is_a_forked_request_before_the_next_request(tmp_path: Path) -> None:
    """The away summary is logged only by its `system` line; the importer keeps it as
    [seconds before the next request, that request's index, its 5m ttl]; one after the last
    request is dropped (nothing reads what it did)."""
    lines = [
        _line(0, type="user", message={"role": "user", "content": "go"}),
        _reply(1, "r1", [{"type": "text", "text": "done"}], 0, 5000),
        _line(20, type="system", subtype="away_summary", content="recap"),
        _line(50, type="user", message={"role": "user", "content": "again"}),
        _reply(52, "r2", [{"type": "text", "text": "ok"}], 5000, 300),
        _line(59, type="system", subtype="away_summary", content="recap 2"),
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = import_paths([p])
    assert res.main.header.meta["forked_requests"] == [[30.0, 1, "5m"]]
    assert res.report.counts["forked queries logged by their result line (away summary)"] == 2


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("I have @public/a.css, @public/b.html and @public/b.html here", ["public/a.css", "public/b.html"]),
        ("`redirects()` in @next.config.js and", ["next.config.js"]),
        ('see @"a b.txt" and @x.py.', ["a b.txt", "x.py"]),
        ("npm i pkg@latest, mail me@x.com", []),
    ],
)
def test_at_mentions_as_cli_js_2_0_5_parses_them(text: str, paths: list[str]) -> None:
    assert at_mentions(text) == paths


@pytest.mark.parametrize(
    ("version", "scoped"),
    [("1.0.51", True), ("2.0.5", True), ("2.0.29", True), ("2.0.30", False), ("2.0.37", False), ("", False)],
)
def test_turn_scoped_attachments_before_2_0_30(version: str, scoped: bool) -> None:
    """Loopback runs (bench/claude_code_wire.md §1): 1.0.51 and 2.0.0-2.0.29 drop, 2.0.30+ keep."""
    assert turn_scoped_attachments(version) is scoped


def test_2_1_332_rendered_attachments_and_request_log_lines(tmp_path: Path) -> None:
    """Claude Code 2.1.332 (bench/claude_code_wire.md §3): an attachment line carries the text sent
    (`rendered`), which is imported as is (folded into a string tool result before it); a line
    without it (`prompt_snapshot`, the system prompt) was not sent; its request log lines
    (`api-request`, `api-request-blob`, ...) and counters are bookkeeping, not unknown lines."""
    total = "<system-reminder>\n<total_tokens>15000000 tokens left</total_tokens>\n</system-reminder>"
    date = "<system-reminder>\nToday's date is 2026-12-03.\n</system-reminder>"
    snap = {"type": "prompt_snapshot", "systemPrompt": ["You are an agent " * 500]}
    lines = [
        _line(0, type="user", message={"role": "user", "content": "go"}),
        _line(1, type="attachment", attachment={"type": "date", "date": "2026-12-03"},
              rendered=[{"content": date}], renderedRole="system"),
        _line(2, type="attachment", attachment=snap),
        json.dumps({"type": "api-request-shape", "sessionId": "s", "shapeHash": "h", "shape": {}}),
        json.dumps({"type": "api-request-blob", "sessionId": "s", "hash": "b", "message": {"role": "user"}}),
        json.dumps({"type": "api-request", "sessionId": "s", "id": "a", "tail": ["b"], "cacheControl": []}),
        _reply(3, "r1", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"f": 1}}], 0, 5000),
        json.dumps({"type": "tools-used", "tools": ["Read"], "sessionId": "s"}),
        json.dumps({"type": "atis-latch", "atis": "", "sessionId": "s"}),
        _line(4, type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "1\tline"}]}),
        _line(5, type="attachment", attachment={"type": "total_tokens_reminder", "text": "x"},
              rendered=[{"content": total}], renderedRole="system"),
        _line(6, type="attachment", attachment=snap),
        _reply(7, "r2", [{"type": "text", "text": "ok"}], 5000, 40),
        _line(8, type="attachment", attachment=snap),
        json.dumps({"type": "cost-state", "sessionId": "s", "totalCostUSD": 0.1}),
    ]  # fmt: skip
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines).replace('"2.1.114"', '"2.1.332"') + "\n", encoding="utf-8")
    res = import_paths([p])
    assert not res.report.skipped
    users = [e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "user"]
    assert [[c.text for c in u.content] for u in users] == [["go", date], ["1\tline\n\n" + total]]
    assert res.report.counts["attachments Claude Code does not send (dropped)"] == 3
    assert res.report.counts["bookkeeping lines (never sent)"] == 6


def _turns(tmp_path: Path, version: str) -> Path:
    """Three turns of one prompt and one text reply each, the user idle 20 s between them."""
    lines = []
    for k in range(3):
        raw = json.loads(_line(20 * k, type="user", message={"role": "user", "content": f"ask {k}"}))
        lines.append(json.dumps({**raw, "version": version}))
        reply = json.loads(_reply(20 * k + 2, f"r{k}", [{"type": "text", "text": "done"}], 5000 * k, 5000))
        lines.append(json.dumps({**reply, "version": version}))
    p = tmp_path / f"s{version}.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_the_prompt_suggestions_a_main_thread_could_have_sent_are_kept_apart(tmp_path: Path) -> None:
    """From Claude Code 2.0.67 a turn that ends with two replies or more in the context may be
    followed by a prompt-suggestion fork no line records (bench/claude_code_wire.md §6): the
    importer keeps where, as forked-request rows of their own (`meta.suggestion_forks`; the
    replay sends them only when told to, tests/bench/fidelity/test_suggestion_forks.py)."""
    new = import_paths([_turns(tmp_path, "2.1.150")]).main
    old = import_paths([_turns(tmp_path, "2.0.65")]).main
    assert new.header.meta["suggestion_forks"] == [[18.0, 2, "5m"]]  # the third turn: two replies before
    assert "suggestion_forks" not in old.header.meta and "forked_requests" not in new.header.meta
