"""Cline's context components (Cline 3.82.0, the task code of npm cline 2.18.0; its ContextManager and
Anthropic provider as the bundle has them), checked against real runs of Cline against `ctxbench
serve` (tests/policies/test_cline.py on tests/traces/importers/data/cline-2.18.0-*):

- `cline-truncation` (compaction): before a request, when the previous request's total (input, output,
  cache writes and reads) reached the window's allowance, Cline leaves out the oldest half of the
  messages after the first pair (a quarter kept when that total is more than twice the allowance),
  ending on a reply, and replaces the first reply's first block by a notice. Cline keeps every
  message in its history and sends the range left out; the transcript here drops it, which sends
  the same prompt: the next truncation counts from the messages left after the pair, as Cline
  counts from the end of the range. When the provider refuses a prompt as too long, Cline keeps
  a quarter and replaces the task's first block too, and sends it again. It is Cline's compaction
  (one without a summary): its edit is named so, and counted so by `run` and `fidelity --policy`.
- `cline` (marks, Anthropic): the system prompt and the last block of each of the last two user
  messages (the ledgers of the runs: `system.0`, then the two newest user messages).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxbench.policies.contracts import Action, CompactionDefaults, CompactionRules, Trim
from ctxbench.policies.view import Edit, View, text_block
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.names import Breakpoints, Ttl
from ctxbench.sim.core.registry import register
from ctxbench.traces.importers.cline_context import NOTICE  # Cline's own text, as its task folders hold it

# What Cline puts in the task's first block when it truncates after the provider refused a prompt
# as too long (Task handleContextWindowExceededError, Cline 3.82.0; the `anthropic-long` run)
CONTINUE = "[Continue assisting the user!]"


def allowance(window: int) -> int:
    """Cline's `maxAllowedSize` for a context window (context-window-utils `getContextWindowInfo`):
    the window less 27,000 tokens at 64k, 30,000 at 128k, 40,000 at 200k; else the larger of the
    window less 40,000 and 80 % of it."""
    fixed = {64_000: 27_000, 128_000: 30_000, 200_000: 40_000}
    if window in fixed:
        return window - fixed[window]
    return max(window - 40_000, int(window * 0.8))


def truncated_end(messages: list[Message], harder: bool) -> int:
    """The last message Cline leaves out (`getNextTruncationRange` from message 2; 1: none, the
    notice only): half of the messages after the first pair, or three quarters when `harder` (its
    "quarter" kept: a total over twice the allowance, or a refused prompt), in pairs, ending on a
    reply."""
    after = len(messages) - 2
    n = (after * 3 // 4) // 2 * 2 if harder else after // 4 * 2
    end = 2 + n - 1
    if 0 <= end < len(messages) and messages[end].role != "assistant":
        end -= 1
    return end


@register("compaction", "cline-truncation")
@dataclass(frozen=True)
class ClineTruncation(CompactionDefaults):
    """Cline's truncation (module docstring): before a request, at the allowance; after a refused
    prompt, a quarter kept and the task's first block replaced too, then the request sent again.
    `window` 0: the working budget (the model's window, or `--budget`: the context window an
    OpenAI-compatible model's info sets)."""

    window: int = 0
    # Cline's trigger sums the last request's tokensIn, tokensOut, cacheWrites and cacheReads; on an
    # OpenAI-compatible provider its tokensIn is the whole prompt, cache reads included, so they
    # count twice (the `truncated` run: a 13,225-token request, 10,752 of it read, truncated the
    # next one at an allowance of 16,000)
    reads_counted_twice: bool = False

    def rules(self) -> CompactionRules:
        return CompactionRules(reactive=True, trim_fallback=True)

    def threshold(self, view: View) -> int:
        return allowance(self.window or view.budget)

    def decide(self, view: View, estimate: int, mode: str | None = None) -> Action | None:
        if view.anchor is None:
            return None
        total = view.anchor.tokens + (view.anchor.cache_read if self.reads_counted_twice else 0)
        allowed = self.threshold(view)
        if total < allowed:
            return None
        edit = _truncate(view, truncated_end(view.tr.messages, total / 2 > allowed), False)
        return Trim(edit) if edit is not None else None

    def fallback_trim(self, view: View) -> Edit | None:
        """After a refused prompt (the C harness's reactive path, no summary to make)."""
        return _truncate(view, truncated_end(view.tr.messages, True), True)


def _truncate(view: View, end: int, refused: bool) -> Edit | None:
    """Messages 2..`end` left out, the first reply's first block the notice (and the task's
    `CONTINUE` after a refused prompt); None when that changes nothing."""
    msgs = view.tr.messages
    if len(msgs) < 2 or not msgs[0].blocks or not msgs[1].blocks:
        return None
    first, task = msgs[1], msgs[0]
    noted = Message.of(first.role, (text_block(view, first.blocks[0], NOTICE), *first.blocks[1:]), first.tag)
    opening: tuple[Message, ...] = (noted,)
    if refused:
        go_on = text_block(view, task.blocks[0], CONTINUE)
        opening = (Message.of(task.role, (go_on, *task.blocks[1:]), task.tag, task.pinned), noted)
    kept = msgs[max(2, end + 1) :]
    start = 2 - len(opening)
    if end < 2 and all(a.blocks == b.blocks for a, b in zip(opening, msgs[start:2], strict=True)):
        return None
    return Edit(start, (*opening, *kept), "compaction", max(0, end - 1), kept=len(kept))


@register("marks", "cline")
@dataclass(frozen=True)
class ClineMarks:
    """Cline on the Anthropic API: the system prompt and the last two user messages (module
    docstring)."""

    ttl: Ttl = "5m"

    def place(self, view: View) -> Breakpoints:
        tr = view.tr
        n = len(tr)
        marks = [tr.system_end - 1]
        for i in range(len(tr.messages) - 1, -1, -1):  # from the newest: two user messages at most
            if tr.messages[i].role == "user":
                marks.append(tr.message_end(i) - 1)
                if len(marks) == 3:
                    break
        return tuple((p, self.ttl) for p in sorted(set(marks)) if 0 <= p < n)
