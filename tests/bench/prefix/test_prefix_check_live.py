"""check-prefix, with no declarations, on request logs real harnesses sent to `ctxbench serve`
(tests/bench/data/live/, made by bench/live/run_harness.py and shrunk by bench/live/fixtures.py):
Claude Code 2.1.197 auto-compacting three times, 2.1.120 twice (a billing-header hash per request),
Claude Code 2.1.332 auto-compacting twice and
compacting once by `/compact` (each compaction request sent again with an amended instruction,
bench/claude_code_wire.md §3), Codex CLI 0.171.0 compacting once with its reasoning items sent
back. Every break is explained; taking the compaction request out, or rewriting a message of the
real traffic, still fails."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.prefix.check import Report, find_breaks
from ctxbench.bench.prefix.request_log import parse_line, read_request_log
from ctxbench.traces.compressed import open_log

DATA = Path(__file__).parents[1] / "data" / "live"
CLAUDE = DATA / "claude-code-2.1.197.requests.jsonl.xz"
CODEX = DATA / "codex-0.171.0.requests.jsonl.xz"
CLAUDE_LATEST = DATA / "claude-code-2.1.332.requests.jsonl.xz"  # the task of bench/live/run_harness.py
CLAUDE_COMPACT = DATA / "claude-code-2.1.332-compact.requests.jsonl.xz"  # reads, an edit, /compact
CLAUDE_120 = DATA / "claude-code-2.1.120-compact.requests.jsonl.xz"  # the same task, 2.1.120


def _lines(path: Path) -> list[dict]:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(x) for x in f if x.strip()]


def _check(path: Path) -> tuple[Report, list[int]]:
    skipped: list[int] = []
    with open_log(path) as f:
        return find_breaks(read_request_log(f, str(path), skipped)), skipped


def test_claude_code_auto_compactions_are_explained() -> None:
    rep, skipped = _check(CLAUDE)
    assert skipped == [1]  # HEAD / answered 405: not a request the model saw
    assert rep.ok and rep.requests == 28
    assert [(b.request, b.cls, b.explained) for b in rep.breaks] == [
        (9, "reset_after_compaction", True),
        (17, "reset_after_compaction", True),
        (25, "reset_after_compaction", True),
    ]
    # the compaction request is the previous request whole + the instruction: no break of its own
    assert [b.declared for b in rep.breaks] == [f"compaction (recognised: request {c})" for c in (8, 16, 24)]
    first = rep.breaks[0]
    assert first.segment == "system" and first.tokens > 0
    assert (
        first.note
        == "changed with the new conversation: system block 0 (cc_version 2.1.197.4fb -> 2.1.197.f9d)"
    )


def test_claude_code_2_1_120_per_request_hash_and_compactions_are_explained() -> None:
    """2.1.120 changes its billing header's `cch=` with every request (no break: the API keys the
    header as one block) and sends each auto-compaction as the request it would have sent next
    with the instruction after the tool results; the new conversation after it is explained, with
    the header's `cc_version` fingerprint named as changed with it. The second summary equals the
    first (the server's scripted text), so the second new conversation's opening is a prefix of
    the first one's: an allowed side request. Without the compaction request, the reset fails."""
    rep, _ = _check(CLAUDE_120)
    assert rep.ok and rep.requests == 27
    assert [(b.request, b.cls, b.explained) for b in rep.breaks] == [
        (10, "reset_after_compaction", True),
        (20, "side_request", False),
        (21, "reset_after_compaction", True),
    ]
    assert [b.declared for b in rep.breaks if b.explained] == [
        "compaction (recognised: request 9)",
        "compaction (recognised: request 19)",
    ]
    assert "cc_version 2.1.120.598 -> 2.1.120.8c6" in rep.breaks[0].note
    lines = [x for x in _lines(CLAUDE_120) if x.get("status") == 200]
    del lines[9]  # the first compaction request
    rep = find_breaks([parse_line(x, n + 1, f"l{n}") for n, x in enumerate(lines)])
    assert [(b.request, b.cls) for b in rep.failing] == [(9, "static_prefix_edit")]  # its new fingerprint


def test_codex_compaction_with_reasoning_items_is_explained() -> None:
    lines = _lines(CODEX)
    assert all(x["body"]["prompt_cache_key"] == lines[0]["body"]["prompt_cache_key"] for x in lines)
    assert any(i.get("type") == "reasoning" for i in lines[5]["body"]["input"])
    rep, skipped = _check(CODEX)
    assert rep.ok and not skipped
    side, reset = rep.breaks
    assert (side.request, side.cls, side.explained, side.segment) == (9, "side_request", True, "tools")
    assert "compaction request" in side.note and side.tokens > 0
    assert (reset.request, reset.cls, reset.explained, reset.message) == (
        10,
        "reset_after_compaction",
        True,
        2,
    )
    assert reset.declared == "compaction (recognised: request 9)"


def test_claude_code_2_1_332_compaction_retries_are_compaction_requests() -> None:
    """2.1.332 re-sends each compaction request with "For this reply only: ... <summary></summary>
    tags" appended to its instruction (the mock's summary has no tags): the re-sent request is a
    compaction request too, and the new conversation after it is explained."""
    rep, skipped = _check(CLAUDE_LATEST)
    assert rep.ok and not skipped and rep.requests == 29
    assert [(b.request, b.cls, b.explained) for b in rep.breaks] == [
        (11, "side_request", True),
        (12, "reset_after_compaction", True),
        (22, "side_request", True),
        (23, "reset_after_compaction", True),
    ]
    declared = [f"compaction (recognised: request {c})" for c in (11, 22)]
    assert [b.declared for b in rep.breaks[1::2]] == declared
    assert rep.breaks[1].note == (
        "changed with the new conversation: system block 0 (cc_version 2.1.332.904 -> 2.1.332.cf6)"
    )
    rep, _ = _check(CLAUDE_COMPACT)  # /compact after three turns of reads, an edit, a grep
    assert rep.ok and [(b.request, b.cls) for b in rep.breaks] == [
        (10, "side_request"),
        (11, "reset_after_compaction"),
    ]


def test_an_amended_instruction_on_a_main_line_request_still_fails() -> None:
    """The retry rule needs a compaction request as parent: the same edit of an ordinary
    request's last message (a tail edit) stays unexplained."""
    lines = [x for x in _lines(CLAUDE_LATEST) if x.get("status") == 200][:8]
    last = lines[7]["body"]["messages"][-1]
    last["content"] = [*last["content"], {"type": "text", "text": "For this reply only: be brief."}]
    lines.append(json.loads(json.dumps(lines[7])))
    lines[7]["body"]["messages"][-1]["content"][-1]["text"] = "For this reply only: be short."
    rep = find_breaks([parse_line(x, n + 1, f"l{n}") for n, x in enumerate(lines)])
    assert [(b.request, b.cls, b.explained) for b in rep.failing] == [(8, "tail_edit", False)]


@pytest.mark.parametrize(
    "path",
    [CLAUDE, CLAUDE_LATEST, CLAUDE_COMPACT, CLAUDE_120, CODEX],
    ids=["claude-code", "2.1.332", "2.1.332-compact", "2.1.120-compact", "codex"],
)
def test_cli_exits_0_on_the_compressed_real_log(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-prefix", str(path)]) == 0
    assert "recognised" in capsys.readouterr().out


def test_without_its_compaction_request_the_reset_fails() -> None:
    lines = [x for x in _lines(CLAUDE) if x.get("status") == 200]
    kept = [
        x for x in lines if "CRITICAL: Respond with TEXT ONLY" not in json.dumps(x["body"]["messages"][-1])
    ]
    assert len(kept) == len(lines) - 3
    rep = find_breaks([parse_line(x, n + 1, f"l{n}") for n, x in enumerate(kept)])
    assert not rep.ok and {b.cls for b in rep.failing} == {"static_prefix_edit", "reset_after_compaction"}


def test_a_rewritten_message_in_real_codex_traffic_fails() -> None:
    lines = _lines(CODEX)
    for x in lines[6:9]:  # opencode-style: an old tool output pruned in place, undeclared
        items = x["body"]["input"]
        k = next(i for i, it in enumerate(items) if it.get("type") == "function_call_output")
        items[k] = {**items[k], "output": "[pruned]"}
    rep = find_breaks([parse_line(x, n + 1, f"l{n}") for n, x in enumerate(lines)])
    assert [(b.request, b.cls, b.explained) for b in rep.failing] == [(6, "mid_conversation_edit", False)]
