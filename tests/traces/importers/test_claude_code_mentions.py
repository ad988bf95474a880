"""@-mentioned files of Claude Code up to 2.0.29 (bench/claude_code_wire.md §1): the importer adds
each as a Read call and its result before the prompt, marked `turn` and sized from the bill; the
recorded harness drops them at the next prompt, so the replay reads what the bill read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent

S = 3000  # system + tools: what the second turn's request reads once turn 1's attachments are gone


def _line(n: int, version: str, **kw: object) -> str:
    t = f"2026-04-01T00:00:{n:02d}Z"
    return json.dumps({"sessionId": "s", "uuid": f"l{n}", "timestamp": t, "version": version, **kw})


def _session(tmp_path: Path, version: str) -> Path:
    def reply(n: int, rid: str, read: int, write: int) -> str:
        usage = {"input_tokens": 1, "cache_read_input_tokens": read, "cache_creation_input_tokens": write}
        msg = {
            "id": rid,
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "ok"}],
            "usage": usage,
            "role": "assistant",
        }
        return _line(n, version, type="assistant", requestId=rid, message=msg)

    lines = [
        _line(0, version, type="user", message={"role": "user", "content": "look at @src/a.txt please"}),
        reply(1, "r1", 0, S + 2000),  # the file's Read result is most of turn 1's 2,000 tokens
        _line(2, version, type="user", message={"role": "user", "content": "thanks"}),
        reply(3, "r2", S, 30),  # falls back to S: the first message changed (the file is gone)
    ]  # fmt: skip
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_mentioned_file_is_a_turn_block_sized_from_the_bill(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path, "2.0.5")])
    users = [e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "user"]
    assert len(users) == 3  # the Read call alone, then the result and the prompt, then turn 2
    call, (result, prompt) = users[0].content, users[1].content
    assert len(call) == 1 and call[0].turn and "src/a.txt" in (call[0].text or "")
    assert result.turn and result.text is None and not prompt.turn
    assert call[0].tokens is not None and result.tokens is not None and prompt.tokens is not None
    assert call[0].tokens + result.tokens + prompt.tokens == 2000  # turn 1's billed share, all of it
    assert result.tokens > 1900  # the prompt and the call are a few tokens at the calibrated rates
    assert users[0].content[0].cache == "5m"  # the Read call's message carries the second mark
    assert res.report.counts["@-mentioned files (turn-scoped attachments added)"] == 1
    assert res.main.header.meta["system_tokens"] == S


def test_replay_drops_the_file_at_the_next_prompt_and_reads_as_billed(tmp_path: Path) -> None:
    res = import_paths([_session(tmp_path, "2.0.5")])
    recs = run_prepared([prepare_for(res.main)], load_policy("recorded"), "anthropic", 0).records
    assert [(r.cache_read, r.cache_write_5m) for r in recs] == [(0, S + 2000), (S, 30)]
    assert recs[1].miss_cause == "turn_scoped"


@pytest.mark.parametrize("version", ["2.0.30", "2.0.37"])
def test_later_versions_keep_attachments_and_get_none_added(tmp_path: Path, version: str) -> None:
    res = import_paths([_session(tmp_path, version)])
    assert not any(c.turn for e in res.main.events if isinstance(e, MessageEvent) for c in e.content)
