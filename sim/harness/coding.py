"""Harness C, the coding-agent CLI (SPEC C-1..C-19), as a subclass of the H conversation process.

What changes against H: the budget is the current model's window, re-read on every check (C-1,
C-19); the compaction tiers are checked before every model call (C-5, C-6) with the compact mode
read live (C-17); a summary that cannot be produced falls back to a second model, then to a
tier-2 trim (C-11); unproductive passes back off (C-12); "prompt too long" is recovered by
compacting on the spot and retrying once (C-18); a switch to a strictly smaller window above 90 %
of it summarizes before the next request (C-19); manual compaction (C-16) and every compaction's
savings with the running total (C-15) are logged. The same process runs the presets of the other
real harnesses (policies/condensers.py): their components say which of these behaviours apply.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import simpy

from ctxbench.policies.budget import budget_for
from ctxbench.policies.contracts import Summarize, SummaryPlan, Trim
from ctxbench.policies.preset import Policy
from ctxbench.policies.recorded import TurnScopedBlocks
from ctxbench.policies.view import Anchor, Edit, View
from ctxbench.sim.core.catalog import ModelInfo
from ctxbench.sim.core.content import Block, Message
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.harness.conversation import CallFailed, Proc, ProviderFor
from ctxbench.sim.harness.signatures import end_active_loop
from ctxbench.sim.harness.summary_calls import SUMMARIZER_SYSTEM_BYTES, VERIFY_PROMPT_BYTES, SummaryCalls
from ctxbench.sim.prepared import PreparedTrace, Step
from ctxbench.traces.model import ResumeEvent


@dataclass(frozen=True)
class CompactionEntry:
    """One session-log entry of a compaction (C-14: points at the summary and the first kept
    message) with its savings and the running total (C-15)."""

    index: int  # the request index before which it happened
    trigger: str  # tier3 | tier1 | tier2 | manual | reactive | model_switch | trim_fallback | ...
    saved: int  # estimated tokens reclaimed (the harness's own estimate)
    total: int  # running total this session
    summary_at: int  # message index of the summary (-1 for trims)
    first_kept: int  # message index of the first kept message after it

    @property
    def notice(self) -> str:
        return f"Saved ~{self.saved:,} tokens (total ~{self.total:,} this session)"


@dataclass(frozen=True)
class Snapshot:
    """What `ctxbench context --at N` shows: the blocks of request N and the harness's numbers."""

    index: int
    kind: str
    model: str
    blocks: tuple[Block, ...]
    tools_end: int
    system_end: int
    users: int
    assistants: int
    used: int
    reported: bool  # C-2: provider-reported count available, else a local estimate
    window: int
    threshold: int
    true_input: int
    mode: str
    memory_modified: bool = False  # C-2: a memory file edited since the last request (refreshes now)


class CodingConversation(SummaryCalls):
    """The C harness process (see the module docstring)."""

    def __init__(
        self,
        env: simpy.Environment,
        name: str,
        trace: PreparedTrace,
        policy: Policy,
        provider_for: ProviderFor,
        factory: BlockFactory,
        records: list[RequestRecord],
        seed: int = 0,
        snapshot_at: tuple[int, ...] = (),
    ) -> None:
        super().__init__(env, name, trace, policy, provider_for, factory, records, seed, snapshot_at)
        comp = policy.compaction
        self.rules = comp.rules()  # what of the C process the component turns on (contracts.py)
        self.mode: str = self.rules.mode  # C-17: read live at every check
        self.windows: dict[str, int] = {}  # window overrides from the trace's switch events (C-1)
        self.backoff_until = 0  # C-12: no auto pass until the estimate reaches this
        self.saved_total = 0  # C-15
        self.log: list[CompactionEntry] = []
        self.notices: list[str] = []
        self.pending_switch: tuple[int, int] | None = None  # (old, new window), C-19
        self.pending_manual = False  # C-16
        self.fail_streak = 0  # C-4: repeated failures make the reported count untrustworthy
        self.snapshots: dict[int, Snapshot] = {}
        self.memory_modified = False  # C-2: an edited memory file the next request refreshes
        self.counters = self.outcome.counters
        self.turn_scoped = TurnScopedBlocks()  # a trace's `turn` blocks (policies/recorded.py)

    # ------------------------------------------------------------ window and views (C-1, C-19)
    def model_info(self, model: str | None = None) -> ModelInfo:
        """The model's profile, with the window a switch event of the trace gave it (C-1)."""
        m = model or self.model
        info = self.provider_for(m).model
        override = self.windows.get(m)
        return replace(info, window=override) if override else info

    def window(self, model: str | None = None) -> int:
        return self.model_info(model).window

    def budget(self, model: str | None = None) -> int:
        """What the tiers' thresholds are fractions of (C-1, C-19): the current model's window,
        or the preset's budget below it (policies/budget.py, one computation for every harness)."""
        return budget_for(self.policy, self.model_info(model))

    def _make_view(self, tr: Transcript, main: bool) -> View:
        info = self.model_info()
        return View(
            tr, self.anchor if main else None, budget_for(self.policy, info), info.window,
            self.preparation_messages if main else 0, self.prev_end if main else -1,
            self.first_after_reset if main else True, self.pinned_images if main else 0,
            self.provider_for(self.model).model.max_output, self.factory, self._made,
        )  # fmt: skip

    def estimate(self) -> int:
        return int(self.policy.estimator.estimate(self.view()))

    def whole(self) -> int:
        est = self.policy.estimator
        return int(est.whole(self.view()))

    def set_mode(self, mode: str) -> None:
        """C-17: `compact-mode` is read live; a mid-session switch applies from the next check."""
        self.mode = mode

    # ------------------------------------------------------------ steps
    def _switch(self, step: Step) -> None:
        """C-19: thresholds follow the new window; a strictly smaller one is checked before the
        next request (a larger one touches nothing)."""
        old = self.budget()
        self.model = step.model
        if step.window:
            self.windows[step.model] = step.window
            self._view = None  # the window a View holds changed with the model's (C-1)
        new = self.budget()
        if new < old:
            self.pending_switch = (old, new)
        self.count("model_switches")

    def _resume(self, step: Step) -> None:
        """C-4: no trustworthy reported count after a resume (the whole pending transcript is
        estimated); C-15: the savings total is persisted in the session's metadata, so it keeps
        counting from where it left off (from the event's `saved_total` when the trace gives it).
        In-memory state is gone with the old process (the seed says only the totals persist): the
        failure streak (C-4) and a back-off's wait (C-12) start afresh."""
        super()._resume(step)
        ev = step.event
        if isinstance(ev, ResumeEvent) and ev.saved_total is not None:
            self.saved_total = ev.saved_total
        self.fail_streak = 0
        self.backoff_until = 0

    def _system_change(self, step: Step) -> None:
        """C-1, C-2: an edited memory file is in the next request (its prefix breaks there); until
        that request is sent the context view flags the Memory row as modified."""
        super()._system_change(step)
        if step.message is not None and step.message.tag == "memory_edit":
            self.memory_modified = True

    def _recorded_compaction(self, step: Step) -> None:
        ev = step.event
        if getattr(ev, "trigger", "") == "manual":  # a trace event (CompactionEvent), not a component
            self.pending_manual = True  # C-16: runs before the next request
        else:
            super()._recorded_compaction(step)

    def _append_input(self, msg: Message) -> None:
        if self.policy.thought_signatures and msg.role == "user" and not msg.has_tool_result:
            edit = end_active_loop(self.tr, self.preparation_messages)
            if edit is not None:
                self.apply(edit)
        edit = self.turn_scoped.edit_before(self.tr.messages, self.preparation_messages, msg)
        if edit is not None:
            self.apply(edit)
        super()._append_input(msg)
        self.turn_scoped.appended(msg)

    def _turn(self, step: Step) -> Proc:
        assert step.message is not None
        est = yield from self._before_call()
        if est is None:
            est = self.estimate()
        try:
            out = yield from self._send(self.tr, "turn", est, step.output_tokens)
        except CallFailed as f:
            if f.kind != "too_long" or not self.rules.reactive:
                raise
            # C-18: classify, compact on the spot, retry once; only a second failure surfaces
            self.count("too_long_caught")
            yield from self._compact_now("reactive", est)
            try:
                out = yield from self._send(self.tr, "turn", self.estimate(), step.output_tokens)
            except CallFailed as f2:
                if f2.kind == "too_long":
                    self.count("too_long_surfaced")
                raise
            self.count("too_long_recovered")
        self.tr.append(step.message)
        u, tr = out.usage, self.tr
        self.anchor = Anchor(
            u.input_total + u.output, tr.added_bytes, tr.added_images, u.input_total > 0, u.cache_read
        )

    def _before_call(self) -> Proc:
        """Everything checked before a model call: manual compaction (C-16), a model switch
        (C-19), eviction/masking edits, then the tiers (C-5, C-6) unless backing off (C-12).
        Returns the estimate when nothing changed after it was made, else None."""
        comp = self.policy.compaction
        if self.pending_manual:
            self.pending_manual = False
            yield from self.manual_compact()
        if self.pending_switch is not None:
            _old, new = self.pending_switch
            self.pending_switch = None
            if self.rules.switch_summarize and self.estimate() > self.rules.tier3 * new:
                self.count("switch_summaries")
                yield from self._compact_now("model_switch", self.estimate())
        edit = self.policy.eviction.plan(self.view())
        if edit is not None:
            self._apply_trim(edit, "masking")
        est = self.estimate()
        if self.rules.backoff and est < self.backoff_until:
            if comp.acts(self.view(), est, self.mode):
                self.count("backoff_skips")
            return est
        action = comp.decide(self.view(), est, self.mode)
        if isinstance(action, Trim):
            tier = "tier2" if est >= self.rules.tier2 * self.budget() else "tier1"
            self._apply_trim(action.edit, tier, est)
        elif isinstance(action, Summarize):
            yield from self._compact_now(action.reason, est)
        else:
            return est
        return None

    # ------------------------------------------------------------ compaction
    def _apply_trim(self, edit: Edit, trigger: str, est: int | None = None) -> None:
        """Apply a trim or masking edit. A tier's pass is counted and its savings logged (C-12:
        an unproductive one backs off); masking is no pass, so nothing is measured for it."""
        self.outcome.compactions += edit.cause == "compaction"  # one without a summary (Cline's)
        if trigger == "masking":
            self.apply(edit)
            self.anchor = None  # C-4: the last report no longer describes the transcript
            return
        before = self.whole()
        self.apply(edit)
        self.anchor = None
        saved = max(0, before - self.whole())
        self.count("passes")
        self._record_savings(trigger, saved, -1, edit.first)
        self._maybe_back_off(saved)

    def _record_savings(self, trigger: str, saved: int, summary_at: int, first_kept: int) -> None:
        self.saved_total += saved
        entry = CompactionEntry(self.index, trigger, saved, self.saved_total, summary_at, first_kept)
        self.log.append(entry)
        self.notices.append(entry.notice)

    def _maybe_back_off(self, saved: int) -> None:
        """C-12: a pass that reclaims almost nothing waits for the conversation to grow."""
        w = self.budget()
        if saved < self.rules.min_reclaim * w:
            self.count("unproductive_passes")
            if self.rules.backoff:
                self.backoff_until = self.whole() + int(self.rules.regrow * w)

    def manual_compact(self) -> Proc:
        """C-16: tier 3 at once; nothing worth compacting says so; a failure changes nothing."""
        self.count("manual")
        plan = self.policy.compaction.plan(self.view(), "manual")
        if plan is None:
            self.notices.append("Conversation is already compact.")
            self.count("manual_noop")
            return
        yield from self._compact_now("manual", self.estimate(), plan)

    def _compact_now(self, reason: str, est: int, plan: SummaryPlan | None = None) -> Proc:
        comp = self.policy.compaction
        if plan is None:
            plan = comp.plan(self.view(), reason)
        if plan is None:
            self.count("nothing_to_summarize")  # C-11: fewer than 5 older messages
            if reason == "reactive" and self.rules.trim_fallback:
                # C-18 must free room now; with nothing to summarize, C-11's tier-2 trim is the
                # only fail-open edit left (an interpretation: the seed names no other path).
                trim = comp.fallback_trim(self.view())
                if trim is not None:
                    self.count("trim_fallbacks")
                    self._apply_trim(trim, "trim_fallback")
            elif reason not in ("manual", "model_switch"):
                self._maybe_back_off(0)
            return
        self.count("passes")
        before, true_before = self.whole(), self.tr.total_tokens
        summary = yield from self._summarize(plan, est)
        if summary is None:  # C-11: no summary; C-12: an outage is retried on the next turn
            self.count("summary_failed")
            trim = comp.fallback_trim(self.view()) if self.rules.trim_fallback else None
            if trim is not None and reason != "manual":
                self.count("trim_fallbacks")
                self.apply(trim)
                self.anchor = None
                self._record_savings("trim_fallback", max(0, before - self.whole()), -1, trim.first)
            elif reason == "manual":
                self.notices.append("Compaction failed; the conversation is unchanged.")
            return
        extra: tuple[Message, ...] = ()
        ack = comp.summary_request().ack_bytes
        if ack:  # Gemini: the model's acknowledgement after the snapshot
            extra = (Message.of("assistant", (self.factory.text("assistant", None, ack, key="ack"),), "ack"),)
        blocks = comp.reattach(self.view(), plan)
        if blocks:
            extra = (*extra, Message.of("user", tuple(blocks), "reattach"))
        edit = comp.rebuild_summary(self.view(), plan, summary, extra)
        self.apply(edit)
        self.outcome.compactions += 1
        self.outcome.tokens_saved += max(0, true_before - self.tr.total_tokens)
        self.anchor = None
        self.first_after_reset = True
        self.prev_end = -1
        saved = max(0, before - self.whole())
        at = next((i for i, m in enumerate(self.tr.messages) if m is summary), -1)
        self._record_savings(reason, saved, at, at + 1)
        if reason not in ("reactive", "manual", "model_switch"):
            self._maybe_back_off(saved)

    # ------------------------------------------------------------ records (C-4 trust, C-2 snapshots)
    def _recorded(self, req: Request, out: Outcome) -> None:
        """Snapshot request N for `ctxbench context` (C-2); repeated main failures make the
        reported count untrustworthy (C-4)."""
        if self.index in self.snapshot_at:
            self.snapshots[self.index] = self._snapshot(req)
        if req.tr is self.tr:
            if out.error is None:
                self.memory_modified = False  # C-2: refreshed by this request
                self.fail_streak = 0
            else:
                self.fail_streak += 1
                if self.fail_streak >= 2 and self.anchor is not None:  # C-4: requests keep failing
                    self.anchor = replace(self.anchor, trustworthy=False)

    def _snapshot(self, req: Request) -> Snapshot:
        tr = req.tr
        main = tr is self.tr
        comp = self.policy.compaction
        thr = comp.threshold(self.view())
        used = self.estimate() if main else int(self.policy.estimator.whole(self.view(tr)))
        trusted = main and self.anchor is not None and self.anchor.trustworthy
        return Snapshot(
            self.index,
            req.kind,
            req.model,
            tuple(tr.blocks[: req.n]),
            tr.tools_end,
            tr.system_end,
            sum(1 for m in tr.messages if m.role == "user"),
            sum(1 for m in tr.messages if m.role == "assistant"),
            used,
            trusted,
            self.budget(),
            thr,
            req.input_tokens,
            self.mode,
            main and self.memory_modified,
        )


__all__ = [
    "SUMMARIZER_SYSTEM_BYTES",
    "VERIFY_PROMPT_BYTES",
    "CodingConversation",
    "CompactionEntry",
    "Snapshot",
    "SummaryCalls",
]


# After the classes, not as decorators: mypyc compiles a decorated class as a plain Python class
# (sim/core/native.py).
register("harness", "C")(CodingConversation)
