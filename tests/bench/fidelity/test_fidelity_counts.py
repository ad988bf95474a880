"""`fidelity --all-real` accounts, log by log, for the requests `billed` counts (issue 28: every
billed request scored or named; bench/fidelity/counts.py). The causes they once counted differently
on, found on the corpus's development part, each on small synthetic logs: copies of an earlier log's
requests in a conversation not compared (its model unknown), requests recording 0 tokens in a
conversation not compared, a sub-agent's copy of its main conversation's request in one log, and the
copy of a request whose original records 0 tokens."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxbench.bench.billed.logs import requests_per_log
from ctxbench.bench.cli import main
from ctxbench.bench.fidelity.counts import accounted, agree, per_log, per_log_json
from ctxbench.bench.fidelity.discover import discover
from ctxbench.bench.fidelity.report import conversations
from ctxbench.bench.fidelity.results import COPIED as COPIES
from tests.real import REAL, needs_real
from tests.traces.importers.claude_code_lines import turn, write_log

UNKNOWN = "made-up-model-7"  # no catalog row: its conversations are not compared
KNOWN = "claude-opus-4-7"
ZERO = {"input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 0}


def _lines(ids: list[str], model: str, hour: int, zero: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """A conversation of one request per id (each reading the previous prompt), from `hour`:00."""
    lines: list[dict[str, Any]] = []
    prev = 0
    for k, rid in enumerate(ids):
        prompt = 10_000 + 1_500 * k
        usage = {
            "input_tokens": 3, "cache_read_input_tokens": prev,
            "cache_creation_input_tokens": prompt - prev - 3, "output_tokens": 100,
        }  # fmt: skip
        t = f"2026-05-01T{hour:02d}:0{k}"
        lines += turn(
            k, model, ZERO if rid in zero else usage, asked=f"{t}:00Z", answered=f"{t}:05Z",
            message_id=f"m{rid}", request_id=rid,
        )  # fmt: skip
        prev = prompt - 3
    return lines


def _billed(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, dict[str, Any]]:
    main(["billed", str(root), "--json"])  # 2 where a model has no prices: its tokens still counted
    return {str(d["session"])[len(str(root)) + 1 :]: d for d in json.loads(capsys.readouterr().out)}


def _fidelity(capsys: pytest.CaptureFixture[str], root: Path) -> list[dict[str, Any]]:
    assert main(["fidelity", "--all-real", str(root), "--json", "-q"]) == 0
    return list(json.loads(capsys.readouterr().out))


def _agree(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Both commands' output, after checking they count the same requests in every log (through
    `--json` and through the functions the check uses)."""
    billed, fid = _billed(capsys, root), _fidelity(capsys, root)
    counts = {log: int(d["requests"]) for log, d in billed.items()}
    assert agree(per_log_json(fid), counts) == []
    found = discover(root)
    assert agree(per_log(conversations(found)), {lg.rel: n for lg, n in requests_per_log(found.logs)}) == []
    return billed, fid


def test_copies_in_a_conversation_not_compared_are_named_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A resumed session on a model the catalog does not price: its copies of the first session's
    requests are counted there (billed's `copiedRequests`), so fidelity names them too."""
    write_log(tmp_path / "a.jsonl", _lines(["r0", "r1", "r2"], UNKNOWN, 8))
    write_log(tmp_path / "b.jsonl", _lines(["r0", "r1", "r2", "r3"], UNKNOWN, 9))
    billed, fid = _agree(capsys, tmp_path)
    assert (billed["b.jsonl"]["requests"], billed["b.jsonl"]["copiedRequests"]) == (1, 3)
    (b,) = (d for d in fid if d["log"] == "b.jsonl")
    assert (b["requests"], b["copied_requests"], b["billed"]) == (1, 3, None)
    assert UNKNOWN in b["note"]
    main(["billed", str(tmp_path)])  # the note names the log that counted them
    err = capsys.readouterr().err
    assert "b.jsonl: 3 request(s) copied from an earlier session" in err
    assert f"counted there (3 in {tmp_path}/a.jsonl)" in err


def test_zero_token_requests_of_a_conversation_not_compared_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Requests recording 0 tokens in and out are billed ($0, as ccusage counts them) and named by
    fidelity (`usage_unrecorded`), whether the conversation is compared or not."""
    write_log(tmp_path / "a.jsonl", _lines(["r0", "r1", "r2"], UNKNOWN, 8, zero=("r1",)))
    write_log(tmp_path / "k.jsonl", _lines(["k0", "k1", "k2"], KNOWN, 8, zero=("k2",)))
    billed, fid = _agree(capsys, tmp_path)
    assert billed["a.jsonl"]["requests"] == billed["k.jsonl"]["requests"] == 3
    rows = {d["log"]: d for d in fid}
    assert (rows["a.jsonl"]["requests"], rows["a.jsonl"]["usage_unrecorded"]) == (2, 1)
    assert (rows["k.jsonl"]["requests"], rows["k.jsonl"]["usage_unrecorded"]) == (2, 1)


def test_a_sub_agent_copy_of_its_main_request_is_scored_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prompt-suggestion sub-agent's file holds a copy of its main conversation's request (same
    requestId): one request of the session, for billed as for ccusage; fidelity scores it in the main
    conversation and names the copy, even when no other log shares a request."""
    write_log(tmp_path / "s.jsonl", _lines(["r0", "r1", "r2"], KNOWN, 8))
    sub = tmp_path / "s" / "subagents"
    sub.mkdir(parents=True)
    copy_of_r2 = _lines(["r0", "r1", "r2"], KNOWN, 8)[-1]  # its own uuid, as Claude Code writes it
    copy_of_r2 |= {
        "uuid": "c1",
        "parentUuid": None,
        "isSidechain": True,
        "agentId": "aprompt_suggestion-abc123",
    }
    write_log(sub / "agent-aprompt_suggestion-abc123.jsonl", [copy_of_r2])
    billed, fid = _agree(capsys, tmp_path)
    assert billed["s.jsonl"]["requests"] == 3
    main_conv, copy = sorted(fid, key=lambda d: -int(d["requests"]))
    assert main_conv["requests"] == 3
    assert (copy["requests"], copy["copied_requests"]) == (0, 1)
    assert copy["note"] == COPIES.format(n=1)


def test_the_copy_of_a_zero_token_request_is_a_copy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first log records a request with 0 tokens, a later one a copy with its usage: billed counts
    it in the first ($0, ccusage's first-seen entry), so fidelity does not count the copy again."""
    write_log(tmp_path / "a.jsonl", _lines(["r0", "r1"], UNKNOWN, 8, zero=("r1",)))
    write_log(tmp_path / "b.jsonl", _lines(["r0", "r1", "r2"], UNKNOWN, 9))
    billed, fid = _agree(capsys, tmp_path)
    assert (billed["b.jsonl"]["requests"], billed["b.jsonl"]["copiedRequests"]) == (1, 2)
    (b,) = (d for d in fid if d["log"] == "b.jsonl")
    assert (b["requests"], b["copied_requests"]) == (1, 2)


@needs_real
def test_the_shared_sessions_are_counted_alike(capsys: pytest.CaptureFixture[str]) -> None:
    """Every log of the shared folder: the requests billed counts in it are those fidelity
    accounts for (scored, not scored, not compared, unrecorded)."""
    found = discover(REAL)
    billed = {lg.rel: n for lg, n in requests_per_log(found.logs)}
    assert sum(n or 0 for n in billed.values()) > 1000  # the folder was read
    assert agree(per_log_json(_fidelity(capsys, REAL)), billed) == []


def test_the_report_says_how_every_billed_request_is_accounted_for(tmp_path: Path) -> None:
    """The corpus report's line (bench/fidelity/parts.py): billed's total, split as fidelity
    accounts for it; a log counted otherwise would be named."""
    write_log(tmp_path / "a.jsonl", _lines(["r0", "r1", "r2"], UNKNOWN, 8, zero=("r1",)))
    write_log(tmp_path / "b.jsonl", _lines(["r0", "r1", "r2", "r3"], UNKNOWN, 9))
    write_log(tmp_path / "k.jsonl", _lines(["k0", "k1"], KNOWN, 8))
    convs = conversations(discover(tmp_path))
    line = accounted(convs)[0]
    assert "billed` counts them: once over these logs): 6; scored 2, not scored 0" in line
    assert "not compared or not replayed 3, recording 0 tokens 1; 3 copies" in line
    assert line.endswith("Every log counts the requests `billed` counts in it.")
    b = next(k for k, r in enumerate(convs) if r.log.rel == "b.jsonl")
    convs[b] = replace(convs[b], copies=frozenset())  # as before: its copies counted again
    lines = accounted(convs)
    assert "Counted otherwise than `billed` in 1 log(s):" in lines[0]
    assert f"- {tmp_path / 'b.jsonl'}: billed counts 1 request(s), fidelity 4" in lines
