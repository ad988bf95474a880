"""A conversation's prompt as flat arrays with a chained prefix hash, updated incrementally.

Order is tools → system → messages (providers.md §1.1). For block i, `hashes[i]` is
`hashes[i-1] + prefix_term(rank_i, digest_i)` from a fixed seed (`sim/chain.py`), so appending a
message hashes only its new blocks, an edit re-hashes only from the first changed message, and a
swap in place hashes only the swapped blocks (the later values move by one constant).
Running sums of tokens (per block), the text bytes of the head (per block) and of all messages
(one sum: images are counted, not sized) and the positions of the images answer every size query
without a scan; the image chain (`img_hashes`) lets a provider tell whether a request's images
extend an earlier request's.
Running indexes serve the policies and providers without a scan: the block positions of the
unpinned images (image eviction), the messages holding thinking blocks (providers that strip
them), and the block indexes and message sums a component asks for (`block_index`,
`message_sums`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from itertools import chain as _chain
from operator import attrgetter

from ctxbench.sim.chain import CHAIN_SEED, chain, prefix_term
from ctxbench.sim.content import BILLING_HEADER, BILLING_HEADER_DIGEST, IMAGE, Block, Message
from ctxbench.sim.transcript_edits import move_tail, prefix_hashes, replace_head, running, swap

_join = _chain.from_iterable  # the items of several sequences, one after the other
_nbytes = attrgetter("nbytes")  # a message's text bytes


class Transcript:
    """Blocks of tools, system and messages with their chain hashes and running sums.

    Per block: the block, its chain hash and the running token count. Per image: its position and
    the image chain. Per message: its first block; their text bytes in one sum. Monotonic
    counters (`added_bytes`, `added_images`, `added_tokens`) only ever grow, so an estimator
    anchored at one moment can measure what was added since without ever subtracting what an edit
    removed (H-13).
    """

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

    def fork(self, m: int | None = None) -> Transcript:
        """A new transcript with the same tools, system and messages[:m] (all by default), as if
        they had been appended to a fresh one (the 'added' counters count them), without
        re-hashing: its arrays are copies of this one's prefix."""
        t = Transcript.__new__(Transcript)
        m = len(self.messages) if m is None else m
        pos = self.msg_starts[m] if m < len(self.messages) else len(self.blocks)
        t.blocks, t.hashes, t.cum_tokens = self.blocks[:pos], self.hashes[:pos], self.cum_tokens[:pos]
        images = self.images_before(pos)
        t.image_pos, t.img_hashes = self.image_pos[:images], self.img_hashes[: images + 1]
        t.unpinned_imgs = self.unpinned_imgs[: bisect_left(self.unpinned_imgs, pos)]
        t.messages, t.msg_starts = self.messages[:m], self.msg_starts[:m]
        t.message_bytes = sum(map(_nbytes, t.messages))
        t.thinking_msgs = self.thinking_msgs[: bisect_left(self.thinking_msgs, m)]
        t._block_indexes = {f: idx[: bisect_left(idx, pos)] for f, idx in self._block_indexes.items()}
        t._message_sums = {f: sums[:m] for f, sums in self._message_sums.items()}
        t.tools_end, t.system_end, t.first_deferred = self.tools_end, self.system_end, self.first_deferred
        t.deferred_tools = self.deferred_tools
        t.header_pos, t.header_delta = self.header_pos, self.header_delta
        t.head_bytes = list(self.head_bytes)
        t.added_bytes = t.message_bytes
        t.added_images = images - self.images_before(self.system_end)
        t.added_tokens = self.tokens_before(pos) - self.tokens_before(self.system_end)
        t.changed_from = None
        return t

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def total_tokens(self) -> int:
        return self.cum_tokens[-1] if self.cum_tokens else 0

    @property
    def total_bytes(self) -> int:
        """Text bytes of every block (images are counted, not sized)."""
        return (self.head_bytes[-1] if self.head_bytes else 0) + self.message_bytes

    @property
    def total_images(self) -> int:
        return len(self.image_pos)

    @property
    def message_images(self) -> int:
        """Images in the messages segment."""
        return len(self.image_pos) - self.images_before(self.system_end)

    def tokens_before(self, pos: int) -> int:
        """Tokens of blocks [0, pos)."""
        return self.cum_tokens[pos - 1] if pos > 0 else 0

    def bytes_before(self, pos: int) -> int:
        """Text bytes of blocks [0, pos) (inside the messages, a sum over the messages before pos:
        no size query of the simulation asks for one)."""
        if pos <= self.system_end:
            return self.head_bytes[pos - 1] if pos > 0 else 0
        m = bisect_right(self.msg_starts, pos - 1) - 1  # the message holding block pos - 1
        before = self.bytes_before(self.system_end) + sum(map(_nbytes, self.messages[:m]))
        part = self.messages[m].blocks[: pos - self.msg_starts[m]]
        return before + sum(b.nbytes for b in part if b.kind != IMAGE)

    def images_before(self, pos: int) -> int:
        """Images among blocks [0, pos)."""
        if pos >= len(self.blocks):
            return len(self.image_pos)
        return bisect_left(self.image_pos, pos)

    def message_end(self, m: int) -> int:
        """Block index one past message m."""
        return self.msg_starts[m + 1] if m + 1 < len(self.msg_starts) else len(self.blocks)

    def message_at(self, pos: int) -> int:
        """Index of the message holding block `pos` (-1 for tools and system)."""
        return bisect_right(self.msg_starts, pos) - 1

    # ------------------------------------------------------------ indexes a component asks for
    def block_index(self, pred: Callable[[Block], bool]) -> list[int]:
        """Ascending positions of the blocks for which `pred` (a pure function of one block, the
        same function object each time) holds. Built by one scan on the first call, then kept
        up to date by every append and edit, so a component that asks on every request does
        work bounded by what it reads, not by the prompt; transcripts never asked pay nothing.
        Read-only for the caller."""
        idx = self._block_indexes.get(pred)
        if idx is None:
            idx = self._block_indexes[pred] = [p for p, b in enumerate(self.blocks) if pred(b)]
        return idx

    def message_sums(self, f: Callable[[Message], int]) -> list[int]:
        """Running sums of `f` (a pure function of one message) over the messages: entry m is
        f(messages[0]) + ... + f(messages[m]); kept up to date like `block_index`."""
        sums = self._message_sums.get(f)
        if sums is None:
            sums = self._message_sums[f] = list(accumulate(map(f, self.messages)))
        return sums

    # ------------------------------------------------------------ writing
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

    def replace_system(self, system: Sequence[Block]) -> int | None:
        """Replace the system segment by `system` (a later `system` event: an edited memory file,
        C-1); returns the first changed block, or None when nothing changed.

        Blocks equal at the front are kept, so the break starts at the first changed system block;
        everything after it (the rest of the system and every message) is hashed again, once per
        change. The new blocks count as added content (an anchored estimate sees them, H-13/C-4);
        what they replaced is never subtracted."""
        return replace_head(self, system, tools=False)

    def replace_tools(self, tools: Sequence[Block]) -> int | None:
        """Replace the tools segment by `tools` (a later `tools` event: e.g. deferred tools a tool
        search loaded), as `replace_system` does the system segment."""
        return replace_head(self, tools, tools=True)

    def append(self, msg: Message) -> None:
        """Append a new message; counts towards the monotonic 'added' counters. The hot path of
        every run (once per message of the trace): the same work as `_add`, for one message."""
        own = self.messages
        if msg.thinking:
            self.thinking_msgs.append(len(own))
        self.message_bytes += msg.nbytes
        if self._message_sums:
            for f, sums in self._message_sums.items():
                sums.append((sums[-1] if sums else 0) + f(msg))
        blocks = self.blocks
        start = len(blocks)
        self.msg_starts.append(start)
        own.append(msg)
        hashes = self.hashes
        h = hashes[-1] if start else CHAIN_SEED
        rank = start - self.deferred_tools
        for d in msg.digests:
            h += hash((rank, d))  # == prefix_term(rank, d)
            hashes.append(h)
            rank += 1
        blocks.extend(msg.blocks)
        cum = self.cum_tokens
        t = cum[-1] if start else 0
        cum.extend([t := t + x for x in msg.block_tokens])  # a message's few blocks: cheaper than running()
        if self._block_indexes:
            self._index_blocks(start)
        if msg.images:
            self._index_images((msg,), start)
        self.added_bytes += msg.nbytes
        self.added_images += msg.images
        self.added_tokens += msg.tokens

    def extend(self, msgs: Sequence[Message]) -> None:
        """Append `msgs` in order, as `append` does each (the 'added' counters count them), in one
        pass over their blocks (a summarizer's transcript takes a whole conversation at once)."""
        self._add(msgs)
        for msg in msgs:
            self.added_bytes += msg.nbytes
            self.added_images += msg.images
            self.added_tokens += msg.tokens

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

    def replace_from(
        self, m: int, messages: Sequence[Message], swapped: Sequence[int] = (), kept: int = 0
    ) -> None:
        """Replace messages m.. with `messages` (an edit: placeholders, trims, a new conversation).

        Messages that stay identical at the front of the replaced range are kept, so the break
        (and the re-hashing) starts at the first message that really changed. An edit that swaps
        messages without moving a block, or that keeps the last messages, changes the arrays in
        place (`sim/transcript_edits.py`); any other removes the rest and adds the new messages.
        `swapped` and `kept`, when the caller knows them: the indexes of the messages that differ
        (ascending), and how many of `messages` at the end are this transcript's last messages,
        so that neither needs comparing every message.
        """
        keep = 0
        own = self.messages
        while keep < len(messages) and m + keep < len(own) and messages[keep] is own[m + keep]:
            keep += 1
        m += keep
        new = messages[keep:]
        if not new:
            self.truncate_messages(m)
            return
        in_place = len(new) == len(own) - m and swap(self, m, new, swapped)
        if not in_place and not move_tail(self, m, new, kept):
            self.truncate_messages(m)
            self._add(new)

    def pop_message(self) -> Message:
        """Remove the last message without marking a change (undo of a transient append)."""
        msg = self.messages[-1]
        saved = self.changed_from
        self.truncate_messages(len(self.messages) - 1)
        self.changed_from = saved
        self.added_bytes -= msg.nbytes
        self.added_images -= msg.images
        self.added_tokens -= msg.tokens
        return msg

    def mark_sent(self) -> int | None:
        """Return the first block changed since the last request was sent, and reset it."""
        c, self.changed_from = self.changed_from, None
        return c
