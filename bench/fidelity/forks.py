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
from dataclasses import replace
from typing import Any

from ctxbench.sim.core.names import Ttl, is_ttl
from ctxbench.sim.core.provider import Outcome, Provider, Request
from ctxbench.traces.model import Trace


def forked_requests(meta: dict[str, Any]) -> dict[int, list[tuple[float, Ttl]]]:
    """meta.forked_requests as {index of the next request: [(seconds before it, ttl)], the
    earliest first}; entries that are malformed are ignored (an imported trace of another version
    may lack them)."""
    out: dict[int, list[tuple[float, Ttl]]] = {}
    for row in meta.get("forked_requests") or ():
        if isinstance(row, Sequence) and len(row) == 3:
            before, index, ttl = row
            if isinstance(index, int) and isinstance(before, int | float) and is_ttl(ttl):
                out.setdefault(index, []).append((float(before), ttl))
    return {i: sorted(f, key=lambda x: -x[0]) for i, f in out.items()}


def with_prompt_suggestions(trace: Trace) -> Trace:
    """`trace` with the prompt suggestions its harness could have sent (`meta.suggestion_forks`,
    traces/importers/claude_code_wire.py) among its forked requests: what the replay predicts for
    an account that has them on (bench/claude_code_wire.md §6; no log line says whether it did),
    each sent when its turn ended, before any logged fork of the same gap, and the assumption
    recorded (`suggestions_assumption`). Their marks take the conversation's recorded ttl, not the
    5m of a query source outside the 1h allowlist: on the development part turn starts read the
    response after idle gaps of 5 minutes or more 61 times (JamesTiberiusKirk 2.1.145/2.1.150),
    which a 5m entry would not allow. A conversation that could send none (a sub-agent, a Claude
    Code before 2.0.67) is returned as it is."""
    meta = trace.header.meta
    if "suggestion_forks" not in meta:
        return trace
    ttl = meta.get("ttl")
    sent = [
        [r[0], r[1], ttl if is_ttl(ttl) else r[2]]
        for r in meta["suggestion_forks"] or ()
        if isinstance(r, Sequence) and len(r) == 3
    ]
    said = f"prompt suggestions on: {len(sent)} forked queries sent as turns ended (logged nowhere)"
    rows = list(meta.get("forked_requests") or ()) + sent
    header = replace(trace.header, meta={**meta, "forked_requests": rows, "suggestions_assumption": said})
    return replace(trace, header=header)


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

    def __init__(self, inner: Provider, forks: dict[int, list[tuple[float, Ttl]]]) -> None:
        self.inner, self.forks = inner, forks
        self.name = inner.name
        self.model = inner.model

    def call(self, req: Request, now: float) -> Outcome:
        forks = self.forks.get(req.index, []) if req.kind not in ("warmup", "fork") else []
        for before, ttl in forks:
            sent = fork_of(req, ttl)
            if sent is not None:
                self.inner.call(sent, now - before)
        return self.inner.call(req, now)

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return self.inner.diagnose(req, pos, now)
