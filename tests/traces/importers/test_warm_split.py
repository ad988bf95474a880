"""The recorded system prompt cut where the warm prefix ends (traces/importers/tokens.py
`split_at`): a static prefix an earlier session cached that ends inside a recorded block becomes a
block boundary, so that the replay can write and read it; nothing else changes."""

from __future__ import annotations

from itertools import accumulate

from hypothesis import given
from hypothesis import strategies as st

from ctxbench.traces.importers.tokens import split_at
from ctxbench.traces.model import Content

INSTRUCTIONS = Content("text", text="You are Codex. " * 400, tokens=1_400)
ENVIRONMENT = Content("text", text="<environment_context>cwd=/home/me</environment_context>", tokens=20)


def test_a_warm_prefix_inside_the_instructions_cuts_them_there() -> None:
    head, tail, env = split_at((INSTRUCTIONS, ENVIRONMENT), 1_280)
    assert (head.tokens, tail.tokens, env) == (1_280, 120, ENVIRONMENT)
    assert (head.text or "") + (tail.text or "") == INSTRUCTIONS.text
    assert len(head.text or "") == len(INSTRUCTIONS.text or "") * 1_280 // 1_400


def test_no_cut_where_there_is_nothing_to_cut() -> None:
    blocks = (INSTRUCTIONS, ENVIRONMENT)
    for w in (0, 1_400, 1_420, 5_000):  # none, a boundary already, the whole prompt, beyond it
        assert split_at(blocks, w) == blocks


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=5_000), min_size=1, max_size=5),
    share=st.floats(min_value=0.0, max_value=1.0),
)
def test_the_cut_keeps_every_token_and_byte_and_ends_a_block_at_w(sizes: list[int], share: float) -> None:
    blocks = tuple(Content("text", text="x" * (3 * n), tokens=n) for n in sizes)
    w = int(sum(sizes) * share)
    out = split_at(blocks, w)
    assert sum(c.tokens or 0 for c in out) == sum(sizes)
    assert "".join(c.text or "" for c in out) == "".join(c.text or "" for c in blocks)
    assert w == 0 or w in set(accumulate(c.tokens or 0 for c in out))
    assert len(out) - len(blocks) in (0, 1)
