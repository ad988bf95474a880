"""Best-effort eviction (AnthropicConfig.random_evict_rate, providers.md §1.5) on whole runs."""

from __future__ import annotations

from pathlib import Path

from ctxbench.policies.preset import load_policy
from ctxbench.sim.runner import run_trace
from ctxbench.traces.format import read_trace

SAMPLES = Path(__file__).resolve().parents[3] / "traces" / "samples"


def test_an_entry_read_once_is_drawn_for_eviction_once() -> None:
    """A breakpoint whose lookback reaches back to the entry another breakpoint already read does
    not draw eviction on it again: the run completes (it ended in a KeyError when the read entry
    was dropped after being chosen), and evictions are named as the miss cause."""
    trace = read_trace(SAMPLES / "game-300.jsonl")
    result = run_trace(
        trace, load_policy("h-direct"), "anthropic", 3, provider_params={"random_evict_rate": 0.5}
    )
    assert len(result.records) > 300
    assert sum(r.miss_cause == "evicted" for r in result.records) > 0
