"""Anthropic Messages request bodies → content model (providers.md §1.1, §1.2; ecosystem.md §6).

Accepted like the real API and the recordings of ecosystem.md §6: `system` as a string or text
blocks, `role: "system"` entries inside `messages` (Claude Code), unknown top-level keys
(`context_management`, `output_config`, `metadata`, `thinking`), top-level `cache_control`
(automatic caching: the last block, §1.2). A `tool_result` whose content holds images is one
tool_result block followed by one image block per image (each image is its own cache position).
"""

from __future__ import annotations

from typing import Any

from ctxbench.sim.core.content import IMAGE, TEXT, THINKING, TOOL_RESULT, TOOL_USE
from ctxbench.sim.core.names import is_ttl
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.serve.wire.common import (
    ANTHROPIC,
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

BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "search_result",
    "container_upload",
)


def _text_parts(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    out = []
    for i, part in enumerate(list_(content, where)):
        p = obj(part, f"{where}.{i}")
        if p.get("type") == "text":
            out.append(str_(p.get("text"), f"{where}.{i}.text"))
    return "".join(out)


def _image_data(b: dict[str, Any], where: str) -> str:
    src = obj(b.get("source"), f"{where}.source")
    if src.get("type") == "base64":
        return str_(src.get("data"), f"{where}.source.data")
    if src.get("type") == "url":  # no bytes to read: hash the URL, size unknown → refuse like a bad image
        raise bad(f"{where}.source: URL images are not fetched by this server; send base64 data")
    raise bad(f"{where}.source.type: Input tag does not match any of the expected tags: 'base64', 'url'")


def _content_block(bd: _Builder, role: str, b: dict[str, Any], where: str) -> None:
    t = b.get("type")
    if t not in BLOCK_TYPES:
        raise bad(
            f"{where}: Input tag '{t}' found using 'type' does not match any of the expected tags: "
            + ", ".join(f"'{x}'" for x in BLOCK_TYPES)
        )
    body = {k: v for k, v in b.items() if k != "cache_control"}
    if t == "text":
        text = str_(b.get("text"), f"{where}.text")
        if text == "" and "cache_control" in b:
            raise bad(f"{where}.text: cache_control cannot be set for empty text blocks")
        bd.add(bd.block(TEXT, role, body, text, lang_of(text)), b, where)
        if role == "user":
            bd.last_user_text = text
    elif t == "image":
        bd.add(bd.image(role, _image_data(b, where), where), b, where)
    elif t == "tool_use":
        inp = obj(b.get("input", {}), f"{where}.input")
        tid = str_(b.get("id", ""), f"{where}.id")
        name = str_(b.get("name", ""), f"{where}.name")
        bd.add(bd.block(TOOL_USE, role, body, canon(inp), "json", name=name, tool_id=tid), b, where)
    elif t == "tool_result":
        tid = str_(b.get("tool_use_id", ""), f"{where}.tool_use_id")
        content = b.get("content", "")
        images: list[str] = []
        if isinstance(content, list):
            for i, part in enumerate(content):
                p = obj(part, f"{where}.content.{i}")
                if p.get("type") == "image":
                    images.append(_image_data(p, f"{where}.content.{i}"))
        elif not isinstance(content, str):
            raise bad(f"{where}.content: Input should be a valid string or list")
        text = _text_parts(content, f"{where}.content")
        bd.add(bd.block(TOOL_RESULT, role, body, text, lang_of(text), tool_id=tid), b, where)
        for i, data in enumerate(images):
            bd.add(bd.image(role, data, f"{where}.content.{i}"), None, where)
    elif t in ("thinking", "redacted_thinking"):
        text = str(b.get("thinking", b.get("data", "")))
        bd.add(bd.block(THINKING, role, body, text, "prose"), b, where)
    else:  # document, server tool blocks, search results: counted as their JSON
        text = canon(body)
        bd.add(bd.block(TEXT, role, body, text, "json"), b, where)


def parse_anthropic(body: dict[str, Any], headers: dict[str, str], factory: BlockFactory) -> Parsed:
    model = model_of(body)
    mt = max_tokens_of(body, ("max_tokens",), True)
    if "messages" not in body:
        raise bad("messages: Field required")
    messages = list_(body["messages"], "messages")
    bd = _Builder(factory)
    names: list[str] = []
    for i, tool in enumerate(list_(body.get("tools") or [], "tools")):
        t = obj(tool, f"tools.{i}")
        names.append(str(t.get("name", "")))
        bd.tool_def(t, f"tools.{i}")
    system = body.get("system")
    if isinstance(system, str):
        if system:
            bd.add(bd.block(TEXT, "system", system, system, lang_of(system)), None, "system", "system")
    elif system is not None:
        for i, sb in enumerate(list_(system, "system")):
            b = obj(sb, f"system.{i}")
            if b.get("type") != "text":
                raise bad(
                    f"system.{i}.type: Input tag '{b.get('type')}' found using 'type' does not match 'text'"
                )
            text = str_(b.get("text"), f"system.{i}.text")
            payload = {k: v for k, v in b.items() if k != "cache_control"}
            bd.add(bd.block(TEXT, "system", payload, text, lang_of(text)), b, f"system.{i}", "system")
    for m, msg in enumerate(messages):
        where = f"messages.{m}"
        mo = obj(msg, where)
        role = mo.get("role")
        if role not in ("user", "assistant", "system"):
            raise bad(f"{where}.role: Input should be 'user' or 'assistant'")
        brole = "user" if role == "system" else str(role)
        content = mo.get("content")
        if isinstance(content, str):
            if content == "" and role != "assistant":
                raise bad(f"{where}: user messages must have non-empty content")
            bd.add(bd.block(TEXT, brole, content, content, lang_of(content)), None, where)
            if brole == "user":
                bd.last_user_text = content
        else:
            for j, b in enumerate(list_(content, f"{where}.content")):
                _content_block(bd, brole, obj(b, f"{where}.content.{j}"), f"{where}.content.{j}")
        bd.end_message(brole, "system" if role == "system" else "")
    auto = None
    top = body.get("cache_control")
    if top is not None:
        cc = obj(top, "cache_control")
        if cc.get("type") != "ephemeral":
            raise bad("cache_control.type: Input should be 'ephemeral'")
        ttl = cc.get("ttl", "5m")
        if not is_ttl(ttl):
            raise bad("cache_control.ttl: Input should be '5m' or '1h'")
        auto = ttl
    tr, bps = bd.finish(auto)
    oc = body.get("output_config")
    wants_json = isinstance(oc, dict) and isinstance(oc.get("format"), dict)
    parsed = Parsed(
        ANTHROPIC,
        model,
        stream_of(body),
        tr,
        bps,
        mt,
        False,
        None,
        session_of(headers, body) or "default",
        tuple(names),
        bd.last_user_text,
        wants_json,
        bd.msgs,
    )
    parsed.tool_params = bd.tool_params
    parsed.xml_tools = bd.xml_tools
    return parsed


__all__ = ["IMAGE", "parse_anthropic"]


def fast_mode(body: Any, requested: Any) -> str:
    """The `speed` a Messages request asks for: "standard" (the default) or "fast", which runs and
    bills the model as its `-fast` row with a cache of its own (providers.md §1.6 "Speed setting";
    sim/core/catalog.py `resolve` rule 6). Another value, or fast mode on a model without fast prices, is
    the API's 400 invalid_request_error."""
    speed = body.get("speed", "standard") if isinstance(body, dict) else "standard"
    if speed not in ("standard", "fast"):
        raise bad("speed: Input should be 'standard' or 'fast'", "speed")
    if speed == "fast":
        from ctxbench.sim.core.catalog import CatalogError, prices

        try:
            prices(f"{requested}-fast")
        except CatalogError:
            raise bad(f"speed: fast mode is not available for model {requested}", "speed") from None
    return str(speed)
