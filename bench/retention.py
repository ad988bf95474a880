"""What a run kept of the conversation, beside what it cost (issue 29: cost is never the only axis
of a ranking), and whether its cell is degenerate.

- retention: of the conversation's tokens (every block of the trace's messages and replies, the
  system prompt and tool list left out), the share still in the final context verbatim (the same
  block, matched by content digest); the rest exists at the end only through summaries, or not at
  all; `summary_tokens` are the tokens of the summaries standing in for it in the final context;
- degenerate: the compaction trigger (the policy's threshold at the end of the run) at or below
  the static prefix (system prompt and tools): every request is over it, so the harness compacts
  on (almost) every request; a compaction on most requests is flagged by `compare` from the rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ctxbench.sim.core.content import Block
from ctxbench.sim.prepared import PreparedTrace

# A compaction on more than this share of a run's requests marks its cell degenerate (the issue's
# case: 143 compactions in 144 requests, a trigger below the 21k system prompt).
COMPACTION_SHARE_FLAG = 0.5


@dataclass(frozen=True)
class Retention:
    conversation_tokens: int  # every message block of the trace (system and tools left out)
    verbatim_tokens: int  # of those, still in the final context unchanged
    summary_tokens: int  # summary blocks in the final context

    @property
    def share(self) -> float:
        return self.verbatim_tokens / self.conversation_tokens if self.conversation_tokens else 1.0


def conversation_blocks(prep: PreparedTrace) -> Iterable[Block]:
    """The blocks of the trace's messages and replies, in order."""
    for s in prep.steps:
        if s.kind in ("message", "reply") and s.message is not None:
            yield from s.message.blocks


def retention(prep: PreparedTrace, final: Iterable[Block]) -> Retention:
    """What of `prep`'s conversation the final context (`final`, its blocks) still holds verbatim."""
    present: Counter[int] = Counter()
    summary = 0
    for b in final:
        if b.summary:
            summary += b.tokens
        elif not b.placeholder:
            present[b.digest] += 1
    total = kept = 0
    for b in conversation_blocks(prep):
        total += b.tokens
        if present[b.digest] > 0:
            present[b.digest] -= 1
            kept += b.tokens
    return Retention(total, kept, summary)


def compaction_share(compactions: float, requests: float) -> float:
    """Compactions per request of a run (or of summed runs)."""
    return compactions / requests if requests else 0.0


def flags(compactions: float, requests: float, low_trigger_runs: float) -> list[str]:
    """Why a cell is degenerate (empty when it is not): a trigger at or below the static prefix in
    some run, a compaction on most requests."""
    out = []
    if low_trigger_runs:
        out.append("trigger <= static prefix")
    share = compaction_share(compactions, requests)
    if share > COMPACTION_SHARE_FLAG:
        out.append(f"compacts on {share:.0%} of requests")
    return out
