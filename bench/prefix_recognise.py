"""What a raw harness log shows without any declaration (bench/prefix_check.py): helper calls,
the harness's compaction requests, and the new conversation that follows one.

- helper (a `side_request`): a request without tools whose system prompt is none of the system
  prompts the session's tool-carrying requests use (title generation, topic and file-path
  classifiers, quota probes: the claude-trace log of Claude Code 1.0, traces-real FORMATS.md §2.2);
- compaction request: a request on a side branch that ends in a user message (the instruction)
  and carries the conversation -- at least as many messages as the main-line request before it
  (the chain's prefix plus an instruction, Claude Code's /compact with its swapped system prompt
  and one tool), or, without tools, at least half its message bytes (a tool-less summarizer that
  gets the conversation as text);
- the new conversation after it: a request that diverges from its parent at the first message
  (or in the system prompt, the static prefix otherwise kept) while a compaction request was sent
  since the parent. System blocks that differ then change with the conversation (e.g. a
  harness-version fingerprint) and are named in the break, as part of that reset.

A break's cost: the request's bytes from the divergence on, re-billed as uncached input or cache
writes, at 4 bytes per token (research/ecosystem.md §1.3: bytes/4 is within 4 % of o200k on its
corpus).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ctxbench.bench.request_log import LBlock, LoggedRequest

BYTES_PER_TOKEN = 4  # research/ecosystem.md §1.3 (bytes/4 = 1.037 x o200k)


def _system_key(r: LoggedRequest) -> tuple[bytes, ...]:
    return tuple(b.payload for b in r.blocks if b.segment == "system")


def _has_tools(r: LoggedRequest) -> bool:
    return any(b.segment == "tools" for b in r.blocks)


def _message_bytes(r: LoggedRequest) -> int:
    return sum(len(b.payload) for b in r.blocks if b.segment == "messages")


@dataclass
class Recognised:
    helpers: set[int] = field(default_factory=set)
    compactions: list[tuple[str | None, int]] = field(default_factory=list)  # (session, request)

    def compaction_between(self, session: str | None, p: int, i: int) -> int | None:
        """The latest compaction request of `session` sent after request p and before request i."""
        found = [c for s, c in self.compactions if s == session and p < c < i]
        return found[-1] if found else None


def helpers(reqs: list[LoggedRequest]) -> set[int]:
    systems: dict[str | None, set[tuple[bytes, ...]]] = defaultdict(set)
    for r in reqs:
        if _has_tools(r):
            systems[r.session].add(_system_key(r))
    return {
        i
        for i, r in enumerate(reqs)
        if not _has_tools(r) and systems.get(r.session) and _system_key(r) not in systems[r.session]
    }


def recognise(
    reqs: list[LoggedRequest], found: list[tuple[int, int, int]], main: set[int], helper: set[int]
) -> Recognised:
    """Helpers and compaction requests of a log (module docstring), from its breaks `found`."""
    out = Recognised(helpers=set(helper))
    for i, p, _k in found:
        r, par = reqs[i], reqs[p]
        if i in main or not r.blocks or r.blocks[-1].role != "user" or r.n_messages < 1:
            continue
        carries = r.n_messages >= max(2, par.n_messages) or (
            not _has_tools(r) and _message_bytes(r) * 2 >= _message_bytes(par) > 0
        )
        if carries:
            out.compactions.append((r.session, i))
            out.helpers.discard(i)
    return out


def changed_system_fields(r: LoggedRequest, par: LoggedRequest) -> list[str]:
    """The system blocks that differ between a new conversation and its parent, by index."""
    a = [b for b in par.blocks if b.segment == "system"]
    b = [x for x in r.blocks if x.segment == "system"]
    out = []
    for k in range(max(len(a), len(b))):
        pa = a[k].payload if k < len(a) else b""
        pb = b[k].payload if k < len(b) else b""
        if pa != pb:
            out.append(f"system block {k}")
    return out


def break_tokens(r: LoggedRequest, k: int) -> int:
    """Tokens re-billed by a break at block k of request r (module docstring)."""
    rest: list[LBlock] = r.blocks[k:]
    return sum(len(b.payload) for b in rest) // BYTES_PER_TOKEN
