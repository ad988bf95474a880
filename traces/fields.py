"""Field tables of trace format v1, the field-level error and the JSON helpers both directions use.

The tables are the single source of truth of `ctxbench.traces.codec` (the decoder rejects any field not
listed for its object, the encoder writes fields in the listed order) and of the schema test, which
compares `traces/schema.json` with them.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ctxbench.sim.core.names import TTLS

# Field tables, in the order the writer emits them.
HEADER_FIELDS = ("type", "format", "version", "source", "harness", "model", "window", "meta")
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "system": ("type", "t", "content"),
    "tools": ("type", "t", "tools"),
    "message": (
        "type", "role", "tag", "pinned", "t", "game_t", "output_tokens", "usage", "request_id", "content",
    ),
    "model_switch": ("type", "model", "window", "t"),
    "compaction": ("type", "trigger", "kept_from", "pre_tokens", "t", "summary"),
    "resume": ("type", "saved_total", "t"),
}  # fmt: skip
LINE_TYPES = ("header", *EVENT_FIELDS)
_FLAGS = ("pinned", "skill", "tokens", "cache", "turn")
CONTENT_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("kind", "text", "bytes", "lang", "key", *_FLAGS),
    "image": ("kind", "width", "height", "bytes", "key", *_FLAGS),
    "tool_use": ("kind", "id", "name", "text", "bytes", "lang", "key", *_FLAGS),
    "tool_result": ("kind", "tool_use_id", "text", "bytes", "lang", "key", "is_error", *_FLAGS),
    "thinking": ("kind", "text", "bytes", "lang", "key", *_FLAGS),
}
TOOL_FIELDS = ("name", "schema", "bytes", "mcp", "defer_loading")
USAGE_FIELDS = ("input_tokens", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "cost")

ROLES = ("user", "assistant")
TAGS = ("", "prep", "reply", "observation", "host", "tool_results", "user", "summary", "handoff")
LANGS = ("prose", "code", "json")
CACHE_TTLS = TTLS  # recorded cache_control ttl of a block (providers.md §1.5; sim/core/names.py)
TRIGGERS = ("auto", "manual", "model_switch", "prompt_too_long")
# Upper bounds of numbers (FORMAT.md "Bounds", schema.json `maximum`): a value past them is a typo or
# an overflow, never a real session, and refusing it keeps every later sum finite and exact.
MAX_TOKENS = 10**9  # 1000x the largest context window (1M tokens, providers.md §1.8, §3)
MAX_BYTES = 2**40  # 1 TiB: far above any request body (32 MB limit, providers.md §1.12)
MAX_PIXELS = 10**6  # image side; the API refuses more than 8000 px (providers.md §1.13)
MAX_SECONDS = 10.0**10  # ~317 years of session time
MAX_COST = 10.0**9  # USD
INTEGER_BOUNDS: dict[str, int] = {
    "version": MAX_TOKENS,
    "window": MAX_TOKENS,
    "bytes": MAX_BYTES,
    "width": MAX_PIXELS,
    "height": MAX_PIXELS,
    "tokens": MAX_TOKENS,
    "output_tokens": MAX_TOKENS,
    "input_tokens": MAX_TOKENS,
    "cache_read": MAX_TOKENS,
    "cache_write_5m": MAX_TOKENS,
    "cache_write_1h": MAX_TOKENS,
    "kept_from": MAX_TOKENS,
    "pre_tokens": MAX_TOKENS,
    "saved_total": MAX_TOKENS,
}
NUMBER_BOUNDS: dict[str, float] = {"t": MAX_SECONDS, "game_t": MAX_SECONDS, "cost": MAX_COST}
# Which content kinds each place accepts (providers reject the others).
KINDS_BY_PLACE: dict[str, tuple[str, ...]] = {
    "system": ("text",),
    "summary": ("text",),
    "user": ("text", "image", "tool_result"),
    "assistant": ("text", "tool_use", "thinking"),
}


class FieldError(ValueError):
    """A field-level problem; `field` is a dotted path ('' when the whole line is at fault)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason)
        self.field = field
        self.reason = reason


def canonical_json(value: Any) -> str:
    """The canonical JSON text a tool schema is stored as (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def show(value: Any) -> str:
    """A short rendering of a JSON value for error messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def check_unicode(value: Any, field: str) -> None:
    """Reject strings that are not valid Unicode (lone surrogates from `\\ud800` escapes) and,
    in free-form objects (`meta`, tool schemas), numbers that are not finite (`1e400` reads as
    infinity, which no JSON writer can write back)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(field, f"number is not finite ({value})")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise FieldError(field, "string is not valid Unicode (lone surrogate)") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            check_unicode(k, field)
            check_unicode(v, f"{field}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_unicode(v, f"{field}[{i}]")
