"""Fault injection, retry rules and latency from the command line (`run --provider-set`,
`--policy-set`) and from a provider profile YAML file (`--provider FILE.yaml`), checked like YAML."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.core.profiles import provider_assignments

SAMPLE = "traces/samples/game-60.jsonl"


def test_dotted_assignments_nest() -> None:
    got = provider_assignments(
        ["faults.rates.rate_limit=0.05", "faults.retry_after=3", "latency.base_ttft=1"]
    )
    assert got == {"faults": {"rates": {"rate_limit": 0.05}, "retry_after": 3}, "latency": {"base_ttft": 1}}


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["run", SAMPLE, "--policy", "h-direct", *extra]) == 0
    return capsys.readouterr().out


def test_fault_rates_from_the_cli_inject_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert "request errors      none" in _run(capsys)
    out = _run(capsys, "--provider-set", "faults.rates.rate_limit=0.2")
    assert "rate_limit" in out and "run-ending 0" in out


def test_retry_rules_from_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "--provider-set", "faults.rates.overloaded=0.2", "--policy-set", "retries=0")
    assert "ENDED EARLY" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--provider-set", "faults.rates.rate_limt=0.2"], "did you mean 'rate_limit'?"),
        (["--provider-set", "faults.rates.rate_limit=lots"], "rate_limit: expected a number, got 'lots'"),
        (["--provider-set", "faults.rates.rate_limit=2"], "expected a number between 0 and 1, got 2"),
        (["--policy-set", "retries=many"], "retries: expected a whole number, got 'many'"),
        (["--policy-set", "retires=1"], "did you mean 'retries'?"),
    ],
)  # fmt: skip
def test_bad_knobs_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["run", SAMPLE, "--policy", "h-direct", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_profile_file_sets_faults_and_latency(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "faulty.yaml"
    path.write_text("provider: anthropic\nfaults: {rates: {overloaded: 0.2}, retry_after: 1.5}\n")
    assert "overloaded" in _run(capsys, "--provider", str(path))
    path.write_text("provider: anthropic\nfaults: {rates: {overloaded: high}}\n")
    assert main(["run", SAMPLE, "--policy", "h-direct", "--provider", str(path)]) == 2
    assert "faults.rates.overloaded: expected a number" in capsys.readouterr().err


def test_a_run_whose_retries_run_out_counts_each_failed_request_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every call overloaded, 2 retries: three failed requests, all `overloaded` (none counted
    again as `retries_exhausted`, which is why the run ended: its status); the last one ended the
    run, the two before were retried. `run`, `run --json` and `compare` say the same."""
    import json

    knobs = ["--provider-set", "faults.rates.overloaded=1", "--policy-set", "retries=2"]
    out = _run(capsys, *knobs)
    assert "request errors      overloaded 3   retried or recovered 2 · run-ending 1" in out
    assert "ENDED EARLY, error: retries_exhausted (overloaded after 3 attempts" in out
    assert "retries_exhausted 1" not in out
    s = json.loads(_run(capsys, *knobs, "--json"))
    assert s["failures"] == {"overloaded": 3} and s["failed_requests"] == 3
    assert s["run_ending_requests"] == 1 and s["status"] == "error: retries_exhausted"
    assert main(["compare", SAMPLE, "--policy", "h-direct", "--format", "json", *knobs]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["runs"]
    assert row["failures_overloaded"] == 3 and row["status"] == "retries_exhausted"
    assert not [k for k in row if k == "failures_retries_exhausted"]
    (pol,) = data["policies"]
    assert pol["failures_overloaded"] == 3 and pol["failed_runs_total"] == 1


def test_recovered_transient_errors_end_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    s = json.loads(_run(capsys, "--provider-set", "faults.rates.overloaded=0.2", "--json"))
    assert s["status"] == "ok" and s["run_ending_requests"] == 0
    assert s["failures"] == {"overloaded": s["failed_requests"]} and s["failed_requests"] > 0
