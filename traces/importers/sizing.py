"""Block sizing of imported traces: true tokens per block so that every request's cached part
equals its billed size, the system prompt size S and the warm prefix W, the recorded cache ttl.

The method (C_k, S, W) is described in the `ctxbench.traces.importers.tokens` docstring, which builds the
traces and re-exports these names. Blocks marked `turn` (sent in their own turn only, their text not
logged) get what their request's bill added beyond the rest at the calibrated rates, and leave the
prompt when the next turn starts: that request adds their tokens back to what it added
(`_size_turn_blocks`, bench/claude_code_wire.md §1).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ctxbench.sim.core.catalog import CatalogError, model_info, strips_thinking
from ctxbench.sim.core.tokens import IMAGE_RULES, RateCounter
from ctxbench.traces.importers.base import ImportReport, allocate
from ctxbench.traces.importers.sizing_marks import blocks_of, second_mark, text_mark
from ctxbench.traces.importers.system_tail import system_tails
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


def system_size(events: list[Event], counter: RateCounter, size: Any = _cached) -> tuple[int, int, str]:
    """(S, W, how S was found): see the `ctxbench.traces.importers.tokens` docstring."""
    replies = [(i, e) for i, e in enumerate(events) if isinstance(e, MessageEvent) and e.usage is not None]
    if not replies:
        return 0, 0, "no usage"
    first_i, first = replies[0]
    assert first.usage is not None
    c1 = size(first.usage)
    w = first.usage.cache_read
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


# A text of at least this many bytes sent again (Gemini CLI re-sends its 437-byte session context
# at the head of a compressed history) keeps the size it was given the first time, so the replay
# reads the same prefix as the bill (a Gemini CLI 0.61.0 run: the first request after a compression
# 133 tokens off -> exact). Shorter texts do not: their first size is a byte share of a larger
# delta, and pinning it moved the error onto their neighbours (cua pgadmin / pycharm, cost exact
# -> -0.1 % / -0.2 % with every repeated text pinned).
SAME_TEXT_BYTES = 256


def _long(text: str) -> bool:
    return len(text.encode("utf-8", "surrogatepass")) >= SAME_TEXT_BYTES


def size_events(
    events: list[Event],
    model: str,
    report: ImportReport,
    name: str,
    whole: bool = False,
    marked_messages: int = 2,
    user_prompt_mark: bool = False,
) -> tuple[list[Event], dict[str, Any]]:
    """Set `tokens` on every block so each request's cached part equals its billed C_k, and put
    the recorded cache ttl where the recorded harness put its message marks: the last block before
    each request and, when it marks the last two messages (`marked_messages` 2), the last block of
    the reply before it unless that block is thinking (Claude Code, FORMATS.md §2.2; cli.js: no
    cache_control on a trailing thinking block); with `user_prompt_mark`, only the last text block
    of the latest real user message (Cline CLI 3.x). Returns events (system first)."""
    counter = RateCounter()
    rule = IMAGE_RULES[_image_rule(model)]
    size = _whole if whole else _cached
    s, w, how = system_size(events, counter, size)
    # the system prompt's tail per CLI process (system_tail.py): S is then the first one's end
    tails = None if whole else system_tails(events, s, size, lambda ev: real_user_content(ev.content))
    head = s
    restarts: dict[int, int] = {}  # request number -> the new process's system end
    if tails is not None:
        s = tails.ends[0][1]
        restarts = dict(tails.ends[1:])
        how = f"the end of each CLI process's system prompt, after its first block's ({how}; system_tail.py)"
    tail_at: dict[int, int] = {}  # event index -> the system end of the process that starts there
    requests = 0
    prev_request = -1
    tokens: dict[tuple[int, int], int] = {}
    ttl_at: dict[tuple[int, int], str] = {}
    pending: list[tuple[int, int]] = []
    anchor = s
    ttl = ""
    first_ttl = ""
    shrunk = 0

    allocated: list[tuple[int, int]] = []  # text blocks sized since the start or the last compaction

    def take_back(deficit: int) -> int:
        """The prompt shrank (the harness rewrote earlier content outside the transcript): take
        the missing tokens back from the most recently sized blocks, so later requests stay exact."""
        for slot in reversed(allocated):
            if deficit <= 0:
                break
            d = min(tokens.get(slot, 0), deficit)
            tokens[slot] -= d
            deficit -= d
        return deficit

    sized_text: dict[tuple[str, str], int] = {}  # (kind, text) -> its first size (SAME_TEXT_BYTES)

    def share(total: int, slots: list[tuple[int, int]]) -> None:
        nonlocal shrunk
        fixed = 0
        text_slots = []
        for ev_i, c_i in slots:
            c = blocks_of(events[ev_i])[c_i]
            again = sized_text.get((c.kind, c.text)) if c.text and _long(c.text) else None
            if c.kind == "image":
                n = rule(c.width, c.height)
                tokens[(ev_i, c_i)] = n
                fixed += n
            elif again is not None and fixed + again <= total:
                tokens[(ev_i, c_i)] = again
                fixed += again
            else:
                text_slots.append((ev_i, c_i))
        if total - fixed < 0:
            shrunk += 1
            left = take_back(fixed - total)
            total = fixed - left
        weights = [max(1, blocks_of(events[e])[c].size) for e, c in text_slots]
        for slot, n in zip(text_slots, allocate(total - fixed, weights), strict=True):
            tokens[slot] = n
            c = blocks_of(events[slot[0]])[slot[1]]
            if c.text and _long(c.text) and len(text_slots) > 1:  # sized alone: its message's remainder
                sized_text.setdefault((c.kind, c.text), n)
        allocated.extend(text_slots)

    strip = strips_thinking(model)  # providers.md §1.6, as the provider model does
    kept: list[tuple[int, int]] = []  # sized thinking blocks still in the prompt
    strip_next = False  # a real user message since the last request: thinking is stripped
    unseen: list[tuple[int, int]] = []  # thinking stripped before any request saw it
    last_reply = -1  # the latest reply since the start or the last compaction
    live_turn: list[tuple[int, int]] = []  # sized `turn` blocks still in the prompt
    turn_next = False  # a turn started since the last request: the `live_turn` blocks are gone
    last_role = ""
    message_events: list[int] = []  # event index of each message, in order (what `kept_from` counts)
    prompt_at: tuple[int, int] | None = None  # the latest real user prompt's last text block
    for i, ev in enumerate(events):
        blocks = [(i, j) for j in range(len(blocks_of(ev)))]
        if isinstance(ev, CompactionEvent):
            # the round no bill covers (no summariser request merged) sized, not 0 (issue 29)
            tokens.update({sl: _by_rate(events, sl, counter, rule) for sl in pending if sl not in tokens})
            # the new prompt: the system, the summary, then the messages the harness kept (not the
            # summariser's own request, as policies/recorded.py); those sized already add to the anchor
            since = message_events[ev.kept_from :] if ev.kept_from is not None else []
            held = [e for e in since if _tag(events[e]) != "summary"]
            slots = [(e, j) for e in held for j in range(len(blocks_of(events[e])))]
            anchor = s + sum(tokens[slot] for slot in slots if slot in tokens)
            pending = blocks + [slot for slot in slots if slot not in tokens]
            allocated.clear()
            kept.clear()
            live_turn.clear()
            last_reply = next((e for e in reversed(held) if _role(events[e]) == "assistant"), -1)
            last_role = _role(events[held[-1]]) if held else ""
            continue
        if isinstance(ev, MessageEvent):
            message_events.append(i)
        if isinstance(ev, MessageEvent) and ev.role == "assistant" and ev.usage is not None:
            u = ev.usage
            ttl = "1h" if u.cache_write_1h > 0 else ("5m" if u.cache_write_5m > 0 else (ttl or "5m"))
            first_ttl = first_ttl or ttl
            if user_prompt_mark:
                if prompt_at is not None:
                    ttl_at[prompt_at] = ttl
            elif pending:
                ttl_at[pending[-1]] = ttl
                two = marked_messages >= 2
                reply_mark = second_mark(events, pending[-1][0], last_reply) if two else None
                if reply_mark is not None and reply_mark[0] != pending[-1][0]:
                    ttl_at[reply_mark] = ttl
            if requests in restarts:  # a restarted CLI: its new tail replaces the old one
                anchor += restarts[requests] - s
                s = restarts[requests]
                tail_at[prev_request + 1] = s
            requests += 1
            prev_request = i
            last_reply = i
            gone = 0
            if strip and strip_next:  # the prompt lost every earlier thinking block
                gone = sum(tokens.get(slot, 0) for slot in kept)
                dropped = set(kept)
                allocated[:] = [slot for slot in allocated if slot not in dropped]
                unseen += [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].kind == "thinking"]
                pending = [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].kind != "thinking"]
                kept = []
            vanished = 0
            if turn_next and live_turn:  # the previous turn's own blocks left the prompt
                vanished = sum(tokens.get(slot, 0) for slot in live_turn)
                live_turn = []
            turn_next = False
            total = size(u) - anchor + gone + vanished
            scoped = [slot for slot in pending if blocks_of(events[slot[0]])[slot[1]].turn]
            if scoped:
                turn_slots = set(scoped)  # made once: the test below runs for every pending block
                others = [slot for slot in pending if slot not in turn_slots]
                att = _size_turn_blocks(events, scoped, others, total, tokens, counter, rule)
                share(total - att, others)
                live_turn += scoped
            else:
                share(total, pending)
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
    for ev_i, c_i in unseen:  # never in any billed prompt: sized at the calibrated byte rate
        c = blocks_of(events[ev_i])[c_i]
        tokens[(ev_i, c_i)] = counter.count_bytes(c.size, c.lang)
    for slot in pending:  # after the last request: the last reply at its output, the rest by rate
        tokens[slot] = _by_rate(events, slot, counter, rule)
    if shrunk:
        report.note(
            f"{name}: the prompt shrank before {shrunk} request(s) "
            "(content rewritten outside the transcript): "
            "the missing tokens were taken back from the blocks just before"
        )
    out: list[Event] = []
    sys_ttl = first_ttl or "5m"
    first_end = tails.ends[0][1] if tails is not None else s
    for i, ev in enumerate(events):
        if i in tail_at:
            t = ev.t if isinstance(ev, MessageEvent) else None
            restarted = _system_blocks(name, w, head, tail_at[i], sys_ttl, f"-{i}")
            out.append(SystemEvent(restarted, t=t if t is not None else 0.0))
        cs = tuple(
            replace(
                c, tokens=tokens.get((i, j), 0) if c.kind != "image" else None, cache=ttl_at.get((i, j), "")
            )
            for j, c in enumerate(blocks_of(ev))
        )
        cs = tuple(  # a turn block given as a size: its bytes for byte-based estimators
            replace(c, nbytes=(c.tokens or 0) * ASSUMED_BYTES_PER_TOKEN) if c.turn and c.text is None else c
            for c in cs
        )
        out.append(_with_contents(ev, cs))
    opening = _system_blocks(name, w, head if tails is not None else first_end, first_end, sys_ttl, "")
    if opening:
        out.insert(0, SystemEvent(opening, t=0.0))
    meta: dict[str, Any] = {
        "system_tokens": first_end,
        "system_inferred_from": how,
        "warm_tokens": w,
        "ttl": sys_ttl,
        "sized_on": "prompt" if whole else "cached",  # bench/fidelity/compare.py: where the uncached tail is
        "marked_messages": marked_messages,
    }
    if tails is not None:  # bench/fidelity/causes.py `system_at`
        meta["system_head"] = head
        meta["system_restarts"] = [list(x) for x in tails.ends[1:]]
    return out, meta


def _by_rate(events: list[Event], slot: tuple[int, int], counter: RateCounter, rule: Any) -> int:
    """A block no bill sizes: an image by rule, a reply's block by its output, text by rate."""
    ev, c = events[slot[0]], blocks_of(events[slot[0]])[slot[1]]
    if c.kind == "image":
        return int(rule(c.width, c.height))
    if isinstance(ev, MessageEvent) and ev.role == "assistant" and ev.output_tokens is not None:
        return allocate(ev.output_tokens, [max(1, x.size) for x in ev.content])[slot[1]]
    return counter.count_bytes(c.size, c.lang)


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
