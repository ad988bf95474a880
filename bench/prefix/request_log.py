"""Request logs for the prefix check: read them, normalize them, and produce them from a simulation.

A log is one JSON request body per line: Anthropic Messages, OpenAI Chat Completions or OpenAI
Responses, bare or wrapped (`{"body": ...}`, or claude-trace's `{"request": {"headers", "body"}}`,
traces-real/FORMATS.md §2.2). Every request is normalized to one flat list of blocks in cache
order tools → system → messages (providers.md §1.1); a block's identity is its segment, position,
role and content with every `cache_control` marker removed (markers move each turn and are not
content, DESIGN.md "What real request logs look like").

Session ids, where present, as the server reads them (`sim/serve/wire.session_of`): a wrapper's
`session_id`, a session header, the body's session fields, `prompt_cache_key`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxbench.sim.core.content import BILLING_HEADER, IMAGE, THINKING, TOOL_DEF, TOOL_RESULT, TOOL_USE, Block
from ctxbench.sim.core.provider import Request
from ctxbench.sim.serve.wire import session_of

TEXT_TYPES = ("text", "input_text", "output_text")


@dataclass(frozen=True, slots=True)
class LBlock:
    """One normalized block: where it is, whose it is, and its content bytes (`payload`: the text
    of a text block, canonical JSON otherwise)."""

    segment: str  # tools | system | messages
    message: int | None  # index in the request's messages (None for tools and system)
    index: int  # block index within its message (or within the tools / system segment)
    role: str
    payload: bytes
    is_text: bool = True


@dataclass
class LoggedRequest:
    line: int  # 1-based line of the log (0 when the request has no line of its own)
    blocks: list[LBlock]
    n_messages: int
    model: str = ""
    session: str | None = None
    declared: str = ""  # edits the producer declared before this request (compaction, eviction, trim)
    kind: str = ""  # what the producer made it for, when known (gameplay, summary, ...)
    label: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


# Claude Code's billing-header system block (sim/core/content.py BILLING_HEADER) is no part of the cache
# key (AnthropicConfig.skip_billing_header cites the evidence). Its `cch=<hash>;` changes with every
# request (2.1.120 against `ctxbench serve`): compared without it, so that it is no prefix break;
# its `cc_version` fingerprint, which changes with a new conversation, is kept (and named there).
_BILLING_HEADER = BILLING_HEADER.encode()
_CCH = re.compile(rb"cch=[0-9A-Za-z]*;?")


def _strip(obj: Any) -> Any:
    """Drop `cache_control` at any depth (markers are not content)."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of a string; a lone surrogate (JSON allows `\\ud800`) is kept, not an error."""
    return text.encode("utf-8", "surrogatepass")


def _canon(obj: Any) -> bytes:
    return _utf8(json.dumps(_strip(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _content_blocks(content: Any) -> list[tuple[bytes, bool]]:
    """(payload, is_text) of each part of a message content (a string is one text block)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [(_utf8(content), True)]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return [(_canon(content), False)]
    out = []
    for part in content:
        if isinstance(part, str):
            out.append((_utf8(part), True))
        elif (
            isinstance(part, dict)
            and part.get("type") in TEXT_TYPES
            and isinstance(part.get("text"), str)
            and set(_strip(part)) <= {"type", "text"}
        ):
            out.append((_utf8(part["text"]), True))
        else:
            out.append((_canon(part), False))
    return out


def _text_part(p: Any) -> Any:
    """A Gemini `{"text": …}` part as a text block; any other part as it is."""
    return {"type": "text", "text": p["text"]} if isinstance(p, dict) and set(p) == {"text"} else p


def _gemini(body: dict[str, Any], where: str) -> dict[str, Any]:
    """A Gemini API body (`contents`, `systemInstruction`, `tools[].functionDeclarations`) in the
    Messages shape: one tool block per declaration, the system parts, one message per content with
    its parts as blocks (text parts as text). The model is in the request's path, not the body."""
    tools: list[Any] = []
    for t in body.get("tools") or []:
        decls = t.get("functionDeclarations") if isinstance(t, dict) else None
        tools += decls if isinstance(decls, list) else [t]
    si = body.get("systemInstruction")
    parts = si.get("parts") if isinstance(si, dict) else si
    system = [_text_part(p) for p in parts or []] if isinstance(parts, list) else [parts]
    contents = body["contents"]
    if not isinstance(contents, list):
        raise ValueError(f"{where}: field 'contents': expected a list")
    messages = []
    for n, c in enumerate(contents):
        if not isinstance(c, dict):
            raise ValueError(f"{where}: content {n}: expected an object")
        ps = c.get("parts") or []
        ps = [_text_part(p) for p in ps] if isinstance(ps, list) else ps
        messages.append({"role": c.get("role", "user"), "content": ps})
    return {"tools": tools, "system": system or None, "messages": messages}


def normalize(body: dict[str, Any], where: str = "<body>") -> tuple[list[LBlock], int]:
    """Blocks of an Anthropic / Chat Completions / Responses / Gemini body, and its message count."""
    if not isinstance(body, dict):
        raise ValueError(f"{where}: a request body must be a JSON object")
    if "contents" in body and "messages" not in body and "input" not in body:
        body = _gemini(body, where)
    blocks: list[LBlock] = []
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"{where}: field 'tools': expected a list")
    for i, t in enumerate(tools):
        blocks.append(LBlock("tools", None, i, "tools", _canon(t), False))
    sys_parts: list[tuple[bytes, bool]] = []
    for key in ("system", "instructions"):
        if body.get(key) is not None:
            sys_parts += _content_blocks(body[key])
    msgs: list[tuple[str, list[tuple[bytes, bool]]]] = []
    if "messages" in body:
        items = body["messages"]
        if not isinstance(items, list):
            raise ValueError(f"{where}: field 'messages': expected a list")
    elif "input" in body:
        items = body["input"]
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list):
            raise ValueError(f"{where}: field 'input': expected a string or a list")
    else:
        raise ValueError(f"{where}: not a request body (no 'messages', 'input' or 'contents' field)")
    for n, m in enumerate(items):
        if not isinstance(m, dict):
            raise ValueError(f"{where}: message {n}: expected an object")
        role = m.get("role")
        if role in ("system", "developer") and not msgs:
            sys_parts += _content_blocks(m.get("content"))  # leading system messages: static prefix
            continue
        if role is None:  # a Responses item (function_call, function_call_output, reasoning, ...)
            msgs.append((str(m.get("type", "item")), [(_canon(m), False)]))
            continue
        parts = _content_blocks(m.get("content"))
        calls = m.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ValueError(f"{where}: field 'messages[{n}].tool_calls': expected a list")
        for tc in calls:
            parts.append((_canon(tc), False))
        if role == "tool":
            role = f"tool:{m.get('tool_call_id', '')}"
        msgs.append((str(role), parts))
    for i, (p, is_text) in enumerate(sys_parts):
        if is_text and p.startswith(_BILLING_HEADER):
            p = _CCH.sub(b"cch=*;", p)
        blocks.append(LBlock("system", None, i, "system", p, is_text))
    for mi, (role, parts) in enumerate(msgs):
        for bi, (p, is_text) in enumerate(parts):
            blocks.append(LBlock("messages", mi, bi, role, p, is_text))
    return blocks, len(msgs)


def parse_line(obj: Any, line: int, where: str) -> LoggedRequest:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object per line")
    headers: dict[str, Any] = {}
    body: Any = obj
    if isinstance(obj.get("request"), dict) and isinstance(obj["request"].get("body"), dict):
        headers = obj["request"].get("headers") or {}
        body = obj["request"]["body"]
    elif isinstance(obj.get("body"), dict):
        headers = obj.get("headers") or {}
        body = obj["body"]
    blocks, n_msgs = normalize(body, where)
    model = body.get("model") or (obj.get("model") if body is not obj else None)  # a ledger's (Gemini)
    return LoggedRequest(
        line,
        blocks,
        n_msgs,
        str(model or ""),
        session_of(headers if isinstance(headers, dict) else {}, body, obj),
        str(obj.get("declared", "")) if body is not obj else "",
        str(obj.get("kind", "")) if body is not obj else "",
        str(obj.get("label", "")) if body is not obj else "",
    )


def refused(obj: Any) -> bool:
    """A `ctxbench serve` / `proxy` ledger line of a request the API refused (status other than
    200: a wrong method, an unknown model, bad JSON): the model never saw it, there is no prefix."""
    return (
        isinstance(obj, dict) and "seq" in obj and isinstance(obj.get("status"), int) and obj["status"] != 200
    )


def read_request_log(
    lines: Iterable[str | bytes], path: str = "<log>", skipped: list[int] | None = None
) -> list[LoggedRequest]:
    """Every request of a log (text lines, or raw lines as read in binary mode); a line that is not
    UTF-8, not JSON or not a request body is a ValueError naming the file, the line and the field.
    Ledger lines of refused requests are left out; their line numbers go to `skipped`."""
    out = []
    for n, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{path}:{n}: not valid UTF-8 (byte {e.start} of the line)") from None
        else:
            text = line
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except RecursionError:
            raise ValueError(f"{path}:{n}: JSON nested too deeply") from None
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not JSON ({exc.args[0]})") from None
        if refused(obj):
            if skipped is not None:
                skipped.append(n)
            continue
        try:
            out.append(parse_line(obj, n, f"{path}:{n}"))
        except RecursionError:
            raise ValueError(f"{path}:{n}: JSON nested too deeply") from None
    return out


# ------------------------------------------------------------------ simulated logs
def block_json(b: Block) -> dict[str, Any]:
    """A content block in the Anthropic Messages shape; content known only by size is written as
    its digest so equal content stays equal and changed content differs."""
    text = b.text if b.text is not None else f"<ctxbench {b.kind} {b.nbytes} bytes digest {b.digest:016x}>"
    if b.kind == IMAGE:
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/jpeg",
                "data": f"<{b.width}x{b.height} digest {b.digest:016x}>",
            },
        }
    if b.kind == TOOL_USE:
        return {"type": "tool_use", "id": b.tool_id, "name": b.name, "input": {"_ctxbench": text}}
    if b.kind == TOOL_RESULT:
        return {"type": "tool_result", "tool_use_id": b.tool_id, "content": [{"type": "text", "text": text}]}
    if b.kind == THINKING:
        return {"type": "thinking", "thinking": text, "signature": ""}
    if b.kind == TOOL_DEF:
        return {"name": b.name, "description": text, "input_schema": {"type": "object"}}
    return {"type": "text", "text": text}


def request_body(req: Request) -> dict[str, Any]:
    """The Anthropic Messages body of a simulated request, cache marks as `cache_control`."""
    tr, n = req.tr, req.n
    marks = dict(req.breakpoints)
    items: list[dict[str, Any]] = []
    for i in range(n):
        d = block_json(tr.blocks[i])
        if i in marks:
            d["cache_control"] = {"type": "ephemeral", "ttl": marks[i]}
        items.append(d)
    body: dict[str, Any] = {"model": req.model, "max_tokens": req.output_tokens}
    body["tools"] = items[: min(n, tr.tools_end)]
    body["system"] = items[tr.tools_end : min(n, tr.system_end)]
    messages = []
    for m, start in enumerate(tr.msg_starts):
        if start >= n:
            break
        end = min(tr.message_end(m), n)
        messages.append({"role": tr.messages[m].role, "content": items[start:end]})
    body["messages"] = messages
    if req.session_id:
        body["metadata"] = {"session_id": req.session_id}
    return body


def simulated_log(
    trace: Any, policy: Any, provider: str | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """Wrapped request bodies of one simulated run of `trace` (a Trace, or one already prepared),
    in call order, each with the conversation as its session id, the edits the harness declared
    before it, and its kind."""
    from ctxbench.sim.prepared import PreparedTrace
    from ctxbench.sim.runner import prepare_for, run_prepared

    captured: list[tuple[str, int, dict[str, Any]]] = []

    def on_call(req: Request, _out: object) -> None:
        captured.append((req.conversation, req.index, request_body(req)))

    prep = trace if isinstance(trace, PreparedTrace) else prepare_for(trace)
    res = run_prepared([prep], policy, provider or policy.provider, seed, on_call=on_call)
    recs = {(r.conversation, r.index): r for r in res.records}
    out = []
    for conv, idx, body in captured:
        r = recs.get((conv, idx))
        out.append(
            {
                "session_id": conv,
                "label": f"{conv}#{idx}",
                "kind": r.kind if r else "",
                "declared": r.edit if r else "",
                "body": body,
            }
        )
    return out


def dump_log(entries: Iterable[dict[str, Any]]) -> Iterator[str]:
    for e in entries:
        yield json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def trace_log(trace: Any) -> list[dict[str, Any]]:
    """The request log a trace implies by itself: each assistant message answers a request whose
    prompt is everything before it (traces/model.py); a recorded compaction replaces the messages
    before `kept_from` with its summary and is declared on the next request."""
    from ctxbench.policies.recorded import kept_messages
    from ctxbench.sim.build import block_of
    from ctxbench.sim.core.content import Message
    from ctxbench.sim.core.transcript import Transcript
    from ctxbench.sim.runner import prepare_for
    from ctxbench.traces.model import CompactionEvent

    prep = prepare_for(trace)
    tr = Transcript(prep.tools, prep.system)
    model, declared = prep.model, ""
    out: list[dict[str, Any]] = []
    factory = None
    seen = 0  # the trace's messages so far (what `kept_from` counts)
    for n, step in enumerate(prep.steps):
        seen += step.kind in ("message", "reply") and step.message is not None
        if step.kind == "message" and step.message is not None:
            tr.append(step.message)
        elif step.kind == "reply" and step.message is not None:
            req = Request(tr, len(tr), model, step.output_tokens)
            out.append(
                {
                    "session_id": "trace",
                    "label": f"reply {len(out)}",
                    "kind": "recorded",
                    "declared": declared,
                    "body": request_body(req),
                }
            )
            declared = ""
            tr.append(step.message)
        elif step.kind == "switch":
            model = step.model or model
        elif step.kind == "compaction" and isinstance(step.event, CompactionEvent):
            if factory is None:
                from ctxbench.sim.runner import factory_for

                factory = factory_for(model)
            ev = step.event
            summary = tuple(
                block_of(factory, c, "user", f"compaction{n}.{j}") for j, c in enumerate(ev.summary)
            )
            keep = seen - ev.kept_from if ev.kept_from is not None else 0
            kept = list(kept_messages(tr.messages, 0, keep)[0])
            new = ([Message.of("user", summary, "summary")] if summary else []) + kept
            tr.replace_from(0, new)
            declared = "compaction"
    return out
