"""The check-prefix GitHub Action (.github/actions/check-prefix) and its example workflow: inputs,
steps and pinned versions, and the command line it runs, run here on the workflow's recorded log;
and a preset's own simulated compaction never fails check-prefix (issue 30)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.report import describe
from ctxbench.bench.prefix.request_log import parse_line, simulated_log

ROOT = Path(__file__).resolve().parents[3]
ACTION = ROOT / ".github/actions/check-prefix/action.yml"
WORKFLOW = ROOT / ".github/workflows/prefix-guard-example.yml"


def test_action_is_composite_pinned_and_uploads_sarif() -> None:
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert {"log", "baseline", "allow", "ctxbench-ref", "sarif"} <= set(action["inputs"])
    assert action["inputs"]["log"]["required"] is True
    steps = action["runs"]["steps"]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert all(re.search(r"@v\d+\.\d+\.\d+$", u) for u in uses), uses  # pinned, not a moving major
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert re.fullmatch(r"v\d+\.\d+\.\d+", action["inputs"]["ctxbench-ref"]["default"])
    install = next(s["run"] for s in steps if "pip install" in s.get("run", ""))
    assert "${{ inputs.ctxbench-ref }}" in install
    check = next(s["run"] for s in steps if "check-prefix" in s.get("run", ""))
    assert "--format github" in check and "--sarif-output" in check
    assert steps[-1]["if"].startswith("steps.check.outputs.status") and "exit" in steps[-1]["run"]


def test_example_workflow_runs_the_action_on_a_recorded_log(tmp_path: Path) -> None:
    wf = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    step = next(
        s
        for j in wf["jobs"].values()
        for s in j["steps"]
        if s.get("uses") == "./.github/actions/check-prefix"
    )
    log = ROOT / step["with"]["log"]
    assert log.is_file()
    assert wf["permissions"]["security-events"] == "write"
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    allow = action["inputs"]["allow"]["default"].split()
    sarif = tmp_path / "out.sarif"
    # the action's command line (its `Check the prefix` step), with the action's defaults
    args = [str(log), "--format", "github", "--sarif-output", str(sarif)]
    for c in allow:
        args += ["--allow", c]
    r = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "check-prefix", *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failing" in r.stdout.splitlines()[-1]
    doc = json.loads(sarif.read_text(encoding="utf-8"))
    assert doc["version"] == "2.1.0" and doc["runs"][0]["results"]


def _preset_check(name: str, trace: object) -> list[str]:
    from ctxbench.policies.preset import load_policy

    entries = simulated_log(trace, load_policy(name))
    rep = find_breaks([parse_line(e, 0, f"r{i}") for i, e in enumerate(entries)])
    return [describe(b) for b in rep.failing]


@pytest.mark.parametrize(
    ("name", "seed"), [("c-default", 2), ("codex", 2), ("gemini-cli", 2), ("c-default", 3)]
)
def test_a_presets_compaction_after_a_model_switch_never_fails(name: str, seed: int) -> None:
    # the cases: `generate coding --seed 2`, check-prefix --policy c-default/codex/gemini-cli
    from ctxbench.traces.generators.spec import GenSpec

    assert _preset_check(name, GenSpec("coding", {"seed": seed}, "test").generate()) == []


@pytest.mark.exhaustive  # ~10 min on 2 cores: every preset x sample x generate coding/game seed 0-4
def test_every_presets_own_compaction_never_fails_check_prefix() -> None:
    from ctxbench.policies.preset import preset_names
    from ctxbench.traces.format import read_trace
    from ctxbench.traces.generators.spec import GenSpec

    traces = {p.stem: read_trace(p) for p in sorted((ROOT / "traces/samples").glob("*.jsonl"))}
    for g in ("coding", "game"):
        for seed in range(5):
            traces[f"{g}-{seed}"] = GenSpec(g, {"seed": seed}, "test").generate()
    bad = {
        (name, t): fails
        for name in preset_names()
        for t, trace in traces.items()
        if (fails := _preset_check(name, trace))
    }
    assert bad == {}
