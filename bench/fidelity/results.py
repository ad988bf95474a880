"""What fidelity measures, one request and one session at a time: the billed and the predicted
usage of each request, the naive baseline's read, the cause named for a miss, the outside events
replayed as observed, and the tolerance a read is scored within."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage


def tolerance(billed: int) -> float:
    """Issue #6: within max(1 %, 128 tokens) of the billed cache read."""
    return max(0.01 * billed, 128.0)


def near(a: int, b: int) -> bool:
    return b > 0 and abs(a - b) <= tolerance(b)


RATE_STEP = 0.01  # a rate measured per conversation or account, to the percent


def weighted_rates(rates: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(rate, weight) pairs (a weight: the requests, or the exposure, at that rate) as the distinct
    rates, to `RATE_STEP`, each with its share of the weight: the distribution a session's own rate
    is drawn from (interval.py `Misses.rates`, warming.py `Warming.rates`)."""
    total = sum(n for _, n in rates)
    acc: dict[float, float] = {}
    for rate, n in rates:
        key = round(round(rate / RATE_STEP) * RATE_STEP, 4)
        acc[key] = acc.get(key, 0) + n
    return [(r, round(n / total, 4)) for r, n in sorted(acc.items())] if total else []


LOOKUP_FAILURE = "server_lookup_failure"
OUTSIDE_WARMING = "outside_warming"
UNLOGGED_TURN_CONTENT = "unlogged_turn_content"
KINDS = (LOOKUP_FAILURE, OUTSIDE_WARMING, UNLOGGED_TURN_CONTENT)
LABELS = {
    LOOKUP_FAILURE: "server-side lookup failure",
    OUTSIDE_WARMING: "static prefix warmed outside the conversation",
    UNLOGGED_TURN_CONTENT: "unlogged content stripped the turn's thinking (read stops at the turn's start)",
}


@dataclass(frozen=True)
class OutsideEvents:
    """Requests (indexes in the conversation) where each kind of outside event is replayed."""

    lookup_failures: tuple[int, ...] = ()
    outside_warming: tuple[int, ...] = ()
    unlogged_turn_content: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return any(self.at(k) for k in KINDS)

    def __len__(self) -> int:
        return sum(len(self.at(k)) for k in KINDS)

    def __or__(self, other: OutsideEvents) -> OutsideEvents:
        return OutsideEvents(*(tuple(sorted({*self.at(k), *other.at(k)})) for k in KINDS))

    def at(self, kind: str) -> tuple[int, ...]:
        if kind == LOOKUP_FAILURE:
            return self.lookup_failures
        return self.outside_warming if kind == OUTSIDE_WARMING else self.unlogged_turn_content

    def only(self, indices: set[int]) -> OutsideEvents:
        """The events at `indices` only (the requests a session still scores)."""
        return OutsideEvents(*(tuple(i for i in self.at(k) if i in indices) for k in KINDS))

    def kind_of(self, index: int) -> str:
        return next((k for k in KINDS if index in self.at(k)), "")


@dataclass
class RequestCompare:
    index: int
    t: float
    gap: float
    billed: Usage
    predicted: SimUsage
    naive_read: int
    miss_cause: str = ""
    cause: str = ""
    turn_start: int = 0  # billed cached part of the request that started this turn
    real_user: bool = False  # the user message before this request has non-tool-result content
    fallback_of: int = -1  # the latest earlier request whose whole cached prompt equals the billed read
    cost_billed: float = 0.0
    cost_predicted: float = 0.0  # billed output and uncached tail, predicted cache usage
    input_predicted: int = 0  # predicted uncached input, the uncached tail included
    outside: str = ""  # the outside event replayed as observed at this request (outside.py)
    # first request of a turn: the paths the previous turn's prompt @-mentioned (Claude Code
    # attachments the log does not show; claude_code_wire.py `at_mentions`)
    dropped_mentions: tuple[str, ...] = ()
    request_id: str = ""  # the provider's id (a forked session's copies carry the original's)
    cost_naive: float = 0.0
    model: str = ""  # the model it ran on and is priced as (a `model_switch` changes it)
    unsure: str = ""  # why the replay's model of the client is unsure here (bench/fidelity/unsure.py)
    fallback: str = ""  # "naive (<reason>)": the prediction is the naive read (unsure.py)
    replay_read: int = 0  # the replay's own read (the prediction's, unless it fell back)

    @property
    def ok(self) -> bool:
        return abs(self.predicted.cache_read - self.billed.cache_read) <= tolerance(self.billed.cache_read)

    @property
    def within(self) -> bool:
        """Cache read, cache write (5m + 1h) and uncached input each within tolerance of the bill."""
        b, p = self.billed, self.predicted
        bw = b.cache_write_5m + b.cache_write_1h
        return (
            self.ok
            and abs(p.cache_write_5m + p.cache_write_1h - bw) <= tolerance(bw)
            and abs(self.input_predicted - b.input_tokens) <= tolerance(b.input_tokens)
        )

    @property
    def naive_ok(self) -> bool:
        return abs(self.naive_read - self.billed.cache_read) <= tolerance(self.billed.cache_read)

    @property
    def naive_within(self) -> bool:
        """The naive replay within tolerance: its read, and so its write (the billed cached part
        minus its read); its uncached input is the billed one."""
        b = self.billed
        bw = b.cache_write_5m + b.cache_write_1h
        off = abs(self.naive_read - b.cache_read)  # the write is off by as much
        return off <= tolerance(b.cache_read) and off <= tolerance(bw)


@dataclass(frozen=True)
class AutoInterval:
    """A 90 % interval on the cost of a session replayed on an automatic-prefix cache, from the
    measured distribution of the share of its central reads the provider does not find
    (auto_interval.py)."""

    low: float
    high: float
    mean: float
    provider: str
    shares: tuple[float, float, float]
    median: float = 0.0  # the lost share at the interval's low end, median, high end

    def inside(self, billed: float) -> bool:
        return self.low <= billed <= self.high

    def share_json(self) -> dict[str, object]:
        low, median, high = self.shares
        return {"provider": self.provider, "lost_share": {"low": low, "median": median, "high": high}}


NO_USAGE = "the log has no per-request usage (totals only): nothing to compare"
# A conversation whose every billed request is a copy of one another conversation billed (same
# requestId): a Claude Code "prompt suggestion" side chain starts with a copy of its parent's last
# reply and logs no reply of its own; a forked or resumed session repeats its parent's requests.
# Each copy is scored once, where it was made (bench/fidelity/report.py `billed_once`).
COPIED = (
    "its {n} billed request(s) are copies of another conversation's (same requestId), scored there: "
    "nothing of its own to compare"
)


@dataclass
class SessionFidelity:
    name: str
    model: str
    policy: str
    requests: list[RequestCompare] = field(default_factory=list)
    cost_billed: float = 0.0
    cost_predicted: float = 0.0
    cost_naive: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    outside: OutsideEvents = field(default_factory=OutsideEvents)  # replayed as observed
    unconditioned: SessionFidelity | None = None  # the replay without them (None: it is this one)
    copied: int = 0  # requests left out: copies of requests an earlier session billed
    # billed requests the replay could not score (it stopped before them), and why
    not_scored: list[int] = field(default_factory=list)
    not_scored_why: str = ""
    auto_interval: AutoInterval | None = None  # automatic-prefix caches: a measured share (auto_interval.py)
    auto_provider: str = ""  # the provider of an automatic-prefix cache that caches (openai, gemini)
    # policy P other than `recorded`: P's summary requests the real harness did not send, as
    # (the billed request they came before, their cost; in cost_predicted), and where each
    # compacted (bench/fidelity/policy.py PolicyTrack)
    own_requests: list[tuple[int, float]] = field(default_factory=list)
    track: Any = None
    # of them, those at a real compaction whose summariser request the log holds no bill of: their
    # cost (policy.py `unlogged_cost`), which the bill's own requests do not include
    unlogged: float = 0.0

    def without(self, ids: set[str]) -> SessionFidelity:
        """This session scored without the requests of `ids` (copies a forked or resumed session
        holds of requests an earlier session billed: replayed, since they build its prompt, but
        billed once, where they were made; bench/billed/totals.py)."""
        keep = [r for r in self.requests if not (r.request_id and r.request_id in ids)]
        if len(keep) == len(self.requests):
            return self
        return replace(
            self,
            requests=keep,
            cost_billed=sum(r.cost_billed for r in keep),
            cost_predicted=sum(r.cost_predicted for r in keep) + sum(c for _, c in self.own_requests),
            cost_naive=sum(r.cost_naive for r in keep),
            outside=self.outside.only({r.index for r in keep}),
            unconditioned=self.unconditioned.without(ids) if self.unconditioned else None,
            copied=self.copied + len(self.requests) - len(keep),
        )

    @property
    def models(self) -> list[str]:
        """The models its requests ran on, in order of first use (several after a `model_switch`)."""
        return list(dict.fromkeys(r.model for r in self.requests if r.model)) or [self.model]

    @property
    def baseline(self) -> SessionFidelity:
        """The replay without the outside events (this one when there are none)."""
        return self.unconditioned or self

    def request(self, index: int) -> RequestCompare:
        """The scored request of this index (requests without usage are not scored)."""
        return next(r for r in self.requests if r.index == index)

    def outside_cost(self, kind: str) -> float:
        """What replaying the `kind` events changes in the predicted cost of their requests."""
        base = self.baseline
        return sum(
            self.request(i).cost_predicted - base.request(i).cost_predicted for i in self.outside.at(kind)
        )

    @property
    def n(self) -> int:
        return len(self.requests)

    @property
    def share_ok(self) -> float:
        return sum(r.ok for r in self.requests) / self.n if self.n else 1.0

    @property
    def has_usage(self) -> bool:
        """The log records per-request usage (SWE-agent keeps totals only, FORMATS.md §2.7)."""
        return self.n > 0

    @property
    def share_within(self) -> float:
        return sum(r.within for r in self.requests) / self.n if self.n else 0.0

    @property
    def fallbacks(self) -> int:
        """Requests whose prediction fell back to the naive read (bench/fidelity/unsure.py)."""
        return sum(1 for r in self.requests if r.fallback)

    @property
    def share_naive_within(self) -> float:
        """The naive replay's share within tolerance (read, write and uncached input)."""
        return sum(r.naive_within for r in self.requests) / self.n if self.n else 0.0

    @property
    def share_naive_ok(self) -> float:
        return sum(r.naive_ok for r in self.requests) / self.n if self.n else 1.0

    def total(self, what: str) -> int:
        if what == "billed":
            return sum(r.billed.cache_read for r in self.requests)
        if what == "predicted":
            return sum(r.predicted.cache_read for r in self.requests)
        return sum(r.naive_read for r in self.requests)

    @property
    def mismatches(self) -> list[RequestCompare]:
        """Requests whose cache read is off (`misses` also counts writes and uncached input)."""
        return [r for r in self.requests if not r.ok]

    @property
    def misses(self) -> list[RequestCompare]:
        """Requests not within tolerance (cache read, cache write or uncached input off)."""
        return [r for r in self.requests if not r.within]

    def cost_gap(self, only_mismatches: bool = False) -> float:
        """Predicted minus billed cost, of all requests or of those not within tolerance only (a
        read missed by N tokens costs N x (write - read) price: the few misses carry the session's
        whole cost gap when the other requests match)."""
        rs = self.misses if only_mismatches else self.requests
        return sum(r.cost_predicted - r.cost_billed for r in rs)
