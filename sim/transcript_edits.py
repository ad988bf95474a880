"""The edits `Transcript.replace_from` makes without removing and re-adding every message after
the first changed one (issue 13: policies edit the middle of the conversation every turn).

Everything after the first changed block gets new chain hashes (each depends on every block
before it), so those are always computed again; but what a message contributes to the other
arrays (text bytes, tokens, image positions, the running indexes and sums components asked for)
depends on the message alone. So a swap of messages that moves no block (masking puts a
placeholder where a tool result was, image eviction one where an image was) updates the swapped
messages' entries in place, and an edit that keeps the last messages (a rolling window drops
older ones, a compaction puts a summary before the recent ones, a trim drops a tool pair) adds
what comes before them and moves them: their old entries shifted by how far they move.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, compress, count, islice, repeat
from itertools import chain as _chain
from operator import add, is_not
from typing import TYPE_CHECKING

from ctxbench.sim.chain import CHAIN_SEED
from ctxbench.sim.content import Message

if TYPE_CHECKING:
    from ctxbench.sim.transcript import Transcript

_join = _chain.from_iterable  # the items of several sequences, one after the other
# A swap computes the swapped messages' running values and shifts the ones after them when more
# than this many blocks per swapped message follow the first one; else it computes them all in
# one pass, which costs less on a short tail. A cost trade-off that changes no value, measured in
# instructions per request on game-300: always shifting, anthropic-clear-tool-uses (~2 swapped
# messages, ~22 blocks after) costs 325k against 308k; never shifting, openhands-masking (~1.5
# swapped, ~180 blocks after) costs 584k against 473k.
SPLICE_AFTER = 24


def running(total: int, values: Iterable[int]) -> Iterator[int]:
    """total + values[0], total + values[0] + values[1], ...: running sums added up in C (a
    comprehension's loop costs more per item on the edits' long runs, issue 13)."""
    return islice(accumulate(values, initial=total), 1, None)


def prefix_hashes(h: int, rank: int, digests: Iterable[int]) -> Iterator[int]:
    """The prefix hashes of blocks with `digests`, the first of rank `rank`, after the prefix hash
    `h`: h + prefix_term(rank, d0), then + prefix_term(rank + 1, d1), ... (`sim/chain.py`), in C
    (hash of each (rank, digest) pair enumerate makes, summed by `running`): on the long runs of
    an edit, half the cost of a comprehension."""
    return running(h, map(hash, enumerate(digests, rank)))


def _shifted(values: Iterable[int], by: int) -> Iterator[int]:
    return map(add, values, repeat(by))


def _splice(run: list[int], pos: int, fresh: list[int], stop: int, by: int) -> int:
    """Put `fresh` at run[pos:] and move the running values after it, up to `stop`, by as much as
    its last one moved (by `by`, what the previous splice moved, when `fresh` is empty); returns
    that shift. The running values of a swapped message are computed, the ones after it only
    shifted (in C)."""
    end = pos + len(fresh)
    if fresh:
        by = fresh[-1] - run[end - 1]
        run[pos:end] = fresh
    if by:
        run[end:stop] = _shifted(run[end:stop], by)
    return by


def swap(tr: Transcript, m: int, new: Sequence[Message], known: Sequence[int] = ()) -> bool:
    """Replace messages m.. by `new` when the messages that differ keep every block's position
    (masking swaps a tool result for a placeholder, image eviction an image): then the prefix
    hashes, running tokens and text bytes are computed for the swapped messages only, the ones
    after each shifted by how much it changed them (a prefix hash is a sum of per-block terms,
    `sim/chain.py`), the image arrays from the first swapped image on, and the other arrays are
    updated for the swapped messages alone (issue 13: an edit every turn no longer hashes the
    messages after it block by block). `known`: the indexes of the messages that differ, when the
    caller has them (else every message from m on is compared). Returns False, changing nothing,
    for any other edit."""
    own, starts = tr.messages, tr.msg_starts
    swapped = list(known) or list(compress(count(m), map(is_not, new, islice(own, m, None))))
    images_from = -1  # the first swapped message whose images differ (an evicted image)
    text = 0  # how much the swap changes the messages' text bytes
    for i in swapped:
        a, b = own[i], new[i - m]
        if len(a.blocks) != len(b.blocks) or a.pinned != b.pinned or bool(a.thinking) != bool(b.thinking):
            return False
        text += b.nbytes - a.nbytes
        if images_from < 0 and (
            a.image_at != b.image_at or any(a.blocks[k] is not b.blocks[k] for k in a.image_at)
        ):
            images_from = i
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
    rank = -tr.deferred_tools  # a block's rank is its position less the deferred tools before it
    first = starts[m]
    if len(blocks) - first <= SPLICE_AFTER * len(swapped):  # a short tail: all of it again, in one pass
        h = hashes[first - 1] if first else CHAIN_SEED
        ranked = enumerate(_join([x.digests for x in new]), first + rank)
        hashes[first:] = [h := h + hash(t) for t in ranked]  # hash(t) == prefix_term(*t)
        cum[first:] = running(cum[first - 1] if first else 0, _join([x.block_tokens for x in new]))
    else:
        moved = [0, 0]  # how far the hashes and tokens after the last swap moved
        for i, end in zip(swapped, ends, strict=True):  # each swapped message, then what follows it
            msg = new[i - m]
            pos, stop = starts[i], starts[end] if end < len(own) else len(blocks)
            h = hashes[pos - 1] if pos else CHAIN_SEED
            fresh = [h := h + hash(t) for t in enumerate(msg.digests, pos + rank)]  # == prefix_term(*t)
            moved[0] = _splice(hashes, pos, fresh, stop, moved[0])
            fresh = list(running(cum[pos - 1] if pos else 0, msg.block_tokens))
            moved[1] = _splice(cum, pos, fresh, stop, moved[1])
    if images_from >= 0:  # the image positions and chain again from that message on
        at = starts[images_from]
        k = bisect_left(tr.image_pos, at)
        del tr.image_pos[k:], tr.img_hashes[k + 1 :]
        del tr.unpinned_imgs[bisect_left(tr.unpinned_imgs, at) :]
        tr._index_images(new[images_from - m :], at)
    tr.changed_from = first if tr.changed_from is None else min(tr.changed_from, first)
    return True


def move_tail(tr: Transcript, m: int, new: Sequence[Message]) -> bool:
    """Replace messages m.. by `new` when `new` ends with this transcript's last messages (the
    same objects): the messages before them are added, then the kept ones moved, their entries
    shifted. Returns False, changing nothing, when `new` keeps no last message."""
    own = tr.messages
    kept = next(
        compress(count(), map(is_not, reversed(new), islice(reversed(own), len(own) - m))),
        min(len(new), len(own) - m),
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
    tr.truncate_messages(m)
    tr._add(new[: len(new) - kept])
    at = len(tr.blocks)
    move = at - pa  # how far their blocks move
    tr.thinking_msgs.extend(_shifted(thinking, len(own) - a))
    tr.message_bytes += sum([x.nbytes for x in msgs])
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
