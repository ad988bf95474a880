"""Harness C across a session's life: a resumed session (trace event `resume`; C-4, C-15, C-2)
and a memory file edited mid-session (a later `system` event; C-1, C-2's memory bucket)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.content import IMAGE, Block
from ctxbench.sim.harness import Conversation
from ctxbench.sim.harness_c import CConversation
from ctxbench.sim.records import RequestRecord
from ctxbench.sim.runner import RunHooks, prepare_for, run_prepared
from ctxbench.traces.generators import generate
from ctxbench.traces.model import ResumeEvent, Trace


def run_c(
    trace: Trace, policy: Policy, at: tuple[int, ...] = ()
) -> tuple[CConversation, list[RequestRecord]]:
    convs: list[Conversation] = []
    hooks = RunHooks(snapshot_at=at, on_conversation=convs.append)
    result = run_prepared([prepare_for(trace)], policy, policy.provider, 0, hooks=hooks)
    conv = convs[0]
    assert isinstance(conv, CConversation)
    return conv, result.records


@cache
def resumed() -> Trace:
    return generate("coding", user_turns=20, seed=0, resume_share=0.3)


POLICY = load_policy("c-default").with_budget(60_000)


def whole(blocks: tuple[Block, ...]) -> int:
    """C's whole-transcript estimate of a request's blocks: text bytes / 4 + ~1.5k per image."""
    text = sum(b.nbytes for b in blocks if b.kind != IMAGE)
    return math.ceil(text / 4.0) + 1_500 * sum(b.kind == IMAGE for b in blocks)


def test_c4_c2_after_a_resume_the_whole_transcript_is_estimated_and_shown_as_local() -> None:
    """C-4: "When there is no trustworthy reported count, such as a fresh or resumed session ...
    the whole pending transcript is estimated instead"; C-2: right after a resume the numbers are
    local estimates, and the view says so. The conversation goes out unchanged, so the request
    after a resume reads the cache like any other (no miss is put on the resume)."""
    trace = resumed()
    n_resumes = sum(isinstance(e, ResumeEvent) for e in trace.events)
    assert n_resumes >= 3
    _c, recs = run_c(trace, POLICY)
    marked = [r for r in recs if "resume" in r.edit]
    assert len(marked) == n_resumes and _c.counters["resumes"] == n_resumes
    turns = [r for r in recs if r.kind == "turn" and "resume" not in r.edit]
    c, _ = run_c(trace, POLICY, tuple(r.index for r in [*marked, *turns]))
    for r in marked:
        snap = c.snapshots[r.index]
        assert r.kind == "turn" and not snap.reported  # a local estimate, and the view says so
        assert r.estimate == snap.used == whole(snap.blocks)  # the whole pending transcript
        # the prefix is unchanged: only an idle gap's expiry or a model switch can lose the cache
        assert r.miss_cause in ("", "ttl_expiry", "model_switch")
    anchored = [r for r in turns if c.snapshots[r.index].reported]
    assert len(anchored) > len(turns) // 2
    assert all(r.estimate != whole(c.snapshots[r.index].blocks) for r in anchored[:50])
    plain = generate("coding", user_turns=20, seed=0)
    assert not any(isinstance(e, ResumeEvent) for e in plain.events)
    assert "resume_share" not in plain.header.meta["params"]  # earlier traces keep their bytes


def test_c15_savings_total_persists_across_resume() -> None:
    """C-15: "The totals are persisted to the session's metadata as they accrue, so they survive
    a restart: resume with --resume and the 'total ~X this session' figure keeps counting from
    where it left off." Every compaction's notice carries its savings and the running total;
    a trace that starts at a resume gives the persisted total (`saved_total`)."""
    trace = resumed()
    c, recs = run_c(trace, POLICY)
    resumed_at = [r.index for r in recs if "resume" in r.edit]
    before = [e for e in c.log if e.index < resumed_at[0]]
    after = [e for e in c.log if e.index > resumed_at[-1]]
    assert before and after  # compactions on both sides of the resumes
    running = 0
    for e in c.log:
        running += e.saved
        assert e.total == running
        assert e.notice == f"Saved ~{e.saved:,} tokens (total ~{running:,} this session)"
    carried = replace(trace, events=(ResumeEvent(saved_total=70_700, t=0.0), *trace.events))
    c2, _ = run_c(carried, POLICY)
    first = c2.log[0]
    assert first.total == 70_700 + first.saved
    assert c2.notices[0] == f"Saved ~{first.saved:,} tokens (total ~{70_700 + first.saved:,} this session)"
