"""The request head as RFC 9112 frames it, and slow clients (issue 32): one answer per request in
its path's API shape, never a head ended early and its body answered as a second request."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxbench.bench.robustness.fuzz_http import Answer, raw_request
from ctxbench.bench.robustness.soak_http import slow_clients
from ctxbench.sim.serve.proxy import start_proxy, stop_proxy
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop

BODY = json.dumps(
    {"model": "claude-sonnet-4-6", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
).encode()
CHAT = json.dumps({"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CtxServer]:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "requests.jsonl"), read_timeout=1.0))
    yield srv
    stop(srv)


def _send(srv: CtxServer, data: bytes) -> Answer:
    return raw_request(srv.server_address[1], data, timeout=5.0)


def _lines(srv: CtxServer) -> list[dict]:
    assert srv.state.ledger.path is not None
    srv.state.ledger.close()
    return [json.loads(x) for x in srv.state.ledger.path.read_text().splitlines()]


def _req(path: str, body: bytes, bad: bytes = b"", lead: bytes = b"") -> bytes:
    return (
        lead
        + f"POST {path} HTTP/1.1\r\nhost: x\r\n".encode()
        + bad
        + b"content-length: %d\r\n\r\n" % len(body)
        + body
    )


@pytest.mark.parametrize("lead", [b"\r\n", b"\n", b"\r\n\r\n"])
def test_empty_lines_before_the_request_line_are_ignored(server: CtxServer, lead: bytes) -> None:
    ans = _send(server, _req("/v1/messages", BODY, lead=lead))
    assert ans.status == 200 and ans.extra == 0


@pytest.mark.parametrize(
    "bad", [b"x-no-colon\r\n", b"x-space : v\r\n", b"x-n\x00ul: v\r\n", b" folded\r\n", b"x-v: a\x00b\r\n"]
)
@pytest.mark.parametrize(
    ("path", "shape"),
    [
        ("/v1/messages", "anthropic"),
        ("/v1/chat/completions", "openai"),
        ("/v1beta/models/gemini-2.5-pro:generateContent", "gemini"),
    ],
)
def test_a_malformed_header_line_is_one_400_in_the_paths_shape(
    server: CtxServer, bad: bytes, path: str, shape: str
) -> None:
    body = BODY if shape == "anthropic" else CHAT
    ans = _send(server, _req(path, body, bad=bad))
    assert (ans.status, ans.shape, ans.extra) == (400, shape, 0), ans.body
    assert len(_lines(server)) == 1  # one request, one ledger line


@pytest.mark.parametrize(
    ("line", "status"),
    [
        (b"POST {p} HTTP/9.9\r\n", 400),
        (b"POST {p} HTTP/1.1 x\r\n", 400),
        (b"POST {p}" + b"/a" * 40000 + b" HTTP/1.1\r\n", 414),
        (b"POST {p}\xc3\xa9 HTTP/1.1\r\n", 400),
    ],
)
@pytest.mark.parametrize(
    ("path", "shape"),
    [("/v1/chat/completions", "openai"), ("/v1beta/models/gemini-2.5-pro:generateContent", "gemini")],
)
def test_request_line_errors_in_the_paths_shape(
    server: CtxServer, line: bytes, status: int, path: str, shape: str
) -> None:
    ans = _send(server, line.replace(b"{p}", path.encode()) + b"host: x\r\n\r\n")
    assert (ans.status, ans.shape) == (status, shape), ans.body


def test_proxy_answers_a_non_ascii_path_400_not_500(tmp_path: Path) -> None:
    upstream, _ = start_background(ServeConfig(ledger=str(tmp_path / "up.jsonl")))
    proxy, _ = start_proxy(upstream.url, str(tmp_path / "proxy.jsonl"))
    try:
        for target in (b"/v1/messages\xc3\xa9", b"/v1/chat/completions\xff"):
            data = (
                b"POST " + target + b" HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n" % len(BODY) + BODY
            )
            ans = raw_request(proxy.server_address[1], data, timeout=5.0)
            assert ans.status == 400, ans.body
    finally:
        stop_proxy(proxy)
        stop(upstream)


def test_a_byte_a_tick_client_is_cut_at_the_whole_request_deadline(server: CtxServer) -> None:
    """One byte every 50 ms: no read waits long, so a per-read timeout never fires; the whole
    request would take 15 s. The 408 comes while the client is still sending, at the 1 s deadline."""
    data = _req("/v1/messages", BODY)
    t0 = time.monotonic()
    answer, at = b"", 0.0
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as s:
        for byte in data:
            with contextlib.suppress(OSError):
                s.sendall(bytes([byte]))
            time.sleep(0.05)
            s.setblocking(False)
            with contextlib.suppress(OSError):
                answer = s.recv(65536)
            s.setblocking(True)
            if answer or time.monotonic() - t0 > 4:
                at = time.monotonic() - t0
                break
    assert answer.split(b" ")[1:2] == [b"408"], answer[:200]
    assert at < 2.5


def test_a_stalled_request_line_is_answered_408(server: CtxServer) -> None:
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as s:
        s.sendall(b"POST /v1/chat/completions HTT")
        with s.makefile("rb") as f:
            line = f.readline()
            rest = f.read()
    assert line.split(b" ")[1:2] == [b"408"]
    assert b'"error"' in rest and b'"type":"error"' not in rest  # the OpenAI shape of its path


def test_slow_clients_of_one_address_leave_slots_for_others(tmp_path: Path) -> None:
    srv, _ = start_background(ServeConfig(read_timeout=5.0, max_connections=16))
    try:
        assert slow_clients(srv.server_address[1], 40, ordinary=3) < 1.0
    finally:
        stop(srv)
