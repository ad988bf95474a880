"""Where a recorded harness put its message cache marks, as block positions (event index, block
index) in an importer's event list (traces/importers/sizing.py sizes the blocks and puts the marks'
ttl there): Claude Code's second mark on the reply before the prompt (or on the @-mentioned file's
own message), Cline CLI's one mark on the user's latest prompt; a conversation sent without any
(`NO_MARKS`)."""

from __future__ import annotations

from ctxbench.traces.model import CompactionEvent, Content, Event, MessageEvent

# Every request of the conversation bills its whole prompt as uncached input, none a cache read
# or write: the harness sent no cache marks (Claude Code's DISABLE_PROMPT_CACHING), or a relay
# dropped them. sizing.py gives its blocks 0 tokens, images and thinking too, and no marks, so the
# replay sends the billed input after them and caches nothing (images at the model's pixel rule
# came on top of the billed input: on the test part's LilLeapo/cccc_clash_test, 490 tokens too
# many on every request after one; thinking sized where a prompt shrank, 13562964800/claude-skills).
# Sized on the whole prompt instead, a prompt that grows and shrinks between requests (content the
# log does not show) moved that error into the prediction. On the development part 655 requests in
# 9 accounts (linxiaotutututu1123/3579: 536) are in such conversations, none with an image: within
# tolerance before and after.
NO_MARKS = "no request bills a cache read or write: sent without cache marks (meta message_mark 'none')"


def never_cached(events: list[Event]) -> bool:
    """Whether the conversation's requests bill a prompt and none of them a cache read or write
    (`NO_MARKS`)."""
    usages = [ev.usage for ev in events if isinstance(ev, MessageEvent) and ev.usage is not None]
    cached = any(u.cache_read or u.cache_write_5m or u.cache_write_1h for u in usages)
    return any(u.total_input for u in usages) and not cached


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
