"""A conversation's prompt as flat arrays with a chained prefix hash, updated incrementally.

Order is tools → system → messages (providers.md §1.1). For block i, `hashes[i]` is
`H(hashes[i-1], digest_i)` seeded with a fixed constant (DESIGN.md, vLLM's block-hash chain), so
appending a message hashes only its new blocks, and an edit re-hashes only from the first
changed message. `cum_tokens`, `cum_bytes` (text bytes; images are counted, not sized) and
`cum_images` make every size query O(1); the image chain (`img_hashes`) lets a provider tell
whether a request's images extend an earlier request's.
"""

from __future__ import annotations

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
        self.img_hashes: list[int] = [CHAIN_SEED]
        self.messages: list[Message] = []
        self.msg_starts: list[int] = []
        self.image_msgs: list[int] = []  # indices of the messages holding images, ascending
        self.added_bytes = 0
        self.added_images = 0
        self.added_tokens = 0
        self.changed_from: int | None = None  # first block changed since `mark_sent`
        self.first_deferred = -1  # position of the first deferred tool (-1: none)
        self._push_tools(tools)
        self.tools_end = len(self.blocks)
        self._push_blocks(system)
        self.system_end = len(self.blocks)

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
        """Extend every array by `blocks` (hot path: the chain step is inlined)."""
        h = self.hashes[-1] if self.hashes else CHAIN_SEED
        t = self.total_tokens
        b = self.total_bytes
        im = self.cum_images[-1] if self.cum_images else 0
        img_hashes = self.img_hashes
        add_block, add_hash = self.blocks.append, self.hashes.append
        add_tok, add_byte, add_img = self.cum_tokens.append, self.cum_bytes.append, self.cum_images.append
        for blk in blocks:
            x = (h * 0x9E3779B97F4A7C15 + blk.digest) & _M64  # == chain(h, blk.digest)
            x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
            h = x ^ (x >> 31)
            t += blk.tokens
            if blk.kind == IMAGE:
                im += 1
                if len(img_hashes) <= im:
                    img_hashes.append(chain(img_hashes[-1], blk.digest))
                else:
                    img_hashes[im] = chain(img_hashes[im - 1], blk.digest)
            else:
                b += blk.nbytes
            add_block(blk)
            add_hash(h)
            add_tok(t)
            add_byte(b)
            add_img(im)
        del img_hashes[im + 1 :]

    def _push_tools(self, tools: Iterable[Block]) -> None:
        """Push tool definitions. A deferred one (`defer_loading`) is a position of its own but
        not part of the prefix as the API renders it (providers.md §1.6: tool search "append[s]
        tool_reference blocks instead of changing the prefix"): the chain hash does not move."""
        for blk in tools:
            if not blk.deferred:
                self._push_blocks((blk,))
                continue
            if self.first_deferred < 0:
                self.first_deferred = len(self.blocks)
            self.blocks.append(blk)
            self.hashes.append(self.hashes[-1] if self.hashes else CHAIN_SEED)
            self.cum_tokens.append(self.total_tokens + blk.tokens)
            self.cum_bytes.append(self.total_bytes + blk.nbytes)
            self.cum_images.append(self.cum_images[-1] if self.cum_images else 0)

    def append(self, msg: Message) -> None:
        """Append a new message; counts towards the monotonic 'added' counters."""
        if msg.images:
            self.image_msgs.append(len(self.messages))
        self.msg_starts.append(len(self.blocks))
        self.messages.append(msg)
        self._push_blocks(msg.blocks)
        self.added_bytes += msg.nbytes
        self.added_images += msg.images
        self.added_tokens += msg.tokens

    def truncate_messages(self, m: int) -> None:
        """Drop messages m.. (their blocks, hashes and sums)."""
        if m >= len(self.messages):
            return
        pos = self.msg_starts[m]
        del self.messages[m:], self.msg_starts[m:]
        image_msgs = self.image_msgs
        while image_msgs and image_msgs[-1] >= m:
            image_msgs.pop()
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
        while (
            keep < len(messages)
            and m + keep < len(self.messages)
            and messages[keep] is self.messages[m + keep]
        ):
            keep += 1
        self.truncate_messages(m + keep)
        new = messages[keep:]
        start = len(self.blocks)
        for msg in new:
            if msg.images:
                self.image_msgs.append(len(self.messages))
            self.msg_starts.append(start)
            self.messages.append(msg)
            start += len(msg.blocks)
        self._push_blocks(b for msg in new for b in msg.blocks)

    def replace_system(self, system: Sequence[Block]) -> int | None:
        """Replace the system segment by `system` (a later `system` event: an edited memory file,
        C-1); returns the first changed block, or None when nothing changed.

        Blocks equal at the front are kept, so the break starts at the first changed system block;
        everything after it (the rest of the system and every message) is hashed again, once per
        change. The new blocks count as added content (an anchored estimate sees them, H-13/C-4);
        what they replaced is never subtracted."""
        return self._replace_head(system, tools=False)

    def replace_tools(self, tools: Sequence[Block]) -> int | None:
        """Replace the tools segment by `tools` (a later `tools` event: e.g. deferred tools a tool
        search loaded), as `replace_system` does the system segment."""
        return self._replace_head(tools, tools=True)

    def _replace_head(self, new_blocks: Sequence[Block], tools: bool) -> int | None:
        lo, hi = (0, self.tools_end) if tools else (self.tools_end, self.system_end)
        old = self.blocks[lo:hi]
        keep = 0
        while (
            keep < len(old)
            and keep < len(new_blocks)
            and old[keep].digest == new_blocks[keep].digest
            and old[keep].deferred == new_blocks[keep].deferred
        ):
            keep += 1
        if keep == len(old) == len(new_blocks):
            return None
        pos = lo + keep
        system = self.blocks[self.tools_end : self.system_end] if tools else []
        messages, image_msgs, changed = list(self.messages), list(self.image_msgs), self.changed_from
        self.truncate_messages(0)
        del self.blocks[pos:], self.hashes[pos:], self.cum_tokens[pos:], self.cum_bytes[pos:]
        del self.cum_images[pos:]
        del self.img_hashes[(self.cum_images[-1] if self.cum_images else 0) + 1 :]
        new = new_blocks[keep:]
        if tools:
            if self.first_deferred >= pos:
                self.first_deferred = -1
            self._push_tools(new)
            self.tools_end = len(self.blocks)
            self._push_blocks(system)
        else:
            self._push_blocks(new)
        self.system_end = len(self.blocks)
        start = self.system_end
        for msg in messages:
            self.msg_starts.append(start)
            start += len(msg.blocks)
        self.messages, self.image_msgs = messages, image_msgs
        self._push_blocks(b for msg in messages for b in msg.blocks)
        self.added_bytes += sum(b.nbytes for b in new if b.kind != IMAGE)
        self.added_tokens += sum(b.tokens for b in new)
        self.changed_from = pos if changed is None else min(changed, pos)
        return pos

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
