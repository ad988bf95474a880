"""check-prefix on raw harness logs without any declaration (bench/prefix/recognise.py): helper
calls, the harness's compaction request and the new conversation after it are recognised; real
rewrites and tail edits (aider-style, opencode-style) still fail."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.prefix.check import Report, find_breaks
from ctxbench.bench.prefix.request_log import parse_line, read_request_log
from ctxbench.traces.compressed import open_log

REAL = Path(os.environ.get("CTXBENCH_REAL") or Path(__file__).resolve().parents[4] / "shared" / "traces-real")
TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}]
SYSTEM = [
    {"type": "text", "text": "You are a coding agent."},
    {"type": "text", "text": "cc_version=1.0.1; fp=aaaa"},
]


def _msgs(k: int, first: str = "start") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": first}]
    for i in range(k):
        out += [{"role": "assistant", "content": f"a{i} " * 20}, {"role": "user", "content": f"u{i} " * 20}]
    return out


def _req(msgs: list[dict[str, Any]], system: Any = SYSTEM, tools: list | None = TOOLS) -> dict[str, Any]:
    return {
        "body": {"model": "m", "system": system, "tools": tools or [], "messages": msgs},
        "session_id": "s",
    }


def _report(log: list[dict[str, Any]]) -> Report:
    return find_breaks([parse_line(e, i + 1, f"r{i}") for i, e in enumerate(log)])


def test_title_request_without_tools_is_a_side_request_even_last() -> None:
    title = _req([{"role": "user", "content": "write a title"}], "Summarize in 5 words", None)
    rep = _report([_req(_msgs(1)), _req(_msgs(2)), title])
    assert [(b.request, b.cls) for b in rep.breaks] == [(2, "side_request")] and rep.ok


def test_compaction_request_then_new_conversation_with_a_changed_fingerprint_is_explained() -> None:
    summarize = [
        *_msgs(3),
        {"role": "assistant", "content": "a3"},
        {"role": "user", "content": "Summarize all"},
    ]
    new_sys = [SYSTEM[0], {"type": "text", "text": "cc_version=1.0.1; fp=bbbb"}]
    restart = _msgs(0, "This session is being continued: summary")
    log = [
        _req(_msgs(2)),
        _req(_msgs(3)),
        _req(summarize, [{"type": "text", "text": "You summarize."}], TOOLS),
        _req(restart, new_sys),
        _req([*restart, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}], new_sys),
    ]
    rep = _report(log)
    assert rep.ok, [b.cls for b in rep.failing]
    reset = next(b for b in rep.breaks if b.request == 3)
    assert reset.cls == "reset_after_compaction" and reset.explained
    assert "request 2" in reset.declared and "system block 1" in reset.note and reset.tokens > 0
    assert "compaction request" in next(b for b in rep.breaks if b.request == 2).note


def test_without_a_compaction_request_a_new_system_prompt_still_fails() -> None:
    new_sys = [SYSTEM[0], {"type": "text", "text": "cc_version=1.0.2; fp=cccc"}]
    rep = _report([_req(_msgs(2)), _req(_msgs(3)), _req(_msgs(4), new_sys), _req(_msgs(5), new_sys)])
    assert [(b.request, b.cls) for b in rep.failing] == [(2, "static_prefix_edit")]


def test_aider_style_tail_edit_and_opencode_style_rewrite_still_fail_beside_helpers() -> None:
    helper = _req([{"role": "user", "content": "classify"}], "You classify topics.", None)
    tail = _msgs(3)
    tail[-1] = {"role": "user", "content": "u2 edited (aider re-sends the repo map)"}
    rep = _report([_req(_msgs(2)), helper, _req(_msgs(3)), _req(tail), _req([*tail, *_msgs(0, "more")[:0]])])
    assert ("tail_edit", False) in [(b.cls, b.explained) for b in rep.failing]
    mid = _msgs(4)
    mid[3] = {"role": "assistant", "content": "[pruned tool output]"}  # opencode prune, undeclared
    rep = _report(
        [
            _req(_msgs(3)),
            _req(_msgs(4)),
            helper,
            _req(mid),
            _req([*mid, {"role": "assistant", "content": "x"}]),
        ]
    )
    assert [b.cls for b in rep.failing] == ["mid_conversation_edit"]


def test_a_new_task_after_a_final_answer_is_a_new_conversation_and_lost_history_still_fails() -> None:
    """An eval's next sample (no session id, same static prefix): allowed by default. A restart
    that keeps any message of the conversation before (its history dropped but for the task, or
    the old messages kept after a rewritten first one) still fails."""
    other = _msgs(1, "another task")
    rep = _report([_req(_msgs(1)), _req(_msgs(2)), _req(_msgs(0, "another task")), _req(other)])
    assert [(b.request, b.cls) for b in rep.breaks] == [(2, "new_conversation")] and rep.ok
    lost = [_msgs(2)[0], {"role": "assistant", "content": "starting over"}, {"role": "user", "content": "go"}]
    rep = _report([_req(_msgs(1)), _req(_msgs(2)), _req(lost), _req([*lost, *_msgs(1)[1:]])])
    assert [(b.request, b.cls) for b in rep.failing] == [(2, "reset_after_compaction")]
    rewritten = [{"role": "user", "content": "start, reworded"}, *_msgs(2)[1:]]
    rep = _report([_req(_msgs(1)), _req(_msgs(2)), _req(rewritten), _req([*rewritten, *_msgs(1)[1:]])])
    assert [b.cls for b in rep.failing] == ["reset_after_compaction"]


def test_an_inspect_eval_ledger_passes_with_its_second_sample_a_new_conversation() -> None:
    """Inspect 0.3.285 against `ctxbench serve`, two samples one after the other (tests/traces/
    importers/test_inspect_ai.py): the second sample's first request is a new conversation."""
    data = Path(__file__).resolve().parents[2] / "traces/importers/data"
    for run in ("anthropic", "openai"):
        path = data / f"inspect-0.3.285-{run}.requests.jsonl.xz"
        with open_log(path) as f:
            rep = find_breaks(read_request_log(f, str(path)))
        assert rep.ok and [b.cls for b in rep.breaks] == ["new_conversation"], run


def test_the_plugins_default_allowed_classes_are_check_prefixs_without_new_conversation() -> None:
    # the plugin is stricter (issue 30): a history wiped without a declaration fails a test
    from ctxbench.bench.prefix import pytest_plugin
    from ctxbench.bench.prefix.check import DEFAULT_ALLOWED

    assert tuple(c for c in DEFAULT_ALLOWED if c != "new_conversation") == pytest_plugin.DEFAULT_ALLOWED


@pytest.mark.skipif(not REAL.is_dir(), reason="traces-real not present")
def test_real_claude_code_request_log_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    path = REAL / "claude-trace/test-traffic.jsonl"
    with path.open(encoding="utf-8") as f:
        rep = find_breaks(read_request_log(f, str(path)))
    assert rep.ok
    by = {b.request: b for b in rep.breaks}
    assert by[34].cls == "side_request" and "compaction request" in by[34].note  # /compact (FORMATS.md §2.2)
    assert by[57].cls == "reset_after_compaction" and by[57].explained and "request 34" in by[57].declared
    assert all(b.cls == "side_request" for i, b in by.items() if i not in (57,))
    assert main(["check-prefix", str(path)]) == 0
    assert "recognised" in capsys.readouterr().out
