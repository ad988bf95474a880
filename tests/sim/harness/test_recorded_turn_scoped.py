"""Blocks of a trace marked `turn` (sent in their own turn only: Claude Code <= 2.0.29 attachments,
bench/claude_code_wire.md §1): the recorded harness, and the coding-agent harness a preset such as
`claude-code` runs on, keep them for every request of their turn, tool loop included, and drop them
when the next prompt arrives, declared as "turn_scoped" (policies/recorded.py `TurnScopedBlocks`)."""

from __future__ import annotations

import pytest

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.prepared import prepare
from ctxbench.sim.runner import factory_for, run_prepared
from ctxbench.traces.model import Content, Header, MessageEvent, SystemEvent, Trace, Usage

MODEL = "claude-sonnet-4-5"
U = Usage(cache_write_5m=1, output_tokens=10)


def text(s: str, turn: bool = False, tokens: int = 50) -> Content:
    return Content("text", text=s, tokens=tokens, turn=turn)


def _trace() -> Trace:
    call = Content("tool_use", text="{}", tool_id="t1", name="Read", tokens=20)
    events = (
        SystemEvent((Content("text", nbytes=8000, key="sys", tokens=2000),), t=0.0),
        MessageEvent("user", (text("Called the Read tool", turn=True, tokens=30),), t=0.0),
        MessageEvent("user", (text("file", turn=True, tokens=900), text("look at @a.txt")), t=0.0),
        MessageEvent("assistant", (call,), usage=U, t=1.0),
        MessageEvent("user", (Content("tool_result", text="ok", tool_id="t1", tokens=40),), t=2.0),
        MessageEvent("assistant", (text("done"),), usage=U, t=3.0),
        MessageEvent("user", (text("next prompt"),), t=4.0),
        MessageEvent("assistant", (text("sure"),), usage=U, t=5.0),
    )
    return Trace(Header("test", model=MODEL, window=200_000), events)


@pytest.mark.parametrize("policy", ["recorded", "claude-code"])
def test_turn_blocks_stay_for_their_turn_and_leave_at_the_next_prompt(policy: str) -> None:
    seen: list[tuple[int, int]] = []  # (prompt tokens, turn blocks) of each request

    def on_call(req: Request, out: Outcome) -> None:
        blocks = req.tr.blocks[: req.n]
        seen.append((sum(b.tokens for b in blocks), sum(1 for b in blocks if b.turn)))

    prep = prepare(_trace(), factory_for(MODEL))
    recs = run_prepared([prep], load_policy(policy), "anthropic", 0, on_call=on_call).records
    assert len(recs) == 3
    assert [n for _, n in seen] == [2, 2, 0]  # kept within turn 1 (tool loop too), gone in turn 2
    assert seen[1][0] - seen[0][0] == 20 + 40  # the tool call and its result added, nothing dropped
    assert "turn_scoped" in recs[2].edit and recs[2].miss_cause == "turn_scoped"
    assert recs[0].edit == recs[1].edit == ""
    # turn 2's prompt: turn 1 without its 930 tokens of attachments, then the reply and the prompt
    assert seen[2][0] == seen[1][0] - 930 + 50 + 50


def test_without_turn_blocks_nothing_is_dropped() -> None:
    plain = Trace(
        _trace().header,
        tuple(
            MessageEvent(e.role, tuple(c.__class__(**{**c.__dict__, "turn": False}) for c in e.content),
                         usage=e.usage, t=e.t)
            if isinstance(e, MessageEvent) else e
            for e in _trace().events
        ),
    )  # fmt: skip
    recs = run_prepared([prepare(plain, factory_for(MODEL))], load_policy("recorded"), "anthropic", 0).records
    assert all("turn_scoped" not in r.edit for r in recs)
