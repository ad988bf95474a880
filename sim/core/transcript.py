"""A conversation's prompt as flat arrays with a chained prefix hash, updated incrementally.

Order is tools → system → messages (providers.md §1.1). For block i, `hashes[i]` is
`hashes[i-1] + prefix_term(rank_i, digest_i)` from a fixed seed (`sim/core/chain.py`), so appending a
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

from ctxbench.sim.core.chain import CHAIN_SEED
from ctxbench.sim.core.content import IMAGE, Block, Message
from ctxbench.sim.core.transcript_arrays import TranscriptArrays
from ctxbench.sim.core.transcript_edits import move_tail, replace_head, swap

_join = _chain.from_iterable  # the items of several sequences, one after the other
_nbytes = attrgetter("nbytes")  # a message's text bytes


class Transcript(TranscriptArrays):
    """Blocks of tools, system and messages with their chain hashes and running sums.

    Per block: the block, its chain hash and the running token count. Per image: its position and
    the image chain. Per message: its first block; their text bytes in one sum. Monotonic
    counters (`added_bytes`, `added_images`, `added_tokens`) only ever grow, so an estimator
    anchored at one moment can measure what was added since without ever subtracting what an edit
    removed (H-13).
    """

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

    def replace_from(
        self, m: int, messages: Sequence[Message], swapped: Sequence[int] = (), kept: int = 0
    ) -> None:
        """Replace messages m.. with `messages` (an edit: placeholders, trims, a new conversation).

        Messages that stay identical at the front of the replaced range are kept, so the break
        (and the re-hashing) starts at the first message that really changed. An edit that swaps
        messages without moving a block, or that keeps the last messages, changes the arrays in
        place (`sim/core/transcript_edits.py`); any other removes the rest and adds the new messages.
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
