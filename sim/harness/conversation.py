"""The harness model: one simpy process per conversation, replaying a prepared trace under a policy.

Before each model reply of the trace it applies the policy (eviction edits, the estimator, the compaction
decision), then sends the request (`sim/harness/calls.py`: the policy's cache marks, the provider call with
retries, one flat record per call naming the cause of any cache miss). simpy holds time only: idle gaps
from the trace, latencies, back-off; policies never see it.
"""

from __future__ import annotations

import random
from dataclasses import replace

import simpy

from ctxbench.policies.budget import budget_for
from ctxbench.policies.contracts import Summarize, Trim
from ctxbench.policies.preset import Policy
from ctxbench.policies.view import Anchor, Edit, View
from ctxbench.sim.core.content import IMAGE, TOOL_RESULT, Block, Message
from ctxbench.sim.core.names import RequestKind
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.registry import register
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.harness.calls import CallFailed, Proc, ProviderCalls, ProviderFor, RunOutcome, wait
from ctxbench.sim.harness.handoff import fresh_observation
from ctxbench.sim.prepared import REATTACHED, PreparedTrace, Step
from ctxbench.traces.model import CompactionEvent

INTERVIEW_QUESTION_BYTES = 600  # H-29/H-30: interview and reflection prompt size (assumed: not in the seed)
INTERVIEW_ANSWER_TOKENS = 400  # H-29/H-30: their answer size (assumed: the seed gives none)


class Conversation(ProviderCalls):
    """Harness H's conversation process (SPEC H-…): the base every harness model extends."""

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
        self.env = env
        self.snapshot_at = set(snapshot_at)  # request indexes to snapshot (harnesses that do, C-2)
        self.name = name
        self.trace = trace
        self.policy = policy
        self.provider_for = provider_for
        self.factory = factory
        self.records = records
        self.rng = random.Random(seed)
        self.model = trace.model
        self.tr = Transcript(trace.tools, trace.system)
        self.outcome = RunOutcome(name)
        self.anchor: Anchor | None = None
        self.preparation_messages = 0
        self.pinned_images = 0
        self.prev_end = -1
        self.prev_cached = (-1, 0)  # (block, tokens) left cached by the previous request
        self.prev_model = ""
        self.first_after_reset = True
        self.declared: list[tuple[int, str]] = []  # (first block, cause) of edits since last send
        self.pending_edit: tuple[str, int, int] = ("", 0, 0)  # (causes, detail, tokens saved)
        self.index = 0
        self.messages_seen = 0  # the trace's messages replayed so far (what `kept_from` counts)
        self.game_t = 0.0
        self._view: View | None = None  # the conversation's View (view()); None: make it anew
        self._view_model = ""  # the model it was made for
        self._made: dict[tuple[str, str, str], Block] = {}  # View.made: blocks policies made

    # ------------------------------------------------------------ views and edits
    def view(self, tr: Transcript | None = None) -> View:
        """What the policy sees of `tr` (default: the conversation). The conversation's View is
        one object, made for the current model and brought up to date with the harness's state
        (anchor, pinned exchange, previous end) on each call, not made again per request (issue
        13): it reads the transcript live, and a component reads it only during its own call.
        A model switch (its window and budget) makes it anew."""
        tr = tr or self.tr
        if tr is not self.tr:
            return self._make_view(tr, False)
        view = self._view
        if view is None or self._view_model != self.model:
            self._view, self._view_model = (view := self._make_view(tr, True)), self.model
        else:
            view.anchor, view.preparation_messages, view.prev_end = (
                self.anchor,
                self.preparation_messages,
                self.prev_end,
            )
            view.first_after_reset, view.pinned_images = self.first_after_reset, self.pinned_images
        return view

    def _make_view(self, tr: Transcript, main: bool) -> View:
        info = self.provider_for(self.model).model
        return View(
            tr,
            self.anchor if main else None,
            budget_for(self.policy, info),  # H-11: the working budget, never above the window
            info.window,
            self.preparation_messages if main else 0,
            self.prev_end if main else -1,
            self.first_after_reset if main else True,
            self.pinned_images if main else 0,
            factory=self.factory,
            made=self._made,
        )

    def apply(self, edit: Edit) -> None:
        before = self.tr.total_tokens
        self.tr.replace_from(edit.first, edit.messages, edit.swapped, edit.kept)
        pos = self.tr.changed_from if self.tr.changed_from is not None else len(self.tr)
        self.declared.append((pos, edit.cause))
        self._name_in_next_record(edit.cause, edit.detail, max(0, before - self.tr.total_tokens))
        if edit.cause == "eviction":
            self.outcome.evictions += 1
            self.outcome.evicted_images += edit.detail

    # ------------------------------------------------------------ the process
    def run(self) -> Proc:
        last_reply_t: float | None = None
        last_t: float | None = None
        try:
            for step in self.trace.steps:
                if step.game_t is not None:
                    self.game_t = step.game_t
                if self._foreign_summariser(step):
                    self.messages_seen += 1  # counted: `kept_from` counts the trace's messages
                    results = self._results_only(step)
                    if results is not None:  # the tool results the instruction was folded into
                        self._append_input(results)
                    continue
                match step.kind:  # StepKind (sim/core/names.py): every kind has its case
                    case "message":
                        assert step.message is not None
                        self.messages_seen += 1
                        self._append_input(step.message)
                        last_t = step.t if step.t is not None else last_t
                    case "reply":
                        idle = 0.0
                        if last_reply_t is not None and last_t is not None:
                            idle = last_t - last_reply_t
                        if idle > 0 and (ev := wait(self.env, idle)) is not None:
                            yield ev
                        self.messages_seen += 1
                        yield from self._turn(step)
                        last_reply_t = step.t if step.t is not None else last_reply_t
                        last_t = last_reply_t
                    case "switch":
                        self._switch(step)
                    case "compaction":
                        self._recorded_compaction(step)
                    case "resume":
                        self._resume(step)
                    case "system":
                        self._system_change(step)
                    case "tools":
                        self._tools_change(step)
            if self.policy.reflection:  # H-30/H-21: billed with the run
                yield from self._repeat_conversation("reflection", self.policy.reflection)
            if self.policy.interview:  # H-29: billed apart
                yield from self._repeat_conversation("interview", self.policy.interview)
        except CallFailed as f:
            self.outcome.status = "error"
            self.outcome.error = f.kind
            self.outcome.message = str(f)

    def _repeat_conversation(self, kind: RequestKind, questions: int) -> Proc:
        """Requests that repeat the run's own conversation outside the main loop (so they read
        its cache, with the run's session id, H-21), each a prompt and the model's answer:
        - "interview" (H-29): the post-episode interview, billed apart from the run's totals
          (sim/summary.py keeps it in its own fields);
        - "reflection" (H-21, H-30): reflection requests; the seed lists them among the requests
          that repeat the conversation and does not set them apart from the run's usage ("every
          request, including preparation and compaction"), so they are billed with the run. When
          the host sends them the seed does not say: here at the end of the episode, before the
          interview."""
        for q in range(questions):
            ask = self.factory.text("user", None, INTERVIEW_QUESTION_BYTES, key=f"{kind}-q{q}")
            self.tr.append(Message.of("user", (ask,), kind))
            est = self.policy.estimator.estimate(self.view())
            yield from self._send(self.tr, kind, est, INTERVIEW_ANSWER_TOKENS)
            answer = self.factory.text("assistant", None, INTERVIEW_ANSWER_TOKENS * 4, key=f"{kind}-a{q}")
            self.tr.append(Message.of("assistant", (answer,), kind))

    def _resume(self, step: Step) -> None:
        """A resumed session (trace event `resume`): the restarted harness has no reported count
        to anchor on until the next reply, so its next check estimates the whole transcript (H-13
        "before any measurement"; C-4 "a fresh or resumed session"). The conversation goes out
        unchanged; the next request's record names the resume in its `edit` field (hook: harness C
        keeps its persisted savings total, C-15)."""
        self.anchor = None
        self.outcome.counters["resumes"] = self.outcome.counters.get("resumes", 0) + 1
        self._name_in_next_record("resume")

    def _system_change(self, step: Step) -> None:
        """A later `system` event (an edited memory file, C-1): the system part of every request
        from the next one on is the new one, so the prefix breaks at the first changed system
        block and the miss is put on the change ("memory_edit" or "system_change"), named in the
        next record's edit too. H never changes its system prompt (H-3); this is for traces that do."""
        assert step.message is not None
        blocks, cause = step.message.blocks, step.message.tag
        pos = self.tr.replace_system(blocks)
        if pos is None:
            return
        self.trace = replace(self.trace, system=blocks)  # what summary requests carry from now on
        self._declare_head_change(pos, cause)

    def _tools_change(self, step: Step) -> None:
        """A later `tools` event (e.g. deferred tools a tool search loaded, traces/FORMAT.md): the
        tools of every request from the next one on, declared as "tools_change" from the first
        changed tool on (a deferred tool moves no prefix by itself, sim/core/transcript.py)."""
        assert step.message is not None
        blocks = step.message.blocks
        before = self.tr.tools_end
        pos = self.tr.replace_tools(blocks)
        if pos is None:
            return
        self.trace = replace(self.trace, tools=blocks)
        cached = self.prev_cached[0]
        changed = self.tr.changed_from
        if cached >= pos and (changed is None or changed > cached):
            # deferred tools only (transcript_edits.replace_head): what the previous request left
            # cached is the same prefix, its blocks moved by the tools added or removed
            cached += self.tr.tools_end - before
            self.prev_cached = (cached, self.tr.cum_tokens[cached])
        self._declare_head_change(pos, step.message.tag)

    def _declare_head_change(self, pos: int, cause: str) -> None:
        self.declared.append((pos, cause))
        self._name_in_next_record(cause)
        self.outcome.counters[f"{cause}s"] = self.outcome.counters.get(f"{cause}s", 0) + 1

    def _name_in_next_record(self, cause: str, detail: int = 0, saved: int = 0) -> None:
        """Name `cause` in the next record's `edit` field (causes joined by '+'), adding the edit's
        detail (images evicted, pairs trimmed, ...) and the tokens it saved."""
        causes, before, total = self.pending_edit
        self.pending_edit = (f"{causes}+{cause}" if causes else cause, before + detail, total + saved)

    def _foreign_summariser(self, step: Step) -> bool:
        """A message of the recorded harness's summariser request (its instruction and reply,
        tagged "summary", e.g. Claude Code's merged from the sub-agent file) or of what it sent with
        its summary (REATTACHED) under a compaction component that does not replay recorded
        compactions: it compacts and summarises by its own rules, so these are not sent (issue 29)."""
        return (
            step.kind in ("message", "reply")
            and step.message is not None
            and step.message.tag in ("summary", REATTACHED)
            and not getattr(self.policy.compaction, "replays_recorded", False)
        )

    @staticmethod
    def _results_only(step: Step) -> Message | None:
        """The tool results (and their images) of a recorded summariser's instruction message:
        Claude Code adds its instruction to the last user message, which holds the results of the
        last reply's tool calls; a policy that sends no such request still sends those results."""
        msg = step.message
        if step.kind != "message" or msg is None or msg.tag == REATTACHED:
            return None
        keep = []
        after = False
        for b in msg.blocks:
            after = b.kind == TOOL_RESULT or (after and b.kind == IMAGE)
            if after:
                keep.append(b)
        return Message.of(msg.role, tuple(keep), "") if keep else None

    def _switch(self, step: Step) -> None:
        """A model switch (hook: harness C recalibrates its thresholds here, C-19)."""
        self.model = step.model

    def _recorded_compaction(self, step: Step) -> None:
        """A compaction the recorded harness performed (imported traces): applied only when the policy's
        compaction component replays recorded ones (`recorded(view, summary, keep)`: an Edit, cause
        "compaction"); other policies compact by their own rules, but one before any message is the
        log's starting state (a compacted session continued): its summary opens every policy's context."""
        edit = self.policy.compaction.recorded(self.view(), step.message, self._kept_count(step))
        if edit is None:
            if not self.messages_seen and step.message is not None:
                self._append_input(step.message)
            return
        self.apply(edit)
        self.outcome.compactions += 1
        self.outcome.tokens_saved += self.pending_edit[2]
        self.anchor = None
        self.first_after_reset = True
        self.prev_end = -1

    def _kept_count(self, step: Step) -> int:
        """How many of the conversation's latest messages a recorded compaction keeps."""
        ev = step.event
        kept_from = ev.kept_from if isinstance(ev, CompactionEvent) else None
        return self.messages_seen - kept_from if kept_from is not None else 0

    def _append_input(self, msg: Message) -> None:
        self.tr.append(msg)
        if msg.pinned and self.preparation_messages == len(self.tr.messages) - 1:
            self.preparation_messages += 1
            self.pinned_images += msg.images

    def _turn_kind(self) -> RequestKind:
        """The kind of an ordinary turn's request (sim/core/names.py): H's are `gameplay`."""
        return "gameplay"

    def _turn(self, step: Step) -> Proc:
        assert step.message is not None
        pinned_reply = step.message.pinned and self.preparation_messages == len(self.tr.messages)
        # the recorded summariser request (its reply tagged "summary") is a summary request
        kind: RequestKind = "preparation" if pinned_reply else self._turn_kind()
        if not pinned_reply and step.message.tag == "summary":
            kind = "summary"
        view = self.view()
        est: int | None = None
        if not pinned_reply:
            edit = self.policy.eviction.plan(view)
            if edit is not None:
                self.apply(edit)
                view = self.view()
            est = self.policy.estimator.estimate(view)
            action = self.policy.compaction.decide(view, est)
            if action is not None:
                yield from self._compact(action, est)
                view, est = self.view(), None
        if est is None:  # else nothing changed since the estimate
            est = self.policy.estimator.estimate(view)
        out = yield from self._send(self.tr, kind, est, step.output_tokens, view=view)
        self.tr.append(step.message)
        if pinned_reply:
            self.preparation_messages += 1
            self.first_after_reset = True  # H-23: the pinned exchange's end stands for the previous end
        u = out.usage
        self.anchor = Anchor(u.input_total + u.output, self.tr.added_bytes, self.tr.added_images)

    # ------------------------------------------------------------ compaction
    def _compact(self, action: Summarize | Trim, est: int) -> Proc:
        pol = self.policy.compaction
        if isinstance(action, Trim):
            self.apply(action.edit)
            return
        req = pol.handoff(self.view(), est)
        if req is None:
            raise CallFailed(
                "summary_failed", f"compaction {type(pol).__name__} writes no handoff (harness H)"
            )
        handoff_bytes = req.handoff_bytes
        ok = False
        instr = self.factory.text("user", None, req.instruction_bytes, key="handoff-instruction")
        instr_msg = Message.of("user", (instr,), "instruction")
        out_tokens = self.factory.counter.count_bytes(handoff_bytes, "prose")
        if req.fits:
            self.tr.append(instr_msg)
            try:
                yield from self._send(self.tr, "summary", est + req.instruction_estimate, out_tokens)
                ok = self.rng.random() >= req.tool_call_rate and handoff_bytes >= req.min_bytes
            except CallFailed as f:
                if f.kind != "too_long":
                    raise
            finally:
                self.tr.pop_message()
        if not ok:  # H-15: once more, the conversation as text only, no tools
            text_tr = Transcript((), self.trace.system)
            conv_bytes = self.tr.total_bytes - self.tr.bytes_before(self.tr.system_end)
            conv = self.factory.text("user", None, conv_bytes, key=f"as-text-{self.index}")
            text_tr.append(Message.of("user", (conv, instr), "instruction"))
            try:
                yield from self._send(text_tr, "summary_text", est, out_tokens, forced_cause="compaction")
            except CallFailed as f:
                raise CallFailed("summary_failed", f"handoff failed after the text-only retry: {f}") from f
        if not req.in_range():
            raise CallFailed(
                "summary_out_of_range",
                f"handoff of {handoff_bytes} bytes is outside {req.min_bytes}..{req.max_bytes} (H-17)",
            )
        # H-16: plan + notebook (state) and the handoff; H-30: in a learning-series episode also
        # the playbook's revision (as large as the playbook the episode started with: assumed)
        carried = handoff_bytes + req.state_bytes + self.trace.playbook_bytes
        handoff = self.factory.text("user", None, carried, key=f"handoff-{self.index}", summary=True)
        fresh = fresh_observation(self.tr, self.factory, self.index)
        self.apply(pol.rebuild_handoff(self.view(), Message.of("user", (handoff,), "handoff"), fresh))
        self.outcome.compactions += 1
        self.outcome.tokens_saved += self.pending_edit[2]
        self.anchor = None
        self.first_after_reset = True
        self.prev_end = -1
        after = self.policy.estimator.estimate(self.view())
        if after > pol.rules().trigger * self.view().budget:
            raise CallFailed(
                "still_over_budget", f"new conversation still at ~{after} tokens after compaction (H-17)"
            )


# After the classes, not as decorators: mypyc compiles a decorated class as a plain Python class
# (sim/core/native.py).
register("harness", "H")(Conversation)
