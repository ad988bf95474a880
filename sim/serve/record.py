"""Recording live traffic: credentials redacted first, one ledger line per request, ctxbench traces.

The ledger (`requests.jsonl`) holds every request exactly as received (body, redacted headers,
billed usage, status) — one line written and flushed under a lock as soon as the request is
answered, so concurrent conversations never lose or interleave records. Traces
(`<conversation>.jsonl`, format v1 via `ctxbench.traces.format.write_trace`) linearize each conversation:
messages that extend the previous request are appended, the reply follows with its billed usage,
and a request that does not extend the conversation (a compaction, a reset) is recorded as a
`compaction` event followed by its whole message list.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ctxbench.sim.content import IMAGE, TOOL_DEF, Block, Message
from ctxbench.sim.providers.base import Usage
from ctxbench.sim.serve.wire import Parsed, lang_of
from ctxbench.traces.format import TraceError, write_trace
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Header,
    MessageEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
)
from ctxbench.traces.model import Usage as TraceUsage

REDACTED = "[redacted]"
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "anthropic-admin-key",
        "x-amz-security-token",
        "openai-organization",
        "openai-project",
        "chatgpt-account-id",
    }
)
_SECRET_WORDS = re.compile(r"(token|secret|key|auth|cookie|password|credential|session-token)", re.I)
_SECRET_QUERY = re.compile(r"([?&](?:key|api_key|apikey|token|access_token)=)[^&]*", re.I)


# A body field whose name ends in a credential word, at any depth (`api_key`, `openai_api_key`,
# `access_token`, `client_secret`, `password`, `authorization`...). Token *counts* (`max_tokens`,
# `input_tokens`) and `prompt_cache_key` (Codex's session id, ecosystem.md L197) are not secrets.
_SECRET_FIELD = re.compile(
    r"(^|[_\-.])(token|secret|password|passwd|passphrase|authorization|auth|cookie|credentials?|"
    r"(api|access|private|secret|auth|admin|session|signing)[_\-]?key|apikey)$",
    re.I,
)
MIN_SCRUBBED = 8  # a secret value this long or longer is also removed wherever else it appears


def _is_secret_header(name: str) -> bool:
    if name.startswith("x-ctxbench-"):  # this project's control headers (index, output tokens, now)
        return False
    return name in SECRET_HEADERS or _SECRET_WORDS.search(name) is not None


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header values that are or may be credentials become `[redacted]` (names are kept)."""
    return {k.lower(): REDACTED if _is_secret_header(k.lower()) else v for k, v in headers.items()}


def redact_path(path: str) -> str:
    return _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED, path)


def _scalar(v: Any) -> bool:
    """A value a credential can be (a schema object under a `password` property is not one)."""
    return isinstance(v, str | int | float) and not isinstance(v, bool)


def _secret_values(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 200:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and _SECRET_FIELD.search(k) and _scalar(v):
                out.add(str(v))
            else:
                _secret_values(v, out, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _secret_values(v, out, depth + 1)


class Redactor:
    """Removes every credential from what is recorded of one request: secret headers (by name),
    query parameters (`?key=`), body fields whose name is a credential word, at any depth; and
    any value that was sent as a key (header, query or body field) wherever else it appears."""

    def __init__(self, headers: dict[str, str], path: str, body: Any = None) -> None:
        found: set[str] = set()
        for k, v in headers.items():
            if _is_secret_header(k.lower()):
                found.add(v)
                found.update(v.split())  # `Bearer sk-...`: the key alone too
        for m in _SECRET_QUERY.finditer(path):
            end = path.find("&", m.end())
            found.add(path[m.end() : end if end >= 0 else None])
        _secret_values(body, found)
        # longest first, so that a key is removed whole before a part of it could match
        self.secrets = sorted((s for s in found if len(s) >= MIN_SCRUBBED), key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, REDACTED)
        return s

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        return {k: self.text(v) for k, v in redact_headers(headers).items()}

    def path(self, path: str) -> str:
        return self.text(redact_path(path))

    def body(self, value: Any, depth: int = 0) -> Any:
        """A copy of a parsed JSON body with credential fields `[redacted]` and secrets scrubbed."""
        if isinstance(value, str):
            return self.text(value) if self.secrets else value
        if depth > 400:  # deeper than any request body; recorded as a marker, never a RecursionError
            return "[nested too deeply to record]"
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(k, str) and _SECRET_FIELD.search(k) and _scalar(v)
                else self.body(v, depth + 1)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.body(v, depth + 1) for v in value]
        return value


def usage_dict(u: Usage) -> dict[str, int]:
    return {
        "uncached": u.uncached,
        "cache_read": u.cache_read,
        "cache_write_5m": u.cache_write_5m,
        "cache_write_1h": u.cache_write_1h,
        "output": u.output,
    }


def strict_json(entry: dict[str, Any]) -> str:
    """One line of strict JSON for any entry: UTF-8 text where it can be, `\\uXXXX` escapes where a
    string holds a lone surrogate, non-finite numbers as strings (`"NaN"`), never an exception."""
    try:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        try:
            return json.dumps(entry, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        except ValueError:
            pass
    except (ValueError, TypeError, RecursionError):
        pass
    return json.dumps(_finite(entry), ensure_ascii=True, separators=(",", ":"), allow_nan=False, default=repr)


def _finite(value: Any, depth: int = 0) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if depth > 400:
        return "[nested too deeply to record]"
    if isinstance(value, dict):
        return {str(k): _finite(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v, depth + 1) for v in value]
    return value


class Ledger:
    """Append-only JSONL of every request, one strict-JSON line each (`strict_json`); thread-safe,
    flushed per line; sequence numbers without gaps (a number is taken only with its line)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._f: IO[str] | None = None
        self.count = 0
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._f = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, entry: dict[str, Any]) -> int:
        with self._lock:
            text = strict_json({"seq": self.count + 1, **entry})
            if self._f is not None:
                self._f.write(text + "\n")
                self._f.flush()
            self.count += 1
            return self.count

    def close(self) -> None:
        with self._lock:
            if self._f is not None:
                self._f.close()
                self._f = None


# ---------------------------------------------------------------- traces from parsed requests
def _content(b: Block) -> Content:
    if b.kind == IMAGE:
        return Content(
            "image", nbytes=max(1, b.nbytes), width=b.width, height=b.height, key=f"img{b.digest:016x}"
        )
    text = b.text or ""
    lang = "json" if b.kind == "tool_use" else lang_of(text)
    if b.kind == "tool_use":
        return Content(
            "tool_use", text=text, lang=lang, tool_id=b.tool_id or f"t{b.digest:x}", name=b.name or "tool"
        )
    if b.kind == "tool_result":
        return Content("tool_result", text=text, lang=lang, tool_id=b.tool_id or "")
    return Content(b.kind if b.kind in ("text", "thinking") else "text", text=text, lang=lang)


def _scrubbed(ev: Any, red: Redactor) -> Any:
    """An event with every secret removed from its texts (a key a user pasted into a message)."""
    fields = [n for n in ("content", "summary") if hasattr(ev, n)]
    changes = {
        n: tuple(
            dataclasses.replace(c, text=red.text(c.text)) if c.text is not None else c for c in getattr(ev, n)
        )
        for n in fields
    }
    return dataclasses.replace(ev, **changes) if changes else ev


@dataclass
class _Conv:
    tools: tuple[int, ...] = ()
    events: list[Any] = field(default_factory=list)
    cur: list[int] = field(default_factory=list)  # chained digests of the trace's messages so far
    model: str = ""
    seen_ids: set[str] = field(default_factory=set)


def _msg_key(m: Message) -> int:
    h = 0
    for b in m.blocks:
        h = hash((h, b.digest))
    return h


class TraceRecorder:
    """Builds one trace per conversation from parsed requests and their replies (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.convs: dict[str, _Conv] = {}
        self.failed: list[str] = []  # conversations `write` could not write, with the reason
        self.secrets: set[str] = set()

    def add(
        self,
        p: Parsed,
        reply_blocks: tuple[dict[str, Any], ...],
        usage: Usage,
        out_tokens: int,
        t: float,
        secrets: list[str] | tuple[str, ...] = (),
    ) -> None:
        """Add one answered request; `secrets` (values sent as keys) are scrubbed when written."""
        with self._lock:
            self.secrets.update(secrets)
            c = self.convs.setdefault(p.session, _Conv())
            tr = p.tr
            if not c.events:
                c.model = p.model
                tools = tuple(
                    ToolDef(b.name or f"tool{i}", nbytes=max(1, b.nbytes))
                    for i, b in enumerate(tr.blocks[: tr.tools_end])
                    if b.kind == TOOL_DEF
                )
                if tools:
                    c.events.append(ToolsEvent(tools, t))
                sysc = tuple(_content(b) for b in tr.blocks[tr.tools_end : tr.system_end] if b.text)
                if sysc:
                    c.events.append(SystemEvent(sysc, t))
            keys = [_msg_key(m) for m in p.messages]
            extends = (
                bool(c.cur)
                and len(keys) >= len(c.cur)
                and all(ck in (k, -1) for k, ck in zip(keys, c.cur, strict=False))
            )
            if extends:
                c.cur = keys[: len(c.cur)]
            if not extends:
                if c.cur:
                    c.events.append(CompactionEvent(trigger="auto", t=t))
                c.cur = []
                new = list(p.messages)
            else:
                new = list(p.messages[len(c.cur) :])
            for m in new:
                c.events.append(self._message(c, m, t, None))
                c.cur.append(_msg_key(m))
            u = TraceUsage(
                usage.uncached, usage.cache_read, usage.cache_write_5m, usage.cache_write_1h, out_tokens
            )
            reply = [
                Content("text", text=b["text"])
                if b["type"] == "text"
                else Content(
                    "tool_use",
                    text=json.dumps(b["input"], separators=(",", ":")),
                    lang="json",
                    tool_id=b["id"],
                    name=b["name"],
                )
                for b in reply_blocks
            ]
            ev = MessageEvent(
                "assistant",
                tuple(reply) or (Content("text", text="ok"),),
                "reply",
                t=t,
                output_tokens=out_tokens,
                usage=u,
            )
            c.events.append(self._fix(c, ev))
            c.cur.append(-1)  # the reply: the next request's copy of it is matched by position only

    def _message(self, c: _Conv, m: Message, t: float, usage: TraceUsage | None) -> MessageEvent:
        return self._fix(c, MessageEvent(m.role, tuple(_content(b) for b in m.blocks), "", t=t, usage=usage))

    @staticmethod
    def _fix(c: _Conv, ev: MessageEvent) -> MessageEvent:
        """Keep the trace valid: tool_use ids unique, tool_results answering an earlier tool_use."""
        content = []
        for x in ev.content:
            if x.kind == "tool_use":
                tid = x.tool_id
                while tid in c.seen_ids:
                    tid += "'"
                c.seen_ids.add(tid)
                x = Content("tool_use", text=x.text, lang="json", tool_id=tid, name=x.name)
            elif x.kind == "tool_result" and x.tool_id not in c.seen_ids:
                x = Content("text", text=x.text, lang=x.lang)
            if ev.role == "assistant" and x.kind in ("image", "tool_result"):
                x = Content("text", text=x.text or "", lang=x.lang)
            if ev.role == "user" and x.kind in ("tool_use", "thinking"):
                x = Content("text", text=x.text or "", lang=x.lang)
            content.append(x)
        return MessageEvent(
            ev.role, tuple(content), ev.tag, t=ev.t, output_tokens=ev.output_tokens, usage=ev.usage
        )

    def write(self, folder: str | Path, source: str = "ctxbench-serve") -> list[Path]:
        """Write one trace per conversation; returns the paths written. Each conversation is
        written on its own: one that cannot be (its reason is kept in `failed`) never stops the
        others, and a conversation name that is not valid Unicode is recorded escaped."""
        out = []
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with self._lock:
            for i, (name, c) in enumerate(sorted(self.convs.items())):
                shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
                header = Header(source, "live", c.model, 0, meta={"conversation": shown})
                path = folder / f"conv-{i:03d}.jsonl"
                events = tuple(c.events)
                if self.secrets:
                    red = Redactor({}, "")
                    red.secrets = sorted(self.secrets, key=len, reverse=True)
                    events = tuple(_scrubbed(ev, red) for ev in events)
                try:
                    write_trace(Trace(header, events), path)
                except (TraceError, OSError) as e:
                    self.failed.append(f"{path}: {e}")
                    continue
                out.append(path)
        return out
