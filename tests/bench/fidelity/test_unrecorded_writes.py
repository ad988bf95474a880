"""A log that reads from the cache but records no write, on a profile that bills writes
(bench/fidelity/gateway.py `writes_unrecorded`): compared as the log reports it (the replay's writes
in the uncached input), priced as the log is priced, and the assumption named."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.gateway import WRITES_IN_INPUT, writes_unrecorded
from ctxbench.bench.fidelity.interval import writes_billed
from ctxbench.sim.core.catalog import prices
from ctxbench.traces.model import Content, Header, MessageEvent, SystemEvent, Trace, Usage


def _trace(model: str, writes: bool, reads: bool = True) -> Trace:
    """Four requests of a growing conversation; each reads the previous prompt (when `reads`) and,
    when `writes`, records the new tail as a cache write, else as uncached input."""
    events: list[SystemEvent | MessageEvent] = [SystemEvent((Content("text", "system " * 3000),), t=0.0)]
    read = 0
    for i in range(4):
        events.append(MessageEvent("user", (Content("text", f"question {i} " + "word " * 800),), t=10.0 * i))
        prompt = 3_000 + 950 * (i + 1)
        write = 900 if writes and i else 0
        u = Usage(prompt - read - write, read if reads else 0, write, 0, 50)
        events.append(MessageEvent("assistant", (Content("text", "answer " * 50),), t=10.0 * i + 1, usage=u))
        read = prompt - 900
    return Trace(Header("t.jsonl", model=model, meta={"format": "codex-rollout"}), tuple(events))


def test_only_a_log_with_reads_and_no_write_on_a_write_billing_profile_is_unrecorded() -> None:
    assert writes_unrecorded(_trace("gpt-5.6-terra", writes=False), "openai-breakpoints")
    assert writes_unrecorded(_trace("claude-sonnet-4-6", writes=False), "anthropic")
    assert not writes_unrecorded(_trace("gpt-5.6-terra", writes=True), "openai-breakpoints")
    assert not writes_unrecorded(_trace("gpt-5.6-terra", writes=False, reads=False), "openai-breakpoints")
    # a cache that bills no write, and a gateway whose profile already says it reports none
    assert not writes_unrecorded(_trace("gpt-5", writes=False), "openai-auto")
    assert not writes_unrecorded(_trace("claude-sonnet-4-6", writes=False), "claude-relay")


def test_a_log_with_no_write_is_compared_and_priced_as_it_reports() -> None:
    sf = compare(_trace("gpt-5.6-terra", writes=False))
    assert sf.meta["writes_assumption"] == WRITES_IN_INPUT
    assert not writes_billed(sf)  # a miss in its interval bills the lost read as input
    pr = prices("gpt-5.6-terra")
    for r in sf.baseline.requests:
        p = r.predicted
        assert p.cache_write_5m == p.cache_write_1h == 0  # the replay's writes are in the input
        expected = pr.cost(r.input_predicted, p.cache_read, 0, 0, r.billed.output_tokens)
        assert r.cost_predicted == pytest.approx(expected)


def test_a_log_that_records_writes_keeps_them() -> None:
    sf = compare(_trace("gpt-5.6-terra", writes=True))
    assert "writes_assumption" not in sf.meta
    assert writes_billed(sf)
    assert sum(r.predicted.cache_write_5m for r in sf.baseline.requests) > 0
