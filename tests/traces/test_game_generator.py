"""The `game` generator: deterministic, fast, and shaped like harness H (SPEC H-1..H-30)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest

from ctxbench.traces.format import dumps_trace, read_trace
from ctxbench.traces.generators import GENERATORS, generate, params_for
from ctxbench.traces.generators.game import TIMED_PLAY, GameParams
from ctxbench.traces.generators.samples import SAMPLES, SAMPLES_DIR
from ctxbench.traces.model import Content, MessageEvent, SystemEvent, ToolsEvent, Trace


def messages(trace: Trace) -> list[MessageEvent]:
    return [e for e in trace.events if isinstance(e, MessageEvent)]


def gameplay_observations(trace: Trace) -> list[MessageEvent]:
    """User messages after the pinned preparation exchange (each carries one observation)."""
    return [m for m in messages(trace) if m.role == "user" and not m.pinned]


def images(m: MessageEvent) -> list[Content]:
    return [c for c in m.content if c.kind == "image"]


@pytest.fixture(scope="module")
def default() -> Trace:
    return generate("game")


def test_same_params_same_bytes() -> None:
    p = GameParams(turns=80, seed=5)
    assert dumps_trace(GENERATORS["game"](p)) == dumps_trace(GENERATORS["game"](p))
    assert dumps_trace(GENERATORS["game"](p)) != dumps_trace(GENERATORS["game"](GameParams(turns=80, seed=6)))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_committed_samples_are_what_the_generator_gives(name: str) -> None:
    generator, overrides = SAMPLES[name]
    expected = dumps_trace(GENERATORS[generator](params_for(generator, **overrides)))
    path = SAMPLES_DIR / name
    assert path.read_text(encoding="utf-8") == expected, "run: python -m ctxbench.traces.generators.samples"
    assert path.stat().st_size < 300_000


def test_fast() -> None:
    start = time.perf_counter()
    generate("game", turns=300)
    assert time.perf_counter() - start < 0.5


def test_request_layout(default: Trace) -> None:
    """H-1: one system prompt (6-9 KB), 26 tool definitions of 300-900 bytes, then the conversation."""
    system, tools = default.events[0], default.events[1]
    assert isinstance(system, SystemEvent) and 6_000 <= system.content[0].size <= 9_000
    assert isinstance(tools, ToolsEvent) and len(tools.tools) == 26
    assert len({t.name for t in tools.tools}) == 26
    assert all(300 <= t.nbytes <= 900 for t in tools.tools)
    assert len(generate("game", turns=3, n_tools=29).events[1].tools) == 29  # type: ignore[union-attr]
    assert default.replies == 301  # BEGIN + 300 turns
    used = {c.name for m in messages(default) for c in m.content if c.kind == "tool_use"}
    assert used <= {t.name for t in tools.tools}


def test_pinned_preparation_exchange(default: Trace) -> None:
    """H-2/H-26: pinned prep message with the guide image, then the pinned BEGIN reply."""
    prep, begin, first = messages(default)[:3]
    assert (prep.role, prep.tag, prep.pinned) == ("user", "prep", True)
    guide = images(prep)
    assert len(guide) == 1 and (guide[0].width, guide[0].height) == (1568, 1000) and guide[0].pinned
    assert (begin.role, begin.tag, begin.pinned) == ("assistant", "reply", True)
    assert all(not m.pinned for m in messages(default)[2:])
    # H-27: "Timed play has started" before the first screenshot, which opens timed play
    assert first.tag == "host" and first.content[0].text == TIMED_PLAY and images(first)
    no_guide = messages(generate("game", turns=3, guide_image=False, settlement_image=True))[0]
    assert [c.key for c in no_guide.content if c.kind == "text"][-1] == "guide-text"
    assert [c.key for c in images(no_guide)] == ["settlement"]


def test_observations(default: Trace) -> None:
    """H-5: 1280x720 JPEGs of 60-140 KB plus a JSON block; H-7: about 15% text-only."""
    observations = gameplay_observations(default)
    assert len(observations) == 300
    shots = [c for m in observations for c in images(m)]
    assert {(c.width, c.height) for c in shots} == {(1280, 720)}
    assert all(60_000 <= c.nbytes <= 140_000 for c in shots)
    assert len({c.key for c in shots}) == len(shots), "every screenshot is new content"
    for m in observations:
        stats = m.content[-1]
        assert stats.kind == "text" and stats.lang == "json" and 600 <= stats.size <= 1_700
    long = gameplay_observations(generate("game", turns=3000, seed=3))
    share = sum(not images(m) for m in long) / len(long)
    assert 0.10 <= share <= 0.17
    fewer = gameplay_observations(generate("game", turns=2000, text_only_share=0.4))
    assert 0.3 <= sum(not images(m) for m in fewer) / len(fewer) <= 0.45


@pytest.mark.parametrize(("width", "size"), [(0, (1920, 1080)), (1600, (1600, 900)), (1024, (1024, 576))])
def test_screenshot_width(width: int, size: tuple[int, int]) -> None:
    trace = generate("game", turns=20, screenshot_width=width)
    assert {(c.width, c.height) for m in gameplay_observations(trace) for c in images(m)} == {size}


def test_turns_and_tool_calls(default: Trace) -> None:
    """Replies alternate with user messages; 1-3 tool calls each, all answered in the next message."""
    ms = messages(default)
    assert [m.role for m in ms] == ["user", "assistant"] * (len(ms) // 2)
    for reply, answer in zip(ms[3::2], ms[4::2], strict=False):
        uses = [c.tool_id for c in reply.content if c.kind == "tool_use"]
        results = [c.tool_id for c in answer.content if c.kind == "tool_result"]
        assert len(uses) <= 3 and results == uses
        assert answer.tag == ("observation" if uses else "host")
        assert reply.output_tokens is not None and 50 <= reply.output_tokens <= 400
        last_observes = bool(uses) and reply.content[-1].name in (
            "observe", "wait_and_observe", "flat_view", "move_camera", "zoom_camera", "rotate_camera",
        )  # fmt: skip
        game_left = [c.text for c in answer.content if c.text and c.text.startswith("Game time left: ")]
        assert len(game_left) == (0 if last_observes or not uses else 1)  # H-6
    assert sum(1 for m in ms if m.role == "assistant" and any(c.kind == "tool_use" for c in m.content)) > 250


def test_clocks(default: Trace) -> None:
    """t (wall) and game_t (game) never go back; the game clock is paused before timed play (H-18)."""
    ms = messages(default)
    ts = [m.t for m in ms]
    gts = [m.game_t for m in ms]
    assert all(t is not None for t in ts) and all(g is not None for g in gts)
    assert ts == sorted(ts) and gts == sorted(gts)  # type: ignore[type-var]
    assert gts[:3] == [0.0, 0.0, 0.0] and ts[1] > 0  # type: ignore[operator]
    gaps = [b - a for a, b in itertools.pairwise(ts[3:])]  # type: ignore[operator]
    assert min(gaps) > 0 and max(gaps) < 60
    assert ts[-1] - ts[2] == pytest.approx(gts[-1], abs=0.01)  # type: ignore[operator]
    fast = messages(generate("game", turns=50, game_speed=2.0))
    assert fast[-1].game_t == pytest.approx(2 * (fast[-1].t - fast[2].t), abs=0.01)  # type: ignore[operator]


def test_fallback_always_sends_screenshots() -> None:
    """H-7: under `always` every host observation is a screenshot (text-only only from wait_and_observe)."""
    trace = generate("game", turns=400, fallback_observation="always")
    for m in gameplay_observations(trace):
        if any(c.text and c.text.startswith("Game time left") for c in m.content):
            assert images(m)


def test_full_text_mode_writes_text(tmp_path: Path) -> None:
    trace = generate("game", turns=12, seed=2, full_text=True)
    tools = trace.events[1]
    assert isinstance(tools, ToolsEvent) and all(t.schema for t in tools.tools)
    texts = [c for m in messages(trace) for c in m.content if c.text is not None]
    assert {c.kind for c in texts} >= {"text", "tool_use", "tool_result"}
    assert any(c.lang == "json" and c.text and c.text.startswith("{") for c in texts)
    path = tmp_path / "short.jsonl"
    path.write_text(dumps_trace(trace), encoding="utf-8")
    assert read_trace(path).events == trace.events


def test_registry_and_params() -> None:
    assert "game" in GENERATORS
    assert params_for("game") == GameParams()
    assert params_for("game", turns=7).turns == 7
    with pytest.raises(ValueError, match=r"known: .*game"):
        params_for("chess")
    with pytest.raises(ValueError, match=r"unknown parameter.*turnz"):
        params_for("game", turnz=3)
    for bad in (
        {"turns": 0},
        {"text_only_share": 1.5},
        {"screenshot_bytes": (9, 1)},
        {"fallback_observation": "x"},
    ):
        with pytest.raises(ValueError):
            GameParams(**bad)  # type: ignore[arg-type]


def test_h28_pixel_targeting_age_limit_counts_from_the_last_real_screenshot() -> None:
    """H-28: a pixel-targeting call judges its 30-second age limit against the last real
    screenshot; a text-only observation does not refresh it. Off by default (samples unchanged)."""
    from ctxbench.traces.generators.game import TARGETED_TOOLS, GameParams, generate
    from ctxbench.traces.model import MessageEvent

    params = dict(turns=200, seed=5, error_share=0.0, text_only_share=0.6, tool_seconds=(8.0, 20.0))
    off = generate(GameParams(**params))  # type: ignore[arg-type]
    on = generate(GameParams(**params, targeting_age_limit=30.0))  # type: ignore[arg-type]
    names: dict[str, str] = {}
    last_shot, stale_after_text_only, checked = 0.0, 0, 0
    saw_text_only_since_shot = False
    for ev in on.events:
        if not isinstance(ev, MessageEvent):
            continue
        for c in ev.content:
            if c.kind == "tool_use":
                names[c.tool_id] = c.name
            elif c.kind == "tool_result" and names.get(c.tool_id) in TARGETED_TOOLS:
                stale = (ev.game_t or 0.0) - last_shot > 30.0
                assert c.is_error == stale
                checked += 1
                stale_after_text_only += stale and saw_text_only_since_shot
        if any(c.kind == "image" for c in ev.content):
            last_shot, saw_text_only_since_shot = ev.game_t or 0.0, False
        elif ev.role == "user" and any(c.lang == "json" and c.kind == "text" for c in ev.content):
            saw_text_only_since_shot = True
    assert checked > 20 and stale_after_text_only > 0  # text-only observations did not refresh it
    off_errors = sum(c.is_error for e in off.events if isinstance(e, MessageEvent) for c in e.content)
    assert off_errors == 0  # error_share 0 and the limit off: no failed call
