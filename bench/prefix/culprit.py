"""What a break changed, why it usually happens, what it costs, and a key that names it by content.

- `first_field`: the first differing field of the two blocks at a divergence, as a key path in the
  normalized request (`tools[3].input_schema.properties.path.description`, `system[0]`,
  `messages[12].content[1].content[0].text`) with a short before/after;
- `hint`: the usual cause the change looks like -- a time stamp, a random id (uuid, long hex),
  whitespace only, a reordered or edited tool schema, a memory file (CLAUDE.md, AGENTS.md,
  GEMINI.md) read into the prompt, a truncated tool result;
- `dollars`: the break's price on the log's model: its re-billed tokens written to the cache (the
  5-minute write price, or the input price where writes cost no more) instead of read from it,
  catalog prices (sim/data/prices.yaml, each row citing its price page);
- `content_key`: the key a baseline accepts a break by -- a hash of the request's static prefix,
  the class, the segment and the two diverging blocks, never a request index, so adding or removing
  requests keeps it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ctxbench.bench.prefix.request_log import LBlock, LoggedRequest

SHORT = 40  # characters of a before/after value shown

_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(?::\d{2})?|\b1[6-9]\d{8}(?:\d{3})?\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\b|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b"
)
_ID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}|\b[0-9a-f]{12,}\b")
_MEMORY = re.compile(r"CLAUDE\.md|AGENTS\.md|GEMINI\.md|\.cursorrules|CONVENTIONS\.md|memory file", re.I)


def _short(v: Any, at: int = 0) -> str:
    s = v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False)
    lo = max(0, at - SHORT // 2)
    out = s[lo : lo + SHORT].replace("\n", "\\n")
    return ("…" if lo else "") + out + ("…" if lo + SHORT < len(s) else "")


def _first_diff(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((k for k in range(n) if a[k] != b[k]), n)


def _json_diff(a: Any, b: Any, path: str) -> tuple[str, str, str]:
    """The first key path where `a` and `b` differ (keys in sorted order, list items in order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                return f"{path}.{k}", "(absent)", _short(b[k])
            if k not in b:
                return f"{path}.{k}", _short(a[k]), "(absent)"
            if a[k] != b[k]:
                return _json_diff(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        for n, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return _json_diff(x, y, f"{path}[{n}]")
        if len(a) != len(b):
            n = min(len(a), len(b))
            x = _short(a[n]) if n < len(a) else "(absent)"
            return f"{path}[{n}]", x, _short(b[n]) if n < len(b) else "(absent)"
    elif isinstance(a, str) and isinstance(b, str):
        at = _first_diff(a, b)
        return path, _short(a, at), _short(b, at)
    return path, _short(a), _short(b)


def block_path(b: LBlock) -> str:
    if b.segment == "messages":
        return f"messages[{b.message}].content[{b.index}]"
    return f"{b.segment}[{b.index}]"


def _load(b: LBlock) -> Any:
    text = b.payload.decode("utf-8", "replace")
    if b.is_text:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def first_field(ob: LBlock | None, nb: LBlock | None) -> tuple[str, str, str]:
    """(key path, before, after) of the first difference between the parent's block `ob` and this
    request's block `nb` at the divergence (either may be missing: a block added or removed)."""
    if nb is None and ob is None:
        return "", "", ""
    if nb is None:
        assert ob is not None
        return block_path(ob), _short(_load(ob)), "(absent)"
    if ob is not None and ob.segment != nb.segment and ob.segment != "messages":
        return block_path(ob), _short(_load(ob)), "(absent)"  # a static block removed
    if ob is None or ob.segment != nb.segment:
        return block_path(nb), "(absent)" if ob is None else _short(_load(ob)), _short(_load(nb))
    return _json_diff(_load(ob), _load(nb), block_path(nb))


def _tool_name(b: LBlock) -> str:
    v = _load(b)
    if isinstance(v, dict):
        f = v.get("function")
        name = v.get("name") or (f.get("name") if isinstance(f, dict) else None)
        return str(name or "")
    return ""


def _tools_hint(r: LoggedRequest, par: LoggedRequest, ob: LBlock | None, nb: LBlock | None) -> str:
    old = [b.payload for b in par.blocks if b.segment == "tools"]
    new = [b.payload for b in r.blocks if b.segment == "tools"]
    if sorted(old) == sorted(new):
        return "tool order changed (same tools, another order): sort the tool list deterministically"
    on, nn = (_tool_name(ob) if ob else ""), (_tool_name(nb) if nb and nb.segment == "tools" else "")
    if on and on == nn:
        return f"tool schema of {on!r} edited: keep tool definitions fixed for a session"
    if len(new) != len(old):
        return "tool list changed (a tool added or removed mid-session)"
    return "tool definitions changed"


def hint(r: LoggedRequest, par: LoggedRequest, ob: LBlock | None, nb: LBlock | None, seg: str) -> str:
    """The usual cause a change looks like (module docstring), or ""."""
    if seg == "tools":
        return _tools_hint(r, par, ob, nb)
    a = ob.payload.decode("utf-8", "replace") if ob else ""
    b = nb.payload.decode("utf-8", "replace") if nb else ""
    at = _first_diff(a, b)
    wa, wb = a[max(0, at - 24) : at + 24], b[max(0, at - 24) : at + 24]
    if a and b and re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b):
        return "whitespace only (trailing spaces, newlines or indentation changed)"
    if _TIME.search(wa) and _TIME.search(wb):
        return "a time stamp (date/time) changes between requests: move it after the cached prefix"
    if _ID.search(wa) and _ID.search(wb):
        return "a random id (uuid/hex) changes between requests: make it stable per session"
    if a and b and a.startswith(b) and len(b) < len(a):
        return "content truncated: a block (e.g. a tool result) was cut shorter than the parent sent it"
    if _MEMORY.search(a) or _MEMORY.search(b):
        return "a memory file (CLAUDE.md, AGENTS.md, GEMINI.md) read into the prompt changed"
    return ""


def dollars(model: str, tokens: int) -> float | None:
    """Extra dollars of `tokens` written again instead of read from the cache on `model` (None when
    the catalog does not price the model)."""
    from ctxbench.sim.core.catalog import CatalogError, prices

    if not tokens:
        return 0.0
    try:
        p = prices(model)
    except (CatalogError, ValueError):
        return None
    return round(tokens * (max(p.cache_write_5m, p.input) - p.cache_read) / 1e6, 6)


def static_digest(r: LoggedRequest) -> bytes:
    h = hashlib.blake2b(digest_size=8)
    for b in r.blocks:
        if b.segment != "messages":
            h.update(b.segment.encode() + b"\x1f" + b.payload + b"\x1e")
    return h.digest()


def content_key(r: LoggedRequest, cls: str, seg: str, ob: LBlock | None, nb: LBlock | None, path: str) -> str:
    """A break's name by content (module docstring): message indices are left out of the path."""
    h = hashlib.blake2b(static_digest(r), digest_size=10)
    for part in (cls, seg, re.sub(r"\[\d+\]", "[]", path)):
        h.update(part.encode() + b"\x1f")
    for b in (ob, nb):
        h.update((b.role.encode() + b"\x1f" + b.payload) if b is not None else b"-")
        h.update(b"\x1e")
    return h.hexdigest()
