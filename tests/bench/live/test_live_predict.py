"""ctxbench.bench.live.predict: the simulator predicts when a real harness compacts and what it is billed.

The live test runs Claude Code / Codex CLI (npm, local prefix $CTXBENCH_NPM_PREFIX, default
/tmp/ctxnpm) against `ctxbench serve` and is skipped with the reason when node/npm or the packages
are absent; the other tests check the pieces on small hand-made ledgers and transcripts.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxbench.bench.live.ledger import MAIN, SIDE, SUMMARY, PredictError, load_ledger, rebill, task_of
from ctxbench.bench.live.predict import READ_TOLERANCE, compare, main, threshold_of
from ctxbench.policies.condensers import ClaudeCodeMarks, ThresholdSummary
from ctxbench.policies.preset import load_policy
from ctxbench.policies.view import View
from ctxbench.sim.core.content import Message
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.runner import factory_for

MODEL = "claude-sonnet-4-5"
F = factory_for(MODEL)
HEADER = "x-anthropic-billing-header: cc_version=2.1.197.{}; cc_entrypoint=sdk-cli;"
INSTRUCTION = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. " + "x" * 400
CONTINUATION = (
    "This session is being continued from a previous conversation that ran out of context. " + "s" * 900
)


# ---------------------------------------------------------------- preset components
def _view(tr: Transcript, window: int = 200_000, max_output: int = 64_000) -> View:
    return View(tr, None, window, window, 0, -1, True, 0, max_output, F)


def test_threshold_window_override() -> None:
    """policies.md §1: threshold = (CLAUDE_CODE_AUTO_COMPACT_WINDOW or window) − min(max out, 20k) − 13k;
    the override is the preset's budget (budget_means: window, policies/budget.py)."""
    tr = Transcript((), ())
    base = ThresholdSummary(reserve_output=20_000, buffer=13_000)
    assert base.threshold(_view(tr)) == 167_000
    assert base.threshold(replace(_view(tr), budget=100_000)) == 67_000
    assert ThresholdSummary(trigger=0.9).threshold(replace(_view(tr), budget=100_000)) == 90_000
    assert threshold_of(load_policy("claude-code-live"), "claude-sonnet-4-6") == 67_000
    assert threshold_of(load_policy("claude-code"), "claude-sonnet-4-6") == 167_000
    assert load_policy("codex-live").compaction.threshold(_view(tr)) == 30_000


def _pair(i: int) -> tuple[Message, Message]:
    a = Message.of(
        "assistant",
        (
            F.text("assistant", f"step {i}"),
            F.text("assistant", "{}", kind="tool_use", tool_id=f"t{i}", name="Bash"),
        ),
    )
    u = Message.of("user", (F.text("user", "out " * 50, kind="tool_result", tool_id=f"t{i}"),))
    return a, u


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=6))
def test_compaction_request_mark_moves_to_second_to_last_api_message(pairs: int) -> None:
    """ecosystem.md §3a: the compaction request's message mark sits one API message back (the
    instruction is merged into the last user message), i.e. on the last assistant block."""
    sys_blocks = tuple(F.text("system", f"system {i}") for i in range(3))
    tr = Transcript((), sys_blocks)
    tr.append(Message.of("user", (F.text("user", "prompt"),)))
    for i in range(pairs):
        for m in _pair(i):
            tr.append(m)
    marks = ClaudeCodeMarks(skip_cache_write=True)
    assert [p for p, _ in marks.place(_view(tr))] == [1, 2, len(tr) - 1]  # a normal turn: newest block
    tr.append(Message.of("user", (F.text("user", INSTRUCTION),), "instruction"))
    last_assistant = tr.message_end(len(tr.messages) - 3) - 1
    assert tr.blocks[last_assistant].kind == "tool_use"
    assert [p for p, _ in marks.place(_view(tr))] == [1, 2, last_assistant]
    assert [p for p, _ in ClaudeCodeMarks().place(_view(tr))] == [1, 2, len(tr) - 1]


# ---------------------------------------------------------------- a hand-made Claude Code ledger
def _body(messages: list[dict[str, Any]], fp: str, tools: bool = True, fork: bool = False) -> dict[str, Any]:
    """A request as Claude Code 2.1.197 sends it (ecosystem.md §3a): marks on system[1], system[2]
    and the last block of the last message (of the second-to-last one for the compaction fork)."""
    messages = json.loads(json.dumps(messages))
    target = messages[-2 if fork else -1]["content"]
    if isinstance(target, list):
        target[-1]["cache_control"] = {"type": "ephemeral"}
    body: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": HEADER.format(fp)},
            {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "Be careful. " * 400, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": messages,
    }
    if tools:
        body["tools"] = [
            {
                "name": "Bash",
                "description": "Run a command. " * 50,
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
            }
        ]
    return body


def _a(i: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"cat log{i}"}},
        ],
    }


def _u(i: int, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"line {i} of the log\n" * 200},
            *(extra or []),
        ],
    }


def _reply(i: int | None) -> list[dict[str, Any]]:
    if i is None:
        return [{"type": "text", "text": "Done."}]
    return [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": f"cat log{i}"}},
    ]


def _ledger(folder: Path) -> Path:
    """Claude Code's shape (ecosystem.md §3a): two turns, a mid-turn compaction request (previous
    messages + instruction in the last user message), then summary + the last tool pair."""
    prompt = {"role": "user", "content": [{"type": "text", "text": "Review the build logs."}]}
    cont = {
        "role": "user",
        "content": [
            {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
            {"type": "text", "text": CONTINUATION},
        ],
    }
    bodies = [
        (_body([prompt], "4fb"), _reply(1)),
        (_body([prompt, _a(1), _u(1)], "4fb"), _reply(2)),
        (
            _body([prompt, _a(1), _u(1, [{"type": "text", "text": INSTRUCTION}])], "4fb", fork=True),
            [{"type": "text", "text": "summary " * 200}],
        ),
        (_body([cont, _a(2), _u(2)], "f9d"), _reply(None)),
        (
            _body([{"role": "user", "content": "title?"}], "4fb", tools=False),
            [{"type": "text", "text": "Logs"}],
        ),
    ]
    entries = []
    for i, (body, reply) in enumerate(bodies):
        usage = {"uncached": 0, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0, "output": 40 + i}
        entries.append(
            {
                "seq": i + 1,
                "t": 1.0 + i,
                "api": "anthropic",
                "path": "/v1/messages",
                "conversation": "s",
                "model": MODEL,
                "index": i,
                "usage": usage,
                "reply": reply,
                "cost": 0.0,
                "body": body,
                "headers": {},
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "requests.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    reqs, _f = load_ledger(folder)
    for e, u in zip(entries, rebill(reqs, "anthropic"), strict=True):  # bill as the server would
        e["usage"] = u
    entries.append({"seq": 6, "t": 9.0, "api": "anthropic", "body": {}, "usage": None})  # refused: ignored
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return folder


def test_task_is_the_conversation_without_compaction_requests(tmp_path: Path) -> None:
    reqs, f = load_ledger(_ledger(tmp_path / "cc"))
    assert [r.kind for r in reqs] == [MAIN, MAIN, SUMMARY, MAIN, SIDE]
    task = task_of(reqs, f)
    steps = task.prepared.steps
    assert [s.kind for s in steps] == ["message", "reply", "message", "reply", "message", "reply"]
    replies = [s.message for s in steps if s.kind == "reply"]
    assert [m.tool_use_ids for m in replies if m is not None] == [("toolu_1",), ("toolu_2",), ()]
    assert [s.output_tokens for s in steps if s.kind == "reply"] == [40, 41, 43]  # from each main request
    texts = [b.text or "" for s in steps if s.message for b in s.message.blocks]
    assert not any("TEXT ONLY" in t or "being continued" in t for t in texts)
    assert task.notes == []
    assert task.prepared.system[0].text == HEADER.format("4fb")  # the first request's system prompt


def test_compare_pairs_requests_by_turn_and_names_the_header_change(tmp_path: Path) -> None:
    preset = tmp_path / "tiny.yaml"
    text = (Path(__file__).parents[3] / "policies/presets/claude-code-live.yaml").read_text(encoding="utf-8")
    # a window small enough that this tiny task compacts once: threshold = 35.6k − 20k − 13k = 2.6k
    text = text.replace("budget: 100000", "budget: 35600").replace(
        "summary_bytes: 6000", "summary_bytes: 1000"
    )
    preset.write_text(text, encoding="utf-8")
    c = compare("claude-code", _ledger(tmp_path / "cc"), str(preset))
    assert c.threshold == 2_600
    kinds = [(r.real.kind if r.real else None, r.pred.kind if r.pred else None) for r in c.rows]
    assert kinds == [(MAIN, "turn"), (MAIN, "turn"), (SUMMARY, "summary"), (MAIN, "turn")]
    assert c.real_compactions == c.pred_compactions == [3]
    assert c.compactions_ok
    first, second = c.rows[0], c.rows[1]  # before the compaction the simulation bills what the server did
    assert first.real and first.pred and first.real.usage["cache_write_5m"] == first.pred.cache_write_5m
    assert second.real and second.pred and second.real.usage["cache_read"] == second.pred.cache_read
    assert any("changes at requests 4 (2.1.197.4fb -> 2.1.197.f9d)" in n for n in c.notes), c.notes
    assert any("keeps it out of the cache key" in n for n in c.notes), c.notes
    assert any("side request" in n for n in c.notes)
    assert not any("re-billing" in n for n in c.notes)  # the ledger was billed by the same model
    # the new conversation after the compaction carries another billing header (f9d): the server
    # still reads the tools + system prefix, as the simulation (which keeps the first header) does
    fourth = c.rows[3]
    assert fourth.real and fourth.pred and fourth.real.usage["cache_read"] == fourth.pred.cache_read > 0
    assert set(c.totals) == {"real", "predicted"}


def test_cli_reports_a_missing_ledger_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["codex", "--record", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "requests.jsonl" in err and "\n" not in err


def test_bad_ledger_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "requests.jsonl").write_text('{"seq": 1, "usage": {}}\nnot json\n', encoding="utf-8")
    with pytest.raises(PredictError, match=r"requests.jsonl:1: missing field"):
        load_ledger(tmp_path)


# ---------------------------------------------------------------- the real harnesses
@pytest.mark.slow
@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_real_harness_compactions_and_billing_are_predicted(name: str, tmp_path: Path) -> None:
    """Issue #7: predicted compaction requests within ±1 request of the real ones; cache-read
    totals within READ_TOLERANCE (justified in bench/live/alignment.py) of what the server billed."""
    pytest.importorskip("anthropic", reason="the `live` extra is not installed")
    from ctxbench.bench.live.run_harness import harness_available, npm_prefix, run

    prefix = npm_prefix(None)
    why = harness_available(name, prefix)
    if why:
        pytest.skip(why)
    out = tmp_path / name
    info = run(name, out, prefix, timeout=300)
    assert info["rc"] == 0, (out / "harness.log").read_text(errors="replace")[-2000:]
    c = compare(name, out)
    assert c.real_compactions, "the harness never compacted"
    assert c.compactions_ok, (c.real_compactions, c.pred_compactions)
    assert abs(c.read_delta) <= READ_TOLERANCE, c.totals
    if name == "claude-code":  # its billing header kept out of the cache key: only the continuation text
        assert abs(c.read_delta) <= 0.01, c.totals
