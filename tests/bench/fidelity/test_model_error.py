"""The replay's model error in the 90 % cost interval (bench/fidelity/model_error.py) and the
automatic-prefix cache's mean at the measured mean share (auto_interval.py `MEAN_SHARE`), on
synthetic sessions; the re-measurement's output on the shared sessions (development part)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ctxbench.bench.fidelity import model_error
from ctxbench.bench.fidelity.auto_interval import MEAN_SHARE, _cost, auto_interval
from ctxbench.bench.fidelity.interval import cost_interval
from ctxbench.bench.fidelity.measure import AutoCounts, ErrorCounts, Measured, _count_output, count_auto, main
from ctxbench.bench.fidelity.model_error import MODEL_ERROR, margins, scores, stratum, widen
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage
from tests.real import REAL, needs_real


def _anthropic(n: int) -> SessionFidelity:
    """A Claude session of `n` requests, each predicted to read its previous prompt (5m writes)."""
    reqs, cost = [], 0.0
    pr = prices("claude-sonnet-4-6")
    for i in range(n):
        read, write = 10_000 * i, 10_000
        rc = RequestCompare(
            i, 10.0 * i, 10.0, Usage(5, read, write, 0, 100), SimUsage(5, read, write, 0, 100), read
        )
        rc.input_predicted = 5
        rc.cost_predicted = rc.cost_billed = pr.cost(5, read, write, 0, 100)
        cost += rc.cost_predicted
        reqs.append(rc)
    return SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs, cost, cost, cost)


def test_the_interval_holds_its_central_value_and_widens_with_the_model_error() -> None:
    sf = _anthropic(12)
    assert stratum(sf) == ("anthropic", "2+")
    chance, full = cost_interval(sf, model_error=False), cost_interval(sf)
    lower, upper, _ = MODEL_ERROR[("anthropic", "2+")]
    assert full.low <= full.central <= full.high and chance.low <= chance.central <= chance.high
    assert full.low <= chance.low and full.high >= chance.high
    assert full.high - full.low >= chance.high - chance.low + (upper - lower) * chance.central - 1e-9
    assert (full.central, full.mean) == (chance.central, chance.mean)  # only the interval widens
    assert cost_interval(sf) == cost_interval(sf)  # deterministic (seeded)
    assert cost_interval(sf, seed=3) == cost_interval(sf, seed=3)


def test_a_one_request_session_has_no_model_error_and_the_margins_apply_as_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = _anthropic(1)
    assert stratum(one) == ("anthropic", "1") and MODEL_ERROR[stratum(one)][:2] == (0.0, 0.0)
    assert cost_interval(one) == cost_interval(one, model_error=False)
    sf = _anthropic(5)
    monkeypatch.setitem(MODEL_ERROR, ("anthropic", "2+"), (-0.25, 0.5, 100))
    chance, full = cost_interval(sf, model_error=False), cost_interval(sf)
    assert full.low == pytest.approx(chance.low - 0.25 * chance.central)
    assert full.high == pytest.approx(chance.high + 0.5 * chance.central)
    monkeypatch.setitem(MODEL_ERROR, ("anthropic", "2+"), (-2.0, 0.0, 100))
    assert cost_interval(sf).low == 0.0  # never below 0
    assert widen(sf, 1.0, 1.2, 1.3) == (0.0, 1.3)  # always holds the central value


def test_a_stratum_too_small_to_calibrate_takes_the_widest_of_its_own_and_the_pooled_margins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tail = (1 - model_error.LEVEL) / 2
    n = model_error.MIN_SESSIONS  # the fewest scores whose two-sided conformal ranks exist

    def rank(m: int) -> int:  # the upper margin's rank among m scores
        return math.ceil(round((m + 1) * (1 - tail), 9))

    assert rank(n) <= n and rank(n - 1) > n - 1
    sf = _anthropic(5)
    monkeypatch.setitem(MODEL_ERROR, ("all", "2+"), (-0.1, 0.3, 500))
    monkeypatch.setitem(MODEL_ERROR, ("anthropic", "2+"), (-0.2, 0.05, n - 1))
    assert model_error.borrows(("anthropic", "2+"))
    assert model_error.stratum_margins(("anthropic", "2+")) == (-0.2, 0.3)  # widest of both sides
    chance = cost_interval(sf, model_error=False)
    assert cost_interval(sf).high == pytest.approx(chance.high + 0.3 * chance.central)
    monkeypatch.setitem(MODEL_ERROR, ("anthropic", "2+"), (-0.2, 0.05, n))
    assert not model_error.borrows(("anthropic", "2+"))
    assert model_error.stratum_margins(("anthropic", "2+")) == (-0.2, 0.05)
    assert not model_error.borrows(("all", "2+"))  # the pooled stratum never borrows from itself
    assert model_error.stratum_margins(("no-such", "2+")) == (-0.1, 0.3)  # unmeasured: pooled


def test_conformal_margins_and_scores() -> None:
    assert scores(0.8, 1.0, 0.9, 1.1) == pytest.approx((-0.1, 0.0))
    assert scores(1.3, 1.0, 0.9, 1.1) == pytest.approx((0.0, 0.2))
    assert scores(1.0, 1.0, 0.9, 1.1) == (0.0, 0.0) and scores(1.0, 0.0, 0.0, 0.0) == (0.0, 0.0)
    lower = [-i / 100 for i in range(99)]  # 99 sessions: ranks floor(100 * 5 %) = 5, ceil(100 * 95 %) = 95
    upper = [i / 100 for i in range(99)]
    assert margins(lower, upper) == pytest.approx((-0.94, 0.94))
    assert margins([-0.5, 0.0], [0.0, 0.7]) == (-0.5, 0.7)  # too few sessions: the extremes
    assert margins([], []) == (0.0, 0.0)


def _auto(n: int) -> SessionFidelity:
    reqs = []
    for i in range(n):
        prompt, read = 6000 + 1000 * i, (5504 + 1000 * i if i else 0)
        reqs.append(
            RequestCompare(
                i, float(i), 1.0, Usage(prompt - read, read, 0, 0, 50), SimUsage(prompt - read, read), 0
            )
        )
    return SessionFidelity("s", "gpt-5", "recorded", reqs, meta={"warm_tokens": 1100}, auto_provider="openai")


def test_the_automatic_caches_mean_is_the_cost_at_the_measured_mean_share() -> None:
    sf = _auto(12)
    iv = auto_interval(sf, "openai")
    assert iv is not None and iv.mean == _cost(sf, MEAN_SHARE["openai"]) and iv.low < iv.mean < iv.high
    sf.auto_interval = iv
    assert model_error.family(sf) == "openai"
    ci = cost_interval(sf)
    assert ci.low <= iv.low <= iv.median == ci.central <= iv.high <= ci.high and ci.mean == iv.mean
    acc = AutoCounts(lost=[(0.01, 900), (0.5, 100)])  # a heavy tail: 10 % of the reads lost half
    assert acc.mean_share == pytest.approx(0.059) and acc.json()["mean_share"] == 0.059


def _gemini_pro(n: int) -> SessionFidelity:
    """A Gemini 2.5 Pro conversation whose prompts cross the 200,000-token price tier halfway: the
    short ones read 60 % of the central read, the long ones all of it."""
    reqs = []
    for i in range(n):
        prompt = 150_000 + 20_000 * i
        central = prompt - 20_000 if i else 0
        read = central if prompt > 200_000 else central * 6 // 10
        billed, predicted = Usage(prompt - read, read, 0, 0, 50), SimUsage(prompt - central, central)
        reqs.append(RequestCompare(i, float(i), 1.0, billed, predicted, central))
    return SessionFidelity("s", "gemini-2.5-pro", "recorded", reqs, auto_provider="gemini")


def test_the_lost_share_is_weighted_by_what_a_read_saves_so_the_mean_share_prices_the_bill() -> None:
    sf = _gemini_pro(12)
    billed = sum(
        prices(sf.model).cost(r.billed.input_tokens, r.billed.cache_read, 0, 0, r.billed.output_tokens)
        for r in sf.requests
    )
    acc = AutoCounts()
    count_auto(sf, acc)
    [(share, _)] = acc.lost
    assert _cost(sf, acc.mean_share) == pytest.approx(billed, rel=1e-4)
    tokens = sum(r.predicted.cache_read - r.billed.cache_read for r in sf.requests) / sum(
        r.predicted.cache_read for r in sf.requests
    )
    assert tokens > share and _cost(sf, tokens) > billed * 1.01  # a token's share over-prices it


def test_the_measure_prints_the_constants_ready_to_paste() -> None:
    out = Measured(
        auto={"openai": AutoCounts(lost=[(0.02, 300), (0.05, 100)])},
        error={("anthropic", "2+"): ErrorCounts([-0.3, 0.0, 0.0], [0.0, 0.0, 0.4], [-0.3, 0.0, 0.4])},
    )
    text = "\n".join(out.lines())
    assert "MEAN_SHARE: dict[str, float] = {'openai': 0.0275}" in text
    assert "MODEL_ERROR: dict[tuple[str, str], tuple[float, float, int]] = {" in text
    assert "    ('anthropic', '2+'): (-0.3, 0.4, 3)," in text
    assert out.json()["model_error"] == {
        "anthropic 2+": {"sessions": 3, "margins": [-0.3, 0.4], "residual_q05_q50_q95": [-0.3, 0.0, 0.4]}
    }


@needs_real
def test_measure_on_the_shared_sessions_prints_model_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--corpus", str(tmp_path), "--shared", str(REAL)]) == 0
    text = capsys.readouterr().out
    assert (
        "model error anthropic 2+:" in text and "MODEL_ERROR: dict[" in text and "MEAN_SHARE: dict[" in text
    )


def _billed(index: int, prompt: int, read: int, output: int) -> RequestCompare:
    usage = Usage(prompt - read, read, 0, 0, output)
    return RequestCompare(index, 10.0 * index, 10.0, usage, SimUsage(prompt - read, read, 0, 0, output), read)


def test_the_measure_counts_the_output_a_request_read_past_the_previous_prompt() -> None:
    acc = AutoCounts()
    # previous prompt 10,000 (steps from 9,984) and 600 output: steps to 10,496 readable
    _count_output(_billed(0, 10_000, 0, 600), _billed(1, 11_000, 10_368, 50), acc)
    assert (acc.into_output, acc.output_read, acc.output_readable) == (1, 384, 512)
    # the previous prompt only (11,000: steps from 10,880; its 50 output tokens reach step 11,008)
    _count_output(_billed(1, 11_000, 10_368, 50), _billed(2, 12_000, 10_880, 50), acc)
    assert (acc.into_output, acc.output_read, acc.output_readable) == (1, 384, 512 + 128)
    # a read short of the previous prompt (an older entry) is no reading of the output
    _count_output(_billed(2, 12_000, 10_880, 900), _billed(3, 13_000, 9_984, 50), acc)
    assert (acc.into_output, acc.output_read, acc.output_readable) == (1, 384, 640)
    text = "\n".join(Measured(auto={"openai": acc}).lines())
    assert "read past the previous prompt into its output: 1 requests" in text and "60.0% read" in text


def test_a_relay_or_a_log_without_writes_has_its_own_model_error() -> None:
    """A relay to Claude models reports and bills its cache otherwise than Anthropic's endpoint:
    its model error is measured apart (enough development sessions of 2+ requests to calibrate)."""
    direct = _anthropic(5)
    relay = _anthropic(5)
    relay.meta = {"gateway": "claude-relay"}
    unrecorded = _anthropic(5)
    unrecorded.meta = {"writes_assumption": "the log records no cache write"}
    assert stratum(direct) == ("anthropic", "2+")
    assert stratum(relay) == stratum(unrecorded) == ("relay", "2+")
    assert not model_error.borrows(("relay", "2+"))
    assert MODEL_ERROR[("relay", "2+")] != MODEL_ERROR[("anthropic", "2+")]
