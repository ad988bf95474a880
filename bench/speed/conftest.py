"""Speed suites: pytest-benchmark measurements on CPU time, reported as ratios against a reference."""

from __future__ import annotations

from typing import Any

from ctxbench.bench.throughput import NAIVE_PRESET

SIM = f"test_simulated_requests_per_second[{NAIVE_PRESET}]"
REF = "test_naive_reference_requests_per_second"


def pytest_benchmark_update_json(
    config: Any, benchmarks: list[dict[str, Any]], output_json: dict[str, Any]
) -> None:
    """Add the speed-up of the simulator over the naive reference (same preset and trace)."""
    by_name = {b["name"]: b for b in benchmarks}
    ref, sim = by_name.get(REF), by_name.get(SIM)
    if ref and sim:
        output_json["ratio_sim_over_naive"] = ref["stats"]["median"] / sim["stats"]["median"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    bs = getattr(terminalreporter.config, "_benchmarksession", None)
    if bs is None:
        return
    for b in bs.benchmarks:
        n = b.extra_info.get("requests")
        if n and b.stats and b.name.startswith("test_simulated"):
            terminalreporter.write_line(
                f"{b.name}: {n / b.stats.median:,.0f} simulated requests per CPU-second (median)"
            )
    stats = {b.name: b for b in bs.benchmarks}
    sim, ref = stats.get(SIM), stats.get(REF)
    if sim and ref and sim.stats and ref.stats:
        rps_sim = sim.extra_info.get("requests", 0) / sim.stats.median
        rps_ref = ref.extra_info.get("requests", 0) / ref.stats.median
        terminalreporter.write_line(
            f"ctxbench speed ({NAIVE_PRESET}, CPU time, medians): {rps_sim:,.0f} simulated requests "
            f"per CPU-second, naive full re-hash reference {rps_ref:,.0f}: {rps_sim / rps_ref:,.1f}x"
        )
