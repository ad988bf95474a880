"""Immutable content blocks and messages, hashed once when they are made.

A block is what a provider counts as one cache position: one tool definition, one system block,
or one content block of a message (DESIGN.md "Content is immutable and hashed once"). Its digest
is computed at construction from its kind, role and payload (the text when the trace carries it,
otherwise a content key plus its size), so two blocks with the same content hash the same
wherever they appear; position is added by the chained hash in `ctxbench.sim.transcript`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

try:  # hashlib's own blake2b, without loading OpenSSL for the other algorithms (start-up, issue 13)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

TEXT: Final = "text"
IMAGE: Final = "image"
TOOL_USE: Final = "tool_use"
TOOL_RESULT: Final = "tool_result"
THINKING: Final = "thinking"
TOOL_DEF: Final = "tool_def"
KINDS: Final = (TEXT, IMAGE, TOOL_USE, TOOL_RESULT, THINKING, TOOL_DEF)

ROLES: Final = ("tools", "system", "user", "assistant")


def digest64(*parts: bytes) -> int:
    """64-bit content digest (blake2b); cheap enough to compute once per block."""
    data = b"\x1f".join(parts) + b"\x1f"  # each part followed by the separator, hashed at once
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


@dataclass(frozen=True, slots=True)
class Block:
    """One cache position. `tokens` is the provider's true count; the harness never sees it."""

    kind: str
    role: str
    nbytes: int
    tokens: int
    digest: int
    width: int = 0
    height: int = 0
    pinned: bool = False
    placeholder: bool = False
    summary: bool = False
    skill: bool = False
    text: str | None = None
    name: str = ""
    tool_id: str = ""
    cache: str = ""  # recorded cache_control ttl ("5m" | "1h") of imported traces; not part of the digest
    deferred: bool = False  # a tool definition with defer_loading: a position, not in the prefix chain

    @property
    def is_image(self) -> bool:
        return self.kind == IMAGE


@dataclass(frozen=True, slots=True)
class Message:
    """A message: a role and its blocks. `tag` says what the harness made it for
    (prep, reply, observation, host, tool_results, summary, handoff, instruction)."""

    role: str
    blocks: tuple[Block, ...]
    tag: str = ""
    pinned: bool = False
    nbytes: int = field(default=0, compare=False)  # text bytes (images count by number, not bytes)
    images: int = field(default=0, compare=False)
    tokens: int = field(default=0, compare=False)  # true tokens of all blocks

    @staticmethod
    def of(
        role: str, blocks: tuple[Block, ...] | list[Block], tag: str = "", pinned: bool = False
    ) -> Message:
        bl = tuple(blocks)
        return Message(
            role,
            bl,
            tag,
            pinned,
            sum(b.nbytes for b in bl if b.kind != IMAGE),
            sum(1 for b in bl if b.kind == IMAGE),
            sum(b.tokens for b in bl),
        )

    @property
    def tool_use_ids(self) -> tuple[str, ...]:
        return tuple(b.tool_id for b in self.blocks if b.kind == TOOL_USE)

    @property
    def has_tool_result(self) -> bool:
        return any(b.kind == TOOL_RESULT for b in self.blocks)
