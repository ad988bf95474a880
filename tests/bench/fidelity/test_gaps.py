"""Retention by idle gap (bench/fidelity/gaps.py): the counts that set a profile's `ttl` where the
provider publishes none."""

from __future__ import annotations

from collections import Counter

from ctxbench.bench.fidelity.gaps import count_retention, gap_bin
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.model import Usage


def _rc(i: int, t: float, read: int, model: str = "glm-5.1") -> RequestCompare:
    return RequestCompare(i, t, 0.0, Usage(1000, read, 0, 0, 10), SimUsage(1000, read), 0, model=model)


def test_gap_bins() -> None:
    assert gap_bin(0) == "0-300 s" and gap_bin(299.9) == "0-300 s"
    assert gap_bin(300) == "300-600 s" and gap_bin(1250) == "1200-1800 s"
    assert gap_bin(90_000) == "86400-259200 s"
    assert gap_bin(300_000) == "259200+ s"


def test_each_request_counts_as_kept_or_lost_by_its_gap() -> None:
    reqs = [
        _rc(0, 0, 0),
        _rc(1, 100, 1000),  # read the whole previous prompt (1,000): kept
        _rc(2, 800, 500),  # half of the previous 2,000: lost... read 500 < 1,000
        _rc(3, 2000, 1500),  # read 1,500 of the previous 1,500: kept
        _rc(4, 2100, 0, "claude-sonnet-4-6"),  # another backend: not this cache's
    ]
    acc: Counter[str] = Counter()
    count_retention(SessionFidelity("s", "glm-5.1", "recorded", reqs), acc)
    assert acc == Counter({"0-300 s kept": 1, "600-900 s lost": 1, "1200-1800 s kept": 1})
