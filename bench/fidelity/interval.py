"""A session's predicted cost as a distribution, not a point (issue 28): what the provider does by
chance, and what the replay's model of the client cannot see, is simulated seeded at rates
measured on the development part, and the prediction is a central value with a 90 % interval.

Modelled (explicit-breakpoint caches, Anthropic): a request the replay predicts to read part of
its prompt from the cache reads less instead at `UNPREDICTED_MISS`, the rate measured on the
development part; it covers server-side lookup failures (a live entry the provider does not find,
anthropics/claude-code#87966) and every other miss the log does not show. Such a miss loses a
share of the predicted read drawn from the measured shares (`LOST_SHARE`), which the request
writes instead (at its ttl); the next request reads it again, so a miss changes its own
request's cost only. The replay without anything taken from the bill
(`SessionFidelity.baseline`) is the base; `DRAWS` seeded draws give the 5th and 95th percentiles,
the median (the central value: the session's predicted cost) and the mean (what a part's pooled
prediction sums). Where the replay predicts a break, the
development part never saw the bill side with the naive read (0 of 67), so no draw reverses one.
A Claude Code relay (sim/data/profiles/claude-relay.yaml: reads reported, writes neither reported
nor billed) draws its own rate and shares (`MISSES["claude-relay"]`), and a miss there bills the
lost read as input, not as a write; DeepSeek's disk cache, behind whichever client, has its own too
(`MISSES["deepseek"]`). Both are stated assumptions, not models: each was measured on one or two
development repositories, and the test part does not bear them out (relays to Claude models:
21 of 1,398 predicted reads read less, 1.5 %, against the development relay's 12 %; DeepSeek: 1,183
of 11,556, 10 %, against 3 of 54). A relay's misses are its own and the log does not show which
relay it is; the model error (model_error.py) is what widens the interval for the rest.
Automatic-prefix caches have their own measured distribution (auto_interval.py). Both are then
widened by the replay's own model error, measured on the development part (model_error.py).

Re-measured by `python -m ctxbench.bench.fidelity.measure --corpus DIR --shared DIR`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxbench.bench.fidelity.gateway import bills_unreported_writes, reports_cache_writes
from ctxbench.bench.fidelity.model_error import widen
from ctxbench.bench.fidelity.results import AutoInterval, SessionFidelity
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.profiles import profile_names
from ctxbench.traces.importers.backend import RELAY_PROFILE as RELAY

# Development part (traces-real and the corpus's `dev` rows: Claude Code, Cline, claude-trace,
# Inspect and opencode logs), relays and DeepSeek apart: of 5,531 requests the replay predicted to
# read something, 55 read less (5 of them the lookup failures bench/fidelity/outside.py recognises
# on the shared sessions: claude-code-log 37f83ec9, 9e953218, cua-sandbox-apps pgadmin, spotter
# 258c7280).
UNPREDICTED_MISS = 55 / 5531
# The share of its predicted read such a miss lost: the 0 %, 10 %, ..., 100 % quantiles of the 55.
LOST_SHARE = (0.014, 0.055, 0.131, 0.319, 0.601, 0.649, 0.746, 0.773, 0.781, 0.856, 1.0)
# cache kind -> (rate, lost-share deciles); the relay's, measured on the development part's relay
# logs (Damon-Salvetore/claude-code, one relay: 90 of 746 requests with a predicted read read less),
# re-measured by measure.py; an assumption for any other relay (module docstring)
MISSES: dict[str, tuple[float, tuple[float, ...]]] = {
    "explicit": (UNPREDICTED_MISS, LOST_SHARE),
    # DeepSeek's disk cache (886caigudong/caigudong- Claude Code and suhd550-dev/stunning-memory
    # opencode logs on DeepSeek): 3 of 54 read less, each a few 128-token units
    "deepseek": (3 / 54, (0.01, 0.01, 0.01, 0.011, 0.011, 0.011, 0.011, 0.011, 0.074, 0.074, 0.074)),
    RELAY: (
        90 / 746,
        (0.011, 0.014, 0.018, 0.027, 0.037, 0.058, 0.077, 0.113, 0.233, 0.299, 0.763),
    ),
}
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
    return RELAY if sf.meta.get("gateway") == RELAY and provider == "anthropic" else "explicit"


def writes_billed(sf: SessionFidelity) -> bool:
    """False on a gateway that neither reports nor bills cache writes: a miss there bills its lost
    read as input (gateway.py)."""
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
    overrides the measured miss rate of the session's cache (`MISSES`)."""
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

    measured_rate, shares = MISSES[miss_kind(sf)]
    rate = measured_rate if rate is None else rate
    billed_writes = writes_billed(sf)
    extra = []
    for r in base.requests:
        p = r.predicted
        if p.cache_read <= 0:
            continue
        pr = prices(r.model or base.model)
        u, o = r.input_predicted, r.billed.output_tokens
        w5, w1 = p.cache_write_5m, p.cache_write_1h
        if not billed_writes:  # the lost read is billed as input
            extra.append(pr.cost(u + p.cache_read, 0, w5, w1, o) - pr.cost(u, p.cache_read, w5, w1, o))
            continue
        failed = (w5, w1 + p.cache_read) if w1 and not w5 else (w5 + p.cache_read, w1)
        extra.append(pr.cost(u, 0, *failed, o) - pr.cost(u, p.cache_read, w5, w1, o))
    cost = base.cost_predicted
    if not extra:
        return CostInterval(cost, cost, cost, mean=cost)
    rng = np.random.default_rng(seed)
    fails = rng.random((DRAWS, len(extra))) < rate
    lost = np.interp(rng.random((DRAWS, len(extra))), np.linspace(0, 1, len(shares)), shares)
    draws = cost + (fails * lost) @ np.asarray(extra)  # the cost is linear in the read lost
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return CostInterval(float(np.median(draws)), float(low), float(high), mean=float(draws.mean()))
