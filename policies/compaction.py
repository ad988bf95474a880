"""Compaction policies: when to compact and what the conversation looks like afterwards.

A compaction component answers two questions for the harness, which runs the provider calls:
`decide(view, estimate)` → `None`, a `Trim` (an edit applied without a model call) or a
`Summarize` (send a summary request, then `rebuild` the conversation around the handoff).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxbench.policies.contracts import Action, CompactionDefaults, CompactionRules, HandoffRequest, Summarize
from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.values import Fraction, Tokens


@register("compaction", "h-handoff")
@dataclass(frozen=True)
class HandoffCompaction(CompactionDefaults):
    """H-14..H-18: summarize into a handoff and start a new conversation.

    Trigger: the anchored estimate passes `trigger` × budget (65 %, H-14), or earlier when that
    estimate plus the summary request's fixed instruction and the largest handoff would come
    within `margin` tokens of the budget. The summary request is the next request unchanged plus
    one instruction message (H-15); the handoff must be 40 B..12 KB (H-15, H-17). The new
    conversation keeps the pinned preparation exchange, one message with plan/notebook and the
    handoff, the last model reply with its tool results, and a fresh screenshot (H-16).
    """

    trigger: Fraction = 0.65  # H-14
    instruction_bytes: int = 1400  # the handoff request's fixed instruction (H-15); size assumed
    handoff_bytes: int = 6000  # what the summarizing model writes (a model behaviour; varied in tests)
    handoff_min_bytes: int = 40  # H-15
    handoff_max_bytes: int = 12_000  # H-15
    tool_call_rate: float = 0.0  # chance the model calls a tool instead of writing (H-15 retry)
    state_bytes: int = 1500  # plan + notebook: seen again only after compaction (H-10, H-16)
    bytes_per_token: float = 2.5  # the estimator's rate, for the instruction and handoff (H-12)
    margin: Tokens = 0  # how close to the budget "too close" is (H-14); 0 = only the budget itself
    max_retries: int = 5  # transient errors of the summary request (H-17)
    fresh_observation: bool = True  # H-16 ends with a fresh screenshot

    def rules(self) -> CompactionRules:
        return CompactionRules(trigger=self.trigger)

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        if estimate >= self.trigger * view.budget:
            return Summarize("threshold")
        reserve = math.ceil((self.instruction_bytes + self.handoff_max_bytes) / self.bytes_per_token)
        if estimate + reserve >= view.budget - self.margin:
            return Summarize("near-limit")
        return None

    def summary_fits(self, view: View, estimate: int) -> bool:
        """H-15: the summary request itself must fit the budget, else go text-only at once."""
        return estimate + math.ceil(self.instruction_bytes / self.bytes_per_token) <= view.budget

    def handoff_ok(self, nbytes: int) -> bool:
        return self.handoff_min_bytes <= nbytes <= self.handoff_max_bytes

    def handoff(self, view: View, estimate: int) -> HandoffRequest:
        return HandoffRequest(
            self.instruction_bytes,
            round(self.instruction_bytes / self.bytes_per_token),
            self.handoff_bytes,
            self.summary_fits(view, estimate),
            self.tool_call_rate,
            self.handoff_min_bytes,
            self.handoff_max_bytes,
            self.state_bytes,
        )

    def rebuild_handoff(self, view: View, handoff: Message, fresh: Message | None) -> Edit:
        return self.rebuild(view, handoff, fresh)

    def rebuild(self, view: View, handoff: Message, fresh: Message | None) -> Edit:
        """H-16: pinned prep + (plan, notebook, handoff) + last reply and its results + fresh shot."""
        msgs = view.tr.messages
        tail: list[Message] = []
        last_reply = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].role == "assistant"), -1)
        if last_reply >= view.preparation_messages:
            tail.append(msgs[last_reply])
            if last_reply + 1 < len(msgs) and msgs[last_reply + 1].role == "user":
                results = msgs[last_reply + 1]
                kept = tuple(b for b in results.blocks if not b.is_image)
                if fresh is not None and self.fresh_observation:
                    kept = kept + fresh.blocks
                tail.append(Message.of("user", kept, "observation"))
        elif fresh is not None and self.fresh_observation:
            tail.append(fresh)
        return Edit(view.preparation_messages, (handoff, *tail), "compaction")
