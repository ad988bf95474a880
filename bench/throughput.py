"""Simulated requests per CPU-second, in process, on the bundled sample traces and presets, against
the naive full re-hash reference (bench/naive.py) measured in the same run (`ctxbench speed`).

CPU time (`time.process_time`) rather than wall time, so that other work on a shared machine does
not move the figure. Each preset runs on every sample trace its harness can replay; a run that
ends in a simulated failure (a prompt too long for the window) counts the requests it simulated,
as a sweep does. A preset's figure is its requests over its CPU seconds on those traces, the median
of `rounds` rounds, each round timing every preset in turn. Traces are read and prepared once,
before any timing (as in a sweep). The
headline is the slowest preset measured (issue 13: each bundled preset reaches the target), every
preset's figure reported next to it. The naive reference and the simulator on the same trace and
preset are timed back to back in each round, the simulator repeated for `REFERENCE_CPU` seconds;
the ratio is that of their medians.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ctxbench.bench.naive import naive_run
from ctxbench.policies.preset import Policy, load_policy, preset_names
from ctxbench.sim.core.native import compiled_modules
from ctxbench.sim.prepared import PreparedTrace
from ctxbench.sim.runner import RunResult, prepare_for, run_prepared
from ctxbench.traces.format import read_trace

NAIVE_PRESET = "h-openrouter"  # the reference runs this preset on NAIVE_TRACE, as the speed suite does
NAIVE_TRACE = "game-300"  # (or on the first trace chosen when that one is not)
REFERENCE_CPU = 0.25  # CPU seconds the simulator's side of the naive comparison is timed for per round


@dataclass(frozen=True)
class PresetSpeed:
    """One preset's figure: requests simulated per CPU-second over the traces it runs on."""

    preset: str
    traces: tuple[str, ...]
    requests: int  # per round, over all its traces
    cpu_seconds: float  # median over rounds
    requests_per_cpu_second: float


@dataclass(frozen=True)
class SpeedReport:
    presets: tuple[PresetSpeed, ...]
    naive_requests_per_cpu_second: float
    same_run_requests_per_cpu_second: float  # NAIVE_PRESET on that trace without the re-hash
    reference_trace: str
    rounds: int
    compiled_modules: tuple[str, ...] = ()  # loaded from the mypyc build (sim/core/native.py), if any

    @property
    def headline(self) -> PresetSpeed:
        """The slowest preset measured."""
        return min(self.presets, key=lambda p: p.requests_per_cpu_second)

    @property
    def ratio_vs_naive(self) -> float:
        return self.same_run_requests_per_cpu_second / self.naive_requests_per_cpu_second

    def as_dict(self) -> dict[str, Any]:
        head = self.headline
        return {
            "requests_per_cpu_second": round(head.requests_per_cpu_second),
            "slowest_preset": head.preset,
            "ratio_vs_naive": round(self.ratio_vs_naive, 1),
            "naive_requests_per_cpu_second": round(self.naive_requests_per_cpu_second),
            "reference": f"{NAIVE_PRESET} on {self.reference_trace}",
            "reference_requests_per_cpu_second": round(self.same_run_requests_per_cpu_second),
            "timer": "time.process_time",
            "rounds": self.rounds,
            "compiled_modules": list(self.compiled_modules),
            "presets": {
                p.preset: {
                    "requests_per_cpu_second": round(p.requests_per_cpu_second),
                    "requests": p.requests,
                    "cpu_seconds": round(p.cpu_seconds, 6),  # microseconds: a short run takes a few ms
                    "traces": list(p.traces),
                }
                for p in self.presets
            },
        }


def sample_names() -> list[str]:
    """The bundled sample traces (`traces/samples/*.jsonl`), by name without the suffix."""
    folder = resources.files("ctxbench.traces").joinpath("samples")
    return sorted(p.name[: -len(".jsonl")] for p in folder.iterdir() if p.name.endswith(".jsonl"))


def _sample(name: str) -> PreparedTrace:
    path = resources.files("ctxbench.traces").joinpath("samples", f"{name}.jsonl")
    with resources.as_file(path) as file:
        return prepare_for(read_trace(str(file)))


def cpu_seconds(run: Callable[..., RunResult], *args: Any) -> tuple[float, RunResult]:
    """CPU seconds of one call `run(*args)` (garbage collected before, so one round's garbage does
    not land in the next), and its result."""
    gc.collect()
    start = time.process_time()
    result = run(*args)
    return time.process_time() - start, result


def _replays(trace: PreparedTrace, policy: Policy) -> bool:
    """Whether the preset's harness can replay the trace (a run ending in a simulated failure
    does: its requests up to the failure are simulated work like any other)."""
    try:
        run_prepared([trace], policy, policy.provider)
    except ValueError:  # a preset whose harness cannot replay this trace
        return False
    return True


def measure(
    presets: Sequence[str] | None = None,
    traces: Sequence[str] | None = None,
    rounds: int = 3,
    progress: Callable[[str], None] | None = None,
) -> SpeedReport:
    """Time every preset on every sample trace it runs on, and the naive reference, `rounds` times."""
    say = progress or (lambda _msg: None)
    prepared = {name: _sample(name) for name in (traces or sample_names())}
    chosen: dict[str, tuple[Policy, list[str]]] = {}
    for name in presets or preset_names():
        policy = load_policy(name)
        runnable = [t for t, prep in prepared.items() if _replays(prep, policy)]
        if runnable:
            chosen[name] = (policy, runnable)
        else:
            say(f"{name}: its harness replays none of the sample traces; skipped")
    # Each round times every preset in turn, so that a burst of load from elsewhere on the
    # machine lands in one round of several presets (which the median drops) rather than in
    # every round of one preset.
    per_round: dict[str, list[float]] = {name: [] for name in chosen}
    requests: dict[str, int] = {}
    for _ in range(rounds):
        for name, (policy, runnable) in chosen.items():
            total, count = 0.0, 0
            for t in runnable:
                secs, result = cpu_seconds(run_prepared, [prepared[t]], policy, policy.provider)
                total += secs
                count += len(result.records)
            per_round[name].append(total)
            requests[name] = count
    figures = []
    for name, (_policy, runnable) in chosen.items():
        cpu = statistics.median(per_round[name])
        figures.append(PresetSpeed(name, tuple(runnable), requests[name], cpu, requests[name] / cpu))
        say(f"{name}: {requests[name] / cpu:,.0f} requests per CPU-second on {', '.join(runnable)}")
    reference = load_policy(NAIVE_PRESET)
    ref_trace = NAIVE_TRACE if NAIVE_TRACE in prepared else next(iter(prepared))
    base = prepared[ref_trace]
    sim_rates, naive_rates = [], []
    for _ in range(rounds):  # each round times both, back to back, so both see the same machine load
        sim_rates.append(_rate(run_prepared, [base], reference, reference.provider))
        secs, result = cpu_seconds(naive_run, base, reference)
        naive_rates.append(len(result.records) / secs)
    say("naive full re-hash reference done")
    return SpeedReport(
        tuple(figures),
        statistics.median(naive_rates),
        statistics.median(sim_rates),
        ref_trace,
        rounds,
        tuple(compiled_modules()),
    )


def _rate(run: Callable[..., RunResult], *args: Any) -> float:
    """Requests per CPU-second of `run(*args)`, repeated until REFERENCE_CPU seconds are spent
    (one run of the reference takes milliseconds, its naive counterpart a second: a figure made
    of one short run would carry more timer and scheduling noise than the one it is divided by)."""
    secs = 0.0
    requests = 0
    while secs < REFERENCE_CPU:
        spent, result = cpu_seconds(run, *args)
        secs += spent
        requests += len(result.records)
    return requests / secs


def format_report(report: SpeedReport) -> str:
    rows = [f"{'preset':28} {'req/CPU-s':>10}  traces"]
    for p in sorted(report.presets, key=lambda p: p.requests_per_cpu_second):
        rows.append(f"{p.preset:28} {p.requests_per_cpu_second:>10,.0f}  {', '.join(p.traces)}")
    head = report.headline
    rows += [
        "",
        f"slowest preset: {head.preset}, {head.requests_per_cpu_second:,.0f} simulated "
        f"requests per CPU-second (median of {report.rounds} rounds, time.process_time)",
        f"naive full re-hash reference ({NAIVE_PRESET} on {report.reference_trace}): "
        f"{report.naive_requests_per_cpu_second:,.0f} requests per CPU-second; the simulator "
        f"{report.same_run_requests_per_cpu_second:,.0f}: {report.ratio_vs_naive:,.1f}x",
        f"hot path: compiled ({len(report.compiled_modules)} modules, `ctxbench compile`)"
        if report.compiled_modules
        else "hot path: pure Python (`ctxbench compile` builds the compiled one, sim/core/native.py)",
    ]
    return "\n".join(rows)
