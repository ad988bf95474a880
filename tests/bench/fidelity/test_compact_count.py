"""What Claude Code counted when it auto-compacted (bench/fidelity/compact_count.py), on synthetic logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compact_count import count, main


def _reply(mid: str, prompt: int, output: int, version: str) -> dict[str, object]:
    usage = {"input_tokens": 10, "cache_read_input_tokens": prompt - 10, "output_tokens": output}
    return {"type": "assistant", "version": version, "message": {"id": mid, "usage": usage}}


def _boundary(pre: int, trigger: str = "auto") -> dict[str, object]:
    meta = {"trigger": trigger, "preTokens": pre}
    return {"type": "system", "subtype": "compact_boundary", "compactMetadata": meta}


def _write(tmp_path: Path, lines: list[dict[str, object]]) -> None:
    (tmp_path / "s.jsonl").write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")


def test_the_count_is_the_last_prompt_plus_the_final_output_or_more(tmp_path: Path) -> None:
    _write(tmp_path, [
        _reply("m1", 120_000, 2, "2.0.8"), _reply("m1", 120_000, 519, "2.0.8"),  # one message, two lines
        _boundary(120_519),  # the last usage alone, with the final output
        _reply("m2", 40_000, 5, "2.1.9"),
        _boundary(40_400),  # more: what followed the last usage was added
        _reply("m3", 50_000, 5, "2.1.9"),
        _boundary(50_005, "manual"),  # not automatic: not counted
    ])  # fmt: skip
    acc = count([tmp_path])
    assert acc.by_version == {"2.0.8": {"last usage alone": 1}, "2.1.9": {"more": 1}}


def test_the_command_reports_and_refuses_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path, [_reply("m1", 120_000, 2, "2.0.8"), _boundary(120_002)])
    assert main([str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_version"] == {"2.0.8": {"last usage alone": 1}}
    assert main([str(tmp_path / "absent")]) == 2
    assert "not a folder" in capsys.readouterr().err
