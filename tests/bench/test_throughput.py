"""`ctxbench speed`: its figures are consistent with each other and with the runs they time (no
figure is asserted against a speed: that would be a timed assertion)."""

from __future__ import annotations

import json

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.throughput import sample_names


def test_sample_names_are_the_bundled_traces() -> None:
    assert {"game-300", "game-60", "coding-long"} <= set(sample_names())


def test_speed_json_reports_the_slowest_preset_and_the_naive_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["speed", "--preset", "h-direct", "--preset", "none"]
    argv += ["--trace", "game-60", "--trace", "coding-long"]
    assert main([*argv, "--rounds", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["presets"]) == {"h-direct", "none"}
    h, none = data["presets"]["h-direct"], data["presets"]["none"]
    assert h["traces"] == ["game-60", "coding-long"] and h["requests"] > 60
    # coding-long overflows the window when nothing is trimmed: the requests up to the failure count
    assert none["traces"] == ["game-60", "coding-long"] and 61 < none["requests"] < h["requests"]
    for p in (h, none):
        assert p["requests_per_cpu_second"] == pytest.approx(p["requests"] / p["cpu_seconds"], rel=0.01)
    slowest = min(data["presets"], key=lambda name: data["presets"][name]["requests_per_cpu_second"])
    assert data["slowest_preset"] == slowest  # the headline: the slowest of all presets measured
    assert data["requests_per_cpu_second"] == data["presets"][slowest]["requests_per_cpu_second"]
    assert data["reference"] == "h-openrouter on game-60" and data["timer"] == "time.process_time"
    ratio = data["reference_requests_per_cpu_second"] / data["naive_requests_per_cpu_second"]
    assert data["ratio_vs_naive"] == pytest.approx(ratio, rel=0.01)


def test_speed_rejects_an_unknown_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["speed", "--trace", "game-3000"]) == 2
    assert "game-300" in capsys.readouterr().err
