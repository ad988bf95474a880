"""A forked session's copied requests are billed once, in the session that made them (bench/billed/totals.py).

Data (data/claude-code-fork/): Claude Code 2.1.197 from npm against `ctxbench serve`: a session of
five requests, then `claude --resume <it> --fork-session -p ...`, one more request in a new session
whose file first holds copies of the five (same uuid, requestId, timestamps and usage; only the
sessionId differs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.billed.totals import first_time
from ctxbench.bench.cli import main

FORK = Path(__file__).parents[1] / "data" / "claude-code-fork"
ORIGINAL = "46cf19a5-266d-40f5-9c4f-8af3d7f9b417.jsonl.xz"
FORKED = "31d1b59c-1bee-4684-98f5-7b189ab807ea.jsonl.xz"


def _billed(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict[str, dict[str, object]]:
    assert main(["billed", *map(str, paths), "--json"]) == 0
    out = capsys.readouterr()
    assert "5 request(s) copied from an earlier session" in out.err
    return {Path(str(d["session"])).name: d for d in json.loads(out.out)}


def test_the_copies_are_counted_once_in_the_original(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _billed(capsys, FORK)
    assert (rows[ORIGINAL]["requests"], rows[ORIGINAL]["copiedRequests"]) == (5, 0)
    assert (rows[FORKED]["requests"], rows[FORKED]["copiedRequests"]) == (1, 5)
    # the fork's file alone holds all six requests: the two sessions together bill exactly those
    assert main(["billed", str(FORK / FORKED), "--json"]) == 0
    (alone,) = json.loads(capsys.readouterr().out)
    for key in ("requests", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"):
        assert rows[ORIGINAL][key] + rows[FORKED][key] == alone[key]  # type: ignore[operator]


def test_the_order_the_logs_are_given_in_does_not_matter(capsys: pytest.CaptureFixture[str]) -> None:
    one = _billed(capsys, FORK / ORIGINAL, FORK / FORKED)
    other = _billed(capsys, FORK / FORKED, FORK / ORIGINAL)
    assert one == other


def test_first_time_is_the_first_timed_line(tmp_path: Path) -> None:
    """The fork's file starts with an untimed line, then its own process's queue lines (later than
    the copies after them)."""
    assert first_time(FORK / ORIGINAL) < first_time(FORK / FORKED)
    log = tmp_path / "s.jsonl"
    log.write_text('{"type":"mode"}\nnot json\n{"timestamp":"2026-12-04T02:03:01Z"}\n', encoding="utf-8")
    assert first_time(log) == 1796349781.0
    log.write_text('{"type":"mode"}\n', encoding="utf-8")
    assert first_time(log) == 0.0
    (tmp_path / "cut.jsonl.xz").write_bytes((FORK / ORIGINAL).read_bytes()[:100])  # truncated stream
    assert first_time(tmp_path / "cut.jsonl.xz") == 0.0


def test_fidelity_over_the_folder_scores_the_copies_once(capsys: pytest.CaptureFixture[str]) -> None:
    """`fidelity --all-real` replays the fork with its copies (they build its prompt) but scores
    them in the original only: the same requests and cost as `billed`."""
    assert main(["fidelity", "--all-real", str(FORK), "--json", "-q"]) == 0
    rows = {str(d["session"]).split()[0]: d for d in json.loads(capsys.readouterr().out)}
    original, forked = rows[ORIGINAL[:8]], rows[FORKED[:8]]
    assert (original["requests"], forked["requests"], forked["copied_requests"]) == (5, 1, 5)
    assert "copied_requests" not in original
    assert original["within_tolerance"] == forked["within_tolerance"] == 1.0
    assert main(["billed", str(FORK), "--json"]) == 0
    billed = {Path(str(d["session"])).name[:8]: d for d in json.loads(capsys.readouterr().out)}
    for key, row in ((ORIGINAL[:8], original), (FORKED[:8], forked)):
        assert row["billed"]["cost"] == pytest.approx(billed[key]["totalCost"], abs=1e-6)
