"""A session's predicted cost as a distribution, not a point (issue 28): what the provider does by
chance, and what the replay's model of the client cannot see, is simulated seeded at rates
measured on the development part, and the prediction is a central value with a 90 % interval.

Modelled (explicit-breakpoint caches, Anthropic): a request the replay predicts to read part of
its prompt from the cache reads less instead, at a rate; it covers server-side lookup failures (a
live entry the provider does not find, anthropics/claude-code#87966) and every other miss the log
does not show. How often that happens is not one rate: most conversations of the development part
never miss, a few miss on most requests (a client or proxy that changes an early message on every
request, which the log does not show, reads no more than the static prefix). So each draw first
takes the session's own rate from the distribution of the development conversations' rates
(`Misses.rates`: exposure-weighted quantiles, so that the rates' mean is the pooled rate
`Misses.rate`), then draws each request's miss at that rate times the request's own factor: on
explicit-breakpoint caches a request that opens a user turn 5 s or more after the previous one
misses 2.9 times as often as a tool-result continuation, one within 5 s 0.16 times
(misses.py `Misses.factor`, measured per account on the development part). A miss loses a share of the
predicted read drawn from the shares measured at that rate (`Misses.shares_at`: a conversation
that rarely misses loses little each time, one that always misses loses all; bench/fidelity/misses.py
says why they are drawn together), which the request writes instead
(at its ttl); the next request reads it again, so a miss changes its own request's cost only. The
replay without anything taken from the bill (`SessionFidelity.baseline`) is the base; `DRAWS`
seeded draws give the 5th and 95th percentiles, the median (the central value: the session's
predicted cost) and the mean (what a part's pooled prediction sums). Where the replay predicts a
break other than an expired entry, no draw reverses it; where it predicts an expired entry, the
entry may have outlived its ttl (the bill reads the naive read), or, in a session whose first
request read a static prefix another session wrote, that prefix may have been kept warm
meanwhile: each draw reads the one or the other there at the session's own rates (warming.py;
not on DeepSeek's cache).
A Claude Code relay to an Anthropic model (sim/data/profiles/claude-relay.yaml: reads reported,
writes neither reported nor billed) draws from its own measured misses (`MISSES["claude-relay"]`),
and a miss there bills the lost read as input, not as a write; DeepSeek's disk cache, behind
whichever client, has its own too (`MISSES["deepseek"]`). The relays' are a stated assumption:
they were measured on the development part's 48 relay conversations, and a relay's misses are
its own. The model error (model_error.py) is what widens the interval for the rest.
Automatic-prefix caches have their own measured distribution (auto_interval.py). Both are then
widened by the replay's own model error, measured on the development part (model_error.py).

Re-measured by `python -m ctxbench.bench.fidelity.measure --corpus DIR --shared DIR`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ctxbench.bench.fidelity.gateway import bills_unreported_writes, reports_cache_writes
from ctxbench.bench.fidelity.misses import EXPLICIT, MISSES, Misses
from ctxbench.bench.fidelity.model_error import widen
from ctxbench.bench.fidelity.results import AutoInterval, SessionFidelity
from ctxbench.bench.fidelity.warming import KEPT, WARMING, kept_gain, warm_gain, warm_saving
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.profiles import profile_names
from ctxbench.traces.importers.backend import RELAY_PROFILE as RELAY

if TYPE_CHECKING:
    import numpy as np
    from numpy.random import Generator
    from numpy.typing import NDArray


DRAWS = 1000  # seeded draws per session
LEVEL = 0.90  # the interval's coverage target


@dataclass(frozen=True)
class CostInterval:
    """A session's predicted cost: `central` is the median of its distribution (the point
    prediction of one session), `mean` its expectation (what sums: a part's pooled cost is the sum
    of its sessions' means), `low`..`high` the 90 % interval."""

    central: float
    low: float
    high: float
    auto: AutoInterval | None = None  # an automatic-prefix cache's measured share (auto_interval.py)
    mean: float = 0.0

    def holds(self, cost: float) -> bool:
        """`cost` inside the interval (a cent's thousandth of slack for rounding)."""
        return self.low - 1e-6 <= cost <= self.high + 1e-6

    def less(self, cost: float) -> CostInterval:
        """The same distribution without `cost` (policy P's summary requests the log's bill cannot
        hold: bench/fidelity/policy.py `unlogged_cost`)."""
        return replace(self, central=self.central - cost, low=self.low - cost, high=self.high - cost,
                       mean=self.mean - cost)  # fmt: skip

    @property
    def width(self) -> float:
        """The interval's width relative to its central value."""
        return (self.high - self.low) / self.central if self.central else 0.0


def miss_kind(sf: SessionFidelity) -> str:
    """The cache whose measured misses a session draws from: DeepSeek's, a Claude Code relay's to
    an Anthropic model (a relay to another backend is that backend's cache), or the
    explicit-breakpoint caches' (module docstring)."""
    provider = model_info(sf.model).provider
    if provider == "deepseek":  # DeepSeek's disk cache behind any client
        return provider
    return RELAY if sf.meta.get("gateway") == RELAY and provider == "anthropic" else EXPLICIT


def writes_billed(sf: SessionFidelity) -> bool:
    """False on a gateway that neither reports nor bills cache writes, and for a log that records
    none: a miss there bills its lost read as input (gateway.py)."""
    if sf.meta.get("writes_assumption"):  # a log that records no writes (gateway.py `writes_unrecorded`)
        return False
    gw = str(sf.meta.get("gateway", ""))
    if gw not in profile_names():
        return True
    return reports_cache_writes(gw) or bills_unreported_writes(gw)


def cost_interval(
    sf: SessionFidelity, seed: int = 0, rate: float | None = None, model_error: bool = True
) -> CostInterval:
    """The predicted cost of `sf` with its 90 % interval (module docstring); on an automatic-prefix
    cache, the interval of its measured share of reads not found (auto_interval.py). With
    `model_error`, the interval is widened by the replay's model error measured on the development
    part (model_error.py); its central value and mean stay those of the chance draws. `rate`
    replaces the measured distribution of the session's miss rate by one rate (`MISSES`)."""
    ci = _chance_interval(sf, seed, rate)
    if not model_error:
        return ci
    low, high = widen(sf, ci.central, ci.low, ci.high)
    return replace(ci, low=low, high=high)


def _chance_interval(sf: SessionFidelity, seed: int, rate: float | None) -> CostInterval:
    """What the provider does by chance only (module docstring)."""
    if sf.auto_interval is not None:
        iv = sf.auto_interval
        return CostInterval(iv.median, iv.low, iv.high, iv, iv.mean)
    base = sf.baseline
    if sf.auto_provider:  # an automatic-prefix cache with no share measured for its provider
        cost = base.cost_predicted
        return CostInterval(cost, cost, cost, mean=cost)
    import numpy as np  # here: the fidelity verb's start-up does not pay for it

    misses = MISSES[miss_kind(sf)]
    billed_writes = writes_billed(sf)
    extra, factors, warmed, kept = [], [], [], []
    for r in base.requests:
        p = r.predicted
        pr = prices(r.model or base.model)
        gain, whole = warm_gain(sf, r), kept_gain(sf, r)
        if whole or gain:  # an expiry break: its entry may outlive the ttl, or another session keep W
            kept.append(warm_saving(r, pr, whole, billed_writes) if whole else 0.0)
            warmed.append(warm_saving(r, pr, gain, billed_writes) if gain else 0.0)
        if p.cache_read <= 0:
            continue
        u, o = r.input_predicted, r.billed.output_tokens
        w5, w1 = p.cache_write_5m, p.cache_write_1h
        factors.append(misses.factor(r.real_user, r.gap))
        if not billed_writes:  # the lost read is billed as input
            extra.append(pr.cost(u + p.cache_read, 0, w5, w1, o) - pr.cost(u, p.cache_read, w5, w1, o))
            continue
        failed = (w5, w1 + p.cache_read) if w1 and not w5 else (w5 + p.cache_read, w1)
        extra.append(pr.cost(u, 0, *failed, o) - pr.cost(u, p.cache_read, w5, w1, o))
    cost = base.cost_predicted
    if not extra and not kept:
        return CostInterval(cost, cost, cost, mean=cost)
    rng = np.random.default_rng(seed)
    draws = np.full(DRAWS, cost)
    if extra:
        fails, lost = _misses(rng, misses, np.asarray(factors), rate)
        draws += (fails * lost) @ np.asarray(extra)  # the cost is linear in the read lost
    if kept:  # the entry outlived its ttl, else another session kept W warm (warming.py)
        keeps = rng.random((DRAWS, len(kept))) < _own_rates(rng, KEPT.rates)
        warms = rng.random((DRAWS, len(kept))) < _own_rates(rng, WARMING.rates)
        draws += keeps @ np.asarray(kept) + (warms & ~keeps) @ np.asarray(warmed)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return CostInterval(float(np.median(draws)), float(low), float(high), mean=float(draws.mean()))


def _misses(
    rng: Generator, misses: Misses, factors: NDArray[np.float64], rate: float | None
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Which predicted reads miss in each draw, and the share each loses: a draw's rate is a
    measured conversation's, each read misses at that rate times its `factors` entry (the turn it
    opens and its gap, misses.py `Misses.factor`), and its shares lost are those measured at that
    rate (misses.py module docstring); `rate` given, every read of every draw misses at it and
    loses the pooled shares."""
    import numpy as np

    n = len(factors)
    if rate is not None:
        factors = np.ones(n)
        rows = np.zeros(DRAWS, dtype=np.int64)
        rates, table = np.full((DRAWS, 1), rate), np.asarray([misses.shares])
    else:
        rows = _own_rows(rng, misses.rates)
        rates = np.asarray([r for r, _ in misses.rates])[rows][:, None]
        table = np.asarray([_resample(misses.shares_of(k)) for k in range(len(misses.rates))])
    fails = rng.random((DRAWS, n)) < np.minimum(1.0, rates * factors[None, :])
    at = rng.random((DRAWS, n)) * (table.shape[1] - 1)  # a uniform draw between the deciles
    lo = np.minimum(at.astype(np.int64), table.shape[1] - 2)
    own = table[rows]  # each draw's quantiles
    below, above = np.take_along_axis(own, lo, 1), np.take_along_axis(own, lo + 1, 1)
    return fails, below + (at - lo) * (above - below)


def _resample(shares: tuple[float, ...]) -> tuple[float, ...]:
    """`shares` (quantiles at even steps) as the 11 deciles, so that every rate's row is as long."""
    import numpy as np

    steps = np.linspace(0, 1, len(shares))
    return tuple(float(x) for x in np.interp(np.linspace(0, 1, 11), steps, shares))


def _own_rows(rng: Generator, measured: tuple[tuple[float, float], ...]) -> NDArray[np.int64]:
    """Each draw's index into the measured (rate, weight) pairs, drawn by their weights (module
    docstring)."""
    import numpy as np

    weights = np.asarray([w for _, w in measured])
    return rng.choice(len(measured), size=DRAWS, p=weights / weights.sum())


def _own_rates(rng: Generator, measured: tuple[tuple[float, float], ...]) -> NDArray[np.float64]:
    """Each draw's own rate (a column), taken from the measured conversations' rates by their
    weights (module docstring)."""
    import numpy as np

    return np.asarray([r for r, _ in measured])[_own_rows(rng, measured)][:, None]
