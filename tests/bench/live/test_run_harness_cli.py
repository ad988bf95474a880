"""`python -m ctxbench.bench.live.run_harness`: paths resolved (a relative --out works, CODEX_HOME
exists), a missing harness is exit 2 with the install command, a failed run or prefix check exit 1.
A stand-in `codex` executable checks what the real one needs; the real harnesses are exercised
by tests/bench/live/test_live_harnesses.py when installed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ctxbench.bench.live import run_harness

pytest.importorskip("anthropic", reason="the `live` extra is not installed")
needs_node = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="node/npm not installed"
)


def test_missing_harness_is_exit_2_with_the_install_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_harness.main(["codex", "--prefix", "/nonexistent-prefix"]) == 2
    err = capsys.readouterr().err
    assert "npm install --prefix /nonexistent-prefix @anthropic-ai/claude-code @openai/codex" in err


def test_failures_are_problems() -> None:
    ok_res = {"served": 3, "prefix_ok": True, "prefix_findings": ["3 requests -> OK"]}
    assert run_harness.run_problems({"rc": 0}, ok_res) == []
    assert run_harness.run_problems({"rc": 1}, ok_res)
    bad_prefix = {**ok_res, "prefix_ok": False, "prefix_findings": ["3 requests, 1 failing -> FAIL"]}
    assert "FAIL" in run_harness.run_problems({"rc": 0}, bad_prefix)[0]
    assert run_harness.run_problems({"rc": 0}, {**ok_res, "served": 0})


@needs_node
def test_relative_out_is_resolved_and_codex_home_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = tmp_path / "npm"
    bin_dir = prefix / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "codex"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, pathlib, sys\n"
        "home = pathlib.Path(os.environ['CODEX_HOME'])\n"
        "sys.exit(0 if home.is_absolute() and (home / 'config.toml').is_file() else 3)\n"
    )
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    info = run_harness.run("codex", Path("rel/codex"), Path("npm"), timeout=60)
    assert info["rc"] == 0, (tmp_path / "rel/codex/harness.log").read_text(errors="replace")
    assert (tmp_path / "rel" / "codex" / "home" / ".codex" / "config.toml").is_file()
