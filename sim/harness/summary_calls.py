"""The summarizer calls of harness C (C-11): the summary request's transcript, the call with its
retry on a fallback model, and Gemini CLI's verification probe.

A base class of `CodingConversation` (`sim/harness/coding.py`), kept in its own module so that each stays
small; `CodingConversation` supplies `count` and decides when to summarize (`_compact_now`).
"""

from __future__ import annotations

from typing import Any

from ctxbench.policies.contracts import SummaryPlan
from ctxbench.sim.core.content import TOOL_RESULT, Block, Message
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.harness.conversation import CallFailed, Conversation

SUMMARIZER_SYSTEM_BYTES = 1_500  # a separate summarizer's own system prompt (assumed size)
# Gemini CLI's verification probe: the summarizer's contents + the draft summary as a model turn +
# this user prompt (328 chars), google-gemini/gemini-cli@02b2885c
# packages/core/src/services/chatCompressionService.ts "Phase 3: The Probe Verification".
VERIFY_PROMPT_BYTES = 328


class SummaryCalls(Conversation):
    """Summarizer calls of the C harness process (see the module docstring)."""

    def count(self, key: str, n: int = 1) -> None:
        """Add `n` to the harness's event counter `key` (RunOutcome.counters)."""
        counters = self.outcome.counters
        counters[key] = counters.get(key, 0) + n

    # the last summary request without tools, and the system prompt it was made with
    _toolless: tuple[tuple[Block, ...], Transcript] | None = None

    def _without_tools(self, msgs: list[Message]) -> Transcript:
        """A new transcript of the system prompt and `msgs` (a summary request without tools),
        equal field by field to one made by appending them. Copied from the last one brought up
        to `msgs` by an edit: the messages the two share at the front (those a compaction carried
        over: Codex's recent user prompts) are not hashed again, only the rest (issue 13:
        codex-live summarizes every other turn)."""
        system = self.trace.system
        if self._toolless is None or self._toolless[0] is not system:  # first, or a system change
            self._toolless = (system, Transcript((), system))
        base = self._toolless[1]
        base.replace_from(0, msgs)
        return base.fork()

    def _summary_transcript(self, plan: SummaryPlan, instr: Block) -> Transcript:
        req = self.policy.compaction.summary_request()
        mode = req.input
        instr_msg = Message.of("user", (instr,), "instruction")
        if mode == "text":  # a separate prompt: own system, no tools, the older part as text
            sys_bytes = req.system_bytes or SUMMARIZER_SYSTEM_BYTES
            sys_block = self.factory.text("system", None, sys_bytes, key="summarizer-system")
            t = Transcript((), (sys_block,))
            cut = req.tool_output_max_bytes
            nbytes = (
                sum(
                    min(b.nbytes, cut) if b.kind == TOOL_RESULT else b.nbytes
                    for m in plan.older
                    for b in m.blocks
                    if not b.is_image
                )
                if cut
                else sum(m.nbytes for m in plan.older)
            )
            if req.input_max_bytes:
                nbytes = min(nbytes, req.input_max_bytes)
            conv = self.factory.text("user", None, nbytes, key=f"as-text-{self.name}-{self.index}")
            t.append(Message.of("user", (conv, instr), "instruction"))
            return t
        msgs = self.tr.messages
        kept = len(msgs) if mode == "full" else plan.first  # the conversation's own leading messages
        # with tools, the same prefix as the conversation's: its arrays copied, not re-hashed
        if not req.tools and req.system_bytes:  # its own system prompt (Gemini CLI's compression prompt)
            own_system = self.factory.text("system", None, req.system_bytes, key="summarizer-system")
            t = Transcript((), (own_system,))
            t.extend(msgs[:kept])
        else:
            t = self.tr.fork(kept) if req.tools else self._without_tools(msgs[:kept])
        if mode != "full":
            t.extend(plan.shown or plan.older)
        t.append(instr_msg)
        return t

    def _summarize(self, plan: SummaryPlan, est: int) -> Any:
        """The summarizer call: retried on transient errors (in `_send`), then once on the
        fallback model (C-11). Returns the summary message, or None."""
        comp = self.policy.compaction
        req = comp.summary_request()
        instr = self.factory.text("user", None, req.instruction_bytes, key="summary-instruction")
        size = comp.summary_size(plan)
        out_tokens = self.factory.counter.count_bytes(size, "prose")
        models = [self.model]
        fb = req.fallback_model
        if fb and fb != self.model:
            models.append(fb)
        current = self.model
        for i, model in enumerate(models):
            self.model = model
            t = self._summary_transcript(plan, instr)
            failed = False
            try:
                for k in range(req.calls):
                    if k:  # a verification probe continues the summarizer's own conversation
                        self._add_probe(t, size, k)
                    yield from self._send(t, "summary", est, out_tokens, forced_cause="compaction")
            except CallFailed:
                failed = True
                if i + 1 < len(models):
                    self.count("summary_fallback_model")
            finally:
                self.model = current
            if failed:
                continue
            key = f"summary-{self.name}-{self.index}"
            # a size the trace's bills give (bench/trace_knows.py) wins over one counted from bytes
            sized = getattr(comp, "billed_summary_tokens", None)
            billed = (sized(self.outcome.compactions) if sized is not None else 0) or None
            block = self.factory.text("user", None, size, key=key, tokens=billed, summary=True)
            return Message.of("user", (block,), "summary")
        return None

    def _add_probe(self, t: Transcript, size: int, k: int) -> None:
        """Gemini CLI's self-verification probe: the draft summary the previous call wrote, as a
        model turn, then the verification prompt (VERIFY_PROMPT_BYTES' source). It contains the
        summary request whole, so it reads it from the cache; the main conversation never
        continues from either (a side thread, not a static-prefix change)."""
        key = f"summary-draft-{self.name}-{self.index}-{k}"
        draft = self.factory.text("assistant", None, size, key=key)
        t.append(Message.of("assistant", (draft,), "summary-draft"))
        probe = self.factory.text("user", None, VERIFY_PROMPT_BYTES, key="summary-verify")
        t.append(Message.of("user", (probe,), "instruction"))
