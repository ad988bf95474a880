"""Task folders of the Cline family's VS Code extensions (traces/importers/cline_task.py), on small
synthetic folders that follow the shape of real ones: a pretty-printed `ui_messages.json` array with
`api_req_started` rows whose `text` is a JSON `ClineApiReqInfo`, and `api_conversation_history.json`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.traces.importers import detect, import_paths
from ctxbench.traces.importers.base import ImportFailure
from ctxbench.traces.model import MessageEvent

T0 = 1767644899093


def _req(
    ts: int,
    request: str,
    tin: int,
    tout: int,
    reads: int,
    writes: int = 0,
    cost: float | None = None,
    model: str = "anthropic/claude-sonnet-4.5",
    provider: str = "cline",
    **extra: object,
) -> dict:
    info: dict[str, object] = {
        "request": request,
        "tokensIn": tin,
        "tokensOut": tout,
        "cacheWrites": writes,
        "cacheReads": reads,
        **extra,
    }
    if cost is not None:
        info["cost"] = cost
    return {
        "ts": ts,
        "type": "say",
        "say": "api_req_started",
        "text": json.dumps(info),
        "modelInfo": {"providerId": provider, "modelId": model, "mode": "act"},
    }


def _say(ts: int, say: str, text: str) -> dict:
    return {"ts": ts, "type": "say", "say": say, "text": text}


def _rows(model2: str = "anthropic/claude-sonnet-4.5") -> list[dict]:
    return [
        _say(T0, "text", "add a test"),
        _req(T0 + 1000, "<task>\nadd a test\n</task>", 9000, 40, 0, 3000, 0.02),
        _say(T0 + 2000, "text", "Reading the file."),
        _say(T0 + 2100, "tool", json.dumps({"tool": "readFile", "path": "a.py", "content": "x = 1\n"})),
        _req(T0 + 3000, "[read_file for 'a.py'] Result:\nx = 1\n", 200, 60, 12000, 0, 0.01),
        _say(T0 + 3500, "error_retry", "{}"),
        _req(T0 + 3600, "[read_file for 'a.py'] Result:\nx = 1\n", 0, 0, 0, streamingFailedMessage="boom"),
        _req(T0 + 4000, "[write_to_file] Result: ok", 300, 80, 12200, 0, 0.015, model=model2),
        _say(T0 + 4100, "completion_result", "Done."),
        _say(T0 + 5000, "deleted_api_reqs", json.dumps({"tokensIn": 10, "tokensOut": 1, "cost": 0.001})),
    ]


def _history() -> list[dict]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nadd a test\n</task>"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading the file."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1\n"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Writing."}]},
        {"role": "user", "content": [{"type": "text", "text": "[write_to_file] Result: ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]


def _task(
    root: Path, rows: list[dict], history: list[dict] | None = None, ext: str = "saoudrizwan.claude-dev"
) -> Path:
    folder = root / ext / "tasks" / str(T0)
    folder.mkdir(parents=True)
    (folder / "ui_messages.json").write_text(json.dumps(rows, indent=4))  # pretty-printed, as written
    if history is not None:
        (folder / "api_conversation_history.json").write_text(json.dumps(history))
    return folder


def _replies(res) -> list[MessageEvent]:
    return [e for tr in res.traces for e in tr.events if isinstance(e, MessageEvent) and e.usage is not None]


def test_detected_as_folder_or_either_file(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows(), _history())
    for p in (folder, folder / "ui_messages.json", folder / "api_conversation_history.json"):
        assert detect(p) == "cline-task"
    other = tmp_path / "copy.json"  # any name: its rows are recognised once the document is read whole
    other.write_text((folder / "ui_messages.json").read_text())
    assert detect(other) == "cline-task"


def test_ui_messages_alone_usage_per_request(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows())
    res = import_paths([folder / "ui_messages.json"])
    u = [e.usage for e in _replies(res)]
    assert len(u) == 3  # the failed request without usage is a named skip, the deleted rows no request
    assert res.report.skipped["request without usage (failed)"] == 1
    assert [(x.input_tokens, x.cache_read, x.cache_write_5m, x.output_tokens) for x in u] == [
        (9000, 0, 3000, 40),
        (200, 12000, 0, 60),
        (300, 12200, 0, 80),
    ]
    assert [x.cost for x in u] == [0.02, 0.01, 0.015]
    assert res.main.header.harness == "cline-task"
    assert any("deleted requests" in n for n in res.report.notes)
    # what the chat shows: the tool row is a tool call of the reply
    kinds = [c.kind for e in res.main.events if isinstance(e, MessageEvent) for c in e.content]
    assert "tool_use" in kinds


def test_history_gives_the_prompts(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows(), _history())
    res = import_paths([folder])
    assert res.report.counts["prompts from api_conversation_history"] == 3
    results = [
        c
        for e in res.main.events
        if isinstance(e, MessageEvent)
        for c in e.content
        if c.kind == "tool_result"
    ]
    assert results and results[0].tool_id == "toolu_1"


def test_history_that_does_not_pair_is_said(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows(), _history()[:2])
    res = import_paths([folder])
    assert any("1 assistant message(s) for 3 billed request(s)" in n for n in res.report.notes)
    assert len(_replies(res)) == 3


def test_openai_protocol_counts_the_whole_prompt(tmp_path: Path) -> None:
    rows = [_req(T0, "hi", 5000, 10, 4096, 0, 0.001, apiProtocol="openai", model="gpt-5")]
    res = import_paths([_task(tmp_path, rows, ext="rooveterinaryinc.roo-cline")])
    (u,) = [e.usage for e in _replies(res)]
    assert (u.input_tokens, u.cache_read) == (904, 4096)
    assert any("Roo Code" in n for n in res.report.notes)


def test_model_switch_is_its_own_conversation(tmp_path: Path) -> None:
    res = import_paths([_task(tmp_path, _rows(model2="x-ai/grok-code-fast-1"))])
    assert len(res.traces) == 2 and res.names[1] == "grok-code-fast-1"


def test_not_a_task(tmp_path: Path) -> None:
    folder = _task(tmp_path, [_say(T0, "text", "hi")])
    with pytest.raises(ImportFailure, match="no api_req_started row with usage"):
        import_paths([folder])
    (folder / "ui_messages.json").write_text('{"a": 1}')
    with pytest.raises(ImportFailure):
        import_paths([folder], "cline-task")


def test_billed_cli_sums_the_rows(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows(), _history())
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "billed", "--json", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert (row["requests"], row["inputTokens"], row["cacheReadTokens"], row["cacheCreationTokens"]) == (
        3,
        9500,
        24200,
        3000,
    )
    assert row["totalCost"] == pytest.approx(0.045)


def test_billed_breaks_a_switched_session_down_per_model(tmp_path: Path) -> None:
    folder = _task(tmp_path, _rows(model2="x-ai/grok-code-fast-1"))
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "billed", "--json", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    (row,) = json.loads(out.stdout)
    assert row["modelsUsed"] == ["claude-sonnet-4-5", "x-ai/grok-code-fast-1"]
    assert row["model"] == "claude-sonnet-4-5"  # 2 of its 3 requests
    parts = row["modelBreakdowns"]
    assert [p["requests"] for p in parts] == [2, 1]
    for k in ("inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens"):
        assert sum(p[k] for p in parts) == row[k]
    assert sum(p["cost"] for p in parts) == pytest.approx(row["totalCost"])
    table = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "billed", str(folder)], capture_output=True, text=True
    ).stdout
    assert "  x-ai/grok-code-fast-1" in table and "  claude-sonnet-4-5" in table
