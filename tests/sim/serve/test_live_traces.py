"""Traces written as conversations progress (issue 32): a `serve --record` killed with SIGKILL after
N answered requests leaves traces that cover all N, and stopping takes no work per request."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ctxbench.bench.robustness.fuzz_http import raw_request
from ctxbench.traces.format import read_trace


def _body(user: str, turns: int) -> bytes:
    msgs: list[dict] = []
    for k in range(turns):
        msgs.append({"role": "user", "content": f"question {k}"})
        if k < turns - 1:
            msgs.append({"role": "assistant", "content": "ok"})
    return json.dumps(
        {"model": "claude-sonnet-4-6", "max_tokens": 5, "messages": msgs, "metadata": {"user_id": user}}
    ).encode()


def _start(folder: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxbench.bench.cli", "serve", "--port", "0", "--record", str(folder)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "listening on http://" in line, line
    return proc, int(line.split("listening on http://", 1)[1].split()[0].rsplit(":", 1)[1].rstrip(")"))


def test_a_killed_serve_leaves_traces_covering_every_answered_request(tmp_path: Path) -> None:
    proc, port = _start(tmp_path)
    answered = 0
    try:
        for k in range(1, 8):  # three conversations, 21 requests
            for user in ("alice", "bob", "carol"):
                body = _body(user, k)
                head = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n\r\n"
                ans = raw_request(port, head.encode() + body, timeout=10)
                assert ans.status == 200, ans.body
                answered += 1
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    traces = sorted(tmp_path.glob("conv-*.jsonl"))
    assert len(traces) == 3
    replies = 0
    for path in traces:
        tr = read_trace(path)  # every line complete and valid
        replies += sum(1 for ev in tr.events if getattr(ev, "usage", None) is not None)
    assert replies == answered == 21
    ledger = (tmp_path / "requests.jsonl").read_text().splitlines()
    assert len(ledger) == answered


def test_stopping_closes_the_traces_without_rewriting_them(tmp_path: Path) -> None:
    proc, port = _start(tmp_path)
    for user in ("a", "b"):
        body = _body(user, 1)
        head = f"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: {len(body)}\r\n\r\n"
        assert raw_request(port, head.encode() + body, timeout=10).status == 200
    before = {p.name: p.read_bytes() for p in tmp_path.glob("conv-*.jsonl")}
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 0, err
    assert "traces:" in err and {p.name: p.read_bytes() for p in tmp_path.glob("conv-*.jsonl")} == before
    assert len(before) == 2
