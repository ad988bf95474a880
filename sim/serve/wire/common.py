"""Request bodies of the wire APIs (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini)
→ the content model (a Transcript plus cache breakpoints).

Blocks are laid out tools → system → messages (providers.md §1.1), one block per tool definition,
system block and message content block, like the simulator's own transcripts, so the provider
models bill an HTTP request exactly as they bill a simulated one.

Prefix fidelity (providers.md §1.1, "JSON key order inside tool_use.input matters"): a block's
digest is taken over its canonical serialized bytes *as sent* — compact JSON with the keys in the
order they arrived — so reordering keys breaks the prefix as it does on the real API.
`cache_control` markers are not content: they are removed before hashing and become breakpoints.
Token counts use the same `BlockFactory` counter as the simulator: text by its bytes and kind of
text (JSON text counts at the JSON rate, ecosystem.md §1.6), tool definitions and tool inputs as
JSON, images by the provider's image rule from the dimensions read from the image header.

Every malformed body raises `WireError` with the API's 400 shape (never a crash, never a 5xx).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxbench.sim.core.content import (
    IMAGE,
    TEXT,
    THINKING,
    TOOL_DEF,
    TOOL_RESULT,
    TOOL_USE,
    Block,
    Message,
    digest64,
)
from ctxbench.sim.core.imagesize import image_size
from ctxbench.sim.core.names import Breakpoints, Ttl, is_ttl
from ctxbench.sim.core.tokens import IMAGE_RULES, BlockFactory
from ctxbench.sim.core.transcript import Transcript

ANTHROPIC, CHAT, RESPONSES, GEMINI = "anthropic", "chat", "responses", "gemini"


class WireError(ValueError):
    """A request the real API rejects: HTTP status, error type, message (and OpenAI's param/code)."""

    def __init__(
        self, status: int, type_: str, message: str, param: str | None = None, code: str | None = None
    ):
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.param = param
        self.code = code


def bad(message: str, param: str | None = None) -> WireError:
    return WireError(400, "invalid_request_error", message, param)


_PARSE_ERROR = "There was an error parsing the body of the request"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_body(raw: bytes) -> Any:
    """A request body as the real API reads it: strict JSON in UTF-8. `NaN`/`Infinity` (and numbers
    past float range, `1e999`), invalid UTF-8, nesting past the parser's stack and strings with
    lone surrogates (`"h\\ud800i"`) are 400 `invalid_request_error` (WireError), never a crash."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad(f"{_PARSE_ERROR}: invalid UTF-8") from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise bad(f"{_PARSE_ERROR}: nested too deeply") from None
    except ValueError:
        raise bad(f"{_PARSE_ERROR}: invalid JSON") from None
    stack = [body]
    while stack:  # iterative: a body nested to the parser's limit must not overflow the stack here
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise bad(f"{_PARSE_ERROR}: invalid Unicode (lone surrogate)") from None
        elif isinstance(v, float) and not math.isfinite(v):  # 1e999: JSON has no infinity
            raise bad(f"{_PARSE_ERROR}: number out of range")
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return body


def canon(value: Any) -> str:
    """Compact JSON with keys in the order they arrived (the bytes a cache hashes, §1.1)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def lang_of(text: str) -> str:
    """Which calibrated rate applies: JSON text at the JSON rate, everything else as prose."""
    s = text.lstrip()
    if s[:1] in ("{", "[") and text.rstrip()[-1:] in ("}", "]"):
        try:
            json.loads(text)
            return "json"
        except ValueError:
            return "prose"
    return "prose"


@dataclass
class Parsed:
    """One request in the content model, plus what the server needs to answer it."""

    api: str
    model: str
    stream: bool
    tr: Transcript
    breakpoints: Breakpoints
    max_tokens: int = 0
    include_usage: bool = False
    cache_key: str | None = None
    session: str = ""
    tool_names: tuple[str, ...] = ()
    last_user_text: str = ""
    wants_json: bool = False
    messages: list[Message] = field(default_factory=list)
    tool_params: dict[str, tuple[str, ...]] = field(default_factory=dict)  # tool name → parameter names
    xml_tools: bool = False  # the system prompt has the model call tools in XML tags (`XML_TOOL_USE`)


# A system prompt that has the model write its tool calls as XML tags in its text instead of offering
# tools: Cline ("Tool use is formatted using XML-style tags", its providers without native tool calls,
# e.g. an OpenAI-compatible endpoint) and Roo Code ("Tool uses are formatted using XML-style tags").
XML_TOOL_USE = "formatted using XML-style tags"


class _Builder:
    """Accumulates blocks and breakpoints while walking one body."""

    def __init__(self, factory: BlockFactory) -> None:
        self.f = factory
        self.tools: list[Block] = []
        self.system: list[Block] = []
        self.msgs: list[Message] = []
        self.msg_blocks = 0  # blocks of self.msgs (where the current message's blocks start)
        self.cur: list[Block] = []
        self.cur_role = ""
        self.marks: list[tuple[str, int, Ttl]] = []  # (segment, index in segment or message block, ttl)
        self.last_user_text = ""
        self.tool_params: dict[str, tuple[str, ...]] = {}
        self.xml_tools = False

    # -------------------------------------------------------------- blocks
    def block(
        self, kind: str, role: str, payload: Any, text: str, lang: str, name: str = "", tool_id: str = ""
    ) -> Block:
        raw = canon(payload).encode("utf-8")
        nbytes = len(text.encode("utf-8"))
        tokens = self.f.counter.count_text(text, lang) if text else 0
        dig = digest64(kind.encode(), role.encode(), raw)
        return Block(kind, role, nbytes, tokens, dig, text=text, name=name, tool_id=tool_id)

    def image(self, role: str, data_b64: str, where: str) -> Block:
        try:
            head = base64.b64decode(data_b64[: 64 * 1024 - (64 * 1024) % 4] or b"", validate=False)
        except (binascii.Error, ValueError):
            raise bad(f"{where}: image data is not valid base64") from None
        w, h = image_size(head)
        if w <= 0 or h <= 0:
            raise bad(f"{where}: Could not process image")
        tokens = IMAGE_RULES[self.f.image_rule](w, h)
        dig = digest64(IMAGE.encode(), data_b64.encode("ascii", "replace"))
        return Block(IMAGE, role, len(data_b64) * 3 // 4, tokens, dig, width=w, height=h)

    def tool_def(self, tool: dict[str, Any], where: str) -> None:
        body = self.strip(tool, ("tools", len(self.tools)), where)
        fn: dict[str, Any] = tool["function"] if isinstance(tool.get("function"), dict) else {}
        name = tool.get("name") or fn.get("name") or tool.get("type") or ""
        schema = (
            tool.get("input_schema") or fn.get("parameters") or tool.get("parameters")
            or tool.get("parametersJsonSchema") or {}
        )  # fmt: skip
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            self.tool_params[str(name)] = tuple(
                f"{k}:{v.get('type', '') if isinstance(v, dict) else ''}" for k, v in props.items()
            )
        self.tools.append(self.block(TOOL_DEF, "tools", body, canon(body), "json", name=str(name)))

    def strip(self, obj: dict[str, Any], slot: tuple[str, int], where: str) -> dict[str, Any]:
        """Remove `cache_control` (not content) and record it as a breakpoint at `slot`."""
        if "cache_control" not in obj:
            return obj
        cc = obj["cache_control"]
        if cc is not None:
            if not isinstance(cc, dict) or cc.get("type") != "ephemeral":
                raise bad(f"{where}.cache_control: Input tag found using 'type' does not match 'ephemeral'")
            ttl = cc.get("ttl", "5m")
            if not is_ttl(ttl):
                raise bad(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
            self.marks.append((slot[0], slot[1], ttl))
        return {k: v for k, v in obj.items() if k != "cache_control"}

    def add(self, blk: Block, obj: dict[str, Any] | None, where: str, segment: str = "messages") -> None:
        """Append a message block (or a system block) and its marker if `obj` carried one."""
        if segment == "system":
            if obj is not None:
                self.strip(obj, ("system", len(self.system)), where)
            self.system.append(blk)
            self.xml_tools = self.xml_tools or XML_TOOL_USE in (blk.text or "")
            return
        if obj is not None:
            self.strip(obj, ("cur", len(self.cur)), where)
        self.cur.append(blk)

    def end_message(self, role: str, tag: str = "") -> None:
        if not self.cur:
            return
        base = self.msg_blocks
        self.marks = [("messages", base + i, t) if s == "cur" else (s, i, t) for s, i, t in self.marks]
        self.msgs.append(Message.of(role, tuple(self.cur), tag))
        self.msg_blocks += len(self.cur)
        self.cur = []

    # -------------------------------------------------------------- result
    def finish(self, auto: Ttl | None) -> tuple[Transcript, Breakpoints]:
        tr = Transcript(self.tools, self.system)
        for m in self.msgs:
            tr.append(m)
        pos: dict[int, Ttl] = {}
        for seg, i, ttl in self.marks:
            p = i if seg == "tools" else (tr.tools_end + i if seg == "system" else tr.system_end + i)
            pos[p] = ttl
        if auto is not None and len(tr) and (len(tr) - 1) not in pos:
            pos[len(tr) - 1] = auto  # automatic caching: the last cacheable block (§1.2)
        bps = tuple(sorted(pos.items()))
        seen_5m = False
        for _p, ttl in bps:  # "a ttl='1h' block must not come after a ttl='5m' block" (§1.2)
            if ttl == "1h" and seen_5m:
                raise bad(
                    "A `ttl='1h'` cache_control block must not come after a `ttl='5m'` cache_control block."
                )
            seen_5m = seen_5m or ttl == "5m"
        return tr, bps


def obj(v: Any, where: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise bad(f"{where}: Input should be a valid dictionary or object")
    return v


def list_(v: Any, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise bad(f"{where}: Input should be a valid list")
    return v


def str_(v: Any, where: str) -> str:
    if not isinstance(v, str):
        raise bad(f"{where}: Input should be a valid string")
    return v


# Session id headers: Claude Code's and OpenRouter's (ecosystem.md L221, providers.md L431), and the
# reference driver's conversation name (bench/live/drive.py).
SESSION_HEADERS = (
    "x-claude-code-session-id",
    "session_id",
    "x-session-id",
    "session-id",
    "x-ctxbench-conversation",
)


def session_of(
    headers: Mapping[str, Any], body: Mapping[str, Any], wrapper: Mapping[str, Any] | None = None
) -> str | None:
    """The session a request belongs to, or None: the one reading shared by the server, the
    request-log reader and the importers. In order: a log wrapper's `session_id`; a session header;
    the body's `session_id` (OpenRouter, providers.md L431) or `metadata.session_id`; the
    `session_id` inside Claude Code's JSON `metadata.user_id` (ecosystem.md L221); `prompt_cache_key`
    (Codex sends its session id there, ecosystem.md L197); else the raw `metadata.user_id` or the
    OpenAI `user`, which name the caller at least."""
    if wrapper is not None and wrapper is not body and _text(wrapper.get("session_id")):
        return str(wrapper["session_id"])
    low = {str(k).lower(): v for k, v in headers.items()}
    for h in SESSION_HEADERS:
        if _text(low.get(h)):
            return str(low[h])
    meta = body.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    uid = meta.get("user_id")
    inner = None
    if isinstance(uid, str) and uid.startswith("{"):
        try:
            inner = json.loads(uid).get("session_id")
        except (ValueError, AttributeError):
            inner = None
    for v in (body.get("session_id"), meta.get("session_id"), inner, body.get("prompt_cache_key"), uid):
        if _text(v):
            return str(v)
    return str(body["user"]) if _text(body.get("user")) else None


def _text(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def max_tokens_of(body: dict[str, Any], keys: tuple[str, ...], required: bool) -> int:
    for k in keys:
        if k in body and body[k] is not None:
            v = body[k]
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise bad(f"{k}: Input should be a valid integer", k)
            return int(v)
    if required:
        raise bad(f"{keys[0]}: Field required", keys[0])
    return 0


def model_of(body: dict[str, Any]) -> str:
    if "model" not in body:
        raise bad("model: Field required", "model")
    return str_(body["model"], "model")


def unknown_model(api: str, name: str) -> WireError:
    """A model the API does not serve, answered 404 as the real APIs do: Anthropic
    `{"type":"error","error":{"type":"not_found_error","message":"model: X"}}` (providers.md §1.12:
    404 is `not_found_error`; message as the API sends it, 3P verbatim copies such as anthropics/
    claude-code reports "404 ... not_found_error ... model: haiku"); OpenAI `{"error":{"message":"The
    model `X` does not exist or you do not have access to it.","type":"invalid_request_error",
    "param":null,"code":"model_not_found"}}` (the API's 404 as client libraries quote it verbatim;
    the official SDKs raise NotFoundError for a 404, tests/sim/serve/test_unknown_model.py)."""
    if api == ANTHROPIC:
        return WireError(404, "not_found_error", f"model: {name}")
    message = f"The model `{name}` does not exist or you do not have access to it."
    return WireError(404, "invalid_request_error", message, None, "model_not_found")


def stream_of(body: dict[str, Any]) -> bool:
    s = body.get("stream", False)
    if s is not None and not isinstance(s, bool):
        raise bad("stream: Input should be a valid boolean", "stream")
    return bool(s)


__all__ = [
    "ANTHROPIC",
    "CHAT",
    "GEMINI",
    "IMAGE",
    "RESPONSES",
    "TEXT",
    "THINKING",
    "TOOL_RESULT",
    "TOOL_USE",
    "Parsed",
    "WireError",
    "bad",
    "canon",
    "image_size",
    "lang_of",
    "parse_json_body",
]
