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
from typing import Any

from ctxbench.bench.prefix.breaks import CLASSES, DECLARED_EDITS, DEFAULT_ALLOWED, Break, Report
from ctxbench.bench.prefix.classify import Context, describe, messages_diverge, shared_messages
from ctxbench.bench.prefix.recognise import helpers, recognise
from ctxbench.bench.prefix.request_log import LBlock, LoggedRequest

__all__ = ["CLASSES", "DEFAULT_ALLOWED", "Break", "Report", "find_breaks", "record_breaks"]


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
    by_session: dict[str | None, list[int]] = defaultdict(list)  # every model: a switch keeps the edits
    for i, r in enumerate(reqs):
        by_session[r.session].append(i)
    members_of = {i: m for m in by_session.values() for i in m}
    seen = recognise(reqs, found, main, helper_calls, extends, frozenset(lasts))
    grown = {  # went on from past a static edit (a time stamp in the system prompt), messages kept
        p
        for i, p, k in found
        if k < len(reqs[i].blocks)
        and reqs[i].blocks[k].segment != "messages"
        and shared_messages(reqs[i], reqs[p])
    }
    ctx = Context(reqs, extends, main, lasts, seen, grown)
    breaks = []
    for i, p, k in sorted(found):
        since = _since(reqs, members_of[i], p, i)
        b = describe(ctx, i, p, k, since)
        breaks.append(b)
        if b.segment in ("tools", "system") and b.cls == "static_prefix_edit":
            more = messages_diverge(reqs[i], reqs[p])  # a second bug past the static edit
            second = describe(ctx, i, p, more[0], since, more[1]) if more is not None else None
            if second is not None and second.cls in ("tail_edit", "mid_conversation_edit"):
                breaks.append(second)  # a restart is part of the same change, not a second bug
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


# ------------------------------------------------------------------ records files
# Miss causes that are prefix changes made by the harness (the rest are provider-side misses).
_RECORD_CLASSES = {
    "compaction": "reset_after_compaction",
    "eviction": "mid_conversation_edit",
    "trim": "mid_conversation_edit",
    "prefix_change": "mid_conversation_edit",
    "image_change": "mid_conversation_edit",
    "thought_signatures": "mid_conversation_edit",
}


def record_breaks(records: list[Any], allowed: tuple[str, ...] = DEFAULT_ALLOWED) -> Report:
    """Breaks named by a records file: records carry the cause, not the position (message,
    block and offset are unknown). A declared edit (compaction, eviction, trim) explains one."""
    breaks = []
    for i, r in enumerate(records):
        cls = _RECORD_CLASSES.get(r.miss_cause)
        if cls is None:
            continue
        declared = r.edit or (r.miss_cause if r.miss_cause in DECLARED_EDITS else "")
        explained = bool(declared)
        label = f"{r.conversation}#{r.index}"
        breaks.append(
            Break(i, i + 1, None, 0, "messages", None, None, None, cls, explained, declared, "", "", label)
        )
    failing = [b for b in breaks if not b.explained and b.cls not in allowed]
    return Report(len(records), breaks, failing)
