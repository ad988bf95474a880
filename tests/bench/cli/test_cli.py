"""The CLI: readable summaries, and one clear line plus a non-zero exit for every bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main

SAMPLE = "traces/samples/game-60.jsonl"


def test_run_prints_a_readable_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", SAMPLE, "--policy", "h-openrouter"]) == 0
    out = capsys.readouterr().out
    assert "read from cache" in out and "cost" in out and "compactions" in out


def test_run_json_and_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec = tmp_path / "r.jsonl"
    assert main(["run", SAMPLE, "--policy", "h-direct", "--json", "--records", str(rec)]) == 0
    data = json.loads(capsys.readouterr().out)
    lines = rec.read_text().splitlines()
    assert data["requests"] == len(lines) > 60
    assert {"miss_cause", "cache_read", "cost"} <= set(json.loads(lines[1]))


def _err(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ctxbench: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_missing_trace_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert "nope.jsonl" in _err(capsys, ["run", "nope.jsonl", "--policy", "h-openrouter"])


def test_malformed_trace_line_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = Path(SAMPLE).read_text().splitlines()
    lines[5] = lines[5].replace('"role":"', '"role":"robot", "x":"')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    err = _err(capsys, ["run", str(bad), "--policy", "h-openrouter"])
    assert f"{bad}:6" in err


def test_unknown_preset_key_lists_valid_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset = tmp_path / "p.yaml"
    text = Path("policies/presets/h-openrouter.yaml").read_text()
    preset.write_text(
        text.replace(
            "eviction: {name: batch, cap: 16, keep: 4}", "eviction: {name: batch, cap: 16, keeep: 4}"
        )
    )
    err = _err(capsys, ["run", SAMPLE, "--policy", str(preset)])
    assert "unknown key 'keeep'" in err and "valid keys: cap, keep" in err
    preset.write_text(text + "colour: blue\n")
    err = _err(capsys, ["run", SAMPLE, "--policy", str(preset)])
    assert "unknown key 'colour'" in err and "valid keys:" in err


def test_unknown_preset_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert "known presets: " in _err(capsys, ["run", SAMPLE, "--policy", "h-nope"])


@pytest.mark.parametrize("budget", ["31999", "200001"])
def test_budget_out_of_range(budget: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert "32000..200000" in _err(capsys, ["run", SAMPLE, "--policy", "h-openrouter", "--budget", budget])


def test_generate_then_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "g.jsonl"
    assert main(["generate", "game", "--turns", "20", "--seed", "3", "-o", str(out)]) == 0
    assert main(["run", str(out), "--policy", "h-keep-last-2"]) == 0
    assert "requests" in capsys.readouterr().out


def test_presets_lists_spec_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "h-openrouter" in out and "H-23" in out
