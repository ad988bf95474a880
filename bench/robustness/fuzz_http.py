"""Malformed HTTP requests on raw sockets, for the fuzz suite and the soak (loopback only).

`raw_request` sends bytes to 127.0.0.1 and reads one answer as a client would (status line,
headers, a body by content-length or chunks, or up to the close); `classify` sorts the answer:
JSON in the Anthropic or OpenAI error shape, a success, an HTML page, or no answer at all.
`fuzz_request` builds one request from a valid one by damaging one part: the method, the path,
the framing (content-length, chunk sizes, both framings), the headers (control headers that are
not integers, long or many header lines) or the JSON body (NaN, lone surrogates, deep nesting,
wrong types, credentials in body fields).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import socket
from dataclasses import dataclass
from typing import Any

from ctxbench.bench.robustness.fuzz_inputs import mutate

SECRET = "sk-fuzz-SECRET-7f3a9c"  # sent as a key in headers, query strings and body fields
# A credential of no known shape (issue 32): found only by the name of the field that holds it.
PLAIN_SECRET = "Zq81mXv0Lp27Ws5n"
SECRETS = (SECRET, PLAIN_SECRET)
CREDENTIAL_QUERY = ("key", "api-key", "x-goog-api-key", "secret", "auth", "access_token", "apiKey")
CREDENTIAL_FIELDS = (
    "api_key",
    "openaiApiKey",
    "apiToken",
    "authToken",
    "bearer",
    "key",
    "password",
    "secret",
)


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no answer
    headers: dict[str, str]
    body: bytes
    head: bool = False  # the answer to a HEAD request (no body by definition)
    extra: int = 0  # further answers on the connection to the one request sent (must be 0)

    @property
    def shape(self) -> str:
        """`anthropic`, `openai`, `gemini` (error shapes), `ok`, `html`, `other` or `none`."""
        if self.status == 0:
            return "none"
        if self.head:
            return "head"  # a HEAD answer has a status and headers, never a body
        text = self.body.lstrip()[:200].lower()
        if text.startswith((b"<!doctype", b"<html")) or "html" in self.headers.get("content-type", ""):
            return "html"
        if self.status < 400:
            return "ok"
        try:
            doc = json.loads(self.body)
        except ValueError:
            return "other"
        if isinstance(doc, dict) and doc.get("type") == "error" and isinstance(doc.get("error"), dict):
            err = doc["error"]
            return "anthropic" if {"type", "message"} <= set(err) else "other"
        if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
            err = doc["error"]
            if {"code", "message", "status"} == set(err) and isinstance(err["code"], int):
                return "gemini"  # google.rpc.Status
            return "openai" if {"message", "type", "param", "code"} <= set(err) else "other"
        return "other"


def _read_answer(f: Any, head_only: bool) -> Answer:
    line = f.readline(65537)
    if not line:
        return Answer(0, {}, b"")
    parts = line.split(None, 2)
    try:
        status = int(parts[1])
    except (IndexError, ValueError):
        return Answer(0, {}, line)
    headers: dict[str, str] = {}
    while True:
        h = f.readline(65537)
        if h in (b"\r\n", b"\n", b""):
            break
        k, _, v = h.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    if head_only:
        return Answer(status, headers, b"", head=True)
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(f.readline(1026).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                f.readline()
                break
            chunks.append(f.read(size))
            f.readline()
        return Answer(status, headers, b"".join(chunks))
    if "content-length" in headers:
        return Answer(status, headers, f.read(int(headers["content-length"])))
    return Answer(status, headers, f.read())


def raw_request(port: int, data: bytes, timeout: float = 10.0, half_close: bool = True) -> Answer:
    """Send `data` to 127.0.0.1:`port` and read one answer (status 0 when none came)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)  # nothing more is coming: a server waiting for more ends
            with s.makefile("rb") as f:
                head_only = data[:5] == b"HEAD "
                ans = _read_answer(f, head_only)
                if ans.status and half_close and "close" not in ans.headers.get("connection", ""):
                    with contextlib.suppress(OSError):
                        rest = f.read()  # the server closes once it read our end: anything else?
                        ans = dataclasses.replace(ans, extra=rest.count(b"HTTP/1."))
                return ans
        except (OSError, ValueError):
            return Answer(0, {}, b"")


# ---------------------------------------------------------------- request generation
PATHS = (
    "/v1/messages",
    "/v1/messages?beta=true",
    "/v1/messages/count_tokens",
    "/v1/chat/completions",
    "/v1/responses",
    "/v1/responses/input_tokens",
    "/v1/chat/other",
    "/v1/unknown",
    "/v1/models",
    "/",
    f"/v1/messages?key={SECRET}",
    "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    "/v1beta/models/gemini-2.5-pro:generateContent",
    "/v1beta/models/gemini-2.5-pro:countTokens",
    f"/v1beta/models/gemini-2.5-pro:generateContent?key={SECRET}",
    "/v1beta/models/gemini-nope:generateContent",
)


def valid_body(path: str, rng: random.Random) -> dict[str, Any]:
    if "/v1beta/" in path:
        body: dict[str, Any] = {
            "systemInstruction": {"parts": [{"text": "sys"}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "run", "parameters": {"type": "object"}}]}],
        }
    elif "/chat" in path:
        body = {
            "model": "gpt-5",
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}],
            "stream": rng.random() < 0.3,
        }
    elif "/responses" in path:
        body = {"model": "gpt-5", "input": [{"role": "user", "content": "hi"}], "stream": rng.random() < 0.3}
    else:
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 20,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "stream": rng.random() < 0.3,
        }
    if rng.random() < 0.3:  # credentials in body fields (must never be stored)
        meta: dict[str, Any] = {
            "user_id": f"u{rng.randrange(9)}",
            "api_key": SECRET,
            "openai_api_key": SECRET,
        }
        body["metadata"] = meta
    return body


def _frame(method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\n".encode("latin-1", "replace")
    head += b"".join(f"{k}: {v}\r\n".encode("latin-1", "replace") for k, v in headers)
    return head + b"\r\n" + body


def fuzz_request(rng: random.Random) -> tuple[str, bytes]:
    """(what was damaged, the raw request)."""
    path = rng.choice(PATHS)
    body = json.dumps(valid_body(path, rng)).encode()
    headers = [("host", "127.0.0.1"), ("content-type", "application/json"), ("x-api-key", SECRET)]
    if rng.random() < 0.3:
        headers.append(("authorization", f"Bearer {SECRET}"))
    if rng.random() < 0.15:  # a credential-named query parameter of no known shape
        path += ("&" if "?" in path else "?") + f"{rng.choice(CREDENTIAL_QUERY)}={PLAIN_SECRET}"
    if rng.random() < 0.1:  # a cookie whose value is repeated in the message text
        headers.append(("cookie", f"sid={PLAIN_SECRET}; theme=dark"))
        body = body.replace(b'"hi"', f'"hi, my sid is {PLAIN_SECRET}"'.encode(), 1)
    method = "POST" if path != "/v1/models" else "GET"
    r = rng.random()
    kind = "valid"
    if r < 0.12:
        kind = "method"
        method = rng.choice(("PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "post", "get", "TRACE", "BREW"))
    elif r < 0.45:
        kind = "body"
        body = mutate(json.loads(body), rng)
    elif r < 0.62:
        kind = "framing"
        choice = rng.randrange(6)
        if choice == 0:
            headers.append(("content-length", rng.choice(("abc", "1e3", "-5", "+12", " ", "9" * 30, "0x10"))))
        elif choice == 1:
            headers += [("transfer-encoding", "chunked"), ("content-length", str(len(body)))]
        elif choice == 2:
            size = rng.choice((b"zz", b"-1", b"1" * 20, b"", b"0x5"))
            return "framing", _frame(
                method, path, [*headers, ("transfer-encoding", "chunked")], size + b"\r\n" + body
            )
        elif choice == 3:
            headers += [("content-length", str(len(body))), ("content-length", str(len(body) + 1))]
        elif choice == 4:  # a body shorter than announced (the client then stops sending)
            headers.append(("content-length", str(len(body) + 50)))
        else:
            headers.append(("transfer-encoding", rng.choice(("gzip", "chunked, gzip", "identity"))))
        return kind, _frame(method, path, headers, body)
    elif r < 0.75:
        kind = "headers"
        choice = rng.randrange(5)
        if choice == 0:
            headers.append(("x-ctxbench-index", rng.choice(("²", "1" * 5000, "-1", "1.5", "0x1", "١"))))
        elif choice == 1:
            headers.append(("x-ctxbench-output-tokens", rng.choice(("²", "9" * 400, "NaN", "", "1e3"))))
        elif choice == 2:
            headers.append(("x-long", "a" * 70000))
        elif choice == 3:
            headers += [(f"x-h{i}", "v") for i in range(120)]
        else:
            headers.append(("x-claude-code-session-id", rng.choice(("zz", "../x", "é" * 50))))
    elif r < 0.79:
        kind = "request-line"
        target = path.encode()
        line = rng.choice(
            (
                b"GET\r\n",
                b"POST " + target + b" HTTP/9.9\r\n",
                b"POST " + target + b" HTTP/1.1 extra\r\n",
                b"POST " + target + b"/a" * 40000 + b" HTTP/1.1\r\n",
                b"POST " + target + b"\xc3\xa9\xff HTTP/1.1\r\n",  # non-ASCII in the path
                b"\x00\xff\r\n",
            )
        )
        return kind, line + b"host: x\r\n\r\n"
    elif r < 0.85:
        return "head", _damaged_head(method, path, headers, body, rng)
    if kind == "valid" and rng.random() < 0.3:  # a credential of no known shape in a named field
        doc = json.loads(body)  # (only in bodies left whole: a mutated name is no credential name)
        doc.setdefault("metadata", {})[rng.choice(CREDENTIAL_FIELDS)] = PLAIN_SECRET
        body = json.dumps(doc).encode()
    if kind == "valid" and rng.random() < 0.05:  # a body that is not JSON, quoting a credential
        body = b'{"apiToken": "' + PLAIN_SECRET.encode() + b'", "messages": ['
    if method in ("POST", "PUT", "PATCH", "post") and kind != "framing":
        headers.append(("content-length", str(len(body))))
    elif kind != "method":
        body = b""
    else:
        headers.append(("content-length", str(len(body))))
    return kind, _frame(method, path, headers, body)


def _damaged_head(
    method: str, path: str, headers: list[tuple[str, str]], body: bytes, rng: random.Random
) -> bytes:
    """A request whose head is damaged as RFC 9112 frames it (issue 32): empty lines before the
    request line (to be ignored), a header line with no colon, a space before the colon, a NUL in
    a name, an obsolete folding, a bare LF line end; `content-length` comes after the bad line, so
    a front that ends the head there answers the body as a second request."""
    head = _frame(method, path, headers, b"")[:-2]  # without the final empty line
    bad = rng.choice(
        (
            b"x-no-colon-here\r\n",
            b"x-space : v\r\n",
            b"x-n\x00ul: v\r\n",
            b" folded continuation\r\n",
            b"x-ok: v\x00v\r\n",
        )
    )
    tail = b"content-length: %d\r\n\r\n" % len(body) + body
    if rng.random() < 0.35:  # leading empty lines only: a valid request
        return rng.choice((b"\r\n", b"\r\n\r\n", b"\n")) + head + tail
    return head + bad + tail


def expected_shape(data: bytes) -> str:
    """The error shape a request's path calls for (`anthropic`, `openai`, `gemini`), read from its
    request line as the front reads it (leading empty lines skipped)."""
    from ctxbench.sim.serve.front import api_of_path
    from ctxbench.sim.serve.wire import ANTHROPIC, GEMINI

    line = data.lstrip(b"\r\n").split(b"\n", 1)[0]
    words = line.split(b" ")
    api = api_of_path(words[1].decode("latin-1") if len(words) > 1 else "/")
    return "anthropic" if api == ANTHROPIC else "gemini" if api == GEMINI else "openai"
