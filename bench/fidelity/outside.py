"""State outside the conversation or outside its log, taken from its bill and counted apart
(issue 11).

No model of the client can predict what the provider or other sessions of the same account did to
the cache, nor what the client sent without logging it. The replay already conditions on one such
fact: the first request's recorded read (`meta.warm_tokens`, W: a static prefix an earlier session
wrote). Three more kinds are recognised from the bill, each by one signature that names no
session, and replayed as observed events:

- server-side lookup failure at request k: the billed read is the conversation's system + tools
  prefix (`meta.system_tokens`, S, or a restarted CLI's own, fidelity_causes.py `system_at`; within
  max(1 %, 128) tokens) while the replay without it reads
  more (a longer entry was live and the log shows the prompt unchanged up to it). The bills of
  others show the same signature, intermittent and self-healing, and the API's own diagnostics
  name it `previous_message_not_found`, not a prompt change (anthropics/claude-code#87966,
  "cache_read pinned to the stable-prefix boundary"). Replayed: the read falls back to the
  system + tools prefix and the rest is re-written (sim/providers/anthropic.py
  `lookup_failure_at`; the miss cause `server_lookup_failure`);
- outside warming at request k: the billed read is the static prefix W while the replay without
  it reads less (W's entry expired after an idle gap longer than the TTL, or this rendering of it
  was never written by the conversation itself: a sibling sub-agent wrote it after its own first
  deferred tools). Replayed: the static entry, as request k renders it, written or refreshed by
  another session just before request k;
- unlogged turn content at request k: in a log that does not show attachments (Claude Code
  <= 2.0.x, fidelity_causes.py `unlogged_attachments`) on a model that strips thinking
  (providers.md §1.6), a request inside a tool loop reads exactly the turn's start (the billed
  cached part of the turn's first request) while the replay reads more: non-tool-result content
  (the IDE diagnostics Claude Code sends after an edit) stripped the turn's earlier thinking.
  Replayed: the read stops at the turn's start and the rest is re-written (sim/providers/anthropic.py
  `read_to_turn_start_at`).

`compare` (bench/fidelity/compare.py) replays without them first (the unconditioned figures), recognises
them on that replay, replays again with them, and repeats until no new one appears.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxbench.bench.fidelity.causes import system_at, unlogged_attachments
from ctxbench.bench.fidelity.results import (
    OutsideEvents,
    RequestCompare,
    near,
    tolerance,
)
from ctxbench.sim.core.content import Block
from ctxbench.sim.core.names import Ttl
from ctxbench.sim.core.provider import Outcome, Provider, Request
from ctxbench.sim.core.thinking import strips_thinking
from ctxbench.sim.core.transcript import Transcript


def recognise(requests: list[RequestCompare], meta: dict[str, Any], model: str) -> OutsideEvents:
    """The outside events a replay's requests show (module docstring: one signature per kind)."""
    warm = int(meta.get("warm_tokens", 0) or 0)
    unlogged = unlogged_attachments(meta) and strips_thinking(model)
    fails, warmed, stripped = [], [], []
    for r in requests:
        if r.index == 0:  # the first request's read is W itself (meta.warm_tokens)
            continue
        system = system_at(meta, r.index)  # a restarted CLI's own (traces/importers/system_tail.py)
        billed, pred = r.billed.cache_read, r.predicted.cache_read
        if near(billed, system) and pred > billed + tolerance(billed):
            fails.append(r.index)
        elif near(billed, warm) and pred < billed - tolerance(billed):
            warmed.append(r.index)
        elif (
            unlogged and not r.real_user and near(billed, r.turn_start) and pred > billed + tolerance(billed)
        ):
            stripped.append(r.index)
    return OutsideEvents(tuple(fails), tuple(warmed), tuple(stripped))


def static_entry(
    provider: Provider,
    tools: Sequence[Block],
    system: Sequence[Block],
    model: str,
    tokens: int,
    ttl: Ttl,
    now: float,
) -> bool:
    """Write (or read and so refresh) the entry of the static prefix an earlier session left: the
    tools and the system block whose end is at `tokens`."""
    tr = Transcript(tools, system)
    pos = next((i for i in range(tr.tools_end, len(tr)) if tr.cum_tokens[i] == tokens), -1)
    if pos < 0:
        return False
    provider.call(Request(tr, pos + 1, model, 0, ((pos, ttl),), "warmup", "warmup"), now)
    return True


class OutsideWarming:
    """A provider whose static prefix another session writes or refreshes just before the given
    requests of the replayed conversation (as each of them renders it: its tools and system). A
    fidelity replay runs one conversation, so a request index names a request whatever the
    runner calls the conversation."""

    def __init__(self, inner: Provider, at: tuple[int, ...], tokens: int, ttl: Ttl) -> None:
        self.inner, self.at, self.tokens, self.ttl = inner, frozenset(at), tokens, ttl
        self.name = inner.name
        self.model = inner.model

    def call(self, req: Request, now: float) -> Outcome:
        if req.index in self.at and req.kind not in ("warmup", "fork"):
            tr = req.tr
            tools, system = tr.blocks[: tr.tools_end], tr.blocks[tr.tools_end : tr.system_end]
            static_entry(self.inner, tools, system, req.model, self.tokens, self.ttl, now - 1.0)
        return self.inner.call(req, now)

    def diagnose(self, req: Request, pos: int, now: float) -> str:
        return self.inner.diagnose(req, pos, now)
