"""Prefix stability: does each request start with its parent, and if not, where and why not?

Each request is compared with its *parent* (DESIGN.md "What real request logs look like"): among
the earlier requests of the same session and model (a provider cache is per model), the one it
shares the longest block prefix with, the latest on a tie. A request that contains its parent
whole is clean. Otherwise the first divergence is reported (segment, message index, block,
byte offset, a short diff) and classified:

- `side_request`: a request on a side branch -- the conversation never goes on from it (the
  session's last request does not descend from it) -- while a later request goes on from its
  parent, or that starts a new conversation (title generation, a summarizer with its own system
  prompt, a text-only compaction retry, a side thread such as a summary plus its verification
  probe); or a never-continued prefix of its parent plus one user message (a summary instruction
  over the older part); a later request returning to the main line after a side request that
  appended a single user message (a summary instruction) is clean;
- `reset_after_compaction`: the conversation restarts shorter after a compaction;
- `new_conversation`: a new task on the same static prefix, after a request the conversation never
  went on from (its final answer) and with no compaction between: none of its parent's messages,
  a different first message (an eval's next sample, a proxy serving task after task without a
  session id: Inspect 0.3.285 against `ctxbench serve`);
- `tail_edit`: only the parent's newest message changed (cheap: the tail is re-billed);
- `mid_conversation_edit`: an earlier message changed (the costly kind);
- `static_prefix_edit`: tools or system prompt changed and the conversation kept the change.

A break is *explained* when the producer declared an edit (compaction, eviction, trim) after its
parent was sent, on this request or on one between them (a side request whose parent is an
earlier side request of the same shape, e.g. two tool-less Codex compaction requests, is
separated from it by the compaction declared on the main line in between).
The check fails on unexplained breaks of a class not allowed (default allowed: side_request)
that the baseline does not list. Chained hashes make finding the parent O(blocks) per request.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxbench.bench.prefix.recognise import (
    Recognised,
    break_tokens,
    changed_system_fields,
    has_tools,
    helpers,
    recognise,
)
from ctxbench.bench.prefix.request_log import LBlock, LoggedRequest

CLASSES = (
    "side_request",
    "new_conversation",
    "reset_after_compaction",
    "tail_edit",
    "mid_conversation_edit",
    "static_prefix_edit",
)
DEFAULT_ALLOWED = ("side_request", "new_conversation")
DIFF_CONTEXT = 24  # bytes of context shown on each side of a divergence


@dataclass(frozen=True)
class Break:
    request: int  # 0-based index of the request in the log
    line: int  # its line in the log (0 when unknown)
    parent: int | None
    parent_line: int
    segment: str  # tools | system | messages | end (the request ends inside its parent)
    message: int | None
    block: int | None
    offset: int | None  # byte offset of the first different byte inside the block
    cls: str
    explained: bool
    declared: str
    old: str  # parent's bytes around the divergence
    new: str  # this request's bytes around it
    label: str = ""
    tokens: int = 0  # re-billed by the break (bench/prefix/recognise.py `break_tokens`)
    note: str = (
        ""  # what the log itself shows (bench/prefix/recognise.py): compaction request, changed fields
    )

    @property
    def signature(self) -> tuple[Any, ...]:
        return (self.request, self.cls, self.segment, self.message, self.block, self.offset)

    def where(self) -> str:
        if self.segment in ("tools", "system"):
            return f"{self.segment} block {self.block}, byte {self.offset}"
        if self.segment == "end":
            return f"request ends inside its parent (after message {self.message})"
        if self.message is None:
            return "position unknown"
        return f"message {self.message}, block {self.block}, byte {self.offset}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    requests: int
    breaks: list[Break]
    failing: list[Break]
    source: str = ""
    notes: list[str] = field(default_factory=list)  # what the reader left out, and why

    @property
    def ok(self) -> bool:
        return not self.failing


def _ident(b: LBlock) -> bytes:
    return b"\x1f".join(
        (b.segment.encode(), str(b.message).encode(), str(b.index).encode(), b.role.encode(), b.payload)
    )


def chain(blocks: list[LBlock]) -> list[bytes]:
    out = []
    h = b"ctxbench-prefix"
    for b in blocks:
        h = hashlib.blake2b(h + _ident(b), digest_size=12).digest()
        out.append(h)
    return out


def _snip(p: bytes, at: int) -> str:
    s = p[max(0, at - DIFF_CONTEXT) : at + DIFF_CONTEXT].decode("utf-8", "replace")
    return (
        ("…" if at > DIFF_CONTEXT else "")
        + s.replace("\n", "\\n")
        + ("…" if at + DIFF_CONTEXT < len(p) else "")
    )


def _first_diff(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _payload_bytes(r: LoggedRequest, k: int) -> int:
    return sum(len(b.payload) for b in r.blocks[k:])


def find_breaks(reqs: list[LoggedRequest], allowed: tuple[str, ...] = DEFAULT_ALLOWED) -> Report:
    """Every break in a log, in request order, and the ones that fail the check."""
    chains = [chain(r.blocks) for r in reqs]
    groups: dict[tuple[str | None, str], list[int]] = defaultdict(list)
    for i, r in enumerate(reqs):
        groups[(r.session, r.model)].append(i)
    found: list[tuple[int, int, int]] = []  # (request, parent, shared blocks)
    extends: dict[int, list[int]] = defaultdict(list)  # parent -> later requests that contain it whole
    helper_calls = helpers(reqs)
    for members in groups.values():
        last_with: dict[bytes, int] = {}
        ends: dict[bytes, int] = {}
        started = False  # a request other than a helper call was sent: the conversation began
        for pos, i in enumerate(members):
            c = chains[i]
            shared = 0
            for h in c:
                if h not in last_with:
                    break
                shared += 1
            if (last_with or ends) and (shared or started):  # else: the first request after helpers
                full = ends.get(c[shared - 1]) if shared else None
                parent = last_with[c[shared - 1]] if shared else members[pos - 1]
                if full is not None and parent != full and _side_shape(reqs[parent], reqs[full]):
                    parent = full
                if parent == full:
                    extends[parent].append(i)
                else:
                    found.append((i, parent, shared))
            for h in c:
                last_with[h] = i
            if c:
                ends[c[-1]] = i
            started = started or i not in helper_calls
    main = _main_line(groups, found, extends)
    lasts = {m[-1] for m in groups.values()}
    members_of = {i: m for m in groups.values() for i in m}
    seen = recognise(reqs, found, main, helper_calls, extends, frozenset(lasts))
    breaks = [
        _describe(reqs, i, p, k, extends, main, lasts, _since(reqs, members_of[i], p, i), seen)
        for i, p, k in sorted(found)
    ]
    failing = [b for b in breaks if not b.explained and b.cls not in allowed]
    return Report(len(reqs), breaks, failing)


def _main_line(
    groups: dict[Any, list[int]], found: list[tuple[int, int, int]], extends: dict[int, list[int]]
) -> set[int]:
    """The requests the conversation goes on from: the last request of each session/model group
    and its ancestors (parent of a break or whole prefix of a request). Everything else is a
    side branch -- a summarizer call, or a side thread such as Gemini CLI's summary followed by
    its verification probe, which contains the first call whole but is never continued."""
    parent = {i: p for i, p, _ in found}
    for p, js in extends.items():
        for j in js:
            parent[j] = p
    out: set[int] = set()
    for members in groups.values():
        i: int | None = members[-1]
        while i is not None and i not in out:
            out.add(i)
            i = parent.get(i)
    return out


def _since(reqs: list[LoggedRequest], members: list[int], p: int, i: int) -> str:
    """Edits declared after the parent was sent, up to this request: a break against an older
    parent (a request returning past side requests, or a side request whose parent is an earlier
    side request of the same shape) is explained by any of them."""
    out: list[str] = []
    for j in members[bisect_right(members, p) : bisect_right(members, i)]:
        if reqs[j].declared:
            out += [c for c in reqs[j].declared.split("+") if c not in out]
    return "+".join(out)


def _side_shape(side: LoggedRequest, base: LoggedRequest) -> bool:
    """`side` = `base` + one user message (a summary instruction): a side request."""
    return side.n_messages == base.n_messages + 1 and bool(side.blocks) and side.blocks[-1].role == "user"


def _truncated_side_shape(r: LoggedRequest, msg: int | None) -> bool:
    """`r` = a prefix of its parent + one new user message (a summary instruction over the older
    part of the conversation), diverging only at that last message."""
    return msg is not None and msg == r.n_messages - 1 and bool(r.blocks) and r.blocks[-1].role == "user"


def _describe(
    reqs: list[LoggedRequest],
    i: int,
    p: int,
    k: int,
    extends: dict[int, list[int]],
    main: set[int],
    lasts: set[int],
    since: str,
    seen: Recognised | None = None,
) -> Break:
    r, par = reqs[i], reqs[p]
    leaf = not extends.get(i) and i not in lasts  # nothing contains it whole; not the last request
    branch = leaf or i not in main  # a side branch: the conversation does not go on from it
    if k < len(r.blocks):
        nb = r.blocks[k]
        ob = par.blocks[k] if k < len(par.blocks) else None
        off = _first_diff(ob.payload, nb.payload) if ob is not None and ob.segment == nb.segment else 0
        seg, msg, blk = nb.segment, nb.message, nb.index
        if ob is not None and ob.segment != nb.segment and ob.segment != "messages":
            seg, msg, blk = ob.segment, ob.message, ob.index  # a static block was removed
        old = _snip(ob.payload, off) if ob is not None else ""
        new = _snip(nb.payload, off)
    else:  # the request is a strict prefix of its parent
        seg, msg, blk, off = "end", r.n_messages - 1, None, None
        ob = par.blocks[k] if k < len(par.blocks) else None
        old, new = (_snip(ob.payload, 0) if ob else ""), ""
    own = r.declared
    continued = any(j > i for j in extends.get(p, ()))
    if seg in ("tools", "system"):
        cls = "side_request" if branch else "static_prefix_edit"
    elif "compaction" in own:
        cls = "reset_after_compaction"
    elif not own and (
        (branch and (continued or msg == 0)) or (leaf and seg != "end" and _truncated_side_shape(r, msg))
    ):
        cls = "side_request"  # never continued: a helper call or a summarizer
    elif "compaction" in since:
        cls = "reset_after_compaction"  # a compaction since the parent (an older one) was sent
    elif msg == 0 or (
        seg != "end"
        and r.n_messages < par.n_messages
        and msg is not None
        and msg <= max(3, par.n_messages // 4)
        and _payload_bytes(r, k) * 2 < _payload_bytes(par, k)
    ):
        cls = "reset_after_compaction"  # a new, shorter conversation on the same static prefix
    elif seg == "end" or (msg is not None and msg >= par.n_messages - 1):
        cls = "tail_edit"
    else:
        cls = "mid_conversation_edit"
    declared = own if cls == "side_request" else since  # a side request is not explained by main-line edits
    explained = any(w in declared for w in ("compaction", "eviction", "trim"))
    note = ""
    if seen is not None and any(c == i for _s, c in seen.compactions):
        note = "the harness's compaction request (recognised)"
        # its own tail edited: a second pass of the summariser (Gemini CLI's verification probe
        # replaces the instruction with the summary and a new instruction), not the conversation
        if cls in ("side_request", "tail_edit") and not explained:
            explained, declared = True, "compaction request (recognised)"
    if seen is not None and i in seen.helpers:
        cls, explained, declared = "side_request", False, own  # a helper call (prefix_recognise.py)
    elif seen is not None and i in seen.pasted and not explained:
        h = seen.pasted[i]
        cls, explained, declared = "reset_after_compaction", True, f"compaction (recognised: request {h})"
        note = f"the summary request {h} wrote, put in the conversation"
    elif seen is not None and not explained and cls in ("reset_after_compaction", "static_prefix_edit"):
        c = seen.compaction_between(r.session, p, i)
        shared_msgs = _shared_messages(r, par)
        # shorter than what it carried; or than the conversation a tool-less summariser serialised
        restarted = c is not None and (
            r.n_messages < reqs[c].n_messages or (not has_tools(reqs[c]) and r.n_messages < par.n_messages)
        )
        if c is not None and (msg == 0 or (seg == "system" and shared_msgs == 0) or restarted):
            cls, explained, declared = "reset_after_compaction", True, f"compaction (recognised: request {c})"
            fields = changed_system_fields(r, par)
            note = f"changed with the new conversation: {', '.join(fields)}" if fields else ""
    if (
        cls == "reset_after_compaction"
        and not explained
        and msg == 0
        and not extends.get(p)  # the parent's conversation ended there
        and _carries_nothing_of(r, par)
        and (seen is None or seen.compaction_between(r.session, p, i) is None)
    ):
        cls = "new_conversation"
    tokens = break_tokens(r, k)
    return Break(
        i,
        r.line,
        p,
        par.line,
        seg,
        msg,
        blk,
        off,
        cls,
        explained,
        declared,
        old,
        new,
        r.label,
        tokens,
        note,
    )


def _carries_nothing_of(r: LoggedRequest, par: LoggedRequest) -> bool:
    """No message block of `par` is anywhere among r's messages (a rewritten first message with
    the rest kept is an edit, not a new conversation)."""
    theirs = {(b.role, b.payload) for b in par.blocks if b.segment == "messages"}
    return not any((b.role, b.payload) in theirs for b in r.blocks if b.segment == "messages")


def _shared_messages(r: LoggedRequest, par: LoggedRequest) -> int:
    """Leading messages r and its parent have in common (byte-equal blocks)."""

    def msgs(x: LoggedRequest) -> list[list[bytes]]:
        out: list[list[bytes]] = [[] for _ in range(x.n_messages)]
        for b in x.blocks:
            if b.segment == "messages" and b.message is not None and b.message < x.n_messages:
                out[b.message].append(b.payload)
        return out

    n = 0
    for a, b in zip(msgs(r), msgs(par), strict=False):
        if a != b:
            break
        n += 1
    return n


# ------------------------------------------------------------------ records files
# Miss causes that are prefix changes made by the harness (the rest are provider-side misses).
_RECORD_CLASSES = {
    "compaction": "reset_after_compaction",
    "eviction": "mid_conversation_edit",
    "trim": "mid_conversation_edit",
    "prefix_change": "mid_conversation_edit",
    "image_change": "mid_conversation_edit",
}


def record_breaks(records: list[Any], allowed: tuple[str, ...] = DEFAULT_ALLOWED) -> Report:
    """Breaks named by a records file: records carry the cause, not the position (message,
    block and offset are unknown). A declared edit (compaction, eviction, trim) explains one."""
    breaks = []
    for i, r in enumerate(records):
        cls = _RECORD_CLASSES.get(r.miss_cause)
        if cls is None:
            continue
        declared = r.edit or (r.miss_cause if r.miss_cause in ("compaction", "eviction", "trim") else "")
        explained = bool(declared)
        label = f"{r.conversation}#{r.index}"
        breaks.append(
            Break(i, i + 1, None, 0, "messages", None, None, None, cls, explained, declared, "", "", label)
        )
    failing = [b for b in breaks if not b.explained and b.cls not in allowed]
    return Report(len(records), breaks, failing)
