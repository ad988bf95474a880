"""Synthetic traces shaped like a coding-agent CLI session (harness C, SPEC C-1..C-19).

Why: C's tiers, tail rules and exemptions act on tool-heavy coding sessions (big file reads,
shell output, edits, skills, images) spread over several user turns with idle gaps, and the
real recordings under `traces-real/` are few and short. `generate(CodingParams(...))` builds one
from a seed: same parameters, same trace, byte for byte.

Shape (C-1: everything counts against one window):
- system content in blocks whose content keys name the C-2 breakdown bucket: `system` (the
  prompt), `memory<i>` (AGENTS.md-style memory files), `state` (a state file), `skills` (the
  skill catalog), `agents` (sub-agent definitions);
- tool definitions: `n_builtin` built-in tools, plus `mcp__<server>__<tool>` schemas for each
  connected MCP server (C-1, C-2 "MCP schemas as a fixed cost");
- `user_turns` user prompts; after each, `replies_per_turn` model replies, each with optional prose
  and 1-3 tool calls whose results are file reads (`read_bytes`, 1-40 KB of code), shell output,
  search hits, edits, sub-agent reports, loaded skills (`skill` flag, C-8) and occasional images
  (screenshots read from disk, C-9); the last reply of a turn is prose only;
- idle gaps between user turns (`idle_seconds`) long enough that 5-minute cache entries expire;
- model switches at some user turns (`ModelSwitchEvent`, C-19), manual compactions
  (`CompactionEvent(trigger="manual")`, C-16) and, with `resume_share`, resumed sessions
  (`ResumeEvent`, C-4, C-15); with `memory_edit_share`, memory files edited between turns (a
  later `SystemEvent`, C-1, C-2).
Content is given as sizes (`bytes` + `key`); real text is not needed for token or cache accounting.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ctxbench.sim.core.values import Tokens
from ctxbench.traces.generators.params import check_bounds, header_params
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Header,
    MessageEvent,
    ModelSwitchEvent,
    ResumeEvent,
    SystemEvent,
    ToolDef,
    ToolsEvent,
    Trace,
)

BUILTIN_TOOLS = (
    "Read", "Write", "Edit", "MultiEdit", "Bash", "Grep", "Glob", "LS", "WebFetch", "WebSearch",
    "Task", "Skill", "TodoWrite", "NotebookEdit", "BashOutput", "KillShell", "ExitPlanMode", "AskUser",
)  # fmt: skip
MCP_SERVERS = ("github", "linear", "postgres", "browser", "sentry")
# what each call reads back: tool name -> (weight, result size range in bytes, lang)
CALLS: dict[str, tuple[float, tuple[int, int], str]] = {
    "Read": (0.34, (1_000, 40_000), "code"),
    "Bash": (0.22, (200, 20_000), "prose"),
    "Grep": (0.12, (300, 6_000), "code"),
    "Glob": (0.05, (100, 2_000), "prose"),
    "Edit": (0.17, (100, 600), "prose"),
    "Write": (0.04, (60, 200), "prose"),
    "Task": (0.03, (1_000, 4_000), "prose"),
    "WebFetch": (0.03, (2_000, 12_000), "prose"),
}
SKILL_BYTES = (2_000, 8_000)


@dataclass(frozen=True)
class CodingParams:
    """Parameters of a synthetic coding session; ranges are inclusive (lo, hi) draws."""

    user_turns: int = 12
    seed: int = 0
    replies_per_turn: tuple[int, int] = (4, 16)
    system_bytes: tuple[int, int] = (10_000, 16_000)
    memory_files: int = 2
    memory_bytes: tuple[int, int] = (1_500, 8_000)
    state_bytes: tuple[int, int] = (0, 2_000)  # 0 = no state file
    skills_catalog_bytes: tuple[int, int] = (800, 3_000)
    agents_bytes: tuple[int, int] = (500, 2_500)
    n_builtin: int = 18
    builtin_schema_bytes: tuple[int, int] = (400, 3_500)
    mcp_servers: int = 2
    mcp_tools_per_server: tuple[int, int] = (5, 15)
    mcp_schema_bytes: tuple[int, int] = (300, 1_500)
    prompt_bytes: tuple[int, int] = (80, 1_500)
    say_bytes: tuple[int, int] = (60, 600)
    say_share: float = 0.6  # replies with prose before their tool calls
    calls_per_reply: tuple[int, int] = (1, 3)
    tool_input_bytes: tuple[int, int] = (40, 400)
    edit_input_bytes: tuple[int, int] = (200, 3_000)  # Edit/Write calls carry the new code
    read_bytes: tuple[int, int] = (1_000, 40_000)  # file reads, 1-40 KB (issue #4)
    skill_share: float = 0.015  # calls that load a skill (C-8)
    image_share: float = 0.01  # calls that read an image (C-9)
    image_size: tuple[int, int] = (1280, 800)
    error_share: float = 0.04
    output_tokens: tuple[Tokens, Tokens] = (60, 900)
    final_bytes: tuple[int, int] = (300, 2_500)  # the prose reply that ends a user turn
    first_token_seconds: tuple[float, float] = (1.0, 4.0)
    tokens_per_second: tuple[float, float] = (40.0, 90.0)
    tool_seconds: tuple[float, float] = (0.5, 20.0)
    idle_seconds: tuple[float, float] = (20.0, 1_800.0)  # between user turns: TTLs matter
    models: tuple[str, ...] = ("claude-sonnet-4-6", "claude-haiku-4-5")
    switch_share: float = 0.1  # user turns that start with a model switch (C-19)
    manual_compact_share: float = 0.0  # user turns preceded by a manual /compact (C-16)
    resume_share: float = 0.0  # user turns that start a resumed session (`resume` event; C-4, C-15)
    memory_edit_share: float = 0.0  # user turns after which a memory file was edited (C-1, C-2)
    window: Tokens = 0

    def __post_init__(self) -> None:
        """Checks beyond the type hints (traces/generators/params.py)."""
        required = (
            ("user_turns", self.user_turns >= 1, "a whole number >= 1"),
            ("n_builtin", self.n_builtin >= 1, "a whole number >= 1"),
            ("models", bool(self.models), "at least one model"),
        )
        check_bounds(self, required, not_ranges=("models", "image_size"))

    def meta(self) -> dict[str, Any]:
        """The parameters as the trace header records them (traces/generators/params.py)."""
        return header_params(self, LATER)


# options added after the first traces were written (left out of `meta` at their defaults)
LATER = ("resume_share", "memory_edit_share")


class _Session:
    def __init__(self, p: CodingParams) -> None:
        self.p = p
        self.rng = random.Random(p.seed)
        self.events: list[Any] = []
        self.t = 0.0
        self.calls = 0
        self.model = p.models[0]
        self.system_content: tuple[Content, ...] = ()

    def draw(self, lohi: tuple[int, int]) -> int:
        return self.rng.randint(*lohi)

    def text(self, key: str, lohi: tuple[int, int], lang: str = "prose", **kw: Any) -> Content:
        return Content("text", nbytes=max(1, self.draw(lohi)), lang=lang, key=key, **kw)

    def message(self, role: str, tag: str, content: list[Content], **kw: Any) -> None:
        self.events.append(MessageEvent(role, tuple(content), tag=tag, t=round(self.t, 3), **kw))

    def system(self) -> SystemEvent:
        p = self.p
        blocks = [self.text("system", p.system_bytes)]
        for i in range(p.memory_files):
            blocks.append(self.text(f"memory{i}", p.memory_bytes))
        if p.state_bytes[1] > 0:
            n = self.draw(p.state_bytes)
            if n:
                blocks.append(Content("text", nbytes=n, key="state"))
        blocks.append(self.text("skills", p.skills_catalog_bytes))
        blocks.append(self.text("agents", p.agents_bytes))
        self.system_content = tuple(blocks)
        return SystemEvent(self.system_content, t=0.0)

    def edit_memory(self, u: int) -> None:
        """The user edited one memory file between turns: a later `system` event with that file's
        new content, the rest unchanged (C-1: it counts from the next request on; C-2 flags it)."""
        i = self.rng.randrange(self.p.memory_files)
        content = list(self.system_content)
        at = next(j for j, c in enumerate(content) if c.key.split(".")[0] == f"memory{i}")
        content[at] = self.text(f"memory{i}.v{u}", self.p.memory_bytes)
        self.system_content = tuple(content)
        self.events.append(SystemEvent(self.system_content, t=round(self.t, 3)))

    def tools(self) -> ToolsEvent:
        p = self.p
        names = list(BUILTIN_TOOLS[: p.n_builtin]) + [
            f"Tool{i}" for i in range(len(BUILTIN_TOOLS), p.n_builtin)
        ]
        defs = [ToolDef(n, nbytes=self.draw(p.builtin_schema_bytes)) for n in names]
        for s in MCP_SERVERS[: p.mcp_servers]:
            for j in range(self.draw(p.mcp_tools_per_server)):
                defs.append(ToolDef(f"mcp__{s}__tool{j}", nbytes=self.draw(p.mcp_schema_bytes), mcp=True))
        return ToolsEvent(tuple(defs), t=0.0)

    def latency(self, out: int) -> float:
        p = self.p
        return self.rng.uniform(*p.first_token_seconds) + out / self.rng.uniform(*p.tokens_per_second)

    def pick_call(self) -> str:
        r = self.rng.random()
        if r < self.p.skill_share:
            return "Skill"
        if r < self.p.skill_share + self.p.image_share:
            return "ReadImage"
        names = list(CALLS)
        return self.rng.choices(names, weights=[CALLS[n][0] for n in names])[0]

    def reply(self, k: str, final: bool) -> None:
        """One model reply; unless `final`, followed by the user message with its tool results."""
        p, rng = self.p, self.rng
        out = self.draw(p.output_tokens)
        content: list[Content] = []
        if final:
            content.append(self.text(f"final{k}", p.final_bytes))
            self.t += self.latency(out)
            self.message("assistant", "reply", content, output_tokens=out)
            return
        if rng.random() < p.say_share:
            content.append(self.text(f"say{k}", p.say_bytes))
        calls = [self.pick_call() for _ in range(self.draw(p.calls_per_reply))]
        results: list[Content] = []
        for i, name in enumerate(calls):
            self.calls += 1
            tid = f"tu{k}.{i}"
            tool = "Read" if name == "ReadImage" else name
            size = p.edit_input_bytes if tool in ("Edit", "Write") else p.tool_input_bytes
            content.append(Content("tool_use", nbytes=self.draw(size), lang="json", key=f"in{tid}",
                                   tool_id=tid, name=tool))  # fmt: skip
            if name == "Skill":
                key = f"skill{self.draw((0, 5))}"  # a few skills, loaded again and again
                results.append(
                    Content("tool_result", nbytes=self.draw(SKILL_BYTES), key=key, tool_id=tid, skill=True)
                )
            elif name == "ReadImage":
                w, h = p.image_size
                results.append(Content("tool_result", nbytes=40, key=f"imgnote{tid}", tool_id=tid))
                results.append(
                    Content("image", nbytes=self.draw((80_000, 400_000)), key=f"img{tid}", width=w, height=h)
                )
            else:
                lohi, lang = (p.read_bytes if name == "Read" else CALLS[name][1]), CALLS[name][2]
                err = rng.random() < p.error_share
                nbytes = self.draw((60, 400)) if err else self.draw(lohi)
                results.append(Content("tool_result", nbytes=nbytes, lang=lang, key=f"out{tid}", tool_id=tid,
                                       is_error=err))  # fmt: skip
        self.t += self.latency(out)
        self.message("assistant", "reply", content, output_tokens=out)
        self.t += rng.uniform(*p.tool_seconds)
        self.message("user", "tool_results", results)

    def user_turn(self, u: int) -> None:
        p, rng = self.p, self.rng
        if u > 0:
            self.t += rng.uniform(*p.idle_seconds)
            if p.resume_share and rng.random() < p.resume_share:  # drawn only when asked for
                self.events.append(ResumeEvent(t=round(self.t, 3)))  # the CLI restarts (C-4, C-15)
            if len(p.models) > 1 and rng.random() < p.switch_share:
                choices = [m for m in p.models if m != self.model]
                self.model = rng.choice(choices)
                self.events.append(ModelSwitchEvent(self.model, t=round(self.t, 3)))
            if rng.random() < p.manual_compact_share:
                self.events.append(CompactionEvent(trigger="manual", t=round(self.t, 3)))
            if p.memory_edit_share and p.memory_files and rng.random() < p.memory_edit_share:
                self.edit_memory(u)
        self.message("user", "user", [self.text(f"prompt{u}", p.prompt_bytes)])
        n = self.draw(p.replies_per_turn)
        for r in range(n):
            self.reply(f"{u}.{r}", final=r == n - 1)


def generate(params: CodingParams | None = None) -> Trace:
    """A synthetic coding-agent trace for `params` (defaults: 12 user turns, seed 0); deterministic."""
    p = params or CodingParams()
    s = _Session(p)
    s.events.append(s.system())
    s.events.append(s.tools())
    for u in range(p.user_turns):
        s.user_turn(u)
    header = Header(source="synthetic", harness="C", model=p.models[0], window=p.window,
                    meta={"generator": "coding", "params": p.meta()})  # fmt: skip
    return Trace(header, tuple(s.events))
