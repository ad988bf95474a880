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
only when, no pair was dropped. A line that escapes a colon (`\\u003a`; any of `\\u0030`-`\\u003f`, found
in one scan) or spells a default out (`"pinned":false`, `"tokens":null`) cannot be counted this way
and takes the strict path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, Union

import msgspec
from msgspec import Meta, Struct

from ctxbench.sim.core.makers import dict_maker, field_defaults
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

# Each struct's attributes are named as the fields of the dataclass they become (`Content`,
# `MessageEvent`) and default to the same values, so a decoded struct is turned into its event by
# `msgspec.structs.asdict` (in C) over the dataclass's defaults. A default spelled out in a line
# (`"tokens":null`, `"cache":""`, `"bytes":0`) is omitted on re-encoding, so the colon count sends
# the line to the strict decoder, which reads it or names what is wrong.


class _Item(Struct, tag_field="kind", **_OPTIONS):
    key: str = ""
    pinned: bool = False
    skill: bool = False
    tokens: _Tokens | None = None
    cache: _Ttl | Literal[""] = ""
    turn: bool = False


class _Sized(_Item):
    """Text-like content: its text, or its size and a key naming it."""

    text: str | None = None
    # None, not Content's 0, when absent: the writer spells "bytes":0 out (text content gets 0 in _content)
    nbytes: _Size | None = msgspec.field(default=None, name="bytes")
    lang: _Lang = "prose"


class _Text(_Sized, tag="text"):
    pass


class _Thinking(_Sized, tag="thinking"):
    pass


class _ToolUse(_Sized, tag="tool_use", kw_only=True):
    tool_id: _Name = msgspec.field(name="id")
    name: _Name


class _ToolResult(_Sized, tag="tool_result", kw_only=True):
    tool_id: _Name = msgspec.field(name="tool_use_id")
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
    cost: Annotated[float, Meta(ge=0, le=NUMBER_BOUNDS["cost"])] | None = None


class _Message(Struct, tag_field="type", tag="message", **_OPTIONS):
    role: Literal["user", "assistant"]
    content: Annotated[list[_AnyItem], Meta(min_length=1)]
    tag: _Tag = ""
    pinned: bool = False
    t: _Seconds | None = None
    game_t: _Seconds | None = None
    output_tokens: _Tokens | None = None
    usage: _Usage | None = None
    request_id: str = ""


_STRUCTS: dict[str, type[_Item]] = {
    "text": _Text, "thinking": _Thinking, "tool_use": _ToolUse, "tool_result": _ToolResult, "image": _Image,
}  # fmt: skip
assert {k: set(v) for k, v in CONTENT_FIELDS.items()} == {
    k: {"kind", *(f.encode_name for f in msgspec.structs.fields(s))} for k, s in _STRUCTS.items()
}
assert set(EVENT_FIELDS["message"]) == {"type", *(f.encode_name for f in msgspec.structs.fields(_Message))}
assert tuple(f.name for f in msgspec.structs.fields(_Usage)) == USAGE_FIELDS

_make_content = dict_maker(Content)
_make_message = dict_maker(MessageEvent)
_CONTENT_DEFAULTS = field_defaults(Content)
# Per struct: the Content defaults with its kind, which its own fields then overwrite.
_BASE = {struct: {**_CONTENT_DEFAULTS, "kind": kind} for kind, struct in _STRUCTS.items()}
for _s in _STRUCTS.values():
    for _f in msgspec.structs.fields(_s):
        assert _f.required or _f.default == _CONTENT_DEFAULTS[_f.name] or _f.name == "nbytes", (_s, _f)
# A message struct's fields are MessageEvent's, in its order and with its defaults: asdict(m) is
# the event's whole __dict__ (content and usage then replaced by their dataclasses).
assert [(f.name, None if f.required else f.default) for f in msgspec.structs.fields(_Message)] == list(
    field_defaults(MessageEvent).items()
)
_ALLOWED = {role: tuple(_STRUCTS[k] for k in KINDS_BY_PLACE[role]) for role in ("user", "assistant")}

_decode = msgspec.json.Decoder(_Message).decode
_encode = msgspec.json.Encoder().encode
_asdict = msgspec.structs.asdict


class _Unusual(Exception):
    """Anything this path does not decide: the strict decoder takes the line."""


def _content(s: _Item, allowed: tuple[type[_Item], ...]) -> Content:
    cls = type(s)
    if cls not in allowed:
        raise _Unusual
    v = {**_BASE[cls], **_asdict(s)}
    if cls is not _Image and v["text"] is not None:
        if v["nbytes"] is not None:
            raise _Unusual  # text xor bytes
        v["nbytes"] = 0
    elif v["nbytes"] is None or not v["key"]:
        raise _Unusual  # text xor bytes; content given as a size needs its key
    return _make_content(v)


def _usage(u: _Usage) -> Usage:
    return Usage(u.input_tokens, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output_tokens, u.cost)


def _message(m: _Message) -> MessageEvent:
    allowed = _ALLOWED[m.role]
    v = _asdict(m)
    v["content"] = tuple([_content(s, allowed) for s in m.content])
    if m.output_tokens is not None or m.usage is not None:
        if m.role != "assistant":
            raise _Unusual
        if m.usage is not None:
            v["usage"] = _usage(m.usage)
    return _make_message(v)


def fast_message(line: str | bytes) -> MessageEvent | None:
    """The message event of `line` when it is certainly valid, else None (the strict decoder then
    reads the line and names any error)."""
    try:
        m = _decode(line)
    except Exception:  # not JSON, not a message, a bad field...: the strict decoder says which
        return None
    if isinstance(line, bytes):  # any escape \u0030-\u003f (one scan): \u003a or \u003A among them
        colons, escaped = line.count(b":"), b"\\u003" in line
    else:
        colons, escaped = line.count(":"), "\\u003" in line
    if escaped or colons != _encode(m).count(b":"):
        return None  # a duplicate key was dropped, or the count cannot tell (see the docstring)
    try:
        return _message(m)
    except _Unusual:
        return None
