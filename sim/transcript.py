"""A conversation's prompt as flat arrays with a chained prefix hash, updated incrementally.

Order is tools → system → messages (providers.md §1.1). For block i, `hashes[i]` is
`H(hashes[i-1], digest_i)` seeded with a fixed constant (DESIGN.md, vLLM's block-hash chain), so
appending a message hashes only its new blocks, and an edit re-hashes only from the first
changed message. `cum_tokens`, `cum_bytes` (text bytes; images are counted, not sized) and
`cum_images` make every size query O(1); the image chain (`img_hashes`) lets a provider tell
whether a request's images extend an earlier request's. Two running indexes serve the policies
and providers without a scan: the block positions of the unpinned images (image eviction) and
the messages holding thinking blocks (providers that strip them).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from ctxbench.sim.content import IMAGE, Block, Message

CHAIN_SEED = 0x243F6A8885A308D3  # fixed seed: same content → same hashes in every run


_M64 = (1 << 64) - 1


def chain(parent: int, digest: int) -> int:
    """h_i = mix(h_{i-1}·R + d_i) mod 2⁶⁴: a splitmix64 finaliser over the parent and the block's
    content digest (performance.md B4 variant (c); ~10⁻⁹ collision odds at 3·10⁵ entries)."""
    x = (parent * 0x9E3779B97F4A7C15 + digest) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class Transcript:
    """Blocks of tools, system and messages with their chain hashes and running sums.

    Monotonic counters (`added_bytes`, `added_images`, `added_tokens`) only ever grow, so an
    estimator anchored at one moment can measure what was added since without ever subtracting
    what an edit removed (H-13).
    """

    def __init__(self, tools: Sequence[Block] = (), system: Sequence[Block] = ()) -> None:
        self.blocks: list[Block] = []
        self.hashes: list[int] = []
        self.cum_tokens: list[int] = []
        self.cum_bytes: list[int] = []
        self.cum_images: list[int] = []
        self.img_hashes: list[int] = [CHAIN_SEED]  # one more than the images: the seed first
        self.messages: list[Message] = []
        self.msg_starts: list[int] = []
        self.unpinned_imgs: list[int] = []  # block positions of images in no pinned message, ascending
        self.thinking_msgs: list[int] = []  # indices of the messages holding thinking blocks, ascending
        self.added_bytes = 0
        self.added_images = 0
        self.added_tokens = 0
        self.changed_from: int | None = None  # first block changed since `mark_sent`
        self._push_blocks(tools)
        self.tools_end = len(self.blocks)
        self._push_blocks(system)
        self.system_end = len(self.blocks)

    def fork(self, m: int | None = None) -> Transcript:
        """A new transcript with the same tools, system and messages[:m] (all by default), as if
        they had been appended to a fresh one (the 'added' counters count them), without
        re-hashing: its arrays are copies of this one's prefix."""
        t = Transcript.__new__(Transcript)
        m = len(self.messages) if m is None else m
        pos = self.msg_starts[m] if m < len(self.messages) else len(self.blocks)
        t.blocks, t.hashes = self.blocks[:pos], self.hashes[:pos]
        t.cum_tokens, t.cum_bytes, t.cum_images = (
            self.cum_tokens[:pos],
            self.cum_bytes[:pos],
            self.cum_images[:pos],
        )
        t.img_hashes = self.img_hashes[: self.images_before(pos) + 1]
        t.messages, t.msg_starts = self.messages[:m], self.msg_starts[:m]
        t.unpinned_imgs = self.unpinned_imgs[: bisect_left(self.unpinned_imgs, pos)]
        t.thinking_msgs = self.thinking_msgs[: bisect_left(self.thinking_msgs, m)]
        t.tools_end, t.system_end = self.tools_end, self.system_end
        t.added_bytes = self.bytes_before(pos) - self.bytes_before(self.system_end)
        t.added_images = self.images_before(pos) - self.images_before(self.system_end)
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
        return self.cum_bytes[-1] if self.cum_bytes else 0

    @property
    def message_images(self) -> int:
        """Images in the messages segment."""
        return (self.cum_images[-1] if self.cum_images else 0) - self.images_before(self.system_end)

    def tokens_before(self, pos: int) -> int:
        """Tokens of blocks [0, pos)."""
        return self.cum_tokens[pos - 1] if pos > 0 else 0

    def bytes_before(self, pos: int) -> int:
        return self.cum_bytes[pos - 1] if pos > 0 else 0

    def images_before(self, pos: int) -> int:
        return self.cum_images[pos - 1] if pos > 0 else 0

    def message_end(self, m: int) -> int:
        """Block index one past message m."""
        return self.msg_starts[m + 1] if m + 1 < len(self.msg_starts) else len(self.blocks)

    # ------------------------------------------------------------ writing
    def _push_blocks(self, blocks: Iterable[Block]) -> None:
        """Extend every array by loose blocks (tools and system, before any message)."""
        self._push(Message.of("tools", tuple(blocks)), index=False)

    def _push(self, msg: Message, index: bool = True) -> None:
        """Extend every array by one message's blocks (hot path: the chain step is inlined, the
        running sums are the message's own shifted by the totals so far)."""
        hashes = self.hashes
        start = len(hashes)
        h = hashes[-1] if start else CHAIN_SEED
        add_hash = hashes.append
        for d in msg.digests:
            x = (h * 0x9E3779B97F4A7C15 + d) & _M64  # == chain(h, d)
            x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
            h = x ^ (x >> 31)
            add_hash(h)
        self.blocks.extend(msg.blocks)
        if start:
            self.cum_tokens.extend(map(self.cum_tokens[-1].__add__, msg.tok_ends))
            self.cum_bytes.extend(map(self.cum_bytes[-1].__add__, msg.byte_ends))
            im = self.cum_images[-1]
            self.cum_images.extend(map(im.__add__, msg.img_ends))
        else:
            self.cum_tokens.extend(msg.tok_ends)
            self.cum_bytes.extend(msg.byte_ends)
            self.cum_images.extend(msg.img_ends)
        if msg.images:
            img_hashes = self.img_hashes
            pinned = msg.pinned or not index
            for i, b in enumerate(msg.blocks):
                if b.kind == IMAGE:
                    img_hashes.append(chain(img_hashes[-1], b.digest))
                    if not (pinned or b.pinned):
                        self.unpinned_imgs.append(start + i)

    def append(self, msg: Message) -> None:
        """Append a new message; counts towards the monotonic 'added' counters."""
        if msg.thinking:
            self.thinking_msgs.append(len(self.messages))
        self.msg_starts.append(len(self.blocks))
        self.messages.append(msg)
        self._push(msg)
        self.added_bytes += msg.nbytes
        self.added_images += msg.images
        self.added_tokens += msg.tokens

    def truncate_messages(self, m: int) -> None:
        """Drop messages m.. (their blocks, hashes and sums)."""
        if m >= len(self.messages):
            return
        pos = self.msg_starts[m]
        del self.messages[m:], self.msg_starts[m:]
        for index, first in ((self.thinking_msgs, m), (self.unpinned_imgs, pos)):
            while index and index[-1] >= first:
                index.pop()
        del self.blocks[pos:], self.hashes[pos:], self.cum_tokens[pos:], self.cum_bytes[pos:]
        del self.cum_images[pos:]
        del self.img_hashes[(self.cum_images[-1] if self.cum_images else 0) + 1 :]
        self.changed_from = pos if self.changed_from is None else min(self.changed_from, pos)

    def replace_from(self, m: int, messages: Sequence[Message]) -> None:
        """Replace messages m.. with `messages` (an edit: placeholders, trims, a new conversation).

        Messages that stay identical at the front of the replaced range are kept, so the break
        (and the re-hashing) starts at the first message that really changed.
        """
        keep = 0
        own = self.messages
        while keep < len(messages) and m + keep < len(own) and messages[keep] is own[m + keep]:
            keep += 1
        self.truncate_messages(m + keep)
        for msg in messages[keep:]:
            if msg.thinking:
                self.thinking_msgs.append(len(own))
            self.msg_starts.append(len(self.blocks))
            own.append(msg)
            self._push(msg)

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
