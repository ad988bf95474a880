"""What a raw harness log shows without any declaration (bench/prefix/check.py): helper calls,
the harness's compaction requests, and the new conversation that follows one.

- helper (a `side_request`): a request without tools whose system prompt is none of the system
  prompts the session's tool-carrying requests use (title generation, topic and file-path
  classifiers, quota probes: the claude-trace log of Claude Code 1.0, traces-real FORMATS.md §2.2);
- compaction request: a request on a side branch that ends in a user message (the instruction)
  and carries the conversation -- at least as many messages as the main-line request before it
  (the chain's prefix plus an instruction, Claude Code's /compact with its swapped system prompt
  and one tool; Codex CLI 0.171's tool-less "CONTEXT CHECKPOINT COMPACTION" request), or, without
  tools, at least half its message bytes (a tool-less summarizer that gets the conversation as
  text), or the whole main-line request before it plus a trailing user text (Claude Code 2.1.197's
  auto-compaction: the previous request's exact messages with the instruction appended as a text
  block to the last user message, research/ecosystem.md §3a; it re-reads the cache, no break; in
  2.1.120 the request it would have sent next, the instruction appended after the tool results),
  and that request sent again with only its last message changed (Claude Code 2.1.332's retry
  of a compaction whose reply had no summary tags, bench/claude_code_wire.md §3); or a helper
  sent just before the conversation restarts (diverges at its first message, or goes on shorter)
  that sends text of the
  conversation's later turns (opencode 1.18's compaction agent: its own system prompt, no tools,
  the conversation serialised with each tool output cut short, so it may be far smaller than the
  conversation; a title request carries the opening message only);
- the new conversation after it: a request that diverges from its parent at the first message
  (or in the system prompt, the static prefix otherwise kept), or that is shorter than the
  conversation the compaction request carried (Codex keeps its first developer/environment/user
  items before the summary), while a compaction request was sent since the parent or is the
  parent. System blocks that differ then change with the conversation (Claude Code's billing
  header `cc_version=2.1.197.<fingerprint>`) and are named in the break, field and values, as part
  of that reset.

A break's cost: the request's bytes from the divergence on, re-billed as uncached input or cache
writes, at 4 bytes per token (research/ecosystem.md §1.3: bytes/4 is within 4 % of o200k on its
corpus).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

from ctxbench.bench.prefix.request_log import LBlock, LoggedRequest

BYTES_PER_TOKEN = 4  # research/ecosystem.md §1.3 (bytes/4 = 1.037 x o200k)


def _system_key(r: LoggedRequest) -> tuple[bytes, ...]:
    return tuple(b.payload for b in r.blocks if b.segment == "system")


def has_tools(r: LoggedRequest) -> bool:
    return any(b.segment == "tools" for b in r.blocks)


def _message_bytes(r: LoggedRequest) -> int:
    return sum(len(b.payload) for b in r.blocks if b.segment == "messages")


@dataclass
class Recognised:
    helpers: set[int] = field(default_factory=set)
    compactions: list[tuple[str | None, int]] = field(default_factory=list)  # (session, request)
    pasted: dict[int, int] = field(default_factory=dict)  # request -> the helper whose summary it holds

    def compaction_between(self, session: str | None, p: int, i: int) -> int | None:
        """The latest compaction request of `session` sent before request i, at or after its parent
        p (a new conversation that shares nothing with the old one has the compaction request
        itself, the request just before it, as its parent)."""
        found = [c for s, c in self.compactions if s == session and p <= c < i]
        return found[-1] if found else None


def helpers(reqs: list[LoggedRequest]) -> set[int]:
    systems: dict[str | None, set[tuple[bytes, ...]]] = defaultdict(set)
    for r in reqs:
        if has_tools(r):
            systems[r.session].add(_system_key(r))
    return {
        i
        for i, r in enumerate(reqs)
        if not has_tools(r) and systems.get(r.session) and _system_key(r) not in systems[r.session]
    }


def _in_conversation(j: LoggedRequest, r: LoggedRequest) -> bool:
    """`j` is a request of `r`'s conversation: same session, with tools (a helper call that grows
    with what the user types, such as Claude Code 1.0's topic classifier, is no conversation)."""
    return j.session == r.session and has_tools(j)


def _instruction_appended(r: LoggedRequest, par: LoggedRequest, restarted: bool) -> bool:
    """`r` = its parent whole + user text in the parent's last message or in one new message; or,
    when the conversation `restarted` shorter right after it, + the next turn (the reply, then the
    user message of its tool results) with the text appended after those results (Claude Code
    2.1.120's auto-compaction: the request it would have sent next, the instruction as its last
    text block; against `ctxbench serve`)."""
    added = r.blocks[len(par.blocks) :]
    if not added or not added[-1].is_text or added[-1].role != "user":
        return False
    if not all(b.segment == "messages" and (b.message or 0) >= par.n_messages - 1 for b in added):
        return False
    if r.n_messages <= par.n_messages + 1:
        return True
    reply = [b for b in added if b.message == par.n_messages]
    last = [b for b in added if b.message == par.n_messages + 1]
    return (
        restarted
        and r.n_messages == par.n_messages + 2
        and bool(reply)
        and all(b.role == "assistant" for b in reply)
        and any(not b.is_text for b in last)  # the tool results, the instruction after them
    )


def _restarts(reqs: list[LoggedRequest], i: int, par: LoggedRequest) -> bool:
    """The session's next request after i has fewer messages than `par`: the conversation restarted."""
    nxt = next((reqs[j] for j in range(i + 1, len(reqs)) if reqs[j].session == reqs[i].session), None)
    return nxt is not None and nxt.n_messages < par.n_messages


def _retried(r: LoggedRequest, par: LoggedRequest, k: int | None) -> bool:
    """`r` = the compaction request `par` sent again with its instruction changed: the same
    messages up to the last one, which diverges and still ends in user text (Claude Code 2.1.332
    re-sends its compaction request with "For this reply only: ... inside <summary></summary>
    tags" appended when a reply has no summary tags, bench/claude_code_wire.md §3)."""
    if k is None or k >= len(r.blocks) or r.n_messages != par.n_messages:
        return False
    at = r.blocks[k]
    return at.segment == "messages" and at.message == r.n_messages - 1 and r.blocks[-1].is_text


def recognise(
    reqs: list[LoggedRequest],
    found: list[tuple[int, int, int]],
    main: set[int],
    helper: set[int],
    extends: dict[int, list[int]] | None = None,
    lasts: frozenset[int] = frozenset(),
) -> Recognised:
    """Helpers and compaction requests of a log (module docstring), from its breaks `found` and
    the requests that contain their parent whole (`extends`: parent -> requests; `lasts`: the last
    request of each session, which nothing follows)."""
    out = Recognised(helpers=set(helper))
    ext = extends or {}
    whole = {(j, p) for p, js in ext.items() for j in js}
    shared = {(i, p): k for i, p, k in found}
    for i, p in sorted([(i, p) for i, p, _k in found] + list(whole)):
        r, par = reqs[i], reqs[p]
        if not r.blocks or r.blocks[-1].role != "user" or r.n_messages < 1:
            continue
        if (r.session, p) in out.compactions and _retried(r, par, shared.get((i, p))):
            carries = True
        elif (i, p) in whole:  # never contained whole by a later request: the conversation left it
            carries = (
                not ext.get(i) and i not in lasts and _instruction_appended(r, par, _restarts(reqs, i, par))
            )
        elif i in main:
            continue
        else:  # measured against the conversation: the session's latest tool-carrying request
            conv = next((reqs[j] for j in range(i - 1, -1, -1) if _in_conversation(reqs[j], r)), None)
            carries = conv is not None and (
                r.n_messages >= max(2, conv.n_messages)
                or (not has_tools(r) and _message_bytes(r) * 2 >= _message_bytes(conv) > 0)
            )
        if carries:
            out.compactions.append((r.session, i))
            out.helpers.discard(i)
    for i, p, k in sorted(found):  # a summariser known by the conversation that restarts after it
        r = reqs[i]
        at_opening = k < len(r.blocks) and r.blocks[k].message in (0, None)
        if not has_tools(r) or not (at_opening or r.n_messages < reqs[p].n_messages):
            continue
        if out.compaction_between(r.session, p, i) is not None:
            continue
        h = next((h for h in range(i - 1, p, -1) if h in out.helpers and reqs[h].session == r.session), None)
        if h is not None and _carries_turns(reqs[h], reqs[p]):
            out.compactions.append((r.session, h))
            out.helpers.discard(h)
    for i, p, k in sorted(found):  # a summary a helper wrote, pasted into the conversation
        h = _summariser_of(reqs, i, p, k, out.helpers)
        if h is not None:
            out.pasted[i] = h
            if out.compaction_between(reqs[i].session, p, i) is None:
                out.compactions.append((reqs[i].session, h))
            out.helpers.discard(h)
    out.compactions.sort(key=lambda sc: sc[1])
    return out


def _summariser_of(reqs: list[LoggedRequest], i: int, p: int, k: int, helper: set[int]) -> int | None:
    """The first of the helper calls between parent p and request i when the text i inserts where
    it leaves p is one a helper call sent back (Gemini CLI 0.51: its compression request, then a
    verification probe that carries the summary as the model's turn; the summary is then put after
    the session context with the rest of the history kept, a new conversation that is no shorter;
    against `ctxbench serve`)."""
    r = reqs[i]
    if not has_tools(r) or k >= len(r.blocks) or r.blocks[k].segment != "messages" or not r.blocks[k].is_text:
        return None
    text = r.blocks[k].payload
    calls = [h for h in range(p + 1, i) if h in helper and reqs[h].session == r.session]
    if len(text) < SNIPPET or not any(b.payload == text for h in calls for b in reqs[h].blocks):
        return None
    return calls[0]


SNIPPET = 48  # bytes of a message's text looked for in a summariser's prompt
SNIPPETS = 8  # of the conversation's latest texts


def _strings(payload: bytes, is_text: bool) -> list[str]:
    """The texts of a block: itself, or the string leaves of its JSON (tool calls and results)."""
    text = payload.decode("utf-8", "replace")
    if is_text:
        return [text]
    try:
        stack: list[object] = [json.loads(text)]
    except ValueError:
        return []
    out: list[str] = []
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack += list(v.values())
        elif isinstance(v, list):
            stack += v
    return out


def _carries_turns(helper: LoggedRequest, conv: LoggedRequest) -> bool:
    """`helper` sends text of the conversation past its opening message: the start of one of the
    conversation's latest texts (opencode's summariser serialises the conversation as
    `[Assistant]: …` / `[Tool result]: …` lines; a title request carries the opening message only)."""
    sent = b"".join(b.payload for b in helper.blocks if b.segment == "messages").decode("utf-8", "replace")
    later = [b for b in conv.blocks if b.segment == "messages" and (b.message or 0) > 0]
    snippets = [t.strip()[:SNIPPET] for b in later for t in _strings(b.payload, b.is_text)]
    return any(t in sent for t in [t for t in snippets if len(t) >= SNIPPET // 2][-SNIPPETS:])


# `name=value` fields first (the innermost: `header: a=1; b=2`), then `name: value`
_FIELDS = (re.compile(r"([A-Za-z_][\w.-]*)=([^;,\s]*)"), re.compile(r"([A-Za-z_][\w.-]*):\s*([^;,\s]*)"))


def _field_change(old: bytes, new: bytes) -> str:
    """The `name=value` / `name: value` field around the first byte that differs, with both
    values (`cc_version 2.1.197.4fb -> 2.1.197.f9d`), or "" when the change is not in one."""
    a, b = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
    at = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    for pattern in _FIELDS:
        for m in pattern.finditer(a):
            if m.start(2) <= at <= m.end(2) and m.end(2) > m.start(2):
                other = pattern.match(b, m.start())
                if other is not None and other.group(1) == m.group(1):
                    return f"{m.group(1)} {m.group(2)} -> {other.group(2)}"
    return ""


def changed_system_fields(r: LoggedRequest, par: LoggedRequest) -> list[str]:
    """The system blocks that differ between a new conversation and its parent, by index, each
    with the field that changed when the difference is inside one `name=value` field."""
    a = [b for b in par.blocks if b.segment == "system"]
    b = [x for x in r.blocks if x.segment == "system"]
    out = []
    for k in range(max(len(a), len(b))):
        pa = a[k].payload if k < len(a) else b""
        pb = b[k].payload if k < len(b) else b""
        if pa != pb:
            field_ = _field_change(pa, pb)
            out.append(f"system block {k}" + (f" ({field_})" if field_ else ""))
    return out


def break_tokens(r: LoggedRequest, k: int) -> int:
    """Tokens re-billed by a break at block k of request r (module docstring)."""
    rest: list[LBlock] = r.blocks[k:]
    return sum(len(b.payload) for b in rest) // BYTES_PER_TOKEN
