"""The HTTP half of the soak: fuzzed requests on raw sockets to `serve`, and to `proxy` in front of
another `serve`, all on 127.0.0.1; then the ledgers and traces are checked.

Counted: answers by status and by shape (Anthropic or OpenAI error JSON, success, HTML, other),
requests without an answer, HTML pages, unmodelled 5xx, ledger lines lost (requests sent minus
lines written), non-JSON ledger lines, gaps in sequence numbers, stored secrets (the key sent in
headers, query strings and body fields, searched in every file written), server-side tracebacks
(exceptions that reached the server's error handler, or requests recorded as `internal:`), and
stalled requests (half-sent bodies) answered 408 after the read timeout.
"""

from __future__ import annotations

import json
import random
import socket
import tempfile
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxbench.bench.robustness.fuzz_http import SECRETS, expected_shape, fuzz_request, raw_request


@dataclass
class HttpCounts:
    requests: int = 0
    by_status: Counter[str] = field(default_factory=Counter)  # "<kind> <status> <shape>"
    no_answer: int = 0
    html: int = 0
    unmodelled_5xx: int = 0
    ledger_lines: int = 0
    lost: int = 0
    non_json: int = 0
    seq_gaps: int = 0
    secrets_stored: int = 0
    tracebacks: int = 0
    stalled: int = 0
    stalled_answered_408: int = 0
    extra_answers: int = 0  # a second answer to one request (a head ended early: smuggling shape)
    wrong_shape: int = 0  # an error not in its path's API shape
    slow: int = 0  # slow connections open while ordinary requests were timed
    slow_latency_max: float = 0.0  # seconds, the slowest ordinary request among them
    examples: list[str] = field(default_factory=list)


def _install_error_counter(srv: Any, counts: HttpCounts, lock: threading.Lock) -> None:
    original = srv.handle_error

    def counted(request: Any, client_address: Any) -> None:
        with lock:
            counts.tracebacks += 1
        original(request, client_address)

    srv.handle_error = counted


def _check_ledger(path: Path, expected: int | None, counts: HttpCounts) -> None:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines() if path.exists() else []
    seqs = []
    for line in lines:
        try:
            x = json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError:
            counts.non_json += 1
            continue
        seqs.append(x.get("seq"))
        if str(x.get("error", "")).startswith("internal:"):
            counts.tracebacks += 1
    counts.ledger_lines += len(lines)
    if seqs != list(range(1, len(seqs) + 1)):
        counts.seq_gaps += 1
    if expected is not None:
        counts.lost += max(0, expected - len(lines))


def _stalled(port: int, n: int) -> int:
    """Open `n` connections that send half a body and stop; how many got a 408 answer."""
    socks = []
    body = b'{"model":"claude-sonnet-4-6","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body) + body[:20]
        )
        socks.append(s)
    got = 0
    for s in socks:
        with s, s.makefile("rb") as f:
            line = f.readline()
            got += line.split(b" ")[1:2] == [b"408"]
    return got


def slow_clients(port: int, n: int, ordinary: int = 5) -> float:
    """Open `n` connections from 127.0.0.2 that send the start of a request line and stall (a slow
    client), then time `ordinary` ordinary requests from 127.0.0.1; the slowest, in seconds (a
    missing answer counts as 60)."""
    import time

    body = b'{"model":"claude-sonnet-4-6","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=("127.0.0.2", 0))
            s.sendall(b"POST /v1/mes")
            socks.append(s)
        worst = 0.0
        req = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        for _ in range(ordinary):
            t0 = time.monotonic()
            ans = raw_request(port, req, timeout=10.0)
            worst = max(worst, time.monotonic() - t0 if ans.status == 200 else 60.0)
        return worst
    finally:
        for s in socks:
            s.close()


def soak_http(
    n_requests: int, seed: int = 0, jobs: int = 8, stalled: int = 40, slow: int = 300
) -> HttpCounts:
    from ctxbench.sim.serve.proxy import start_proxy, stop_proxy
    from ctxbench.sim.serve.server import ServeConfig, start_background, stop

    counts = HttpCounts()
    lock = threading.Lock()
    rng = random.Random(seed)
    plan = [(i % 4 == 3, *fuzz_request(rng)) for i in range(n_requests)]  # a quarter through the proxy
    with tempfile.TemporaryDirectory(prefix="ctxbench-soak-http-") as tmp:
        folder = Path(tmp)
        direct, _ = start_background(ServeConfig(ledger=str(folder / "serve.jsonl"), read_timeout=2.0))
        upstream, _ = start_background(ServeConfig(ledger=str(folder / "upstream.jsonl"), read_timeout=2.0))
        proxy, _ = start_proxy(upstream.url, str(folder / "proxy.jsonl"))
        proxy.read_timeout = 2.0
        for srv in (direct, upstream, proxy):
            _install_error_counter(srv, counts, lock)
        ports = {False: direct.server_address[1], True: proxy.server_address[1]}

        def one(item: tuple[bool, str, bytes]) -> None:
            via_proxy, kind, data = item
            ans = raw_request(ports[via_proxy], data)
            shape = ans.shape
            with lock:
                counts.requests += 1
                counts.by_status[f"{'proxy' if via_proxy else 'serve'} {kind} {ans.status} {shape}"] += 1
                if shape == "none":
                    counts.no_answer += 1
                    if len(counts.examples) < 5:
                        counts.examples.append(f"no answer: {data[:300]!r}")
                if shape == "html":
                    counts.html += 1
                counts.extra_answers += ans.extra
                if (
                    ans.status >= 400
                    and shape not in ("head", expected_shape(data))
                    and not (via_proxy and ans.status == 502)
                ):
                    counts.wrong_shape += 1
                    if len(counts.examples) < 8:
                        counts.examples.append(f"shape {shape}: {data[:200]!r} -> {ans.body[:200]!r}")
                if ans.status >= 500 and not (via_proxy and ans.status == 502):
                    counts.unmodelled_5xx += 1
                    if len(counts.examples) < 5:
                        counts.examples.append(f"{ans.status}: {data[:300]!r} -> {ans.body[:300]!r}")

        with ThreadPoolExecutor(jobs) as ex:
            list(ex.map(one, plan))
        counts.stalled = stalled
        counts.stalled_answered_408 = _stalled(ports[False], stalled) if stalled else 0
        counts.slow = slow
        counts.slow_latency_max = slow_clients(ports[False], slow) if slow else 0.0
        stop_proxy(proxy)
        stop(upstream)
        stop(direct)
        direct_n = sum(1 for p, _, _ in plan if not p) + stalled + (5 if slow else 0)
        _check_ledger(folder / "serve.jsonl", direct_n, counts)
        _check_ledger(folder / "proxy.jsonl", n_requests - direct_n + stalled, counts)
        _check_ledger(folder / "upstream.jsonl", None, counts)
        direct.state.recorder.write(folder / "traces-serve")
        upstream.state.recorder.write(folder / "traces-upstream")
        proxy.state.recorder.write(folder / "traces-proxy")
        for p in folder.rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                for secret in SECRETS:
                    n = data.count(secret.encode())
                    counts.secrets_stored += n
                    if n and len(counts.examples) < 8:
                        at = data.find(secret.encode())
                        counts.examples.append(f"secret in {p.name}: {data[max(0, at - 300) : at + 60]!r}")
    return counts
