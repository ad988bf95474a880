"""Third-party harnesses (Claude Code, Codex CLI) against `ctxbench serve` until they auto-compact.

Named `test_live_harnesses` for .ci/run. Needs node/npm and the packages in a local prefix
($CTXBENCH_NPM_PREFIX, default /tmp/ctxnpm); skipped with the reason when they are absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main as cli
from ctxbench.bench.live.run_harness import analyze, harness_available, npm_prefix, run

pytest.importorskip("anthropic", reason="the `live` extra is not installed")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_harness_compacts_and_simulation_predicts_billing(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefix = npm_prefix(None)
    why = harness_available(name, prefix)
    if why:
        pytest.skip(why)
    info = run(name, tmp_path / name, prefix, timeout=300)
    assert info["rc"] == 0, (tmp_path / name / "harness.log").read_text(errors="replace")[-2000:]
    res = analyze(tmp_path / name, name)
    assert res["compaction_requests"], "the harness never sent a compaction request"
    assert res["usage_mismatches"] == 0
    assert any(r["kind"] == "main" and r["seq"] > res["compaction_requests"][0] for r in res["rows"])
    # the raw ledger, no declarations: every break recognised and explained (bench/prefix/recognise.py)
    log = tmp_path / name / "requests.jsonl"
    assert cli(["check-prefix", str(log), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["breaks"] and all(b["explained"] for b in report["breaks"])
    assert any(b["cls"] == "reset_after_compaction" for b in report["breaks"])
