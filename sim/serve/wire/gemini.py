"""Gemini API request bodies (`generateContent`, `streamGenerateContent`, `countTokens`) → content
model (providers.md §3).

The model is named by the path (`/v1beta/models/{model}:{method}`), not the body. `tools[]
.functionDeclarations[]` are tool blocks, `systemInstruction.parts` the system segment, `contents`
the messages (role `user` / `model`): `text` parts (a `thought` part too, as thinking), `inlineData`
images, `functionCall` parts as tool calls and `functionResponse` parts as their results; any other
part (`fileData`, `executableCode`, …) is kept as a block counted as its JSON. There are no cache
marks: Gemini caches implicitly (profile `gemini-implicit`); a request naming a `cachedContent`
this server never created is refused as the API refuses an unknown resource.
"""

from __future__ import annotations

import re
from typing import Any

from ctxbench.sim.core.content import TEXT, THINKING, TOOL_RESULT, TOOL_USE
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.serve.wire.common import (
    GEMINI,
    Parsed,
    WireError,
    _Builder,
    bad,
    canon,
    lang_of,
    list_,
    obj,
    session_of,
    str_,
)

# /v1beta/models/gemini-2.5-pro:streamGenerateContent (v1 and v1alpha too)
METHODS = ("generateContent", "streamGenerateContent", "countTokens")
PATH = re.compile(r"/(v1|v1beta|v1alpha)/models/([^/:?]+):(" + "|".join(METHODS) + ")")


def route(path: str) -> tuple[str, str] | None:
    """(model, method) of a Gemini API path, or None."""
    m = PATH.fullmatch(path)
    return (m.group(2), m.group(3)) if m else None


def not_found(model: str, method: str) -> WireError:
    """The API's 404 for a model it does not serve (3P verbatim copies of the message, e.g. google-
    gemini/gemini-cli issues: "models/X is not found for API version v1beta, or is not supported for
    generateContent. Call ListModels to see the list of available models and their supported
    methods.")."""
    return WireError(
        404,
        "NOT_FOUND",
        f"models/{model} is not found for API version v1beta, or is not supported for {method}. "
        "Call ListModels to see the list of available models and their supported methods.",
    )


def _part(bd: _Builder, role: str, p: dict[str, Any], where: str, calls: int) -> int:
    """Add one part; returns the running count of function calls (ids for calls without one)."""
    if "text" in p:
        text = str_(p["text"], f"{where}.text")
        kind = THINKING if p.get("thought") is True else TEXT
        bd.add(bd.block(kind, role, p, text, lang_of(text)), None, where)
        if role == "user" and kind == TEXT:
            bd.last_user_text = text
    elif "inlineData" in p:
        data = obj(p["inlineData"], f"{where}.inlineData")
        mime = str_(data.get("mimeType", ""), f"{where}.inlineData.mimeType")
        b64 = str_(data.get("data", ""), f"{where}.inlineData.data")
        if mime.startswith("image/"):
            bd.add(bd.image(role, b64, where), None, where)
        else:
            bd.add(bd.block(TEXT, role, p, canon(p), "json"), None, where)
    elif "functionCall" in p:
        fc = obj(p["functionCall"], f"{where}.functionCall")
        name = str_(fc.get("name", ""), f"{where}.functionCall.name")
        args = canon(fc.get("args", {}))
        tid = str(fc.get("id") or f"{name}-{calls}")
        bd.add(bd.block(TOOL_USE, "assistant", p, args, "json", name=name, tool_id=tid), None, where)
        return calls + 1
    elif "functionResponse" in p:
        fr = obj(p["functionResponse"], f"{where}.functionResponse")
        name = str_(fr.get("name", ""), f"{where}.functionResponse.name")
        text = canon(fr.get("response", {}))
        tid = str(fr.get("id") or name)
        bd.add(bd.block(TOOL_RESULT, "user", p, text, "json", tool_id=tid), None, where)
    elif p:
        bd.add(bd.block(TEXT, role, p, canon(p), "json"), None, where)
    else:
        oneof = "required oneof field 'data' must have one initialized field"
        raise bad(f"* GenerateContentRequest.{where}.data: {oneof}")
    return calls


def parse_gemini(body: dict[str, Any], headers: dict[str, str], factory: BlockFactory, model: str) -> Parsed:
    """A Gemini request as the content model; `countTokens` bodies may wrap it in
    `generateContentRequest`."""
    if isinstance(body.get("generateContentRequest"), dict):
        body = body["generateContentRequest"]
    if body.get("cachedContent") is not None:
        raise WireError(403, "PERMISSION_DENIED", "CachedContent not found (or permission denied)")
    if "contents" not in body or body["contents"] in (None, []):
        raise bad("* GenerateContentRequest.contents: contents is not specified")
    bd = _Builder(factory)
    names = []
    for i, tool in enumerate(list_(body.get("tools") or [], "tools")):
        t = obj(tool, f"tools[{i}]")
        decls = t.get("functionDeclarations", t.get("function_declarations"))
        if decls is None:  # googleSearch, codeExecution, …: one block each
            bd.tool_def(t, f"tools[{i}]")
            continue
        for j, d in enumerate(list_(decls, f"tools[{i}].functionDeclarations")):
            decl = obj(d, f"tools[{i}].functionDeclarations[{j}]")
            names.append(str(decl.get("name", "")))
            bd.tool_def(decl, f"tools[{i}].functionDeclarations[{j}]")
    si = body.get("systemInstruction", body.get("system_instruction"))
    if si is not None:
        parts = [{"text": si}] if isinstance(si, str) else obj(si, "systemInstruction").get("parts", [])
        for j, part in enumerate(list_(parts, "systemInstruction.parts")):
            p = obj(part, f"systemInstruction.parts[{j}]")
            text = str_(p.get("text", ""), f"systemInstruction.parts[{j}].text")
            bd.add(bd.block(TEXT, "system", p, text, lang_of(text)), None, "systemInstruction", "system")
    calls = 0
    for m, content in enumerate(list_(body["contents"], "contents")):
        where = f"contents[{m}]"
        c = obj(content, where)
        role = c.get("role", "user")
        if role not in ("user", "model", "function"):
            raise bad(f"Please use a valid role: user, model. ({where}.role: {str(role)[:40]!r})")
        brole = "assistant" if role == "model" else "user"
        for j, part in enumerate(list_(c.get("parts", []), f"{where}.parts")):
            calls = _part(bd, brole, obj(part, f"{where}.parts[{j}]"), f"{where}.parts[{j}]", calls)
        bd.end_message(brole)
    tr, bps = bd.finish(None)
    gc = body.get("generationConfig")
    gc = gc if isinstance(gc, dict) else {}
    max_out = gc.get("maxOutputTokens", 0)
    if isinstance(max_out, bool) or not isinstance(max_out, int) or max_out < 0:
        raise bad("* GenerateContentRequest.generation_config.max_output_tokens: must be a positive integer")
    parsed = Parsed(
        GEMINI,
        model,
        False,
        tr,
        bps,
        max_out,
        True,
        None,
        session_of(headers, body) or "default",
        tuple(names),
        bd.last_user_text,
        gc.get("responseMimeType") == "application/json",
        bd.msgs,
    )
    parsed.tool_params = bd.tool_params
    parsed.xml_tools = bd.xml_tools
    return parsed
