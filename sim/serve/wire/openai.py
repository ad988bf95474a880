"""OpenAI Chat Completions and Responses request bodies → content model (providers.md §2.3-§2.5).

Leading `system` / `developer` messages (and Responses `instructions`) form the system segment;
later ones are user-role blocks. Chat content parts may carry OpenRouter-style `cache_control`
(H-23: Claude through OpenRouter); the tool objects and tool calls may too. Responses items of
types this server does not model (web search calls, compaction items, …) are kept as blocks
counted as their JSON, so whatever a harness sends still has a place in the prefix.
"""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.content import TEXT, THINKING, TOOL_RESULT, TOOL_USE
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.serve.wire.common import (
    CHAT,
    RESPONSES,
    Parsed,
    _Builder,
    bad,
    canon,
    lang_of,
    list_,
    max_tokens_of,
    model_of,
    obj,
    session_of,
    str_,
    stream_of,
)


def _data_url(url: str, where: str) -> str:
    if not url.startswith("data:") or ";base64," not in url:
        raise bad(f"{where}: only base64 data URLs are read by this server", "messages")
    return url.split(";base64,", 1)[1]


def _chat_part(bd: _Builder, role: str, p: dict[str, Any], where: str) -> None:
    t = p.get("type")
    body = {k: v for k, v in p.items() if k != "cache_control"}
    if t == "text":
        text = str_(p.get("text"), f"{where}.text")
        bd.add(bd.block(TEXT, role, body, text, lang_of(text)), p, where)
        if role == "user":
            bd.last_user_text = text
    elif t == "image_url":
        iu = p.get("image_url")
        url = iu.get("url") if isinstance(iu, dict) else iu
        bd.add(bd.image(role, _data_url(str_(url, f"{where}.image_url.url"), where), where), p, where)
    elif t in ("input_audio", "file", "refusal"):
        text = canon(body)
        bd.add(bd.block(TEXT, role, body, text, "json"), p, where)
    else:
        raise bad(
            f"Invalid value: '{t}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', "
            "and 'file'.",
            where,
        )


def _chat_content(bd: _Builder, role: str, content: Any, where: str) -> None:
    if content is None:
        return
    if isinstance(content, str):
        bd.add(bd.block(TEXT, role, content, content, lang_of(content)), None, where)
        if role == "user":
            bd.last_user_text = content
        return
    for j, part in enumerate(list_(content, f"{where}.content")):
        _chat_part(bd, role, obj(part, f"{where}.content[{j}]"), f"{where}.content[{j}]")


def parse_chat(body: dict[str, Any], headers: dict[str, str], factory: BlockFactory) -> Parsed:
    model = model_of(body)
    if "messages" not in body:
        raise bad("Missing required parameter: 'messages'.", "messages")
    msgs = list_(body["messages"], "messages")
    if not msgs:
        raise bad(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, "
            "but got an empty array instead.",
            "messages",
        )
    bd = _Builder(factory)
    names = []
    for i, tool in enumerate(list_(body.get("tools") or [], "tools")):
        t = obj(tool, f"tools[{i}]")
        fn = t.get("function")
        names.append(str(fn.get("name", "")) if isinstance(fn, dict) else str(t.get("name", "")))
        bd.tool_def(t, f"tools[{i}]")
    leading = True
    for m, msg in enumerate(msgs):
        where = f"messages[{m}]"
        mo = obj(msg, where)
        role = mo.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool", "function"):
            raise bad(
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', "
                "'tool', and 'developer'.",
                f"{where}.role",
            )
        if role in ("system", "developer") and leading:
            content = mo.get("content")
            if isinstance(content, str):
                bd.add(bd.block(TEXT, "system", content, content, lang_of(content)), None, where, "system")
            else:
                for j, part in enumerate(list_(content, f"{where}.content")):
                    p = obj(part, f"{where}.content[{j}]")
                    text = str_(p.get("text"), f"{where}.content[{j}].text")
                    payload = {k: v for k, v in p.items() if k != "cache_control"}
                    bd.add(bd.block(TEXT, "system", payload, text, lang_of(text)), p, where, "system")
            continue
        leading = False
        if role in ("tool", "function"):
            content = mo.get("content", "")
            text = (
                content
                if isinstance(content, str)
                else "".join(str(obj(p, where).get("text", "")) for p in list_(content, f"{where}.content"))
            )
            tid = str(mo.get("tool_call_id", mo.get("name", "")))
            payload = {k: v for k, v in mo.items() if k != "cache_control"}
            if isinstance(
                content, list
            ):  # cache_control on a text part of a tool message: a marker, not content
                payload["content"] = [
                    bd.strip(p, ("cur", len(bd.cur)), where) if isinstance(p, dict) else p for p in content
                ]
            bd.add(bd.block(TOOL_RESULT, "user", payload, text, lang_of(text), tool_id=tid), mo, where)
            bd.end_message("user", "tool")
            continue
        brole = "assistant" if role == "assistant" else "user"
        _chat_content(bd, brole, mo.get("content"), where)
        if role == "assistant":
            for k, call in enumerate(list_(mo.get("tool_calls") or [], f"{where}.tool_calls")):
                c = obj(call, f"{where}.tool_calls[{k}]")
                fn = obj(c.get("function"), f"{where}.tool_calls[{k}].function")
                args = str_(fn.get("arguments", ""), f"{where}.tool_calls[{k}].function.arguments")
                payload = {kk: v for kk, v in c.items() if kk != "cache_control"}
                blk = bd.block(
                    TOOL_USE,
                    "assistant",
                    payload,
                    args,
                    "json",
                    name=str(fn.get("name", "")),
                    tool_id=str(c.get("id", "")),
                )
                bd.add(blk, c, f"{where}.tool_calls[{k}]")
        bd.end_message(brole, "system" if role in ("system", "developer") else "")
    tr, bps = bd.finish(None)
    so = body.get("stream_options")
    include = isinstance(so, dict) and so.get("include_usage") is True
    rf = body.get("response_format")
    parsed = Parsed(
        CHAT,
        model,
        stream_of(body),
        tr,
        bps,
        max_tokens_of(body, ("max_completion_tokens", "max_tokens"), False),
        include,
        body.get("prompt_cache_key") if isinstance(body.get("prompt_cache_key"), str) else None,
        session_of(headers, body) or "default",
        tuple(names),
        bd.last_user_text,
        isinstance(rf, dict) and rf.get("type") in ("json_object", "json_schema"),
        bd.msgs,
    )
    parsed.tool_params = bd.tool_params
    parsed.xml_tools = bd.xml_tools
    return parsed


def _resp_content(bd: _Builder, role: str, content: Any, where: str, segment: str = "messages") -> None:
    if isinstance(content, str):
        bd.add(bd.block(TEXT, role, content, content, lang_of(content)), None, where, segment)
        if role == "user":
            bd.last_user_text = content
        return
    for j, part in enumerate(list_(content, f"{where}.content")):
        p = obj(part, f"{where}.content[{j}]")
        t = p.get("type")
        if t in ("input_text", "output_text", "text", "summary_text", "reasoning_text"):
            text = str_(p.get("text"), f"{where}.content[{j}].text")
            bd.add(bd.block(TEXT, role, p, text, lang_of(text)), None, where, segment)
            if role == "user":
                bd.last_user_text = text
        elif t == "input_image":
            url = str_(p.get("image_url"), f"{where}.content[{j}].image_url")
            bd.add(bd.image(role, _data_url(url, where), where), None, where, segment)
        else:
            text = canon(p)
            bd.add(bd.block(TEXT, role, p, text, "json"), None, where, segment)


def parse_responses(body: dict[str, Any], headers: dict[str, str], factory: BlockFactory) -> Parsed:
    model = model_of(body)
    bd = _Builder(factory)
    names = []
    for i, tool in enumerate(list_(body.get("tools") or [], "tools")):
        t = obj(tool, f"tools[{i}]")
        names.append(str(t.get("name", t.get("type", ""))))
        bd.tool_def(t, f"tools[{i}]")
    instr = body.get("instructions")
    if instr is not None:
        text = str_(instr, "instructions")
        bd.add(bd.block(TEXT, "system", text, text, lang_of(text)), None, "instructions", "system")
    inp = body.get("input", [])
    items = [{"role": "user", "content": inp}] if isinstance(inp, str) else list_(inp, "input")
    leading = True
    thinking = False  # a reasoning item opened the assistant turn its next output items complete
    for n, item in enumerate(items):
        where = f"input[{n}]"
        it = obj(item, where)
        kind: Any = it.get("type", "message" if "role" in it else None)
        turn = kind in ("function_call", "custom_tool_call", "reasoning") or it.get("role") == "assistant"
        if thinking and not turn:
            bd.end_message("assistant")
        thinking = kind == "reasoning"
        if kind == "message":
            role = it.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise bad(
                    f"Invalid value: '{role}'. Supported values are: 'assistant', 'system', 'developer', "
                    "and 'user'.",
                    f"{where}.role",
                )
            if role in ("system", "developer") and leading:
                _resp_content(bd, "system", it.get("content", ""), where, "system")
                continue
            leading = False
            brole = "assistant" if role == "assistant" else "user"
            _resp_content(bd, brole, it.get("content", ""), where)
            bd.end_message(brole)
            continue
        leading = False
        if kind in ("function_call", "custom_tool_call"):
            args = it.get("arguments", it.get("input", ""))
            text = args if isinstance(args, str) else canon(args)
            bd.add(
                bd.block(
                    TOOL_USE,
                    "assistant",
                    it,
                    text,
                    "json",
                    name=str(it.get("name", "")),
                    tool_id=str(it.get("call_id", "")),
                ),
                None,
                where,
            )
            bd.end_message("assistant")
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out = it.get("output", "")
            text = out if isinstance(out, str) else canon(out)
            bd.add(
                bd.block(TOOL_RESULT, "user", it, text, lang_of(text), tool_id=str(it.get("call_id", ""))),
                None,
                where,
            )
            bd.end_message("user")
        elif kind == "reasoning":  # one assistant message with the call or text that follows it
            text = str(it.get("encrypted_content") or canon(it.get("summary", [])))
            bd.add(bd.block(THINKING, "assistant", it, text, "prose"), None, where)
        elif isinstance(kind, str) and kind:
            text = canon(it)
            bd.add(bd.block(TEXT, "user", it, text, "json"), None, where)
            bd.end_message("user")
        else:
            raise bad(f"{where}: Missing required parameter: 'type'.", f"{where}.type")
    bd.end_message("assistant")  # a reasoning item the input ends with
    tr, bps = bd.finish(None)
    key = body.get("prompt_cache_key")
    text_fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    parsed = Parsed(
        RESPONSES,
        model,
        stream_of(body),
        tr,
        bps,
        max_tokens_of(body, ("max_output_tokens",), False),
        True,
        key if isinstance(key, str) else None,
        session_of(headers, body) or "default",
        tuple(names),
        bd.last_user_text,
        isinstance(text_fmt, dict) and text_fmt.get("type") == "json_schema",
        bd.msgs,
    )
    parsed.tool_params = bd.tool_params
    parsed.xml_tools = bd.xml_tools
    return parsed
