"""Image-eviction rules: which old images to replace by a short placeholder, and when."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from ctxbench.policies.view import Edit, View, rewrite_blocks, text_block
from ctxbench.sim.core.content import Block
from ctxbench.sim.core.registry import register

PLACEHOLDER_TEXT = "[screenshot removed to save context]"


def placeholder_for(view: View, img: Block, text: str) -> Block:
    """A short text block standing where an image was (H-9), counted by the provider's tokenizer."""
    return text_block(view, img, text)


def _unpinned_images_newest_first(view: View, skip: int = 0) -> list[tuple[int, int, Block]]:
    """(message, block, image) of every unpinned image but the newest `skip`, newest first, read
    from the transcript's running index of unpinned images (no scan of the messages)."""
    tr = view.tr
    positions = tr.unpinned_imgs
    starts, blocks = tr.msg_starts, tr.blocks
    out: list[tuple[int, int, Block]] = []
    for p in reversed(positions[: max(0, len(positions) - skip)]):
        m = bisect_right(starts, p) - 1
        out.append((m, p - starts[m], blocks[p]))
    return out


def _evict_all_but(view: View, keep: int, text: str) -> Edit | None:
    placeholders: dict[str, Block] = {}  # one placeholder block per role: same text, same block
    replace = {}
    for m, i, b in _unpinned_images_newest_first(view, keep):
        ph = placeholders.get(b.role)
        if ph is None:
            ph = placeholders[b.role] = placeholder_for(view, b, text)
        replace[(m, i)] = ph
    return rewrite_blocks(view, replace, "eviction")


@register("eviction", "batch")
@dataclass(frozen=True)
class BatchEviction:
    """H-9, H-25: only past `cap` unpinned images (a safety limit for providers' per-request
    image limits; the full images stay on disk, i.e. in the trace) are the oldest replaced, in
    one batch, down to the newest `keep`: one cache miss per batch instead of one per new image."""

    cap: int = 16  # H-9
    keep: int = 4  # H-9
    placeholder: str = PLACEHOLDER_TEXT

    def plan(self, view: View) -> Edit | None:
        if view.unpinned_images <= self.cap:
            return None
        return _evict_all_but(view, self.keep, self.placeholder)


@register("eviction", "keep-last")
@dataclass(frozen=True)
class KeepLastEviction:
    """Keep only the newest `n` unpinned images: the counter-example of H-8, where each new
    screenshot breaks the prefix and cost 20-47k uncached tokens."""

    n: int = 2  # H-8 (only the two newest kept)
    placeholder: str = PLACEHOLDER_TEXT

    def plan(self, view: View) -> Edit | None:
        if view.unpinned_images <= self.n:
            return None
        return _evict_all_but(view, self.n, self.placeholder)


@register("eviction", "keep-all")
@dataclass(frozen=True)
class KeepAllEviction:
    """Screenshots stay until compaction (H-8's default behaviour)."""

    def plan(self, view: View) -> Edit | None:
        return None
