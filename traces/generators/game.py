"""Synthetic traces shaped like the game-benchmark harness H (SPEC H-1..H-30).

Why: policies need long, realistic H conversations (hundreds of screenshots, tool calls and JSON
readings) to be compared on, and real recordings are few. `generate(GameParams(...))` builds one
from a seed: same parameters, same trace, byte for byte, in milliseconds.

Shape of the trace (ids are SPEC ids):
- system prompt (one text block, 6-9 KB) and `n_tools` tool definitions (H-1, 26 by default);
- the pinned preparation message (instructions + construction guide image, or the guide as text,
  optionally an example-settlement screenshot; H-2, H-26) and the pinned BEGIN reply (H-2);
- a host message "Timed play has started" with the first observation, always a screenshot (H-27, H-7);
- then `turns` replies. Each reply has 1-3 tool calls (sometimes none). The user message after
  it holds the tool results, then the observation: a JPEG screenshot (H-5, `screenshot_width`)
  and a JSON stats block, or the JSON alone for a text-only observation (H-7). When the last call
  did not observe, the host appends "Game time left: … of …" (H-6), lets 5 game seconds pass and
  sends its own observation (H-27), text-only under `when-needed` unless the turn sent
  screenshot-targeted input. A reply without tool calls gets a host screenshot (tag "host").
Content is given as sizes (`bytes` + `key`), except short fixed host texts; `full_text=True` puts
real text into tool schemas, tool inputs and results, reply text and JSON readings.
Clocks: `t` is wall time (reply latency = first-token time + output tokens / rate; tools take
`tool_seconds`); `game_t` is the game clock, paused before timed play (H-18).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ctxbench.sim.core.values import Tokens
from ctxbench.traces.codec import canonical_json
from ctxbench.traces.generators import game_episode, game_prompt
from ctxbench.traces.generators.params import check_bounds, header_params
from ctxbench.traces.model import Content, Header, MessageEvent, SystemEvent, ToolDef, ToolsEvent, Trace

TOOL_NAMES = (
    "observe", "wait_and_observe", "build_structure", "building_info", "flat_view", "move_camera",
    "zoom_camera", "rotate_camera", "center_on_building", "game_action", "inspect_building",
    "map_overview", "demolish_building", "cancel_construction", "upgrade_building",
    "set_production_priority", "set_work_area", "set_transport_priority", "set_stock_policy",
    "list_buildings", "find_resource", "economy_report", "read_plan", "write_plan", "read_notebook",
    "write_notebook", "read_playbook", "propose_playbook_change", "playbook_history",
)  # fmt: skip
LOOK_TOOLS = ("observe", "wait_and_observe", "flat_view", "move_camera", "zoom_camera", "rotate_camera")
TARGETED_TOOLS = ("build_structure", "game_action", "inspect_building")  # input works from the screenshot
NATIVE = (1920, 1080)
REFERENCE_PIXELS = 1280 * 720  # `screenshot_bytes` is given for this size and scaled by pixel count
TIMED_PLAY = "Timed play has started."
HOST_WAIT = "The host let 5 game seconds pass because the turn acted without looking."
NO_SCREENSHOT = "No screenshot was taken; observe or wait_and_observe gets one."
_WORDS = (
    "wood", "stone", "plank", "bread", "fish", "road", "worker", "carrier", "storehouse", "harbour",
    "farm", "mill", "bakery", "quarry", "woodcutter", "forester", "mine", "smelter", "tool",
    "production", "stock", "transport", "priority", "area", "plan", "next", "build", "place",
    "check", "wait", "economy", "settlers", "flag", "path", "territory", "expand", "supply",
    "demand", "the", "a", "of", "to", "and", "then",
)  # fmt: skip


@dataclass(frozen=True)
class GameParams:
    """Parameters of a synthetic H trace; ranges are inclusive (lo, hi) draws from the seeded rng."""

    turns: int = 300  # gameplay replies after the BEGIN reply
    seed: int = 0
    screenshot_width: int = 1280  # H-5: 1280 -> 1280x720 from a 1920x1080 window; 0 = native size
    screenshot_bytes: tuple[int, int] = (60_000, 140_000)  # JPEG bytes at 1280x720, scaled by pixels
    n_tools: int = 26  # H-1 (29 in a learning-series episode)
    system_bytes: tuple[int, int] = (6_000, 9_000)
    tool_schema_bytes: tuple[int, int] = (300, 900)
    guide_image: bool = True  # H-26: the construction guide as an image, else as text
    guide_size: tuple[int, int] = (1568, 1000)
    guide_bytes: tuple[int, int] = (180_000, 320_000)
    guide_text_bytes: tuple[int, int] = (6_000, 10_000)
    settlement_image: bool = False  # H-26: optional pinned example-settlement screenshot
    prep_bytes: tuple[int, int] = (1_500, 3_000)
    begin_output_tokens: tuple[Tokens, Tokens] = (300, 900)
    stats_bytes: tuple[int, int] = (600, 1_500)  # JSON block of every observation (H-5)
    text_only_share: float = 0.15  # H-7: observations without a screenshot
    look_share: float = 0.75  # replies whose last tool call returns an observation
    no_tool_share: float = 0.03  # replies without tool calls (answered by a host screenshot)
    say_share: float = 0.5  # replies with a text block before their tool calls
    error_share: float = 0.05  # action results that are errors
    calls_per_reply: tuple[int, int] = (1, 3)
    tool_input_bytes: tuple[int, int] = (20, 160)
    tool_result_bytes: tuple[int, int] = (40, 600)
    output_tokens: tuple[Tokens, Tokens] = (50, 400)
    first_token_seconds: tuple[float, float] = (1.0, 4.0)
    tokens_per_second: tuple[float, float] = (40.0, 90.0)
    tool_seconds: tuple[float, float] = (2.0, 15.0)  # tool and game time between a reply and the next request
    game_seconds: int = 7_200  # length of timed play, for "Game time left: … of …" (H-6)
    game_speed: float = 1.0  # game seconds per wall second during timed play
    fallback_observation: str = "when-needed"  # H-7: or "always" (host observations are screenshots)
    # H-28: a pixel-targeting call judges its age limit (30 game seconds) against the last real
    # screenshot; a text-only observation does not refresh it, and a call past it fails. 0 = off,
    # the default, so that traces made before it stay byte-identical; 30.0 reproduces H-28.
    targeting_age_limit: float = 0.0
    # H-30: an episode of a learning series (both 0: not a series): the preparation message names
    # "episode k of n" and carries how the playbook works and the playbook as the previous episode
    # left it; the three playbook tools are added (26 -> 29, H-1). Sizes assumed (the seed gives none).
    episode: int = 0
    episodes: int = 0
    playbook_bytes: tuple[int, int] = (1_500, 4_000)
    playbook_howto_bytes: tuple[int, int] = (600, 1_200)
    # H-5: after the last reply the host's closing message holds the final reading's capture and
    # the final overview at the window's own size (1920x1080), whatever screenshot_width is.
    final_capture: bool = False
    # H-1/H-3: "drawn" (one size from system_bytes, as every earlier trace), "assembled" (built
    # from the game guide as the host does: comments removed, cost tables replaced by a pointer,
    # military sections dropped unless `military`; game_prompt.py) or "source" (the guide as is).
    system_prompt: str = "drawn"
    military: bool = True  # the benchmark file's `military:` setting (assembled prompts only)
    full_text: bool = False  # real text instead of sizes in tools, tool calls, replies and readings
    model: str = ""
    window: Tokens = 0

    def __post_init__(self) -> None:
        """Checks beyond the type hints (traces/generators/params.py)."""
        required = (
            ("turns", self.turns >= 1, "a whole number >= 1"),
            ("n_tools", self.n_tools >= 4, "a whole number >= 4"),
            ("screenshot_width", self.screenshot_width >= 0, "a whole number >= 0"),
            ("game_speed", self.game_speed > 0, "a number > 0"),
        )
        check_bounds(self, required, not_ranges=("guide_size",))
        if self.fallback_observation not in ("when-needed", "always"):
            got = self.fallback_observation
            raise ValueError(f"fallback_observation: expected one of 'when-needed', 'always', got {got!r}")
        game_episode.check_series(self.episode, self.episodes)
        if self.system_prompt not in game_prompt.PROMPTS:
            choices = ", ".join(repr(p) for p in game_prompt.PROMPTS)
            raise ValueError(f"system_prompt: expected one of {choices}, got {self.system_prompt!r}")
        if not self.military and self.system_prompt != "assembled":
            raise ValueError(
                "military: false drops sections of an assembled prompt (system_prompt: assembled): "
                f"expected true, got false with system_prompt {self.system_prompt!r}"
            )

    @property
    def screenshot_size(self) -> tuple[int, int]:
        """Width and height of every gameplay screenshot (fixed for the run, H-5)."""
        w = self.screenshot_width or NATIVE[0]
        return w, round(w * NATIVE[1] / NATIVE[0])

    def meta(self) -> dict[str, Any]:
        """The parameters as the trace header records them (traces/generators/params.py)."""
        return header_params(self, ("targeting_age_limit", *game_episode.LATER))


def tool_names(n: int, episodes: int = 0) -> tuple[str, ...]:
    """The first `n` tool names (26 = H's gameplay tools; 29 adds the learning-series tools),
    plus the learning-series tools in a series episode (H-1, H-30)."""
    names = TOOL_NAMES[:n] + tuple(f"extra_tool_{i}" for i in range(len(TOOL_NAMES), n))
    return game_episode.series_tools(names, episodes)


def _clock(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class _Game:
    """One generation run: the rng, the clocks and the events so far."""

    def __init__(self, p: GameParams) -> None:
        self.p = p
        self.rng = random.Random(p.seed)
        self.events: list[Any] = []
        self.t = 0.0
        self.play_start: float | None = None  # wall time timed play started (game clock paused before)
        self.streak = 0  # replies in a row that acted without looking (H-27)
        self.last_shot = 0.0  # game time of the last real screenshot (H-28's targeting frame)
        names = tool_names(p.n_tools, p.episodes)
        self.look = [n for n in LOOK_TOOLS if n in names]
        self.targeted = [n for n in TARGETED_TOOLS if n in names]
        self.plain = [n for n in names if n not in LOOK_TOOLS and n not in TARGETED_TOOLS]
        if "wait_and_observe" not in names or not self.targeted + self.plain:
            raise ValueError("GameParams.n_tools too small: observing and acting tools are needed")

    # -- draws
    def draw(self, lohi: tuple[int, int]) -> int:
        return self.rng.randint(*lohi)

    def words(self, nbytes: int) -> str:
        out: list[str] = []
        size = -1
        while size < nbytes:
            w = self.rng.choice(_WORDS)
            out.append(w)
            size += len(w) + 1
        return " ".join(out)[: max(nbytes, 1)]

    def game_t(self) -> float:
        if self.play_start is None:
            return 0.0
        return round((self.t - self.play_start) * self.p.game_speed, 3)

    def message(self, role: str, tag: str, content: list[Content], **kw: Any) -> None:
        ev = MessageEvent(role, tuple(content), tag=tag, t=round(self.t, 3), game_t=self.game_t(), **kw)
        self.events.append(ev)

    def reply_latency(self, out_tokens: int) -> float:
        p = self.p
        return self.rng.uniform(*p.first_token_seconds) + out_tokens / self.rng.uniform(*p.tokens_per_second)

    def text(self, key: str, lohi: tuple[int, int], lang: str = "prose", full: str | None = None) -> Content:
        if self.p.full_text and full is not None:
            return Content("text", text=full, lang=lang)
        return Content("text", nbytes=self.draw(lohi), lang=lang, key=key)

    # -- pieces
    def tools(self) -> ToolsEvent:
        defs = []
        for name in tool_names(self.p.n_tools, self.p.episodes):
            size = self.draw(self.p.tool_schema_bytes)
            if self.p.full_text:
                schema = {
                    "name": name,
                    "description": self.words(max(size - 120, 20)),
                    "input_schema": {"type": "object", "properties": {"x": {"type": "integer"}}},
                }
                defs.append(ToolDef(name, schema=canonical_json(schema)))
            else:
                defs.append(ToolDef(name, nbytes=size))
        return ToolsEvent(tuple(defs), t=0.0)

    def observation(self, k: int, screenshot: bool) -> list[Content]:
        """Screenshot (unless text-only) + JSON stats block (H-5, H-7)."""
        p, out = self.p, []
        if screenshot:
            w, h = p.screenshot_size
            nbytes = round(self.draw(p.screenshot_bytes) * (w * h) / REFERENCE_PIXELS)
            out.append(Content("image", nbytes=max(nbytes, 1), key=f"shot{k}", width=w, height=h))
            self.last_shot = self.game_t()  # H-28: only a real screenshot refreshes the frame
        lo, hi = p.stats_bytes
        extra = 0 if screenshot else len(NO_SCREENSHOT) + 1
        full = None
        if p.full_text:
            reading = {
                "run_clock": {"game_seconds": self.game_t(), "limit_seconds": p.game_seconds},
                "stats": {w: self.rng.randint(0, 80) for w in _WORDS[:8]},
                "game_events": [self.words(30) for _ in range(self.rng.randint(0, 3))],
                "game_events_dropped": 0,
                "reader_unavailable_seconds": 0,
            }
            if screenshot:
                reading["width"], reading["height"] = p.screenshot_size
            full = ("" if screenshot else NO_SCREENSHOT + "\n") + canonical_json(reading)
        out.append(self.text(f"obs{k}", (lo + extra, hi + extra), "json", full))
        return out

    def prep(self) -> None:
        """Pinned preparation message and BEGIN reply (H-2, H-26); the game clock is paused."""
        p = self.p
        content = [self.text("prep", p.prep_bytes, full="Study the guide, make a plan, end with BEGIN.")]
        content += game_episode.series_content(  # H-30
            p.episode, p.episodes, p.playbook_howto_bytes, p.playbook_bytes, self.text, self.words, self.draw
        )
        if p.guide_image:
            w, h = p.guide_size
            content.append(
                Content("image", nbytes=self.draw(p.guide_bytes), key="guide", width=w, height=h, pinned=True)
            )
        else:
            content.append(Content("text", nbytes=self.draw(p.guide_text_bytes), key="guide-text"))
        if p.settlement_image:
            w, h = p.screenshot_size
            nbytes = self.draw(p.screenshot_bytes)
            content.append(Content("image", nbytes=nbytes, key="settlement", width=w, height=h, pinned=True))
        self.message("user", "prep", content, pinned=True)
        out = self.draw(p.begin_output_tokens)
        self.t += self.reply_latency(out)
        size = round(out * 3.5)
        begin = self.text("begin", (size, size), full=self.words(round(out * 3.5)) + "\nBEGIN")
        self.message("assistant", "reply", [begin], pinned=True, output_tokens=out)

    def system(self) -> SystemEvent:
        """H-1/H-3: one system prompt for the run, byte-identical: drawn as one size, or built
        from the game guide the way the host assembles it (game_prompt.py)."""
        p = self.p
        if p.system_prompt == "drawn":
            return SystemEvent((Content("text", nbytes=self.draw(p.system_bytes), key="system"),), t=0.0)
        guide = game_prompt.source_guide(self.draw, self.words if p.full_text else None)
        sections = guide if p.system_prompt == "source" else game_prompt.assemble(guide, p.military)
        text, size = game_prompt.prompt_text_or_size(sections)
        return SystemEvent((Content("text", text=text, nbytes=size, key="" if text else "system"),), t=0.0)

    def final(self, k: int) -> None:
        """H-5: the final reading's capture and the final overview at the window's own size."""
        p = self.p
        scale = NATIVE[0] * NATIVE[1] / REFERENCE_PIXELS
        shot, overview = (max(1, round(self.draw(p.screenshot_bytes) * scale)) for _ in range(2))
        full = canonical_json({w: self.rng.randint(0, 80) for w in _WORDS[:8]}) if p.full_text else None
        reading = self.text("final-reading", p.stats_bytes, "json", full)
        self.t += self.rng.uniform(*p.tool_seconds)
        self.message("user", "host", game_episode.final_capture(NATIVE, shot, reading, overview))

    def call_input(self, name: str, k: int, i: int, text_only: bool) -> Content:
        full = None
        if self.p.full_text:
            args: dict[str, Any] = {"seconds": self.rng.randint(2, 20)}
            if name == "wait_and_observe":
                args["screenshot"] = not text_only
            elif name in TARGETED_TOOLS:
                args = {"x": self.rng.randint(0, 1279), "y": self.rng.randint(0, 719)}
            full = canonical_json(args)
        size = len(full) if full is not None else self.draw(self.p.tool_input_bytes)
        text_or_size: dict[str, Any] = (
            {"text": full} if full is not None else {"nbytes": size, "key": f"in{k}.{i}"}
        )
        return Content("tool_use", tool_id=f"tu{k}.{i}", name=name, lang="json", **text_or_size)

    def turn(self, k: int, last: bool) -> None:
        """Reply k, and unless it is the last, the user message that answers it."""
        p, rng = self.p, self.rng
        n_calls = 0 if rng.random() < p.no_tool_share else self.draw(p.calls_per_reply)
        looks = n_calls > 0 and rng.random() < p.look_share
        text_only = rng.random() < p.text_only_share
        if looks or p.fallback_observation == "always":
            pool = self.targeted + self.plain
        else:  # when-needed: the host screenshot follows targeted input (H-7)
            pool = self.plain if text_only or not self.targeted else self.targeted
        calls = [rng.choice(pool) for _ in range(n_calls - looks)]
        if looks:
            calls.append("wait_and_observe" if text_only else rng.choice(self.look))
        out = self.draw(p.output_tokens)
        content = [self.call_input(name, k, i, text_only) for i, name in enumerate(calls)]
        if n_calls == 0 or rng.random() < p.say_share:
            size = max(40, round(out * 3.5) - sum(c.size for c in content))
            content.insert(0, self.text(f"say{k}", (size, size), full=self.words(size)))
        self.t += self.reply_latency(out)
        self.message("assistant", "reply", content, output_tokens=out)
        if last:
            return
        self.t += rng.uniform(*p.tool_seconds)
        if n_calls == 0:
            self.streak = 0
            self.message("user", "host", self.observation(k, screenshot=True))
            return
        results = []
        for i, name in enumerate(calls):
            looked = name in LOOK_TOOLS
            err = not looked and rng.random() < p.error_share
            limit = p.targeting_age_limit
            if limit and name in TARGETED_TOOLS and self.game_t() - self.last_shot > limit:
                err = True  # H-28: the targeting frame is older than the age limit
            full = ("Observation follows." if looked else self.words(60)) if p.full_text else None
            res = self.text(f"out{k}.{i}", (30, 90) if looked else p.tool_result_bytes, full=full)
            results.append(Content("tool_result", text=res.text, nbytes=res.nbytes, key=res.key,
                                   tool_id=f"tu{k}.{i}", is_error=err))  # fmt: skip
        if looks:
            self.streak = 0
            self.message("user", "observation", [*results, *self.observation(k, not text_only)])
            return
        self.streak += 1
        left = f"Game time left: {_clock(p.game_seconds - self.game_t())} of {_clock(p.game_seconds)}"
        self.t += 5.0 / p.game_speed  # H-27: the host lets 5 game seconds pass
        targeted = any(c in TARGETED_TOOLS for c in calls) and self.streak < 12
        shot = p.fallback_observation == "always" or targeted
        host = [Content("text", text=left), Content("text", text=HOST_WAIT)]
        self.message("user", "observation", [*results, *host, *self.observation(k, shot)])


def generate(params: GameParams | None = None) -> Trace:
    """A synthetic H trace for `params` (defaults: 300 turns, seed 0); deterministic."""
    p = params or GameParams()
    g = _Game(p)
    # H-3: one system prompt for the run, byte-identical; the clock, plan and notebook travel in
    # observations and tool results (H-10: plan and notebook only when read or written)
    g.events.append(g.system())
    g.events.append(g.tools())
    g.prep()
    g.t += g.rng.uniform(1.0, 3.0)
    g.play_start = g.t
    g.message("user", "host", [Content("text", text=TIMED_PLAY), *g.observation(0, screenshot=True)])
    for k in range(1, p.turns + 1):
        g.turn(k, last=k == p.turns)
    if p.final_capture:
        g.final(p.turns + 1)
    header = Header(source="synthetic", harness="H", model=p.model, window=p.window,
                    meta={"generator": "game", "params": p.meta()})  # fmt: skip
    return Trace(header, tuple(g.events))
