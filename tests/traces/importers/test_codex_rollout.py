"""Codex CLI rollout files (traces/importers/codex_rollout.py): the rollout Codex CLI 0.171.0 wrote
against `ctxbench serve` (the task of bench/live/run_harness.py: twelve 25 KB shell outputs, one
auto-compaction; strings shrunk by bench/live/fixtures.py) imports with every billed figure, and
the replay matches every request; a rollout without `token_usage_record` lines reads its usage
from the `token_count` events whose totals moved."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import CompactionEvent, MessageEvent, SystemEvent

ROLLOUT = Path(__file__).parent / "data" / "codex-0.171.0.rollout.jsonl.xz"


def _rollout(tmp_path: Path) -> Path:
    p = tmp_path / "rollout-2026-12-03T08-31-21-x.jsonl"
    p.write_bytes(lzma.decompress(ROLLOUT.read_bytes()))
    return p


def _replies(tr: object) -> list[MessageEvent]:
    return [e for e in tr.events if isinstance(e, MessageEvent) and e.role == "assistant"]  # type: ignore[attr-defined]


def test_codex_0_171_rollout_imports_with_its_compaction_request_apart(tmp_path: Path) -> None:
    res = import_paths([_rollout(tmp_path)])
    assert res.names == ["main", "compaction-1"]
    main, side = res.traces
    assert main.header.model == "gpt-5.1-codex" and main.header.meta["model_recorded"] == "gpt-5.1-codex"
    assert isinstance(main.events[0], SystemEvent)  # session_meta.base_instructions
    assert sum(isinstance(e, CompactionEvent) for e in main.events) == 1
    billed = [e.usage for tr in res.traces for e in _replies(tr)]
    assert len(billed) == 14  # the serve ledger's 14 requests
    assert sum(u.cache_read for u in billed if u) == 200_448
    assert sum(u.input_tokens for u in billed if u) == 63_787  # 264,235 input - 200,448 cached
    assert [u.total_input for u in (e.usage for e in _replies(side)) if u] == [25_596]
    for tr in res.traces:
        sf = compare(tr, "rollout", "recorded", None)
        assert sf.share_within == 1.0 and abs(sf.cost_predicted - sf.cost_billed) < 1e-6


def test_without_usage_records_the_token_counts_that_moved_are_the_requests(tmp_path: Path) -> None:
    def line(typ: str, **payload: object) -> str:
        return json.dumps({"timestamp": "2026-12-03T08:31:21.000Z", "type": typ, "payload": payload})

    def count(total: int, last: int, cached: int) -> str:
        usage = {"input_tokens": last, "cached_input_tokens": cached, "output_tokens": 10}
        info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}
        return line("event_msg", type="token_count", info=info)

    lines = [
        line("session_meta", id="s", base_instructions={"text": "You are Codex."}),
        line("turn_context", model="gpt-5"),
        line("response_item", type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        line("response_item", type="function_call", name="shell", arguments='{"cmd":"ls"}', call_id="c1"),
        line("response_item", type="function_call_output", call_id="c1", output="a.txt"),
        count(5000, 5000, 0),
        count(5000, 5000, 0),  # repeated: no new request
        line(
            "response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "ok"}]
        ),
        count(10100, 5100, 4992),
    ]
    p = tmp_path / "rollout-old.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = import_paths([p])
    replies = _replies(res.main)
    assert [(u.cache_read, u.input_tokens) for u in (r.usage for r in replies) if u] == [
        (0, 5000),
        (4992, 108),
    ]
    users = [e for e in res.main.events if isinstance(e, MessageEvent) and e.role == "user"]
    assert [c.kind for c in users[1].content] == ["tool_result"]  # the output follows its call
    assert res.report.counts["token_count events repeating the last totals"] == 1


def test_codex_in_vs_code_aide_model_and_version_0_0_0(tmp_path: Path) -> None:
    """Codex in VS Code writes its model as `aide-gpt-5` and some builds `cli_version` "0.0.0"; newer
    token_count events carry `rate_limits` and `model_context_window` (codex-rs protocol.rs
    TokenCountEvent): the log imports as gpt-5 and `billed` prices it (issue 33)."""
    import subprocess
    import sys

    def line(typ: str, **payload: object) -> str:
        return json.dumps({"timestamp": "2026-12-03T08:31:21.000Z", "type": typ, "payload": payload})

    usage = {
        "input_tokens": 4000,
        "cached_input_tokens": 3072,
        "output_tokens": 20,
        "reasoning_output_tokens": 8,
    }
    info = {"total_token_usage": usage, "last_token_usage": usage, "model_context_window": 272000}
    lines = [
        line("session_meta", id="s", cli_version="0.0.0", originator="codex_vscode", instructions=None),
        line("turn_context", model="aide-gpt-5", cwd="/w", approval_policy="on-request"),
        line("response_item", type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        line(
            "response_item", type="message", role="assistant", content=[{"type": "output_text", "text": "ok"}]
        ),
        line("event_msg", type="token_count", info=info, rate_limits={"primary": {"used_percent": 1.0}}),
    ]
    p = tmp_path / "rollout-vscode.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = import_paths([p])
    assert res.main.header.model == "gpt-5" and res.main.header.meta["model_recorded"] == "aide-gpt-5"
    out = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "billed", "--json", str(p)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["model"] == "gpt-5" and row["totalCost"] is not None and row["cacheReadTokens"] == 3072


def line(typ: str, ts: int, **payload: object) -> str:
    """A rollout line at second `ts`."""
    stamp = f"2026-12-03T08:31:{ts:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": typ, "payload": payload})


def count(ts: int, total: int, inp: int, cached: int) -> str:
    """A `token_count` event: the session's running total and the last request's usage."""
    usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": 40}
    info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}
    return line("event_msg", ts, type="token_count", info=info)


def test_a_prompt_that_drops_and_comes_back_is_not_sized_as_a_rewrite(tmp_path: Path) -> None:
    """Issue 33: the recorded input drops (11,194 -> 3,773 tokens) on a response with three
    parallel tool calls, then comes back (11,725). The dropped usage is a conversation of its own;
    the reply (its three calls) stays, and no block before it shrinks."""

    def call(ts: int, cid: str, cmd: str) -> str:
        args = json.dumps({"cmd": cmd})
        return line("response_item", ts, type="function_call", name="shell", arguments=args, call_id=cid)

    def out(ts: int, cid: str, text: str) -> str:
        return line("response_item", ts, type="function_call_output", call_id=cid, output=text)

    def say(ts: int, role: str, text: str) -> str:
        kind = "output_text" if role == "assistant" else "input_text"
        return line("response_item", ts, type="message", role=role, content=[{"type": kind, "text": text}])

    lines = [
        line("session_meta", 0, id="s", model_provider="openai", base_instructions={"text": "Codex. " * 400}),
        line("turn_context", 0, model="gpt-5"),
        say(1, "user", "build it"),
        call(2, "c1", "ls"),
        count(2, 5000, 5000, 4480),
        out(3, "c1", "a.txt " * 300),
        call(5, "c2", "cat a.txt"),
        count(5, 13000, 8000, 4992),
        out(6, "c2", "x " * 900),
        call(8, "c3", "make"),
        count(8, 24194, 11194, 7936),
        out(9, "c3", "ok " * 40),
        call(11, "c4", "ls src"),  # three parallel calls on the response whose input drops
        call(11, "c5", "ls tests"),
        call(11, "c6", "git status"),
        count(11, 27967, 3773, 3712),
        out(12, "c4", "m.py"),
        out(12, "c5", "t.py"),
        out(12, "c6", "clean"),
        say(14, "assistant", "done"),
        count(14, 39692, 11725, 11136),
        call(16, "c7", "make test"),
        count(16, 51800, 12108, 11648),
        out(17, "c7", "passed"),
        say(19, "assistant", "all good"),
        count(19, 64100, 12300, 11904),
    ]
    p = tmp_path / "rollout-parallel.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = import_paths([p])
    assert res.names == ["main", "short-prompt-1"]
    assert res.main.header.meta["model_provider"] == "openai"
    replies = _replies(res.main)
    assert [c.kind for c in replies[3].content] == ["tool_use"] * 3 and replies[3].usage is None
    side = compare(res.traces[1], "short-prompt-1")
    assert side.n == 1 and side.requests[0].billed.input_tokens + side.requests[0].billed.cache_read == 3773
    sf = compare(res.main, "main")
    assert [r.index for r in sf.requests] == [0, 1, 2, 4, 5, 6]
    by = {r.index: r for r in sf.requests}
    assert all(by[i].ok for i in (0, 1, 2, 5, 6))  # before the drop: as billed, nothing taken back
    # after it: at least what the prompt before the drop left (not a prompt rebuilt from 3,773)
    assert by[4].predicted.cache_read >= by[4].naive_read == 11136
    # every billed token is still billed once, in one of the two conversations
    total = sum(r.cost_billed for r in sf.requests) + side.cost_billed
    assert total == pytest.approx(0.01920075 + 0.00094025, rel=1e-6)


def test_a_warm_prefix_that_ends_inside_the_instructions_is_read_by_the_first_request(tmp_path: Path) -> None:
    """The first request reads 3,968 tokens another session cached; a later one reads 4,096, the
    end of the system prompt (instructions, then the session's own environment): the warm prefix
    ends inside the recorded instructions, which are cut there, and the replay reads it."""

    def turn(ts: int, cid: str, total: int, inp: int, cached: int) -> list[str]:
        args = json.dumps({"cmd": "ls"})
        return [
            line("response_item", ts, type="function_call", name="shell", arguments=args, call_id=cid),
            count(ts, total, inp, cached),
            line("response_item", ts + 1, type="function_call_output", call_id=cid, output="a.txt " * 200),
        ]

    instructions = {"text": "Codex. " * 3000}
    lines = [
        line("session_meta", 0, id="s", model_provider="openai", base_instructions=instructions),
        line("turn_context", 0, model="gpt-5"),
        line("response_item", 1, type="message", role="user", content=[{"type": "input_text", "text": "go"}]),
        *turn(2, "c1", 6000, 6000, 3968),
        *turn(5, "c2", 13000, 7000, 4096),
        *turn(8, "c3", 21000, 8000, 6912),
    ]
    p = tmp_path / "rollout-warm.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tr = import_paths([p]).main
    assert tr.header.meta["warm_tokens"] == 3968 and tr.header.meta["system_tokens"] == 4096
    system = tr.events[0]
    assert isinstance(system, SystemEvent) and [c.tokens for c in system.content][:2] == [3968, 128]
    first = compare(tr, "main").requests[0]
    assert first.billed.cache_read == 3968 and first.ok
