"""What a policy component sees (a read-only view) and what it returns (edits).

Components never mutate the conversation and never import simpy (DESIGN.md): they read a `View`
and return `Edit`s, which the harness applies. An edit replaces the messages from `first` on, so
the first edited block is exactly where the prompt cache breaks, and its `cause` is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.makers import slots_maker
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript

_DEFAULT_FACTORY = BlockFactory()


@dataclass(slots=True)
class Anchor:
    """The provider-reported size of the context after a reply (H-13, C-4), with the transcript's
    monotonic counters at that moment, so only what was added since is estimated. A value, never
    changed once made (`dataclasses.replace` makes another); not frozen, since one is made per
    reply and a frozen dataclass takes several times longer to build."""

    tokens: int
    added_bytes: int
    added_images: int
    trustworthy: bool = True
    cache_read: int = 0  # of `tokens`, what the provider read from its cache (a client may count it twice)


@dataclass(slots=True)
class View:
    """What a component reads: the transcript (live) and the harness's numbers at this moment.
    Read-only for components (they never assign to it, nor keep it past their call); the harness
    that made it brings its numbers up to date in place before each use (`Conversation.view`:
    not one View made per request, issue 13), which is why it is not frozen."""

    tr: Transcript
    anchor: Anchor | None
    budget: int  # the harness's working budget (H-11) or the model window (C-1)
    window: int  # the model's real context window
    preparation_messages: int  # number of pinned messages at the start (H-2)
    prev_end: int  # last block of the previous request, -1 if none or invalid
    first_after_reset: bool  # no request yet since the start or the last compaction
    pinned_images: int = 0
    max_output: int = 0
    factory: BlockFactory = _DEFAULT_FACTORY  # the provider's tokenizer, for blocks a policy makes
    # blocks made by `text_block` for this conversation: a placeholder is the same block each time
    made: dict[tuple[str, str, str], Block] = field(default_factory=dict)

    @property
    def unpinned_images(self) -> int:
        return self.tr.message_images - self.pinned_images

    @property
    def prep_end(self) -> int:
        """Last block of the pinned preparation exchange, -1 if there is none."""
        if self.preparation_messages <= 0 or self.preparation_messages > len(self.tr.messages):
            return -1
        return self.tr.message_end(self.preparation_messages - 1) - 1


def text_block(view: View, like: Block, text: str, kind: str = "text", tool_id: str = "") -> Block:
    """A short text block a policy puts in place of `like` (a placeholder), with true tokens from
    the provider's tokenizer, so a policy never guesses the truth. Made once per conversation
    for a role, text and kind (`View.made`); with `tool_id`, that block answering the tool call."""
    key = (like.role, text, kind)
    b = view.made.get(key)
    if b is None:
        b = view.made[key] = view.factory.text(like.role, text, kind=kind, placeholder=True)
    return b.for_tool(tool_id) if tool_id else b


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace messages[first:] by `messages`; `cause` names why (eviction, trim, compaction)."""

    first: int
    messages: tuple[Message, ...]
    cause: str
    detail: int = 0  # images evicted, tool pairs trimmed, ...
    # Hints, not part of what the edit is (not compared):
    # the indexes (in the conversation) of the messages that differ from the conversation's, when
    # the component knows them (rewrite_blocks does): the transcript then swaps them without
    # comparing every message after the first (issue 13); empty when not known
    swapped: tuple[int, ...] = field(default=(), compare=False)
    # how many of `messages` at the end are the conversation's own last messages, unchanged, when
    # the component knows it (a rolling window does): the transcript then moves them without
    # comparing them one by one; 0 when not known
    kept: int = field(default=0, compare=False)


def rewrite_blocks(view: View, replace: dict[tuple[int, int], Block], cause: str) -> Edit | None:
    """An edit that swaps single blocks, addressed as (message index, block index)."""
    if not replace:
        return None
    by_msg: dict[int, dict[int, Block]] = {}
    for (m, i), b in replace.items():
        by_msg.setdefault(m, {})[i] = b
    first = min(by_msg)
    msgs = view.tr.messages
    out = msgs[first:]  # the messages after it as they are, the ones with swaps made anew
    for m, swaps in by_msg.items():
        msg = msgs[m]
        blocks = tuple([swaps.get(i, b) for i, b in enumerate(msg.blocks)])
        out[m - first] = Message.of(msg.role, blocks, msg.tag, msg.pinned)
    return _edit(first, tuple(out), cause, detail=len(replace), swapped=tuple(sorted(by_msg)))


_edit = slots_maker(Edit)  # Edit's constructor without a frozen __init__'s cost (sim/core/makers.py)
