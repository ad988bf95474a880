"""The arrays of a conversation's prompt and the writes that keep them in step: what the
transcript (`sim/core/transcript.py`) and the edits it makes in place (`sim/core/transcript_edits.py`)
both work on, so that neither imports the other.

Per block: the block, its chain hash and the running token count. Per image: its position and the
image chain. Per message: its first block; their text bytes in one sum. Monotonic counters
(`added_bytes`, `added_images`, `added_tokens`) only ever grow (H-13). Appending hashes only the new
blocks; dropping messages cuts every array at their first block.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, islice
from itertools import chain as _chain
from operator import attrgetter

from ctxbench.sim.core.chain import CHAIN_SEED, chain, prefix_term
from ctxbench.sim.core.content import BILLING_HEADER, BILLING_HEADER_DIGEST, IMAGE, Block, Message

_join = _chain.from_iterable  # the items of several sequences, one after the other
_nbytes = attrgetter("nbytes")  # a message's text bytes


def running(total: int, values: Iterable[int]) -> Iterator[int]:
    """total + values[0], total + values[0] + values[1], ...: running sums added up in C (a
    comprehension's loop costs more per item on the edits' long runs, issue 13)."""
    return islice(accumulate(values, initial=total), 1, None)


def prefix_hashes(h: int, rank: int, digests: Iterable[int]) -> Iterator[int]:
    """The prefix hashes of blocks with `digests`, the first of rank `rank`, after the prefix hash
    `h`: h + prefix_term(rank, d0), then + prefix_term(rank + 1, d1), ... (`sim/core/chain.py`), in C
    (hash of each (rank, digest) pair enumerate makes, summed by `running`): on the long runs of
    an edit, half the cost of a comprehension."""
    return running(h, map(hash, enumerate(digests, rank)))



class TranscriptArrays:
    """The prompt's arrays (tools → system → messages) and the writes that extend or cut them;
    `Transcript` adds the queries and the edits."""

    def __init__(self, tools: Sequence[Block] = (), system: Sequence[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.hashes: list[int] = []
        self.cum_tokens: list[int] = []
        self.image_pos: list[int] = []  # block positions of every image, ascending
        self.img_hashes: list[int] = [CHAIN_SEED]  # one more than the images: the seed first
        self.unpinned_imgs: list[int] = []  # block positions of images in no pinned message, ascending
        self.messages: list[Message] = []
        self.msg_starts: list[int] = []
        self.message_bytes = 0  # text bytes of all messages, one sum (a swap changes it by the difference)
        self.thinking_msgs: list[int] = []  # indices of the messages holding thinking blocks, ascending
        self.added_bytes = 0
        self.added_images = 0
        self.added_tokens = 0
        self.changed_from: int | None = None  # first block changed since `mark_sent`
        self._block_indexes: dict[Callable[[Block], bool], list[int]] = {}  # block_index()
        self._message_sums: dict[Callable[[Message], int], list[int]] = {}  # message_sums()
        self.first_deferred = -1  # position of the first deferred tool (-1: none)
        self.deferred_tools = 0  # how many: a block's rank in the prefix hash is its position less these
        # Claude Code's billing-header system block (the first one; -1: none) and what adding
        # `header_delta` to hashes[header_pos:] makes of them: the hashes the same prompt would
        # have with that block's digest replaced by BILLING_HEADER_DIGEST (one constant for every
        # position from it on, the chain being a sum). Found once, when the head is pushed.
        self.header_pos = -1
        self.header_delta = 0
        self.head_bytes: list[int] = []  # text bytes through each tools/system block
        self._push_head(tools)
        self.tools_end = len(self.blocks)
        self._push_head(system)
        self.system_end = len(self.blocks)

    def images_before(self, pos: int) -> int:
        """Images among blocks [0, pos)."""
        if pos >= len(self.blocks):
            return len(self.image_pos)
        return bisect_left(self.image_pos, pos)

    def _push_head(self, blocks: Sequence[Block]) -> None:
        """Extend the tools/system segment (before any message) by `blocks`: hashes, tokens, text
        bytes, images. A deferred tool (`defer_loading`) is a position of its own but not part of
        the prefix as the API renders it (providers.md §1.6: tool search "append[s]
        tool_reference blocks instead of changing the prefix"): the chain hash does not move."""
        start = len(self.blocks)
        h = self.hashes[-1] if start else CHAIN_SEED
        t = self.cum_tokens[-1] if start else 0
        text = self.head_bytes[-1] if self.head_bytes else 0
        for b in blocks:
            if b.deferred:
                if self.first_deferred < 0:
                    self.first_deferred = len(self.blocks)
                self.deferred_tools += 1
            else:
                rank = len(self.blocks) - self.deferred_tools
                h += prefix_term(rank, b.digest)
                text_ = b.text
                if self.header_pos < 0 and b.role == "system" and text_ and text_.startswith(BILLING_HEADER):
                    self.header_pos = len(self.blocks)
                    self.header_delta = prefix_term(rank, BILLING_HEADER_DIGEST) - prefix_term(rank, b.digest)
            t += b.tokens
            if b.kind == IMAGE:
                self.image_pos.append(len(self.blocks))
                self.img_hashes.append(chain(self.img_hashes[-1], b.digest))
            else:
                text += b.nbytes
            self.blocks.append(b)
            self.hashes.append(h)
            self.cum_tokens.append(t)
            self.head_bytes.append(text)
        if self._block_indexes:
            self._index_blocks(start)

    def _add(self, msgs: Sequence[Message]) -> None:
        """Add `msgs` after the last message: their text bytes, per message its start and the
        message indexes; then, for all their blocks in one pass, the chain hashes, running tokens,
        block indexes and image chain (an edit re-adds many messages at once)."""
        blocks = self.blocks
        start = len(blocks)
        own, starts, thinking = self.messages, self.msg_starts, self.thinking_msgs
        pos = start
        self.message_bytes += sum(map(_nbytes, msgs))
        for msg in msgs:
            if msg.thinking:
                thinking.append(len(own))
            starts.append(pos)
            own.append(msg)
            pos += len(msg.blocks)
        for f, sums in self._message_sums.items():
            sums.extend(running(sums[-1] if sums else 0, map(f, msgs)))
        hashes = self.hashes
        h = hashes[-1] if start else CHAIN_SEED
        hashes.extend(prefix_hashes(h, start - self.deferred_tools, _join([m.digests for m in msgs])))
        blocks.extend(_join([m.blocks for m in msgs]))
        cum = self.cum_tokens
        t = cum[-1] if start else 0
        cum.extend(running(t, _join([m.block_tokens for m in msgs])))
        if self._block_indexes:
            self._index_blocks(start)
        if any(m.images for m in msgs):
            self._index_images(msgs, start)

    def _index_blocks(self, start: int) -> None:
        """Extend the block indexes components asked for by the blocks from `start` on."""
        blocks = self.blocks
        for pred, idx in self._block_indexes.items():
            for p in range(start, len(blocks)):  # a message's few blocks: no comprehension to set up
                if pred(blocks[p]):
                    idx.append(p)

    def _index_images(self, msgs: Sequence[Message], start: int) -> None:
        """Image positions, the image chain and the unpinned images of `msgs`, added from `start`."""
        image_pos, img_hashes, unpinned = self.image_pos, self.img_hashes, self.unpinned_imgs
        h = img_hashes[-1]
        pos = start
        for msg in msgs:
            if msg.images:
                pinned = msg.pinned
                blocks = msg.blocks
                for at in msg.image_at:
                    b = blocks[at]
                    image_pos.append(pos + at)
                    h = hash((h, b.digest))  # == chain(h, b.digest)
                    img_hashes.append(h)
                    if not (pinned or b.pinned):
                        unpinned.append(pos + at)
            pos += len(msg.blocks)

    def truncate_messages(self, m: int) -> None:
        """Drop messages m.. (their blocks, hashes and sums)."""
        if m < len(self.messages):
            self.message_bytes -= sum(map(_nbytes, self.messages[m:]))
            self._drop_from(m)

    def _drop_from(self, m: int) -> None:
        """`truncate_messages` but for `message_bytes`, which the caller brings up to date (an
        edit that adds the last messages back knows their bytes without counting them)."""
        pos = self.msg_starts[m]
        del self.messages[m:], self.msg_starts[m:]
        for sums in self._message_sums.values():
            del sums[m:]
        for index, first in (
            (self.thinking_msgs, m),
            (self.unpinned_imgs, pos),
            (self.image_pos, pos),
            *((idx, pos) for idx in self._block_indexes.values()),
        ):
            del index[bisect_left(index, first) :]
        del self.blocks[pos:], self.hashes[pos:], self.cum_tokens[pos:]
        del self.img_hashes[len(self.image_pos) + 1 :]
        self.changed_from = pos if self.changed_from is None else min(self.changed_from, pos)

