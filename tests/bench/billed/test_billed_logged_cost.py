"""`billed --mode auto` (the default, as ccusage's): a Claude Code 1.0.x line's own `costUSD` is its
request's cost; `--mode calculate` prices the usage from the catalog (bench/billed/totals.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.core.catalog import prices


def _log(tmp_path: Path, costs: list[float | None]) -> Path:
    lines = [{"type": "user", "sessionId": "s", "uuid": "u0", "timestamp": "2025-06-01T00:00:00Z",
              "message": {"role": "user", "content": "hi"}}]  # fmt: skip
    for k, c in enumerate(costs):
        usage = {"input_tokens": 10, "cache_read_input_tokens": 1000 * k, "cache_creation_input_tokens": 500,
                 "output_tokens": 20}  # fmt: skip
        line = {"type": "assistant", "sessionId": "s", "uuid": f"a{k}", "requestId": f"req_{k}",
                "timestamp": f"2025-06-01T00:00:{k + 1:02d}Z", "version": "1.0.3",
                "message": {"id": f"msg_{k}", "role": "assistant", "model": "claude-sonnet-4-20250514",
                            "content": [{"type": "text", "text": "ok"}], "usage": usage}}  # fmt: skip
        if c is not None:
            line["costUSD"] = c
        lines += [line, {"type": "user", "sessionId": "s", "uuid": f"u{k + 1}",
                         "timestamp": f"2025-06-01T00:00:{k + 1:02d}Z",
                         "message": {"role": "user", "content": "more"}}]  # fmt: skip
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _cost(capsys: pytest.CaptureFixture[str], *args: str) -> float:
    assert main(["billed", *args, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    return float(row["totalCost"])


def test_a_logged_cost_is_the_requests_cost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, [0.5, None, 0.25])
    p = prices("claude-sonnet-4")
    listed = [p.cost(10, 1000 * k, 500, 0, 20) for k in range(3)]
    assert _cost(capsys, str(log)) == pytest.approx(0.5 + listed[1] + 0.25)
    assert _cost(capsys, str(log), "--mode", "calculate") == pytest.approx(sum(listed))
    assert _cost(capsys, str(log), "--model", "claude-sonnet-4") == pytest.approx(sum(listed))
