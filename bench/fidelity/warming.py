"""After an expiry: warming by other sessions, and entries kept past their ttl, as chances (issue
28: "entries kept or dropped at the edge of their TTL, ... warming by other sessions: a rate or a
probability measured on the development part", simulated seeded).

A session whose first request read a static prefix W (`meta.warm_tokens`: the tools and system
prompt another session of the same account wrote) has such a writer. Where the replay predicts
that the session's own entry expired (a `ttl_expiry` break: the idle gap outlived the TTL) and its
read falls short of W, the account's other sessions may have kept W warm in the meantime, and the
bill then reads W. Whether another session ran in that gap, no log of this session says: so each
cost draw (bench/fidelity/interval.py) takes the session's own warming rate from the development
part's accounts' rates (an account's sessions are what warms its prefix) and, at that rate, lets
each such request read W and write that much less (on a gateway that bills no writes, send that
much less as input). A session whose first request read nothing shows no other writer and draws
no warming.

Development part (Anthropic models on Anthropic's endpoint and behind Claude Code relays; re-run by
`python -m ctxbench.bench.fidelity.measure --corpus DIR --shared DIR`, "warming after an
expiry"): of the expiry breaks short of W in sessions with W > 0, the bill read W on 58 of 101,
over 19 accounts whose own rates run from 0 (19 of the breaks) to 1 (38 of them);
in sessions whose first request read nothing, 3 of 150 such breaks read more than predicted. The
same signature taken from the bill is the conditioned replay's outside event
(bench/fidelity/outside.py); this is its prediction, which takes nothing from it.

Kept past the ttl. Anthropic gives a cache entry "a minimum lifetime of 5 minutes (standard) or 1
hour (extended), after which they are promptly, though not immediately, deleted" (prompt-caching
doc): an entry may outlive the gap the replay says expired it, and the bill then reads the whole
previous prompt, the naive read. Each cost draw takes the session's own rate of that from the
development accounts' rates (`KEPT`) and, at it, lets each expiry break read the naive read
(`kept_gain`) instead; a kept entry makes warming moot. Development part, same command ("kept
past the ttl"): of 132 expiry breaks short of the naive read that stand (no fallback, not on
DeepSeek), over 21 accounts, the bill read the naive read on none. The two that did before
(ahmedarafa994/eq-prediction and ericmilton711/claude-skills) were sent 4 and 17 s past the TTL:
those now fall back to the naive read as unsure (bench/fidelity/unsure.py `TTL_EDGE`), and the
chance is measured on what stands. Where a relay keeps entries longer still, no log says so: the
report counts the rule's hold on the test part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity, near, tolerance, weighted_rates
from ctxbench.sim.core.catalog import Prices, model_info

EXPIRY = "ttl_expiry"


@dataclass(frozen=True)
class Warming:
    """One measured chance after an expiry, warming (`WARMING`) or an entry kept past its ttl
    (`KEPT`; module docstring): the accounts' own rates, each with the share of the eligible
    requests of the accounts at it (their weighted mean is the pooled rate)."""

    rates: tuple[tuple[float, float], ...]


# Development part (traces-real and the corpus's `dev` rows of bench/corpus/sessions.csv), measured
# by `python -m ctxbench.bench.fidelity.measure --corpus corpus-data --shared traces-real`.
WARMING = Warming(
    (  # pooled: 58 / 101
        (0.0, 0.1881), (0.14, 0.0693), (0.29, 0.0693), (0.46, 0.1287), (0.64, 0.1089), (0.67, 0.0594),
        (1.0, 0.3762),
    ),
)  # fmt: skip


# Same part and command ("kept past the ttl"): 0 of 132 expiry breaks over 21 accounts.
KEPT = Warming(((0.0, 1.0),))  # fmt: skip


def kept_gain(sf: SessionFidelity, r: RequestCompare) -> int:
    """How many more tokens request `r` reads when its own entry outlived the ttl (module
    docstring): the naive read less its predicted read, for an expiry break short of the naive
    read; else 0 (and always on DeepSeek's disk cache, as `warm_gain`)."""
    read = r.predicted.cache_read
    if not r.index or r.miss_cause != EXPIRY or r.naive_read <= read or near(read, r.naive_read):
        return 0
    return r.naive_read - read if model_info(sf.model).provider != "deepseek" else 0


def warm_gain(sf: SessionFidelity, r: RequestCompare) -> int:
    """How many more tokens request `r` reads when another session kept W warm: W less its
    predicted read, for an expiry break short of W in a session with W > 0; else 0 (and always on
    DeepSeek's disk cache, which has its own measured misses: misses.py `MISSES`)."""
    warm = int(sf.meta.get("warm_tokens", 0) or 0)
    read = r.predicted.cache_read
    if not warm or not r.index or r.miss_cause != EXPIRY or read >= warm - tolerance(warm):
        return 0
    return warm - read if model_info(sf.model).provider != "deepseek" else 0


def warm_saving(r: RequestCompare, pr: Prices, gain: int, writes_billed: bool) -> float:
    """What request `r` costs less when it reads `gain` more tokens: they are not written (taken
    from the 5m write first, as a request's own write is), or, where writes are not billed, not
    sent as input."""
    p, u, o = r.predicted, r.input_predicted, r.billed.output_tokens
    w5, w1 = p.cache_write_5m, p.cache_write_1h
    base = pr.cost(u, p.cache_read, w5, w1, o)
    if not writes_billed:
        g = min(gain, u)
        return pr.cost(u - g, p.cache_read + g, w5, w1, o) - base
    g5 = min(gain, w5)
    g1 = min(gain - g5, w1)
    return pr.cost(u, p.cache_read + g5 + g1, w5 - g5, w1 - g1, o) - base


@dataclass
class WarmCounts:
    """The development part's chances after an expiry (module docstring): per account (the
    repository or folder a log came from: the sessions that can warm each other's prefix), its
    eligible requests and those whose bill read W (`accounts`) or the naive read (`kept`)."""

    accounts: dict[str, list[int]] = field(default_factory=dict)
    cold: list[int] = field(default_factory=lambda: [0, 0])  # W = 0: expiry breaks, read more
    kept: dict[str, list[int]] = field(default_factory=dict)

    @property
    def eligible(self) -> int:
        return sum(n for n, _ in self.accounts.values())

    @property
    def warmed(self) -> int:
        return sum(k for _, k in self.accounts.values())

    def rate_weights(self, kept: bool = False) -> list[tuple[float, float]]:
        """The accounts' own rates, each with its share of the eligible requests (`Warming.rates`)."""
        counts = self.kept if kept else self.accounts
        return weighted_rates([(k / n, n) for n, k in counts.values()])

    def kept_line(self) -> str:
        """How many expiry breaks read the naive read: the entry outlived its ttl."""
        n, k = (sum(c[i] for c in self.kept.values()) for i in (0, 1))
        return f"{k} of {n} expiry breaks short of the naive read read it ({len(self.kept)} accounts)"

    def json(self) -> dict[str, object]:
        return {
            "eligible": self.eligible, "warmed": self.warmed, "accounts": dict(sorted(self.accounts.items())),
            "rate_weights": self.rate_weights(), "cold_breaks_read_more": self.cold,
            "kept": dict(sorted(self.kept.items())), "kept_rate_weights": self.rate_weights(kept=True),
        }  # fmt: skip

    def line(self) -> str:
        return (
            f"warming after an expiry (first request read W > 0): {self.warmed} of {self.eligible} "
            f"expiry breaks short of W read W; per account ({len(self.accounts)}), its rate and the "
            f"share of the breaks at it: {self.rate_weights()}; where the first request read nothing, "
            f"{self.cold[1]} of {self.cold[0]} expiry breaks read more than predicted; kept past the ttl: "
            f"{self.kept_line()}, per account its rate and share: {self.rate_weights(kept=True)}"
        )


def account(rel: str) -> str:
    """The account a log belongs to: the first folder of its path in a part (a corpus repository,
    or a shared folder's source)."""
    return rel.split("/")[0]


def part_line(sessions: list[tuple[str, SessionFidelity]]) -> str:
    """The report's line on one part: how the warming rule held on its (log path, session) pairs;
    on the test part, a rule it was not made from."""
    acc = WarmCounts()
    for rel, sf in sessions:
        if not sf.auto_provider:
            count_warming(sf, account(rel), acc)
    return (
        f"Warming after an expiry (bench/fidelity/warming.py, drawn in the interval at the development "
        f"part's rates): where the first request read a static prefix W, {acc.warmed} of {acc.eligible} "
        f"expiry breaks short of W read W ({len(acc.accounts)} accounts); where it read nothing, "
        f"{acc.cold[1]} of {acc.cold[0]} expiry breaks read more than predicted. Kept past the ttl "
        f"(drawn at the development part's rates): {acc.kept_line()}."
    )


def count_warming(sf: SessionFidelity, account: str, acc: WarmCounts) -> None:
    """Add one conversation's expiry breaks short of W (`warm_gain`) and short of the naive read
    (`kept_gain`) to its account in `acc`."""
    warm = int(sf.meta.get("warm_tokens", 0) or 0)
    n = k = 0
    for r in sf.baseline.requests:
        if not warm and r.index and r.miss_cause == EXPIRY:
            read = r.billed.cache_read
            acc.cold[0] += 1
            acc.cold[1] += read > r.predicted.cache_read + tolerance(read)
        if warm_gain(sf, r):
            n += 1
            k += near(r.billed.cache_read, warm)
        if kept_gain(sf, r):
            kept = acc.kept.setdefault(account, [0, 0])
            kept[0] += 1
            kept[1] += r.naive_ok
    if n:
        counts = acc.accounts.setdefault(account, [0, 0])
        counts[0] += n
        counts[1] += k
