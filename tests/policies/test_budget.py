"""One budget computation for every harness (policies/budget.py): what `--budget` means per
preset, that harness C honours it, and that presets where it means nothing refuse it."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from ctxbench.bench.live.predict import threshold_of
from ctxbench.policies.budget import BUDGET_MEANINGS, budget_for
from ctxbench.policies.preset import PresetError, load_policy, preset_names
from ctxbench.sim.core.catalog import model_info
from ctxbench.sim.runner import RunResult, run_trace
from ctxbench.sim.summary import summarize
from ctxbench.traces.format import read_trace

ROOT = Path(__file__).resolve().parents[2]
CODING_LONG = ROOT / "traces" / "samples" / "coding-long.jsonl"
MODEL = model_info("claude-sonnet-4-6")  # window 200,000


@cache
def coding_run(policy: str, budget: int | None) -> RunResult:
    return run_trace(read_trace(CODING_LONG), load_policy(policy).with_budget(budget))


def test_every_preset_says_what_its_budget_means() -> None:
    for name in preset_names():
        pol = load_policy(name)
        assert pol.budget_means in BUDGET_MEANINGS, name
        if pol.harness == "H":
            assert pol.budget_means == "working", name  # H-11


def test_budget_for_is_capped_at_the_window() -> None:
    """H-11: a working budget is a setting below the model's limit; a window override is capped
    as Claude Code caps CLAUDE_CODE_AUTO_COMPACT_WINDOW (research/policies.md §1)."""
    h = load_policy("h-direct")
    assert budget_for(h, MODEL) == 120_000  # H-11 default
    assert budget_for(h.with_budget(200_000), MODEL) == 200_000
    c = load_policy("c-default")
    assert budget_for(c, MODEL) == MODEL.window  # C-1: the current model's window
    assert budget_for(c.with_budget(60_000), MODEL) == 60_000
    assert budget_for(load_policy("none"), MODEL) == MODEL.window


@pytest.mark.parametrize("name", [n for n in preset_names() if load_policy(n).budget_means == "none"])
def test_presets_where_a_budget_means_nothing_refuse_it(name: str) -> None:
    with pytest.raises(PresetError, match="takes no --budget"):
        load_policy(name).with_budget(60_000)


@pytest.mark.parametrize("name", [n for n in preset_names() if load_policy(n).budget_means == "window"])
def test_window_presets_thresholds_follow_the_budget(name: str) -> None:
    """Every window preset compacts against the budget: a smaller budget, a lower threshold."""
    pol = load_policy(name)
    small = threshold_of(pol.with_budget(60_000), MODEL.name)
    large = threshold_of(pol.with_budget(200_000), MODEL.name)
    assert small < large, name
    if pol.budget == 0:  # no budget of its own: the model window, as --budget 200000
        assert threshold_of(pol, MODEL.name) == large, name


def test_recorded_has_no_budget_keys_to_pass_a_range_check() -> None:
    text = (ROOT / "policies" / "presets" / "recorded.yaml").read_text(encoding="utf-8")
    assert "budget_max" not in text and "budget_min" not in text
    assert load_policy("recorded").budget_means == "none"


def test_c_default_honours_the_budget_on_coding_long() -> None:
    """The issue's "done when": 60k and 200k differ as a working budget would make them: more
    compactions and less input billed at 60k; no budget = the model window = 200k."""
    small, large, default = (coding_run("c-default", b) for b in (60_000, 200_000, None))
    s, lg = (summarize(r.records, r.outcomes) for r in (small, large))
    assert s.compactions > 2 * lg.compactions
    assert s.true_input < lg.true_input
    assert [r.true_input for r in default.records] == [r.true_input for r in large.records]
    peak_small = max(r.true_input for r in small.records if r.kind == "turn")
    assert peak_small < 0.6 * 200_000  # tier 3 at 90 % of 60k keeps requests far below the window


NONE_60K = ("--policy", "none", "--budget", "60000")


def test_cli_refuses_a_budget_that_means_nothing() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "run", str(CODING_LONG), *NONE_60K],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2
    assert "takes no --budget" in r.stderr and "Traceback" not in r.stderr
