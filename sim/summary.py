"""Run-level results computed from records afterwards (never inside the simulation loop).

What the error counts mean (the same in `run`, `compare`, `sweep`, the report and every JSON):
- `failures[kind]`: failed provider requests of the run, each counted once under the error kind
  the provider answered (`overloaded`, `rate_limit`, `too_long`, ...), whether the harness then
  retried it, recovered from it or stopped; `failed_requests` is their sum.
- `status`: `ok`, or `error: <why the run ended>`: a provider error kind that is not retried
  (`too_long`), `retries_exhausted` (a transient error still failing after the preset's
  `retries`; the failed attempts are in `failures` under their own kind), or a reason of the
  harness's own (`HARNESS_ENDINGS`: `summary_failed`, `summary_out_of_range`, `still_over_budget`).
  A run is one trace under one policy and seed: "runs ended by error" in `compare`, `sweep` and
  the report counts such runs (never a mean over seeds).
- `run_ending_requests`: the failed requests that ended a conversation (the last request of a
  conversation that stopped early); the rest of `failed_requests` were retried or recovered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.harness.conversation import RunOutcome

# Why the harness itself ends a run (sim/harness: `_Failed(...)`; a test keeps this list complete):
# the summary request failed or wrote nothing, its handoff fell outside the preset's size range
# (H-17), or the new conversation was still over the trigger after compaction (H-17).
HARNESS_ENDINGS = ("retries_exhausted", "summary_failed", "summary_out_of_range", "still_over_budget")


@dataclass
class Summary:
    requests: int = 0
    failed_requests: int = 0
    true_input: int = 0
    uncached: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cost: float = 0.0
    cache_read_share: float = 0.0
    compactions: int = 0
    tokens_saved: int = 0
    evictions: int = 0
    evicted_images: int = 0
    misses: dict[str, int] = field(default_factory=dict)
    miss_tokens: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)  # failed requests by error kind
    run_ending_requests: int = 0  # failed requests after which a conversation stopped
    estimate_error_mean: float = 0.0
    estimate_error_worst: float = 0.0
    # the request of the worst error: its index, kind, the harness's estimate and the true size
    worst_request: dict[str, Any] = field(default_factory=dict)
    tokens_lost_to_failures: int = 0
    status: str = "ok"
    ended_because: str = ""  # the message of the failure that ended the run ("" when ok)
    by_kind: dict[str, int] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)  # harness events (C passes, back-offs, ...)
    # H-29: the post-episode interview, billed apart from every total above
    interview_requests: int = 0
    interview_input: int = 0
    interview_output: int = 0
    interview_cost: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(records: Sequence[RequestRecord], outcomes: Sequence[RunOutcome] = ()) -> Summary:
    s = Summary()
    misses: Counter[str] = Counter()
    miss_tokens: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    last_error: dict[str, str] = {}  # per conversation, the error of its last request
    errs: list[float] = []
    worst: RequestRecord | None = None
    worst_err = 0.0
    for r in records:
        if r.kind == "interview":  # H-29: its own tokens and cost, not part of the run's
            s.interview_requests += 1
            s.interview_input += r.input_total
            s.interview_output += r.output
            s.interview_cost += r.cost
            continue
        last_error[r.conversation] = r.error
        s.requests += 1
        kinds[r.kind] += 1
        s.uncached += r.uncached
        s.cache_read += r.cache_read
        s.cache_write += r.cache_write_5m + r.cache_write_1h
        s.output += r.output
        s.cost += r.cost
        if r.error:
            s.failed_requests += 1
            failures[r.error] += 1
            s.tokens_lost_to_failures += r.input_total + r.output
        else:
            s.true_input += r.true_input
            if r.true_input:
                errs.append((r.estimate - r.true_input) / r.true_input)
                if worst is None or abs(errs[-1]) > abs(worst_err):
                    worst, worst_err = r, errs[-1]
        if r.miss_cause:
            misses[r.miss_cause] += 1
            miss_tokens[r.miss_cause] += r.miss_tokens
    total_in = s.uncached + s.cache_read + s.cache_write
    s.cache_read_share = s.cache_read / total_in if total_in else 0.0
    if errs:
        s.estimate_error_mean = sum(errs) / len(errs)
        s.estimate_error_worst = max(errs, key=abs)
    if worst is not None:
        s.worst_request = {
            "conversation": worst.conversation,
            "index": worst.index,
            "kind": worst.kind,
            "estimate": worst.estimate,
            "true_input": worst.true_input,
        }
    counters: Counter[str] = Counter()
    for o in outcomes:
        counters.update(o.counters)
        s.compactions += o.compactions
        s.tokens_saved += o.tokens_saved
        s.evictions += o.evictions
        s.evicted_images += o.evicted_images
        if o.status != "ok":
            s.status = f"error: {o.error}"
            s.ended_because = o.message
            s.run_ending_requests += bool(last_error.get(o.conversation))
    s.misses = dict(sorted(misses.items()))
    s.miss_tokens = dict(sorted(miss_tokens.items()))
    s.failures = dict(sorted(failures.items()))
    s.by_kind = dict(sorted(kinds.items()))
    s.counters = dict(sorted(counters.items()))
    return s


def _worst_text(w: dict[str, Any]) -> str:
    """Where the worst estimate error was, in numbers: the harness's estimate of the prompt before
    the call against the prompt's true size, so a +2,214 % reads as what it is (issue 31 #9)."""
    if not w:
        return ""
    return f" at request {w['index']} ({w['kind']}: estimated {w['estimate']:,}, true {w['true_input']:,})"


def format_summary(s: Summary, title: str = "") -> str:
    """A readable block of totals for a terminal."""
    lines = [title] if title else []
    lines += [
        f"requests            {s.requests:>12,}   ({', '.join(f'{k} {v}' for k, v in s.by_kind.items())})",
        f"input tokens        {s.uncached + s.cache_read + s.cache_write:>12,}   "
        f"uncached {s.uncached:,} · cache read {s.cache_read:,} · cache write {s.cache_write:,}",
        f"output tokens       {s.output:>12,}",
        f"read from cache     {s.cache_read_share:>12.1%}",
        f"cost                {'$' + format(s.cost, ',.4f'):>12}",
        f"compactions         {s.compactions:>12,}   tokens saved {s.tokens_saved:,}",
        f"evictions           {s.evictions:>12,}   images replaced {s.evicted_images:,}",
        f"estimate error      {s.estimate_error_mean:>+12.1%}   worst {s.estimate_error_worst:+.1%}"
        + _worst_text(s.worst_request),
    ]
    if s.misses:
        lines.append(
            "cache misses        "
            + " · ".join(f"{k} {v} ({s.miss_tokens.get(k, 0):,} tok)" for k, v in s.misses.items())
        )
    if s.counters:
        lines.append("harness events      " + " · ".join(f"{k} {v:,}" for k, v in s.counters.items()))
    if s.interview_requests:  # H-29: billed apart, not in the totals above
        lines.append(
            f"interview (apart)   {s.interview_requests:>12,}   requests · input {s.interview_input:,} · "
            f"output {s.interview_output:,} · cost ${s.interview_cost:,.4f}"
        )
    fails = ", ".join(f"{k} {v}" for k, v in s.failures.items()) or "none"
    ending, retried = s.run_ending_requests, s.failed_requests - s.run_ending_requests
    lines.append(f"request errors      {fails}   retried or recovered {retried} · run-ending {ending}")
    ended = "ok: reached the end of the trace" if s.status == "ok" else f"ENDED EARLY, {s.status}"
    if s.ended_because and s.ended_because != s.status.removeprefix("error: "):
        ended += f" ({s.ended_because})"
    lines.append(f"run                 {ended}")
    return "\n".join(lines)
