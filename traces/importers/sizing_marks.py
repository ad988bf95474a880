"""Where a recorded harness put its message cache marks, as block positions (event index, block
index) in an importer's event list (traces/importers/sizing.py sizes the blocks and puts the marks'
ttl there): Claude Code's second mark on the reply before the prompt (or on the @-mentioned file's
own message), Cline CLI's one mark on the user's latest prompt."""

from __future__ import annotations

from ctxbench.traces.model import CompactionEvent, Content, Event, MessageEvent


def blocks_of(ev: Event) -> tuple[Content, ...]:
    """The blocks an event adds to the prompt (a compaction: its summary)."""
    if isinstance(ev, MessageEvent):
        return ev.content
    if isinstance(ev, CompactionEvent):
        return ev.summary
    return ()


def _reply_mark(events: list[Event], i: int) -> tuple[int, int] | None:
    """The block of reply `i` that carries the second message mark: its last block, unless that
    is a thinking block (which cannot carry cache_control, providers.md §1.2)."""
    if i < 0:
        return None
    blocks = blocks_of(events[i])
    if not blocks or blocks[-1].kind == "thinking":
        return None
    return (i, len(blocks) - 1)


def second_mark(events: list[Event], last: int, last_reply: int) -> tuple[int, int] | None:
    """The block carrying the second message mark of a request whose prompt ends in event `last`:
    the last block of the message before it when that is a user message of `turn` blocks (an
    @-mentioned file's Read call, sent as a message of its own: bench/claude_code_wire.md §1),
    else the reply's (`_reply_mark`)."""
    prev = events[last - 1] if last > 0 else None
    if (
        isinstance(prev, MessageEvent)
        and prev.role == "user"
        and prev.content
        and all(c.turn for c in prev.content)
    ):
        return (last - 1, len(prev.content) - 1)
    return _reply_mark(events, last_reply)


def text_mark(i: int, ev: MessageEvent) -> tuple[int, int] | None:
    """The last text block of user message `ev` (event i): where Cline CLI 3.x puts its only cache
    mark, on the user's latest prompt (traces/importers/cline.py); None without a text block."""
    texts = [j for j, c in enumerate(ev.content) if c.kind == "text"]
    return (i, texts[-1]) if texts else None
