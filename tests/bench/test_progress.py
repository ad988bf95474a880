"""Progress bars (bench/progress.py): on stderr only when it is a terminal and neither --quiet nor
--json is asked, so stdout is byte-identical with or without them; an import's bar counts every
byte it parses exactly once."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from ctxbench.bench.cli import main
from ctxbench.bench.progress import Progress, terminal_stderr
from ctxbench.bench.robustness.fuzz_inputs import IMPORTER_SEEDS
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.base import PROGRESS_EVERY, parsed_bytes


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def write_seed(tmp_path: Path, fmt: str, copies: int = 1) -> Path:
    name, seed, jsonl = IMPORTER_SEEDS[fmt]
    path = tmp_path / name
    if jsonl:
        path.write_text("".join(json.dumps(x) + "\n" for x in seed * copies), encoding="utf-8")
    else:
        path.write_text(json.dumps(seed), encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", sorted(IMPORTER_SEEDS))
def test_import_reports_every_parsed_byte_once(tmp_path: Path, fmt: str) -> None:
    path = write_seed(tmp_path, fmt)
    seen: list[int] = []
    token = parsed_bytes.set(seen.append)
    try:
        import_paths([path], fmt)
    finally:
        parsed_bytes.reset(token)
    assert sum(seen) == path.stat().st_size


def test_large_log_reports_while_parsing(tmp_path: Path) -> None:
    one = write_seed(tmp_path, "codex").stat().st_size
    path = write_seed(tmp_path, "codex", copies=3 * PROGRESS_EVERY // one + 1)
    seen: list[int] = []
    token = parsed_bytes.set(seen.append)
    try:
        import_paths([path], "codex")
    finally:
        parsed_bytes.reset(token)
    assert len(seen) >= 3 and sum(seen) == path.stat().st_size


def run(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(argv) == 0
    return capsys.readouterr().out, err.getvalue()


def test_import_bar_on_a_terminal_only_and_stdout_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write_seed(tmp_path, "claude-code")
    argv = ["import", str(src), "-o", str(tmp_path / "t.jsonl")]
    out, err = run(argv, monkeypatch, capsys)
    assert "import" in err and "100%" in err
    quiet_out, quiet_err = run([*argv, "--quiet"], monkeypatch, capsys)
    assert quiet_out == out and quiet_err == ""
    _, json_err = run([*argv, "--json"], monkeypatch, capsys)
    assert json_err == ""
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a log file: no bar
    assert main(argv) == 0
    assert sys.stderr.getvalue() == "" and capsys.readouterr().out == out


def test_terminal_stderr_and_silent_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert terminal_stderr() is sys.stderr
    assert terminal_stderr(quiet=True) is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert terminal_stderr() is None
    silent = Progress(3, 0, None)  # no stream: nothing at all
    silent.update()
    silent.close()
    assert silent.bar is None
