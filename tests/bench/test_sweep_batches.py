"""Sweeps hand runs to workers in batches: every run once, in order, one trace per batch; a batch
given the trace itself (as Dask ships it) gives the rows a worker reading the file gives."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ctxbench.bench import runs
from ctxbench.bench.runs import RunTask, make_tasks, run_batch, run_task
from ctxbench.bench.sweep import MAX_BATCH, batches
from ctxbench.traces.format import read_trace

ROOT = Path(__file__).resolve().parents[2]
SHORT = str(ROOT / "traces/samples/game-short.jsonl")


def _task(trace: str, seed: int) -> RunTask:
    return RunTask(trace, "h", "h-direct", "p", 64000, "anthropic", seed)


@given(st.lists(st.sampled_from("abc"), max_size=300), st.integers(1, 8))
def test_batches_cover_every_run_in_order_one_trace_each(traces: list[str], jobs: int) -> None:
    tasks = [_task(t, i) for i, t in enumerate(traces)]
    groups = batches(tasks, jobs)
    assert [t for g in groups for t in g] == tasks
    assert all(g and len({t.trace for t in g}) == 1 and len(g) <= MAX_BATCH for g in groups)


def test_a_shipped_trace_gives_the_same_rows_as_the_file() -> None:
    tasks = make_tasks([SHORT], ["h-direct", "h-keep-last-2"], [48000], [None], [0, 1])
    from_file = [run_task(t) for t in tasks]
    runs._PREPARED.clear()  # the worker's prepared traces: this one must come from the shipped trace
    assert run_batch(tasks, {SHORT: read_trace(SHORT)}) == from_file
