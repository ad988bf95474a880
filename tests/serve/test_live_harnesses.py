"""Third-party harnesses (Claude Code, Codex CLI) against `ctxbench serve` until they auto-compact.

Named `test_live_harnesses` for .ci/run. Needs node/npm and the packages in a local prefix
($CTXBENCH_NPM_PREFIX, default /tmp/ctxnpm); skipped with the reason when they are absent.
"""

from __future__ import annotations

import pytest

from ctxbench.bench.live.run_harness import analyze, harness_available, npm_prefix, run

pytest.importorskip("anthropic", reason="the `live` extra is not installed")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_harness_compacts_and_simulation_predicts_billing(name: str, tmp_path) -> None:
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
