"""Responses, SSE streams and error bodies in each API's exact shapes, with usage from `sim.providers`.

Usage fields (providers.md §1.9, §2.3, §7): Anthropic `input_tokens` is what follows the last
breakpoint, plus `cache_read_input_tokens`, `cache_creation_input_tokens` and `cache_creation`
split by TTL (`anthropic_wire_usage`); OpenAI `prompt_tokens` / `input_tokens` include the cached
part, with `cached_tokens` and `cache_write_tokens` in the details. Streams carry what the SDKs
need (ecosystem.md §2.1): Anthropic `event:` lines with `message_start` first and the cumulative
usage in `message_delta`; Chat chunks with `object` and `choices[].index`, the usage chunk with
`choices: []` when `include_usage`; Responses `response.created` first and output items announced
before their deltas. Errors (providers.md §1.12, §2.5): statuses, texts and bodies from the one fault table in
`sim/providers/dialects.py`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxbench.sim.core.provider import ProviderError, Usage
from ctxbench.sim.providers.dialects import ANTHROPIC as DIALECT_ANTHROPIC
from ctxbench.sim.providers.dialects import (
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    anthropic_wire_usage,
    as_dialect,
    error_json,
    wire_usage,
)
from ctxbench.sim.serve.wire import ANTHROPIC, CHAT, GEMINI, RESPONSES, WireError, canon


@dataclass(frozen=True)
class Reply:
    """A scripted model reply: Anthropic-shaped blocks (text / tool_use) and its output tokens."""

    blocks: tuple[dict[str, Any], ...]
    output_tokens: int

    @property
    def stop_reason(self) -> str:
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def openai_usage(u: Usage, api: str) -> dict[str, Any]:
    """Usage in OpenAI's fields: the input count includes cached tokens (§2.3, §7; the dialects table)."""
    return wire_usage(OPENAI_CHAT if api == CHAT else OPENAI_RESPONSES, u)


def sse(event: str | None, data: dict[str, Any] | str) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


# ---------------------------------------------------------------- Anthropic
def anthropic_message(
    rid: str, model: str, reply: Reply, u: Usage, speed: str = "standard"
) -> dict[str, Any]:
    """A Messages reply; `usage` carries `service_tier` and the `speed` the request ran at (providers.md
    §1.9; a fast-mode request, `speed: "fast"`, is billed as the model's `-fast` row)."""
    return {
        "id": rid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(reply.blocks),
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {**anthropic_wire_usage(u), "service_tier": "standard", "speed": speed},
    }


def anthropic_stream(
    rid: str, model: str, reply: Reply, u: Usage, cut: ProviderError | None = None, speed: str = "standard"
) -> Iterator[bytes]:
    usage = {**anthropic_wire_usage(u), "service_tier": "standard", "speed": speed}
    start = {**anthropic_message(rid, model, Reply((), 0), u, speed), "content": [], "stop_reason": None}
    start["usage"] = {**usage, "output_tokens": min(1, u.output)}
    yield sse("message_start", {"type": "message_start", "message": start})
    yield sse("ping", {"type": "ping"})
    if cut is not None:  # an error after HTTP 200 (providers.md §1.12)
        yield sse("error", {"type": "error", "error": {"type": cut.type, "message": cut.message}})
        return
    for i, b in enumerate(reply.blocks):
        if b["type"] == "tool_use":
            yield sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {**b, "input": {}}},
            )
            delta = {"type": "input_json_delta", "partial_json": canon(b["input"])}
        else:
            yield sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
            )
            delta = {"type": "text_delta", "text": b["text"]}
        yield sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": i})
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": usage,
        },
    )
    yield sse("message_stop", {"type": "message_stop"})


# ---------------------------------------------------------------- Chat Completions
def _chat_message(reply: Reply) -> dict[str, Any]:
    text = "".join(b["text"] for b in reply.blocks if b["type"] == "text")
    calls = [
        {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": canon(b["input"])}}
        for b in reply.blocks
        if b["type"] == "tool_use"
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def chat_completion(rid: str, model: str, reply: Reply, u: Usage) -> dict[str, Any]:
    finish = "tool_calls" if reply.stop_reason == "tool_use" else "stop"
    return {
        "id": rid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": _chat_message(reply), "finish_reason": finish, "logprobs": None}],
        "usage": openai_usage(u, CHAT),
    }


def chat_stream(rid: str, model: str, reply: Reply, u: Usage, include_usage: bool) -> Iterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        c: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if include_usage:
            c["usage"] = None
        return sse(None, c)

    msg = _chat_message(reply)
    yield chunk({"role": "assistant", "content": ""})
    if msg["content"]:
        yield chunk({"content": msg["content"]})
    for k, call in enumerate(msg.get("tool_calls", [])):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": k,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": k, "function": {"arguments": call["function"]["arguments"]}}]})
    yield chunk({}, "tool_calls" if reply.stop_reason == "tool_use" else "stop")
    if include_usage:
        yield sse(
            None,
            {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": openai_usage(u, CHAT),
            },
        )
    yield sse(None, "[DONE]")


# ---------------------------------------------------------------- Responses
def _resp_items(rid: str, reply: Reply, reasoning: bool = False) -> list[dict[str, Any]]:
    """The output items of a reply; with `reasoning` (the request asked for
    `include: ["reasoning.encrypted_content"]`, as Codex CLI does with `store: false`) a reasoning
    item comes first, as reasoning models answer: its opaque `encrypted_content` is what the
    harness sends back in its next input (providers.md §2.4: dropping it lowers reuse)."""
    items: list[dict[str, Any]] = []
    if reasoning:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{rid[5:]}",
                "summary": [],
                "encrypted_content": f"ctxbench-reasoning:{rid}",
            }
        )
    text = "".join(b["text"] for b in reply.blocks if b["type"] == "text")
    if text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{rid[5:]}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    for b in reply.blocks:
        if b["type"] == "tool_use":
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{b['id']}",
                    "call_id": b["id"],
                    "name": b["name"],
                    "arguments": canon(b["input"]),
                    "status": "completed",
                }
            )
    return items


def response_object(
    rid: str,
    model: str,
    reply: Reply,
    u: Usage | None,
    status: str = "completed",
    reasoning: bool = False,
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": _resp_items(rid, reply, reasoning) if status == "completed" else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "usage": openai_usage(u, "responses") if u is not None else None,
    }


def responses_stream(
    rid: str, model: str, reply: Reply, u: Usage, cut: ProviderError | None = None, reasoning: bool = False
) -> Iterator[bytes]:
    seq = 0

    def ev(kind: str, **data: Any) -> bytes:
        nonlocal seq
        seq += 1
        return sse(kind, {"type": kind, "sequence_number": seq - 1, **data})

    yield ev("response.created", response=response_object(rid, model, reply, None, "in_progress"))
    yield ev("response.in_progress", response=response_object(rid, model, reply, None, "in_progress"))
    if cut is not None:
        failed = response_object(rid, model, reply, None, "failed")
        failed["error"] = {"code": cut.type, "message": cut.message}
        yield ev("response.failed", response=failed)
        return
    for i, item in enumerate(_resp_items(rid, reply, reasoning)):
        if item["type"] == "reasoning":
            yield ev("response.output_item.added", output_index=i, item={**item, "encrypted_content": None})
        elif item["type"] == "message":
            text = item["content"][0]["text"]
            yield ev(
                "response.output_item.added",
                output_index=i,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev(
                "response.content_part.added", item_id=item["id"], output_index=i, content_index=0, part=part
            )
            yield ev(
                "response.output_text.delta", item_id=item["id"], output_index=i, content_index=0, delta=text
            )
            yield ev(
                "response.output_text.done", item_id=item["id"], output_index=i, content_index=0, text=text
            )
            yield ev(
                "response.content_part.done",
                item_id=item["id"],
                output_index=i,
                content_index=0,
                part={**part, "text": text},
            )
        else:
            yield ev(
                "response.output_item.added",
                output_index=i,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            yield ev(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=i,
                delta=item["arguments"],
            )
            yield ev(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=i,
                arguments=item["arguments"],
            )
        yield ev("response.output_item.done", output_index=i, item=item)
    yield ev("response.completed", response=response_object(rid, model, reply, u, reasoning=reasoning))


# ---------------------------------------------------------------- Gemini
def gemini_response(rid: str, model: str, reply: Reply, u: Usage) -> dict[str, Any]:
    """A GenerateContentResponse (providers.md §3): the reply's parts (text, functionCall with the
    call's id, which the client echoes in its functionResponse) and `usageMetadata`."""
    parts: list[dict[str, Any]] = []
    for b in reply.blocks:
        if b["type"] == "tool_use":
            parts.append({"functionCall": {"id": b["id"], "name": b["name"], "args": b["input"]}})
        else:
            parts.append({"text": b.get("text", "")})
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": wire_usage("gemini", u),
        "modelVersion": model,
        "responseId": rid,
    }


def gemini_stream(rid: str, model: str, reply: Reply, u: Usage, sse_framing: bool) -> Iterator[bytes]:
    """`streamGenerateContent`: with `alt=sse` one `data:` event per chunk (the reply fits one),
    else the chunks as one JSON array, as the API streams them."""
    chunk = gemini_response(rid, model, reply, u)
    if sse_framing:
        yield f"data: {json.dumps(chunk, separators=(',', ':'))}\r\n\r\n".encode()
    else:
        yield json.dumps([chunk], separators=(",", ":")).encode()


# Status names of google.rpc.Code by HTTP status (the `status` of a Gemini error body).
GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "INVALID_ARGUMENT",
    408: "DEADLINE_EXCEEDED",
    411: "INVALID_ARGUMENT",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# ---------------------------------------------------------------- errors
DIALECT_OF_API = {
    ANTHROPIC: DIALECT_ANTHROPIC,
    CHAT: OPENAI_CHAT,
    RESPONSES: OPENAI_RESPONSES,
    GEMINI: "gemini",
}


def error_body(
    api: str,
    err: WireError | ProviderError,
    rid: str,
    window: int = 0,
    total: int = 0,
    streamed: bool = False,
) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of an error as `api` returns it: a provider model's error re-rendered in
    the client API's dialect (`sim/providers/dialects.py`), a malformed request as the API's 4xx."""
    dialect = DIALECT_OF_API[api]
    if isinstance(err, ProviderError):
        return error_json(dialect, as_dialect(dialect, err, window, total, streamed), rid)
    etype = err.type
    if api == GEMINI:
        etype = err.type if err.type in GOOGLE_STATUS.values() else GOOGLE_STATUS.get(err.status, "INTERNAL")
    elif api != ANTHROPIC:
        etype = "invalid_request_error" if err.status < 500 else "server_error"
    code = err.code or ""
    rejected = ProviderError(err.status, etype, err.message, "invalid", False, code=code, param=err.param)
    return error_json(dialect, rejected, rid)
