"""Which measured misses a session's cost interval draws from (bench/fidelity/interval.py
`miss_kind`, bench/fidelity/misses.py `MISSES`): a relay's to an Anthropic model, DeepSeek's disk
cache behind any client, Anthropic's own endpoint otherwise; what a miss costs where writes are not
billed; and that a draw's shares lost are those measured at its rate."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.interval import cost_interval, miss_kind, writes_billed
from ctxbench.bench.fidelity.misses import MISSES, Misses
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage


def _session(model: str, gateway: str = "", n: int = 40) -> SessionFidelity:
    """`n` requests, each predicted and billed to read its previous prompt of 10k tokens a turn."""
    reqs, cost = [], 0.0
    pr = prices(model)
    for i in range(n):
        read = 10_000 * i
        rc = RequestCompare(i, 10.0 * i, 10.0, Usage(5, read, 0, 0, 100), SimUsage(5, read, 0, 0, 100), read)
        rc.input_predicted = 5
        rc.cost_predicted = rc.cost_billed = pr.cost(5, read, 0, 0, 100)
        cost += rc.cost_predicted
        reqs.append(rc)
    meta = {"gateway": gateway} if gateway else {}
    return SessionFidelity("s", model, "recorded", reqs, cost, cost, cost, meta=meta)


def test_each_cache_draws_its_own_measured_misses() -> None:
    assert miss_kind(_session("claude-sonnet-4-6")) == "explicit"
    assert miss_kind(_session("claude-sonnet-4-6", "claude-relay")) == "claude-relay"
    # a relay in front of DeepSeek is DeepSeek's cache, not the Anthropic relays' rate
    assert miss_kind(_session("deepseek-chat", "claude-relay")) == "deepseek"
    assert miss_kind(_session("deepseek-chat")) == "deepseek"
    assert set(MISSES) == {"explicit", "claude-relay", "deepseek"}
    assert MISSES["claude-relay"].rate > MISSES["explicit"].rate  # relays miss far more often (measured)


def test_a_relay_bills_a_lost_read_as_input_not_as_a_write() -> None:
    assert writes_billed(_session("claude-sonnet-4-6")) and writes_billed(
        _session("claude-sonnet-4-6", "cline")
    )
    assert not writes_billed(_session("claude-sonnet-4-6", "claude-relay"))
    direct, relay = _session("claude-sonnet-4-6"), _session("claude-sonnet-4-6", "claude-relay")
    rate = 0.5  # the same misses on both: only the price of a miss differs
    d = cost_interval(direct, rate=rate, model_error=False)
    r = cost_interval(relay, rate=rate, model_error=False)
    pr = prices("claude-sonnet-4-6")
    assert pr.cache_write_5m > pr.input  # a write costs more than input: the relay's misses cost less
    assert direct.baseline.cost_predicted == pytest.approx(relay.baseline.cost_predicted)
    assert r.mean - relay.baseline.cost_predicted < d.mean - direct.baseline.cost_predicted
    assert r.mean > relay.baseline.cost_predicted  # a miss still costs something


def test_a_session_draws_its_own_miss_rate_from_the_conversations_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sf = _session("claude-sonnet-4-6")
    base = sf.baseline.cost_predicted
    # nine conversations in ten never miss, one misses every read and loses all of it
    monkeypatch.setitem(MISSES, "explicit", Misses(0.1, ((0.0, 0.9), (1.0, 0.1)), (1.0, 1.0)))
    ci = cost_interval(sf, model_error=False)
    every = cost_interval(sf, rate=1.0, model_error=False)  # every read missed: one cost
    assert ci.central == pytest.approx(base)  # the typical session does not miss
    assert ci.high == pytest.approx(every.central)  # the 95th percentile is a session that always misses
    assert ci.mean == pytest.approx(base + 0.1 * (every.central - base), rel=0.2)
    pooled = cost_interval(sf, rate=0.1, model_error=False)  # the same mean rate on every session
    assert pooled.central > base and pooled.high < ci.high
    assert cost_interval(sf, model_error=False) == ci  # seeded


def test_a_draw_loses_the_shares_measured_at_its_own_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nine conversations in ten miss one read in ten and lose 1 % of it each time; one in ten misses
    every read and loses all of it. Drawn together (misses.py), a typical session costs about the
    replay's point; the pooled shares (mostly whole reads) would put it 10 % of the way to the
    session that always misses."""
    sf = _session("claude-sonnet-4-6")
    base = sf.baseline.cost_predicted
    rates = ((0.1, 0.9), (1.0, 0.1))
    monkeypatch.setitem(MISSES, "explicit", Misses(0.19, rates, (1.0, 1.0), ((0.01, 0.01), (1.0, 1.0))))
    every = cost_interval(sf, rate=1.0, model_error=False).central - base  # every read lost (pooled shares)
    ci = cost_interval(sf, model_error=False)
    assert ci.central - base < 0.002 * every  # a tenth of the reads, 1 % of each
    assert ci.high == pytest.approx(base + every)  # the 95th percentile: the session that always misses
    assert ci.mean - base == pytest.approx((0.9 * 0.1 * 0.01 + 0.1) * every, rel=0.2)
    monkeypatch.setitem(MISSES, "explicit", Misses(0.19, rates, (1.0, 1.0)))  # no shares per rate
    pooled = cost_interval(sf, model_error=False)
    assert pooled.central - base == pytest.approx(0.1 * every, rel=0.3)


def test_a_read_misses_at_its_session_rate_times_its_turn_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every draw at one rate, 0.2: tool-result continuations miss at it, user turns opened 5 s or
    more after the previous request at three times it, and those within 5 s (factor 0) never
    (misses.py `Misses.factor`)."""
    monkeypatch.setitem(MISSES, "explicit", Misses(0.2, ((0.2, 1.0),), (1.0, 1.0), (), (1.0, 0.0, 3.0)))

    def turns(real_user: bool, gap: float) -> SessionFidelity:
        sf = _session("claude-sonnet-4-6")
        for r in sf.baseline.requests:
            r.real_user, r.gap = real_user, gap
        return sf

    base = turns(False, 10.0).baseline.cost_predicted
    every = cost_interval(turns(False, 10.0), rate=1.0, model_error=False).central - base
    continuation = cost_interval(turns(False, 60.0), model_error=False).mean - base
    paused = cost_interval(turns(True, 60.0), model_error=False).mean - base
    assert continuation == pytest.approx(0.2 * every, rel=0.1)
    assert paused == pytest.approx(0.6 * every, rel=0.1)
    assert cost_interval(turns(True, 1.0), model_error=False).mean == pytest.approx(base)
    # a rate given replaces the measured distribution and the factors: every read at that rate
    assert cost_interval(turns(True, 1.0), rate=1.0, model_error=False).central - base == pytest.approx(every)
