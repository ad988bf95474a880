"""`--policy-set`, `--provider-set` and `--tokenizer` on `compare` and `sweep` (shared with `run`,
bench/cli/_run_options.py): each run of a batch gives exactly what `run` gives with the same
options, the options are part of a sweep's run key, and a bad value is one line before any run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.core.tokens import toktok_available

OPTION_SETS = [
    ["--provider-set", "faults.rates.overloaded=0.3", "--policy-set", "retries=0"],
    ["--provider-set", "random_evict_rate=0.3", "--policy-set", "backoff=3"],
    pytest.param(
        ["--tokenizer", "o200k"],
        marks=pytest.mark.skipif(not toktok_available(), reason="the `tokenizers` extra is not installed"),
    ),
]
FIELDS = ("requests", "failed_requests", "true_input", "cache_read", "cache_write", "output")


@pytest.fixture(scope="module")
def text_trace(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("trace") / "game.jsonl"
    args = ["generate", "game", "--turns", "12", "--set", "full_text=true", "--seed", "3", "-o", str(path)]
    assert main(args) == 0
    return str(path)


def run_json(trace: str, options: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    main(["run", trace, "--policy", "h-direct", "--json", *options])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("options", OPTION_SETS)
def test_compare_and_sweep_runs_equal_run_with_the_same_options(
    text_trace: str, options: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = run_json(text_trace, [], capsys)
    want = run_json(text_trace, options, capsys)
    assert any(plain[f] != want[f] for f in (*FIELDS, "cost")), "the options change nothing"
    assert main(["compare", text_trace, "--policy", "h-direct", "--format", "json", "-j", "1", *options]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert {f: row[f] for f in FIELDS} == {f: want[f] for f in FIELDS}
    assert row["cost"] == pytest.approx(want["cost"], abs=1e-8)
    out = tmp_path / "sweep.csv"
    base = ["sweep", text_trace, "--policy", "h-direct", "--budgets", "120k", "-o", str(out), "-j", "1"]
    assert main([*base, "--quiet", *options]) == 0
    (srow,) = csv.DictReader(out.open())
    assert {f: int(srow[f]) for f in FIELDS} == {f: want[f] for f in FIELDS}
    assert main([*base, "--quiet"]) == 0  # without the options: a different run, computed anew
    (prow,) = csv.DictReader(out.open())
    assert prow["key"] != srow["key"] and int(prow["true_input"]) == plain["true_input"]
    capsys.readouterr()
    assert main([*base, "--json", *options]) == 0  # the same options again: reused from the ledger
    assert json.loads(capsys.readouterr().out)["computed"] == 0


@pytest.mark.parametrize("verb", ["compare", "sweep"])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--provider-set", "faults.rates.rate_limt=0.2"], "did you mean 'rate_limit'?"),
        (["--provider-set", "faults.rates.rate_limit=2"], "expected a number between 0 and 1, got 2"),
        (["--policy-set", "retries=many"], "retries: expected a whole number, got 'many'"),
        (["--policy-set", "retires=1"], "did you mean 'retries'?"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line_errors_before_any_run(
    verb: str, options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.csv"
    argv = [verb, "traces/samples/game-60.jsonl", "--policy", "h-direct", *options]
    argv += ["-o", str(out), "--budgets", "64k"] if verb == "sweep" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("preset", ["c-default", "none"])  # budget_means window / none
def test_compare_runs_presets_without_a_working_budget_at_their_own(
    preset: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A preset whose budget is the model window (0 until a run resolves it) or means nothing
    runs under `compare` exactly as under `run`: the preset's own budget is no override to check
    (compare refused both with 'budget 0 is outside 32000..200000' before)."""
    trace = "traces/samples/coding-short.jsonl"
    capsys.readouterr()
    assert main(["run", trace, "--policy", preset, "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["compare", trace, "--policy", preset, "--format", "json", "-j", "1"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["runs"]
    assert {f: row[f] for f in FIELDS} == {f: want[f] for f in FIELDS}
