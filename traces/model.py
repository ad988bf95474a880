"""Trace format v1 as frozen dataclasses: what a JSONL trace line means once read.

A trace is a header then events in order. Content is given in full (`text`) or as sizes
(`bytes`, with an optional `key` naming content that repeats); see `traces/FORMAT.md`.
Times: `t` is wall-clock seconds since the session started (when the event happened; for an
assistant message, when its reply was complete); `game_t` is the game clock (H-18 keeps them apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMAT_NAME = "ctxbench-trace"
FORMAT_VERSION = 1
# H-30: the content key of the playbook in a learning-series episode's preparation message
# (FORMAT.md "How the game harness H appears"): the post-compaction message carries its revision.
PLAYBOOK_KEY = "playbook"


@dataclass(frozen=True)
class Content:
    """One content block of a message, system prompt or tool result."""

    kind: str  # text | image | tool_use | tool_result | thinking
    text: str | None = None
    nbytes: int = 0
    lang: str = "prose"  # prose | code | json: which calibrated token rate applies
    key: str = ""
    width: int = 0
    height: int = 0
    tool_id: str = ""  # tool_use id, or the id a tool_result answers
    name: str = ""  # tool name (tool_use)
    is_error: bool = False
    pinned: bool = False
    skill: bool = False
    tokens: int | None = None  # true tokens when a source knows them
    cache: str = ""  # "5m" | "1h": a cache_control mark the recorded harness put here (imported traces)
    # sent with the requests of its own turn only: the recorded harness drops it from the prompt when
    # the next real user message arrives (Claude Code <= 2.0.29 attachments, bench/claude_code_wire.md §1)
    turn: bool = False

    @property
    def size(self) -> int:
        return len(self.text.encode("utf-8")) if self.text is not None else self.nbytes


@dataclass(frozen=True)
class ToolDef:
    name: str
    schema: str | None = None  # canonical JSON text of the definition, when known
    nbytes: int = 0
    mcp: bool = False
    # Anthropic `defer_loading`: sent in `tools` but loaded on demand by tool search, so not part of
    # the prompt where it is listed (providers.md §1.6 escape hatches; sim/providers/anthropic.py)
    deferred: bool = False


@dataclass(frozen=True)
class Usage:
    """Usage a provider billed for one request (ground truth of imported traces)."""

    input_tokens: int = 0  # neither read from nor written to the cache
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output_tokens: int = 0
    cost: float | None = None

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_read + self.cache_write_5m + self.cache_write_1h


@dataclass(frozen=True)
class Header:
    source: str
    harness: str = ""
    model: str = ""
    window: int = 0
    version: int = FORMAT_VERSION
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemEvent:
    content: tuple[Content, ...]
    t: float | None = None


@dataclass(frozen=True)
class ToolsEvent:
    tools: tuple[ToolDef, ...]
    t: float | None = None


@dataclass(frozen=True)
class MessageEvent:
    """A message. An assistant message is the reply to one provider request: the prompt of that
    request is everything before it."""

    role: str  # user | assistant
    content: tuple[Content, ...]
    tag: str = ""  # prep | reply | observation | host | tool_results | user | summary | handoff
    pinned: bool = False
    t: float | None = None
    game_t: float | None = None
    output_tokens: int | None = None
    usage: Usage | None = None
    request_id: str = ""


@dataclass(frozen=True)
class ModelSwitchEvent:
    model: str
    window: int = 0
    t: float | None = None


@dataclass(frozen=True)
class CompactionEvent:
    """A compaction the recorded harness performed (imported traces): the messages from
    `kept_from` on were kept, the earlier ones replaced by `summary`."""

    summary: tuple[Content, ...] = ()
    kept_from: int | None = None
    trigger: str = "auto"
    pre_tokens: int | None = None
    t: float | None = None


@dataclass(frozen=True)
class ResumeEvent:
    """The session was closed and resumed (`--resume`, C-4, C-15): the harness restarts with no
    trustworthy reported count, and the savings total persisted in the session's metadata carries
    on (`saved_total`: that total when given, e.g. for a trace that starts at a resume)."""

    saved_total: int | None = None
    t: float | None = None


Event = SystemEvent | ToolsEvent | MessageEvent | ModelSwitchEvent | CompactionEvent | ResumeEvent


@dataclass(frozen=True)
class Trace:
    header: Header
    events: tuple[Event, ...]
    path: str = ""

    @property
    def replies(self) -> int:
        return sum(1 for e in self.events if isinstance(e, MessageEvent) and e.role == "assistant")
