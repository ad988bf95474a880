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
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ctxbench.sim.core.catalog import CatalogError, canonical
from ctxbench.sim.core.provider import Usage
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.runner import factory_for
from ctxbench.sim.serve.front import FrontHandler, FrontServer, Refusal, Reply, api_of_path, stop_front
from ctxbench.sim.serve.linearize import TraceRecorder
from ctxbench.sim.serve.record import Ledger, Redactor, usage_dict
from ctxbench.sim.serve.server import ROUTES
from ctxbench.sim.serve.wire import ANTHROPIC, GEMINI, WireError, parse, parse_json_body
from ctxbench.sim.serve.wire.gemini import route as gemini_route

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
            doc = json.loads(data)
        except ValueError:
            return None
        objs += doc if isinstance(doc, list) else [doc]  # Gemini streams without alt=sse: an array
    if api == GEMINI:  # usageMetadata, the prompt count including the cached part (providers.md §3)
        meta: dict[str, Any] = {}
        for o in objs:
            if isinstance(o, dict) and isinstance(o.get("usageMetadata"), dict):
                meta.update(o["usageMetadata"])
        if not meta:
            return None
        prompt = int(meta.get("promptTokenCount", 0) or 0)
        read = int(meta.get("cachedContentTokenCount", 0) or 0)
        out = int(meta.get("candidatesTokenCount", 0) or 0) + int(meta.get("thoughtsTokenCount", 0) or 0)
        return Usage(prompt - read, read, 0, 0, out)
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


class ProxyHandler(FrontHandler):
    server: ProxyServer

    def ledger(self) -> Ledger:
        return self.server.state.ledger

    def do_GET(self) -> None:
        self._relay(b"")

    def do_POST(self) -> None:
        try:
            body = self.read_body()
        except Refusal as r:
            self.refuse(r)
            return
        self._relay(body)

    def _relay(self, body: bytes) -> None:
        """Forward the request; a JSON answer is read whole, recorded, then sent; a stream is
        relayed chunk by chunk as it arrives and recorded when it ends (its usage is in its last
        events). Either way the request has exactly one ledger line."""
        st = self.server.state
        up = urlsplit(st.upstream)
        t = self.now()
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        conn_cls = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(up.hostname or "127.0.0.1", up.port, timeout=st.timeout)
        path = (up.path.rstrip("/") + self.path) if up.path not in ("", "/") else self.path
        named = gemini_route(self.path.split("?", 1)[0])
        api = GEMINI if named else ROUTES.get(self.path.split("?", 1)[0], "")
        entry, red = self.entry(api)
        entry["t"] = round(t, 6)
        if named:
            entry["model"] = named[0]  # the Gemini API names it in the path
        try:
            conn.request(self.command, path, body=body or None, headers=headers)
            resp = conn.getresponse()
            sse = "text/event-stream" in (resp.getheader("content-type") or "")
            relayed = {k: v for k, v in resp.getheaders() if k.lower() not in HOP}
            if not sse:
                data = resp.read()
                self._record(entry, red, body, data, False, t, resp.status)
                self.answer(entry, Reply(resp.status, relayed, data), record=False)
                return
            captured = bytearray()

            def chunks() -> Iterator[bytes]:
                while chunk := resp.read1(65536):
                    captured.extend(chunk)
                    yield chunk

            try:
                self.answer(entry, Reply(resp.status, relayed, chunks=chunks()), record=False)
            finally:
                self._record(entry, red, body, bytes(captured), True, t, resp.status)
        except (OSError, http.client.HTTPException) as e:
            if self.answered:
                return
            entry["error"] = red.text(f"upstream: {e}")
            self._record(entry, red, body, b"", False, t, 502)
            err = WireError(502, "api_error", f"upstream unreachable: {e}")
            rid = self.server.next_id("req_")
            self.answer(entry, self.error_reply(api or api_of_path(self.path), err, rid), record=False)
        finally:
            conn.close()

    def _record(
        self,
        entry: dict[str, Any],
        red: Redactor,
        body: bytes,
        captured: bytes,
        sse: bool,
        t: float,
        status: int,
    ) -> None:
        """Fill in the ledger line (redacted body, status, usage) and write it; add the request to
        its conversation's trace when it parses."""
        st = self.server.state
        api = entry["api"]
        entry["status"] = status
        try:
            parsed_body = json.loads(body) if body else None
        except (ValueError, RecursionError):
            parsed_body = None
            entry["body_text"] = red.text(body[:65536].decode("utf-8", "replace"))
        entry["body"] = red.body(parsed_body)
        try:
            u = usage_from(api, captured, sse) if api else None
        except (TypeError, ValueError, OverflowError, AttributeError):  # usage fields of an odd shape
            u = None
        if u is not None:
            entry["usage"] = usage_dict(u)
        if api and parsed_body is not None and status == 200 and u is not None:
            try:
                strict = parse_json_body(body)  # a body the trace format cannot hold is not traced
                model = str(entry.get("model", "")) if api == GEMINI else ""
                factory = self._factory({"model": model} if model else strict, entry)
                p = parse(api, strict, {k.lower(): v for k, v in self.headers.items()}, factory, model)
                entry["conversation"] = p.session
                st.recorder.add(p, (), u, u.output, t, red.secrets)
            except (WireError, ValueError, RecursionError):
                pass
        st.ledger.write(entry)

    def _factory(self, body: Any, entry: dict[str, Any]) -> BlockFactory:
        """Token counts of the traced request: the request's own model's (the upstream billed that
        model); one the catalog does not know is sized as the proxy's `--model`, said in the ledger line."""
        st = self.server.state
        asked = body.get("model") if isinstance(body, dict) else None
        try:
            return factory_for(canonical(asked)) if isinstance(asked, str) else factory_for(st.model)
        except CatalogError:
            entry["note"] = (
                f"model {asked!r} is not in sim/data/models.yaml: trace blocks sized as {st.model}"
            )
            return factory_for(st.model)


class ProxyServer(FrontServer):
    def __init__(
        self,
        state: ProxyState,
        host: str = "127.0.0.1",
        port: int = 0,
        read_timeout: float = 60.0,
        max_connections: int = 256,
        max_per_client: int = 0,
    ) -> None:
        self.state = state
        super().__init__((host, port), ProxyHandler, read_timeout, max_connections, max_per_client)


def start_proxy(
    upstream: str, ledger: str | None, host: str = "127.0.0.1", port: int = 0
) -> tuple[ProxyServer, threading.Thread]:
    srv = ProxyServer(ProxyState(upstream.rstrip("/"), Ledger(ledger)), host, port)
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    return srv, th


def stop_proxy(srv: ProxyServer) -> None:
    stop_front(srv)
    srv.state.ledger.close()
