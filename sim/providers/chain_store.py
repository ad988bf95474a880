"""A prefix cache that holds whole chain prefixes, for automatic-prefix providers.

OpenAI ≤ 5.5, Gemini implicit, DeepSeek and per-replica (Meta-style) caches match the longest
cached prefix of a prompt with no breakpoints (providers.md §2.1, §3, §4, H-22). With chained
hashes (`Transcript.hashes[i]` identifies the prefix ending at block i) a store that only ever
holds whole chain prefixes — no block without its parent — can find the longest cached prefix by
binary search over the request's chain: O(log n) probes (performance.md B3).

The store keeps that invariant by grouping blocks into *segments*: the blocks one request
appended after the point where it matched. A request that extends the tail of a segment with no
children grows that segment in place, so an append-only conversation is one segment; an edit
starts a child segment. Liveness is idle-TTL: touching a segment refreshes it and all its
ancestors (ancestors are therefore never older than descendants), and the LRU order lists
descendants before ancestors, so expiry and capacity eviction always remove suffixes first, as
vLLM's free queue does (performance.md B3). Random eviction drops a segment with its subtree.

Per call the work is O(log n) probes plus the new blocks written plus the depth of the segment
tree (number of edits along one chain), plus a one-off re-pointing of a segment's tail when a
request branches off inside it; never the whole prompt.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Sequence


class _Seg:
    __slots__ = ("children", "hashes", "last_use", "parent", "sid", "tokens")

    def __init__(self, sid: int, parent: _Seg | None, now: float) -> None:
        self.sid = sid
        self.parent = parent
        self.children: set[int] = set()
        self.hashes: list[int] = []
        self.tokens = 0
        self.last_use = now


# One stored block: (its segment, its position in seg.hashes, the prefix's tokens through it, the
# time it becomes readable). A plain tuple, as one is made per block a request writes.
_Node = tuple[_Seg, int, int, float]


class ChainStore:
    """Whole-prefix cache with idle TTL, readiness delay, LRU capacity (tokens) and random loss."""

    def __init__(
        self,
        ttl: float,
        capacity_tokens: int | None = None,
        random_evict_rate: float = 0.0,
        rng: random.Random | None = None,
    ) -> None:
        self.ttl = ttl
        self.capacity_tokens = capacity_tokens
        self.random_evict_rate = random_evict_rate
        self.rng = rng or random.Random(0)
        self.nodes: dict[int, _Node] = {}
        self.segs: OrderedDict[int, _Seg] = OrderedDict()  # LRU order: least recent first
        self.gone: dict[int, str] = {}  # hash -> "evicted" | "ttl_expiry" (for diagnosis)
        self.tokens = 0
        self._next = 0

    # ------------------------------------------------------------ queries
    def expire(self, now: float) -> None:
        """Drop idle segments at the front of the LRU order (memory only: liveness is also
        checked on every probe, so an expired segment further back is never read)."""
        while self.segs:
            seg = next(iter(self.segs.values()))
            if seg.last_use + self.ttl > now:
                break
            self._drop(seg, "ttl_expiry")

    def longest(
        self,
        hashes: Sequence[int],
        n: int,
        now: float,
        ready_only: bool = True,
        live_only: bool = True,
        known: int = -1,
    ) -> int:
        """Largest p < n whose prefix is cached (live and readable at `now`), or -1. Binary
        search: presence, liveness and readiness are all monotone along a chain, so the search
        starts above `known`, a position already known to qualify."""
        nodes = self.nodes
        ttl = self.ttl
        lo, hi = known + 1, n - 1
        best = known
        while lo <= hi:
            mid = (lo + hi) // 2
            node = nodes.get(hashes[mid])
            if (
                node is not None
                and (not live_only or node[0].last_use + ttl > now)
                and (not ready_only or node[3] <= now)
            ):
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        return best

    def holds(self, h: int, now: float) -> bool:
        node = self.nodes.get(h)
        return node is not None and node[3] <= now and node[0].last_use + self.ttl > now

    def reason(self, h: int, now: float) -> str:
        """Why the prefix `h` is not readable here: not_ready, ttl_expiry, evicted or not_written."""
        node = self.nodes.get(h)
        if node is not None:
            if node[0].last_use + self.ttl <= now:
                return "ttl_expiry"
            return "not_ready" if node[3] > now else ""
        return self.gone.get(h, "not_written")

    # ------------------------------------------------------------ updates
    def lookup(self, hashes: Sequence[int], n: int, now: float) -> int:
        """Longest readable prefix after expiry and the random-eviction draw; touches the hit."""
        self.expire(now)
        p = self.longest(hashes, n, now)
        if p >= 0 and self.random_evict_rate and self.rng.random() < self.random_evict_rate:
            self._drop(self.nodes[hashes[p]][0], "evicted")
            p = self.longest(hashes, n, now)
        if p >= 0:
            self._touch(self._split(self.nodes[hashes[p]]), now)
        return p

    def write(
        self, hashes: Sequence[int], cum: Sequence[int], end: int, now: float, ready: float, known: int = -1
    ) -> None:
        """Store the chain through block `end` (inclusive); blocks already present are kept.
        `known`: a position known to be stored and live (the hit of this request's lookup)."""
        if end < 0:
            return
        self.expire(now)
        q = self.longest(hashes, end + 1, now, ready_only=False, known=min(known, end))
        dead = self.longest(hashes, end + 1, now, ready_only=False, live_only=False, known=q)
        if dead > q:  # present but idle past the TTL: drop that (all-expired) subtree first
            self._drop(self.nodes[hashes[q + 1]][0], "ttl_expiry")
        if q == end:
            self._touch(self._split(self.nodes[hashes[q]]), now)
            return
        if q >= 0:
            at = self.nodes[hashes[q]]
            ready = max(ready, at[3])
            seg = self._split(at)
            if seg.children:
                seg = self._new_seg(seg, now)
        else:
            seg = self._new_seg(None, now)
        base = cum[q] if q >= 0 else 0
        nodes, gone = self.nodes, self.gone
        for i in range(q + 1, end + 1):
            h = hashes[i]
            nodes[h] = (seg, len(seg.hashes), cum[i], ready)
            seg.hashes.append(h)
            gone.pop(h, None)
        added = cum[end] - base
        seg.tokens += added
        self.tokens += added
        self._touch(seg, now)
        self._enforce_capacity(seg)

    # ------------------------------------------------------------ internals
    def _new_seg(self, parent: _Seg | None, now: float) -> _Seg:
        seg = _Seg(self._next, parent, now)
        self._next += 1
        if parent is not None:
            parent.children.add(seg.sid)
        self.segs[seg.sid] = seg
        return seg

    def _split(self, node: _Node) -> _Seg:
        """Make `node` the last block of its segment: the unused tail becomes a child segment
        that keeps its own (older) last use, so a hit in the middle refreshes only the prefix.
        Costs the tail's length once per split (the tail was written by earlier requests)."""
        seg, idx, tokens, _ready = node
        if idx == len(seg.hashes) - 1:
            return seg
        tail = _Seg(self._next, seg, seg.last_use)
        self._next += 1
        tail.hashes = seg.hashes[idx + 1 :]
        del seg.hashes[idx + 1 :]
        nodes = self.nodes
        for i, h in enumerate(tail.hashes):
            _seg, _idx, tok, ready = nodes[h]
            nodes[h] = (tail, i, tok, ready)
        last = self.nodes[tail.hashes[-1]][2]
        tail.tokens = last - tokens
        seg.tokens -= tail.tokens
        tail.children, seg.children = seg.children, {tail.sid}
        for c in tail.children:
            if c in self.segs:
                self.segs[c].parent = tail
        self.segs[tail.sid] = tail
        self.segs.move_to_end(tail.sid, last=False)  # an untouched tail: first in line for eviction
        return seg

    def _touch(self, seg: _Seg | None, now: float) -> None:
        """Refresh a segment and its ancestors; ancestors end up after it in LRU order."""
        while seg is not None:
            seg.last_use = max(seg.last_use, now)
            self.segs.move_to_end(seg.sid)
            seg = seg.parent

    def _drop(self, seg: _Seg, why: str) -> None:
        """Remove a segment with its whole subtree (keeps the whole-prefix invariant)."""
        stack = [seg]
        while stack:
            s = stack.pop()
            stack.extend(self.segs[c] for c in s.children if c in self.segs)
            for h in s.hashes:
                self.nodes.pop(h, None)
                self.gone[h] = why
            self.tokens -= s.tokens
            self.segs.pop(s.sid, None)
            if s.parent is not None:
                s.parent.children.discard(s.sid)

    def _enforce_capacity(self, keep: _Seg) -> None:
        cap = self.capacity_tokens
        while cap is not None and self.tokens > cap and self.segs:
            seg = next(iter(self.segs.values()))
            if seg is keep:
                break
            self._drop(seg, "evicted")
