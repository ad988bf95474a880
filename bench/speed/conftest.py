"""Speed suites: pytest-benchmark measurements, reported as ratios against a reference."""

from __future__ import annotations

from typing import Any


def pytest_benchmark_update_json(
    config: Any, benchmarks: list[dict[str, Any]], output_json: dict[str, Any]
) -> None:
    """Add the speed-up of each measured suite over its reference to the saved JSON."""
    by_name = {b["name"]: b for b in benchmarks}
    ref = by_name.get("test_naive_reference_requests_per_second")
    sim = by_name.get("test_simulated_requests_per_second")
    if ref and sim:
        output_json["ratio_sim_over_naive"] = ref["stats"]["mean"] / sim["stats"]["mean"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    bs = getattr(terminalreporter.config, "_benchmarksession", None)
    if bs is None:
        return
    stats = {b.name: b for b in bs.benchmarks}
    sim = stats.get("test_simulated_requests_per_second")
    ref = stats.get("test_naive_reference_requests_per_second")
    if sim and ref and sim.stats and ref.stats:
        n_sim = sim.extra_info.get("requests", 0)
        n_ref = ref.extra_info.get("requests", 0)
        rps_sim = n_sim / sim.stats.min
        rps_ref = n_ref / ref.stats.min
        terminalreporter.write_line(
            f"ctxbench speed: {rps_sim:,.0f} simulated requests/s (best round), naive full re-hash "
            f"reference {rps_ref:,.0f} requests/s: {rps_sim / rps_ref:,.1f}x"
        )
