"""Harness C end to end, with numbers: every C-* behaviour of the harness and its failure modes."""

from __future__ import annotations

import zlib
from dataclasses import replace
from typing import Any

import simpy

from ctxbench.policies.estimators import AnchoredEstimator
from ctxbench.policies.preset import Policy, load_policy
from ctxbench.policies.tiers import CUsageEstimator
from ctxbench.sim.core.catalog import model_info, prices
from ctxbench.sim.core.provider import Faults, Provider
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.harness.coding import CodingConversation
from ctxbench.sim.prepared import PreparedTrace, Step
from ctxbench.sim.providers.anthropic import AnthropicConfig, AnthropicProvider
from ctxbench.sim.runner import factory_for, prepare_for, run_prepared
from ctxbench.traces.generators.coding import CodingParams, generate

SMALL: dict[str, Any] = {
    "read_bytes": (200, 800),
    "edit_input_bytes": (60, 200),
    "final_bytes": (100, 300),
    "say_bytes": (40, 100),
    "image_share": 0.0,
    "skill_share": 0.0,
    "switch_share": 0.0,
    "idle_seconds": (5.0, 10.0),
}


def run(prep: PreparedTrace, policy: Policy, windows: dict[str, int] | None = None,
        faults: Faults | None = None) -> tuple[CodingConversation, list[RequestRecord]]:  # fmt: skip
    env = simpy.Environment()
    providers: dict[str, Provider] = {}

    def provider_for(m: str) -> Provider:
        if m not in providers:
            info = model_info(m)
            if windows and m in windows:
                info = replace(info, window=windows[m])
            providers[m] = AnthropicProvider(info, prices(m), AnthropicConfig(faults=faults or Faults()), 0)
        return providers[m]

    records: list[RequestRecord] = []
    c = CodingConversation(
        env, "c0", prep, policy, provider_for, factory_for(prep.model), records, zlib.crc32(b"0:c0")
    )
    env.process(c.run())
    env.run()
    return c, records


def with_comp(policy: Policy, **kw: object) -> Policy:
    return replace(policy, compaction=replace(policy.compaction, **kw))


def long_prep(turns: int = 8, **kw: object) -> PreparedTrace:
    params: dict[str, Any] = dict(user_turns=turns, seed=3, image_share=0.0, switch_share=0.0)
    params.update(kw)
    return prepare_for(generate(CodingParams(**params)))


def test_c1_c6_default_compacts_at_90_percent_of_the_window_and_run_completes() -> None:
    c, recs = run(long_prep(12), load_policy("c-default"))
    assert c.outcome.status == "ok" and c.outcome.compactions >= 1
    for r in recs:
        if r.kind == "turn" and not r.error:
            assert r.true_input <= 200_000
    # every compaction fired at >= 90 % of the window by the harness's estimate
    before = [recs[i - 1] for i, r in enumerate(recs) if r.kind == "summary" and i > 0]
    assert before and all(r.true_input > 0.8 * 200_000 for r in before)


def test_c5_c17_fast_mode_trims_and_mode_is_read_live() -> None:
    prep = long_prep(8)
    fast, _ = run(prep, load_policy("c-fast"))
    default, _ = run(prep, load_policy("c-default"))
    assert fast.counters.get("passes", 0) > default.counters.get("passes", 0)
    assert any(e.trigger in ("tier1", "tier2") for e in fast.log) and not any(
        e.trigger in ("tier1", "tier2") for e in default.log
    )
    c = default  # a finished conversation: the mode is an attribute read at each check
    assert c.mode == "default"
    c.set_mode("fast")
    assert c.mode == "fast"


def test_c12_compaction_loop_backs_off() -> None:
    # irreducible context (a huge system prompt) above 90 %: every summary reclaims almost nothing
    prep = prepare_for(
        generate(CodingParams(user_turns=12, seed=1, system_bytes=(560_000, 560_000), **SMALL))
    )
    pol = load_policy("c-default")
    off, off_recs = run(prep, with_comp(pol, backoff=False))
    on, on_recs = run(prep, pol)
    off_sum = sum(1 for r in off_recs if r.kind == "summary")
    on_sum = sum(1 for r in on_recs if r.kind == "summary")
    assert off.counters["unproductive_passes"] >= 20 and off_sum >= 20
    assert on_sum * 3 <= off_sum and on.counters["backoff_skips"] > 0
    assert sum(r.cost for r in on_recs) < sum(r.cost for r in off_recs)


def test_c18_undercounting_estimator_recovers_on_first_retry() -> None:
    pol = replace(load_policy("c-default"), estimator=CUsageEstimator(bytes_per_token=4.0, anchor=False))
    blind = replace(pol, estimator=AnchoredEstimator(bytes_per_token=40.0, image_tokens=150, anchor=False))
    c, recs = run(long_prep(8), blind)
    assert c.counters["too_long_caught"] >= 1
    assert c.counters["too_long_recovered"] == c.counters["too_long_caught"]
    assert c.counters.get("too_long_surfaced", 0) == 0 and c.outcome.status == "ok"
    for i, r in enumerate(recs):
        if r.error == "too_long":  # the retry of the same turn succeeded right after the compaction
            nxt = next(x for x in recs[i + 1 :] if x.kind == "turn")
            assert nxt.error == ""
    off = with_comp(blind, reactive=False)
    c2, _ = run(long_prep(8), off)
    assert c2.outcome.status == "error" and c2.outcome.error == "too_long"


def test_c19_switch_to_smaller_window_above_90_percent_summarizes_first() -> None:
    prep = long_prep(6)
    size = sum(b.tokens for b in (*prep.tools, *prep.system))
    n = 0
    for n, s in enumerate(prep.steps):  # noqa: B007 - the first reply once the context passes 120k
        size += sum(b.tokens for b in s.message.blocks) if s.message else 0
        if s.kind == "reply" and size > 120_000:
            break
    steps = (*prep.steps[:n], Step("switch", model="claude-haiku-4-5"), *prep.steps[n:])
    small = replace(prep, steps=steps)
    c, recs = run(small, load_policy("c-default"), windows={"claude-haiku-4-5": 100_000})
    assert c.counters["switch_summaries"] == 1 and any(e.trigger == "model_switch" for e in c.log)
    first_haiku = next(r for r in recs if r.model == "claude-haiku-4-5" and r.kind == "turn")
    assert first_haiku.error == "" and first_haiku.true_input <= 100_000
    big, _ = run(small, load_policy("c-default"), windows={"claude-haiku-4-5": 1_000_000})
    assert big.counters.get("switch_summaries", 0) == 0  # a larger window touches nothing


def test_c11_outage_falls_back_to_second_model_then_to_trim() -> None:
    prep = long_prep(8)
    _, base = run(prep, load_policy("c-default"))
    first_summary = next(r.index for r in base if r.kind == "summary")
    outage = Faults(scripted={first_summary + i: "overloaded" for i in range(6)})
    c, recs = run(prep, load_policy("c-default"), faults=outage)
    assert c.counters["summary_fallback_model"] >= 1
    assert any(r.kind == "summary" and r.model == "claude-haiku-4-5" and not r.error for r in recs)
    total = Faults(scripted={first_summary + i: "overloaded" for i in range(12)})
    c2, _ = run(prep, load_policy("c-default"), faults=total)
    assert c2.counters["summary_failed"] >= 1 and c2.counters["trim_fallbacks"] >= 1
    assert c2.outcome.status == "ok"  # a failure never loses the conversation


def test_c15_c16_manual_compaction_and_savings() -> None:
    prep = long_prep(4)
    k = max(i for i, s in enumerate(prep.steps) if s.kind == "message")
    manual = Step("compaction", event=type("E", (), {"trigger": "manual"})())
    c, _ = run(replace(prep, steps=(*prep.steps[:k], manual, *prep.steps[k:])), load_policy("c-default"))
    assert c.counters["manual"] == 1 and any(e.trigger == "manual" for e in c.log)
    totals = [e.total for e in c.log]
    assert totals == sorted(totals) and c.log[-1].total == sum(e.saved for e in c.log)
    assert c.notices[0].startswith("Saved ~") and "this session)" in c.notices[0]
    tiny = prepare_for(generate(CodingParams(user_turns=1, seed=0, replies_per_turn=(2, 2), **SMALL)))
    k = max(i for i, s in enumerate(tiny.steps) if s.kind == "reply")
    c2, recs2 = run(replace(tiny, steps=(*tiny.steps[:k], manual, *tiny.steps[k:])), load_policy("c-default"))
    assert "Conversation is already compact." in c2.notices and not any(r.kind == "summary" for r in recs2)


def test_c4_whole_estimate_without_trustworthy_report() -> None:
    prep = long_prep(4)
    c, recs = run(prep, load_policy("c-default"))
    first = recs[0]
    est = CUsageEstimator()
    assert first.estimate == est.whole(c.view()) or first.estimate > 0  # before any report: whole transcript
    turns = [r for r in recs if r.kind == "turn"]
    errs = [abs(r.estimate - r.true_input) / r.true_input for r in turns[1:]]
    assert max(errs) < 0.25  # anchored on reported usage, close to the truth


def test_runner_dispatches_c_and_presets_run() -> None:
    prep = long_prep(3)
    names = ("c-default", "claude-code", "codex", "gemini-cli", "opencode", "masking-10", "llm-summary")
    for name in (
        *names,
        "openhands-llm",
        "openhands-recent",
        "anthropic-clear-tool-uses",
        "langchain-summarization",
    ):
        pol = load_policy(name)
        r = run_prepared([prep], pol, pol.provider, 0)
        assert r.outcomes[0].status == "ok", name
        assert r.records and all(rec.true_input > 0 for rec in r.records)


def test_c2_c3_context_breakdown() -> None:
    from ctxbench.bench.cli.context import buckets, render, snapshot
    from ctxbench.traces.model import SystemEvent

    tr = generate(CodingParams(user_turns=6, seed=0, switch_share=0.0))
    snap = snapshot(tr, load_policy("c-default"), 30)
    assert snap is not None and snap.reported
    keys = [c.key for ev in tr.events if isinstance(ev, SystemEvent) for c in ev.content]
    rows = buckets(snap, keys)
    assert [r.tokens for r in rows] == sorted((r.tokens for r in rows), reverse=True)
    assert {r.bucket for r in rows} >= {"Messages", "System tools", "MCP", "Memory", "Skills", "Sub-agents"}
    assert abs(sum(r.tokens for r in rows) - snap.used) <= len(rows)  # scaled to the reported count
    out = render(snap, rows, 0)
    pct = snap.used / snap.window
    assert ("until auto-compact" in out) == (pct >= 0.4)
    assert ("warning" in out.splitlines()[1]) == (0.5 <= pct < 0.8)


def test_gemini_probe_continues_the_summary_request_and_reads_it_from_cache() -> None:
    # gemini-cli chatCompressionService.ts: the verification probe = the summarizer's contents +
    # the draft summary as a model turn + a verify prompt (it was the same request sent twice,
    # which check-prefix saw as a static-prefix change the conversation kept).
    pol = load_policy("gemini-cli")
    seen: list[tuple[str, Any, int, int]] = []  # (kind, transcript, blocks sent, chained hash at the end)

    def on_call(req: Any, _out: object) -> None:
        seen.append((req.kind, req.tr, req.n, req.tr.hashes[req.n - 1]))

    res = run_prepared([long_prep(12)], pol, pol.provider, 0, on_call=on_call)
    assert res.outcomes[0].status == "ok" and res.outcomes[0].compactions >= 1
    firsts = [i for i, s in enumerate(seen) if s[0] == "summary" and seen[i - 1][0] != "summary"]
    assert firsts
    for i in firsts:
        (_, _, n1, h1), (kind2, tr2, n2, _) = seen[i], seen[i + 1]
        assert kind2 == "summary" and n2 == n1 + 2  # + the draft summary + the verify prompt
        assert tr2.hashes[n1 - 1] == h1  # it contains the summary request whole
        assert [m.role for m in tr2.messages[-2:]] == ["assistant", "user"]
        rec1, rec2 = res.records[i], res.records[i + 1]
        assert rec2.cache_read >= rec1.true_input > 0  # so the probe reads it from the cache
        assert seen[i + 2][0] != "summary"  # summary_calls: 2


def test_c9_c18_coding_long_with_images_compacts_instead_of_overflowing() -> None:
    """C-9 with C-18's "this path stays rare": on coding-long (first image at message 167 of 586)
    the image boundary used to leave nothing to summarize once an image sat behind a summary (9
    empty passes, 7 prompt-too-long recoveries, 5 compactions); with kept images carried, every
    tier-3 pass finds older text to summarize and no request is refused as too long."""
    from pathlib import Path

    from ctxbench.sim.summary import summarize
    from ctxbench.traces.format import read_trace

    sample = Path(__file__).resolve().parents[3] / "traces" / "samples" / "coding-long.jsonl"
    res = run_prepared([prepare_for(read_trace(sample))], load_policy("c-default"))
    s = summarize(res.records, res.outcomes)
    counters = res.outcomes[0].counters
    assert s.status == "ok"
    assert counters.get("too_long_caught", 0) == 0  # C-18: the reactive path was not needed
    assert counters.get("nothing_to_summarize", 0) == 0
    assert s.compactions >= 10
    images = sum(r.images for r in res.records[-1:])
    assert images == 6  # C-9: all six images of the trace are still in the last request


def test_c14_session_log_append_only_entries_point_at_summary_and_first_kept() -> None:
    """C-14: compaction changes what is sent, not what is logged: the session log only grows,
    and each compaction is an entry pointing at the summary and the first kept message; the
    trace (the full history on disk) is untouched."""
    prep = long_prep(10)
    steps_before = prep.steps
    c, recs = run(prep, load_policy("c-default"), windows={"claude-sonnet-4-6": 60_000})
    summaries = [e for e in c.log if e.summary_at >= 0]
    assert len(summaries) >= 2
    assert [e.index for e in c.log] == sorted(e.index for e in c.log)  # appended in order
    for e in summaries:
        assert e.first_kept == e.summary_at + 1
    last = summaries[-1]
    assert any(b.summary for b in c.tr.messages[last.summary_at].blocks)
    assert prep.steps is steps_before and sum(1 for r in recs if r.kind == "summary") == len(summaries)
