"""Harness settings as knobs (issue 29): presets reproduce logs recorded at other settings without
hand-edited YAML: a 30k Codex window, opencode at 22k (no 32k floor where the harness allows less),
a Gemini CLI compression threshold of 0.03, the window of a `[1m]` tier from the trace's model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.policies.budget import budget_for
from ctxbench.policies.preset import PresetError, load_policy, with_policy_set
from ctxbench.sim.core.catalog import model_info
from ctxbench.traces.generators.samples import SAMPLES_DIR

TRACE = SAMPLES_DIR / "coding-short.jsonl"


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:
    capsys.readouterr()
    assert main(["run", str(args[0]), *args[1:]]) == 0
    text = capsys.readouterr().out
    assert main(["run", str(args[0]), *args[1:], "--json"]) == 0
    return text.splitlines()[0], json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("preset", "budget"), [("codex", "30k"), ("opencode", "22k")])
def test_a_window_below_32k_is_a_setting_of_the_harness(
    preset: str, budget: str, capsys: pytest.CaptureFixture[str]
) -> None:
    header, small = _run([str(TRACE), "--policy", preset, "--budget", budget], capsys)
    assert f"budget {int(budget[:-1]) * 1000:,} " in header
    _, default = _run([str(TRACE), "--policy", preset], capsys)
    assert small["compactions"] > default["compactions"]  # the smaller window compacts more


def test_working_budgets_keep_their_floor() -> None:
    with pytest.raises(PresetError, match="outside 32000"):
        load_policy("h-direct").with_budget(22_000)


def test_gemini_cli_compression_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    pol = with_policy_set(load_policy("gemini-cli"), ["compaction.threshold=0.03"])
    assert pol.compaction.trigger == pytest.approx(0.03)  # model.compressionThreshold
    _, low = _run([str(TRACE), "--policy", "gemini-cli", "--policy-set", "compaction.threshold=0.03"], capsys)
    _, default = _run([str(TRACE), "--policy", "gemini-cli"], capsys)
    assert low["compactions"] > default["compactions"] == 0


def test_the_1m_tier_window_comes_from_the_trace_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = TRACE.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0]) | {"model": "claude-sonnet-4-6[1m]"}
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n", encoding="utf-8")
    for preset in ("claude-code", "codex"):
        header, out = _run([str(trace), "--policy", preset], capsys)
        assert out["model"] == "claude-sonnet-4-6[1m]"
        assert "budget 1,000,000 (the model window)" in header
    assert budget_for(load_policy("claude-code"), model_info("claude-sonnet-4-6[1m]")) == 1_000_000
