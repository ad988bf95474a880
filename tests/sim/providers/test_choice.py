"""Provider and model of a run (sim/providers/choice.py): the log's provider for imported traces,
no silent model substitution, an unknown model stops before the first request."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.sim.core.catalog import CatalogError
from ctxbench.sim.providers.choice import choose
from ctxbench.traces.format import read_trace
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import Trace
from tests.real import REAL, needs_real

SAMPLE = Path(__file__).resolve().parents[3] / "traces" / "samples" / "game-300.jsonl"


def _imported(rel: str) -> Trace:
    return import_paths([REAL / rel]).traces[0]


@needs_real
@pytest.mark.parametrize(
    ("rel", "profile", "model"),
    [
        ("codex-tui/binary-size-log.jsonl", "openai-auto", "gpt-5"),
        ("inspect-ai/2025-05-12T20-27-36-04-00_browser.json", "openai-auto", "gpt-4o-mini"),
        ("openhands/output.jsonl", "no-cache", "llama-4-maverick"),
        ("cline-sdk/session.messages.json", "cline", "claude-opus-4-8-fast"),
        ("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl", "anthropic", "claude-opus-4-6"),
    ],
)
def test_an_imported_log_replays_on_the_provider_of_its_model(rel: str, profile: str, model: str) -> None:
    s = choose(_imported(rel), "anthropic")
    assert (s.profile, s.model, s.why, s.note) == (profile, model, "log", "")


@needs_real
def test_provider_option_wins_and_a_family_change_is_noted() -> None:
    tr = _imported("spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    s = choose(tr, "anthropic", "openai-auto")
    assert s.profile == "openai-auto" and s.model == "gpt-4.1" and "instead of claude-opus-4-6" in s.note
    explicit = choose(tr, "anthropic", "openai-auto", "claude-opus-4-6")
    assert explicit.model == "claude-opus-4-6"


def test_a_synthetic_trace_uses_the_preset_provider() -> None:
    tr = read_trace(SAMPLE)
    s = choose(tr, "anthropic")
    assert (s.profile, s.why) == ("anthropic", "preset")


def test_unknown_model_stops_with_the_options() -> None:
    tr = read_trace(SAMPLE)
    tr = replace(tr, header=replace(tr.header, model="gpt-7-turbo"))
    with pytest.raises(CatalogError, match="--model"):
        choose(tr, "anthropic")


@needs_real
def test_run_on_the_codex_log_prices_gpt5_not_claude(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "codex.jsonl"
    assert main(["import", str(REAL / "codex-tui/binary-size-log.jsonl"), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["run", str(out), "--policy", "codex", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"] == "gpt-5" and summary["provider"] == "openai-auto"


def test_run_with_an_unknown_model_exits_2_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rec = tmp_path / "r.jsonl"
    code = main(["run", str(SAMPLE), "--policy", "h-direct", "--model", "gpt-7", "--records", str(rec)])
    err = capsys.readouterr().err
    assert code == 2 and "closest known" in err and "--prices" in err
    assert not rec.exists()


def test_run_on_a_model_only_the_prices_file_knows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The error above names `--prices`: a run given the model's row that way runs on it (the trace
    is prepared for the model after the file's rows are added)."""
    rows = tmp_path / "p.yaml"
    rows.write_text(
        "acme-1:\n  provider: anthropic\n  window: 100000\n  min_cacheable: 1024\n"
        "  input: 1.0\n  output: 2.0\n",
        encoding="utf-8",
    )
    argv = ["run", str(SAMPLE), "--policy", "h-direct", "--model", "acme-1", "--prices", str(rows), "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["model"] == "acme-1"
