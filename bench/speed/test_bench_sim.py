"""Simulated requests per CPU-second on the bundled samples, against a naive full re-hash.

Run: `python -m pytest bench/speed/test_bench_sim.py --benchmark-enable -p no:cacheprovider`.
Every figure is CPU time (`time.process_time`, the suite's timer), so other work on a shared
machine does not move it. Targets (issue 13): >= 20,000 simulated requests per CPU-second on each
bundled preset and >= 50x the naive reference on the same trace and preset; reported (the summary
line, and `ctxbench speed`), never asserted.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.naive import naive_run
from ctxbench.bench.throughput import NAIVE_PRESET
from ctxbench.policies.preset import load_policy, preset_names
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.format import read_trace

pytestmark = pytest.mark.benchmark(timer=time.process_time)

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"
TRACE_OF = {"c-default": "coding-long"}  # harness C compacts at 90 % of the window: a coding session


def _prepared(name: str) -> PreparedTrace:
    return prepare_for(read_trace(SAMPLES / f"{name}.jsonl"))


@pytest.fixture(scope="module")
def samples() -> dict[str, PreparedTrace]:
    return {name: _prepared(name) for name in ("game-300", "coding-long")}


@pytest.mark.parametrize("preset", preset_names())
def test_simulated_requests_per_second(
    benchmark: Any, samples: dict[str, PreparedTrace], preset: str
) -> None:
    policy = load_policy(preset)
    trace = samples[TRACE_OF.get(preset, "game-300")]
    result = benchmark(run_prepared, [trace], policy, policy.provider)
    benchmark.extra_info["requests"] = len(result.records)


def test_naive_reference_requests_per_second(benchmark: Any, samples: dict[str, PreparedTrace]) -> None:
    result = benchmark.pedantic(
        naive_run, args=(samples["game-300"], load_policy(NAIVE_PRESET)), rounds=3, iterations=1
    )
    benchmark.extra_info["requests"] = len(result.records)


@pytest.mark.parametrize("name", ["game-300", "coding-long"])
def test_trace_reading_and_preparation(benchmark: Any, name: str) -> None:
    """Reading and hashing a trace once (not part of the per-request figure)."""
    benchmark(_prepared, name)
