"""Turn trace content into blocks with true tokens, once per trace and provider tokenizer.

`block_of` makes the same block as `BlockFactory.text` / `BlockFactory.image` would from the
content's fields (tests check it), built through the slots' setters (`sim/makers.py`): a
10,000-turn trace has ~70,000 blocks, and the keyword packing of the general factory methods and
the frozen dataclass's own constructor were most of preparing one (issue 13). `message_of` is
`Message.of` over those blocks, which lays out what a transcript appends for the message once."""

from __future__ import annotations

from ctxbench.sim.content import IMAGE, Block, Message, digest64, make_block
from ctxbench.sim.tokens import BlockFactory, RateCounter, image_tokens
from ctxbench.traces.model import Content, MessageEvent, ToolDef

_IMAGE_BYTES = IMAGE.encode()


def block_of(f: BlockFactory, c: Content, role: str, key: str) -> Block:
    kind = c.kind
    if kind == IMAGE:  # BlockFactory.image
        w, h, nbytes = c.width, c.height, c.nbytes
        digest = digest64(_IMAGE_BYTES, (c.key or key).encode(), f"{w}x{h}:{nbytes}".encode())
        return make_block(
            IMAGE, role, nbytes, image_tokens(f.image_rule, w, h), digest, width=w, height=h,
            pinned=c.pinned, skill=c.skill, name=c.name, tool_id=c.tool_id, cache=c.cache,
        )  # fmt: skip
    lang = "json" if kind == "tool_use" else c.lang
    text, tokens = c.text, c.tokens
    if text is not None:
        raw = text.encode("utf-8")
        nbytes = len(raw)
        digest = digest64(kind.encode(), role.encode(), c.name.encode(), raw)
        if tokens is None:
            counter = f.counter
            if isinstance(counter, RateCounter):  # the same count, without encoding twice
                tokens = counter.count_bytes(nbytes, lang)
            else:
                tokens = counter.count_text(text, lang)
    else:
        nbytes = c.nbytes
        digest = digest64(kind.encode(), role.encode(), (c.key or key).encode(), str(nbytes).encode())
        if tokens is None:
            tokens = f.counter.count_bytes(nbytes, lang)
    return make_block(
        kind, role, nbytes, tokens, digest,
        pinned=c.pinned, skill=c.skill, text=text, name=c.name, tool_id=c.tool_id, cache=c.cache,
    )  # fmt: skip


def message_of(f: BlockFactory, ev: MessageEvent, key: str) -> Message:
    role = ev.role
    blocks = tuple([block_of(f, c, role, f"{key}.{i}") for i, c in enumerate(ev.content)])
    if ev.pinned:
        blocks = tuple(_pin(b) for b in blocks)
    return Message.of(role, blocks, ev.tag, ev.pinned)  # its totals and per-block layout, made once


def _pin(b: Block) -> Block:
    if b.pinned:
        return b
    from dataclasses import replace

    return replace(b, pinned=True)


def tool_block(f: BlockFactory, t: ToolDef) -> Block:
    return f.tool_def(t.name, t.schema, t.nbytes, t.deferred)
