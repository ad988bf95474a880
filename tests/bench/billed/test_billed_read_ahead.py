"""`ctxbench billed FOLDER` reads a folder's Claude Code logs on every core (bench/billed/read_ahead.py
`ReadAhead`): forked children read the later logs of the billing order, the parent sums in order.
The output must not depend on it: the same stdout (table and --json), stderr notes and errors, and
exit status as reading one log after the other, here on a folder where the split matters (a forked
session's copies counted in the earliest log, a sub-agent file, a log the typed reader rejects and
the importer leaves out, one on an unknown model)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxbench.bench.billed import read_ahead
from ctxbench.bench.billed.fast import from_wire, read_requests, to_wire
from ctxbench.bench.billed.read_ahead import ReadAhead
from ctxbench.bench.cli import main
from tests.bench.billed.usage_lines import usage_line

FORK = Path(__file__).parents[1] / "data" / "claude-code-fork"
USAGE = {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
USAGE["output_tokens"] = 5


def _line(k: int, usage: dict[str, object], mid: str, model: str = "claude-sonnet-4-5") -> str:
    return usage_line(k, usage, mid, model, uuid=f"u{k}{mid}")


def _write(path: Path, *lines: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _folder(tmp: Path) -> Path:
    """Two copies of a session and its fork (each copy's requests counted in the first), a session
    with a sub-agent, lines of one message that differ (a reading note), a log the typed reader
    rejects (the importer names the line: left out), a log on an unknown model (no cost)."""
    root = tmp / "projects"
    for name in ("a", "b"):
        shutil.copytree(FORK, root / name)
    more = {**USAGE, "cache_read_input_tokens": 900}
    _write(root / "c" / "differs.jsonl", _line(1, USAGE, "m1"), _line(2, more, "m1"), _line(3, USAGE, "m2"))
    _write(root / "c" / "main.jsonl", _line(4, USAGE, "m3"))
    _write(root / "c" / "main" / "subagents" / "agent-x1.jsonl", _line(5, more, "m4"), _line(6, USAGE, "m1"))
    _write(root / "d" / "bad.jsonl", _line(1, USAGE, "m5"), _line(2, {**USAGE, "input_tokens": "x"}, "m6"))
    _write(root / "d" / "unknown.jsonl", _line(7, USAGE, "m7", model="claude-nonesuch-9"))
    return root


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["billed", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], list[int]]:
    """Sets the cores `ReadAhead` sees (and no size floor); the list fills with the pid of each child
    forked."""
    made: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        made.append(pid)
        return pid

    def cores(n: int) -> list[int]:
        monkeypatch.setattr(read_ahead, "cores", lambda: n)
        monkeypatch.setattr(read_ahead, "PARALLEL_BYTES", 0)
        made.clear()
        return made

    monkeypatch.setattr(os, "fork", fork)
    return cores


@pytest.mark.parametrize("fmt", [[], ["--json"], ["--mode", "calculate"]])
def test_read_ahead_prints_what_reading_in_order_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], forks: Callable[[int], list[int]], fmt: list[str]
) -> None:
    folder = str(_folder(tmp_path))
    made = forks(1)
    alone = _run(capsys, folder, *fmt)
    assert not made  # one core: nothing forked
    assert alone[0] == 2 and "bad.jsonl:2" in alone[2] and "copied from an earlier session" in alone[2]
    for n in (2, 3, 16):
        made = forks(n)
        assert _run(capsys, folder, *fmt) == alone
        assert 0 < len(made) < n


def test_each_log_reads_as_read_requests_reads_it(tmp_path: Path, forks: Callable[[int], list[int]]) -> None:
    """In any order of asking, a log asked for twice, a log that is not there (raised here, when
    asked for) and a run that was never asked for (its child is ended at the `with`'s end)."""
    paths = sorted(_folder(tmp_path).rglob("*.jsonl*"))
    paths = [p for p in paths if "subagents" not in p.parts]
    gone = tmp_path / "gone.jsonl"
    made = forks(2)
    with ReadAhead([*paths, gone]) as read:
        assert made
        for p in [*reversed(paths), paths[0]]:
            assert read(p) == read_requests(p)
        with pytest.raises(FileNotFoundError):
            read(gone)
    before = len(made)
    with ReadAhead(paths, workers=3, min_bytes=0):
        assert len(made) > before
    for pid in made:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # every child was waited for


def test_a_child_that_fails_leaves_its_logs_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Callable[[int], list[int]]
) -> None:
    paths = [p for p in sorted(_folder(tmp_path).rglob("*.jsonl*")) if "subagents" not in p.parts]

    def crash(run: list[Path], fd: int) -> None:
        raise RuntimeError("the child dies")

    monkeypatch.setattr(read_ahead, "_read_into", crash)
    made = forks(2)
    with ReadAhead(paths) as read:
        assert made
        assert [read(p) for p in paths] == [read_requests(p) for p in paths]


def test_the_wire_keeps_every_field(tmp_path: Path) -> None:
    """What a child sends is what the parent would have read: requests equal, in order."""
    for path in _folder(tmp_path).rglob("*.jsonl*"):
        got = read_requests(path)
        assert from_wire(to_wire(got)) == got
        if got is not None:
            assert list(got[0]) == list(from_wire(to_wire(got))[0])  # type: ignore[index]
