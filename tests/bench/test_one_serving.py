"""One provider and model per trace (issue 29): `run`, `compare` (and so `sweep`, whose runs are
`compare`'s) and `check-prefix --policy` pick the same profile and model for a trace, and `run` and
`compare` give the same cost for the same trace, preset and options, on every preset and every
sample trace. The long samples are marked slow (each pair runs the whole trace twice)."""

from __future__ import annotations

import json

import pytest

from ctxbench.bench.cli import main
from ctxbench.policies.preset import preset_names
from ctxbench.traces.generators.samples import SAMPLES_DIR

QUICK = ("coding-short", "game-short", "game-60")
LONG = ("coding-long", "game-300")
CASES = [
    *((t, p) for t in QUICK for p in preset_names()),
    *(pytest.param(t, p, marks=pytest.mark.slow) for t in LONG for p in preset_names()),
]


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("trace", "policy"), CASES)
def test_run_and_compare_give_the_same_answer(
    trace: str, policy: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(SAMPLES_DIR / f"{trace}.jsonl")
    run = _json(["run", path, "--policy", policy, "--json"], capsys)
    cmp = _json(["compare", path, "--policy", policy, "--format", "json"], capsys)
    (row,) = cmp["runs"]
    assert (row["provider"], row["model"]) == (run["provider"], run["model"])
    assert cmp["served"] == [f"{run['provider']} · {run['model']}"]
    assert row["cost"] == pytest.approx(run["cost"], rel=1e-9, abs=1e-8)
    assert row["requests"] == run["requests"]


def test_a_trace_with_a_model_runs_on_its_provider_whatever_the_preset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's case: codex on coding-long (a Claude trace) ran gpt-4.1 under `run` and ended
    too_long at the trace's switch back to a 200k Claude model, while `compare` finished."""
    path = str(SAMPLES_DIR / "coding-long.jsonl")
    run = _json(["run", path, "--policy", "codex", "--json"], capsys)
    assert (run["provider"], run["model"]) == ("anthropic", "claude-sonnet-4-6")
    assert run["status"] == "ok"
    moved = _json(["run", path, "--policy", "codex", "--json", "--provider", "openai-auto"], capsys)
    assert moved["model"] == "gpt-4.1"  # the profile's own model, said in a note


def test_a_trace_without_a_model_runs_on_the_presets_provider(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES_DIR / "game-short.jsonl")
    run = _json(["run", path, "--policy", "codex", "--json"], capsys)
    assert (run["provider"], run["model"]) == ("openai-auto", "gpt-4.1")


def test_model_option_is_the_same_on_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES_DIR / "coding-short.jsonl")
    opts = ["--model", "claude-haiku-4-5"]
    run = _json(["run", path, "--policy", "claude-code", "--json", *opts], capsys)
    cmp = _json(["compare", path, "--policy", "claude-code", "--format", "json", *opts], capsys)
    assert run["model"] == cmp["runs"][0]["model"] == "claude-haiku-4-5"
    assert run["cost"] == pytest.approx(cmp["runs"][0]["cost"], rel=1e-9, abs=1e-8)


def test_check_prefix_names_what_it_simulated(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES_DIR / "coding-short.jsonl")
    capsys.readouterr()
    main(["check-prefix", path, "--policy", "codex"])
    out = capsys.readouterr().out
    assert "simulated on provider anthropic (trace) · model claude-sonnet-4-6" in out
