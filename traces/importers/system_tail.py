"""The system prompt's tail per CLI process, found in the bill (traces/importers/sizing.py uses it).

Why: Claude Code sends its system prompt as two marked blocks after the (unmarked) tools: a short
identity line, then the rest, which ends with the git status the process read when it started
(cli.js 2.0.5: `L2B` marks each block of `iz0`, [first, rest joined]; the gitStatus context is
memoised per process and cleared only by /clear; request bodies of 2.0.5 against `ctxbench serve`:
system[0] 62 bytes, system[1] 12,562 bytes ending in "gitStatus: ..."). A CLI restarted between
two prompts (an SDK host restarting it, a resumed session) sends the same tools and identity and a
new tail. The transcript shows no restart (2.0.x lines carry no process marker); the bill does:
the first request of the new process reads exactly the end of the identity block (every request
refreshes that entry, it is always live), less than the system end earlier requests read.

Signature, on the bill alone (no session, no request number):
- S0 = the importer's S (`system_size`: the smallest read inside the first prompt);
- a restart = a request that starts a turn (a prompt other than tool results since the last
  request) and reads exactly S0, where the process before it showed a longer system end;
- a process's system end = the smallest read of its requests above S0 and below its first
  request's cached size (a read falling back to the system end: e.g. the turn after @-mentioned
  files, which are dropped at the next prompt); a process that shows none keeps the size of the one
  before (its content new).
Nothing is inferred without a restart, nor across a recorded compaction (the summary restarts the
prompt at the system end, which this does not try to place).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from ctxbench.traces.model import CompactionEvent, Event, MessageEvent, Usage


@dataclass(frozen=True)
class SystemTails:
    """The identity block's end `head` (S0) and each CLI process's system end, as (index of its
    first request among the requests with usage, system end tokens), the first at request 0."""

    head: int
    ends: tuple[tuple[int, int], ...]

    def end_at(self, request: int) -> int:
        """The system end of the process that sends request `request`."""
        end = self.ends[0][1]
        for first, tokens in self.ends:
            if first <= request:
                end = tokens
        return end


def _turn_starts(events: list[Event], real_user: Callable[[MessageEvent], bool]) -> list[bool]:
    """For each request with usage, whether a real user message came since the last request."""
    out: list[bool] = []
    seen = False
    for ev in events:
        if not isinstance(ev, MessageEvent):
            continue
        if ev.role == "user" and real_user(ev):
            seen = True
        elif ev.role == "assistant" and ev.usage is not None:
            out.append(seen)
            seen = False
    return out


def system_tails(
    events: list[Event],
    head: int,
    size: Callable[[Usage], int],
    real_user: Callable[[MessageEvent], bool],
) -> SystemTails | None:
    """The processes the bill shows (module docstring), or None when it shows no restart."""
    if head <= 0 or any(isinstance(e, CompactionEvent) for e in events):
        return None
    usages = [e.usage for e in events if isinstance(e, MessageEvent) and e.role == "assistant" and e.usage]
    starts = _turn_starts(events, real_user)
    restarts = [k for k in range(1, len(usages)) if starts[k] and usages[k].cache_read == head]
    if not restarts:
        return None
    bounds = [0, *restarts, len(usages)]
    ends: list[tuple[int, int]] = []
    for a, b in pairwise(bounds):
        first = size(usages[a])
        found = [u.cache_read for u in usages[a + 1 : b] if head < u.cache_read < first]
        if found:
            ends.append((a, min(found)))
        elif ends:
            ends.append((a, ends[-1][1]))
        else:  # the first process shows no system end above S0: S0 is its system end, no restart
            return None
    return SystemTails(head, tuple(ends))
