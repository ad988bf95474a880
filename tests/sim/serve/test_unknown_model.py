"""`ctxbench serve` answers a model it does not know the way the real APIs do (404 in the API's own
shape, seen through the official SDKs), records it with that status, and resolves known aliases and
dated ids through sim/core/catalog.py: no request is ever billed as another model."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.serve.proxy import ProxyServer, start_proxy, stop_proxy
from ctxbench.sim.serve.server import CtxServer, ServeConfig, start_background, stop

anthropic = pytest.importorskip("anthropic", reason="the `live` extra (anthropic SDK) is not installed")
openai = pytest.importorskip("openai", reason="the `live` extra (openai SDK) is not installed")

MSGS = [{"role": "user", "content": "hello"}]


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[CtxServer]:
    srv, _ = start_background(ServeConfig(ledger=str(tmp_path / "requests.jsonl")))
    yield srv
    stop(srv)


def _ledger(srv: CtxServer) -> list[dict]:
    path = srv.state.cfg.ledger
    assert path is not None
    srv.state.ledger.close()
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines()]


def _a(srv: CtxServer | ProxyServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-x", base_url=srv.url, max_retries=0, timeout=20)


def _o(srv: CtxServer) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-x", base_url=srv.url + "/v1", max_retries=0, timeout=20)


def test_anthropic_sdk_gets_not_found_for_an_unknown_model(server: CtxServer) -> None:
    with pytest.raises(anthropic.NotFoundError) as e:
        _a(server).messages.create(model="claude-nope-9", max_tokens=5, messages=MSGS)
    assert e.value.status_code == 404
    body = e.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"] == {"type": "not_found_error", "message": "model: claude-nope-9"}
    stream = _a(server).messages.stream(model="claude-nope-9", max_tokens=5, messages=MSGS)
    with pytest.raises(anthropic.NotFoundError), stream as s:  # refused before any event
        s.get_final_message()
    with pytest.raises(anthropic.NotFoundError):
        _a(server).messages.count_tokens(model="claude-nope-9", messages=MSGS)
    lines = _ledger(server)
    assert [x["status"] for x in lines] == [404, 404, 404]
    assert all(x["error"] == "model: claude-nope-9" and "usage" not in x for x in lines)


def test_openai_sdk_gets_model_not_found(server: CtxServer) -> None:
    expected = {
        "message": "The model `gpt-nope` does not exist or you do not have access to it.",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }
    with pytest.raises(openai.NotFoundError) as e:
        _o(server).chat.completions.create(model="gpt-nope", messages=MSGS)
    assert e.value.status_code == 404 and e.value.code == "model_not_found" and e.value.param is None
    assert e.value.body == expected  # the SDK keeps the `error` object as the body
    with pytest.raises(openai.NotFoundError) as r:
        _o(server).responses.create(model="gpt-nope", input="hi")
    assert r.value.body == expected
    with pytest.raises(openai.NotFoundError):
        list(_o(server).chat.completions.create(model="gpt-nope", messages=MSGS, stream=True))
    assert [x["status"] for x in _ledger(server)] == [404, 404, 404]


def test_aliases_and_dated_ids_resolve_to_the_catalog_model(server: CtxServer) -> None:
    m = _a(server).messages.create(model="claude-sonnet-4-5-20250929", max_tokens=5, messages=MSGS)
    assert m.model == "claude-sonnet-4-5-20250929"  # echoed as asked
    fast = _a(server).messages.create(model="anthropic/claude-opus-4.8-fast", max_tokens=5, messages=MSGS)
    assert fast.usage.input_tokens > 0
    c = _o(server).chat.completions.create(model="gpt-5.1-codex", messages=MSGS)
    assert c.usage.prompt_tokens > 0
    lines = _ledger(server)
    assert [x["status"] for x in lines] == [200, 200, 200]
    assert [x["model"] for x in lines] == ["claude-sonnet-4-5", "claude-opus-4-8-fast", "gpt-5.1-codex"]


def test_a_missing_model_is_the_apis_400(server: CtxServer) -> None:
    """The SDKs refuse to send it; a raw client gets the API's 400, not a default model."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(str(host), int(port), timeout=20)
    conn.request("POST", "/v1/messages", json.dumps({"max_tokens": 5, "messages": MSGS}))
    resp = conn.getresponse()
    body = json.loads(resp.read())
    assert resp.status == 400 and body["error"]["message"] == "model: Field required"


class _Upstream(BaseHTTPRequestHandler):
    """A provider that serves a model the catalog does not know (a newer real API)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        usage = {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 0}
        body = json.dumps(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-next-9",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "usage": {**usage, "cache_creation_input_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_proxy_relays_an_unknown_model_and_says_how_it_traced_it(tmp_path: Path) -> None:
    up = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=up.serve_forever, daemon=True).start()
    proxy, _ = start_proxy(f"http://127.0.0.1:{up.server_port}", str(tmp_path / "p.jsonl"))
    try:
        m = _a(proxy).messages.create(model="claude-next-9", max_tokens=5, messages=MSGS)  # type: ignore[arg-type]
        assert m.content[0].text == "ok"
    finally:
        stop_proxy(proxy)
        up.shutdown()
    (line,) = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert line["status"] == 200 and "'claude-next-9' is not in sim/data/models.yaml" in line["note"]


def test_drive_with_an_unknown_model_stops_before_any_request(capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).resolve().parents[3] / "traces" / "samples" / "game-60.jsonl"
    args = [
        "drive",
        str(sample),
        "--policy",
        "h-direct",
        "--server",
        "http://127.0.0.1:9",
        "--model",
        "gpt-7",
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "unknown model 'gpt-7'" in err and "closest known" in err
