"""A Claude Code "prompt suggestion" side chain (`<session>/subagents/agent-aprompt_suggestion-*.jsonl`)
starts with a copy of its parent's last reply (same message id, requestId and usage) and logs no
reply of its own. That request is scored once, in the main conversation; the side chain then has
nothing of its own to score, and the report and `--json` must say so (not "the log has no
per-request usage" beside `per_request_usage: true`) and name its model as its siblings' (the
catalog's name, not the log's dated id). Synthetic log in the shape of Claude Code 2.1.23
(VercinGetorix447/SystemGoat-Factory in bench/corpus/sessions.csv)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ctxbench.bench.fidelity.discover import Log
from ctxbench.bench.fidelity.fields import session_json
from ctxbench.bench.fidelity.logs import NO_USAGE, not_compared_json, replay_log
from ctxbench.bench.fidelity.report import billed_once, not_compared
from tests.traces.importers.claude_code_lines import turn, write_log

MODEL = "claude-opus-4-5-20251101"  # the log's dated id; the catalog's name is claude-opus-4-5


def _session(tmp_path: Path) -> Path:
    lines: list[dict[str, Any]] = []
    prev = 0
    for k in range(3):
        prompt = prev + (9_000 if k == 0 else 600)
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": prev,
            "cache_creation_input_tokens": prompt - prev - 3,
            "output_tokens": 30,
        }
        t = f"2026-01-31T00:2{k}:00Z"
        lines += turn(
            k, MODEL, usage, asked=t, answered=t.replace(":00Z", ":04Z"),
            message_id=f"msg_01{k:022d}", request_id=f"req_011C{k:020d}",
        )  # fmt: skip
        prev = prompt + 30
    for i, x in enumerate(lines):  # one chain, as Claude Code links its lines
        x["parentUuid"] = lines[i - 1]["uuid"] if i else None
        x["isSidechain"] = False
    log = write_log(tmp_path / "s1.jsonl", lines)
    last = lines[-1]
    copy = {**last, "uuid": "c0", "parentUuid": last["uuid"], "isSidechain": True}
    copy["agentId"] = "aprompt_suggestion-ef2742"
    copy["message"] = {**last["message"], "content": [{"type": "text", "text": "Done."}]}
    ask = {
        "type": "user", "uuid": "c1", "parentUuid": "c0", "isSidechain": True, "sessionId": "s",
        "agentId": "aprompt_suggestion-ef2742", "timestamp": "2026-01-31T00:22:07Z",
        "message": {"role": "user", "content": "[SUGGESTION MODE: Suggest what the user might type next.]"},
    }  # fmt: skip
    sub = tmp_path / "s1" / "subagents"
    sub.mkdir(parents=True)
    write_log(sub / "agent-aprompt_suggestion-ef2742.jsonl", [copy, ask])
    return log


def test_prompt_suggestion_copy_is_scored_once_and_said_so(tmp_path: Path) -> None:
    convs = billed_once(replay_log(Log("s1.jsonl", _session(tmp_path), "claude-code")))
    main = next(r for r in convs if r.name == "main")
    (side,) = (r for r in convs if "prompt_suggestion" in r.name)
    assert main.compared and main.fidelity is not None and main.fidelity.n == 3
    assert side.fidelity is not None and side.fidelity.n == 0 and side.fidelity.copied == 1
    assert not side.compared
    assert side.why_not != NO_USAGE and "copies of another conversation's" in side.why_not
    j = not_compared_json(side, side.name)
    assert j["per_request_usage"] is True and j["copied_requests"] == 1
    assert j["note"] == side.why_not and "totals only" not in j["note"]
    assert j["within_tolerance"] is None and j["billed"] is None
    # named as its sibling is (the catalog's name), not as the log's dated id
    assert j["model"] == session_json(main.fidelity)["model"] == "claude-opus-4-5"
    (line,) = not_compared(convs)[2:-1]
    assert "(claude-opus-4-5)" in line and "scored there" in line


def test_a_log_without_per_request_usage_still_says_so(tmp_path: Path) -> None:
    """The other side of the rule: a conversation with no billed request keeps the plain note and
    `per_request_usage: false`."""
    lines = turn(0, MODEL, {}, asked="2026-01-31T00:20:00Z", answered="2026-01-31T00:20:04Z", message_id="m0")
    lines[1]["message"].pop("usage")
    (r,) = replay_log(Log("x.jsonl", write_log(tmp_path / "x.jsonl", lines), "claude-code"))
    j = not_compared_json(r, r.name)
    assert j["per_request_usage"] is False and j["note"] == NO_USAGE and "copied_requests" not in j


def test_one_log_given_alone_scores_the_copy_once(tmp_path: Path) -> None:
    """`ctxbench fidelity LOG --json` (no --all-real): the same rule, the same note."""
    r = subprocess.run(
        [sys.executable, "-m", "ctxbench.bench.cli", "fidelity", str(_session(tmp_path)), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-500:]
    main, side = json.loads(r.stdout)
    assert main["requests"] == 3 and main["per_request_usage"] is True
    assert side["requests"] == 0 and side["per_request_usage"] is True and side["copied_requests"] == 1
    assert "copies of another conversation's" in side["note"] and side["model"] == main["model"]
