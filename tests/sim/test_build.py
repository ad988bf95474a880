"""`sim/build.block_of` builds a trace content's block directly: it must make exactly the block the
general factory methods (`BlockFactory.text` / `.image`) make from the same fields, for every kind
of content and both counters (rate and exact)."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.sim.build import block_of, message_of
from ctxbench.sim.core.content import Block, Message, digest64
from ctxbench.sim.core.makers import dict_maker, field_defaults, slots_maker
from ctxbench.sim.core.tokens import BlockFactory, RateCounter, image_tokens, openai_tile_tokens
from ctxbench.sim.prepared import Step
from ctxbench.traces.model import Content, MessageEvent
from tests.traces.trace_strategies import images, text_items


class _Exact:
    """A counter that is not a RateCounter (an exact tokenizer's path): counts characters."""

    name = "chars"

    def count_text(self, text: str, lang: str) -> int:
        return len(text) + len(lang)

    def count_bytes(self, nbytes: int, lang: str) -> int:
        return nbytes // 3


def _general(f: BlockFactory, c: Content, role: str, key: str) -> Block:
    """The block through the general factory methods, with the flags block_of passes them."""
    flags: dict[str, Any] = {
        n: getattr(c, n) for n in ("pinned", "skill", "name", "tool_id", "cache", "turn") if getattr(c, n)
    }
    if c.kind == "image":
        return f.image(role, c.width, c.height, c.nbytes, c.key or key, tokens=c.tokens, **flags)
    lang = "json" if c.kind == "tool_use" else c.lang
    return f.text(role, c.text, c.nbytes, c.key or key, kind=c.kind, lang=lang, tokens=c.tokens, **flags)


contents = (
    text_items("text")
    | text_items("thinking")
    | images
    | st.builds(
        lambda body, tid, name: Content("tool_use", tool_id=tid, name=name, **body),
        text_items().map(lambda c: {"text": c.text, "nbytes": c.nbytes, "key": c.key, "lang": c.lang}),
        st.text(min_size=1, max_size=5),
        st.text(min_size=1, max_size=5),
    )
    | text_items().map(lambda c: Content("tool_result", c.text, c.nbytes, c.lang, c.key, tool_id="t1"))
)


@settings(max_examples=300, deadline=None)
@given(
    c=contents,
    role=st.sampled_from(("system", "user", "assistant")),
    exact=st.booleans(),
    rule=st.sampled_from(("anthropic", "openai-tile", "gemini")),
)
def test_block_of_makes_the_factorys_block(c: Content, role: str, exact: bool, rule: str) -> None:
    f = BlockFactory(_Exact() if exact else RateCounter(scale=1.3), rule)  # type: ignore[arg-type]
    assert block_of(f, c, role, "e3.1") == _general(f, c, role, "e3.1")


@pytest.mark.parametrize(("w", "h"), [(1280, 720), (4000, 3000), (1, 1)])
def test_remembered_image_tokens_are_the_rules(w: int, h: int) -> None:
    assert image_tokens("openai-tile", w, h) == openai_tile_tokens(w, h)


@settings(max_examples=100, deadline=None)
@given(items=st.lists(contents, min_size=1, max_size=5), pinned=st.booleans())
def test_message_of_makes_message_of(items: list[Content], pinned: bool) -> None:
    role = "user"
    ev = MessageEvent(role, tuple(items), tag="observation", pinned=pinned)
    f = BlockFactory()
    made = message_of(f, ev, "e7")
    blocks = tuple(block_of(f, c, role, f"e7.{i}") for i, c in enumerate(items))
    expected = Message.of(
        role, tuple(replace(b, pinned=True) for b in blocks) if pinned else blocks, "observation", pinned
    )
    assert made == expected
    every = [f.name for f in dataclasses.fields(Message)]  # compare=False ones too (sizes, layout)
    assert [getattr(made, n) for n in every] == [getattr(expected, n) for n in every]


def test_slots_maker_makes_the_classs_own_object() -> None:
    make = slots_maker(Step)
    msg = Message.of("user", (BlockFactory().text("user", "hi"),))
    made, own = make("reply", msg, t=1.5, output_tokens=40), Step("reply", msg, t=1.5, output_tokens=40)
    assert made == own and type(made) is Step and hash(made.message) == hash(own.message)
    block = slots_maker(Block)("text", "user", 3, 1, 7)  # every field left out takes its default
    assert block == Block("text", "user", 3, 1, 7)
    with pytest.raises(AttributeError):
        made.kind = "message"  # type: ignore[misc]
    with pytest.raises(TypeError):
        slots_maker(Content)  # not a slots dataclass


def test_dict_maker_makes_the_classs_own_object() -> None:
    values = {**field_defaults(Content), "kind": "text", "nbytes": 9, "key": "k", "pinned": True}
    made = dict_maker(Content)(values)
    own = Content("text", None, 9, key="k", pinned=True)
    assert made == own and type(made) is Content and hash(made) == hash(own)
    assert list(vars(made)) == list(vars(own))
    with pytest.raises(AttributeError):
        made.kind = "image"  # type: ignore[misc]
    with pytest.raises(TypeError):
        dict_maker(Block)  # a slots dataclass: slots_maker's


def test_slots_maker_object_is_frozen_and_of_its_own_class() -> None:
    made = slots_maker(Block)("text", "user", 3, 1, 7, pinned=True)
    assert type(made) is Block and made == Block("text", "user", 3, 1, 7, pinned=True)
    assert not hasattr(made, "__dict__")
    with pytest.raises(AttributeError):
        made.tokens = 2  # type: ignore[misc]


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=40), kind=st.sampled_from(("tool_use", "tool_result")), name=st.text(max_size=5))
def test_a_tool_calls_id_is_part_of_its_digest(text: str, kind: str, name: str) -> None:
    """The id is in the prompt the provider hashes: the same call made again under another id (a
    conversation a compaction kept, tests/traces/importers/test_claude_code_kept.py) is another
    prefix; content without an id keeps the digest of its kind, role, name and text."""
    f = BlockFactory()
    a, b = (block_of(f, Content(kind, text=text, name=name, tool_id=t), "user", "k") for t in ("t1", "t2"))
    assert a.digest != b.digest
    assert b.for_tool("t1") == a  # a placeholder relabelled for another call is that call's block
    plain = block_of(f, Content("text", text=text, name=name), "user", "k")
    assert plain.digest == digest64(b"text", b"user", name.encode(), text.encode())
