"""Masking components of real harnesses (research/policies.md), run by the C harness model.

- `mask-tool-results`: replace old tool results by a short placeholder (observation masking,
  Anthropic `clear_tool_uses`, Gemini tool-output masking, opencode prune);
- `recent-events`: OpenHands' RecentEvents condenser (keep the head and the newest events).
Split from `policies/condensers.py` (the summarizing components), whose helpers they share.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from ctxbench.policies.condensers import events_of
from ctxbench.policies.tiers import clean_boundary, is_reply, is_user_turn, nth_last
from ctxbench.policies.view import Edit, View, rewrite_blocks, text_block
from ctxbench.sim.core.content import TOOL_RESULT, TOOL_USE, Block, Message
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.values import Tokens


# ---------------------------------------------------------------- masking
def _live_result(b: Block) -> bool:
    """A tool result that is not (yet) a placeholder."""
    return b.kind == TOOL_RESULT and not b.placeholder


@functools.cache
def _live_estimate(bytes_per_token: float, without_skills: bool) -> Callable[[Message], int]:
    """The estimated tokens of a message's live results (skills left out when asked): one function
    object per rate, so the transcript keeps one running sum of it (`Transcript.message_sums`)."""

    def estimate(m: Message) -> int:
        if not m.tool_results:
            return 0
        return sum(
            math.ceil(b.nbytes / bytes_per_token)
            for b in m.blocks
            if b.kind == TOOL_RESULT and not b.placeholder and not (without_skills and b.skill)
        )

    return estimate


@functools.cache
def _call_of(tools: tuple[str, ...]) -> Callable[[Block], bool]:
    """A call of one of `tools`: one function object per tuple of names, so the transcript keeps
    one index of those calls (`Transcript.block_index`) instead of a walk over every block."""

    def call_of(b: Block) -> bool:
        return b.kind == TOOL_USE and b.name in tools

    return call_of


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
        protect_from = len(msgs)
        if self.keep_turns:
            protect_from = nth_last(tr, self.keep_turns, is_reply)
        if self.skip_user_turns:
            protect_from = min(protect_from, nth_last(tr, self.skip_user_turns, is_user_turn))
        # The results not masked yet (masked ones stay masked), from the transcript's index of
        # them. Visited newest first, a result is protected while it is in a protected turn, among
        # the last keep_tool_uses or within protect_tokens of the newer ones: each rule holds for
        # a run of the newest results, so the protected ones are live[cut:], found from running
        # counts, and only the older ones (the ones about to be masked) are visited.
        live = tr.block_index(_live_result)
        lo = bisect_left(
            live,
            tr.msg_starts[view.preparation_messages] if view.preparation_messages < len(msgs) else len(tr),
        )
        starts = tr.msg_starts
        turns_from = starts[protect_from] if protect_from < len(msgs) else len(tr)
        kept = max(len(live) - max(lo, bisect_left(live, turns_from)), self.keep_tool_uses)
        if self.protect_tokens:
            kept = max(kept, self._within_tokens(view, lo, live))
        cut = max(lo, len(live) - kept)
        few = self.min_tokens > 1 and not self.exclude_tools  # too little to mask: known without a visit
        if few and self._estimate(view, live, lo, cut) < self.min_tokens:
            return None
        blocks = tr.blocks
        excluded: set[str] = set()  # ids of the calls of excluded tools, from the index of those calls
        if self.exclude_tools and cut > lo:
            excluded = {blocks[p].tool_id for p in tr.block_index(_call_of(self.exclude_tools))}
        cands: dict[tuple[int, int], Block] = {}
        total = 0
        for p in live[lo:cut]:
            b = blocks[p]
            if (self.exempt_skills and b.skill) or b.tool_id in excluded:
                continue
            m = bisect_right(starts, p) - 1
            cands[(m, p - starts[m])] = placeholder_result(view, b, self.placeholder)
            total += math.ceil(b.nbytes / self.bytes_per_token)
        if not cands or total < max(self.min_tokens, 1):
            return None
        return rewrite_blocks(view, cands, "trim")

    def _within_tokens(self, view: View, lo: int, live: list[int]) -> int:
        """How many of the newest live results (from live[lo] on) protect_tokens protects: those
        whose newer results add up to less than it. The message where that count ends is found
        from the running sum of live result estimates; only its own results are visited."""
        tr = view.tr
        sums = tr.message_sums(_live_estimate(self.bytes_per_token, False))
        total = sums[-1] if sums else 0
        m = bisect_right(sums, total - self.protect_tokens)  # the last message whose results on reach it
        if total < self.protect_tokens or m < view.preparation_messages:
            return len(live) - lo
        acc = total - sums[m]  # estimates of the results after message m
        end = tr.message_end(m)
        i = bisect_left(live, end)  # live[i:] are after message m: all protected
        while acc < self.protect_tokens:  # the results of message m, newest first
            i -= 1
            acc += math.ceil(tr.blocks[live[i]].nbytes / self.bytes_per_token)
        return len(live) - i

    def _estimate(self, view: View, live: list[int], lo: int, cut: int) -> int:
        """Estimated tokens of the results masking live[lo:cut] would mask (skills left out when
        exempt), from the running sum of them; only the message holding live[cut] is visited."""
        if cut <= lo:
            return 0
        tr = view.tr
        sums = tr.message_sums(_live_estimate(self.bytes_per_token, self.exempt_skills))
        first = view.preparation_messages
        before = sums[first - 1] if first > 0 else 0
        if cut >= len(live):
            return sums[-1] - before
        m = tr.message_at(live[cut])
        part = sum(
            math.ceil(tr.blocks[p].nbytes / self.bytes_per_token)
            for p in live[bisect_left(live, tr.msg_starts[m]) : cut]
            if not (self.exempt_skills and tr.blocks[p].skill)
        )
        return (sums[m - 1] if m > 0 else 0) - before + part


@register("eviction", "recent-events")
@dataclass(frozen=True)
class RecentEvents:
    """OpenHands RecentEvents: past `max_events`, keep the first `keep_first` and the newest events."""

    keep_first: int = 1
    max_events: int = 100

    def plan(self, view: View) -> Edit | None:
        """From the running count of events (no walk over the messages): the head is the first
        messages holding `keep_first` events; the tail, the longest run of newest messages with at
        most `max_events - keep_first` events, then moved to a clean turn boundary."""
        msgs = view.tr.messages
        sums = view.tr.message_sums(events_of)  # sums[m]: events of messages [0, m]
        if not msgs or sums[-1] <= self.max_events:
            return None
        head = min(bisect_left(sums, self.keep_first) + 1, len(msgs)) if self.keep_first > 0 else 0
        allowed = self.max_events - self.keep_first
        need = sums[-1] - allowed  # events messages [0, k) must hold at least
        k = len(msgs) if allowed < 0 else max(head, bisect_left(sums, need) + 1 if need > 0 else 0)
        k = clean_boundary(msgs, k, head)
        while k < len(msgs) and msgs[k].has_tool_result:
            k += 1
        if k <= head:
            return None
        return Edit(head, tuple(msgs[k:]), "trim", k - head, kept=len(msgs) - k)
