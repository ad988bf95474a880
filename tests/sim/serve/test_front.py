"""The HTTP front of serve and proxy (issue 12): every request answered in its API's shape and
recorded once, whatever arrives on the socket; credentials never stored; a stalled or bad
conversation never costs another its record. Raw sockets on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.bench.robustness.fuzz_http import SECRET, Answer, fuzz_request, raw_request
from ctxbench.sim.serve.proxy import start_proxy, stop_proxy
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop

ANTHROPIC_BODY = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 5,
    "messages": [{"role": "user", "content": "hi"}],
}
CHAT_BODY = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CtxServer]:
    folder = tmp_path_factory.mktemp("front")
    srv, _ = start_background(ServeConfig(ledger=str(folder / "requests.jsonl"), read_timeout=1.0))
    yield srv
    stop(srv)


def post(path: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{extra}"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body


def send(srv: CtxServer, data: bytes) -> Answer:
    return raw_request(srv.server_address[1], data)


def ledger(srv: CtxServer) -> list[dict]:
    assert srv.state.ledger.path is not None
    text = srv.state.ledger.path.read_text(encoding="utf-8")
    return [
        json.loads(x, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
        for x in text.splitlines()
    ]


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "post", "TRACE"])
@pytest.mark.parametrize(
    ("path", "shape"), [("/v1/messages", "anthropic"), ("/v1/chat/completions", "openai")]
)
def test_wrong_method_is_405_in_the_apis_shape(server: CtxServer, method: str, path: str, shape: str) -> None:
    body = json.dumps(ANTHROPIC_BODY).encode()
    ans = send(server, post(path, body).replace(b"POST", method.encode(), 1))
    assert ans.status == 405
    assert ans.shape == ("head" if method == "HEAD" else shape)
    assert "GET" in ans.headers["allow"]


CHUNKED = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked"


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: abc\r\n\r\n{}", 400),
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 1e3\r\n\r\n{}", 400),
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}", 400),
        (CHUNKED + b"\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400),
        (CHUNKED + b"\r\ncontent-length: 2\r\n\r\n{}", 400),
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n\r\n{}", 400),
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 90\r\n\r\n{}", 400),  # short body
        (b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-long: " + b"a" * 70000 + b"\r\n\r\n", 431),
        (
            b"POST /v1/messages HTTP/1.1\r\n" + b"".join(b"x-h%d: v\r\n" % i for i in range(120)) + b"\r\n",
            431,
        ),
        (b"POST /v1/messages HTTP/9.9\r\nhost: x\r\n\r\n", 400),
        (b"GET\r\n\r\n", 400),
        (b"POST /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414),
        (b"GET / \r\n\r\n", 400),
    ],
)
def test_bad_framing_is_a_json_4xx(server: CtxServer, data: bytes, status: int) -> None:
    ans = send(server, data)
    assert ans.status == status, ans
    assert ans.shape == "anthropic", ans.body[:200]


@pytest.mark.parametrize(
    "body",
    [
        b'{"model":"claude-sonnet-4-6","max_tokens":NaN,"messages":[]}',
        b'{"model":"claude-sonnet-4-6","max_tokens":5,"temperature":Infinity,"messages":[]}',
        b'{"model":"claude-sonnet-4-6","max_tokens":5,"messages":[{"role":"user","content":"h\\ud800i"}]}',
        b'{"model":"gpt-5","user":"zz\\ud800","messages":[{"role":"user","content":"hi"}]}',
        b"[" * 5000 + b"]" * 5000,
        b"\xff\xfe{}",
    ],
)
@pytest.mark.parametrize(
    ("path", "shape"), [("/v1/messages", "anthropic"), ("/v1/chat/completions", "openai")]
)
def test_non_strict_json_is_400_in_the_apis_shape(
    server: CtxServer, body: bytes, path: str, shape: str
) -> None:
    ans = send(server, post(path, body))
    assert (ans.status, ans.shape) == (400, shape), ans.body[:200]


BAD_CONTROL = ["x-ctxbench-index: \u00b2", "x-ctxbench-index: " + "1" * 5000, "x-ctxbench-output-tokens: 1e3"]


@pytest.mark.parametrize("header", [*BAD_CONTROL, "x-ctxbench-output-tokens: -1"])
def test_control_headers_must_be_plain_integers(server: CtxServer, header: str) -> None:
    data = post("/v1/messages", json.dumps(ANTHROPIC_BODY).encode(), header + "\r\n")
    data = data.replace(b"\xc2\xb2", b"\xb2")  # latin-1 on the wire
    ans = send(server, data)
    assert (ans.status, ans.shape) == (400, "anthropic"), ans.body[:200]


def test_unknown_paths_under_openai_prefixes_get_the_openai_shape(server: CtxServer) -> None:
    assert send(server, b"GET /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n").shape == "openai"
    assert send(server, post("/v1/chat/other", json.dumps(CHAT_BODY).encode())).shape == "openai"
    assert send(server, b"GET /v1/responses/x HTTP/1.1\r\nhost: x\r\n\r\n").shape == "openai"
    assert send(server, b"GET /v1/nothing HTTP/1.1\r\nhost: x\r\n\r\n").shape == "anthropic"


def test_stalled_body_is_answered_408_and_recorded(server: CtxServer) -> None:
    before = len(ledger(server))
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10) as s:
        s.sendall(b'POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"mo')
        line = s.makefile("rb").readline()
    assert line.split()[1] == b"408"
    assert ledger(server)[-1]["status"] == 408 and len(ledger(server)) == before + 1


def test_one_ledger_line_per_request_with_its_true_status(tmp_path: Path) -> None:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "l.jsonl"), read_timeout=1.0))
    rng = random.Random(7)
    answers = [send(srv, fuzz_request(rng)[1]) for _ in range(150)]
    stop(srv)
    lines = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, 151))
    assert sorted(a.status for a in answers) == sorted(x["status"] for x in lines)
    assert all(a.status and a.status < 500 and a.shape != "html" for a in answers)


def test_keys_are_never_stored(tmp_path: Path) -> None:
    body = {
        **ANTHROPIC_BODY,
        "metadata": {
            "user_id": "u1",
            "api_key": SECRET,
            "nested": [{"openai_api_key": SECRET, "token": SECRET}],
        },
        "password": SECRET,
    }
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "serve" / "requests.jsonl")))
    proxy, _ = start_proxy(srv.url, str(tmp_path / "proxy" / "requests.jsonl"))
    try:
        for port in (srv.server_address[1], proxy.server_address[1]):
            extra = f"x-api-key: {SECRET}\r\nauthorization: Bearer {SECRET}\r\n"
            ans = raw_request(port, post(f"/v1/messages?key={SECRET}", json.dumps(body).encode(), extra))
            assert ans.status == 200
            # the key echoed in a text field is scrubbed too
            echo = {**ANTHROPIC_BODY, "messages": [{"role": "user", "content": f"my key is {SECRET}"}]}
            assert raw_request(port, post("/v1/messages", json.dumps(echo).encode(), extra)).status == 200
    finally:
        stop_proxy(proxy)
        stop(srv)
    srv.state.recorder.write(tmp_path / "serve")
    proxy.state.recorder.write(tmp_path / "proxy")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for p in files:
        assert SECRET not in p.read_text(encoding="utf-8"), p
    line = json.loads((tmp_path / "serve" / "requests.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert line["body"]["metadata"]["api_key"] == "[redacted]" and line["body"]["max_tokens"] == 5


def test_bad_conversation_never_stops_another_from_being_written(tmp_path: Path) -> None:
    """A chat request whose `user` is "zz\\ud800", then a normal one; SIGTERM: exit 0, trace written."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxbench.bench.cli", "serve", "--port", "0", "--record", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        port = int(banner.split("http://127.0.0.1:")[1].split()[0])
        bad = b'{"model":"gpt-5","user":"zz\\ud800","messages":[{"role":"user","content":"hi"}]}'
        assert raw_request(port, post("/v1/chat/completions", bad)).status == 400
        good = {**CHAT_BODY, "user": "good"}
        assert raw_request(port, post("/v1/chat/completions", json.dumps(good).encode())).status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    traces = sorted(tmp_path.glob("conv-*.jsonl"))
    assert len(traces) == 1 and '"conversation":"good"' in traces[0].read_text(encoding="utf-8")
    assert len((tmp_path / "requests.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_connection_bound_queues_instead_of_refusing(tmp_path: Path) -> None:
    srv, _ = start_background(ServeConfig(read_timeout=0.5, max_connections=2))
    try:
        stalled = [socket.create_connection(("127.0.0.1", srv.server_address[1])) for _ in range(2)]
        for s in stalled:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\ncontent-length: 9\r\n\r\n{")
        ans = send(srv, post("/v1/messages", json.dumps(ANTHROPIC_BODY).encode()))
        assert ans.status == 200  # served once a slot freed (the stalled ones got 408)
        for s in stalled:
            assert s.makefile("rb").readline().split()[1] == b"408"
            s.close()
    finally:
        stop(srv)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32))
def test_fuzzed_requests_always_answered_as_json(server: CtxServer, seed: int) -> None:
    kind, data = fuzz_request(random.Random(seed))
    ans = send(server, data)
    assert ans.status and ans.status < 500, (kind, data[:300], ans)
    assert ans.shape in ("anthropic", "openai", "gemini", "ok", "head"), (kind, data[:300], ans.body[:300])
    request_line = data.split(b"\r\n", 1)[0]
    if b" /v1beta/" in request_line and ans.status >= 400 and ans.shape != "head":
        assert ans.shape == "gemini", (kind, data[:300], ans.body[:300])  # the Gemini API's own shape
