"""`ctxbench proxy --upstream URL`: record a harness's traffic to a real provider, unchanged.

Every request is forwarded as received (hop-by-hop headers aside) and the upstream's answer is
passed back byte for byte — streams are relayed chunk by chunk as they arrive, never buffered or
re-encoded. Recording happens beside the relay: credentials are redacted (`record.redact_headers`)
before anything is written; the ledger line holds the request body, the status and the usage read
from the response (the JSON body, or the SSE events of a stream), and each request is also added
to the per-conversation traces when its body parses.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ctxbench.sim.providers.base import Usage
from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.record import Ledger, TraceRecorder, redact_headers, redact_path
from ctxbench.sim.serve.server import ROUTES
from ctxbench.sim.serve.wire import ANTHROPIC, WireError, parse

HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)


def usage_from(api: str, data: bytes, sse: bool) -> Usage | None:
    """Billed usage in the neutral fields, from a JSON body or an SSE stream's events."""
    objs: list[Any] = []
    if sse:
        for line in data.split(b"\n"):
            if line.startswith(b"data:"):
                try:
                    objs.append(json.loads(line[5:].strip()))
                except ValueError:
                    continue
    else:
        try:
            objs.append(json.loads(data))
        except ValueError:
            return None
    u: dict[str, Any] = {}
    for o in objs:
        if not isinstance(o, dict):
            continue
        cand = (
            o.get("usage") or (o.get("message") or {}).get("usage") or (o.get("response") or {}).get("usage")
        )
        if isinstance(cand, dict):
            u.update({k: v for k, v in cand.items() if v is not None})
    if not u:
        return None
    if api == ANTHROPIC:
        cc = u.get("cache_creation") or {}
        w1 = int(cc.get("ephemeral_1h_input_tokens", 0) or 0)
        w = int(u.get("cache_creation_input_tokens", 0) or 0)
        return Usage(
            int(u.get("input_tokens", 0) or 0),
            int(u.get("cache_read_input_tokens", 0) or 0),
            w - w1,
            w1,
            int(u.get("output_tokens", 0) or 0),
        )
    total = int(u.get("prompt_tokens", u.get("input_tokens", 0)) or 0)
    det = u.get("prompt_tokens_details") or u.get("input_tokens_details") or {}
    read, write = int(det.get("cached_tokens", 0) or 0), int(det.get("cache_write_tokens", 0) or 0)
    out = int(u.get("completion_tokens", u.get("output_tokens", 0)) or 0)
    return Usage(total - read - write, read, write, 0, out)


@dataclass
class ProxyState:
    upstream: str
    ledger: Ledger
    model: str = "claude-sonnet-4-6"
    timeout: float = 600.0
    recorder: TraceRecorder = field(default_factory=TraceRecorder)
    start: float = field(default_factory=time.monotonic)


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._relay(b"")

    def do_POST(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        self._relay(self.rfile.read(n) if n > 0 else b"")

    def _relay(self, body: bytes) -> None:
        st = self.server.state
        up = urlsplit(st.upstream)
        t = time.monotonic() - st.start
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn_cls = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(up.hostname or "127.0.0.1", up.port, timeout=st.timeout)
        path = (up.path.rstrip("/") + self.path) if up.path not in ("", "/") else self.path
        entry: dict[str, Any] = {
            "t": round(t, 6),
            "path": redact_path(self.path),
            "headers": redact_headers({k.lower(): v for k, v in self.headers.items()}),
        }
        captured = bytearray()
        try:
            conn.request(self.command, path, body=body or None, headers=headers)
            resp = conn.getresponse()
            sse = "text/event-stream" in (resp.getheader("content-type") or "")
            self.send_response_only(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            while True:
                chunk = resp.read1(65536) if sse else resp.read(65536)
                if not chunk:
                    break
                captured += chunk
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            entry["status"] = resp.status
        except (OSError, http.client.HTTPException) as e:
            entry["status"] = 502
            entry["error"] = f"upstream: {e}"
            err = json.dumps(
                {"type": "error", "error": {"type": "api_error", "message": f"upstream unreachable: {e}"}}
            ).encode()
            try:
                self.send_response(502)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(err)))
                self.end_headers()
                self.wfile.write(err)
            except OSError:
                pass
            sse = False
        finally:
            conn.close()
        self._record(entry, body, bytes(captured), sse, t)

    def _record(self, entry: dict[str, Any], body: bytes, captured: bytes, sse: bool, t: float) -> None:
        st = self.server.state
        api = ROUTES.get(self.path.split("?", 1)[0], "")
        entry["api"] = api
        try:
            parsed_body = json.loads(body) if body else None
        except ValueError:
            parsed_body = None
            entry["body_text"] = body[:65536].decode("utf-8", "replace")
        entry["body"] = parsed_body
        u = usage_from(api, captured, sse) if api else None
        if u is not None:
            entry["usage"] = {
                "uncached": u.uncached,
                "cache_read": u.cache_read,
                "cache_write_5m": u.cache_write_5m,
                "cache_write_1h": u.cache_write_1h,
                "output": u.output,
            }
        if api and parsed_body is not None and entry.get("status") == 200 and u is not None:
            try:
                p = parse(
                    api, parsed_body, {k.lower(): v for k, v in self.headers.items()}, factory_for(st.model)
                )
                entry["conversation"] = p.session
                st.recorder.add(p, (), u, u.output, t)
            except WireError:
                pass
        st.ledger.write(entry)


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, state: ProxyState, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = state
        super().__init__((host, port), ProxyHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


def start_proxy(
    upstream: str, ledger: str | None, host: str = "127.0.0.1", port: int = 0
) -> tuple[ProxyServer, threading.Thread]:
    srv = ProxyServer(ProxyState(upstream.rstrip("/"), Ledger(ledger)), host, port)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    return srv, th


def stop_proxy(srv: ProxyServer) -> None:
    srv.shutdown()
    srv.server_close()
    srv.state.ledger.close()
