"""Turn trace content into blocks with true tokens, once per trace and provider tokenizer.

`block_of` makes the same block as `BlockFactory.text` / `BlockFactory.image` would from the
content's fields, and `message_of` the same message as `Message.of` (tests check both), built
through `sim/makers.slots_maker` (`content.make_block`): a 10,000-turn trace has ~70,000 blocks,
and the keyword packing of the general factory methods and the frozen dataclasses' own
constructors were most of preparing one (issue 13). `Message.of` lays out what a transcript
appends for the message once.

`builder(f)` binds what every block of one factory shares (its counter, the rate counter's rates,
its image rule) once, so preparing a trace (`sim/prepared.py`) looks nothing up per block: each
block is one digest over its fields joined in one string (the bytes `digest64` hashes for them,
encoded at once), one token count and one constructor call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ctxbench.sim.core.content import IMAGE, Block, Message, digest_of, make_block, text_digest
from ctxbench.sim.core.tokens import BlockFactory, RateCounter, image_tokens
from ctxbench.traces.model import Content, MessageEvent, ToolDef

_message_of = Message.of


class BlockMaker(Protocol):
    def __call__(self, c: Content, role: str, key: str, pinned: bool = False) -> Block: ...


@dataclass(frozen=True)
class Builder:
    """The block and message makers of one factory (`builder`)."""

    block: BlockMaker
    message: Callable[[MessageEvent, str], Message]  # (event, key)


def builder(f: BlockFactory) -> Builder:
    counter = f.counter
    rule = f.image_rule
    ceil = math.ceil
    if isinstance(counter, RateCounter):  # RateCounter.count_bytes inlined: the same arithmetic
        rates, scale = counter.rates, counter.scale
        prose = rates["prose"]
        count_bytes = None
    else:
        count_bytes = counter.count_bytes

    def block(c: Content, role: str, key: str, pinned: bool = False) -> Block:
        """`block_of(f, c, role, key)`, pinned too when `pinned` (its message is)."""
        kind = c.kind
        if kind == IMAGE:  # BlockFactory.image
            w, h, nbytes = c.width, c.height, c.nbytes
            return make_block(
                IMAGE, role, nbytes, image_tokens(rule, w, h) if c.tokens is None else c.tokens,
                digest_of(f"{IMAGE}\x1f{c.key or key}\x1f{w}x{h}:{nbytes}\x1f".encode()), width=w, height=h,
                pinned=pinned or c.pinned, skill=c.skill, name=c.name, tool_id=c.tool_id, cache=c.cache,
                turn=c.turn,
            )  # fmt: skip
        text, tokens = c.text, c.tokens
        if text is not None:
            raw = text.encode("utf-8")
            nbytes = len(raw)
            digest = text_digest(kind, role, c.name, c.tool_id, raw)
            if tokens is None and count_bytes is not None:  # an exact counter counts the text
                tokens = counter.count_text(text, "json" if kind == "tool_use" else c.lang)
        else:
            nbytes = c.nbytes
            digest = digest_of(f"{kind}\x1f{role}\x1f{c.key or key}\x1f{nbytes}\x1f".encode())
        if tokens is None:
            lang = "json" if kind == "tool_use" else c.lang
            if count_bytes is not None:
                tokens = count_bytes(nbytes, lang)
            elif nbytes <= 0:
                tokens = 0
            else:
                tokens = max(1, ceil(nbytes / rates.get(lang, prose) * scale))
        return make_block(
            kind, role, nbytes, tokens, digest, pinned=pinned or c.pinned, skill=c.skill, text=text,
            name=c.name, tool_id=c.tool_id, cache=c.cache, turn=c.turn,
        )  # fmt: skip

    def message(ev: MessageEvent, key: str) -> Message:
        """`message_of(f, ev, key)`."""
        role, pinned = ev.role, ev.pinned
        blocks = [block(c, role, c.key or f"{key}.{i}", pinned) for i, c in enumerate(ev.content)]
        return _message_of(role, blocks, ev.tag, pinned)  # its totals and per-block layout, made once

    return Builder(block, message)


def block_of(f: BlockFactory, c: Content, role: str, key: str) -> Block:
    """The block of content `c` in a message of `role`; `key` names it when `c` has no key."""
    return builder(f).block(c, role, key)


def message_of(f: BlockFactory, ev: MessageEvent, key: str) -> Message:
    """The message of event `ev`; its blocks without a key of their own are named `key.<i>`."""
    return builder(f).message(ev, key)


def tool_block(f: BlockFactory, t: ToolDef) -> Block:
    return f.tool_def(t.name, t.schema, t.nbytes, t.deferred)
