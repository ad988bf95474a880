"""Requests the recorded harness sends besides the conversation's own, logged only by their result
line (traces/importers/claude_code.py `meta.forked_requests`): Claude Code 2.1.x's away summary, a
forked query over the conversation so far with its mark on the last conversation message and the
ttl of its query source (5m: claude_code_wire.py `query_ttl`).

Not an outside event: the harness itself sends it, the log says when, and the wire model says what.
What it changes: the entry it reads is refreshed as it reads it (sim/providers/anthropic.py
`refresh_ttl`), and the entry it writes is the last conversation message's. Its own usage is
not logged, so it is sent but not scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbench.sim.core.names import Ttl, is_ttl
from ctxbench.sim.core.provider import Outcome, Provider, Request


def forked_requests(meta: dict[str, Any]) -> dict[int, tuple[float, Ttl]]:
    """meta.forked_requests as {index of the next request: (seconds before it, ttl)}; entries
    that are malformed are ignored (an imported trace of another version may lack them)."""
    out: dict[int, tuple[float, Ttl]] = {}
    for row in meta.get("forked_requests") or ():
        if isinstance(row, Sequence) and len(row) == 3:
            before, index, ttl = row
            if isinstance(index, int) and isinstance(before, int | float) and is_ttl(ttl):
                out[index] = (float(before), ttl)
    return out


def fork_of(req: Request, ttl: Ttl) -> Request | None:
    """The forked query as `req`'s harness sent it before `req`: the conversation up to the end of
    the message before `req`'s last one (the new user turn), marked there and at the system marks
    of `req`, every mark with `ttl`; None when nothing precedes that message."""
    tr = req.tr
    last = tr.message_at(req.n - 1) if req.n > tr.system_end else -1
    end = tr.msg_starts[last] if last >= 0 else -1
    if end <= tr.system_end:
        return None
    marks = (*tuple((b, ttl) for b, _ in req.breakpoints if b < tr.system_end), (end - 1, ttl))
    return Request(tr, end, req.model, 0, marks, "fork", req.conversation, -1)


class ForkedRequests:
    """A provider to which the replayed conversation's harness also sends its forked queries: each
    just before the request it precedes, at its recorded time."""

    def __init__(self, inner: Provider, forks: dict[int, tuple[float, Ttl]]) -> None:
        self.inner, self.forks = inner, forks
        self.name = inner.name
        self.model = inner.model

    def call(self, req: Request, now: float) -> Outcome:
        fork = self.forks.get(req.index) if req.kind not in ("warmup", "fork") else None
        if fork is not None:
            before, ttl = fork
            sent = fork_of(req, ttl)
            if sent is not None:
                self.inner.call(sent, now - before)
        return self.inner.call(req, now)

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return self.inner.diagnose(req, pos, now)
