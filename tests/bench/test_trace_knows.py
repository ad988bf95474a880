"""Presets take what the trace knows (bench/trace_knows.py, issue 29): recorded 1h cache marks and
recorded summaries' sizes replace the preset's assumptions; the rest is listed, with values."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.api import load_policy
from ctxbench.bench.cli import main
from ctxbench.bench.trace_knows import apply, value
from ctxbench.policies.budget import budget_for
from ctxbench.policies.view import View
from ctxbench.sim.core.catalog import model_info
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.tokens import BlockFactory
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.prepared import PreparedTrace, Step
from ctxbench.traces.generators.samples import SAMPLES_DIR
from ctxbench.traces.model import CompactionEvent
from tests.real import REAL

SESSION = REAL / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"  # one compaction, 1h marks


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["run", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_synthetic_trace_lists_what_the_preset_assumes(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run([str(SAMPLES_DIR / "coding-short.jsonl"), "--policy", "claude-code"], capsys)
    assert out["from_trace"] == []
    assert "marks.ttl=5m (the trace records no cache marks)" in out["assumptions"]
    assert any(a.startswith("compaction.summary_bytes=8000 ") for a in out["assumptions"])
    set_ttl = _run(
        [str(SAMPLES_DIR / "coding-short.jsonl"), "--policy", "claude-code", "--policy-set", "marks.ttl=1h"],
        capsys,
    )
    assert not any(a.startswith("marks.ttl") for a in set_ttl["assumptions"])
    assert set_ttl["cost"] != out["cost"]


def test_a_bad_component_key_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "run",
                str(SAMPLES_DIR / "coding-short.jsonl"),
                "--policy",
                "claude-code",
                "--policy-set",
                "marks.tl=1h",
            ]
        )
        == 2
    )
    assert "unknown parameter 'tl' (did you mean 'ttl'?)" in capsys.readouterr().err


@pytest.mark.skipif(not SESSION.is_file(), reason="the shared real sessions are not here")
def test_an_imported_session_gives_its_ttl_and_summary_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "s.jsonl"
    assert main(["import", str(SESSION), "-o", str(trace)]) == 0
    out = _run([str(trace), "--policy", "claude-code"], capsys)
    assert out["from_trace"][0].startswith("marks.ttl=1h (the trace records cache marks:")
    assert out["from_trace"][1].startswith("compaction.summary_bytes=12197 ")
    assumed = _run([str(trace), "--policy", "claude-code", "--policy-set", "marks.ttl=5m",
                    "--policy-set", "compaction.summary_bytes=8000"], capsys)  # fmt: skip
    billed = 11.6070  # `ctxbench billed` on the session
    # 144 requests as billed: the real summariser request is not also replayed as a turn (it
    # was, 145 requests, until issue 29); the post-compaction prompt is the billed one (42,600:
    # compaction.summary_tokens, 21,155 after the 21,445-token static prefix)
    assert out["requests"] == 144
    near, far = abs(out["cost"] / billed - 1), abs(assumed["cost"] / billed - 1)
    assert near < 0.03 and near < far


def _compacted(model: str, window: int, *triggers: tuple[str, int]) -> PreparedTrace:
    """A prepared trace on `model` that records compactions (trigger, tokens before)."""
    steps = tuple(
        Step("compaction", None, 0.0, event=CompactionEvent(trigger=t, pre_tokens=n)) for t, n in triggers
    )
    return PreparedTrace("s", model, window, (), (), steps)


def test_the_window_the_harness_compacted_in_is_taken_from_its_recorded_triggers() -> None:
    preset = load_policy("claude-code")  # threshold: window - min(max output, 20k) - 13k
    # a relay's 1M model id that Claude Code ran at its 200k default: compacted at 168,010
    one_m = _compacted("claude-opus-4-6[1m]", 1_000_000, ("auto", 168_010))
    knows = apply(preset, one_m, "claude-code")
    assert knows.policy.budget == 200_000
    assert any(k.startswith("budget=200000 (the window the harness compacted in") for k in knows.from_trace)
    assert budget_for(knows.policy, model_info("claude-opus-4-6[1m]")) == 200_000
    # compacted where the 1M window's threshold is: nothing to take
    assert (
        apply(
            preset, _compacted("claude-opus-4-6[1m]", 1_000_000, ("auto", 968_000)), "claude-code"
        ).policy.budget
        == 0
    )
    # on the 200k window, where its threshold is (167,000): nothing to take
    assert (
        apply(preset, _compacted("claude-opus-4-6", 200_000, ("auto", 167_731)), "claude-code").policy.budget
        == 0
    )
    # a custom auto-compact window (100k: threshold 67,000): the largest window whose threshold fits
    custom = apply(
        preset, _compacted("claude-opus-4-6", 200_000, ("auto", 67_500), ("auto", 70_000)), "claude-code"
    )
    assert custom.policy.budget == 100_500
    # manual compactions say nothing of the window; `--budget` (a budget of the policy's own) wins
    assert (
        apply(
            preset, _compacted("claude-opus-4-6[1m]", 1_000_000, ("manual", 90_000)), "claude-code"
        ).policy.budget
        == 0
    )
    assert apply(preset.with_budget(500_000), one_m, "claude-code").policy.budget == 500_000


@pytest.mark.parametrize(
    ("recorded_by", "policy", "last_usage"),
    [
        ("claude-code 2.0.8", "claude-code", True),
        ("claude-code 2.1.1", "claude-code-live", True),
        ("claude-code 2.1.2", "claude-code", False),  # counts what follows the last usage too
        ("", "claude-code", False),  # no recorded version: the preset as it is
        ("claude-code 2.0.8", "codex", False),  # not a preset of Claude Code
    ],
)
def test_claude_code_up_to_2_1_1_counts_the_last_usage_alone(
    recorded_by: str, policy: str, last_usage: bool
) -> None:
    """npm cli.js 2.0.8-2.1.1 checks auto-compaction against the last response's usage total;
    2.1.2 on adds an estimate of the messages after it (bench/trace_knows.py `estimator`)."""
    prep = PreparedTrace("s", "claude-sonnet-4-5", 200_000, (), (), (), recorded_by=recorded_by)
    knows = apply(load_policy(policy), prep, policy)
    taken = any(k.startswith("estimator=last-usage") for k in knows.from_trace)
    assert taken is last_usage
    assert (type(knows.policy.estimator).__name__ == "LastUsageEstimator") is last_usage


@pytest.mark.parametrize(
    ("recorded_by", "model", "reserve", "threshold"),
    [
        ("claude-code 2.0.8", "claude-sonnet-4-5", 32_000, 155_000),  # dev bruno-vilefort: 155,489
        ("claude-code 2.0.8", "claude-haiku-4-5", 8_192, 178_808),  # any Haiku up to 2.0.23
        ("claude-code 2.0.30", "claude-haiku-4-5", 32_000, 155_000),
        ("claude-code 2.1.20", "claude-opus-4-5", 32_000, 155_000),
        ("claude-code 2.1.21", "claude-sonnet-4-5", 20_000, 167_000),  # the preset's own: nothing taken
        ("claude-code 1.0.51", "claude-sonnet-4-5", 20_000, 167_000),  # 92 % rule: stated, not modelled
    ],
)
def test_the_summary_reserve_is_the_recorded_claude_code_versions(
    recorded_by: str, model: str, reserve: int, threshold: int
) -> None:
    """npm cli.js: up to 2.1.20 Claude Code reserves CLAUDE_CODE_MAX_OUTPUT_TOKENS' default 32,000
    for the summary (8,192 on Haiku up to 2.0.23), from 2.1.21 at most 20,000; before 1.0.71 it
    compacts at 92 % (bench/trace_knows.py `summary_reserve`)."""
    prep = PreparedTrace("s", model, 200_000, (), (), (), recorded_by=recorded_by)
    knows = apply(load_policy("claude-code"), prep, "claude-code")
    assert value(knows.policy, "compaction.reserve_output") == reserve
    view = View(Transcript(), None, 200_000, 200_000, 0, -1, True, max_output=model_info(model).max_output)
    assert knows.policy.compaction.threshold(view) == threshold
    taken = any(k.startswith("compaction.reserve_output=") for k in knows.from_trace)
    assert taken is (reserve != 20_000)
    assert any("92 %" in a for a in knows.assumptions) is recorded_by.endswith("1.0.51")
    # a recorded 2.0.8 trigger above its own threshold says nothing of the window
    if recorded_by.endswith("2.0.8") and "sonnet" in model:
        trig = replace(_compacted(model, 200_000, ("auto", 155_489)), recorded_by=recorded_by)
        assert apply(load_policy("claude-code"), trig, "claude-code").policy.budget == 0


def _marked(system_ttl: str, *message_ttls: str) -> PreparedTrace:
    """A prepared trace whose system block and messages carry these recorded marks."""
    f = BlockFactory()
    system = (replace(f.text("system", "system"), cache=system_ttl),)
    steps = tuple(
        Step("message", Message.of("user", (replace(f.text("user", f"turn {i}"), cache=ttl),)), float(i))
        for i, ttl in enumerate(message_ttls)
    )
    return PreparedTrace("s", "claude-opus-4-6", 200_000, (), system, steps)


def test_marks_of_both_ttls_keep_each_its_own() -> None:
    """A harness that switched between 1h and 5m entries: each block the log marked keeps its own
    TTL, `marks.ttl` (1h, as any 1h mark makes it) is for the rest."""
    preset = load_policy("claude-code")
    mixed = apply(preset, _marked("1h", "1h", "5m", "5m"), "claude-code")
    assert value(mixed.policy, "marks.ttl") == "1h" and value(mixed.policy, "marks.recorded_ttl") is True
    assert any(k.startswith("marks.recorded_ttl=True") for k in mixed.from_trace)
    one = apply(preset, _marked("1h", "1h", "1h"), "claude-code")  # one TTL: `marks.ttl` says it all
    assert value(one.policy, "marks.recorded_ttl") is False
