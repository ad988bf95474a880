"""Simulated requests per second on the 300-turn game trace, against a naive full re-hash.

Run: `python -m pytest bench/speed/test_bench_sim.py --benchmark-enable -p no:cacheprovider`.
Targets (issue #2): ≥ 20,000 simulated requests/s on one core and ≥ 50x the naive reference;
reported, never asserted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.naive import naive_run
from ctxbench.policies.preset import load_policy
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.format import read_trace

TRACE = Path(__file__).resolve().parents[2] / "traces" / "samples" / "game-300.jsonl"


@pytest.fixture(scope="module")
def prepared() -> PreparedTrace:
    return prepare_for(read_trace(TRACE))


def test_simulated_requests_per_second(benchmark: Any, prepared: PreparedTrace) -> None:
    policy = load_policy("h-openrouter")
    result = benchmark(run_prepared, [prepared], policy)
    benchmark.extra_info["requests"] = len(result.records)


def test_naive_reference_requests_per_second(benchmark: Any, prepared: PreparedTrace) -> None:
    result = benchmark.pedantic(
        naive_run, args=(prepared, load_policy("h-openrouter")), rounds=3, iterations=1
    )
    benchmark.extra_info["requests"] = len(result.records)


def test_trace_preparation(benchmark: Any) -> None:
    """Reading and hashing the trace once (not part of the per-request figure)."""
    benchmark(lambda: prepare_for(read_trace(TRACE)))
