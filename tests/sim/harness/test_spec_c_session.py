"""Harness C across a session's life: a resumed session (trace event `resume`; C-4, C-15, C-2)
and a memory file edited mid-session (a later `system` event; C-1, C-2's memory bucket)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

from ctxbench.bench.cli.context import buckets
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.sim.core.content import IMAGE, Block
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.harness.coding import CodingConversation
from ctxbench.sim.harness.conversation import Conversation
from ctxbench.sim.runner import RunHooks, prepare_for, run_prepared
from ctxbench.traces.generators import generate
from ctxbench.traces.model import ResumeEvent, SystemEvent, Trace


def run_c(
    trace: Trace, policy: Policy, at: tuple[int, ...] = ()
) -> tuple[CodingConversation, list[RequestRecord]]:
    convs: list[Conversation] = []
    hooks = RunHooks(snapshot_at=at, on_conversation=convs.append)
    result = run_prepared([prepare_for(trace)], policy, policy.provider, 0, hooks=hooks)
    conv = convs[0]
    assert isinstance(conv, CodingConversation)
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


@cache
def edited() -> Trace:
    return generate("coding", user_turns=12, seed=2, memory_edit_share=0.5, switch_share=0.0)


def test_c1_replacing_the_system_part_rehashes_from_the_first_changed_block() -> None:
    """C-1: the memory files count in every request; an edited one is in the next request, so
    the transcript's prefix changes from that block on (and equals a transcript built afresh)."""
    prep = prepare_for(edited())
    change = next(s for s in prep.steps if s.kind == "system")
    assert change.message is not None and change.message.tag == "memory_edit"
    tr = Transcript(prep.tools, prep.system)
    for s in prep.steps[:10]:
        if s.message is not None and s.kind in ("message", "reply"):
            tr.append(s.message)
    tr.mark_sent()
    before = list(tr.hashes)
    new = change.message.blocks
    first = next(i for i, (a, b) in enumerate(zip(prep.system, new, strict=True)) if a.digest != b.digest)
    added, messages, total = tr.added_bytes, list(tr.messages), tr.total_tokens
    assert len(messages) >= 5
    pos = tr.replace_system(new)
    assert tr.messages == messages and tr.messages[0] is messages[0]
    delta = sum(b.tokens for b in new) - sum(b.tokens for b in prep.system)
    assert tr.total_tokens == total + delta
    assert pos == tr.tools_end + first and tr.changed_from == pos
    assert tr.hashes[:pos] == before[:pos] and tr.hashes[pos] != before[pos]
    fresh = Transcript(prep.tools, new)
    for m in tr.messages:
        fresh.append(m)
    assert (tr.hashes, tr.cum_tokens, tr.message_bytes, tr.image_pos, tr.msg_starts) == (
        fresh.hashes, fresh.cum_tokens, fresh.message_bytes, fresh.image_pos, fresh.msg_starts,
    )  # fmt: skip
    assert tr.added_bytes == added + sum(b.nbytes for b in new[first:])
    assert tr.replace_system(new) is None


def test_c1_c2_memory_edit_breaks_the_prefix_there_and_is_flagged_in_the_context_view() -> None:
    """Seed 001 (/context): "If you've edited an AGENTS.md since the last request, the row is
    flagged (modified, refreshes next request)". The next request carries the new memory: its
    prefix breaks at the edited memory block (nothing after it is read from the cache) and the
    miss is recorded as a memory edit."""
    trace = edited()
    policy = load_policy("c-default")
    seen: list[tuple[int, int, int]] = []  # (index, first changed block's tokens before, cache read)

    def on_call(req: Request, out: Outcome) -> None:
        if req.tr.changed_from is not None and req.tr.changed_from < req.tr.system_end:
            seen.append((req.index, req.tr.tokens_before(req.tr.changed_from), out.usage.cache_read))

    result = run_prepared([prepare_for(trace)], policy, policy.provider, 0, on_call=on_call)
    edits = [r for r in result.records if "memory_edit" in r.edit]
    n_edits = sum(isinstance(e, SystemEvent) for e in trace.events) - 1
    assert n_edits >= 2 and len(edits) == n_edits
    assert all(r.miss_cause == "memory_edit" and r.miss_tokens > 0 for r in edits)
    assert [i for i, _b, _r in seen] == [r.index for r in edits]
    assert all(read <= before for _i, before, read in seen)  # nothing after the edited block is read
    plain = generate("coding", user_turns=12, seed=2, switch_share=0.0)
    assert "memory_edit_share" not in plain.header.meta["params"]
    at = edits[0].index
    c, _ = run_c(trace, policy, (at - 1, at))
    assert c.snapshots[at].memory_modified and not c.snapshots[at - 1].memory_modified
    keys = [x.key for x in next(e for e in trace.events if isinstance(e, SystemEvent)).content]
    rows = {r.bucket: r for r in buckets(c.snapshots[at], keys)}
    assert rows["Memory"].detail == "modified, refreshes next request"
    assert "modified" not in {r.bucket: r for r in buckets(c.snapshots[at - 1], keys)}["Memory"].detail
