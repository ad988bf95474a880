"""Masking components of real harnesses (research/policies.md), run by the C harness model.

- `mask-tool-results`: replace old tool results by a short placeholder (observation masking,
  Anthropic `clear_tool_uses`, Gemini tool-output masking, opencode prune);
- `recent-events`: OpenHands' RecentEvents condenser (keep the head and the newest events).
Split from `policies/condensers.py` (the summarizing components), whose helpers they share.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from ctxbench.policies.condensers import events_of
from ctxbench.policies.registry import register
from ctxbench.policies.tiers import clean_boundary, is_reply, is_user_turn, nth_last
from ctxbench.policies.view import Edit, View, rewrite_blocks, text_block
from ctxbench.sim.content import TOOL_RESULT, TOOL_USE, Block
from ctxbench.sim.values import Tokens


# ---------------------------------------------------------------- masking
def _live_result(b: Block) -> bool:
    """A tool result that is not (yet) a placeholder."""
    return b.kind == TOOL_RESULT and not b.placeholder




def placeholder_result(view: View, b: Block, text: str) -> Block:
    """The masked form of a tool result: a short text that keeps its tool_use id."""
    return text_block(view, b, text, kind=TOOL_RESULT, tool_id=b.tool_id)


@register("eviction", "mask-tool-results")
@dataclass(frozen=True)
class MaskToolResults:
    """Replace old tool results by a short placeholder; masked results stay masked.

    Protected (never masked): results of the last `keep_turns` assistant replies, the last
    `keep_tool_uses` results, the newest `protect_tokens` of results, the last `skip_user_turns`
    user turns, skills (`exempt_skills`) and `exclude_tools`. Masking happens only when the
    measured context reaches `trigger_tokens` (`measure` = full: the unedited history, as the
    API sees it when the client keeps full history; current: the edited transcript) and the
    masked results add up to at least max(`min_tokens`, 1).
    """

    keep_turns: int = 0
    keep_tool_uses: int = 0
    protect_tokens: Tokens = 0
    skip_user_turns: int = 0
    trigger_tokens: Tokens = 0
    measure: str = "current"
    min_tokens: Tokens = 0
    exempt_skills: bool = True
    exclude_tools: tuple[str, ...] = ()
    bytes_per_token: float = 4.0
    placeholder: str = "[Old tool result content cleared]"

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude_tools", tuple(self.exclude_tools))
        if self.measure not in ("full", "current"):
            raise ValueError("measure must be full or current")

    def plan(self, view: View) -> Edit | None:
        tr = view.tr
        if self.trigger_tokens:
            if self.measure == "full":
                size = (
                    tr.total_tokens
                    if tr.added_tokens == 0
                    else tr.tokens_before(tr.system_end) + tr.added_tokens
                )
            else:
                size = tr.total_tokens
            if size < self.trigger_tokens:
                return None
        msgs = tr.messages
        names: dict[str, str] = {}
        if self.exclude_tools:
            names = {b.tool_id: b.name for m in msgs for b in m.blocks if b.kind == TOOL_USE}
        protect_from = len(msgs)
        if self.keep_turns:
            protect_from = nth_last(tr, self.keep_turns, is_reply)
        if self.skip_user_turns:
            protect_from = min(protect_from, nth_last(tr, self.skip_user_turns, is_user_turn))
        # the results not masked yet (masked ones stay masked), from the transcript's index of
        # them: work bounded by what is protected or about to be masked, not by the prompt
        live = tr.block_index(_live_result)
        first = tr.msg_starts[view.prep_msgs] if view.prep_msgs < len(msgs) else len(tr)
        starts, blocks = tr.msg_starts, tr.blocks
        results = live[bisect_left(live, first) :]
        protected = 0
        kept_uses = 0
        if not self.protect_tokens:
            # without a token allowance, the protected results are the newest ones: those of the
            # protected turns, else the last keep_tool_uses; only the older ones are visited
            turns_from = starts[protect_from] if protect_from < len(msgs) else len(tr)
            kept_uses = max(len(results) - bisect_left(results, turns_from), self.keep_tool_uses)
            del results[max(0, len(results) - kept_uses) :]
        cands: dict[tuple[int, int], Block] = {}
        total = 0
        for p in reversed(results):
            b = blocks[p]
            m = bisect_right(starts, p) - 1
            i = p - starts[m]
            est = math.ceil(b.nbytes / self.bytes_per_token)
            if m >= protect_from or kept_uses < self.keep_tool_uses or protected < self.protect_tokens:
                kept_uses += 1
                protected += est
                continue
            if (self.exempt_skills and b.skill) or names.get(b.tool_id, "") in self.exclude_tools:
                continue
            cands[(m, i)] = placeholder_result(view, b, self.placeholder)
            total += est
        if not cands or total < max(self.min_tokens, 1):
            return None
        return rewrite_blocks(view, cands, "trim")


@register("eviction", "recent-events")
@dataclass(frozen=True)
class RecentEvents:
    """OpenHands RecentEvents: past `max_events`, keep the first `keep_first` and the newest events."""

    keep_first: int = 1
    max_events: int = 100

    def plan(self, view: View) -> Edit | None:
        msgs = view.tr.messages
        if not msgs or view.tr.message_sums(events_of)[-1] <= self.max_events:
            return None
        head, ev = 0, 0
        while head < len(msgs) and ev < self.keep_first:
            ev += events_of(msgs[head])
            head += 1
        k, acc = len(msgs), 0
        while k > head and acc + events_of(msgs[k - 1]) <= self.max_events - self.keep_first:
            k -= 1
            acc += events_of(msgs[k])
        k = clean_boundary(msgs, k, head)
        while k < len(msgs) and msgs[k].has_tool_result:
            k += 1
        if k <= head:
            return None
        return Edit(head, tuple(msgs[k:]), "trim", k - head)
