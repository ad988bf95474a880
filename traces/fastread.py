"""The fast path of the trace reader: a message line that is certainly valid, decoded and checked in
C by msgspec (issue 13: reading was slower than simulating).

Message lines are almost every line of a trace. This path decodes one into typed msgspec structs
that spell the same rules as the strict decoder (`traces.codec`, from the same tables in
`traces.fields`: the fields each object may have, types, bounds, choices), checks the rules that
span fields in Python, and builds the event. It never reports an error: whenever anything is
unusual it returns None and the caller runs the strict decoder, which names the file, line and
field exactly as before. So the contract, tested by property, is one-sided: when this path returns
an event, the strict path returns an equal one.

Duplicate keys: msgspec keeps the last of two equal keys where the strict reader rejects them
(msgspec issue #648). Every key-value pair in JSON text has its own `:` outside strings, `:` is one
byte in UTF-8 that no other character contains, and msgspec never escapes it; so re-encoding what
was decoded (values left at their default omitted) gives exactly as many `:` as the line when, and
only when, no pair was dropped. A line that escapes a colon (`\\u003a`) or spells a default out
(`"pinned":false`) cannot be counted this way and takes the strict path.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal, TypeAlias, Union

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType

from ctxbench.traces.fields import (
    CACHE_TTLS,
    CONTENT_FIELDS,
    EVENT_FIELDS,
    INTEGER_BOUNDS,
    KINDS_BY_PLACE,
    LANGS,
    MAX_TOKENS,
    NUMBER_BOUNDS,
    TAGS,
    USAGE_FIELDS,
)
from ctxbench.traces.model import Content, MessageEvent, Usage

_Tokens = Annotated[int, Meta(ge=0, le=MAX_TOKENS)]
_Size = Annotated[int, Meta(ge=0, le=INTEGER_BOUNDS["bytes"])]
_Pixels = Annotated[int, Meta(ge=1, le=INTEGER_BOUNDS["width"])]
_Seconds = Annotated[float, Meta(ge=0, le=NUMBER_BOUNDS["t"])]
_Name = Annotated[str, Meta(min_length=1)]
_Lang = Literal[LANGS]  # type: ignore[valid-type]
_Ttl = Literal[CACHE_TTLS]  # type: ignore[valid-type]
_Tag = Literal[TAGS]  # type: ignore[valid-type]
assert INTEGER_BOUNDS["height"] == INTEGER_BOUNDS["width"] and NUMBER_BOUNDS["game_t"] == NUMBER_BOUNDS["t"]
assert all(
    INTEGER_BOUNDS.get(n, MAX_TOKENS) == MAX_TOKENS for n in ("tokens", "output_tokens", *USAGE_FIELDS[:-1])
)
# The colon count relies on field names and choices holding no colon.
assert not any(":" in w for t in (*EVENT_FIELDS.values(), *CONTENT_FIELDS.values(), TAGS, LANGS) for w in t)

_OPTIONS: dict[str, Any] = {"forbid_unknown_fields": True, "omit_defaults": True, "kw_only": True}


class _Item(Struct, tag_field="kind", **_OPTIONS):
    key: str = ""
    pinned: bool = False
    skill: bool = False
    tokens: _Tokens | UnsetType = UNSET
    cache: _Ttl | UnsetType = UNSET


class _Sized(_Item):
    """Text-like content: its text, or its size and a key naming it."""

    text: str | UnsetType = UNSET
    nbytes: _Size | UnsetType = msgspec.field(default=UNSET, name="bytes")
    lang: _Lang = "prose"


class _Text(_Sized, tag="text"):
    pass


class _Thinking(_Sized, tag="thinking"):
    pass


class _ToolUse(_Sized, tag="tool_use", kw_only=True):
    id: _Name
    name: _Name


class _ToolResult(_Sized, tag="tool_result", kw_only=True):
    tool_use_id: _Name
    is_error: bool = False


class _Image(_Item, tag="image", kw_only=True):
    nbytes: Annotated[int, Meta(ge=1, le=INTEGER_BOUNDS["bytes"])] = msgspec.field(name="bytes")
    width: _Pixels
    height: _Pixels


_AnyItem: TypeAlias = Union[_Text, _Thinking, _ToolUse, _ToolResult, _Image]  # noqa: UP007


class _Usage(Struct, **_OPTIONS):
    input_tokens: _Tokens = 0
    cache_read: _Tokens = 0
    cache_write_5m: _Tokens = 0
    cache_write_1h: _Tokens = 0
    output_tokens: _Tokens = 0
    cost: Annotated[float, Meta(ge=0, le=NUMBER_BOUNDS["cost"])] | UnsetType = UNSET


class _Message(Struct, tag_field="type", tag="message", **_OPTIONS):
    role: Literal["user", "assistant"]
    content: Annotated[list[_AnyItem], Meta(min_length=1)]
    tag: _Tag = ""
    pinned: bool = False
    t: _Seconds | UnsetType = UNSET
    game_t: _Seconds | UnsetType = UNSET
    output_tokens: _Tokens | UnsetType = UNSET
    usage: _Usage | UnsetType = UNSET
    request_id: str = ""


_STRUCTS: dict[str, type[_Item]] = {
    "text": _Text, "thinking": _Thinking, "tool_use": _ToolUse, "tool_result": _ToolResult, "image": _Image,
}  # fmt: skip
assert {k: set(v) for k, v in CONTENT_FIELDS.items()} == {
    k: {"kind", *(f.encode_name for f in msgspec.structs.fields(s))} for k, s in _STRUCTS.items()
}
assert set(EVENT_FIELDS["message"]) == {"type", *(f.encode_name for f in msgspec.structs.fields(_Message))}
assert tuple(f.name for f in msgspec.structs.fields(_Usage)) == USAGE_FIELDS
_KIND = {struct: kind for kind, struct in _STRUCTS.items()}
_ALLOWED = {role: tuple(_STRUCTS[k] for k in KINDS_BY_PLACE[role]) for role in ("user", "assistant")}

_decode = msgspec.json.Decoder(_Message).decode
_encode = msgspec.json.Encoder().encode


class _Unusual(Exception):
    """Anything this path does not decide: the strict decoder takes the line."""


def _defaults(cls: type) -> dict[str, Any]:
    """The fields of a frozen dataclass with their defaults, in declaration order (None for those
    without one: every one of them is set by the maker below)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a default_factory cannot be filled here")
        out[f.name] = None if f.default is dataclasses.MISSING else f.default
    return out


_CONTENT_DEFAULTS = _defaults(Content)
_MESSAGE_DEFAULTS = _defaults(MessageEvent)
_new = object.__new__
_set = object.__setattr__


def _make(cls: type, defaults: dict[str, Any], values: dict[str, Any]) -> Any:
    """An instance of frozen dataclass `cls` whose generated `__init__` would store `values` over
    `defaults`: one dict instead of one `object.__setattr__` per field (~5x cheaper for Content's
    14 fields); every value was checked by msgspec."""
    obj: Any = _new(cls)
    _set(obj, "__dict__", {**defaults, **values})
    return obj


def _content(s: _Item, allowed: tuple[type[_Item], ...]) -> Content:
    if type(s) not in allowed:
        raise _Unusual
    v: dict[str, Any] = {"kind": _KIND[type(s)], "key": s.key}
    if isinstance(s, _Image):
        if not s.key:
            raise _Unusual  # content given as a size needs its key
        v["nbytes"], v["width"], v["height"] = s.nbytes, s.width, s.height
    elif isinstance(s, _Sized):
        if s.text is UNSET:
            if s.nbytes is UNSET or not s.key:
                raise _Unusual  # text xor bytes; content given as a size needs its key
            v["nbytes"] = s.nbytes
        elif s.nbytes is not UNSET:
            raise _Unusual
        else:
            v["text"] = s.text
        v["lang"] = s.lang
        if isinstance(s, _ToolUse):
            v["tool_id"], v["name"] = s.id, s.name
        elif isinstance(s, _ToolResult):
            v["tool_id"], v["is_error"] = s.tool_use_id, s.is_error
    if s.pinned:
        v["pinned"] = True
    if s.skill:
        v["skill"] = True
    if s.tokens is not UNSET:
        v["tokens"] = s.tokens
    if s.cache is not UNSET:
        v["cache"] = s.cache
    return _make(Content, _CONTENT_DEFAULTS, v)


def _usage(u: _Usage) -> Usage:
    return Usage(
        u.input_tokens, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output_tokens,
        None if u.cost is UNSET else u.cost,
    )  # fmt: skip


def _message(m: _Message) -> MessageEvent:
    allowed = _ALLOWED[m.role]
    v: dict[str, Any] = {"role": m.role, "content": tuple([_content(s, allowed) for s in m.content])}
    if m.tag:
        v["tag"] = m.tag
    if m.pinned:
        v["pinned"] = True
    if m.t is not UNSET:
        v["t"] = m.t
    if m.game_t is not UNSET:
        v["game_t"] = m.game_t
    if m.request_id:
        v["request_id"] = m.request_id
    if m.output_tokens is not UNSET or m.usage is not UNSET:
        if m.role != "assistant":
            raise _Unusual
        if m.output_tokens is not UNSET:
            v["output_tokens"] = m.output_tokens
        if m.usage is not UNSET:
            v["usage"] = _usage(m.usage)
    return _make(MessageEvent, _MESSAGE_DEFAULTS, v)


def fast_message(line: str | bytes) -> MessageEvent | None:
    """The message event of `line` when it is certainly valid, else None (the strict decoder then
    reads the line and names any error)."""
    try:
        m = _decode(line)
    except Exception:  # not JSON, not a message, a bad field...: the strict decoder says which
        return None
    if isinstance(line, bytes):
        colons, escaped = line.count(b":"), b"\\u003a" in line or b"\\u003A" in line
    else:
        colons, escaped = line.count(":"), "\\u003a" in line or "\\u003A" in line
    if escaped or colons != _encode(m).count(b":"):
        return None  # a duplicate key was dropped, or the count cannot tell (see the docstring)
    try:
        return _message(m)
    except _Unusual:
        return None
