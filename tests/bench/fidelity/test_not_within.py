"""Why a request is not within tolerance (bench/fidelity/not_within.py): the four kinds read off the
bill, the naive replay's beside, and the report's table."""

from __future__ import annotations

from ctxbench.bench.fidelity.not_within import (
    KINDS,
    READ_LESS,
    READ_MORE,
    SIZE,
    SPLIT,
    by_kind,
    count_kinds,
    naive_kind,
    replay_kind,
    table,
)
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage


def _rc(billed: tuple[int, int, int], predicted: tuple[int, int, int], naive_read: int = 0) -> RequestCompare:
    """A request billed and predicted as (cache read, cache write, uncached input)."""
    (br, bw, bi), (pr, pw, pi) = billed, predicted
    return RequestCompare(
        1, 1.0, 1.0, Usage(bi, br, bw, 0, 10), SimUsage(pi, pr, pw), naive_read, input_predicted=pi
    )


def test_each_kind_is_read_off_the_bill() -> None:
    assert replay_kind(_rc((50_000, 300, 3), (50_000, 300, 3))) == ""
    # a lookup miss: the bill wrote what the replay expected read
    assert replay_kind(_rc((0, 50_300, 3), (50_000, 300, 3))) == READ_LESS
    # an entry kept past its ttl: the bill read what the replay expected written
    assert replay_kind(_rc((50_000, 300, 3), (0, 50_300, 3))) == READ_MORE
    # the read right, the prompt 2,000 tokens larger than the bill's
    assert replay_kind(_rc((50_000, 300, 3), (50_000, 2_300, 3))) == SIZE
    # read 300 short (inside its 1 % of 50,000), the write 300 over (outside its 128), total right
    assert replay_kind(_rc((50_000, 300, 3), (49_700, 600, 3))) == SPLIT


def test_the_naive_replay_is_classed_on_its_own_read() -> None:
    """The naive replay's uncached input is the bill's, so its total is the bill's: never a size
    error; a read a storage unit off is a split."""
    assert naive_kind(_rc((50_000, 300, 3), (0, 0, 0), naive_read=50_000)) == ""
    assert naive_kind(_rc((0, 50_300, 3), (0, 0, 0), naive_read=50_000)) == READ_LESS
    assert naive_kind(_rc((50_000, 300, 3), (0, 0, 0), naive_read=40_000)) == READ_MORE
    assert naive_kind(_rc((50_000, 300, 3), (0, 0, 0), naive_read=49_744)) == SPLIT


def test_counts_and_table_give_each_family_its_shares() -> None:
    reqs = [
        _rc((50_000, 300, 3), (50_000, 300, 3), naive_read=50_000),
        _rc((0, 50_300, 3), (50_000, 300, 3), naive_read=50_000),
        _rc((50_000, 300, 3), (50_000, 2_300, 3), naive_read=50_000),
        _rc((50_000, 300, 3), (49_700, 600, 3), naive_read=49_700),
    ]
    sf = SessionFidelity("s", "claude-sonnet-4-6", "recorded", reqs)
    n, replay, naive = count_kinds([sf])
    assert (n, by_kind(replay.elements()), by_kind(naive.elements())) == (
        4,
        {READ_LESS: 1, READ_MORE: 0, SIZE: 1, SPLIT: 1},
        {READ_LESS: 1, READ_MORE: 0, SIZE: 0, SPLIT: 1},
    )
    assert list(by_kind([])) == list(KINDS)
    rows = table({"claude-code": [sf], "empty": []})
    shares = "75.0% (50.0%) | 25.0% (25.0%) | 0.0% (0.0%) | 25.0% (0.0%) | 25.0% (25.0%)"
    assert rows[-1] == f"| claude-code | 4 | {shares} |"
    assert not any(r.startswith("| empty") for r in rows)
