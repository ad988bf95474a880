"""The `coding` generator: deterministic, shaped like a coding-agent session (issue #4)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.traces.format import dumps_trace
from ctxbench.traces.generators import generate, params_for
from ctxbench.traces.generators.coding import CodingParams
from ctxbench.traces.generators.coding import generate as coding
from ctxbench.traces.model import CompactionEvent, MessageEvent, ModelSwitchEvent, SystemEvent, ToolsEvent


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), turns=st.integers(1, 4))
def test_same_params_same_trace_byte_for_byte(seed: int, turns: int) -> None:
    p = CodingParams(user_turns=turns, seed=seed)
    assert dumps_trace(coding(p)) == dumps_trace(coding(p))


def test_seeds_differ_and_registry_knows_coding() -> None:
    assert dumps_trace(generate("coding", seed=1, user_turns=2)) != dumps_trace(
        generate("coding", seed=2, user_turns=2)
    )
    with pytest.raises(ValueError, match="unknown parameter"):
        params_for("coding", nope=1)


def test_shape_of_a_long_session() -> None:
    tr = coding(CodingParams(user_turns=30, seed=0, manual_compact_share=0.1))
    ev = tr.events
    system = next(e for e in ev if isinstance(e, SystemEvent))
    keys = [c.key for c in system.content]
    assert keys[0] == "system" and "memory0" in keys and "skills" in keys and "agents" in keys
    tools = next(e for e in ev if isinstance(e, ToolsEvent)).tools
    assert sum(t.mcp for t in tools) >= 10 and any(t.name.startswith("mcp__") for t in tools)
    msgs = [e for e in ev if isinstance(e, MessageEvent)]
    results = [c for m in msgs for c in m.content if c.kind == "tool_result"]
    reads = [c.nbytes for c in results if c.key.startswith("out") and c.nbytes >= 1000]
    assert max(reads) > 30_000 and min(reads) < 2_000  # file reads of 1-40 KB
    assert any(c.skill for c in results)  # C-8
    assert any(c.kind == "image" for m in msgs for c in m.content)  # C-9
    prompts = [m for m in msgs if m.tag == "user"]
    assert len(prompts) == 30
    gaps = [
        b.t - a.t
        for a, b in itertools.pairwise(msgs)
        if b.tag == "user" and a.t is not None and b.t is not None
    ]
    assert max(gaps) > 300  # idle gaps longer than the 5-minute TTL
    assert any(isinstance(e, ModelSwitchEvent) for e in ev)  # C-19
    assert any(isinstance(e, CompactionEvent) and e.trigger == "manual" for e in ev)  # C-16
    assert tr.header.harness == "C" and tr.header.meta["generator"] == "coding"


def test_bad_params_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="read_bytes"):
        CodingParams(read_bytes=(5, 1))
    with pytest.raises(ValueError, match="image_share"):
        CodingParams(image_share=2.0)
