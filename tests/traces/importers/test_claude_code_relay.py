"""Claude Code logs answered by a relay that reports no cache writes: recognised from the log
(no Anthropic request id, reads but never a write), sized on whole prompts, replayed on the
claude-relay profile and priced as the log reports (ccusage's reading)."""

from __future__ import annotations

from pathlib import Path

from ctxbench.bench.fidelity.compare import compare
from ctxbench.sim.providers.choice import choose
from ctxbench.traces.importers import import_paths
from tests.traces.importers.claude_code_lines import turn, write_log


def _relay_log(tmp_path: Path, request_ids: bool = False, write_at: int = -1) -> Path:
    """Six requests, 20 s apart: each reads the whole previous prompt (less one token, as the
    development relay does) and sends the new turn as uncached input."""
    lines, prompt, prev = [], 0, 0
    for k in range(6):
        new = 20000 if k == 0 else 600 + k * 10
        prompt = prev + new
        read = max(0, prev - 51)  # the previous prompt less one token, without its reply
        usage = {
            "input_tokens": prompt - read,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": 500 if k == write_at else 0,
            "output_tokens": 50,
        }
        t = f"2026-03-06T17:{k:02d}:00Z"
        rid = f"req_011C{k:020d}" if request_ids else None
        lines += turn(
            k, "claude-opus-4-6", usage, asked=t, answered=t.replace(":00Z", ":05Z"),
            message_id=f"msg_{k:030d}", request_id=rid, text_bytes=400, result_bytes=800,
        )  # fmt: skip
        prev = prompt + 50  # the reply is in the next prompt
    return write_log(tmp_path / "relay.jsonl", lines)


def test_relay_is_sized_on_whole_prompts_and_replayed_on_its_profile(tmp_path: Path) -> None:
    res = import_paths([_relay_log(tmp_path)], "claude-code")
    (trace,) = res.traces
    assert trace.header.meta["gateway"] == "claude-relay"
    assert trace.header.meta["sized_on"] == "prompt"
    assert any("relay that bills its writes as input" in n for n in res.report.notes)
    assert choose(trace, "anthropic").profile == "claude-relay"
    sf = compare(trace)
    assert sf.baseline.share_ok == 1.0  # every read predicted within tolerance
    # priced as the log reports it: the writes the relay hides are input, not 1.25x writes
    assert abs(sf.baseline.cost_predicted - sf.cost_billed) < 0.01 * sf.cost_billed
    assert all(r.predicted.cache_write_5m == r.predicted.cache_write_1h == 0 for r in sf.baseline.requests)


def test_anthropic_request_ids_or_a_write_mean_anthropic(tmp_path: Path) -> None:
    for path in (_relay_log(tmp_path, request_ids=True), _relay_log(tmp_path, write_at=3)):
        (trace,) = import_paths([path], "claude-code").traces
        assert "gateway" not in trace.header.meta
        assert choose(trace, "anthropic").profile == "anthropic"
