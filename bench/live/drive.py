"""`ctxbench drive`: the reference agent loop over the official `anthropic` / `openai` SDKs.

The loop is the simulator's own harness model
(`ctxbench.sim.harness.conversation.Conversation`) with the policy's
decisions unchanged; only the provider is replaced by `LiveProvider`, which renders each request's
Transcript into a real HTTP body (tools → system → messages, the policy's cache marks as
`cache_control`), sends it through the SDK (retries off: the policy retries, H-17) and reads the
usage back from the SDK's parsed response. What differs between a simulation and a drive is then
exactly the wire round trip, which `validate` checks request by request.

Traces that carry sizes instead of text are first *materialized*: deterministic text of the same
size for every block, JSON where the block is JSON, a PNG header of the right dimensions and size
for every image, and tool schemas in the wire API's tool shape, so both sides count the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ctxbench.sim.core.catalog import ModelInfo, model_info
from ctxbench.sim.core.content import IMAGE, TEXT, THINKING, TOOL_DEF, TOOL_RESULT, TOOL_USE, Block
from ctxbench.sim.core.names import ErrorKind
from ctxbench.sim.core.provider import Outcome, ProviderError, Request, Usage
from ctxbench.sim.providers.dialects import fault_kind_of
from ctxbench.sim.serve.render import DIALECT_OF_API
from ctxbench.sim.serve.wire import ANTHROPIC, CHAT, canon, lang_of
from ctxbench.traces.codec import canonical_json
from ctxbench.traces.model import Content, MessageEvent, SystemEvent, ToolDef, ToolsEvent, Trace

_WORDS = ("road", "farm", "stone", "plank", "mill", "build", "path", "flag", "wood", "the", "a", "then")


def filler(nbytes: int, seed: str) -> str:
    h = int.from_bytes(hashlib.blake2b(seed.encode(), digest_size=8).digest(), "little")
    out, n = [], 0
    while n < nbytes:
        h = (h * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        w = _WORDS[(h >> 33) % len(_WORDS)]
        out.append(w)
        n += len(w) + 1
    text = " ".join(out)
    return (text + " " * nbytes)[: max(1, nbytes)]


def json_filler(nbytes: int, seed: str) -> str:
    return canon({"d": filler(max(1, nbytes - 8), seed)})


def png_bytes(width: int, height: int, nbytes: int, seed: int) -> bytes:
    """A PNG signature + IHDR of the given size, padded with a private chunk to ~nbytes."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
    pad = max(0, nbytes - len(head) - 24)
    fill = hashlib.blake2b(seed.to_bytes(8, "little"), digest_size=64).digest()
    body = (fill * (pad // 64 + 1))[:pad]
    return head + chunk(b"ctXb", body) + chunk(b"IEND", b"")


def _tool_object(t: ToolDef, api: str) -> str:
    spec = json.loads(t.schema) if t.schema else {}
    desc = str(spec.get("description", "")) or filler(max(1, t.nbytes - 60), t.name)
    params = spec.get("input_schema") or spec.get("parameters") or {"type": "object", "properties": {}}
    if api == CHAT:
        return canonical_json(
            {"type": "function", "function": {"name": t.name, "description": desc, "parameters": params}}
        )
    return canonical_json({"name": t.name, "description": desc, "input_schema": params})


def _content(c: Content, seed: str) -> Content:
    if c.kind == "image":
        return replace(c, tokens=None)
    if c.kind == "tool_use":
        text = c.text
        try:
            obj = json.loads(text) if text is not None else None
        except ValueError:
            obj = None
        text = canon(obj) if isinstance(obj, dict) else json_filler(c.size, seed)
        return replace(c, text=text, nbytes=0, lang="json", key="", tokens=None)
    text = c.text
    if text is None:
        text = json_filler(c.nbytes, seed) if c.lang == "json" else filler(c.nbytes, seed)
    lang = "prose" if c.kind == "thinking" else lang_of(text)
    return replace(c, text=text, nbytes=0, lang=lang, key="", tokens=None)


def materialize(trace: Trace, api: str = ANTHROPIC) -> Trace:
    """The same trace with text for every block and wire-shaped tool schemas (see module doc)."""
    events: list[Any] = []
    for i, ev in enumerate(trace.events):
        if isinstance(ev, ToolsEvent):
            events.append(
                replace(ev, tools=tuple(replace(t, schema=_tool_object(t, api), nbytes=0) for t in ev.tools))
            )
        elif isinstance(ev, SystemEvent):
            events.append(
                replace(
                    ev, content=tuple(_content(c, c.key or f"s{i}.{j}") for j, c in enumerate(ev.content))
                )
            )
        elif isinstance(ev, MessageEvent):
            events.append(
                replace(
                    ev, content=tuple(_content(c, c.key or f"m{i}.{j}") for j, c in enumerate(ev.content))
                )
            )
        else:
            events.append(ev)
    return replace(trace, events=tuple(events))


# ---------------------------------------------------------------- rendering
def _image_b64(b: Block) -> str:
    return base64.b64encode(png_bytes(b.width, b.height, b.nbytes, b.digest)).decode()


def _text(b: Block) -> str:
    """The block's text; blocks a policy made from a size alone (placeholders, handoffs) get
    deterministic text of exactly that size."""
    return b.text if b.text is not None else filler(b.nbytes, f"{b.digest:x}")


def _marked(marks: Mapping[int, str], pos: int, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with the request's cache_control marker when block `pos` carries a breakpoint."""
    if pos in marks:
        ttl = marks[pos]
        obj["cache_control"] = {"type": "ephemeral", "ttl": ttl} if ttl != "5m" else {"type": "ephemeral"}
    return obj


def render_anthropic(req: Request) -> dict[str, Any]:
    tr, marks = req.tr, dict(req.breakpoints)

    def cc(pos: int, obj: dict[str, Any]) -> dict[str, Any]:
        return _marked(marks, pos, obj)

    tools = [cc(i, json.loads(tr.blocks[i].text or "{}")) for i in range(tr.tools_end)]
    system = [
        cc(i, {"type": "text", "text": _text(tr.blocks[i])}) for i in range(tr.tools_end, tr.system_end)
    ]
    messages = []
    for m, msg in enumerate(tr.messages):
        start = tr.msg_starts[m]
        content = []
        for j, b in enumerate(msg.blocks):
            if b.kind == IMAGE:
                wb: dict[str, Any] = {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": _image_b64(b)},
                }
            elif b.kind == TOOL_USE:
                wb = {
                    "type": "tool_use",
                    "id": b.tool_id,
                    "name": b.name,
                    "input": json.loads(b.text or "{}"),
                }
            elif b.kind == TOOL_RESULT:
                wb = {"type": "tool_result", "tool_use_id": b.tool_id, "content": _text(b)}
            elif b.kind == THINKING:
                wb = {"type": "thinking", "thinking": _text(b), "signature": "ctxbench"}
            else:
                wb = {"type": "text", "text": _text(b)}
            content.append(cc(start + j, wb))
        messages.append({"role": msg.role, "content": content})
    body: dict[str, Any] = {"model": req.model, "max_tokens": max(1, req.output_tokens), "messages": messages}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
    return body


def render_chat(req: Request) -> dict[str, Any]:
    """Chat Completions with OpenRouter-style `cache_control` on content parts (H-23)."""
    tr, marks = req.tr, dict(req.breakpoints)

    def cc(pos: int, obj: dict[str, Any]) -> dict[str, Any]:
        return _marked(marks, pos, obj)

    tools = [cc(i, json.loads(tr.blocks[i].text or "{}")) for i in range(tr.tools_end)]
    messages: list[dict[str, Any]] = []
    if tr.system_end > tr.tools_end:
        messages.append(
            {
                "role": "system",
                "content": [
                    cc(i, {"type": "text", "text": _text(tr.blocks[i])})
                    for i in range(tr.tools_end, tr.system_end)
                ],
            }
        )
    for m, msg in enumerate(tr.messages):
        start = tr.msg_starts[m]
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []

        def flush(role: str, parts: list[dict[str, Any]], calls: list[dict[str, Any]]) -> None:
            if parts or calls:
                d: dict[str, Any] = {"role": role, "content": list(parts)}
                if calls:
                    d["tool_calls"] = list(calls)
                messages.append(d)
                parts.clear()
                calls.clear()

        for j, b in enumerate(msg.blocks):
            pos = start + j
            if b.kind == TOOL_RESULT:
                flush(msg.role, parts, calls)
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": b.tool_id,
                        "content": [cc(pos, {"type": "text", "text": _text(b)})],
                    }
                )
            elif b.kind == TOOL_USE:
                calls.append(
                    cc(
                        pos,
                        {
                            "id": b.tool_id,
                            "type": "function",
                            "function": {"name": b.name, "arguments": b.text or "{}"},
                        },
                    )
                )
            elif b.kind == IMAGE:
                parts.append(
                    cc(
                        pos,
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _image_b64(b)}},
                    )
                )
            elif b.kind in (TEXT, THINKING, TOOL_DEF):
                parts.append(cc(pos, {"type": "text", "text": _text(b)}))
        flush(msg.role, parts, calls)
    body: dict[str, Any] = {"model": req.model, "max_tokens": max(1, req.output_tokens), "messages": messages}
    if tools:
        body["tools"] = tools
    return body


# ---------------------------------------------------------------- the live provider
@dataclass
class LiveProvider:
    """A Provider whose calls go over HTTP through the official SDK to a server."""

    url: str
    model: ModelInfo
    api: str = ANTHROPIC
    stream: bool = True
    conversation: str = "c0"
    timeout: float = 60.0
    name: str = "live"

    def __post_init__(self) -> None:
        if self.api == ANTHROPIC:
            import anthropic

            self._a = anthropic.Anthropic(
                api_key="sk-ant-ctxbench", base_url=self.url, max_retries=0, timeout=self.timeout
            )
        else:
            import openai

            self._o = openai.OpenAI(
                api_key="sk-ctxbench", base_url=self.url + "/v1", max_retries=0, timeout=self.timeout
            )

    def call(self, req: Request, now: float) -> Outcome:
        headers = {
            "x-ctxbench-now": repr(now),
            "x-ctxbench-index": str(req.index),
            "x-ctxbench-kind": req.kind,
            "x-ctxbench-output-tokens": str(req.output_tokens),
            "x-ctxbench-conversation": self.conversation,
        }
        try:
            if self.api == ANTHROPIC:
                u, h = self._call_anthropic(render_anthropic(req), headers)
            else:
                u, h = self._call_chat(render_chat(req), headers)
        except Exception as e:  # the SDKs' APIStatusError family
            status = int(getattr(e, "status_code", 0) or 0)
            if not status:
                raise
            body = getattr(e, "body", None) or {}
            err = body.get("error", body) if isinstance(body, dict) else {}
            msg = str(err.get("message", e)) if isinstance(err, dict) else str(e)
            kind: ErrorKind = (
                "too_long"
                if ("too long" in msg or "context length" in msg or "context window" in msg)
                else fault_kind_of(DIALECT_OF_API[self.api], status) or "invalid"
            )
            resp = getattr(e, "response", None)
            ra = resp.headers.get("retry-after") if resp is not None else None
            perr = ProviderError(
                status,
                str(err.get("type", "")) if isinstance(err, dict) else "",
                msg,
                kind,
                kind not in ("too_long", "invalid"),
                float(ra) if ra else None,
            )
            return Outcome(Usage(), 0.0, 0.0, 0.0, perr)
        ttft, dur = float(h.get("x-ctxbench-ttft", 0)), float(h.get("x-ctxbench-duration", 0))
        return Outcome(
            u, float(h.get("x-ctxbench-cost", 0)), ttft, dur, None, int(h.get("x-ctxbench-cached-pos", -1))
        )

    def _call_anthropic(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Usage, Any]:
        if self.stream:
            with self._a.messages.stream(**body, extra_headers=headers) as s:
                msg = s.get_final_message()
                h = s.response.headers
        else:
            raw = self._a.messages.with_raw_response.create(**body, extra_headers=headers)
            msg, h = raw.parse(), raw.headers
        us = msg.usage
        cc = us.cache_creation
        w5 = cc.ephemeral_5m_input_tokens if cc else (us.cache_creation_input_tokens or 0)
        w1 = cc.ephemeral_1h_input_tokens if cc else 0
        return Usage(us.input_tokens, us.cache_read_input_tokens or 0, w5, w1, us.output_tokens), h

    def _call_chat(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[Usage, Any]:
        if self.stream:
            raw = self._o.chat.completions.with_raw_response.create(
                **body, stream=True, stream_options={"include_usage": True}, extra_headers=headers
            )
            usage = None
            for chunk in raw.parse():
                if chunk.usage is not None:
                    usage = chunk.usage
            h = raw.headers
        else:
            raw = self._o.chat.completions.with_raw_response.create(**body, extra_headers=headers)
            usage, h = raw.parse().usage, raw.headers
        assert usage is not None
        d = usage.prompt_tokens_details
        read = (d.cached_tokens or 0) if d else 0
        write = int(getattr(d, "cache_write_tokens", 0) or 0) if d else 0
        return Usage(usage.prompt_tokens - read - write, read, write, 0, usage.completion_tokens), h

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return "live"  # the server's cache is not inspectable from the client


def live_provider_for(url: str, api: str, stream: bool, conversation: str) -> Any:
    cache: dict[str, LiveProvider] = {}

    def provider_for(model: str) -> LiveProvider:
        if model not in cache:
            cache[model] = LiveProvider(url, model_info(model), api, stream, conversation)
        return cache[model]

    return provider_for
