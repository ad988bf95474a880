"""Harness H's handoff (H-16): after a summarizing compaction the new conversation starts from the
handoff and a fresh observation of the game, a new screenshot like the latest one it saw.

A function of the transcript, kept apart from `Conversation` (sim/harness/conversation.py, whose
`_compact` calls it) so that each module stays small.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript


def fresh_observation(tr: Transcript, factory: BlockFactory, index: int) -> Message | None:
    """A new screenshot like the first unpinned image of the newest message holding one
    (H-16), found from the transcript's image positions; None when the conversation has none.
    `index`: the harness's request index, naming the image's block."""
    images, blocks = tr.image_pos, tr.blocks
    newest = next((p for p in reversed(images) if not blocks[p].pinned), -1)
    if newest < tr.system_end:
        return None
    start = tr.msg_starts[bisect_right(tr.msg_starts, newest) - 1]
    first = next(p for p in images[bisect_left(images, start) :] if not blocks[p].pinned)
    b = blocks[first]
    img = factory.image("user", b.width, b.height, b.nbytes, f"fresh-{index}")
    return Message.of("user", (img,), "observation")
