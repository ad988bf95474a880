"""A folder of users' logs as they come (the public corpus showed each case): logs in dot-folders
(`.codex/sessions`, `.claude/projects`) are found, one log that cannot be read or has no model is
named while the others are still summed and scored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.fidelity.discover import discover
from ctxbench.bench.fidelity.logs import replay_log
from tests.real import REAL, needs_real

CODEX = "codex-tui/binary-size-log.jsonl"


@needs_real
def test_logs_in_dot_folders_are_found_and_tool_folders_are_not(tmp_path: Path) -> None:
    for folder in (".codex/sessions", ".git/objects"):
        (tmp_path / folder).mkdir(parents=True)
        shutil.copy(REAL / CODEX, tmp_path / folder / "rollout.jsonl")
    assert [log.rel for log in discover(tmp_path).logs] == [".codex/sessions/rollout.jsonl"]


@needs_real
def test_billed_names_a_bad_log_and_sums_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(REAL / CODEX, tmp_path / "a.jsonl")
    line = {"timestamp": "2025-10-31T13:09:15Z", "type": "session_meta", "payload": {"id": "x"}}
    (tmp_path / "b.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")  # a rollout, no reply
    assert main(["billed", str(tmp_path), "--json"]) == 2  # a log left out is bad input
    out = capsys.readouterr()
    assert [r["session"].rsplit("/", 1)[1] for r in json.loads(out.out)] == ["a.jsonl"]
    assert "b.jsonl" in out.err and "left out" in out.err


def test_a_log_without_a_model_is_named_not_fatal(tmp_path: Path) -> None:
    """A Codex 0.34 rollout that records no model (seen in the corpus): named, not a stop."""

    def line(typ: str, **payload: object) -> str:
        return json.dumps({"timestamp": "2025-10-31T19:02:58.000Z", "type": typ, "payload": payload})

    usage = {"input_tokens": 5000, "cached_input_tokens": 0, "output_tokens": 10}
    reply = [{"type": "output_text", "text": "ok"}]
    lines = [
        line("session_meta", id="s", base_instructions={"text": "You are Codex."}),
        line("response_item", type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        line("response_item", type="message", role="assistant", content=reply),
        line("event_msg", type="token_count", info={"total_token_usage": usage, "last_token_usage": usage}),
    ]
    (tmp_path / "rollout-2025-10-31T19-02-58-x.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    replayed = [r for log in discover(tmp_path).logs for r in replay_log(log)]
    assert replayed and all(r.fidelity is None for r in replayed)
    assert all("names no model" in r.why_not for r in replayed)


def test_a_naive_read_past_the_billed_cache_takes_from_the_uncached_input() -> None:
    """An automatic cache's naive read (the previous prompt) can exceed what the bill cached: the
    excess comes out of the uncached input, never as a negative write (a no-cache relay behind a
    Claude Code log once predicted a negative cost)."""
    from ctxbench.bench.fidelity.compare import _naive_usage
    from ctxbench.traces.model import Usage

    u = _naive_usage(Usage(input_tokens=1000, output_tokens=5), 600, 1000, 5)
    assert (u.uncached, u.cache_read, u.cache_write_5m, u.cache_write_1h) == (400, 600, 0, 0)
    billed = Usage(input_tokens=100, cache_read=500, cache_write_5m=300, output_tokens=5)
    v = _naive_usage(billed, 500, 100, 5)
    assert (v.uncached, v.cache_read, v.cache_write_5m) == (100, 500, 300)
