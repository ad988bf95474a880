"""H-30: an episode of a learning series (the preparation message names the episode and carries the
playbook as the previous episode left it; the post-compaction message carries its revision; 29
tools instead of 26, H-1) and its reflection requests (H-21: they repeat the conversation with the
run's session id; billed with the run, unlike the interview of H-29)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.runner import run_trace
from ctxbench.sim.summary import summarize
from ctxbench.traces.generators import generate
from ctxbench.traces.generators.game_episode import PLAYBOOK_TOOLS
from ctxbench.traces.model import PLAYBOOK_KEY, MessageEvent, ToolsEvent, Trace


@cache
def episode(k: int = 2, n: int = 5, turns: int = 160) -> Trace:
    return generate("game", turns=turns, seed=4, episode=k, episodes=n)


def test_h30_h1_preparation_names_the_episode_and_carries_the_playbook_29_tools() -> None:
    """H-30: "episode k of n" and the playbook as the previous episode left it, in the pinned
    preparation message (H-2), before the construction guide; H-1: 29 tools in a series episode."""
    trace = episode()
    tools = next(e for e in trace.events if isinstance(e, ToolsEvent))
    assert len(tools.tools) == 29 and {t.name for t in tools.tools} >= set(PLAYBOOK_TOOLS)
    prep = next(e for e in trace.events if isinstance(e, MessageEvent))
    assert prep.tag == "prep" and prep.pinned
    texts = [c.text for c in prep.content if c.text]
    assert "This is episode 2 of 5 of a learning series." in texts
    keys = [c.key for c in prep.content]
    assert keys.index(PLAYBOOK_KEY) < keys.index("guide")  # the guide image follows (H-26)
    plain = generate("game", turns=160, seed=4)
    plain_tools = next(e for e in plain.events if isinstance(e, ToolsEvent))
    assert len(plain_tools.tools) == 26
    assert all(c.key != PLAYBOOK_KEY for e in plain.events if isinstance(e, MessageEvent) for c in e.content)
    full = generate("game", turns=3, episode=1, episodes=3, full_text=True)
    book = [c for e in full.events if isinstance(e, MessageEvent) for c in e.content if c.key == PLAYBOOK_KEY]
    assert len(book) == 1 and book[0].text  # the key is kept on full text too (the simulator finds it)


def handoffs(trace: Trace, policy: str = "h-direct", budget: int = 60_000) -> list[int]:
    """Text bytes of the post-compaction message (tag handoff) of every request carrying one."""
    sizes: list[int] = []

    def on_call(req: Request, out: Outcome) -> None:
        sizes.extend(m.nbytes for m in req.tr.messages if m.tag == "handoff")

    run_trace(trace, load_policy(policy).with_budget(budget), on_call=on_call)
    return sizes


def test_h30_h16_post_compaction_message_carries_the_playbook_revision() -> None:
    """H-30 with H-16: the one message after the pinned exchange holds plan + notebook (1,500 B),
    the handoff (6,000 B) and, in a learning series, the playbook's revision (as large as the
    playbook the episode started with: the seed gives no revision size)."""
    trace = episode()
    book = sum(c.size for e in trace.events if isinstance(e, MessageEvent) for c in e.content
               if c.key == PLAYBOOK_KEY)  # fmt: skip
    assert 1_500 <= book <= 4_000
    series = handoffs(trace)
    plain = handoffs(generate("game", turns=160, seed=4))
    assert series and plain
    assert set(plain) == {6_000 + 1_500}
    assert set(series) == {6_000 + 1_500 + book}


def test_h30_h21_reflection_requests_repeat_the_conversation_billed_with_the_run() -> None:
    """Reflection requests (seed 000, H-21): they repeat the run's conversation outside the main
    loop, carry the run's id as the session id (so they read the same upstream's cache), and are
    billed with the run: the seed sets only the interview's usage apart (H-29)."""
    trace = episode(turns=60)
    base = load_policy("h-openrouter")
    sessions: list[tuple[str, str | None]] = []

    def on_call(req: Request, out: Outcome) -> None:
        sessions.append((req.kind, req.session_id))

    plain = run_trace(trace, base, base.provider)
    reflected = run_trace(trace, replace(base, reflection=2, interview=1), base.provider, on_call=on_call)
    kinds = [r.kind for r in reflected.records]
    assert kinds[-3:] == ["reflection", "reflection", "interview"]  # at the episode's end
    reflections = [r for r in reflected.records if r.kind == "reflection"]
    assert all(r.cache_read > 0.9 * r.true_input for r in reflections)  # the run's conversation
    run_id = reflected.records[0].conversation
    assert {s for k, s in sessions if k in ("reflection", "interview", "gameplay")} == {run_id}
    s0 = summarize(plain.records, plain.outcomes)
    s1 = summarize(reflected.records, reflected.outcomes)
    assert s1.requests == s0.requests + 2 and s1.by_kind["reflection"] == 2
    assert math.isclose(s1.cost, s0.cost + sum(r.cost for r in reflections))
    assert s1.interview_requests == 1  # the interview alone stays apart
