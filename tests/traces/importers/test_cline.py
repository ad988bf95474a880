"""The Cline SDK importer: one conversation per model (a provider cache is per model)."""

from __future__ import annotations

import json
from pathlib import Path

from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent


def _reply(model: str, total: int, read: int, ts: int) -> dict:
    return {
        "role": "assistant",
        "ts": ts,
        "content": [{"type": "text", "text": "ok"}],
        "modelInfo": {"id": model, "provider": "cline", "family": "x"},
        "metrics": {"inputTokens": total, "outputTokens": 5, "cacheReadTokens": read, "cacheWriteTokens": 0},
    }


def _user(text: str, ts: int) -> dict:
    return {"role": "user", "ts": ts, "content": [{"type": "text", "text": text}]}


def test_a_model_the_session_comes_back_to_goes_on_with_its_conversation(tmp_path: Path) -> None:
    opus, other = "anthropic/claude-opus-4.8-fast", "mistralai/voxtral-small-24b-2507"
    doc = {
        "version": 1,
        "system_prompt": "You are Cline.",
        "messages": [
            _user("start " * 400, 1_000),
            _reply(opus, 3000, 0, 2_000),
            _user("now the small model", 3_000),
            _reply(other, 900, 0, 4_000),
            _user("back to opus", 5_000),
            _reply(opus, 3200, 2998, 6_000),
        ],
    }
    path = tmp_path / "s.messages.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    res = import_paths([path])
    assert res.names == ["main", "voxtral-small-24b-2507"]
    main, small = res.traces
    replies = [e for e in main.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert [e.usage.total_input for e in replies if e.usage] == [3000, 3200]
    assert main.header.meta["gateway"] == "cline" and main.header.model == "claude-opus-4-8-fast"
    users = [e for e in main.events if isinstance(e, MessageEvent) and e.role == "user"]
    texts = [c.text for u in users for c in u.content]  # consecutive user messages merge into one
    assert texts[1:] == ["now the small model", "back to opus"]
    assert any("came back" in n for n in res.report.notes)
    assert len([e for e in small.events if isinstance(e, MessageEvent) and e.role == "assistant"]) == 1
