"""Claude Code importer: grouping by request id, usage from the last line, bad input counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.format import dumps_trace, read_trace
from ctxbench.traces.importers import ImportFailure, import_paths
from ctxbench.traces.model import MessageEvent, ToolsEvent
from tests.real import REAL, needs_real


def _line(**kw: object) -> str:
    return json.dumps({"sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z", **kw})


def _session(tmp_path: Path, extra: list[bytes] = ()) -> Path:  # type: ignore[assignment]
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 5000,
        "output_tokens": 1,
    }
    last = dict(usage, output_tokens=40)
    lines = [
        _line(type="user", uuid="u1", message={"role": "user", "content": "hello"}),
        _line(
            type="assistant",
            uuid="a1",
            requestId="r1",
            message={
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hi"}],
                "usage": usage,
            },
        ),
        _line(
            type="assistant",
            uuid="a2",
            requestId="r1",
            message={
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": 1}}],
                "usage": last,
            },
        ),
        _line(
            type="user",
            uuid="u2",
            timestamp="2026-01-01T00:00:10Z",
            message={
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        ),
        _line(
            type="assistant",
            uuid="a3",
            requestId="r2",
            timestamp="2026-01-01T00:00:11Z",
            message={
                "id": "m2",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {
                    "input_tokens": 1,
                    "cache_read_input_tokens": 5000,
                    "cache_creation_input_tokens": 300,
                    "output_tokens": 9,
                },
            },
        ),
    ]
    p = tmp_path / "s1.jsonl"
    p.write_bytes("\n".join(lines).encode() + b"\n" + b"".join(extra))
    return p


def test_groups_lines_by_request_and_takes_output_from_last_line(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path)])
    replies = [e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert len(replies) == 2
    assert replies[0].usage is not None and replies[0].usage.output_tokens == 40
    assert [c.kind for c in replies[0].content] == ["text", "tool_use"]
    dumps_trace(res.main)  # writable


def test_prompt_counts_come_from_the_line_that_has_them(tmp_path: Path) -> None:
    """A gateway logs every line of a message but the last with 0 input and no cache fields; the
    prompt counts are the later line's, the largest (Anthropic direct repeats them on every line)."""
    text = _session(tmp_path).read_text().replace(
        '"usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 5000, '
        '"output_tokens": 1}',
        '"usage": {"input_tokens": 0, "output_tokens": 0}',
    )
    assert '"usage": {"input_tokens": 0, "output_tokens": 0}' in text
    (tmp_path / "s1.jsonl").write_text(text)
    res = import_paths([tmp_path / "s1.jsonl"])
    first = next(e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "assistant")
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.cache_write_5m, first.usage.output_tokens) == (3, 5000, 40)
    assert any("different prompt counts (the largest taken)" in k for k in res.report.counts)


def test_sizes_reproduce_billed_cached_part(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path)])
    total = 0
    for ev in res.main.events:
        if isinstance(ev, MessageEvent) and ev.role == "assistant" and ev.usage is not None:
            u = ev.usage
            assert total == 0 or total == u.cache_read + u.cache_write_5m + u.cache_write_1h
        total += sum(c.tokens or 0 for c in getattr(ev, "content", ()))
    assert res.main.header.meta["system_tokens"] >= 0


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (b'{"type":"user","uuid":"x', "truncated last line"),
        (b'{"type":"mystery","uuid":"z"}\n', "unknown line type 'mystery'"),
        (b'{"type":"user","message":{"content":"\xff\xfe"}}\n', "line not valid UTF-8"),
        (
            b'{"type":"assistant","uuid":"q","message":{"model":"<synthetic>","content":[]}}\n',
            "synthetic response (no API call)",
        ),
    ],
)
def test_bad_lines_are_counted_not_dropped(tmp_path: Path, extra: bytes, reason: str) -> None:
    res = import_paths([_session(tmp_path, [extra])])
    assert res.report.skipped[reason] == 1
    assert reason in res.report.format_text()


def test_missing_usage_is_reported(tmp_path: Path) -> None:
    line = _line(
        type="assistant", uuid="a9", requestId="r9", message={"id": "m9", "model": "m", "content": []}
    )
    res = import_paths([_session(tmp_path, [line.encode() + b"\n"])])
    assert res.report.skipped["response without usage (kept, no ground truth)"] == 1


def test_mixed_sessions_become_separate_traces(tmp_path: Path) -> None:
    other = _line(type="user", uuid="o1", sessionId="s2", message={"role": "user", "content": "x"})
    rep = _line(
        type="assistant",
        uuid="o2",
        sessionId="s2",
        requestId="r7",
        message={"id": "m7", "model": "m", "content": [], "usage": {"input_tokens": 5}},
    )
    res = import_paths([_session(tmp_path, [other.encode() + b"\n", rep.encode() + b"\n"])])
    assert len(res.traces) == 2 and any("mixes sessions" in n for n in res.report.notes)


def test_nothing_usable_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "e.jsonl"
    p.write_text('{"type":"summary","sessionId":"s"}\n')
    with pytest.raises(ImportFailure, match="no model responses"):
        import_paths([p], "claude-code")


@needs_real
def test_real_spotter_session_imports_with_compaction() -> None:
    res = import_paths([REAL / "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"])
    assert res.main.header.meta["system_tokens"] == 21445
    assert res.report.counts["compaction requests merged from sub-agent files"] == 1


def _reply(rid: str, t: int, content: list[dict[str, object]], read: int, write: int) -> str:
    usage = {"input_tokens": 2, "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
    return _line(
        type="assistant",
        uuid=f"a-{rid}",
        requestId=rid,
        timestamp=f"2026-01-01T00:00:{t:02d}Z",
        message={"id": rid, "model": "claude-haiku-4-5-20251001", "content": content, "usage": usage},
    )


def _user(uid: str, t: int, content: object) -> str:
    return _line(
        type="user",
        uuid=uid,
        timestamp=f"2026-01-01T00:00:{t:02d}Z",
        message={"role": "user", "content": content},
    )


def test_haiku_thinking_stripped_by_user_text_is_sized_and_replayed(tmp_path: Path) -> None:
    """providers.md §1.6 on Haiku: the reminder text after a tool result strips the earlier
    thinking, the billed prompt shrinks by it and the read falls back to the end of the first
    user message; the importer sizes blocks so every request's cached part is the bill, and
    the replay predicts every read."""
    think = {"type": "thinking", "thinking": "let me think " * 40}
    lines = [
        _user("u1", 0, "hello"),
        _reply(
            "r1", 1, [think, {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": 1}}], 4500, 500
        ),
        _user("u2", 2, [{"type": "tool_result", "tool_use_id": "t1", "content": "ok " * 100}]),
        _reply(
            "r2", 3, [think, {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"c": 2}}], 5000, 900
        ),
        _user(
            "u3",
            4,
            [
                {"type": "tool_result", "tool_use_id": "t2", "content": "fine " * 50},
                {"type": "text", "text": "<system-reminder>todo</system-reminder>"},
            ],
        ),
        _reply("r3", 5, [{"type": "text", "text": "done"}], 5000, 700),
    ]
    p = tmp_path / "h.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tr = import_paths([p]).main
    sf = compare(tr)
    assert [r.predicted.cache_read for r in sf.requests] == [4500, 5000, 5000]
    assert [r.predicted.cache_read + r.predicted.cache_write for r in sf.requests] == [5000, 5900, 5700]
    assert sf.share_ok == 1.0


def _search(rid: str, t: int, names: list[str], tid: str) -> list[str]:
    query = {"query": "select:" + ",".join(names)}
    refs = [{"type": "tool_reference", "tool_name": n} for n in names]
    return [
        _reply(rid, t, [{"type": "tool_use", "id": tid, "name": "ToolSearch", "input": query}], 0, 0),
        _user(f"u-{tid}", t + 1, [{"type": "tool_result", "tool_use_id": tid, "content": refs}]),
    ]


def test_tool_search_results_become_tools_events_with_deferred_tools(tmp_path: Path) -> None:
    """Claude Code 2.1.x sends the tools ToolSearch results loaded, with defer_loading, from the
    next request on (cli.js `iQ`): one `tools` event per load, listing every tool loaded so far;
    the request after it starts at its user message's time (the event does not move it)."""
    lines = [
        _user("u1", 0, "hello"),
        *_search("r1", 1, ["WebSearch", "WebFetch"], "t1"),
        *_search("r2", 5, ["WebFetch"], "t2"),  # nothing new: no event
        *_search("r3", 9, ["TaskGet"], "t3"),
        _reply("r4", 12, [{"type": "text", "text": "done"}], 0, 0),
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = import_paths([p])
    tools = [e for e in res.main.events if isinstance(e, ToolsEvent)]
    assert [[(x.name, x.deferred, x.nbytes) for x in e.tools] for e in tools] == [
        [("WebSearch", True, 0), ("WebFetch", True, 0)],
        [("WebSearch", True, 0), ("WebFetch", True, 0), ("TaskGet", True, 0)],
    ]
    assert [e.t for e in tools] == [2.0, 10.0]
    kinds = [type(e).__name__ + ("" if not isinstance(e, MessageEvent) else e.role) for e in res.main.events]
    at = kinds.index("ToolsEvent")
    assert kinds[at - 1 : at + 2] == ["MessageEventuser", "ToolsEvent", "MessageEventassistant"]
    text = dumps_trace(res.main)
    assert text.count('"defer_loading":true') == 5
    back = tmp_path / "s.trace.jsonl"
    back.write_text(text, encoding="utf-8")
    assert read_trace(back).events == res.main.events
