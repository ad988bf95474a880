"""The contract of each component kind: the methods the engine calls, and the typed plans a
compaction hands it, so the engine never probes a component for attributes (issue 10).

- `Estimator.estimate(view)` (and `whole(view)`, the estimate of the whole transcript, C-4);
- `Eviction.plan(view)` → an Edit or None;
- `Marks.place(view)` → the request's breakpoints;
- `Compaction.decide(view, estimate, mode)` → None, a Trim or a Summarize; a summarizing
  component also answers `plan` (what is summarized), `summary_request` (how the summarizer is
  called, `SummaryRequest`), `rebuild` (the conversation after it) and `rules` (which of the
  C process's behaviours apply, `CompactionRules`); H's handoff compaction answers `handoff`
  (`HandoffRequest`) and `rebuild_handoff`. `CompactionDefaults` gives every method its
  "does not apply" answer, so a component states only what it does.
- `ProviderBuilder(model, seed, **params)` → a `Provider` (sim/core/provider.py);
- `Importer(paths)` → an ImportResult; `Generator.generate(params)` → a Trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.names import Breakpoints

if TYPE_CHECKING:
    from ctxbench.sim.core.provider import Provider
    from ctxbench.traces.model import Trace


@dataclass(frozen=True, slots=True)
class Trim:
    edit: Edit


@dataclass(frozen=True, slots=True)
class Summarize:
    reason: str = "auto"


Action = Trim | Summarize


@dataclass(frozen=True, slots=True)
class SummaryPlan:
    """What a summarization replaces: messages [first, end) become one summary; `carried` are
    messages kept verbatim in front of the tail (skills, C-8); `older` the messages summarized."""

    first: int
    end: int
    older: tuple[Message, ...]
    carried: tuple[Message, ...] = ()
    manifest_files: int = 0  # C-13
    reason: str = "auto"
    shown: tuple[Message, ...] = ()  # what the summarizer request carries, when not `older` (C-9)


@dataclass(frozen=True)
class CompactionRules:
    """Which behaviours of the C process a compaction component turns on, with their numbers;
    the defaults are "off" (research/policies.md: most harnesses have none of them)."""

    mode: str = "default"  # C-17: the compact mode a session starts in
    tier2: float = 1.0  # C-5: a trim at or above this fraction of the budget is a tier-2 pass
    tier3: float = 0.9  # C-6, C-19: summarize after a switch to a smaller window above this
    reactive: bool = False  # C-18: "prompt too long" compacts on the spot and retries once
    backoff: bool = False  # C-12: an unproductive pass waits for the conversation to grow
    min_reclaim: float = 0.0  # C-12: "almost nothing", as a fraction of the window
    regrow: float = 0.0  # C-12: how much the estimate must grow, as a fraction of the window
    switch_summarize: bool = False  # C-19
    trim_fallback: bool = False  # C-11: a tier-2 trim when no summary can be produced
    trigger: float = 1.0  # H-17: a new conversation still above trigger × budget has failed


@dataclass(frozen=True)
class SummaryRequest:
    """How the summarizer is called (C-11): the instruction's size, what the request carries
    (`full` conversation, the `older` part after tools + system, or `text` in its own prompt,
    capped at `input_max_bytes`), with or without tools, how many calls (Gemini's verification
    probe), the fallback model, and the model's acknowledgement after the snapshot (Gemini)."""

    instruction_bytes: int = 2500
    input: str = "older"
    input_max_bytes: int = 0  # 0 = no cap
    tools: bool = True
    calls: int = 1
    fallback_model: str = ""
    ack_bytes: int = 0
    tool_output_max_bytes: int = 0  # `text`: each tool result shown up to this many bytes (0 = whole)
    # the summarizer's own system prompt, without tools (0: `text` assumes one, others keep the
    # conversation's)
    system_bytes: int = 0


@dataclass(frozen=True)
class HandoffRequest:
    """The handoff a summarizing H compaction asks for (H-15..H-17): the instruction (its size and
    the harness's estimate of it), what the model writes, whether the request fits the budget
    (else text-only at once), the chance the model calls a tool instead, the handoff's valid size
    range and the plan/notebook state carried into the new conversation."""

    instruction_bytes: int
    instruction_estimate: int
    handoff_bytes: int
    fits: bool
    tool_call_rate: float
    min_bytes: int
    max_bytes: int
    state_bytes: int

    def in_range(self) -> bool:
        return self.min_bytes <= self.handoff_bytes <= self.max_bytes


class Estimator(Protocol):
    def estimate(self, view: View) -> int: ...

    def whole(self, view: View) -> int: ...


class Eviction(Protocol):
    def plan(self, view: View) -> Edit | None: ...


class Marks(Protocol):
    def place(self, view: View) -> Breakpoints: ...


class Compaction(Protocol):
    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None: ...

    def acts(self, view: View, estimate: int, mode: str | None = None) -> bool: ...

    def rules(self) -> CompactionRules: ...

    def threshold(self, view: View) -> int: ...

    def plan(self, view: View, reason: str = "auto") -> SummaryPlan | None: ...

    def summary_request(self) -> SummaryRequest: ...

    def summary_size(self, plan: SummaryPlan) -> int: ...

    def reattach(self, view: View, plan: SummaryPlan) -> list[Block]: ...

    def rebuild_summary(
        self, view: View, plan: SummaryPlan, summary: Message, extra: tuple[Message, ...] = ()
    ) -> Edit: ...

    def fallback_trim(self, view: View) -> Edit | None: ...

    def recorded(self, view: View, summary: Message | None, keep: int = 0) -> Edit | None: ...

    def handoff(self, view: View, estimate: int) -> HandoffRequest | None: ...

    def rebuild_handoff(self, view: View, handoff: Message, fresh: Message | None) -> Edit: ...


class CompactionDefaults:
    """The "does not apply" answer of every `Compaction` method a component does not define."""

    # True for a component that replays the recorded harness's own compactions (`recorded`): the
    # trace's summariser request (messages tagged "summary") is then replayed as the summary
    # request it was; other components make their own and the recorded one is not sent
    # (sim/harness/conversation.py, issue 29)
    replays_recorded = False

    __slots__ = ()

    def acts(self, view: View, estimate: int, mode: str | None = None) -> bool:
        """Whether `decide` would act now (C-12 counts the checks a back-off skips); a component
        whose decision makes an edit says so without making it."""
        return cast("Compaction", self).decide(view, estimate, mode) is not None

    def rules(self) -> CompactionRules:
        return CompactionRules()

    def threshold(self, view: View) -> int:
        return view.budget

    def plan(self, view: View, reason: str = "auto") -> SummaryPlan | None:
        return None

    def summary_request(self) -> SummaryRequest:
        return SummaryRequest()

    def summary_size(self, plan: SummaryPlan) -> int:
        return 0

    def reattach(self, view: View, plan: SummaryPlan) -> list[Block]:
        return []

    def rebuild_summary(
        self, view: View, plan: SummaryPlan, summary: Message, extra: tuple[Message, ...] = ()
    ) -> Edit:
        tail = tuple(view.tr.messages[plan.end :])
        return Edit(plan.first, (summary, *extra, *plan.carried, *tail), "compaction")

    def fallback_trim(self, view: View) -> Edit | None:
        return None

    def recorded(self, view: View, summary: Message | None, keep: int = 0) -> Edit | None:
        return None

    def handoff(self, view: View, estimate: int) -> HandoffRequest | None:
        return None

    def rebuild_handoff(self, view: View, handoff: Message, fresh: Message | None) -> Edit:
        return Edit(view.preparation_messages, (handoff,), "compaction")


class ProviderBuilder(Protocol):
    def __call__(self, model: str, seed: int = 0, **params: Any) -> Provider: ...


class Importer(Protocol):
    def __call__(self, paths: Sequence[Path]) -> Any: ...


class Generator(Protocol):
    def generate(self, params: Any) -> Trace: ...
