"""sim/summary.py: the harness's own event counters (RunOutcome.counters) reach Summary and its text."""

from __future__ import annotations

from ctxbench.sim.harness.conversation import RunOutcome
from ctxbench.sim.summary import format_summary, summarize


def test_counters_are_summed_over_outcomes_and_shown_once() -> None:
    a = RunOutcome("c0", counters={"passes": 2, "backoff_skips": 1})
    b = RunOutcome("c1", counters={"passes": 1, "too_long_recovered": 1})
    s = summarize([], [a, b])
    assert s.counters == {"backoff_skips": 1, "passes": 3, "too_long_recovered": 1}
    assert s.as_dict()["counters"] == s.counters
    lines = [ln for ln in format_summary(s).splitlines() if ln.startswith("harness events")]
    assert lines == ["harness events      backoff_skips 1 · passes 3 · too_long_recovered 1"]


def test_no_counter_line_without_counters() -> None:
    s = summarize([], [RunOutcome("c0")])
    assert s.counters == {} and "harness events" not in format_summary(s)
