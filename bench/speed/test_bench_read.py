"""Reading and preparing a long trace against simulating it (pytest-benchmark, CPU time).

Target (issue 13): reading a trace file and preparing it (blocks with true tokens and digests) costs
less CPU than simulating it once. Reported as `read_prepare_over_simulate` in each benchmark's
extra info and on the summary line, never asserted; the warm case loads the prepared trace kept in
the cache (sim/prepared_cache.py) and reports `load_over_simulate`, and what keeping it adds to a
cold run (`store`). Run with
    python -m pytest bench/speed/test_bench_read.py --benchmark-enable -s -p no:cacheprovider
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.prepared_cache import prepared_file
from ctxbench.sim.runner import prepare_for, run_prepared
from ctxbench.traces.format import read_trace, write_trace
from ctxbench.traces.generators import generate

pytestmark = pytest.mark.benchmark(timer=time.process_time)

# Long synthetic traces (the 10,000-turn game trace: 7.5 MB; its coding counterpart), each
# with the presets that run it to its end (h-direct and h-keep-last-2 stop a coding trace early: its
# context outgrows their budget).
TRACES = {
    "game-10000": ("game", {"turns": 10_000, "seed": 1}),
    "coding-1000": ("coding", {"user_turns": 1_000, "seed": 1}),
}
CASES = [("game-10000", "h-direct"), ("game-10000", "h-keep-last-2"), ("coding-1000", "claude-code")]
ROUNDS = 5


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, (gen, params) in TRACES.items():
        out[name] = tmp_path_factory.mktemp("traces") / f"{name}.jsonl"
        write_trace(generate(gen, **params), out[name])
    return out


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_read_and_prepare_against_simulate(
    benchmark: Any, files: dict[str, Path], name: str, preset: str
) -> None:
    """Cold: each round reads the file and prepares it anew (no prepared-trace cache)."""
    policy = load_policy(preset)
    rounds: dict[str, list[float]] = {"read": [], "prepare": [], "simulate": []}
    requests = 0

    def once() -> None:
        nonlocal requests
        t0 = time.process_time()
        trace = read_trace(files[name])
        t1 = time.process_time()
        prep = prepare_for(trace)
        t2 = time.process_time()
        result = run_prepared([prep], policy, policy.provider)
        t3 = time.process_time()
        for part, seconds in zip(rounds, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            rounds[part].append(seconds)
        requests = len(result.records)

    benchmark.pedantic(once, rounds=ROUNDS, iterations=1)
    figures = {part: statistics.median(seconds) for part, seconds in rounds.items()}
    ratio = (figures["read"] + figures["prepare"]) / figures["simulate"]
    mb = files[name].stat().st_size / 1e6
    rate = mb / (figures["read"] + figures["prepare"])
    benchmark.extra_info.update(figures, requests=requests, read_prepare_over_simulate=ratio, megabytes=mb)
    print(
        f"\n{name} ({mb:.1f} MB, {requests:,} requests, {preset}), medians of {ROUNDS}: read "
        f"{figures['read']:.3f} + prepare {figures['prepare']:.3f} CPU-s against simulate "
        f"{figures['simulate']:.3f}: ratio {ratio:.2f} ({rate:.0f} MB/s)"
    )


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_load_kept_against_simulate(
    benchmark: Any,
    files: dict[str, Path],
    name: str,
    preset: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Warm: each round loads the prepared trace kept in a cache folder of the test's own; the
    first call (reading, preparing and keeping it) is reported as `cold_with_store`."""
    monkeypatch.setenv("CTXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    policy = load_policy(preset)
    path = str(files[name])
    t0 = time.process_time()
    kept = [prepared_file(path)]  # the last result, freed outside the timed parts
    cold = time.process_time() - t0
    rounds: dict[str, list[float]] = {"load": [], "simulate": []}

    def once() -> None:
        t0 = time.process_time()
        pf = prepared_file(path)
        t1 = time.process_time()
        run_prepared([pf.prepared], policy, policy.provider)
        t2 = time.process_time()
        kept[:] = [pf]
        rounds["load"].append(t1 - t0)
        rounds["simulate"].append(t2 - t1)

    benchmark.pedantic(once, rounds=ROUNDS, iterations=1)
    figures = {part: statistics.median(seconds) for part, seconds in rounds.items()}
    ratio = figures["load"] / figures["simulate"]
    benchmark.extra_info.update(figures, cold_with_store=cold, load_over_simulate=ratio)
    print(
        f"\n{name} ({preset}), medians of {ROUNDS}: load {figures['load']:.3f} CPU-s against simulate "
        f"{figures['simulate']:.3f}: ratio {ratio:.2f} (first call, read + prepare + keep: {cold:.3f})"
    )
