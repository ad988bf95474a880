"""Harness H behaviours that had no test of their own: H-3, H-10, H-12, H-16, H-19, H-24, H-25,
each asserted with the number or the behaviour the seed documents (SPEC.md)."""

from __future__ import annotations

import math
from functools import cache

from ctxbench.policies.estimators import AnchoredEstimator
from ctxbench.policies.preset import load_policy
from ctxbench.policies.view import View
from ctxbench.sim.core.content import IMAGE
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.transcript import Transcript
from ctxbench.sim.runner import factory_for, prepare_for, run_trace
from ctxbench.sim.summary import summarize
from ctxbench.traces.generators.game import GameParams, generate
from ctxbench.traces.model import MessageEvent, SystemEvent, Trace


@cache
def game(turns: int = 160, seed: int = 4) -> Trace:
    return generate(GameParams(turns=turns, seed=seed))


Seen = list[tuple[str, tuple[int, ...], list[tuple[str, str, int, int]]]]


def observed(policy: str, budget: int = 60_000) -> Seen:
    """Per request: its kind, the digests of its system blocks, and per message (role, tag,
    text bytes, images)."""
    seen: Seen = []

    def on_call(req: Request, out: Outcome) -> None:
        tr = req.tr
        sys_digests = tuple(tr.hashes[tr.tools_end : tr.system_end])
        msgs = [(m.role, m.tag, m.nbytes, m.images) for m in tr.messages]
        seen.append((req.kind, sys_digests, msgs))

    run_trace(game(), load_policy(policy).with_budget(budget), on_call=on_call)
    return seen


def test_h3_system_prompt_fixed_for_the_run_changes_travel_in_messages() -> None:
    """H-3: one system prompt for the whole run, byte-identical in every request (compactions
    included); the game clock travels in observations ("Game time left" lines), never in it."""
    tr = game()
    assert sum(isinstance(e, SystemEvent) for e in tr.events) == 1
    seen = observed("h-direct")
    systems = {s for kind, s, _ in seen if kind != "summary_text"}
    assert len(systems) == 1
    clocks = [
        c
        for e in tr.events
        if isinstance(e, MessageEvent)
        for c in e.content
        if (c.text or "").startswith("Game time left")
    ]
    assert clocks, "the clock travels in observations"


def test_h10_h16_plan_and_notebook_only_after_compaction_then_the_new_conversation() -> None:
    """H-10: plan and notebook are not repeated in every request: no request carries them until a
    compaction; H-16: the new conversation is the pinned preparation exchange, ONE message with
    plan, notebook and handoff (handoff 6,000 B + state 1,500 B), the last reply with its tool
    results, and a fresh screenshot."""
    comp = load_policy("h-direct").compaction
    seen = observed("h-direct")
    first = next(i for i, (_k, _s, msgs) in enumerate(seen) if any(t == "handoff" for _r, t, _b, _i in msgs))
    assert all(t != "handoff" for _k, _s, msgs in seen[:first] for _r, t, _b, _i in msgs)
    kind, _s, msgs = seen[first]
    assert kind == "gameplay"
    assert [t for _r, t, _b, _i in msgs[:2]] == ["prep", "reply"]  # pinned exchange first (H-2)
    role, tag, nbytes, _imgs = msgs[2]
    assert (role, tag) == ("user", "handoff")
    assert nbytes == comp.handoff_bytes + comp.state_bytes == 7_500
    assert msgs[3][0] == "assistant"  # the last model reply ...
    assert msgs[4][0] == "user" and msgs[4][3] == 1  # ... its tool results + a fresh screenshot
    assert len(msgs) == 5


def test_h12_estimate_is_bytes_over_2_5_plus_4096_per_image_tools_included() -> None:
    """H-12: before any measurement, text bytes (tool definitions included) / 2.5 + 4,096 tokens per
    image."""
    prep = prepare_for(game(5, 1))
    f = factory_for(prep.model)
    tr = Transcript(prep.tools, prep.system)
    for step in prep.steps:
        if step.kind == "message" and step.message is not None:
            tr.append(step.message)
    view = View(tr, None, 120_000, 200_000, 0, -1, True, factory=f)
    est = AnchoredEstimator()
    assert (est.bytes_per_token, est.image_tokens) == (2.5, 4096)
    images = sum(1 for b in tr.blocks if b.kind == IMAGE)
    assert images >= 1
    tool_bytes = sum(b.nbytes for b in tr.blocks[: tr.tools_end])
    assert tool_bytes > 0 and tool_bytes <= tr.total_bytes  # tool definitions are counted
    assert est.estimate(view) == math.ceil(tr.total_bytes / 2.5) + 4096 * images
    res = run_trace(game(5, 1), load_policy("h-direct"))
    assert res.records[0].estimate == math.ceil((tr.bytes_before(tr.message_end(0))) / 2.5) + 4096 * sum(
        1 for b in tr.blocks[: tr.message_end(0)] if b.kind == IMAGE
    )


def test_h19_usage_summed_over_every_request_split_four_ways() -> None:
    """H-19: usage summed over every request, preparation and compaction included, split into
    uncached, cache reads, cache writes and output, with the share read from cache; a provider
    that reports no cache writes shows 0."""
    res = run_trace(game(), load_policy("h-direct").with_budget(60_000))
    s = summarize(res.records, res.outcomes)
    kinds = {r.kind for r in res.records}
    assert {"preparation", "gameplay", "summary"} <= kinds
    assert s.uncached == sum(r.uncached for r in res.records)
    assert s.cache_read == sum(r.cache_read for r in res.records)
    assert s.cache_write == sum(r.cache_write_5m + r.cache_write_1h for r in res.records)
    assert s.output == sum(r.output for r in res.records)
    assert s.true_input == s.uncached + s.cache_read + s.cache_write
    assert math.isclose(s.cache_read_share, s.cache_read / s.true_input)
    auto = run_trace(game(), load_policy("h-direct").with_budget(60_000), provider="openai-auto")
    sa = summarize(auto.records, auto.outcomes)
    assert sa.cache_write == 0 and sa.cache_read > 0  # automatic caching reports no writes


def test_h24_direct_api_marks_system_prep_end_previous_end_newest() -> None:
    """H-24: four marks: system prompt (covering the tools before it), end of the pinned
    preparation exchange (read again after a compaction), previous request's end, newest."""
    marks: list[tuple[int, ...]] = []
    ends: list[tuple[int, int, int]] = []

    def on_call(req: Request, out: Outcome) -> None:
        tr = req.tr
        marks.append(tuple(p for p, _ttl in req.breakpoints))
        ends.append((tr.system_end - 1, tr.message_end(1) - 1 if len(tr.messages) > 1 else -1, req.n - 1))

    run_trace(game(40, 2), load_policy("h-direct"), on_call=on_call)
    for (sys_end, prep_end, newest), bp in list(zip(ends, marks, strict=True))[2:]:
        assert bp[0] == sys_end and prep_end in bp and bp[-1] == newest
        assert len(bp) <= 4


def test_h25_images_past_16_become_placeholders_full_images_stay_on_disk() -> None:
    """H-25 (with H-9): past 16 unpinned images the oldest are replaced by short placeholders in
    one batch, down to the newest 4 — a per-request image safety limit; the trace (the images on
    disk) is never changed."""
    tr = game()
    before = [c for e in tr.events if isinstance(e, MessageEvent) for c in e.content if c.kind == "image"]
    peak = 0

    def on_call(req: Request, out: Outcome) -> None:
        nonlocal peak
        pinned = sum(1 for b in req.tr.blocks[: req.n] if b.kind == IMAGE and b.pinned)
        peak = max(peak, req.images - pinned)

    res = run_trace(tr, load_policy("h-openrouter"), on_call=on_call)
    assert res.outcomes[0].evictions > 0
    assert peak <= 17  # never more than 16 unpinned images plus the newest one being added
    after = [c for e in tr.events if isinstance(e, MessageEvent) for c in e.content if c.kind == "image"]
    assert after == before


def test_h29_post_episode_interview_is_billed_apart_from_the_run() -> None:
    """H-29: the interview's requests repeat the run's own conversation (so they read its cache)
    but their tokens and cost live apart from the run's totals."""
    from dataclasses import replace

    trace = game(60, 1)
    base = load_policy("h-openrouter")
    plain = run_trace(trace, base)
    interviewed = run_trace(trace, replace(base, interview=3))
    asked = [r for r in interviewed.records if r.kind == "interview"]
    assert len(asked) == 3
    assert all(r.cache_read > 0.9 * r.true_input for r in asked)  # the run's conversation, cached
    s0 = summarize(plain.records, plain.outcomes)
    s1 = summarize(interviewed.records, interviewed.outcomes)
    assert (s1.requests, s1.cost, s1.true_input, s1.output) == (
        s0.requests,
        s0.cost,
        s0.true_input,
        s0.output,
    )
    assert s1.interview_requests == 3
    assert math.isclose(s1.interview_cost, sum(r.cost for r in asked)) and s1.interview_cost > 0
    assert s1.interview_input == sum(r.input_total for r in asked)
