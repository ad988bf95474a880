"""The HTTP front shared by `ctxbench serve` and `ctxbench proxy`: every request gets an answer in
the shape of the API its path belongs to, and one ledger line, whatever arrives on the socket.

The standard library's handler answers bad framing with HTML pages (501 for an unknown method,
431 for long headers), lets an exception close the connection with no reply, and waits forever on
a half-sent body. Here (ctxbench issue 12):
- methods other than GET and POST (PUT, DELETE, PATCH, OPTIONS, HEAD, lowercase `post`) get 405;
- unparseable framing gets 400: a `content-length` that is not a plain decimal (`abc`, `1e3`) or
  repeated with different values, a bad chunk size, both `transfer-encoding` and `content-length`,
  a transfer coding other than `chunked`, a body shorter than announced; a body past the limit gets
  413, long or many header lines 431, a long request line 414, a request (head and body) not
  received in full by its deadline (`read_timeout` after its first byte, however slowly its bytes
  come) 408, a stalled request line included (then the connection is closed);
- the request head is read as RFC 9112 frames it (sim/serve/head.py): empty lines before the
  request line skipped; a malformed header line, a bad version or a non-ASCII target a 400 in the
  path's API shape, never taken for the end of the head (issue 32);
- the error body is Anthropic's `{"type":"error","error":{"type","message"},"request_id"}` on
  Anthropic paths and OpenAI's `{"error":{"message","type","param","code"}}` on OpenAI paths
  (`/v1/chat/…`, `/v1/responses…`, providers.md §1.12, §2.5), rendered by `render.error_body`;
- an unexpected exception is answered 500 `api_error` (and recorded as `internal: …`) instead of
  a dropped connection: it is a bug, and the soak counts it as one;
- at most `max_connections` connections are served at once, at most `max_per_client` of one
  address (sim/serve/front_server.py); more wait;
- stopping (`stop_front`) ends reads on idle connections, waits for requests in flight, then the
  caller closes the ledger, so every request received is on it.
The 405/408/414/431 texts are this project's (providers.md records no verbatim text for them).
"""

from __future__ import annotations

import abc
import contextlib
import re
import socket
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from ctxbench.sim.core.provider import ProviderError
from ctxbench.sim.serve import render
from ctxbench.sim.serve.front_server import FrontServer, add_front_args, stop_front
from ctxbench.sim.serve.head import DeadlineReader, HeadError, header_block, keeps_alive, request_line
from ctxbench.sim.serve.record import Ledger, Redactor, scrub_shapes
from ctxbench.sim.serve.wire import ANTHROPIC, CHAT, GEMINI, RESPONSES, WireError

MAX_BODY = 32 * 1024 * 1024  # 413 request_too_large above 32 MB (providers.md §1.12)
_DIGITS = re.compile(r"[0-9]{1,15}")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
METHODS = ("GET", "POST")
RID_PREFIX = {ANTHROPIC: "req_", CHAT: "chatcmpl-", GEMINI: "gen-"}  # request ids as each API spells them


def api_of_path(path: str) -> str:
    """Which API's error shape a path gets: OpenAI's under `/v1/chat/`, `/v1/responses`, … ."""
    p = path.split("?", 1)[0]
    for prefix in ("/v1/chat", "/chat", "/openai"):
        if p == prefix or p.startswith(prefix + "/"):
            return CHAT
    for prefix in ("/v1/responses", "/responses"):
        if p == prefix or p.startswith(prefix + "/"):
            return RESPONSES
    if p.startswith(("/v1beta/", "/v1alpha/")) or (p.startswith("/v1/models/") and ":" in p):
        return GEMINI
    return ANTHROPIC


class Refusal(Exception):
    """A request refused before its body could be used: status, error type, message."""

    def __init__(self, status: int, message: str, type_: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message


@dataclass
class Reply:
    """An answer ready to send: status, headers, and a body (bytes) or SSE chunks (an iterator)."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    chunks: Any = None


class FrontHandler(BaseHTTPRequestHandler, abc.ABC):
    """One connection; subclasses implement `do_GET` / `do_POST` and `ledger()`."""

    protocol_version = "HTTP/1.1"
    default_request_version = "HTTP/1.0"  # a garbled request line still gets a status line back
    server: FrontServer

    rfile: DeadlineReader  # type: ignore[assignment]

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.rfile = DeadlineReader(self.connection, self.server.read_timeout)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # ecosystem.md §2.2
        self.server.track(self.connection, True)
        self.t0 = 0.0
        self.answered = False
        self.refused = False  # a refusal closed the connection: linger before closing

    def finish(self) -> None:
        self.server.track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()
        if self.refused:
            self._linger()

    def _linger(self) -> None:
        """After a refusal the client may still be sending (a body never read): read and drop
        that for a moment before closing, or the kernel's reset could destroy the answer."""
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            for _ in range(256):  # at most 16 MB, half a second per read
                if not self.connection.recv(65536):
                    break

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the ledger is the log
        return None

    @abc.abstractmethod
    def ledger(self) -> Ledger:
        """The ledger this front writes (serve's or proxy's handler says which)."""

    @abc.abstractmethod
    def do_GET(self) -> None:
        """Answer a GET (model listings, health) in the path's API shape."""

    @abc.abstractmethod
    def do_POST(self) -> None:
        """Answer a POST: the API call itself."""

    def now(self) -> float:
        return time.monotonic() - self.server.started

    # ------------------------------------------------------------ one request
    def handle_one_request(self) -> None:
        self.command, self.path, self.request_version = "", "", self.default_request_version
        self.requestline = ""
        self.headers = None  # type: ignore[assignment]  # _read_head sets them
        self.answered, self.t0 = False, 0.0
        try:
            self.rfile.idle()
            if not self.rfile.wait():  # the client closed an idle connection
                self.close_connection = True
                return
            self.t0 = self.now()  # its first byte: the whole request must arrive by the deadline
            self.rfile.start(self.server.read_timeout)
            try:
                self._read_head()
            except HeadError as e:
                self.path = e.path
                self.refuse(Refusal(e.status, e.message), close=True)
                return
            if self.command not in METHODS:
                where = self.path.split("?")[0]
                self.refuse(Refusal(405, f"Method {self.command!r} not allowed for {where}"), close=True)
                return
            if self.command == "GET":
                try:  # a GET's body (if any) is framed like any other: read past it, or refuse
                    self.read_body()
                except Refusal as r:
                    self.refuse(r)
                    return
            (self.do_POST if self.command == "POST" else self.do_GET)()
            self.wfile.flush()
        except TimeoutError:
            if self.t0 and not self.answered:  # a request began and stalled: tell the client why
                self.path = self.path or self.rfile.pending_target()
                self.refuse(Refusal(408, "Request timed out before it was received in full"), close=True)
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # a bug: answered and recorded, never a silently dropped connection
            if not self.answered:
                self.refuse(Refusal(500, f"internal: {type(e).__name__}: {e}", "api_error"), close=True)
            self.close_connection = True

    def _read_head(self) -> None:
        """Request line and header fields (sim/serve/head.py), and what they say of the connection."""
        self.command, self.path, self.request_version = request_line(self.rfile)
        self.requestline = f"{self.command} {self.path} {self.request_version}"
        self.headers = header_block(self.rfile, self.path)
        self.close_connection = not keeps_alive(self.request_version, self.headers)
        expect = (self.headers.get("expect") or "").strip().lower()
        if expect == "100-continue" and self.request_version == "HTTP/1.1":
            self.send_response_only(100)
            self.end_headers()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's framing errors (400, 414, 431, 505), as JSON in the API's shape."""
        text = message or self.responses.get(code, ("Error",))[0]
        if code == 431:
            text = "Request header fields too large"
        if code == 505:  # not a server fault: a client speaking an HTTP version that does not exist
            code = 400
        self.refuse(Refusal(code, text), close=True)

    def entry(self, api: str) -> tuple[dict[str, Any], Redactor]:
        """The start of this request's ledger line (redacted), and the redactor for its body."""
        headers = {k.lower(): v for k, v in (self.headers.items() if self.headers is not None else [])}
        red = Redactor(headers, self.path)
        entry: dict[str, Any] = {"t": round(self.t0, 6), "api": api, "path": red.path(self.path)}
        if self.command != "POST":
            entry["method"] = self.command or ""
        entry["headers"] = red.headers(headers)
        return entry, red

    def refuse(self, r: Refusal, close: bool = True, entry: dict[str, Any] | None = None) -> None:
        """Answer a refused request in its API's shape and record it (status, reason); the
        connection is closed (its body may be unread), unless `close` is False."""
        api = api_of_path(self.path or "/")
        rid = self.server.next_id(RID_PREFIX.get(api, "resp_"))
        fresh, red = self.entry(api)  # the redactor: an error may quote the request line or body
        entry = fresh if entry is None else entry
        entry["error"] = red.text(r.message if r.status in (405, 500) else f"refused: {r.message}")
        self.refused = self.refused or close
        self.answer(entry, self.error_reply(api, WireError(r.status, r.type, r.message), rid), close)

    def error_reply(
        self, api: str, err: WireError | ProviderError, rid: str, window: int = 0, total: int = 0
    ) -> Reply:
        status, body = render.error_body(api, err, rid, window, total)
        extra = {"request-id": rid, "x-request-id": rid}
        if status == 405:
            extra["allow"] = ", ".join(METHODS)
        if isinstance(err, ProviderError) and err.retry_after is not None:
            extra["retry-after"] = str(max(1, round(err.retry_after)))
        return json_reply(status, body, extra)

    def answer(self, entry: dict[str, Any], reply: Reply, close: bool = False, record: bool = True) -> None:
        """Record the request with its true status, then send the reply (the ledger line is
        written first, so a client that hangs up never costs a record). `record=False`: the
        caller writes the line itself (the proxy, once a relayed stream has ended)."""
        if record:
            if isinstance(entry.get("error"), str):  # an error quoting a key: by shape (record.py)
                entry["error"] = scrub_shapes(entry["error"])
            entry["status"] = reply.status
            self.ledger().write(entry)
        self.answered = True
        if close:
            self.close_connection = True
            reply.headers["connection"] = "close"
        try:
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            if reply.chunks is None:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)
            else:
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for c in reply.chunks:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client left: its record is already written
            self.close_connection = True

    # ------------------------------------------------------------ body framing
    def read_body(self) -> bytes:
        """The request body by its framing; `Refusal` for anything a real front end would reject."""
        te = self.headers.get_all("transfer-encoding") or []
        cl = self.headers.get_all("content-length") or []
        if te and cl:
            raise Refusal(400, "Both Transfer-Encoding and Content-Length were sent")
        if te:
            if [v.strip().lower() for v in ",".join(te).split(",")] != ["chunked"]:
                raise Refusal(400, f"Unsupported transfer coding: {','.join(te)[:60]!r}")
            return self._read_chunked()
        if not cl:
            return b""
        values = {v.strip() for v in cl}
        if len(values) != 1 or not _DIGITS.fullmatch(next(iter(values))):
            raise Refusal(400, f"Invalid Content-Length: {','.join(cl)[:40]!r}")
        n = int(next(iter(values)))
        if n > MAX_BODY:
            raise Refusal(413, "Request exceeds the maximum allowed number of bytes.", "request_too_large")
        data = self.rfile.read(n) if n else b""
        if len(data) < n:
            raise Refusal(400, f"Body shorter than its Content-Length ({len(data)} of {n} bytes)")
        return data

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1026)
            size_text = line.split(b";", 1)[0].strip()
            if not line.endswith(b"\n") or not _HEX.fullmatch(size_text):
                raise Refusal(400, f"Invalid chunk size line: {line[:40]!r}")
            size = int(size_text, 16)
            if size == 0:
                for _ in range(100):  # trailer fields, then the empty line
                    t = self.rfile.readline(8194)
                    if not t.endswith(b"\n"):
                        raise Refusal(400, "Chunked body ended without its final empty line")
                    if t in (b"\r\n", b"\n"):
                        return b"".join(parts)
                raise Refusal(431, "Too many trailer fields")
            total += size
            if total > MAX_BODY:
                raise Refusal(
                    413, "Request exceeds the maximum allowed number of bytes.", "request_too_large"
                )
            data = self.rfile.read(size)
            if len(data) < size or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise Refusal(400, "Chunk shorter than its size, or not followed by CRLF")
            parts.append(data)


def json_reply(status: int, body: Any, extra: dict[str, str] | None = None) -> Reply:
    import json

    data = json.dumps(body, separators=(",", ":")).encode()
    return Reply(status, {"content-type": "application/json", **(extra or {})}, data)


__all__ = ["FrontHandler", "FrontServer", "Refusal", "Reply", "add_front_args", "json_reply", "stop_front"]
