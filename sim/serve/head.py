"""The request head as RFC 9112 frames it, read against a whole-request deadline (issue 32).

The standard library's `BaseHTTPRequestHandler.parse_request` reads header lines with
`http.client.parse_headers`, which ends the header block at the first line that is not a header
(a line with no colon, a space before the colon, a NUL in a name): the `Content-Length` after it is
ignored and the body is read as a second request, a request-smuggling shape. Here:
- empty lines before the request line are skipped (RFC 9112 §2.2: a server SHOULD ignore at least
  one), at most `MAX_LEADING_EMPTY` of them;
- the request line is `method SP request-target SP HTTP-version` (§3); a target with bytes outside
  visible ASCII is refused 400 (§3.2: the request-target is ASCII), a version other than HTTP/1.0 or
  HTTP/1.1 400, a line longer than `MAX_LINE` 414;
- each header line is `field-name ":" OWS field-value OWS` (§5, RFC 9110 §5.1, §5.5): a name that
  is not a token (a space before the colon, a NUL), a line with no colon, an obsolete line folding
  (§5.2) or a CR/LF/NUL in a value is refused 400, never taken for the end of the head;
- every read of one request (head and body) shares one deadline, so a client sending a byte a
  second cannot hold a connection longer than the deadline (a per-read timeout never fires on it).
h11 (pure Python) frames requests the same way, but the front answers through
`BaseHTTPRequestHandler`'s writer; this module replaces only its reader, which is all that needed
replacing.
"""

from __future__ import annotations

import http.client
import re
import socket
import time

MAX_LINE = 65536  # request line and each header line (414 / 431 above: the front's limits)
MAX_HEADERS = 100  # header lines per request (431 above)
MAX_LEADING_EMPTY = 8  # empty lines skipped before the request line (RFC 9112 §2.2)
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 §5.6.2
_TARGET = re.compile(rb"[\x21-\x7e]+")  # visible ASCII (RFC 9112 §3.2, RFC 3986)
_BAD_VALUE = re.compile(rb"[\x00\r\n]")  # RFC 9110 §5.5
VERSIONS = (b"HTTP/1.0", b"HTTP/1.1")


class HeadError(Exception):
    """A request head refused: status, message, and the path read so far (for the API shape)."""

    def __init__(self, status: int, message: str, path: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.path = status, message, path


class DeadlineReader:
    """Buffered reads from a socket: an idle connection waits `idle` seconds for a request's first
    byte; from then on every read of the request shares the deadline set by `start`. Raises
    TimeoutError once it has passed."""

    def __init__(self, sock: socket.socket, idle: float) -> None:
        self._sock, self._idle = sock, idle
        self._buf = bytearray()
        self._deadline: float | None = None
        self.closed = False

    def start(self, seconds: float) -> None:
        self._deadline = time.monotonic() + seconds

    def idle(self) -> None:
        self._deadline = None

    def _fill(self) -> bool:
        if self._deadline is None:
            timeout = self._idle
        else:
            timeout = self._deadline - time.monotonic()
            if timeout <= 0:
                raise TimeoutError("request deadline passed")
        self._sock.settimeout(timeout)
        data = self._sock.recv(65536)
        if not data:
            return False
        self._buf += data
        return True

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def wait(self) -> bool:
        """Whether a byte arrived (False: the client closed), waiting as long as the idle timeout."""
        return bool(self._buf) or self._fill()

    def readline(self, limit: int = -1) -> bytes:
        """A line with its LF, or `limit` bytes, or what came before the client closed."""
        start = 0
        while True:
            end = len(self._buf) if limit < 0 else min(len(self._buf), limit)
            i = self._buf.find(b"\n", start, end)
            if i >= 0:
                return self._take(i + 1)
            if limit >= 0 and len(self._buf) >= limit:
                return self._take(limit)
            start = len(self._buf)
            if not self._fill():
                return self._take(len(self._buf))

    def read(self, n: int) -> bytes:
        """`n` bytes, or fewer when the client closed."""
        while len(self._buf) < n and self._fill():
            pass
        return self._take(min(n, len(self._buf)))

    def pending_target(self) -> str:
        """The request-target of a request line cut off before its end (for a 408 in its API's
        shape), from the bytes received and not yet read; "" when none is there."""
        words = bytes(self._buf).lstrip(b"\r\n").split(b"\n", 1)[0].split(b" ")
        return words[1].decode("latin-1") if len(words) > 1 else ""

    def close(self) -> None:
        self.closed = True


def request_line(reader: DeadlineReader) -> tuple[str, str, str]:
    """(method, target, version) of the next request, empty lines before it skipped."""
    for _ in range(MAX_LEADING_EMPTY + 1):
        line = reader.readline(MAX_LINE + 1)
        if line not in (b"\r\n", b"\n"):
            break
    else:
        raise HeadError(400, f"More than {MAX_LEADING_EMPTY} empty lines before the request line")
    words = line.split(b" ")
    path = words[1].decode("latin-1") if len(words) > 1 else ""
    if len(line) > MAX_LINE:
        raise HeadError(414, "Request line too long", path)
    if not line.endswith(b"\n"):
        raise HeadError(400, "Connection closed in the middle of the request line", path)
    words = line.rstrip(b"\r\n").split(b" ")
    if len(words) == 2:
        raise HeadError(400, "HTTP/0.9 requests are not supported", path)
    if len(words) != 3 or not _TOKEN.fullmatch(words[0]):
        raise HeadError(400, f"Bad request line: {line[:60]!r}", path)
    if not _TARGET.fullmatch(words[1]):
        raise HeadError(400, "Invalid request target: only visible ASCII characters are allowed", path)
    if words[2] not in VERSIONS:
        raise HeadError(400, f"Unsupported HTTP version {words[2][:20]!r}", path)
    return words[0].decode("ascii"), path, words[2].decode("ascii")


def header_block(reader: DeadlineReader, path: str) -> http.client.HTTPMessage:
    """The header fields up to the empty line; HeadError for any line that is not a field."""
    msg = http.client.HTTPMessage()
    for _ in range(MAX_HEADERS + 1):
        line = reader.readline(MAX_LINE + 1)
        if line in (b"\r\n", b"\n"):
            return msg
        if len(line) > MAX_LINE:
            raise HeadError(431, "Request header fields too large", path)
        if not line.endswith(b"\n"):
            raise HeadError(400, "Connection closed in the middle of the request headers", path)
        if line[:1] in (b" ", b"\t"):
            raise HeadError(400, "Obsolete line folding in the request headers", path)
        name, colon, value = line.rstrip(b"\r\n").partition(b":")
        if not colon:
            first = (name.split() or [b""])[0]  # what would be its name: never a value it may hold
            raise HeadError(400, f"Malformed header line (no colon) starting {first[:40]!r}", path)
        if not _TOKEN.fullmatch(name):
            raise HeadError(400, f"Malformed header name: {name.split(b' ')[0][:40]!r}", path)
        value = value.strip(b" \t")
        if _BAD_VALUE.search(value):
            raise HeadError(400, f"Invalid character in the value of header {name[:40]!r}", path)
        msg[name.decode("ascii")] = value.decode("latin-1")
    raise HeadError(431, "Request header fields too large", path)


def keeps_alive(version: str, headers: http.client.HTTPMessage) -> bool:
    """Whether the connection stays open after this request (RFC 9112 §9.3)."""
    tokens = {t.strip().lower() for t in ",".join(headers.get_all("connection") or []).split(",")}
    if version == "HTTP/1.0":
        return "keep-alive" in tokens
    return "close" not in tokens
