"""Turn starts that read the response before them (bench/fidelity/suggestion_forks.py), on synthetic
logs, and the cause the fidelity report names for one (bench/fidelity/causes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench.bench.cli import main as cli_main
from ctxbench.bench.fidelity.causes import SUGGESTION_READ, likely_cause, suggestion_read
from ctxbench.bench.fidelity.forks import forked_requests, with_prompt_suggestions
from ctxbench.bench.fidelity.results import RequestCompare
from ctxbench.bench.fidelity.suggestion_forks import count, kind_of, main
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.traces.importers.claude_code_wire import may_suggest_prompts
from ctxbench.traces.model import Header, Trace, Usage


def _reply(i: str, t: str, prompt: int, read: int, output: int, version: str) -> dict[str, object]:
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": prompt - read - 3,
        "output_tokens": output,
    }
    message = {"id": i, "model": "claude-sonnet-4-6", "content": [{"type": "text"}], "usage": usage}
    return {"type": "assistant", "timestamp": t, "version": version, "message": message}


def _log(
    tmp_path: Path, read: int, gap_s: int = 30, sidechain: bool = False, version: str = "2.1.150"
) -> Path:
    later = f"2026-05-04T10:{1 + gap_s // 60:02d}:{gap_s % 60:02d}Z"
    tool = {
        "type": "user",
        "timestamp": "2026-05-04T10:00:20Z",
        "message": {"content": [{"type": "tool_result"}]},
    }
    lines = [
        {"type": "user", "timestamp": "2026-05-04T10:00:00Z", "message": {"content": "go"}},
        _reply("m1", "2026-05-04T10:00:10Z", 20_000, 0, 400, version),
        tool,
        _reply("m2", "2026-05-04T10:00:30Z", 21_000, 20_000, 2, version),  # a tool loop: no turn start
        _reply("m2", "2026-05-04T10:00:40Z", 21_000, 20_000, 600, version),  # its last line: final output
        {"type": "user", "timestamp": later, "message": {"content": "next"}, "isSidechain": sidechain},
        _reply("m3", later, 22_000, read, 50, version),
    ]
    folder = tmp_path / "owner__repo"
    folder.mkdir(exist_ok=True)
    path = folder / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("read", "kind"),
    [(21_597, "response"), (21_600, "response"), (21_000, "prompt"), (15_000, "less"), (21_300, "more")],
)
def test_a_turn_start_is_counted_by_what_it_read(tmp_path: Path, read: int, kind: str) -> None:
    path = _log(tmp_path, read)
    acc = count([tmp_path])
    assert acc.counts == {("2.1.150", "owner__repo"): {kind: 1}}
    assert list(acc.unreadable) == [f"{path}:8"]  # named, not read


def test_a_turn_start_after_an_idle_gap_or_in_a_side_chain_is_not_counted(tmp_path: Path) -> None:
    _log(tmp_path, 21_597, gap_s=600)  # 10 minutes: the fork's 5-minute entry is gone
    assert count([tmp_path]).counts == {}
    _log(tmp_path, 21_597, sidechain=True)  # the prompt of a sub-agent's side chain: not the main thread's
    assert count([tmp_path]).counts == {}


def test_the_response_is_told_from_the_prompt_only_when_its_output_is_long_enough() -> None:
    assert kind_of(10_000 + 397, 10_000, 400) == "response"
    assert kind_of(10_000, 10_000, 400) == "prompt"
    assert kind_of(10_003, 10_000, 400) == "prompt"


def test_the_command_reports_and_refuses_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _log(tmp_path, 21_597)
    assert main([str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["turn_starts"] == [
        {"version": "2.1.150", "source": "owner__repo", "response": 1, "prompt": 0, "less": 0, "more": 0}
    ]
    assert main([str(tmp_path)]) == 0
    assert "all: response 1, prompt 0, less 0, more 0" in capsys.readouterr().out
    assert main([str(tmp_path / "absent")]) == 2
    assert "not a folder" in capsys.readouterr().err


def _request(index: int, usage: Usage, predicted_read: int, real_user: bool) -> RequestCompare:
    predicted = SimUsage(usage.input_tokens, predicted_read)
    return RequestCompare(index, 10.0 * index, 10.0, usage, predicted, predicted_read, real_user=real_user)


def test_the_report_names_a_read_of_the_response_before_a_turn_start_on_versions_that_suggest() -> None:
    prev = _request(4, Usage(3, 20_000, 1_000, 0, 600), 20_000, real_user=False)
    start = _request(5, Usage(3, 21_600, 400, 0, 50), 21_003, real_user=True)
    meta = {"format": "claude-code", "version": "2.1.150"}
    assert (
        suggestion_read(start, prev, meta)
        and likely_cause(start, meta, "claude-sonnet-4-6", prev) == SUGGESTION_READ
    )
    assert not suggestion_read(start, prev, {**meta, "version": "2.0.65"})  # before the feature
    assert not may_suggest_prompts("") and may_suggest_prompts("2.0.67")
    mid_turn = _request(5, start.billed, 21_003, real_user=False)  # a tool result: no turn ended
    assert not suggestion_read(mid_turn, prev, meta)
    assert likely_cause(start, meta, "claude-sonnet-4-6", None) != SUGGESTION_READ


def test_the_replay_sends_the_suggestions_only_when_told_and_with_the_conversations_ttl() -> None:
    """`fidelity --assume-prompt-suggestions` (bench/fidelity/forks.py `with_prompt_suggestions`):
    the importer's suggestion rows join the logged forks, each at its own time (the earliest first),
    with the conversation's recorded ttl."""
    meta = {
        "ttl": "1h",
        "forked_requests": [[5.0, 2, "5m"]],
        "suggestion_forks": [[18.0, 2, "5m"], [3.0, 4, "5m"]],
    }
    tr = Trace(Header("s.jsonl", model="claude-sonnet-4-6", meta=meta), (), "s.jsonl")
    assert forked_requests(tr.header.meta) == {2: [(5.0, "5m")]}
    on = with_prompt_suggestions(tr)
    assert forked_requests(on.header.meta) == {2: [(18.0, "1h"), (5.0, "5m")], 4: [(3.0, "1h")]}
    assert on.header.meta["suggestions_assumption"].startswith("prompt suggestions on: 2 forked queries")
    sub = Trace(Header("a.jsonl", model="claude-sonnet-4-6", meta={"ttl": "1h"}), (), "a.jsonl")
    assert with_prompt_suggestions(sub) is sub  # a conversation that could send none: unchanged


def _turn_log(tmp_path: Path) -> Path:
    """Four turns of Claude Code 2.1.150 (a prompt, a text reply each), each turn start reading the
    previous prompt and the response before it, as an account with prompt suggestions shows."""
    lines, prompt = [], 0
    for k in range(4):
        t, answered = f"2026-05-04T10:00:{10 * k:02d}Z", f"2026-05-04T10:00:{10 * k + 2:02d}Z"
        read = prompt + 300 - 3 if k >= 2 else prompt  # from the third turn: the response too
        total = prompt + 300 + 200 if k else 20_000
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": total - read - 3,
        }
        usage["output_tokens"] = 300
        user = {"type": "user", "timestamp": t, "version": "2.1.150", "uuid": f"u{k}", "sessionId": "s"}
        user["message"] = {"role": "user", "content": f"ask {k} " + "x" * 700}
        reply = {"type": "assistant", "timestamp": answered, "version": "2.1.150", "uuid": f"a{k}"}
        reply["sessionId"] = "s"
        reply["requestId"] = f"r{k}"
        reply["message"] = {"id": f"m{k}", "model": "claude-sonnet-4-6", "usage": usage}
        reply["message"]["content"] = [{"type": "text", "text": "y" * 1100}]
        lines += [user, reply]
        prompt = total
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_the_flag_sends_the_forks_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _turn_log(tmp_path)
    assert cli_main(["fidelity", str(log), "--json", "-q"]) == 0
    plain = json.loads(capsys.readouterr().out)[0]
    assert cli_main(["fidelity", str(log), "--json", "-q", "--assume-prompt-suggestions"]) == 0
    on = json.loads(capsys.readouterr().out)[0]
    assert "suggestions_assumption" not in plain and on["suggestions_assumption"].startswith(
        "prompt suggestions on"
    )
    assert on["predicted"]["cache_read"] > plain["predicted"]["cache_read"]
    assert on["within_tolerance"] > plain["within_tolerance"]
