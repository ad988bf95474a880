"""The game generator's episode options: the system prompt as H's host assembles it (H-1, H-3,
seed 000 "The System Prompt") and the final reading's capture and overview at the window's own
size (H-5)."""

from __future__ import annotations

import random
import statistics
from dataclasses import replace

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.tokens import IMAGE_RULES, BlockFactory
from ctxbench.sim.prepared import prepare
from ctxbench.sim.runner import DEFAULT_MODEL, factory_for, run_trace
from ctxbench.traces.generators import generate
from ctxbench.traces.generators.game_episode import TIMED_PLAY_ENDED
from ctxbench.traces.generators.game_prompt import (
    POINTER,
    Section,
    assemble,
    reference_bytes,
    source_guide,
)
from ctxbench.traces.model import MessageEvent, SystemEvent, Trace


def guide(seed: int) -> list[Section]:
    rng = random.Random(seed)
    return source_guide(lambda lohi: rng.randint(*lohi), None)


def test_h1_h3_dropping_military_sections_roughly_halves_the_game_reference() -> None:
    """Seed 000: the host "drops the military sections when the benchmark file says military:
    false, which roughly halves the game reference"; it also removes the HTML comments and
    replaces the building cost tables with a pointer to building_info."""
    ratios = []
    for seed in range(200):
        g = guide(seed)
        with_mil, without = assemble(g, military=True), assemble(g, military=False)
        ratio = reference_bytes(without) / reference_bytes(with_mil)
        assert 0.4 <= ratio <= 0.6
        ratios.append(ratio)
        # no comments, no cost tables: the pointer instead
        assert {s.kind for s in with_mil} == {"rules", "civil", "military", "pointer"}
        assert sum(s.size for s in with_mil) < sum(s.size for s in g)
    assert statistics.mean(ratios) == pytest.approx(0.5, abs=0.02)


def test_h1_h3_assembled_prompt_in_full_text_and_byte_identical_for_the_run() -> None:
    """In full_text mode the three steps work on the text; the assembled prompt is the run's one
    system prompt, the same bytes in every request (H-3), 6-9 KB for a military benchmark."""
    trace = generate("game", turns=3, seed=3, full_text=True, system_prompt="assembled", military=False)
    systems = [e for e in trace.events if isinstance(e, SystemEvent)]
    assert len(systems) == 1 and len(systems[0].content) == 1
    text = systems[0].content[0].text or ""
    assert "<!--" not in text and "## Building costs" not in text and "## Military" not in text
    assert POINTER in text and "## Game reference" in text
    source = generate("game", turns=3, seed=3, full_text=True, system_prompt="source")
    src = next(e for e in source.events if isinstance(e, SystemEvent)).content[0].text or ""
    assert "<!--" in src and "## Building costs" in src and "## Military" in src
    for seed in range(20):
        sized = generate("game", turns=3, seed=seed, system_prompt="assembled")
        assert 6_000 <= next(e for e in sized.events if isinstance(e, SystemEvent)).content[0].size <= 9_000
    seen: set[tuple[int, ...]] = set()

    def on_call(req: Request, out: Outcome) -> None:
        seen.add(tuple(req.tr.hashes[req.tr.tools_end : req.tr.system_end]))

    run_trace(generate("game", turns=120, seed=3, system_prompt="assembled", military=False),
              load_policy("h-direct").with_budget(40_000), on_call=on_call)  # fmt: skip
    assert len(seen) == 1


def test_h1_military_option_needs_an_assembled_prompt() -> None:
    with pytest.raises(ValueError, match="system_prompt: assembled"):
        generate("game", turns=3, military=False)
    assert generate("game", turns=3).events[0] == generate("game", turns=3, system_prompt="drawn").events[0]


def final(trace: Trace) -> MessageEvent:
    last = trace.events[-1]
    assert isinstance(last, MessageEvent) and last.role == "user"
    return last


@pytest.mark.parametrize("width", [1280, 1024, 0])
def test_h5_final_capture_and_overview_keep_the_window_size(width: int) -> None:
    """Seed 000: observations are scaled to screenshotWidth (default 1280 -> 1280x720 from
    1920x1080; 0 = native), but "the final reading's capture and the final overview keep the
    window's own size"."""
    trace = generate("game", turns=30, seed=1, screenshot_width=width, final_capture=True)
    closing = final(trace)
    assert closing.content[0].text == TIMED_PLAY_ENDED
    assert [(c.key, c.width, c.height) for c in closing.content if c.kind == "image"] == [
        ("final-shot", 1920, 1080),
        ("final-overview", 1920, 1080),
    ]
    shots = {(c.width, c.height) for e in trace.events[:-1] if isinstance(e, MessageEvent)
             for c in e.content if c.kind == "image" and c.key.startswith("shot")}  # fmt: skip
    assert shots == {(width or 1920, round((width or 1920) * 9 / 16))}


@pytest.mark.parametrize(
    ("rule", "native", "scaled"),
    [("anthropic-highres", 2691, 1196), ("anthropic", 1560, 1196), ("gemini", 1548, 516)],
)
def test_h5_final_capture_tokens_follow_the_image_rules(rule: str, native: int, scaled: int) -> None:
    """The native-size capture costs what the provider's image rule gives 1920x1080 (⌈w/28⌉·⌈h/28⌉
    = 69·39 on the high-res tier; the standard tier scales it under its 1,568-token cap; Gemini's
    768-px tiles: 3x2 against 2x1), against 1280x720 for a gameplay screenshot."""
    assert IMAGE_RULES[rule](1920, 1080) == native and IMAGE_RULES[rule](1280, 720) == scaled
    trace = generate("game", turns=10, seed=1, final_capture=True)
    prep = prepare(trace, BlockFactory(image_rule=rule))
    closing = prep.steps[-1].message
    assert closing is not None
    assert [b.tokens for b in closing.blocks if b.kind == "image"] == [native, native]


def test_h5_h29_post_episode_requests_carry_the_native_size_capture() -> None:
    """The closing message follows the last reply, so only requests that repeat the conversation
    afterwards carry it (the interview, H-29; reflection, H-30): two more images, each billed at
    its native size."""
    trace = generate("game", turns=40, seed=1, final_capture=True)
    result = run_trace(trace, replace(load_policy("h-direct"), interview=1))
    last_turn = [r for r in result.records if r.kind == "gameplay"][-1]
    asked = next(r for r in result.records if r.kind == "interview")
    assert asked.images == last_turn.images + 2
    native = factory_for(DEFAULT_MODEL).image("user", 1920, 1080, 1, "k").tokens
    assert asked.true_input - last_turn.true_input > 2 * native
