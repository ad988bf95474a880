"""Codex CLI rollout files (traces/importers/codex_rollout.py): the rollout Codex CLI 0.171.0 wrote
against `ctxbench serve` (the task of bench/live/run_harness.py: twelve 25 KB shell outputs, one
auto-compaction; strings shrunk by bench/live/fixtures.py) imports with every billed figure, and
the replay matches every request; a rollout without `token_usage_record` lines reads its usage
from the `token_count` events whose totals moved."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

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
