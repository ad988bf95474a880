"""How a conversation calls its provider and records each call: the request with the policy's
cache marks, retries of transient errors with back-off (H-17), one flat record per call, and the
cause of every cache miss (DESIGN.md: every miss has a cause).

The base of the harness processes (`sim/harness/conversation.py`): they decide what to send; this module sends
it and keeps what the next request's miss diagnosis needs (the previous request's cached prefix,
the edits declared since).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import simpy

from ctxbench.sim.core.names import RequestKind
from ctxbench.sim.core.provider import Outcome, Provider, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.transcript import Transcript

if TYPE_CHECKING:
    from ctxbench.policies.preset import Policy
    from ctxbench.policies.view import View

ProviderFor = Callable[[str], Provider]
Proc = Generator[simpy.Event, Any, Any]


def wait(env: simpy.Environment, delay: float) -> simpy.Event | None:
    """A timeout of `delay` seconds to yield, or None when the clock was advanced at once: with
    no other event scheduled (this conversation runs alone), the timeout would be the next event
    anyway, so moving the clock gives the same times and order without the event queue.

    Why simpy's private `_queue` and `_now`: simpy has no public way to move the clock without an
    event (`Environment.run(until=...)` schedules one and runs the loop), and `peek()`, the public
    form of the check, costs a call per request on the hot path; a timeout per request and retry
    is most of the run time of a lone conversation. Both attributes are read and written here
    only (simpy 4's `Environment` keeps them under these names since 3.0)."""
    if env._queue or delay < 0:  # others to interleave with (or simpy's own error for < 0)
        return env.timeout(delay)
    env._now += delay
    return None


@dataclass
class RunOutcome:
    """How a conversation ended: `ok`, or the failure that ended it (H-17)."""

    conversation: str
    status: str = "ok"
    error: str = ""
    message: str = ""
    compactions: int = 0
    evictions: int = 0
    evicted_images: int = 0
    tokens_saved: int = 0
    counters: dict[str, int] = field(default_factory=dict)  # harness-specific events (C: passes, recoveries)


class CallFailed(Exception):
    """A failure that ends the run; `kind` is why (RunOutcome.error). The failed calls behind it
    are in the records (their `error`), counted once each by sim/summary.py."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ProviderCalls:
    """Provider calls and their records, for a conversation process (see the module docstring)."""

    # set by the conversation (sim/harness/conversation.py Conversation)
    env: simpy.Environment
    name: str
    policy: Policy
    provider_for: ProviderFor
    records: list[RequestRecord]
    model: str
    tr: Transcript
    outcome: RunOutcome
    prev_end: int
    prev_cached: tuple[int, int]
    prev_model: str
    first_after_reset: bool
    declared: list[tuple[int, str]]
    pending_edit: tuple[str, int, int]
    index: int
    game_t: float

    def view(self, tr: Transcript | None = None) -> View:
        """The policies' view of `tr` (the conversation's transcript by default): Conversation's."""
        raise NotImplementedError

    def _send(
        self,
        tr: Transcript,
        kind: RequestKind,
        est: int,
        output: int,
        forced_cause: str = "",
        view: View | None = None,
    ) -> Proc:
        """Call the provider, retrying transient errors with back-off (H-17); record every call.
        `view` is the caller's current view of `tr`, if it has one."""
        attempt = 0
        main = tr is self.tr
        while True:
            provider = self.provider_for(self.model)
            if view is None or attempt:
                view = self.view(tr)
            marks = self.policy.marks.place(view)
            req = Request(
                tr,
                len(tr),
                self.model,
                output,
                marks,
                kind,
                self.name,
                self.index,
                cache_key=self.name if self.policy.cache_key else None,
                session_id=self.name if self.policy.session_id else None,
            )
            now = float(self.env.now)  # simpy starts its clock at int 0; a record's time is seconds
            found = self._entry_state(req, provider, now) if main else ""
            out = provider.call(req, now)
            cause, lost = "", 0
            if out.error is None or out.error.billed:
                cause, lost = self._miss(out.usage.cache_read, req, found, forced_cause, provider, now)
            self._record(req, kind, out, est, attempt, now, cause, lost, main)
            self.index += 1
            if (ev := wait(self.env, out.duration)) is not None:
                yield ev
            err = out.error
            if err is None:
                if main:
                    self._sent(out)
                return out
            if not err.transient:
                raise CallFailed(err.kind, err.message)
            if attempt >= self.policy.retries:
                raise CallFailed(
                    "retries_exhausted", f"{err.kind} after {attempt + 1} attempts: {err.message}"
                )
            delay = err.retry_after if err.retry_after is not None else self.policy.backoff * (2**attempt)
            if (ev := wait(self.env, delay)) is not None:
                yield ev
            attempt += 1

    def _sent(self, out: Outcome) -> None:
        tr = self.tr
        self.prev_end = len(tr) - 1
        self.prev_cached = (out.cached_pos, tr.cum_tokens[out.cached_pos] if out.cached_pos >= 0 else 0)
        self.prev_model = self.model
        self.first_after_reset = False
        self.declared.clear()
        self.pending_edit = ("", 0, 0)
        tr.mark_sent()

    def _record(
        self,
        req: Request,
        kind: RequestKind,
        out: Outcome,
        est: int,
        attempt: int,
        now: float,
        cause: str,
        lost: int,
        main: bool,
    ) -> None:
        """One flat record of the call, with its miss `cause` and the `lost` tokens."""
        u = out.usage
        edit, detail, saved = self.pending_edit if main else ("", 0, 0)
        self.records.append(
            RequestRecord(
                self.name,
                self.index,
                kind,
                attempt,
                now,
                self.game_t,
                req.model,
                req.input_tokens,
                est,
                u.uncached,
                u.cache_read,
                u.cache_write_5m,
                u.cache_write_1h,
                u.output,
                out.cost,
                out.ttft,
                out.duration,
                out.error.kind if out.error else "",
                out.error.status if out.error else 200,
                cause,
                lost,
                edit,
                detail,
                saved,
                len(req.breakpoints),
                req.images,
                out.route,
            )
        )
        self._recorded(req, out)

    def _recorded(self, req: Request, out: Outcome) -> None:
        """What a harness does once a call is recorded (the C harness: snapshots, C-4 trust)."""

    def _entry_state(self, req: Request, provider: Provider, now: float) -> str:
        """Before the call: what the provider holds for the previous request's cached prefix, if
        this request still starts with it (the call itself may rewrite that entry)."""
        pos = self.prev_cached[0]
        changed = self.tr.changed_from
        if pos < 0 or pos >= req.n or (changed is not None and changed <= pos):
            return ""
        return provider.diagnose(req, pos, now)

    def _miss(
        self, read: int, req: Request, found: str, forced: str, provider: Provider, now: float
    ) -> tuple[str, int]:
        """Name why tokens the previous request left cached were not read (DESIGN.md: every miss
        has a cause): an edit declared before this call, else the provider's own diagnosis
        (`found`, asked before the call; asked again after it only for a miss it calls
        lookback_exceeded: this very lookup may have lost the entry)."""
        total = req.input_tokens
        if forced:
            return (forced, total - read) if read < total else ("", 0)
        pos, cached = self.prev_cached
        if pos < 0:
            no_success_yet = self.prev_model == ""
            return ("first_request", total - read) if no_success_yet else ("", 0)
        potential = min(cached, total)
        if read >= potential:
            return "", 0
        lost = potential - read
        if self.model != self.prev_model:
            return "model_switch", lost
        changed = self.tr.changed_from
        if changed is not None and changed <= pos:
            first = min(self.declared, default=(changed, "prefix_change"))
            return (first[1] if first[0] <= pos else "prefix_change"), lost
        if found == "lookback_exceeded":  # the entry was live: did this very lookup lose it?
            after = provider.diagnose(req, pos, now)
            if after in ("evicted", "server_lookup_failure"):
                found = after  # best-effort eviction, or a server-side lookup failure
        return found or "prefix_change", lost
