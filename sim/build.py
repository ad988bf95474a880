"""Turn trace content into blocks with true tokens, once per trace and provider tokenizer."""

from __future__ import annotations

from ctxbench.sim.content import TEXT, Block, Message
from ctxbench.sim.tokens import BlockFactory
from ctxbench.traces.model import Content, MessageEvent, ToolDef


def block_of(f: BlockFactory, c: Content, role: str, key: str) -> Block:
    flags: dict[str, object] = {}
    if c.pinned:
        flags["pinned"] = True
    if c.skill:
        flags["skill"] = True
    if c.name:
        flags["name"] = c.name
    if c.tool_id:
        flags["tool_id"] = c.tool_id
    if c.cache:
        flags["cache"] = c.cache
    if c.kind == "image":
        return f.image(role, c.width, c.height, c.nbytes, c.key or key, **flags)
    lang = c.lang if c.kind == TEXT else ("json" if c.kind in ("tool_use",) else c.lang)
    return f.text(role, c.text, c.nbytes, c.key or key, kind=c.kind, lang=lang, tokens=c.tokens, **flags)


def message_of(f: BlockFactory, ev: MessageEvent, key: str) -> Message:
    blocks = tuple(block_of(f, c, ev.role, f"{key}.{i}") for i, c in enumerate(ev.content))
    if ev.pinned:
        blocks = tuple(_pin(b) for b in blocks)
    return Message.of(ev.role, blocks, ev.tag, ev.pinned)


def _pin(b: Block) -> Block:
    if b.pinned:
        return b
    from dataclasses import replace

    return replace(b, pinned=True)


def tool_block(f: BlockFactory, t: ToolDef) -> Block:
    return f.tool_def(t.name, t.schema, t.nbytes, t.deferred)
