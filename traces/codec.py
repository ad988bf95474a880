"""Field-level codec of trace format v1: JSON objects <-> the dataclasses of `ctxbench.traces.model`.

Kept apart from `traces.format` (files, lines, error locations) so that the field tables (`traces.fields`)
are the single source of truth: the decoder rejects any field not listed for its object, the encoder
writes fields in the listed order (so writing is deterministic), and the schema test compares
`traces/schema.json` with these tables. Errors are `FieldError(field, reason)` with a dotted path
such as `content[2].width`; `ctxbench.traces.format` adds the file and line number.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ctxbench.traces.fields import (
    CACHE_TTLS,
    CONTENT_FIELDS,
    EVENT_FIELDS,
    HEADER_FIELDS,
    INTEGER_BOUNDS,
    KINDS_BY_PLACE,
    LANGS,
    LINE_TYPES,
    MAX_TOKENS,
    NUMBER_BOUNDS,
    ROLES,
    TAGS,
    TOOL_FIELDS,
    TRIGGERS,
    USAGE_FIELDS,
    FieldError,
    canonical_json,
    check_unicode,
    show,
)
from ctxbench.traces.model import (
    FORMAT_NAME,
    FORMAT_VERSION,
    CompactionEvent,
    Content,
    Event,
    Header,
    MessageEvent,
    ModelSwitchEvent,
    ResumeEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Usage,
)


class _Obj:
    """A JSON object being decoded: rejects unknown fields, hands out typed values."""

    __slots__ = ("at", "d")

    def __init__(self, value: Any, at: str, allowed: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            raise FieldError(at, f"expected an object, got {show(value)}")
        for k in value:
            if k not in allowed:
                raise FieldError(self._join(at, k), f"unknown field (allowed: {', '.join(allowed)})")
        self.d: dict[str, Any] = value
        self.at = at

    @staticmethod
    def _join(at: str, name: str) -> str:
        return f"{at}.{name}" if at else name

    def f(self, name: str) -> str:
        return self._join(self.at, name)

    def has(self, name: str) -> bool:
        return name in self.d

    def require(self, name: str) -> Any:
        if name not in self.d:
            raise FieldError(self.f(name), "missing required field")
        return self.d[name]

    def string(self, name: str, *, required: bool = False, choices: tuple[str, ...] = ()) -> str:
        v = self.require(name) if required else self.d.get(name, "")
        if not isinstance(v, str):
            raise FieldError(self.f(name), f"expected a string, got {show(v)}")
        if not v.isascii():  # ASCII is always valid Unicode: only other text can hold a lone surrogate
            check_unicode(v, self.f(name))
        if choices and v not in choices:
            raise FieldError(self.f(name), f"expected one of {', '.join(map(repr, choices))}, got {show(v)}")
        if required and not v and not choices:
            raise FieldError(self.f(name), "expected a non-empty string")
        return v

    def integer(self, name: str, *, required: bool = False, positive: bool = False) -> int:
        v = self.require(name) if required else self.d.get(name, 0)
        if not isinstance(v, int) or isinstance(v, bool) or v < (1 if positive else 0):
            kind = "a positive" if positive else "a non-negative"
            raise FieldError(self.f(name), f"expected {kind} integer, got {show(v)}")
        top = INTEGER_BOUNDS.get(name, MAX_TOKENS)
        if v > top:
            raise FieldError(self.f(name), f"expected at most {top}, got {show(v)}")
        return v

    def opt_integer(self, name: str) -> int | None:
        """An optional integer: absent means None; an explicit null is an error like any non-integer."""
        return self.integer(name) if name in self.d else None

    def number(self, name: str) -> float | None:
        if name not in self.d:
            return None
        v = self.d[name]
        if (
            not isinstance(v, int | float)
            or isinstance(v, bool)
            or (isinstance(v, float) and not math.isfinite(v))
            or v < 0
        ):
            raise FieldError(self.f(name), f"expected a non-negative number, got {show(v)}")
        top = NUMBER_BOUNDS.get(name, MAX_TOKENS)
        if v > top:  # compared before float(): an integer past float range cannot overflow here
            raise FieldError(self.f(name), f"expected at most {top:g}, got {show(v)}")
        return float(v)

    def flag(self, name: str) -> bool:
        v = self.d.get(name, False)
        if not isinstance(v, bool):
            raise FieldError(self.f(name), f"expected true or false, got {show(v)}")
        return v

    def array(self, name: str, *, required: bool = False) -> list[Any]:
        v = self.require(name) if required else self.d.get(name, [])
        if not isinstance(v, list):
            raise FieldError(self.f(name), f"expected an array, got {show(v)}")
        return v


# ---------------------------------------------------------------- decoding


def decode_content(value: Any, at: str, kinds: tuple[str, ...]) -> Content:
    """One content item; `kinds` are the kinds allowed where it appears."""
    if not isinstance(value, dict):
        raise FieldError(at, f"expected an object, got {show(value)}")
    kind = value.get("kind")
    if not isinstance(kind, str) or kind not in kinds:  # the checked path names what is wrong
        kind = _Obj(value, at, tuple(value)).string("kind", required=True, choices=kinds)
    o = _Obj(value, at, CONTENT_FIELDS[kind])
    if kind == "image":
        text, nbytes, lang = None, o.integer("bytes", required=True, positive=True), "prose"
    else:
        if o.has("text") == o.has("bytes"):
            raise FieldError(o.f("text"), "expected exactly one of 'text' or 'bytes'")
        text = o.string("text") if o.has("text") else None
        nbytes = 0 if text is not None else o.integer("bytes")
        lang = o.string("lang", choices=LANGS) if o.has("lang") else "prose"
    key = o.string("key")
    if text is None and not key:
        raise FieldError(o.f("key"), "content given as a size needs a non-empty 'key' naming it")
    return Content(
        kind=kind,
        text=text,
        nbytes=nbytes,
        lang=lang,
        key=key,
        width=o.integer("width", required=True, positive=True) if kind == "image" else 0,
        height=o.integer("height", required=True, positive=True) if kind == "image" else 0,
        tool_id=o.string("id" if kind == "tool_use" else "tool_use_id", required=True)
        if kind in ("tool_use", "tool_result")
        else "",
        name=o.string("name", required=True) if kind == "tool_use" else "",
        is_error=o.flag("is_error") if "is_error" in value else False,
        pinned=o.flag("pinned") if "pinned" in value else False,
        skill=o.flag("skill") if "skill" in value else False,
        tokens=o.opt_integer("tokens"),
        cache=o.string("cache", choices=CACHE_TTLS) if o.has("cache") else "",
        turn=o.flag("turn") if "turn" in value else False,
    )


def decode_contents(o: _Obj, name: str, kinds: tuple[str, ...], *, required: bool) -> tuple[Content, ...]:
    items = o.array(name, required=required)
    if required and not items:
        raise FieldError(o.f(name), "expected at least one content item")
    return tuple(decode_content(v, f"{o.f(name)}[{i}]", kinds) for i, v in enumerate(items))


def decode_tool(value: Any, at: str) -> ToolDef:
    o = _Obj(value, at, TOOL_FIELDS)
    name = o.string("name", required=True)
    if o.has("schema") == o.has("bytes"):
        raise FieldError(o.f("schema"), "expected exactly one of 'schema' or 'bytes'")
    schema = o.d.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise FieldError(o.f("schema"), f"expected an object, got {show(schema)}")
    if schema is not None:
        check_unicode(schema, o.f("schema"))
    return ToolDef(
        name=name,
        schema=canonical_json(schema) if schema is not None else None,
        nbytes=o.integer("bytes"),
        mcp=o.flag("mcp"),
        deferred=o.flag("defer_loading"),
    )


def decode_usage(value: Any, at: str) -> Usage:
    o = _Obj(value, at, USAGE_FIELDS)
    return Usage(**{n: o.integer(n) for n in USAGE_FIELDS[:-1]}, cost=o.number("cost"))


def decode_header(d: dict[str, Any]) -> Header:
    o = _Obj(d, "", HEADER_FIELDS)
    if o.require("format") != FORMAT_NAME:
        raise FieldError("format", f"expected {FORMAT_NAME!r}, got {show(d['format'])}")
    version = o.integer("version", required=True)
    if version != FORMAT_VERSION:
        raise FieldError("version", f"unsupported version {version} (this reader reads {FORMAT_VERSION})")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise FieldError("meta", f"expected an object, got {show(meta)}")
    check_unicode(meta, "meta")
    return Header(
        source=o.string("source", required=True),
        harness=o.string("harness"),
        model=o.string("model"),
        window=o.integer("window"),
        version=version,
        meta=meta,
    )


def decode_line(d: Any) -> Header | Event:
    """Decode one parsed line (a JSON value) into a Header or an event."""
    if not isinstance(d, dict):
        raise FieldError("", f"expected a JSON object per line, got {show(d)}")
    if "type" not in d:
        raise FieldError("type", "missing required field")
    kind = d["type"]
    if not isinstance(kind, str) or kind not in LINE_TYPES:
        raise FieldError("type", f"unknown line type {show(kind)} (expected one of: {', '.join(LINE_TYPES)})")
    if kind == "header":
        return decode_header(d)
    o = _Obj(d, "", EVENT_FIELDS[kind])
    t = o.number("t")
    if kind == "system":
        return SystemEvent(
            content=decode_contents(o, "content", KINDS_BY_PLACE["system"], required=True), t=t
        )
    if kind == "tools":
        tools = tuple(decode_tool(v, f"tools[{i}]") for i, v in enumerate(o.array("tools", required=True)))
        seen: set[str] = set()
        for i, tool in enumerate(tools):
            if tool.name in seen:
                raise FieldError(f"tools[{i}].name", f"duplicate tool name {tool.name!r}")
            seen.add(tool.name)
        return ToolsEvent(tools=tools, t=t)
    if kind == "message":
        role = o.string("role", required=True, choices=ROLES)
        if role == "user":
            for name in ("output_tokens", "usage"):
                if o.has(name):
                    raise FieldError(name, "only an assistant message (a reply) carries this field")
        return MessageEvent(
            role=role,
            content=decode_contents(o, "content", KINDS_BY_PLACE[role], required=True),
            tag=o.string("tag", choices=TAGS),
            pinned=o.flag("pinned"),
            t=t,
            game_t=o.number("game_t"),
            output_tokens=o.opt_integer("output_tokens"),
            usage=decode_usage(d["usage"], "usage") if "usage" in d else None,
            request_id=o.string("request_id"),
        )
    if kind == "model_switch":
        return ModelSwitchEvent(model=o.string("model", required=True), window=o.integer("window"), t=t)
    if kind == "resume":
        return ResumeEvent(saved_total=o.opt_integer("saved_total"), t=t)
    return CompactionEvent(
        summary=decode_contents(o, "summary", KINDS_BY_PLACE["summary"], required=False),
        kept_from=o.opt_integer("kept_from"),
        trigger=o.string("trigger", choices=TRIGGERS) if o.has("trigger") else "auto",
        pre_tokens=o.opt_integer("pre_tokens"),
        t=t,
    )


# ---------------------------------------------------------------- encoding


def _sorted(value: Any) -> Any:
    """A JSON value with every object's keys sorted (meta is written canonically)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _put(d: dict[str, Any], name: str, value: Any, default: Any = None) -> None:
    """Set `name` unless `value` is its default (same type and equal), so files stay small."""
    if not (type(value) is type(default) and value == default):
        d[name] = value


def encode_content(c: Content) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": c.kind}
    if c.kind == "tool_use":
        d["id"], d["name"] = c.tool_id, c.name
    elif c.kind == "tool_result":
        d["tool_use_id"] = c.tool_id
    elif c.kind == "image":
        d["width"], d["height"] = c.width, c.height
    if c.text is not None:
        d["text"] = c.text
    else:
        d["bytes"] = c.nbytes
    for name, default in (
        ("lang", "prose"),
        ("key", ""),
        ("is_error", False),
        ("pinned", False),
        ("skill", False),
        ("turn", False),
    ):
        _put(d, name, getattr(c, name), default)
    _put(d, "tokens", c.tokens)
    _put(d, "cache", c.cache, "")
    return d


def encode_tool(tool: ToolDef, at: str) -> dict[str, Any]:
    d: dict[str, Any] = {"name": tool.name}
    if tool.schema is not None:
        try:
            d["schema"] = json.loads(tool.schema)
        except ValueError:
            raise FieldError(f"{at}.schema", "tool schema text is not valid JSON") from None
    else:
        d["bytes"] = tool.nbytes
    _put(d, "mcp", tool.mcp, False)
    _put(d, "defer_loading", tool.deferred, False)
    return d


def encode_usage(u: Usage) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for name in USAGE_FIELDS[:-1]:
        _put(d, name, getattr(u, name), 0)
    _put(d, "cost", u.cost)
    return d


def encode_line(item: Header | Event) -> dict[str, Any]:
    """The JSON object of one line, default-valued fields omitted, fields in table order."""
    d: dict[str, Any] = {}
    if isinstance(item, Header):
        d.update(type="header", format=FORMAT_NAME, version=item.version, source=item.source)
        _put(d, "harness", item.harness, "")
        _put(d, "model", item.model, "")
        _put(d, "window", item.window, 0)
        _put(d, "meta", _sorted(item.meta), {})
    elif isinstance(item, SystemEvent | ToolsEvent):
        d["type"] = "system" if isinstance(item, SystemEvent) else "tools"
        _put(d, "t", item.t)
        if isinstance(item, SystemEvent):
            d["content"] = [encode_content(c) for c in item.content]
        else:
            d["tools"] = [encode_tool(x, f"tools[{i}]") for i, x in enumerate(item.tools)]
    elif isinstance(item, MessageEvent):
        d.update(type="message", role=item.role)
        _put(d, "tag", item.tag, "")
        _put(d, "pinned", item.pinned, False)
        _put(d, "t", item.t)
        _put(d, "game_t", item.game_t)
        _put(d, "output_tokens", item.output_tokens)
        _put(d, "usage", encode_usage(item.usage) if item.usage is not None else None)
        _put(d, "request_id", item.request_id, "")
        d["content"] = [encode_content(c) for c in item.content]
    elif isinstance(item, ModelSwitchEvent):
        d.update(type="model_switch", model=item.model)
        _put(d, "window", item.window, 0)
        _put(d, "t", item.t)
    elif isinstance(item, ResumeEvent):
        d["type"] = "resume"
        _put(d, "saved_total", item.saved_total)
        _put(d, "t", item.t)
    elif isinstance(item, CompactionEvent):
        d["type"] = "compaction"
        _put(d, "trigger", item.trigger, "auto")
        _put(d, "kept_from", item.kept_from)
        _put(d, "pre_tokens", item.pre_tokens)
        _put(d, "t", item.t)
        _put(d, "summary", [encode_content(c) for c in item.summary], [])
    else:
        raise FieldError("type", f"not a trace event: {type(item).__name__}")
    return d
