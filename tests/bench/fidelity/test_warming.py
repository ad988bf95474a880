"""After an expiry, warming by other sessions and entries kept past the ttl as chances
(bench/fidelity/warming.py): which requests may read a static prefix another session kept warm or
the whole previous prompt, what that saves, how the cost interval draws it, and how the
development part's counts are taken."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.bench.fidelity.warming import (
    KEPT,
    WARMING,
    WarmCounts,
    Warming,
    count_warming,
    kept_gain,
    part_line,
    warm_gain,
    warm_saving,
)
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage

MODEL = "claude-sonnet-4-6"
W = 20_000  # the static prefix the first request read (another session wrote it)


def _session(warm: int, billed_read_after_gap: int, gateway: str = "") -> SessionFidelity:
    """Four requests of a growing prompt; the third comes after an idle gap the replay predicts
    expired the entry (`ttl_expiry`: it reads nothing and writes its whole prompt)."""
    pr = prices(MODEL)
    reqs, cost = [], 0.0
    for i in range(4):
        prompt = 30_000 + 5_000 * i
        expired = i == 2
        read = 0 if expired else (warm if i == 0 else prompt - 5_000)
        write = prompt - read
        got = billed_read_after_gap if expired else read
        billed = Usage(5, got, prompt - got, 0, 100)
        rc = RequestCompare(i, 400.0 * i, 400.0, billed, SimUsage(5, read, write, 0, 100), read)
        rc.miss_cause = "ttl_expiry" if expired else ""
        rc.input_predicted = 5
        rc.cost_predicted = pr.cost(5, read, write, 0, 100)
        rc.cost_billed = pr.cost(5, billed.cache_read, billed.cache_write_5m, 0, 100)
        cost += rc.cost_predicted
        reqs.append(rc)
    meta: dict[str, object] = {"warm_tokens": warm}
    if gateway:
        meta["gateway"] = gateway
    return SessionFidelity("s", MODEL, "recorded", reqs, cost, cost, cost, meta=meta)


def test_only_an_expiry_short_of_the_warm_prefix_may_read_it() -> None:
    sf = _session(W, 0)
    assert [warm_gain(sf, r) for r in sf.baseline.requests] == [0, 0, W, 0]
    cold = _session(0, 0)  # the first request read nothing: no other session writes this prefix
    assert all(warm_gain(cold, r) == 0 for r in cold.baseline.requests)


def test_a_warmed_read_is_not_written_or_where_writes_are_not_billed_not_sent() -> None:
    sf = _session(W, 0)
    r = sf.baseline.requests[2]
    pr = prices(MODEL)
    per_token_write = (pr.cache_write_5m - pr.cache_read) / 1e6
    assert warm_saving(r, pr, W, True) == pytest.approx(-W * per_token_write)
    r.input_predicted += W  # a gateway that bills no writes sends the unread prompt as input
    per_token_input = (pr.input - pr.cache_read) / 1e6
    assert warm_saving(r, pr, W, False) == pytest.approx(-W * per_token_input)


def test_the_interval_draws_warming_at_the_measured_rates_and_only_where_it_can_happen() -> None:
    sf = _session(W, W)
    ci = cost_interval(sf, rate=0.0, model_error=False)  # no lookup misses: warming alone varies
    base = sf.baseline.cost_predicted
    saving = warm_saving(sf.baseline.requests[2], prices(MODEL), W, True)
    assert ci.low == pytest.approx(base + saving)  # warmed: the cheaper cost is inside
    assert ci.high == pytest.approx(base)  # not warmed: the replay's own cost is inside
    mean_rate = sum(r * w for r, w in WARMING.rates) / sum(w for _, w in WARMING.rates)
    assert ci.mean == pytest.approx(base + mean_rate * saving, rel=0.1)
    assert cost_interval(sf, rate=0.0, model_error=False) == ci  # seeded
    cold = _session(0, 0)
    c = cost_interval(cold, rate=0.0, model_error=False)
    assert c.low == c.high == pytest.approx(cold.baseline.cost_predicted)  # no other writer: no warming


def test_the_development_counts_are_per_account_with_the_cold_sessions_apart() -> None:
    acc = WarmCounts()
    count_warming(_session(W, W), "alice", acc)
    count_warming(_session(W, 0), "alice", acc)
    count_warming(_session(W, 0), "bob", acc)
    count_warming(_session(0, 4_000), "carol", acc)  # read more though nobody warmed it
    assert acc.accounts == {"alice": [2, 1], "bob": [1, 0]}
    assert (acc.eligible, acc.warmed, acc.cold) == (3, 1, [1, 1])
    assert acc.rate_weights() == [(0.0, round(1 / 3, 4)), (0.5, round(2 / 3, 4))]
    assert "1 of 3 expiry breaks" in acc.line()


def test_the_report_line_counts_a_part_by_the_folder_each_log_came_from() -> None:
    sessions = [
        ("alice/a.jsonl", _session(W, W)),
        ("alice/sub/b.jsonl", _session(W, 0)),
        ("bob/c.jsonl", _session(0, 0)),
    ]
    line = part_line(sessions)
    assert "1 of 2 expiry breaks short of W read W (1 accounts)" in line
    assert "0 of 1 expiry breaks read more than predicted" in line


def _kept_session(billed_read_after_gap: int) -> SessionFidelity:
    """`_session` whose expiry break falls short of the naive read (the previous prompt, 35,000):
    its entry may have outlived the ttl."""
    sf = _session(W, billed_read_after_gap)
    sf.baseline.requests[2].naive_read = 35_000
    return sf


def test_an_expiry_break_may_read_the_naive_read_when_its_entry_outlived_the_ttl() -> None:
    sf = _kept_session(35_000)
    assert [kept_gain(sf, r) for r in sf.baseline.requests] == [0, 0, 35_000, 0]
    acc = WarmCounts()
    count_warming(sf, "alice", acc)
    count_warming(_kept_session(0), "bob", acc)
    assert acc.kept == {"alice": [1, 1], "bob": [1, 0]}
    assert "1 of 2 expiry breaks short of the naive read read it (2 accounts)" in acc.kept_line()
    assert acc.rate_weights(kept=True) == [(0.0, 0.5), (1.0, 0.5)]


def test_the_interval_draws_a_kept_entry_at_the_measured_rates_before_warming(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sf = _kept_session(35_000)
    base = sf.baseline.cost_predicted
    r = sf.baseline.requests[2]
    kept, warmed = (warm_saving(r, prices(MODEL), g, True) for g in (35_000, W))
    assert kept < warmed < 0  # reading the whole previous prompt saves more than reading W
    ci = cost_interval(sf, rate=0.0, model_error=False)
    assert ci.high == pytest.approx(base)
    mean_kept = sum(x * w for x, w in KEPT.rates) / sum(w for _, w in KEPT.rates)
    mean_warm = sum(x * w for x, w in WARMING.rates) / sum(w for _, w in WARMING.rates)
    expected = base + mean_kept * kept + (1 - mean_kept) * mean_warm * warmed
    assert ci.mean == pytest.approx(expected, rel=0.02)
    always = Warming(((1.0, 1.0),))
    monkeypatch.setattr("ctxbench.bench.fidelity.interval.KEPT", always)
    every = cost_interval(sf, rate=0.0, model_error=False)  # kept in every draw: warming is moot
    assert every.low == every.high == pytest.approx(base + kept)
    monkeypatch.setattr("ctxbench.bench.fidelity.interval.WARMING", always)
    assert cost_interval(sf, rate=0.0, model_error=False).low == pytest.approx(base + kept)
