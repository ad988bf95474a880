"""Turn starts after a turn with thinking (bench/fidelity/thinking_kept.py), on synthetic logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.thinking_kept import count, main

HAIKU = "claude-haiku-4-5-20251001"


def _reply(i: int, t: str, prompt: int, read: int, thinking: bool) -> dict[str, object]:
    content = [{"type": "thinking", "thinking": "hmm"}] if thinking else []
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": prompt - read - 3,
    }
    message = {
        "id": f"m{i}",
        "model": HAIKU,
        "content": [*content, {"type": "text", "text": "ok"}],
        "usage": usage,
    }
    return {"type": "assistant", "timestamp": t, "version": "2.1.72", "message": message}


def _prompt(t: str, meta: bool = False) -> dict[str, object]:
    return {"type": "user", "timestamp": t, "isMeta": meta, "message": {"content": "next"}}


def _log(tmp_path: Path, second_read: int, gap_s: int = 30) -> Path:
    later = f"2026-03-04T10:{1 + gap_s // 60:02d}:{gap_s % 60:02d}Z"
    lines = [
        _prompt("2026-03-04T10:00:00Z"),
        _reply(1, "2026-03-04T10:00:10Z", 20_000, 0, thinking=True),
        {
            "type": "user",
            "timestamp": "2026-03-04T10:00:20Z",
            "message": {"content": [{"type": "tool_result"}]},
        },
        _reply(2, "2026-03-04T10:00:30Z", 21_000, 20_000, thinking=False),  # a tool loop: not a turn start
        _prompt(later),
        _reply(3, later, 22_000, second_read, thinking=False),
    ]
    folder = tmp_path / "owner__repo"
    folder.mkdir(exist_ok=True)
    path = folder / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("read", "side"), [(21_000, "full"), (20_950, "full"), (10_000, "less")])
def test_a_turn_start_after_thinking_is_counted_by_what_it_read(tmp_path: Path, read: int, side: str) -> None:
    path = _log(tmp_path, read)
    acc = count([tmp_path])
    assert acc.counts == {(HAIKU, True, "2.1.72", "owner__repo"): {side: 1}}
    assert list(acc.unreadable) == [f"{path}:7"]  # named, not read


def test_a_turn_start_after_an_idle_gap_is_not_counted(tmp_path: Path) -> None:
    _log(tmp_path, 10_000, gap_s=600)  # 10 minutes: a TTL question, not a stripping one
    assert count([tmp_path]).counts == {}


def test_the_command_reports_and_refuses_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _log(tmp_path, 10_000)
    assert main([str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["turn_starts"][0]["less"] == 1 and out["turn_starts"][0]["strips"] is True
    assert main([str(tmp_path / "absent")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_a_folder_named_like_a_log_is_skipped_and_an_unreadable_log_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "folder.jsonl").mkdir()
    _log(tmp_path, 10_000)
    real_open = open

    def refuse(path: object, *args: object, **kwargs: object) -> object:
        if str(path).endswith("s.jsonl"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", refuse)
    acc = count([tmp_path])
    assert acc.counts == {}
    assert list(acc.unreadable) == [f"{tmp_path / 'owner__repo' / 's.jsonl'}: Permission denied"]
