"""`ctxbench serve`: the provider models behind the real wire APIs, on a stdlib HTTP server.

Endpoints: `POST /v1/messages` (+ SSE, `?beta=true` accepted), `/v1/messages/count_tokens`,
`/v1/chat/completions` (+ SSE with `stream_options.include_usage`), `/v1/responses` (+ SSE),
`/v1/responses/input_tokens`, `GET /v1/models`. Each request is parsed into a Transcript
(`ctxbench.sim.serve.wire`), billed by `provider.call(Request, now)` of the same provider model the simulator
uses (`make_provider(profile, model, seed)`), answered with a scripted reply (`ctxbench.sim.serve.script`),
and recorded with credentials redacted (`ctxbench.sim.serve.record`).

Sockets get TCP_NODELAY: without it every request costs 44 ms (Nagle + delayed ACK, measured in
ecosystem.md §2.2). Bound to 127.0.0.1 by default.

Time: `clock="wall"` uses seconds since the server started; `clock="header"` takes the time from
the `x-ctxbench-now` header (the reference driver sends its simulated time, so TTLs and idle gaps
match the simulation exactly). With `latency="none"` (the default in wall mode) the provider's
latency model is zeroed, because this server answers at once: a cache entry is then readable by
the next request, as it would be on the real API where the next request cannot start before the
previous one's first token arrived (providers.md §1.5).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxbench.sim.providers.base import ProviderError, Request
from ctxbench.sim.providers.registry import make_provider
from ctxbench.sim.serve import render
from ctxbench.sim.serve.record import Ledger, redact_headers, redact_path, usage_dict
from ctxbench.sim.serve.script import Scripter
from ctxbench.sim.serve.state import ZERO_LATENCY, Observation, ServeConfig, ServeState
from ctxbench.sim.serve.wire import ANTHROPIC, CHAT, RESPONSES, Parsed, WireError, parse

MAX_BODY = 32 * 1024 * 1024  # 413 request_too_large above 32 MB (providers.md §1.12)
ROUTES = {
    "/v1/messages": ANTHROPIC,
    "/v1/chat/completions": CHAT,
    "/chat/completions": CHAT,
    "/v1/responses": RESPONSES,
    "/responses": RESPONSES,
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CtxServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # ecosystem.md §2.2

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the ledger is the log
        return None

    # ------------------------------------------------------------ plumbing
    def _headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _read_body(self) -> bytes | None:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts, total = [], 0
            while True:
                line = self.rfile.readline(65537).split(b";")[0].strip()
                size = int(line or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > MAX_BODY:
                    return None
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        n = int(self.headers.get("content-length") or 0)
        if n > MAX_BODY:
            self.close_connection = True
            return None
        return self.rfile.read(n) if n > 0 else b""

    def _send_json(self, status: int, body: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, chunks: Any, extra: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        for c in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _error(
        self, api: str, err: WireError | ProviderError, rid: str, window: int = 0, total: int = 0
    ) -> int:
        status, body = render.error_body(api, err, rid, window, total)
        extra = {"request-id": rid, "x-request-id": rid}
        if isinstance(err, ProviderError) and err.retry_after is not None:
            extra["retry-after"] = str(max(1, round(err.retry_after)))
        self._send_json(status, body, extra)
        return status

    # ------------------------------------------------------------ routes
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/v1/models", "/models"):
            st = self.server.state
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": st.cfg.model,
                            "type": "model",
                            "object": "model",
                            "display_name": st.cfg.model,
                            "created_at": "2026-01-01T00:00:00Z",
                        }
                    ],
                },
            )
        else:
            self._error(ANTHROPIC, WireError(404, "not_found_error", f"Not found: {path}"), "req_none")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        st = self.server.state
        api = ROUTES.get(path.removesuffix("/count_tokens").removesuffix("/input_tokens"), ANTHROPIC)
        rid = st.next_id("req_" if api == ANTHROPIC else "chatcmpl-" if api == CHAT else "resp_")
        headers = self._headers()
        t = self._now(headers)
        raw = self._read_body()
        entry: dict[str, Any] = {
            "t": round(t, 6),
            "api": api,
            "path": redact_path(self.path),
            "headers": redact_headers(headers),
        }
        status = 400
        try:
            if raw is None:
                status = self._error(
                    api,
                    WireError(
                        413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
                    ),
                    rid,
                )
                return
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                entry["body_text"] = raw[:65536].decode("utf-8", "replace")
                status = self._error(
                    api,
                    WireError(
                        400,
                        "invalid_request_error",
                        "There was an error parsing the body of the request: invalid JSON",
                    ),
                    rid,
                )
                return
            entry["body"] = body
            if path not in ROUTES and not path.endswith(("/count_tokens", "/input_tokens")):
                status = self._error(api, WireError(404, "not_found_error", f"Not found: {path}"), rid)
                return
            status = self._handle(api, path, body, headers, t, rid, entry)
        except WireError as e:
            status = self._error(api, e, rid)
        except (BrokenPipeError, ConnectionResetError):
            status = 499
        finally:
            entry["status"] = status
            st.ledger.write(entry)

    def _now(self, headers: dict[str, str]) -> float:
        st = self.server.state
        if st.cfg.clock == "header" and "x-ctxbench-now" in headers:
            try:
                return float(headers["x-ctxbench-now"])
            except ValueError:
                pass
        return time.monotonic() - st.start

    def _handle(
        self,
        api: str,
        path: str,
        body: Any,
        headers: dict[str, str],
        t: float,
        rid: str,
        entry: dict[str, Any],
    ) -> int:
        st = self.server.state
        counting = path.endswith(("/count_tokens", "/input_tokens"))
        if counting and isinstance(body, dict) and api == ANTHROPIC:
            body = {"max_tokens": 1, **body}
        requested = body.get("model") if isinstance(body, dict) else None
        model = st.model_for(requested) if isinstance(requested, str) else st.cfg.model
        p = parse(api, body, headers, st.factory(model))
        entry["conversation"] = p.session
        if counting:  # no caching logic (providers.md §1.14, §2.7)
            n = p.tr.total_tokens
            self._send_json(
                200,
                {"input_tokens": n}
                if api == ANTHROPIC
                else {"object": "response.input_tokens", "input_tokens": n},
            )
            return 200
        provider = st.provider(model)
        hint = headers.get("x-ctxbench-output-tokens")
        reply = st.scripter.reply(p, int(hint) if hint and hint.isdigit() else None)
        with st.lock:
            if "x-ctxbench-index" in headers and headers["x-ctxbench-index"].isdigit():
                index = int(headers["x-ctxbench-index"])
            else:
                index = st.counters.get(p.session, 0)
            st.counters[p.session] = index + 1
            req = Request(
                p.tr,
                len(p.tr),
                model,
                reply.output_tokens,
                p.breakpoints,
                headers.get("x-ctxbench-kind", "live"),
                p.session,
                index,
                p.cache_key,
                p.session,
            )
            out = provider.call(req, t)
            if st.cfg.keep_observations:
                st.observations.append(
                    Observation(
                        p.session,
                        index,
                        api,
                        len(p.tr),
                        [b.tokens for b in p.tr.blocks],
                        list(p.tr.hashes),
                        p.breakpoints,
                        out.usage if out.error is None or out.error.billed else None,
                        out.error.kind if out.error else "",
                    )
                )
        entry.update(
            model=model,
            index=index,
            blocks=len(p.tr),
            breakpoints=[list(b) for b in p.breakpoints],
            usage=usage_dict(out.usage),
            reply=list(reply.blocks),
            cost=round(out.cost, 9),
        )
        extra = {
            "request-id": rid,
            "x-request-id": rid,
            "x-ctxbench-ttft": repr(out.ttft),
            "x-ctxbench-duration": repr(out.duration),
            "x-ctxbench-cached-pos": str(out.cached_pos),
            "x-ctxbench-cost": repr(out.cost),
        }
        err = out.error
        if err is not None and not (err.kind == "stream_error" and p.stream):
            entry["error"] = err.kind
            return self._error(api, err, rid, provider.model.window, req.input_tokens)
        u = out.usage
        if err is None:
            st.recorder.add(p, reply.blocks, u, reply.output_tokens, t)
        else:
            entry["error"] = err.kind
        if api == ANTHROPIC:
            if p.stream:
                self._send_stream(render.anthropic_stream(rid, requested or model, reply, u, err), extra)
            else:
                self._send_json(200, render.anthropic_message(rid, requested or model, reply, u), extra)
        elif api == CHAT:
            if p.stream:
                self._send_stream(
                    render.chat_stream(rid, requested or model, reply, u, p.include_usage), extra
                )
            else:
                self._send_json(200, render.chat_completion(rid, requested or model, reply, u), extra)
        elif p.stream:
            self._send_stream(render.responses_stream(rid, requested or model, reply, u, err), extra)
        else:
            self._send_json(200, render.response_object(rid, requested or model, reply, u), extra)
        return 200


class CtxServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)

    def __init__(self, state: ServeState) -> None:
        self.state = state
        super().__init__((state.cfg.host, state.cfg.port), Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


def make_server(cfg: ServeConfig, scripter: Scripter | None = None) -> CtxServer:
    make_provider(cfg.profile, cfg.model, cfg.seed)  # fail early on a bad profile or model
    state = ServeState(cfg, scripter or Scripter(), Ledger(cfg.ledger))
    return CtxServer(state)


def start_background(
    cfg: ServeConfig, scripter: Scripter | None = None
) -> tuple[CtxServer, threading.Thread]:
    """Start a server on a thread (tests, validate, proxy upstreams); stop with `stop(server)`."""
    srv = make_server(cfg, scripter)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    return srv, th


def stop(srv: CtxServer) -> None:
    srv.shutdown()
    srv.server_close()
    srv.state.ledger.close()


__all__ = [
    "ZERO_LATENCY",
    "CtxServer",
    "Observation",
    "Parsed",
    "ServeConfig",
    "ServeState",
    "make_server",
    "start_background",
    "stop",
]
