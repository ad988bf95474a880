"""Redaction by rule (issue 32): no credential reaches any file a recording writes, whatever the
field is called (any case or separator style), wherever it is (query, parsed or unparsed body,
quoted error text, message text) and whatever its value looks like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.robustness.fuzz_http import raw_request
from ctxbench.sim.serve.proxy import start_proxy, stop_proxy
from ctxbench.sim.serve.record import REDACTED, is_credential_name, redact_headers, redact_path, scrub_shapes
from ctxbench.sim.serve.server import ServeConfig, start_background, stop

PLAIN = "Zq81mXv0Lp27Ws5n"  # no known key shape: found by the name that holds it
COOKIE = "c00k1eV4lue9x8y7"
SHAPED = {
    "anthropic": "sk-ant-api03-Ab1Cd2Ef3Gh4Ij5Kl6",
    "openai": "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn",
    "google": "AIzaSyAb1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0U",
    "github": "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
    "slack": "xoxb-1234567890-Ab1Cd2Ef3",
}


@pytest.mark.parametrize(
    "name",
    ["apiKey", "api-key", "x-goog-api-key", "openaiApiKey", "authToken", "apiToken", "bearer", "key",
     "secret", "auth", "PASSWORD", "Cookie", "client_secret", "access_token", "X_API_KEY"],
)  # fmt: skip
def test_credential_names_in_any_style(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "maxOutputTokens", "input_tokens", "prompt_cache_key", "token_count", "author",
     "tokenizer", "monkey", "keyboard", "session_id", "x-ctxbench-index"],
)  # fmt: skip
def test_names_that_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


def test_query_keys_and_shaped_values() -> None:
    path = redact_path(f"/v1/m?api-key={PLAIN}&x-goog-api-key={PLAIN}&secret={PLAIN}&auth={PLAIN}&alt=sse")
    assert PLAIN not in path and path.endswith("&alt=sse")
    for value in SHAPED.values():
        assert value not in scrub_shapes(f"error: bad key {value} (Bearer {PLAIN})")
    assert PLAIN not in scrub_shapes(f'{{"apiToken": "{PLAIN}", "messages": [')


def _post(port: int, path: str, body: bytes, extra: str = "") -> int:
    head = f"POST {path} HTTP/1.1\r\nhost: x\r\n{extra}content-length: {len(body)}\r\n\r\n".encode()
    return raw_request(port, head + body, timeout=10).status


def _requests(port: int) -> list[int]:
    msg = {"role": "user", "content": f"my cookie is {COOKIE}; keys {' '.join(SHAPED.values())}"}
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 5,
        "messages": [msg],
        "metadata": {
            "user_id": "u1",
            "openaiApiKey": PLAIN,
            "apiToken": PLAIN,
            "authToken": PLAIN,
            "bearer": PLAIN,
            "key": PLAIN,
        },
    }
    q = f"?api-key={PLAIN}&x-goog-api-key={PLAIN}&secret={PLAIN}&auth={PLAIN}"
    out = [
        _post(port, "/v1/messages" + q, json.dumps(body).encode(), f"cookie: sid={COOKIE}; theme=dark\r\n"),
        _post(port, "/v1/messages", b'{"apiToken": "' + PLAIN.encode() + b'", "messages": ['),
        _post(port, "/v1/chat/completions", json.dumps({"model": "gpt-5", "authToken": PLAIN}).encode()),
    ]
    line = f"POST /v1/messages?key={PLAIN} HTTP/1.1 extra\r\nhost: x\r\n\r\n".encode()  # quoted in the error
    out.append(raw_request(port, line, timeout=10).status)
    out.append(
        raw_request(port, b"POST /v1/messages HTTP/1.1\r\nx-bad " + PLAIN.encode() + b"\r\n\r\n").status
    )
    return out


def _no_secret_in(folder: Path) -> None:
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files
    for p in files:
        text = p.read_text(encoding="utf-8", errors="replace")
        for secret in (PLAIN, COOKIE, *SHAPED.values()):
            assert secret not in text, f"{secret} in {p}: {text[max(0, text.find(secret) - 200) :][:300]}"


def test_serve_records_no_credential(tmp_path: Path) -> None:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "requests.jsonl")))
    try:
        statuses = _requests(srv.server_address[1])
    finally:
        stop(srv)
    assert statuses[0] == 200 and all(s >= 400 for s in statuses[1:]), statuses
    srv.state.recorder.write(tmp_path / "traces")
    assert list((tmp_path / "traces").glob("*.jsonl"))
    _no_secret_in(tmp_path)


def test_proxy_records_no_credential(tmp_path: Path) -> None:
    upstream, _ = start_background(ServeConfig(ledger=str(tmp_path / "up" / "requests.jsonl")))
    proxy, _ = start_proxy(upstream.url, str(tmp_path / "proxy" / "requests.jsonl"))
    try:
        _requests(proxy.server_address[1])
    finally:
        stop_proxy(proxy)
        stop(upstream)
    proxy.state.recorder.write(tmp_path / "proxy" / "traces")
    _no_secret_in(tmp_path)


def test_redaction() -> None:
    h = redact_headers(
        {
            "Authorization": "Bearer sk-1",
            "x-api-key": "sk-2",
            "Cookie": "a=b",
            "X-Goog-Api-Key": "g",
            "anthropic-version": "2023-06-01",
            "X-Custom-Token": "t",
        }
    )
    assert (
        h["authorization"]
        == h["x-api-key"]
        == h["cookie"]
        == h["x-goog-api-key"]
        == h["x-custom-token"]
        == REDACTED
    )
    assert h["anthropic-version"] == "2023-06-01"
