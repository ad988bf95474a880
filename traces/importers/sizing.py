"""Block sizing of imported traces: true tokens per block so that every request's cached part
equals its billed size, the system prompt size S and the warm prefix W, the recorded cache ttl.

The method (C_k, S, W) is described in the `ctxbench.traces.importers.tokens` docstring, which builds the
traces and re-exports these names. Blocks marked `turn` (sent in their own turn only, their text not
logged) get what their request's bill added beyond the rest at the calibrated rates, and leave the
prompt when the next turn starts: that request adds their tokens back to what it added
(`_size_turn_blocks`, bench/claude_code_wire.md §1). A summary request that bills less than the
request before it was precomputed from an earlier point and sizes nothing
(sizing_shares.py `PRECOMPUTED`). A conversation billed no cache at all gets 0-token blocks, no
marks (sizing_marks.py `NO_MARKS`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxbench.sim.core.catalog import CatalogError, model_info
from ctxbench.sim.core.thinking import strips_thinking
from ctxbench.sim.core.tokens import IMAGE_RULES, RateCounter
from ctxbench.traces.importers.base import ImportReport, allocate
from ctxbench.traces.importers.sizing_marks import NO_MARKS, blocks_of, never_cached, second_mark, text_mark
from ctxbench.traces.importers.sizing_shares import Shares
from ctxbench.traces.importers.system_tail import SystemTails, system_tails
from ctxbench.traces.model import CompactionEvent, Content, Event, MessageEvent, SystemEvent, Usage

ASSUMED_BYTES_PER_TOKEN = 4  # sizes of inferred blocks, for byte-based estimators only (assumed)


def real_user_content(contents: tuple[Content, ...]) -> bool:
    """Content other than tool results (providers.md §1.6); an image after a tool_result belongs
    to it (traces/FORMAT.md "An image that belongs to a tool result ... follows the tool_result")."""
    after_result = False
    for c in contents:
        if c.kind == "tool_result":
            after_result = True
        elif c.kind != "image" or not after_result:
            return True
    return False


def _cached(u: Usage) -> int:
    return u.cache_read + u.cache_write_5m + u.cache_write_1h


def _whole(u: Usage) -> int:
    return u.total_input


def _image_rule(model: str) -> str:
    try:
        return model_info(model).image_rule
    except CatalogError:
        return "anthropic"


def _tag(ev: Event) -> str:
    return ev.tag if isinstance(ev, MessageEvent) else ""


def _role(ev: Event) -> str:
    return ev.role if isinstance(ev, MessageEvent) else ""


def _with_contents(ev: Event, contents: tuple[Content, ...]) -> Event:
    if isinstance(ev, MessageEvent):
        return replace(ev, content=contents)
    if isinstance(ev, CompactionEvent):
        return replace(ev, summary=contents)
    return ev


def _size_turn_blocks(
    events: list[Event],
    scoped: list[tuple[int, int]],
    others: list[tuple[int, int]],
    total: int,
    tokens: dict[tuple[int, int], int],
    counter: RateCounter,
    rule: Any,
) -> int:
    """Size the `turn` blocks new in a request (a turn's attachments, whose text the log lacks)
    from its bill: what the request added (`total`, billed) less the rest of what it added at
    the calibrated rates (the prompt and the reply before it, whose text the log has). Each Read
    call gets its own text's count, the results share the rest. Returns their tokens."""
    est = 0
    for ev_i, c_i in others:
        c = blocks_of(events[ev_i])[c_i]
        est += rule(c.width, c.height) if c.kind == "image" else counter.count_bytes(c.size, c.lang)
    att = max(0, total - est)
    blocks = [blocks_of(events[e])[c] for e, c in scoped]
    calls = [i for i, c in enumerate(blocks) if c.text is not None]
    results = [i for i, c in enumerate(blocks) if c.text is None]
    want = [counter.count_bytes(blocks[i].size, blocks[i].lang) for i in calls]
    given = min(att, sum(want)) if results else att
    for i, n in zip(calls, allocate(given, [max(1, w) for w in want]) if calls else [], strict=True):
        tokens[scoped[i]] = n
    for i, n in zip(results, allocate(att - given, [1] * len(results)) if results else [], strict=True):
        tokens[scoped[i]] = n
    return att


def system_size(
    events: list[Event], counter: RateCounter, size: Any = _cached, known: tuple[int, str] | None = None
) -> tuple[int, int, str]:
    """(S, W, how S was found): see the `ctxbench.traces.importers.tokens` docstring; `known`: S
    and where it comes from, given (a conversation that opens on another one's history, whose bill
    shows S and whose first prompt does not), never more than the first request's size and never
    less than its read (W, a prefix cached before the conversation: the static part of the system,
    as the inferred S is never below W either)."""
    replies = [(i, e) for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.usage is not None]
    if not replies:
        return 0, 0, "no usage"
    first_i, first = replies[0]
    assert first.usage is not None
    c1 = size(first.usage)
    w = first.usage.cache_read
    if known is not None:
        s = max(0, min(max(known[0], w), c1))
        return s, min(w, s), known[1] + (" up to the first request's read" if s > known[0] else "")
    after: list[int] = []
    for k, ev in enumerate(events):
        if isinstance(ev, CompactionEvent):
            nxt = next(
                (e for e in events[k + 1 :] if isinstance(e, MessageEvent) and e.usage is not None), None
            )
            if nxt is not None and nxt.usage is not None and nxt.usage.cache_read > 0:
                after.append(nxt.usage.cache_read)
    # Sized on the whole prompt (OpenAI-style totals), a read that falls short of C_1 by less than
    # the fidelity tolerance (max(1 %, 128), issue #6) is the first prompt itself, not a system mark:
    # the tokens after the last block (Cline: 2) or the 128-token steps of OpenAI hits
    # (providers.md §2.1) make up the rest.
    top = c1 - max(128, c1 // 100) if size is _whole else c1
    # the system prompt is in every prompt: a read after a compaction larger than the smallest
    # prompt of the log kept conversation too (a compaction that left a prefix of it), it is not S
    smallest = min((size(e.usage) for _, e in replies if e.usage and size(e.usage)), default=c1)
    after = [a for a in after if a <= smallest]
    if after:
        s, how = min(after), "cache read after a recorded compaction"
    else:
        inner = [
            e.usage.cache_read for _, e in replies[1:] if e.usage and w < e.usage.cache_read < min(c1, top)
        ]
        low = [e.usage.cache_read for _, e in replies if e.usage and 0 < e.usage.cache_read <= top]
        if inner:
            s, how = min(inner), "smallest later cache read inside the first prompt (a system mark)"
        elif low:
            s, how = min(low), "smallest cache read falling back to the static prefix"
        else:
            est = 0
            for ev in events[:first_i]:
                for c in blocks_of(ev):
                    est += counter.count_bytes(c.size, c.lang) if c.kind != "image" else 0
            s, how = max(0, c1 - est), "first request total minus its messages at the calibrated byte rate"
    s = max(0, min(s, c1))
    return s, min(w, s), how


def size_events(
    events: list[Event],
    model: str,
    report: ImportReport,
    name: str,
    whole: bool = False,
    marked_messages: int = 2,
    user_prompt_mark: bool = False,
    known_system: tuple[int, str] | None = None,
) -> tuple[list[Event], dict[str, Any]]:
    """Set `tokens` on every block so each request's cached part equals its billed C_k, and put
    the recorded cache ttl where the recorded harness put its message marks: the last block before
    each request and, when it marks the last two messages (`marked_messages` 2), the last block of
    the reply before it unless that block is thinking (Claude Code, FORMATS.md §2.2; cli.js: no
    cache_control on a trailing thinking block); with `user_prompt_mark`, only the last text block
    of the latest real user message (Cline CLI 3.x). `known_system`: (S, where it comes from) when
    the bill of another conversation gave it (`system_size`). Returns events (system first)."""
    counter = RateCounter()
    rule = IMAGE_RULES[_image_rule(model)]
    unmarked = not whole and never_cached(events)
    size = _whole if whole else _cached
    s, w, how, head, tails, restarts = _system_part(events, counter, size, whole, known_system)
    tail_at: dict[int, int] = {}  # event index -> the system end of the process that starts there
    requests, prev_request = 0, -1
    shares = Shares(events, rule)
    tokens = shares.tokens
    ttl_at: dict[tuple[int, int], str] = {}
    pending: list[tuple[int, int]] = []
    anchor = s
    ttl = first_ttl = last_role = ""
    strip = strips_thinking(model)  # providers.md §1.6, as the provider model does
    kept: list[tuple[int, int]] = []  # sized thinking blocks still in the prompt
    strip_next = False  # a real user message since the last request: thinking is stripped
    unseen: list[tuple[int, int]] = []  # thinking stripped before any request saw it
    last_reply = -1  # the latest reply since the start or the last compaction
    live_turn: list[tuple[int, int]] = []  # sized `turn` blocks still in the prompt
    turn_next = False  # a turn started since the last request: the `live_turn` blocks are gone
    message_events: list[int] = []  # event index of each message, in order (what `kept_from` counts)
    prompt_at: tuple[int, int] | None = None  # the latest real user prompt's last text block
    for i, ev in enumerate(events):
        blocks = [(i, j) for j in range(len(blocks_of(ev)))]
        if isinstance(ev, CompactionEvent):
            shares.unbilled_round(pending, counter)  # the round no bill covers, sized (issue 29)
            anchor, pending, last_reply, last_role = _after_compaction(ev, message_events, blocks, shares, s)
            kept, live_turn = [], []
            continue
        if isinstance(ev, MessageEvent):
            message_events.append(i)
        if isinstance(ev, MessageEvent) and ev.role == "assistant" and ev.usage is not None:
            u = ev.usage
            ttl = "1h" if u.cache_write_1h > 0 else ("5m" if u.cache_write_5m > 0 else (ttl or "5m"))
            first_ttl = first_ttl or ttl
            marks = [prompt_at] if user_prompt_mark else None  # Cline CLI's one mark, else the harness's
            marks = marks or _message_marks(events, pending, last_reply, marked_messages)
            ttl_at.update((m, ttl) for m in marks if m is not None)  # fmt: skip
            if requests in restarts:  # a restarted CLI: its new tail replaces the old one
                anchor += restarts[requests] - s
                s = restarts[requests]
                tail_at[prev_request + 1] = s
            requests += 1
            prev_request = i
            last_reply = i
            gone = 0
            if strip and strip_next:  # the prompt lost every earlier thinking block
                gone, pending = shares.strip_thinking(kept, pending, unseen)
                kept = []
            vanished = sum(tokens.get(slot, 0) for slot in live_turn) if turn_next else 0  # the previous
            live_turn = [] if turn_next else live_turn  # turn's own blocks left the prompt
            turn_next = False
            total = size(u) - anchor + gone + vanished
            if _tag(ev) == "summary" and total < 0:  # a summary precomputed from an earlier point
                shares.precomputed(pending + blocks, counter)
                pending, last_role = [], "assistant"
                continue
            live_turn += _share_request(shares, pending, total, counter, i)
            if strip:
                kept += [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].kind == "thinking"]
            strip_next = False
            last_role = "assistant"
            anchor, pending = size(u), blocks
            continue
        if isinstance(ev, MessageEvent) and ev.role == "user" and real_user_content(ev.content):
            strip_next = True
            turn_next = turn_next or last_role == "assistant"
            prompt_at = text_mark(i, ev)
        if isinstance(ev, MessageEvent) and ev.role == "assistant":
            last_reply = i
        if isinstance(ev, MessageEvent):
            last_role = ev.role
        pending += blocks
    shares.after_last_request(unseen, pending, counter)
    shares.note(report, name)
    sys_ttl = first_ttl or "5m"
    first_end = tails.ends[0][1] if tails is not None else s
    first_head = head if tails is not None else first_end
    out = _sized(events, tokens, ttl_at, tail_at, (name, w, head, first_head, first_end, sys_ttl), unmarked)
    if unmarked:
        report.note(f"{name}: {NO_MARKS}")
    meta = _meta(first_end, how, w, sys_ttl, whole, marked_messages, head, tails) | shares.resized_requests()
    return out, meta | {"message_mark": "none"} if unmarked else meta  # bench/fidelity/replay.py


def _meta(
    first_end: int, how: str, w: int, ttl: str, whole: bool, marked: int, head: int, tails: SystemTails | None
) -> dict[str, Any]:
    """The sizing's meta: the system prompt's size and where it comes from, W, the system ttl."""
    meta: dict[str, Any] = {
        "system_tokens": first_end, "system_inferred_from": how, "warm_tokens": w, "ttl": ttl,
        "sized_on": "prompt" if whole else "cached",  # bench/fidelity/compare.py: where the uncached tail is
        "marked_messages": marked,
    }  # fmt: skip
    if tails is not None:  # bench/fidelity/causes.py `system_at`
        meta |= {"system_head": head, "system_restarts": [list(x) for x in tails.ends[1:]]}
    return meta


def _system_part(
    events: list[Event], counter: RateCounter, size: Any, whole: bool, known: tuple[int, str] | None
) -> tuple[int, int, str, int, SystemTails | None, dict[int, int]]:
    """(S, W, how S was found, the first system block's end, the system tail per CLI process
    (system_tail.py), request number -> a restarted process's system end); with tails, S is the
    first process's end."""
    s, w, how = system_size(events, counter, size, known)
    tails = None if whole else system_tails(events, s, size, lambda ev: real_user_content(ev.content))
    head = s
    restarts: dict[int, int] = {}
    if tails is not None:
        s = tails.ends[0][1]
        restarts = dict(tails.ends[1:])
        how = f"the end of each CLI process's system prompt, after its first block's ({how}; system_tail.py)"
    return s, w, how, head, tails, restarts


def _after_compaction(
    ev: CompactionEvent, message_events: list[int], blocks: list[tuple[int, int]], shares: Shares, s: int
) -> tuple[int, list[tuple[int, int]], int, str]:
    """The prompt after a recorded compaction: the system, the summary, then the messages the
    harness kept (not the summariser's own request, as policies/recorded.py); those sized already
    add to the anchor. Returns (anchor, pending blocks, the latest reply kept, the last role)."""
    events, tokens = shares.events, shares.tokens
    since = message_events[ev.kept_from :] if ev.kept_from is not None else []
    held = [e for e in since if _tag(events[e]) != "summary"]
    slots = [(e, j) for e in held for j in range(len(blocks_of(events[e])))]
    anchor = s + sum(tokens[slot] for slot in slots if slot in tokens)
    pending = blocks + [slot for slot in slots if slot not in tokens]
    shares.allocated.clear()
    last_reply = next((e for e in reversed(held) if _role(events[e]) == "assistant"), -1)
    return anchor, pending, last_reply, _role(events[held[-1]]) if held else ""


def _message_marks(
    events: list[Event], pending: list[tuple[int, int]], last_reply: int, marked_messages: int
) -> list[tuple[int, int] | None]:
    """Where the recorded harness put its message marks before a request: the last block new in
    it and, marking two messages, the last block of the reply before it (`second_mark`)."""
    if not pending:
        return []
    reply_mark = second_mark(events, pending[-1][0], last_reply) if marked_messages >= 2 else None
    if reply_mark is not None and reply_mark[0] != pending[-1][0]:
        return [pending[-1], reply_mark]
    return [pending[-1]]


def _share_request(
    shares: Shares, pending: list[tuple[int, int]], total: int, counter: RateCounter, at: int
) -> list[tuple[int, int]]:
    """Share what the bill of the request at event `at` added (`total`) among its new blocks, its
    `turn` blocks first (`_size_turn_blocks`); returns those (in the prompt until the turn ends)."""
    events = shares.events
    scoped = [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].turn]
    if not scoped:
        shares.share(total, pending)
        shares.close_request(at)
        return []
    turn_slots = set(scoped)  # made once: the test below runs for every pending block
    others = [slot for slot in pending if slot not in turn_slots]
    att = _size_turn_blocks(events, scoped, others, total, shares.tokens, counter, shares.rule)
    shares.share(total - att, others)
    shares.close_request(at)
    return scoped


def _sized(
    events: list[Event],
    tokens: dict[tuple[int, int], int],
    ttl_at: dict[tuple[int, int], str],
    tail_at: dict[int, int],
    system: tuple[str, int, int, int, int, str],
    unsized: bool = False,
) -> list[Event]:
    """The events with their blocks' tokens and marks set, the system part first (`system`:
    the trace name, W, the first block's end, the opening's head and end, the system ttl) and
    again where a restarted CLI process starts (`tail_at`); `unsized`: every block 0 (`NO_MARKS`)."""
    name, w, head, first_head, first_end, sys_ttl = system
    sys_ttl = "" if unsized else sys_ttl
    out: list[Event] = []
    for i, ev in enumerate(events):
        if i in tail_at:
            t = ev.t if isinstance(ev, MessageEvent) else None
            restarted = _system_blocks(name, w, head, tail_at[i], sys_ttl, f"-{i}")
            out.append(SystemEvent(restarted, t=t if t is not None else 0.0))
        cs = tuple(
            replace(
                c,
                tokens=0 if unsized else tokens.get((i, j), 0) if c.kind != "image" else None,
                cache="" if unsized else ttl_at.get((i, j), ""),
            )
            for j, c in enumerate(blocks_of(ev))
        )
        cs = tuple(  # a turn block given as a size: its bytes for byte-based estimators
            replace(c, nbytes=(c.tokens or 0) * ASSUMED_BYTES_PER_TOKEN) if c.turn and c.text is None else c
            for c in cs
        )
        out.append(_with_contents(ev, cs))
    opening = _system_blocks(name, w, first_head, first_end, sys_ttl, "")
    if opening:
        out.insert(0, SystemEvent(opening, t=0.0))
    return out


def _system_blocks(name: str, w: int, head: int, end: int, ttl: str, tail: str) -> tuple[Content, ...]:
    """The system part in marked blocks, as sizes: the static prefix W an earlier session wrote,
    the rest up to `head` (the end of the first system block: the whole system when the bill shows
    no per-process tail) and the tail up to `end` (`tail` names a restarted process's own). With a
    tail, the marks are Claude Code's two (the ends of its two system blocks, system_tail.py): W is
    no mark of the conversation's requests (fidelity replays write it as another session's)."""
    parts = [(w, "static"), (head - w, "session")] if 0 < w < head else [(head, "static")]
    if end > head:
        parts.append((end - head, f"tail{tail}"))
    return tuple(
        Content(
            "text",
            nbytes=n * ASSUMED_BYTES_PER_TOKEN,
            key=f"{name}:system-{label}",
            tokens=n,
            cache="" if end > head and label == "static" and 0 < w < head else ttl,
        )
        for n, label in parts
        if n > 0
    )
