"""The re-measurement of the fidelity replay's rates (bench/fidelity/measure.py): development part
only, and counts that add up on the part a test can reach (the shared sessions: the corpus is
not on a test machine)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.measure import AutoCounts, count_auto, dev_part, main, measure
from ctxbench.bench.fidelity.misses import TURN_GAPS, MissCounts, count_misses, deciles, turn_class
from ctxbench.bench.fidelity.parts import Part
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.bench.fidelity.unsure import NOT_SENT_BREAKS, count_sided, naive_only, rules_line
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage
from tests.real import REAL, needs_real


def _rc(i: int, prompt: int, read: int, central: int) -> RequestCompare:
    return RequestCompare(
        i, float(i), 1.0, Usage(prompt - read, read, 0, 0, 10), SimUsage(prompt - central, central), 0
    )


def test_auto_counts_sort_misses_by_what_they_read() -> None:
    reqs = [
        _rc(0, 2000, 0, 0),
        _rc(1, 3000, 1920, 1920),  # found
        _rc(2, 4000, 1100, 2944),  # the static prefix only (warm 1,100)
        _rc(3, 5000, 2944, 3968),  # request #1's prompt... of 3,000 tokens: an older entry, 2 back
        _rc(4, 6000, 4200, 4992),  # neither
    ]
    acc = AutoCounts()
    count_auto(SessionFidelity("s", "gpt-5", "recorded", reqs, meta={"warm_tokens": 1100}), acc)
    assert (acc.found, acc.missed, acc.static_only, acc.older, acc.neither) == (1, 3, 1, 1, 1)
    assert dict(acc.back) == {2: 1}
    assert acc.lost == []  # fewer than 10 requests: no share of its own


def test_misses_count_only_the_first_backends_requests() -> None:
    """A conversation that moves from a Claude model to glm-5.1 is counted under the Claude cache
    with its Claude requests only: the glm requests are another cache's."""
    claude = [replace(_rc(i, 1000 * (i + 1), 0, 1000 * i), model="claude-sonnet-4-6") for i in range(1, 4)]
    glm = [replace(_rc(i, 1000 * (i + 1), 1000 * i, 1000 * i), model="glm-5.1") for i in range(4, 9)]
    acc = MissCounts()
    count_misses(SessionFidelity("s", "claude-sonnet-4-6", "recorded", claude + glm), acc)
    assert (acc.reads, len(acc.lost)) == (3, 3)
    assert acc.rates == [(1.0, 3)]


def test_misses_keep_the_shares_lost_at_each_rate() -> None:
    """The shares a conversation's misses lost stay with its rate (misses.py `Misses.shares_at`):
    one that misses every read and loses all of it, one that misses one read in two and loses 2 %."""
    every = [_rc(i, 1000 * (i + 1), 0, 1000 * i) for i in range(1, 4)]
    half = [_rc(1, 20000, 10000, 10000), _rc(2, 30000, 19600, 20000)]
    acc = MissCounts()
    for reqs in (every, half):
        count_misses(SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs), acc)
    assert acc.rate_weights() == [(0.5, 0.4), (1.0, 0.6)]
    assert acc.shares_at() == [deciles([0.02]), deciles([1.0, 1.0, 1.0])]
    assert acc.json()["lost_share_deciles_at"] == acc.shares_at()


def test_turn_classes_split_continuations_from_user_turns_by_gap() -> None:
    assert [turn_class(False, 600.0), turn_class(True, 0.0), turn_class(True, 4.9)] == [0, 1, 1]
    assert turn_class(True, TURN_GAPS[0]) == 2


def _turns(n_tool: int, m_tool: int, n_user: int, m_user: int, gap: float) -> SessionFidelity:
    """Continuations then user turns at `gap`, the first `m_*` of each missing all of their read."""
    reqs = []
    for i in range(n_tool + n_user):
        user = i >= n_tool
        missed = (i - n_tool < m_user) if user else i < m_tool
        rc = _rc(i + 1, 2000, 0 if missed else 1000, 1000)
        rc.real_user, rc.gap = user, gap
        reqs.append(rc)
    return SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs)


def test_turn_factors_compare_within_each_account() -> None:
    """Account a: continuations miss one in two, user turns too (factor 1 within it); account b
    never misses. Pooled, user turns would look ten times safer (5/110 against 50/110); compared
    within each account (Mantel-Haenszel), they miss as often. The rates are then per unit of
    exposure: b's conversation 0, a's half of its 110 units."""
    acc = MissCounts(turns=True)
    count_misses(_turns(100, 50, 10, 5, 60.0), acc, "a")
    count_misses(_turns(100, 50, 10, 5, 1.0), acc, "a")  # within 5 s: one in two as well
    count_misses(_turns(10, 0, 100, 0, 60.0), acc, "b")
    assert acc.turn_factors() == (1.0, 1.0, 1.0)
    assert acc.rates[0] == (0.5, 110.0) and acc.rates[2] == (0.0, 110.0)
    assert MissCounts().turn_factors() == ()  # a kind without turns: every read one unit
    lone = MissCounts(turns=True)
    count_misses(_turns(0, 0, 10, 5, 60.0), lone, "a")  # no continuation to compare with
    assert lone.turn_factors() == () and lone.rates == [(0.5, 10.0)]


def test_the_test_part_is_never_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="development part only"):
        measure(Part("test", (tmp_path,)))
    assert main(["--corpus", str(tmp_path / "absent")]) == 2
    assert "no development part" in capsys.readouterr().err
    (tmp_path / "test").mkdir()
    with pytest.raises(ValueError):
        dev_part(None, tmp_path)  # a corpus with only its test part has no development part


@needs_real
def test_shared_sessions_give_counts_that_add_up() -> None:
    out = measure(Part("dev", (REAL,)))
    openai = out.auto["openai"]
    assert (
        openai.found + openai.missed > 0
        and openai.static_only + openai.older + openai.neither == openai.missed
    )
    explicit = out.misses["explicit"]
    assert 0 < len(explicit.lost) < explicit.reads  # a few of the predicted reads read less
    assert "claude-relay" not in out.misses  # no relay log among the shared sessions
    sided = out.sided.get(NOT_SENT_BREAKS, Counter())
    assert sided["replay"] <= sided["naive"]  # PROMPT_NOT_LOGGED: breaks the bill did not show


def test_breaks_short_of_naive_are_counted_by_cause_with_the_bills_side() -> None:
    """Every break the replay predicts short of the naive read (the first request aside), by its
    miss cause, with whom the bill sided: the evidence each rule that breaks stands on."""

    def req(i: int, billed: int, replay: int, cause: str = "") -> RequestCompare:
        r = _rc(i, 10_000, billed, replay)
        return replace(r, naive_read=9_000, replay_read=replay, miss_cause=cause)

    reqs = [
        req(0, 0, 0, "first_request"),  # the first request: not a break of the replay's making
        req(1, 9_000, 2_000, "ttl_expiry"),  # naive
        req(2, 2_000, 2_000, "ttl_expiry"),  # replay
        req(3, 0, 0, "ttl_expiry"),  # replay: a read of 0 within the 128-token floor
        req(4, 5_000, 2_000, "prefix_change"),  # neither
        req(5, 9_000, 8_990, ""),  # not short: within tolerance of the naive read
        req(6, 9_000, 0, ""),  # naive, no cause named
    ]
    sf = SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs)
    sided: dict[str, Counter[str]] = {}
    by_cause: dict[str, Counter[str]] = {}
    count_sided(sf, sided, by_cause)
    assert by_cause == {
        "ttl_expiry": Counter(naive=1, replay=2),
        "prefix_change": Counter(neither=1),
        "none named": Counter(naive=1),
    }
    assert "none named 0 / 1 / 0; prefix_change 0 / 0 / 1; ttl_expiry 2 / 1 / 0." in rules_line([sf])
    reqs[6].fallback = "naive (version 2.1.200 not checked)"  # a fallback: the rule did not stand
    assert rules_line([sf]).endswith(": prefix_change 0 / 0 / 1; ttl_expiry 2 / 1 / 0.")
    assert naive_only(sf) == "1 none named, 1 ttl_expiry"  # the naive read matched, the replay did not


def test_reads_in_units_a_unit_apart_are_counted_with_the_read_the_bill_matched_exactly() -> None:
    """On a cache whose reads end inside messages (DeepSeek), a read with no timing cause a unit
    or more apart from the naive one counts for the read the bill matched to the token; timing
    breaks, the first request and reads that agree are not counted (unsure.py
    `READS_INSIDE_MESSAGES`)."""
    why = "units end inside messages"

    def req(i: int, billed: int, replay: int, cause: str = "") -> RequestCompare:
        r = _rc(i, 10_000, billed, replay)
        return replace(r, naive_read=9_088, replay_read=replay, miss_cause=cause, unsure=why)

    reqs = [
        req(0, 0, 0, "first_request"),
        req(1, 9_088, 8_960),  # naive, a unit apart
        req(2, 8_960, 8_960),  # replay
        req(3, 8_832, 8_960),  # neither
        req(4, 9_088, 9_088),  # agree: not counted
        req(5, 0, 0, "ttl_expiry"),  # a timing break: not counted
    ]
    units: Counter[str] = Counter()
    count_sided(SessionFidelity("s", "deepseek-v4-pro", "recorded", reqs), {}, {}, units)
    assert units == Counter(naive=1, replay=1, neither=1)
