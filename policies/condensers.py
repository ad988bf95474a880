"""Context components of real harnesses (research/policies.md), run by the C harness model.

- `threshold-summary`: one summarizing compaction with the trigger, the kept part and the summary
  request of Claude Code, Codex, Gemini CLI, opencode, OpenHands, LangChain and the Complexity
  Trap paper, each chosen by parameters in a preset (policies/presets/*.yaml cite the values);
- the masking components (`mask-tool-results`, `recent-events`) are in `policies/masking.py`;
- `none` compaction, `last-usage` estimator, `claude-code` cache marks.
It shares the summarize plan and the helpers of `policies/tiers.py`, so every preset is measured
by the same harness model and provider.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass

from ctxbench.policies.contracts import (
    Action,
    CompactionDefaults,
    CompactionRules,
    Summarize,
    SummaryPlan,
    SummaryRequest,
)
from ctxbench.policies.estimators import AnchoredEstimator
from ctxbench.policies.tiers import (
    carry_skills,
    clean_boundary,
    is_reply,
    is_summary,
    is_user_turn,
    msg_estimate,
    nth_last,
    trim_to_last,
)
from ctxbench.policies.view import Edit, View
from ctxbench.sim.core.content import TOOL_RESULT, TOOL_USE, Block, Message, digest64
from ctxbench.sim.core.names import Breakpoints, Ttl, ttl_of
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.values import Fraction, Tokens

KEEPS = (
    "none",
    "tail_tokens",
    "tail_fraction",
    "user_messages",
    "messages",
    "events",
    "turns",
    "recent_turns",
)


def events_of(m: Message) -> int:
    """OpenHands-style event count of a message: one per action, observation or text block."""
    return (len(m.blocks) - m.images) or 1


@register("compaction", "none")
@dataclass(frozen=True)
class NoCompaction(CompactionDefaults):
    """No context management: the conversation grows until the provider refuses it."""

    reactive: bool = False

    def threshold(self, view: View) -> int:
        return view.budget

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        return None

    def rules(self) -> CompactionRules:
        return CompactionRules(reactive=self.reactive)


@register("compaction", "threshold-summary")
@dataclass(frozen=True)
class ThresholdSummary(CompactionDefaults):
    """Summarize when a trigger fires; keep a tail chosen by `keep`; rebuild around the summary.

    Trigger (the first that applies), where "window" is the budget the harness plans against
    (`view.budget`: the model window or the preset's budget below it, policies/budget.py):
    `reserve_output` > 0 → window − min(max output, reserve_output) − `buffer` (Claude Code,
    opencode); `trigger` > 0 → that fraction of the window (Codex 0.9, Gemini 0.5);
    `trigger_tokens`; `trigger_events` (OpenHands: more than N events); `trigger_turns`
    (Complexity Trap: N+M turns since the last summary).
    """

    trigger: Fraction = 0.0
    reserve_output: Tokens = 0
    buffer: Tokens = 0
    trigger_tokens: Tokens = 0
    trigger_events: int = 0
    trigger_turns: int = 0
    keep: str = "none"
    keep_value: float = 0.0
    keep_first_events: int = 0
    keep_max_tokens: Tokens = 0  # cap on the kept tail (opencode preserve budget)
    keep_max_fraction: Fraction = 0.0  # > 0: the cap is this fraction of the threshold, clamped to
    keep_min_tokens: Tokens = 0  # [keep_min_tokens, keep_max_tokens] (opencode: 25 % of usable)
    bytes_per_token: float = 4.0
    image_tokens: Tokens = 2000
    summary_bytes: int = 8_000  # assumed, the same for every preset (what the model writes)
    # the tokens of what follows a compaction beyond the static prefix (the summary and what the
    # harness re-attaches), as billed; 0: the summary is counted from summary_bytes (bench/trace_knows.py)
    summary_tokens: Tokens = 0
    # the same, after each recorded compaction in order: the n-th compaction takes the n-th, a later
    # one summary_tokens (bench/trace_knows.py)
    summary_tokens_each: tuple[Tokens, ...] = ()
    instruction_bytes: int = 2_500  # assumed
    summary_input: str = "full"  # full (same prefix + instruction) | older | text (own prompt, no tools)
    summary_tools: bool = True  # Codex sends the compaction request without tools
    summary_input_max_tokens: Tokens = 0  # LangChain trim_tokens_to_summarize
    summary_tool_output_max_bytes: int = 0  # `text` input: each tool result cut to this (opencode)
    summary_system_bytes: int = 0  # the summarizer's own system prompt (Gemini CLI, opencode)
    summary_calls: int = 1  # Gemini: summary + self-verification probe
    ack_bytes: int = 0  # Gemini: model "Got it. Thanks for the additional context!"
    reattach_files: int = 0  # Claude Code: re-read recent files after compaction
    reattach_tokens: Tokens = 5_000
    reattach_budget: Tokens = 50_000
    min_older: int = 1
    exempt_skills: bool = False
    fallback_model: str = ""
    trim_fallback: bool = False
    reactive: bool = False
    backoff: bool = False
    min_reclaim: Fraction = 0.02
    regrow: Fraction = 0.05
    switch_summarize: bool = False
    tier2_keep: int = 10

    def __post_init__(self) -> None:
        if self.keep not in KEEPS:
            raise ValueError(f"keep must be one of {', '.join(KEEPS)}, got {self.keep!r}")
        if self.summary_input not in ("full", "older", "text"):
            raise ValueError("summary_input must be full, older or text")

    def est(self, m: Message) -> int:
        return msg_estimate(m, self.bytes_per_token, self.image_tokens)

    def threshold(self, view: View) -> int:
        window = view.budget
        if self.reserve_output:
            return window - min(view.max_output or self.reserve_output, self.reserve_output) - self.buffer
        if self.trigger:
            return int(self.trigger * window)
        if self.trigger_tokens:
            return self.trigger_tokens
        return view.budget

    def _last_summary(self, view: View) -> int:
        """Index of the last summary message, -1 if none (from the running count of them)."""
        sums = view.tr.message_sums(is_summary)
        return bisect_left(sums, sums[-1]) if sums and sums[-1] else -1

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        if self.trigger_events:
            sums = view.tr.message_sums(events_of)
            if sums and sums[-1] > self.trigger_events:
                return Summarize("events")
            return None
        if self.trigger_turns:
            replies = view.tr.message_sums(is_reply)
            last = self._last_summary(view)
            turns = (replies[-1] if replies else 0) - (replies[last] if last >= 0 else 0)
            return Summarize("turns") if turns >= self.trigger_turns else None
        if self.reserve_output or self.trigger or self.trigger_tokens:
            return Summarize("threshold") if estimate >= self.threshold(view) else None
        return None

    def fallback_trim(self, view: View) -> Edit | None:
        return trim_to_last(view, self.tier2_keep)

    def _head(self, view: View) -> int:
        """Messages kept in front of the summary (OpenHands keep_first events)."""
        msgs, n, ev = view.tr.messages, view.preparation_messages, 0
        while n < len(msgs) and ev < self.keep_first_events:
            ev += events_of(msgs[n])
            n += 1
        return n

    def _end(self, view: View, head: int) -> int:
        msgs, k, v = view.tr.messages, len(view.tr.messages), self.keep_value
        if self.keep == "tail_tokens":
            acc = 0
            while k > head and acc + self.est(msgs[k - 1]) <= v:
                k -= 1
                acc += self.est(msgs[k])
        elif self.keep == "tail_fraction":
            return self._gemini_split(msgs, head, v)
        elif self.keep == "messages":
            k = max(head, len(msgs) - int(v))
        elif self.keep == "events":
            acc = 0
            while k > head and acc + events_of(msgs[k - 1]) <= v:
                k -= 1
                acc += events_of(msgs[k])
        elif self.keep in ("turns", "recent_turns"):  # the last v assistant replies (and what follows them)
            seen = 0
            while k > head and seen < v:
                k -= 1
                if msgs[k].role == "assistant":
                    seen += 1
            if self.keep == "recent_turns":  # opencode: last v user turns (from the running count)
                sums = view.tr.message_sums(is_user_turn)
                users = (sums[-1] if sums else 0) - (sums[head - 1] if head > 0 else 0)
                k = nth_last(view.tr, int(v) or users, is_user_turn, head) if users >= v else head
        else:  # none, user_messages: the whole conversation is summarized
            return len(msgs)
        k = clean_boundary(msgs, min(k, len(msgs)), head)
        cap = self.keep_max_tokens
        if cap and self.keep_max_fraction:
            cap = min(cap, max(self.keep_min_tokens, int(self.threshold(view) * self.keep_max_fraction)))
        if cap:
            tail = sum(self.est(m) for m in msgs[k:])
            while k < len(msgs) and tail > cap:
                tail -= self.est(msgs[k])
                k += 1
            while k < len(msgs) and msgs[k].has_tool_result:
                k += 1
        return k

    @staticmethod
    def _gemini_split(msgs: list[Message], head: int, v: float) -> int:
        """Gemini CLI's findCompressSplitPoint(history, 1 - v) (research/policies.md §3 "clean
        split"; @google/gemini-cli 0.61.0 chatCompressionService): the first user message without
        tool results once at least (1 - v) of the characters precede it; else, when the history
        ends in a model reply without tool calls, all of it; else the last such user message
        before that point (the first message: nothing to compress, no compaction)."""
        total = sum(m.nbytes for m in msgs[head:])
        acc, last = 0, head
        for i in range(head, len(msgs)):
            m = msgs[i]
            if m.role == "user" and not m.has_tool_result:
                if acc >= (1 - v) * total:
                    return i
                last = i
            acc += m.nbytes
        end = msgs[-1] if len(msgs) > head else None
        if end is not None and end.role == "assistant" and not any(b.kind == TOOL_USE for b in end.blocks):
            return len(msgs)
        return last

    def plan(self, view: View, reason: str = "auto") -> SummaryPlan | None:
        head = self._head(view)
        end = self._end(view, head)
        msgs = view.tr.messages
        older = msgs[head:end]
        if self.keep == "none":  # an earlier summary is not summarized again
            older = [m for m in older if not is_summary(m)]
        carried: tuple[Message, ...] = ()
        if self.exempt_skills:
            older, carried = carry_skills(older)
        if len(older) < self.min_older:
            return None
        if self.keep == "user_messages":  # Codex: most recent user prompts up to keep_value tokens
            users: list[Message] = []
            acc = 0
            for m in reversed(msgs[head:]):
                if m.role == "user" and not m.tool_results and not is_summary(m):
                    acc += self.est(m)
                    if acc > self.keep_value:
                        break
                    users.append(m)
            carried = (*carried, *reversed(users))
        return SummaryPlan(head, end, tuple(older), carried, 0, reason)

    def summary_size(self, plan: SummaryPlan) -> int:
        return self.summary_bytes

    def billed_summary_tokens(self, n: int) -> int:
        """The tokens of what follows compaction `n` (from 0) when a trace's bills give them, else 0
        (the summary is then counted from `summary_bytes`)."""
        return self.summary_tokens_each[n] if n < len(self.summary_tokens_each) else self.summary_tokens

    def rules(self) -> CompactionRules:
        return CompactionRules(
            reactive=self.reactive,
            backoff=self.backoff,
            min_reclaim=self.min_reclaim,
            regrow=self.regrow,
            switch_summarize=self.switch_summarize,
            trim_fallback=self.trim_fallback,
            trigger=self.trigger,
        )

    def summary_request(self) -> SummaryRequest:
        cap = self.summary_input_max_tokens
        return SummaryRequest(
            self.instruction_bytes,
            self.summary_input,
            int(cap * self.bytes_per_token) if cap else 0,
            self.summary_tools,
            max(1, self.summary_calls),
            self.fallback_model,
            self.ack_bytes,
            self.summary_tool_output_max_bytes,
            self.summary_system_bytes,
        )

    def rebuild_summary(
        self, view: View, plan: SummaryPlan, summary: Message, extra: tuple[Message, ...] = ()
    ) -> Edit:
        return self.rebuild(view, plan, summary, extra)

    def rebuild(
        self, view: View, plan: SummaryPlan, summary: Message, extra: tuple[Message, ...] = ()
    ) -> Edit:
        tail = tuple(view.tr.messages[plan.end :])
        if self.keep == "user_messages":
            return Edit(plan.first, (*plan.carried, summary, *extra, *tail), "compaction")
        return Edit(plan.first, (summary, *extra, *plan.carried, *tail), "compaction")

    def reattach(self, view: View, plan: SummaryPlan) -> list[Block]:
        """Claude Code: the most recent distinct file reads of the summarized part, each capped."""
        if not self.reattach_files:
            return []
        reads = {b.tool_id for m in plan.older for b in m.blocks if b.kind == TOOL_USE and b.name == "Read"}
        out: list[Block] = []
        budget = self.reattach_budget
        for m in reversed(plan.older):
            for b in reversed(m.blocks):
                if b.kind == TOOL_RESULT and b.tool_id in reads and len(out) < self.reattach_files:
                    nbytes = min(b.nbytes, int(self.reattach_tokens * self.bytes_per_token))
                    if budget - nbytes / self.bytes_per_token < 0:
                        return out
                    budget -= math.ceil(nbytes / self.bytes_per_token)
                    tokens = max(1, round(b.tokens * nbytes / max(b.nbytes, 1)))
                    dig = digest64(b"reattach", b.digest.to_bytes(8, "little"), str(nbytes).encode())
                    out.append(Block("text", "user", nbytes, tokens, dig))
        return out


@register("estimator", "last-usage")
@dataclass(frozen=True)
class LastUsageEstimator(AnchoredEstimator):
    """Gemini CLI: the provider's prompt token count of the last call, nothing added
    (research/policies.md §3 `getLastPromptTokenCount`); a whole estimate before any report. Also
    Claude Code up to 2.1.1, whose auto-compaction counts the last usage's total (bench/trace_knows.py)."""

    bytes_per_token: float = 4.0  # policies.md §3: ASCII 1/4 token per char
    image_tokens: Tokens = 3000  # policies.md §3
    # Before a report (a new chat, after each compression): Gemini CLI's GeminiChat starts its count
    # at estimateTokenCountSync(history), the messages without system prompt and tools
    # (@google/gemini-cli 0.61.0 bundle, GeminiChat constructor and setHistory).
    history_only: bool = False

    def whole(self, view: View) -> int:
        if not self.history_only:
            return super().whole(view)
        tr = view.tr
        nbytes = tr.total_bytes - tr.bytes_before(tr.system_end)
        return math.ceil(nbytes / self.bytes_per_token) + tr.total_images * self.image_tokens

    def estimate(self, view: View) -> int:
        a = view.anchor
        return self.whole(view) if a is None or not a.trustworthy else a.tokens


@register("marks", "claude-code")
@dataclass(frozen=True)
class ClaudeCodeMarks:
    """Claude Code 2.1.197 as recorded: cache_control on the last two system blocks and on the
    last block of the last message, which moves each turn (research/ecosystem.md §3a).

    `skip_cache_write`: the compaction request (a transcript ending in the harness's "instruction"
    message) carries its message mark on the last block of the second-to-last API message instead
    (consecutive user messages count as one, as the API merges them): ecosystem.md §3a "cache
    breakpoint moved one block back"; Claude Code's addCacheBreakpoints `skipCacheWrite ?
    messages.length - 2 : messages.length - 1` for forked requests."""

    ttl: Ttl = "5m"
    skip_cache_write: bool = False
    # A mark on a block the imported log marked keeps the ttl recorded there (`Block.cache`), `ttl`
    # elsewhere: a session can switch between 1h and 5m entries (bench/trace_knows.py).
    recorded_ttl: bool = False

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n = len(tr)
        last = n - 1
        msgs = tr.messages
        if self.skip_cache_write and msgs and msgs[-1].tag == "instruction":
            i = len(msgs) - 1
            while i >= 0 and msgs[i].role == msgs[-1].role:
                i -= 1
            last = tr.message_end(i) - 1 if i >= 0 else -1
        pos = sorted({p for p in (tr.system_end - 2, tr.system_end - 1, last) if 0 <= p < n})
        if not self.recorded_ttl:
            return tuple((p, self.ttl) for p in pos)
        return tuple((p, ttl_of(tr.blocks[p].cache, self.ttl)) for p in pos)
