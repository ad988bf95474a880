"""The claude-code preset on real Claude Code sessions with compactions (issue 29): it takes the
billed size of what followed each recorded compaction (bench/trace_knows.py), `run` takes the 1M
tier from the billed prompts as `fidelity` does (sim/providers/choice.py), and
bench/preset_fidelity.py measures compaction points and cost against the bill. Development data
only: the shared traces-real sessions and tiny synthetic traces."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench import preset_fidelity
from ctxbench.bench.cli import main
from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.policy import unbilled_summarisers
from ctxbench.bench.trace_knows import apply, recorded_summary_tokens
from ctxbench.policies.preset import load_policy
from ctxbench.sim.core.content import Message
from ctxbench.sim.prepared import REATTACHED
from ctxbench.sim.providers.choice import choose
from ctxbench.sim.runner import prepare_for
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import (
    CompactionEvent,
    Content,
    Event,
    Header,
    MessageEvent,
    SystemEvent,
    Trace,
    Usage,
)
from tests.real import REAL, needs_real

SPOTTER = REAL / "spotter"
SESSION = SPOTTER / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"  # one compaction, 21,155 tokens after it


@needs_real
def test_the_billed_post_compaction_size_is_taken_and_reattachment_left_to_it() -> None:
    tr = import_paths([SESSION]).traces[0]
    prep = prepare_for(tr, "claude-opus-4-6")
    knows = apply(load_policy("claude-code"), prep, "claude-code")
    assert knows.policy.compaction.summary_tokens == 21155
    assert knows.policy.compaction.reattach_files == 0
    assert any(k.startswith("compaction.summary_tokens=21155 ") for k in knows.from_trace)
    # a preset that does not model Claude Code's re-attachment keeps its own summary size
    codex = apply(load_policy("codex"), prep, "codex")
    assert codex.policy.compaction.summary_tokens == 0
    # --policy-set wins over the trace
    own = apply(load_policy("claude-code"), prep, "claude-code", ("compaction.summary_tokens",))
    assert own.policy.compaction.summary_tokens == 0 and own.policy.compaction.reattach_files == 5


@needs_real
def test_fidelity_policy_claude_code_reads_the_post_compaction_prompt_as_billed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()
    assert main(["fidelity", str(SESSION), "--policy", "claude-code", "--json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)[0]
    assert doc["compactions_before"] == {"real": [72], "policy": [72]}
    assert doc["within_tolerance"] > 0.95  # 0.49 when the summary was counted from its bytes
    assert abs(doc["predicted"]["cost"] / doc["billed"]["cost"] - 1) < 0.05  # -4.1 % before


@needs_real
def test_fidelity_policy_gives_the_cost_of_the_requests_the_log_bills(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A proxy log without its summariser's bill: `fidelity --policy` prices P's summary request in
    its prediction and gives, beside, the interval over the requests the log bills."""
    log = str(REAL / "claude-trace" / "test-traffic.jsonl")
    capsys.readouterr()
    assert main(["fidelity", log, "--policy", "claude-code", "--json", "-q"]) == 0
    ci = json.loads(capsys.readouterr().out)[0]["cost_interval"]
    logged = ci["logged_requests"]
    assert not ci["billed_inside"] and logged["billed_inside"]
    assert logged["central"] == pytest.approx(
        ci["central"] - logged["unlogged_policy_requests_cost"], abs=1e-5
    )
    assert main(["fidelity", log, "--policy", "claude-code", "-q"]) == 0
    assert (
        "on the requests the log bills (without $0.1027 of claude-code's summary requests"
        in capsys.readouterr().out
    )


@needs_real
def test_the_measurement_on_the_shared_sessions(tmp_path: Path) -> None:
    part = preset_fidelity.Part("dev", (SPOTTER,))
    rows = preset_fidelity.rows_of(part, "claude-code")
    assert [r.log.rsplit("/", 1)[1][:8] for r in rows] == ["258c7280", "8463c716"]
    for r in rows:
        assert not r.note and r.turns_off == 0 and len(r.real) == 1
        assert abs(r.delta(r.like_for_like)) < preset_fidelity.COST
    lookup = rows[0]  # two server-side lookup misses the preset cannot predict: outside events
    assert lookup.outside > 1.0 and lookup.delta(lookup.predicted) < -0.05
    text = "\n".join(preset_fidelity.render("dev", rows, "claude-code"))
    assert "each within ±1 request: 2 of 2" in text and "like for like: 2 of 2" in text
    out = tmp_path / "r.md"
    assert preset_fidelity.main(["--all-real", str(SPOTTER), "--split", "dev", "-q", "-o", str(out)]) == 0
    assert "258c7280" in out.read_text(encoding="utf-8")


def test_a_missing_corpus_folder_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert preset_fidelity.main(["--corpus", str(tmp_path / "absent"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a folder" in err[0]


def test_a_session_without_compaction_is_not_measured(tmp_path: Path) -> None:
    (tmp_path / "none").mkdir()
    rows = preset_fidelity.rows_of(preset_fidelity.Part("dev", (tmp_path / "none",)), "claude-code")
    assert rows == []
    assert "records a compaction" in "\n".join(preset_fidelity.render("dev", rows, "claude-code"))


def _long_log(model: str, prompt: int) -> Trace:
    usage = Usage(input_tokens=10, cache_read=prompt, output_tokens=5)
    header = Header("log.jsonl", model=model, meta={"format": "claude-code"})
    return Trace(header, (MessageEvent("assistant", (), usage=usage),), "log.jsonl")


def test_run_takes_the_1m_tier_from_the_billed_prompts() -> None:
    over = choose(_long_log("claude-sonnet-4-6", 250_000), "anthropic")
    assert over.model == "claude-sonnet-4-6[1m]" and "1M tier" in over.note
    within = choose(_long_log("claude-sonnet-4-6", 150_000), "anthropic")
    assert within.model == "claude-sonnet-4-6" and within.note == ""


def test_each_compaction_takes_its_own_recorded_size() -> None:
    comp = replace(
        load_policy("claude-code").compaction, summary_tokens=15000, summary_tokens_each=(10000, 20000)
    )
    assert [comp.billed_summary_tokens(n) for n in range(3)] == [10000, 20000, 15000]
    assert replace(comp, summary_tokens=0, summary_tokens_each=()).billed_summary_tokens(0) == 0


@needs_real
def test_several_recorded_compactions_give_their_sizes_in_order() -> None:
    prep = prepare_for(import_paths([SESSION]).traces[0], "claude-opus-4-6")
    at = next(i for i, s in enumerate(prep.steps) if s.kind == "compaction")
    one = prep.steps[at]
    assert one.message is not None
    block = replace(one.message.blocks[0], tokens=9000)
    second = replace(one, message=Message.of("user", (block,), "summary"))
    two = replace(prep, steps=(*prep.steps, second))
    knows = apply(load_policy("claude-code"), two, "claude-code")
    assert knows.policy.compaction.summary_tokens_each == (21155, 9000)
    assert knows.policy.compaction.summary_tokens == 15078


def test_a_compaction_without_a_billed_summariser_is_named() -> None:
    usage = Usage(input_tokens=1, output_tokens=1)
    events = (
        MessageEvent("assistant", (), tag="summary", usage=usage),
        CompactionEvent(()),
        MessageEvent("assistant", (), usage=usage),
        CompactionEvent(()),  # a proxy log that did not capture this summariser request
        MessageEvent("assistant", (), usage=usage),
    )
    tr = Trace(Header("log.jsonl", model="claude-opus-4-6"), events, "log.jsonl")
    assert unbilled_summarisers(tr) == [False, True]


@needs_real
def test_a_proxy_log_without_the_summariser_bill_is_compared_like_for_like() -> None:
    rows = preset_fidelity.rows_of(preset_fidelity.Part("dev", (REAL / "claude-trace",)), "claude-code")
    assert len(rows) == 1 and rows[0].real == rows[0].own
    row = rows[0]
    assert row.unlogged > 0 and row.delta(row.predicted) > 0.2  # its own summary request, unbilled in the log
    assert abs(row.delta(row.like_for_like)) < preset_fidelity.COST
    # the prediction on the requests the log bills takes nothing from the bill and is within too
    assert row.logged == pytest.approx(row.predicted - row.unlogged) and row.outside == 0
    assert abs(row.delta(row.logged)) < preset_fidelity.COST
    assert abs(row.delta(row.central)) < preset_fidelity.COST
    assert row.low <= row.central <= row.high and row.inside  # its chance draws hold the bill
    assert row.json()["delta_logged_requests"] == pytest.approx(row.delta(row.central), abs=1e-6)
    table = "\n".join(preset_fidelity.render("dev", rows, "claude-code"))
    assert "on the requests the log bills (the prediction, nothing taken from the bill): 1 of 1" in table
    assert "billed inside the 90 % interval of the preset's cost on the logged requests: 1 of 1" in table


@needs_real
def test_a_log_that_starts_after_a_compaction_does_not_count_it() -> None:
    """A log that continues a compacted session (Claude Code's `agent-acompact-*` files) begins
    with the compaction: its starting state, not a compaction the preset should reproduce; its
    summary opens the preset's context as it does the recorded replay's (without it, the preset
    replayed the session 21,155 tokens short: $3.29 predicted where the recorded replay gives $4.20)."""
    tr = import_paths([SESSION]).traces[0]
    at = next(i for i, e in enumerate(tr.events) if isinstance(e, CompactionEvent))
    tail = replace(tr, events=tr.events[at:])
    sf, rec = preset_fidelity.measure(tail, "main", "claude-code")
    first = sf.baseline.requests[0].predicted
    assert first == rec.baseline.requests[0].predicted and first.cache_write_1h == 21155
    row = preset_fidelity._row("dev", "spotter/tail", "main", tail, "claude-code")
    assert row.note == "" and row.starts_compacted
    assert row.real == [] and row.turns_ok
    assert "starts compacted" in "\n".join(preset_fidelity.render("dev", [row], "claude-code"))


def _sized(tokens: int, key: str) -> Content:
    return Content("text", nbytes=tokens * 4, tokens=tokens, key=key)


def _compacted_session() -> Trace:
    """A Claude Code 2.1.x log on a 200k window: 14 rounds of 10,000 tokens on a 20,000-token
    system prompt, then a 12,000-token tool output before which the harness compacted; its summary
    (6,000) and the files it re-read (30,000, logged after the boundary) are what the next bill
    holds beyond the static prefix: nothing of the conversation was kept (as on the development
    part's Claude Code 2.1.145 sub-agents and main threads, bench/trace_knows.py)."""
    ev: list[Event] = [SystemEvent((_sized(20_000, "sys"),), t=0.0)]
    prompt, t = 20_000, 0.0
    for i in range(14):
        ev.append(MessageEvent("user", (_sized(10_000, f"u{i}"),), t=t))
        t += 10
        usage = Usage(input_tokens=10_000, cache_read=prompt, output_tokens=100)
        ev.append(MessageEvent("assistant", (_sized(100, f"a{i}"),), usage=usage, t=t))
        prompt += 10_100
    ev += [
        MessageEvent("user", (_sized(12_000, "last"),), t=t),
        CompactionEvent((_sized(6_000, "summary"),), trigger="auto", pre_tokens=prompt + 12_000, t=t + 5),
        MessageEvent("user", (_sized(30_000, "files"),), t=t + 6),
        MessageEvent("assistant", (_sized(100, "after"),), usage=Usage(36_000, 20_000, 0, 0, 100), t=t + 9),
        MessageEvent("user", (_sized(1_000, "next"),), t=t + 9),
        MessageEvent("assistant", (_sized(100, "end"),), usage=Usage(1_100, 56_000, 0, 0, 100), t=t + 9),
    ]
    meta = {"format": "claude-code", "version": "2.1.145", "sized_on": "prompt"}
    return Trace(Header("s.jsonl", model="claude-sonnet-4-6", meta=meta), tuple(ev), "s.jsonl")


def test_what_followed_a_compaction_is_the_post_compaction_prompt_and_nothing_is_kept_twice() -> None:
    tr = _compacted_session()
    prep = prepare_for(tr, "claude-sonnet-4-6")
    tags = [s.message.tag for s in prep.steps if s.kind == "message" and s.message is not None]
    assert tags.count(REATTACHED) == 1 and tags[-1] == ""  # the files; not the prompt after the reply
    assert recorded_summary_tokens(prep) == [(6_000, 36_000)]
    knows = apply(load_policy("claude-code"), prep, "claude-code").policy.compaction
    assert (knows.summary_tokens_each, knows.summary_tokens, knows.keep_value) == ((36_000,), 6_000, 0)
    sf = compare(tr, "main", "claude-code")
    assert sf.track is not None and sf.track.real == sf.track.own == [14]
    after = sf.baseline.requests[14:]
    # the prompt after the compaction as billed: the summary and the files, not also the last round
    # (12,100 tokens over with `keep: turns 1`) nor the files twice
    assert [q.predicted.cache_read + q.input_predicted for q in after] == [56_000, 57_100]
    assert [q.billed.total_input for q in after] == [56_000, 57_100]
    # replaying what was recorded, the files are sent as logged
    assert compare(tr, "main").baseline.requests[-1].predicted.cache_read == 56_000


def test_a_compaction_that_opens_the_log_keeps_what_follows_it() -> None:
    tr = _compacted_session()
    opening = (*tr.events[:1], *tr.events[30:])  # the system prompt, then the compaction
    prep = prepare_for(replace(tr, events=opening), "claude-sonnet-4-6")
    assert all(s.message.tag != REATTACHED for s in prep.steps if s.message is not None)


def test_a_compaction_logged_far_above_the_prompt_before_it_is_named_as_unlogged_context() -> None:
    """CaptainRandom00/Claude-Code d32a8ce8 (test part, Claude Code 2.0.8) logs an automatic
    compaction at 158,881 tokens 19 hours after its last billed request, whose prompt and output
    were 50,045 tokens: what triggered it is not in the log. One at 52,000 is ordinary growth."""
    billed = MessageEvent("assistant", (), usage=Usage(3, 49_407, 302, 0, 333))
    far = CompactionEvent(trigger="auto", pre_tokens=158_881)
    near = CompactionEvent(trigger="auto", pre_tokens=52_000)
    header = Header("log.jsonl", model="claude-sonnet-4-5")
    texts, unlogged = preset_fidelity._triggers(Trace(header, (billed, far, billed, near), "log.jsonl"))
    assert unlogged == 1
    assert texts == [
        "auto 158,881 (the log's prompt before it: 50,045; what triggered it is not in the log)",
        "auto 52,000",
    ]
    # before the first billed request there is nothing to compare with (a log that starts compacted)
    assert preset_fidelity._triggers(Trace(header, (far, billed), "log.jsonl")) == (["auto 158,881"], 0)
