"""Immutable content blocks and messages, hashed once when they are made.

A block is what a provider counts as one cache position: one tool definition, one system block,
or one content block of a message (DESIGN.md "Content is immutable and hashed once"). Its digest
is computed at construction from its kind, role and payload (the text when the trace carries it,
otherwise a content key plus its size), so two blocks with the same content hash the same
wherever they appear; position is added by the chained hash in `ctxbench.sim.core.transcript`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from ctxbench.sim.core.makers import slots_maker

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


# Claude Code (>= 2.1.x) sends a text block `x-anthropic-billing-header: cc_version=<v>.<fp>;
# cc_entrypoint=...; [cch=...;]` as system[0]; its fingerprint changes with the first user message
# (so at a compaction) and `cch` per request. A block whose text starts with this prefix is that
# block (Transcript.header_pos); the Anthropic cache keys it as if its digest were
# BILLING_HEADER_DIGEST (AnthropicConfig.skip_billing_header, which cites the evidence).
BILLING_HEADER: Final = "x-anthropic-billing-header:"
BILLING_HEADER_DIGEST: Final = 0x62696C6C696E6721  # b"billing!": one fixed digest for every header


def digest64(*parts: bytes) -> int:
    """64-bit content digest (blake2b); cheap enough to compute once per block."""
    data = b"\x1f".join(parts) + b"\x1f"  # each part followed by the separator, hashed at once
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def digest_of(data: bytes) -> int:
    """`digest64` of parts already joined, each followed by the separator (one encode of a
    string that joins them: sim/build.py)."""
    return int.from_bytes(blake2b(data, digest_size=8).digest(), "little")


def text_digest(kind: str, role: str, name: str, tool_id: str, raw: bytes) -> int:
    """`digest64(kind, role, name, [tool_id,] raw)` of a text-like block: a tool call's id is part of
    the prompt the provider hashes, so the same call made again (a conversation a compaction kept,
    replayed after it) is not the same prefix."""
    head = f"{kind}\x1f{role}\x1f{name}\x1f{tool_id}\x1f" if tool_id else f"{kind}\x1f{role}\x1f{name}\x1f"
    return digest_of(b"".join((head.encode(), raw, b"\x1f")))


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
    turn: bool = False  # sent in its own turn only (trace `turn`): dropped by the recorded harness later

    @property
    def is_image(self) -> bool:
        return self.kind == IMAGE

    def for_tool(self, tool_id: str) -> Block:
        """The same block answering tool call `tool_id`: what a policy's placeholder for each masked
        tool result is, made without counting its tokens again (its digest holds the id)."""
        text, digest = self.text, self.digest
        if text is not None:
            digest = text_digest(self.kind, self.role, self.name, tool_id, text.encode())
        return make_block(
            self.kind, self.role, self.nbytes, self.tokens, digest, width=self.width,
            height=self.height, pinned=self.pinned, placeholder=self.placeholder,
            summary=self.summary, skill=self.skill, text=self.text, name=self.name,
            tool_id=tool_id, cache=self.cache, deferred=self.deferred, turn=self.turn,
        )  # made through sim/makers.slots_maker: one per masked result


@dataclass(frozen=True, slots=True)
class Message:
    """A message: a role and its blocks. `tag` says what the harness made it for
    (prep, reply, observation, host, tool_results, summary, handoff, instruction).

    Made by `Message.of`, which also counts its blocks by kind and lays out what a transcript
    appends for it (each block's digest and tokens), so appending messages to a transcript is one
    chain step per block plus list extensions, never a second pass over their blocks."""

    role: str
    blocks: tuple[Block, ...]
    tag: str = ""
    pinned: bool = False
    nbytes: int = field(default=0, compare=False)  # text bytes (images count by number, not bytes)
    images: int = field(default=0, compare=False)
    tokens: int = field(default=0, compare=False)  # true tokens of all blocks
    thinking: int = field(default=0, compare=False)  # thinking blocks
    tool_results: int = field(default=0, compare=False)  # tool_result blocks
    marked: int = field(default=0, compare=False)  # blocks flagged summary or skill (is_summary, has_skill)
    image_at: tuple[int, ...] = field(default=(), compare=False, repr=False)  # offsets of its images
    digests: tuple[int, ...] = field(default=(), compare=False, repr=False)  # each block's digest
    block_tokens: tuple[int, ...] = field(default=(), compare=False, repr=False)  # each block's tokens

    @staticmethod
    def of(
        role: str, blocks: tuple[Block, ...] | list[Block], tag: str = "", pinned: bool = False
    ) -> Message:
        bl = tuple(blocks)
        nb = th = tr = mk = 0
        image_at = []
        for i, b in enumerate(bl):
            if b.summary or b.skill:
                mk += 1
            kind = b.kind
            if kind == IMAGE:
                image_at.append(i)
                continue
            nb += b.nbytes
            if kind == THINKING:
                th += 1
            elif kind == TOOL_RESULT:
                tr += 1
        tokens = tuple([b.tokens for b in bl])
        digests = tuple([b.digest for b in bl])
        im = len(image_at)
        return _message(
            role, bl, tag=tag, pinned=pinned, nbytes=nb, images=im, tokens=sum(tokens), thinking=th,
            tool_results=tr, marked=mk, image_at=tuple(image_at), digests=digests, block_tokens=tokens,
        )  # fmt: skip

    @property
    def tool_use_ids(self) -> tuple[str, ...]:
        return tuple(b.tool_id for b in self.blocks if b.kind == TOOL_USE)

    @property
    def has_tool_result(self) -> bool:
        return self.tool_results > 0


make_block = slots_maker(Block)  # Block's constructor, ~5x cheaper than Block(...) (sim/core/makers.py)
_message = slots_maker(Message)  # Message.of's constructor (sim/core/makers.py)
