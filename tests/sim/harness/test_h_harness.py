"""Harness H end to end on generated game traces: the documented numbers (H-4, H-8, H-9, H-11,
H-14..H-18) reproduced by the simulator."""

from __future__ import annotations

import io
from dataclasses import replace
from functools import cache

import pytest

from ctxbench.policies.preset import PresetError, load_policy, preset_names
from ctxbench.sim.core.provider import Outcome, Request
from ctxbench.sim.core.records import write_jsonl
from ctxbench.sim.runner import RunResult, run_trace
from ctxbench.traces.generators.game import GameParams, generate
from ctxbench.traces.model import Trace


@cache
def game(turns: int = 300, seed: int = 0) -> Trace:
    return generate(GameParams(turns=turns, seed=seed))


@cache
def run(policy: str, turns: int = 300, seed: int = 0) -> RunResult:
    return run_trace(game(turns, seed), load_policy(policy))


def lost(r) -> int:  # type: ignore[no-untyped-def]
    """Input tokens of a request not read from the cache."""
    return r.uncached + r.cache_write_5m + r.cache_write_1h


def test_keep_last_2_every_new_screenshot_breaks_the_prefix() -> None:
    """H-8: keeping only the two newest screenshots makes every new one a miss of the whole
    conversation after the cached system and tools (20-47k measured once the run had grown)."""
    res = run("h-keep-last-2")
    evictions = [r for r in res.records if "eviction" in r.edit]
    assert len(evictions) > 200
    for r in evictions:
        assert r.miss_cause == "eviction"
        assert r.miss_tokens > 0
    steady = [lost(r) for r in evictions if r.true_input >= 30_000]
    assert len(steady) > 100
    assert min(steady) >= 20_000  # H-8: each new screenshot cost 20-47k uncached tokens
    assert max(steady) <= 80_000  # bounded by the 65 % compaction trigger of the 120k budget


def test_batch_eviction_one_miss_per_batch_and_far_cheaper() -> None:
    """H-9: past 16 unpinned images the oldest are replaced in one batch down to the newest 4:
    one cache miss per batch instead of one per new image."""
    batch, keep2 = run("h-openrouter"), run("h-keep-last-2")
    evictions = [r for r in batch.records if "eviction" in r.edit]
    assert len(evictions) == batch.outcomes[0].evictions > 0
    assert all(r.edit_detail == 13 for r in evictions)  # 17 unpinned -> newest 4
    assert sum(1 for r in batch.records if r.miss_cause == "eviction") == len(evictions)
    cost_batch = sum(r.cost for r in batch.records)
    cost_keep2 = sum(r.cost for r in keep2.records)
    assert cost_batch < 0.4 * cost_keep2


@pytest.mark.parametrize("policy", [p for p in preset_names() if load_policy(p).harness == "H"])
def test_prefix_stability_every_break_is_declared(policy: str) -> None:
    """H-4: each request starts with the previous one unchanged unless a recorded compaction or
    eviction explains the break, and the record names that cause."""
    calls: list[tuple[Request, list[int]]] = []

    def observe(req: Request, out: Outcome) -> None:
        calls.append((req, list(req.tr.hashes[: req.n])))

    res = run_trace(game(120, 3), load_policy(policy), on_call=observe)
    assert len(calls) == len(res.records)
    breaks = 0
    for (prev_req, prev), (req, cur), rec in zip(calls, calls[1:], res.records[1:], strict=False):
        if prev_req.tr is not req.tr:
            continue  # the text-only summary retry is a separate prompt
        if cur[: len(prev)] != prev:
            breaks += 1
            assert rec.edit, f"request {rec.index}: undeclared prefix change"
            assert rec.miss_cause in ("eviction", "compaction"), rec
    assert breaks == sum(1 for r in res.records if r.edit)


def test_compaction_triggers_at_65_percent_and_never_resets_the_budget() -> None:
    """H-14: compact when the anchored estimate passes 65 % of the budget; H-18: compaction takes
    wall time but no game time."""
    res = run("h-openrouter")
    summaries = [i for i, r in enumerate(res.records) if r.kind == "summary"]
    assert len(summaries) == res.outcomes[0].compactions >= 2
    for i in summaries:
        s, before = res.records[i], res.records[i - 1]
        assert s.estimate >= 0.65 * 120_000 - 1200  # plus the instruction's estimate
        assert before.estimate < 0.65 * 120_000
        after = res.records[i + 1]
        assert after.edit == "compaction" and after.tokens_saved > 0
        assert s.game_time == after.game_time  # the game is paused during the handoff
        assert after.time > s.time  # but wall time does
    for r in res.records:
        if r.kind == "gameplay":
            assert r.estimate < 120_000


def test_budget_changes_compaction_count() -> None:
    small = run_trace(game(), load_policy("h-openrouter").with_budget(60_000))
    large = run_trace(game(), load_policy("h-openrouter").with_budget(200_000))
    assert small.outcomes[0].compactions > run("h-openrouter").outcomes[0].compactions
    assert large.outcomes[0].compactions < run("h-openrouter").outcomes[0].compactions


@pytest.mark.parametrize("budget", [31_999, 200_001, 0])
def test_budget_outside_range_is_an_error(budget: int) -> None:
    with pytest.raises(PresetError, match=r"outside 32000\.\.200000"):
        load_policy("h-openrouter").with_budget(budget)


def test_handoff_out_of_range_ends_the_run_and_keeps_records() -> None:
    """H-17: a summary outside 40 B..12 KB ends the run with an error; nothing is lost."""
    pol = load_policy("h-openrouter")
    bad = replace(pol, compaction=replace(pol.compaction, handoff_bytes=20_000))
    res = run_trace(game(), bad)
    o = res.outcomes[0]
    assert o.status == "error" and o.error == "summary_out_of_range"
    assert res.records[-1].kind == "summary"  # the summary request itself was billed and recorded


def test_tool_call_instead_of_handoff_gets_one_text_only_retry() -> None:
    """H-15: if the model calls a tool, ask once more with the conversation as text, no tools."""
    pol = load_policy("h-openrouter")
    res = run_trace(game(), replace(pol, compaction=replace(pol.compaction, tool_call_rate=1.0)))
    kinds = [r.kind for r in res.records]
    assert kinds.count("summary_text") == kinds.count("summary") >= 1
    for i, k in enumerate(kinds):
        if k == "summary_text":
            assert kinds[i - 1] == "summary"
            assert res.records[i].cache_read == 0  # no tools: shares nothing with the conversation


def test_transient_errors_are_retried_up_to_five_times() -> None:
    """H-17: transient provider errors are retried up to 5 times, then the run ends."""
    pol = load_policy("h-openrouter")
    scripted = {i: "overloaded" for i in range(10, 15)}
    ok = run_trace(game(30), pol, provider_params={"faults": {"scripted": scripted}})
    assert ok.outcomes[0].status == "ok"
    assert sum(1 for r in ok.records if r.error == "overloaded") == 5
    assert max(r.attempt for r in ok.records) == 5
    scripted = {i: "rate_limit" for i in range(10, 16)}
    bad = run_trace(game(30), pol, provider_params={"faults": {"scripted": scripted}})
    assert bad.outcomes[0].status == "error" and bad.outcomes[0].error == "retries_exhausted"


def test_same_trace_policy_and_seed_give_identical_records() -> None:
    def dump(res: RunResult) -> str:
        out = io.StringIO()
        write_jsonl(res.records, out)
        return out.getvalue()

    a = run_trace(game(80, 5), load_policy("h-direct"), seed=7)
    b = run_trace(game(80, 5), load_policy("h-direct"), seed=7)
    assert dump(a) == dump(b)
