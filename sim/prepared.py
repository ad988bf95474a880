"""A trace turned into blocks and messages once, ready to replay many times (sweeps, benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.sim.build import builder, tool_block
from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.makers import slots_maker
from ctxbench.sim.core.names import StepKind
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.traces.gcpause import gc_paused
from ctxbench.traces.model import (
    PLAYBOOK_KEY,
    CompactionEvent,
    Content,
    Header,
    MessageEvent,
    ModelSwitchEvent,
    ResumeEvent,
    SystemEvent,
    ToolsEvent,
    Trace,
)


@dataclass(frozen=True, slots=True)
class Step:
    """One replay step: a message to append (`reply` set when it is the model's reply to a
    request), a model switch, a recorded compaction, a resume, a new system part (`system`:
    its blocks as a message of role system, tagged with why it changed) or a new tool list
    (`tools`: its blocks as a message of role tools, tagged "tools_change")."""

    kind: StepKind
    message: Message | None = None
    t: float | None = None
    game_t: float | None = None
    output_tokens: int = 0
    model: str = ""
    window: int = 0
    event: object | None = None


# The tag of a message the trace logs after a recorded compaction and before the first request
# after it (Claude Code's re-read files, plan, todo list and hook output; a prompt typed after a
# manual compaction): what the recorded harness sent with its summary. A policy that compacts by
# its own rules does not send it (sim/harness/conversation.py `_foreign_summariser`); its billed
# size is part of the recorded post-compaction size (bench/trace_knows.py
# `recorded_summary_tokens`). A compaction before any message is the trace's starting state: what
# follows it is not tagged.
REATTACHED = "reattached"

_step = slots_maker(Step)  # the Step(...) of each message, made as cheaply as a block (sim/core/makers.py)


@dataclass(frozen=True)
class PreparedTrace:
    name: str
    model: str
    window: int
    tools: tuple[Block, ...]
    system: tuple[Block, ...]
    steps: tuple[Step, ...]
    playbook_bytes: int = 0  # H-30: the playbook a learning-series episode's preparation carries
    # The harness and version that recorded an imported trace ("claude-code 2.0.8"; "" when the
    # trace does not say): what a preset takes from it (bench/trace_knows.py)
    recorded_by: str = ""

    @property
    def replies(self) -> int:
        return sum(1 for s in self.steps if s.kind == "reply")


def system_change(old: tuple[Content, ...], new: tuple[Content, ...]) -> str:
    """Why a later `system` event changed the prompt: "memory_edit" when every changed block is
    a memory file (content keys `memory…`, C-1, C-2's Memory row), else "system_change"."""
    changed = [c for i, c in enumerate(new) if i >= len(old) or old[i] != c]
    changed += old[len(new) :]
    memory = bool(changed) and all(c.key.startswith("memory") for c in changed)
    return "memory_edit" if memory else "system_change"


def prepare(trace: Trace, factory: BlockFactory, name: str = "") -> PreparedTrace:
    with gc_paused():  # every block made is kept (traces/gcpause.py)
        return _prepare(trace, factory, name)


def _prepare(trace: Trace, factory: BlockFactory, name: str) -> PreparedTrace:
    tools: list[Block] = []
    system: list[Block] = []
    steps: list[Step] = []
    playbook = 0
    contents: tuple[Content, ...] = ()  # the system content as it stands
    make = builder(factory)
    reattached = False  # after a recorded compaction, before the next reply (REATTACHED)
    opened = False  # a message was seen (a compaction before any is the starting state)
    block, message = make.block, make.message
    for i, ev in enumerate(trace.events):
        if isinstance(ev, MessageEvent):  # almost every event: first
            key = f"e{i}"
            if ev.tag == "prep":
                playbook += sum(c.size for c in ev.content if c.key == PLAYBOOK_KEY)
            msg = message(ev, key)
            if reattached and ev.role != "assistant" and not ev.tag:
                msg = Message.of(msg.role, msg.blocks, REATTACHED, msg.pinned)
            reattached = reattached and ev.role != "assistant"
            opened = True
            if ev.role == "assistant":
                out = ev.output_tokens
                if out is None:
                    out = ev.usage.output_tokens if ev.usage else msg.tokens
                steps.append(_step("reply", msg, t=ev.t, game_t=ev.game_t, output_tokens=int(out), event=ev))
            else:
                steps.append(_step("message", msg, t=ev.t, game_t=ev.game_t))
            continue
        key = f"e{i}"
        if isinstance(ev, ToolsEvent) and steps:  # replaces the tools from the next request (FORMAT.md)
            blocks = tuple(tool_block(factory, t) for t in ev.tools)
            steps.append(Step("tools", Message.of("tools", blocks, "tools_change"), ev.t))
        elif isinstance(ev, ToolsEvent):
            tools.extend(tool_block(factory, t) for t in ev.tools)
        elif isinstance(ev, SystemEvent) and steps:  # C-1: replaces the system from the next request
            blocks = tuple(block(c, "system", f"{key}.{j}") for j, c in enumerate(ev.content))
            why = system_change(contents, ev.content)
            steps.append(Step("system", Message.of("system", blocks, why), ev.t))
            contents = ev.content
        elif isinstance(ev, SystemEvent):
            system.extend(block(c, "system", f"{key}.{j}") for j, c in enumerate(ev.content))
            contents = (*contents, *ev.content)
        elif isinstance(ev, ModelSwitchEvent):
            steps.append(Step("switch", None, ev.t, None, model=ev.model, window=ev.window))
        elif isinstance(ev, ResumeEvent):  # C-4, C-15: the harness restarts (harness/conversation.py _resume)
            steps.append(Step("resume", None, ev.t, event=ev))
        elif isinstance(ev, CompactionEvent):
            # The recorded summary as the user message that opens the new context (replayed only by
            # compaction components that apply recorded compactions, policies/recorded.py).
            summary = tuple(block(c, "user", f"{key}.s{j}") for j, c in enumerate(ev.summary))
            opening = Message.of("user", summary, "summary") if summary else None
            steps.append(Step("compaction", opening, ev.t, event=ev))
            reattached = opened
    return PreparedTrace(
        name or trace.path or trace.header.source,
        trace.header.model,
        trace.header.window,
        tuple(tools),
        tuple(system),
        tuple(steps),
        playbook,
        recorded_by(trace.header),
    )


def recorded_by(header: Header) -> str:
    """"FORMAT VERSION" of the harness whose log a trace was imported from (its header's meta), or
    "" when the header names no version."""
    version = str(header.meta.get("version", "") or "")
    return f"{header.meta.get('format', '')} {version}" if version else ""
