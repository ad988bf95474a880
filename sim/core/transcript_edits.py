"""The edits `Transcript.replace_from` makes without removing and re-adding every message after
the first changed one (issue 13: policies edit the middle of the conversation every turn).

Every prefix hash and running token count after the first changed block changes (each covers
every block before it), but by how much depends on the changed blocks alone (a prefix hash is a
sum of per-block terms, `sim/core/chain.py`), and what a message contributes to the other arrays (text
bytes, image positions, the running indexes and sums components asked for) on the message alone.
So a swap of messages that moves no block (masking puts a placeholder where a tool result was,
image eviction one where an image was) moves the later values by the changed blocks' differences
and updates the swapped messages' entries in place; an edit that keeps the last messages (a
rolling window drops older ones, a compaction puts a summary before the recent ones, a trim drops
a tool pair) adds what comes before them and moves them: their terms taken at their new ranks,
their other entries shifted by how far they move.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain as _chain
from itertools import compress, count, islice, repeat
from operator import add, is_not

from ctxbench.sim.core.chain import CHAIN_SEED
from ctxbench.sim.core.content import IMAGE, Block, Message
from ctxbench.sim.core.transcript_arrays import TranscriptArrays, prefix_hashes

_join = _chain.from_iterable  # the items of several sequences, one after the other


def _shifted(values: Iterable[int], by: int) -> Iterator[int]:
    return map(add, values, repeat(by))


def swap(tr: TranscriptArrays, m: int, new: Sequence[Message], known: Sequence[int] = ()) -> bool:
    """Replace messages m.. by `new` when the messages that differ keep every block's position
    (masking swaps a tool result for a placeholder, image eviction an image): then each changed
    block moves the prefix hashes and running tokens from it on by the difference of its term (a
    prefix hash is a sum of per-block terms, `sim/core/chain.py`) and of its tokens, the values between
    two changed blocks shifted in C; the image arrays are computed again from the first swapped
    image on, and the other arrays are updated for the swapped messages alone (issue 13: an edit
    every turn no longer hashes the messages after it block by block). `known`: the indexes of
    the messages that differ, when the caller has them (else every message from m on is
    compared). Returns False, changing nothing, for any other edit."""
    own, starts = tr.messages, tr.msg_starts
    swapped = list(known) or list(compress(count(m), map(is_not, new, islice(own, m, None))))
    images_from = -1  # the first swapped message whose images differ (an evicted image)
    text = 0  # how much the swap changes the messages' text bytes
    rank = -tr.deferred_tools  # a block's rank is its position less the deferred tools before it
    changed: list[tuple[int, int, int]] = []  # (position, term change, token change) per changed block
    for i in swapped:
        a, b = own[i], new[i - m]
        if len(a.blocks) != len(b.blocks) or a.pinned != b.pinned or bool(a.thinking) != bool(b.thinking):
            return False
        text += b.nbytes - a.nbytes
        if images_from < 0 and (
            a.image_at != b.image_at or any(a.blocks[k] is not b.blocks[k] for k in a.image_at)
        ):
            images_from = i
        p = starts[i]
        for x, y in zip(a.blocks, b.blocks, strict=True):
            if x is not y:  # hash((rank, digest)) == prefix_term(rank, digest)
                term = hash((p + rank, y.digest)) - hash((p + rank, x.digest))
                changed.append((p, term, y.tokens - x.tokens))
            p += 1
    ends = [*swapped[1:], len(own)]  # message i's change shifts the running sums up to the next
    for f, sums in tr._message_sums.items():
        shift = 0
        for i, end in zip(swapped, ends, strict=True):
            shift += f(new[i - m]) - f(own[i])
            if shift:
                sums[i:end] = _shifted(sums[i:end], shift)
    blocks = tr.blocks
    for i in swapped:
        put = new[i - m].blocks
        pos = starts[i]
        blocks[pos : pos + len(put)] = put
        for pred, idx in tr._block_indexes.items():
            lo, hi = bisect_left(idx, pos), bisect_left(idx, pos + len(put))
            idx[lo:hi] = [pos + k for k, x in enumerate(put) if pred(x)]
    own[m:] = new
    tr.message_bytes += text
    hashes, cum = tr.hashes, tr.cum_tokens
    by_hash = by_tokens = 0
    for (p, dh, dt), (stop, _, _) in zip(changed, [*changed[1:], (len(blocks), 0, 0)], strict=True):
        by_hash, by_tokens = by_hash + dh, by_tokens + dt
        if by_hash:
            hashes[p:stop] = _shifted(hashes[p:stop], by_hash)
        if by_tokens:
            cum[p:stop] = _shifted(cum[p:stop], by_tokens)
    first = starts[m]
    if images_from >= 0:  # the image positions and chain again from that message on
        at = starts[images_from]
        k = bisect_left(tr.image_pos, at)
        del tr.image_pos[k:], tr.img_hashes[k + 1 :]
        del tr.unpinned_imgs[bisect_left(tr.unpinned_imgs, at) :]
        tr._index_images(new[images_from - m :], at)
    tr.changed_from = first if tr.changed_from is None else min(tr.changed_from, first)
    return True


def move_tail(tr: TranscriptArrays, m: int, new: Sequence[Message], known: int = 0) -> bool:
    """Replace messages m.. by `new` when `new` ends with this transcript's last messages (the
    same objects): the messages before them are added, then the kept ones moved, their entries
    shifted. `known`: how many those are, when the caller has it (else they are compared).
    Returns False, changing nothing, when `new` keeps no last message."""
    own = tr.messages
    most = min(len(new), len(own) - m)
    kept = min(known, most) or next(
        compress(count(), map(is_not, reversed(new), islice(reversed(own), len(own) - m))), most
    )
    if not kept:
        return False
    a = len(own) - kept  # the first kept message and its first block, where they are now
    pa = tr.msg_starts[a]
    # their entries, with the running values before them
    msgs, starts, blocks, cum = own[a:], tr.msg_starts[a:], tr.blocks[pa:], tr.cum_tokens[pa:]
    cum_before = tr.cum_tokens[pa - 1] if pa else 0
    sums = {f: (s[a:], s[a - 1] if a else 0) for f, s in tr._message_sums.items()}
    indexes = {pred: idx[bisect_left(idx, pa) :] for pred, idx in tr._block_indexes.items()}
    thinking = tr.thinking_msgs[bisect_left(tr.thinking_msgs, a) :]
    images = tr.image_pos[bisect_left(tr.image_pos, pa) :]
    unpinned = tr.unpinned_imgs[bisect_left(tr.unpinned_imgs, pa) :]
    dropped = sum([x.nbytes for x in own[m:a]])  # the text bytes the edit removes (it adds new's front)
    tr._drop_from(m)
    tr._add(new[: len(new) - kept])
    tr.message_bytes -= dropped
    at = len(tr.blocks)
    move = at - pa  # how far their blocks move
    tr.thinking_msgs.extend(_shifted(thinking, len(own) - a))
    own.extend(msgs)
    tr.msg_starts.extend(_shifted(starts, move))
    for f, run in tr._message_sums.items():
        old, before = sums[f]
        run.extend(_shifted(old, (run[-1] if run else 0) - before))
    h = tr.hashes[-1] if at else CHAIN_SEED
    tr.hashes.extend(prefix_hashes(h, at - tr.deferred_tools, _join([x.digests for x in msgs])))
    tr.cum_tokens.extend(_shifted(cum, (tr.cum_tokens[-1] if at else 0) - cum_before))
    tr.blocks.extend(blocks)
    for pred, idx in tr._block_indexes.items():
        idx.extend(_shifted(indexes[pred], move))
    if images:
        tr.image_pos.extend(_shifted(images, move))
        h = tr.img_hashes[-1]
        tr.img_hashes.extend([h := hash((h, blocks[p - pa].digest)) for p in images])  # == chain
        tr.unpinned_imgs.extend(_shifted(unpinned, move))
    return True


def replace_head(tr: TranscriptArrays, new_blocks: Sequence[Block], tools: bool) -> int | None:
    """Replace the tools (`tools`) or the system segment by `new_blocks` (`Transcript.replace_tools`,
    `replace_system`): the equal blocks at the front kept, the rest of the head pushed again and
    every message added again after it; returns the first changed block, or None."""
    lo, hi = (0, tr.tools_end) if tools else (tr.tools_end, tr.system_end)
    old = tr.blocks[lo:hi]
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
    system = tr.blocks[tr.tools_end : tr.system_end] if tools else []
    messages, changed = list(tr.messages), tr.changed_from
    tr.truncate_messages(0)
    images = tr.images_before(pos)
    del tr.blocks[pos:], tr.hashes[pos:], tr.cum_tokens[pos:], tr.head_bytes[pos:]
    del tr.image_pos[images:], tr.img_hashes[images + 1 :]
    for idx in tr._block_indexes.values():
        del idx[bisect_left(idx, pos) :]
    new = new_blocks[keep:]
    if tr.header_pos >= pos:  # pushed again below
        tr.header_pos, tr.header_delta = -1, 0
    if tools:
        if tr.first_deferred >= pos:
            tr.first_deferred = -1
        tr.deferred_tools = sum(b.deferred for b in tr.blocks)  # the head's, before pos
        tr._push_head(new)
        tr.tools_end = len(tr.blocks)
        tr._push_head(system)
    else:
        tr._push_head(new)
    tr.system_end = len(tr.blocks)
    if messages:
        tr._add(messages)
    tr.added_bytes += sum(b.nbytes for b in new if b.kind != IMAGE)
    tr.added_tokens += sum(b.tokens for b in new)
    if tools and all(b.deferred for b in old[keep:]) and all(b.deferred for b in new):
        # deferred tools only: no block of the rendered prefix changed, the blocks after them moved
        shift = len(new) - len(old[keep:])
        tr.changed_from = changed if changed is None or changed < pos else changed + shift
    else:
        tr.changed_from = pos if changed is None else min(changed, pos)
    return pos
