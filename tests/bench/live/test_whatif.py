"""bench/live/whatif.py (issue 29): every setting of Claude Code, Codex, opencode and Gemini CLI
predicted from the run recorded at another, checked on the kept ledgers (tests/bench/data/whatif,
recorded with `python -m ctxbench.bench.live.whatif record HARNESS`), offline."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from ctxbench.bench.live import whatif_cline
from ctxbench.bench.live.ledger import SIDE, load_ledger, task_of
from ctxbench.bench.live.predict import simulate
from ctxbench.bench.live.reminders import (
    ReminderRule,
    _split,
    _tool_result_steps,
    replace_reminders,
    texts_of,
    turns_for,
)
from ctxbench.bench.live.whatif import (
    COST_TOLERANCE,
    DATA,
    HARNESSES,
    Pair,
    Served,
    main,
    pairs_of,
    policy_for,
    predicted_turns,
    summary_bytes,
)
from ctxbench.bench.live.whatif_report import render
from ctxbench.policies.preset import with_policy_set

ROOT = Path(__file__).resolve().parents[3]


@cache
def _results(name: str) -> tuple[list[Served], list[Pair]]:
    return pairs_of(ROOT / DATA, HARNESSES[name])


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_each_setting_predicted_from_every_other_within_one_turn_and_5_percent(name: str) -> None:
    served, pairs = _results(name)
    assert len(served) >= 3 and len({tuple(s.turns) for s in served}) == len(served)  # the knob matters
    compacting = {s.setting.label for s in served if s.turns}
    assert len(compacting) >= 3
    cross = [p for p in pairs if p.source != p.target]
    assert len(cross) == len(served) * (len(served) - 1)
    for p in cross:  # a recording without a compaction too (the preset's sizes stand in)
        assert len(p.predicted_turns) == len(p.served_turns), (p.source, p.target)
        assert all(abs(a - b) <= 1 for a, b in zip(p.predicted_turns, p.served_turns, strict=True))
        assert abs(p.cost_delta) <= COST_TOLERANCE, (p.source, p.target, p.cost_delta)


def test_the_report_is_rederived_from_the_kept_ledgers() -> None:
    text = render({n: (HARNESSES[n].title, *_results(n)) for n in HARNESSES})
    assert (ROOT / "bench" / "whatif_report.md").read_text(encoding="utf-8") == text


def test_the_served_figures_are_the_ledgers() -> None:
    """Served cost = the server's own cost of every main and compaction request."""
    for name in HARNESSES:
        for s in _results(name)[0]:
            billed = sum(r.cost for r in s.reqs if r.kind != SIDE)
            assert s.cost == pytest.approx(billed, rel=1e-6)


def test_claude_code_reminders_follow_the_rule_in_every_recording() -> None:
    """Where Claude Code 2.1.197 put its <system-reminder>s: the post-compaction one on turn c's
    tool result (turns_for puts it on c+1, see its docstring), the periodic one as the rule says."""
    rule = ReminderRule()
    for s in _results("claude-code")[0]:
        _reqs, f = load_ledger(s.path)
        prep = task_of(s.reqs, f).prepared
        idx = _tool_result_steps(prep)
        seen = {}
        for turn, i in enumerate(idx, 1):
            msg = prep.steps[i].message
            assert msg is not None
            tail = _split(msg.blocks[-1].text or "")[1]
            if tail:
                seen[turn] = "after" if turn in s.turns else "periodic"
        expected = turns_for(rule, len(idx) + 1, s.turns)  # + 1: after a compaction on the last turn
        shifted = {(t - 1 if k == "after" else t): k for t, k in expected.items()}
        shifted = {t: k for t, k in shifted.items() if t <= len(idx)}
        assert seen == shifted, s.setting.label
        assert any(k == "periodic" for k in seen.values())
        assert any(k == "after" for k in seen.values()) == bool(s.turns)


def test_the_plain_preset_misses_where_the_summary_is_taken_without_claude_codes_wrapper() -> None:
    """The finding the preset's continuation size answers: the task recorded at 140k carries the
    reminders at its own compaction point; the continuation message is the mock's 6,000-byte summary
    inside 969 bytes of Claude Code's own text (claude-code-live `summary_bytes` 6,969). Taken as the
    summary alone (~240 tokens short), at 120k the preset misses Claude Code's second compaction."""
    served, _pairs = _results("claude-code")
    h = HARNESSES["claude-code"]
    by = {s.setting.label: s for s in served}
    src, tgt = by["w140k"], by["w120k"]
    _reqs, f = load_ledger(src.path)
    task, policy = task_of(src.reqs, f), policy_for(h, tgt.setting)
    assert summary_bytes(src.reqs) == policy.compaction.summary_bytes == 6969  # as recorded
    summary_alone = with_policy_set(policy, ["compaction.summary_bytes=6000"])
    assert tgt.turns == [13, 24] and predicted_turns(simulate(task, summary_alone, "anthropic")) == [13]
    assert predicted_turns(simulate(task, policy, "anthropic")) == [13, 24]


def test_missing_ledgers_are_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--data", str(tmp_path), "--out", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no such ledger" in err and str(tmp_path) in err


def test_from_a_run_without_compaction_the_first_messages_announcement_places_the_reminder() -> None:
    """DISABLE_AUTO_COMPACT=1: the recording has no continuation message, no compaction instruction
    and no post-compaction reminder, so the preset's sizes stand in; the reminder Claude Code
    appends after a compaction (its agent listing) is the one the session's first message
    announced, byte for byte. Without it, the 120k run's second compaction (turn 24, within a few
    hundred tokens of the 87,000 threshold) is missed."""
    served, pairs = _results("claude-code")
    by = {s.setting.label: s for s in served}
    preps, texts = {}, {}
    for label in ("off", "w100k"):
        _reqs, f = load_ledger(by[label].path)
        preps[label] = task_of(by[label].reqs, f).prepared
        texts[label] = texts_of(preps[label], by[label].turns)
    assert texts["off"] == texts["w100k"] and len(texts["off"][0].encode()) == 1789  # as recorded after one
    elsewhere = ReminderRule(announced="No such announcement")
    assert texts_of(preps["off"], [], elsewhere)[0] == ""
    predicted = {p.target: p for p in pairs if p.source == "off"}
    assert all(p.ok for p in predicted.values())
    assert predicted["w120k"].served_turns == predicted["w120k"].predicted_turns == [13, 24]
    h, src, tgt = HARNESSES["claude-code"], by["off"], by["w120k"]
    _reqs, f = load_ledger(src.path)
    task, policy = task_of(src.reqs, f), policy_for(h, tgt.setting)
    unannounced = replace_reminders(task.prepared, f, ("", texts["off"][1]), [13])
    assert predicted_turns(simulate(replace(task, prepared=unannounced), policy, "anthropic")) == [13]


# ---------------------------------------------------------------- opencode 1.18.33, Gemini CLI 0.61.0
def test_opencode_compactions_are_classified_and_left_out_of_the_task() -> None:
    """opencode's compaction request carries its instruction in its own system prompt and the
    conversation as text; the continuation ("What did we do so far?", the summary as an assistant
    turn, "Continue if you have next steps ...") arrives merged with the kept tail's messages.
    None of it is task: the task rebuilt from the 22k run equals the one from the run without
    compaction."""
    served = {s.setting.label: s for s in _results("opencode")[0]}
    s22, off = served["limit22k"], served["off"]
    assert sum(r.kind == "summary" for r in s22.reqs) == 3 and s22.turns == [10, 16, 22]
    assert s22.sizes == (22 + 3000 + 100, None)  # the three continuation blocks, as recorded
    t22 = task_of(s22.reqs, load_ledger(s22.path)[1]).prepared
    toff = task_of(off.reqs, load_ledger(off.path)[1]).prepared
    assert [st.kind for st in t22.steps] == [st.kind for st in toff.steps]
    assert sum(st.message.tokens for st in t22.steps if st.message) == sum(
        st.message.tokens for st in toff.steps if st.message
    )


def test_from_a_run_without_compaction_the_summary_size_decides_opencode_and_gemini() -> None:
    """The finding the kept ledgers show: a recording without a compaction shows neither the
    continuation's size nor the instruction's. The generic presets' assumed summary (8,000 bytes)
    is larger than the mock model's (3,000 B): opencode at 22k then compacts at turns 15 and 20
    instead of 16 and 22, and Gemini CLI's costs are 7-29 % high. The -live presets carry the
    mock's summary (the task script's `summary_bytes`) and the harness's own texts around it, and
    every setting is then predicted from the run without compaction too."""
    generic = {
        n: pairs_of(ROOT / DATA, replace(HARNESSES[n], preset=n.removesuffix("-live")))[1]
        for n in ("opencode", "gemini-cli")
    }
    by = {p.target: p for p in generic["opencode"] if p.source == "off"}
    assert by["limit22k"].served_turns == [10, 16, 22] and by["limit22k"].predicted_turns == [10, 15, 20]
    assert not by["limit22k"].ok and by["off"].ok
    gem = {p.target: p for p in generic["gemini-cli"] if p.source == "t08"}
    assert all(p.turns_ok for p in gem.values())
    assert gem["t08"].ok and gem["t03"].cost_delta > COST_TOLERANCE
    for name, source in (("opencode", "off"), ("gemini-cli", "t08")):
        assert HARNESSES[name].preset == f"{name}-live"
        assert all(p.ok for p in _results(name)[1] if p.source == source), name


def test_gemini_compresses_at_please_continue_and_the_summary_of_a_summary() -> None:
    """Threshold 0.03 (31,457 tokens): after the first compression the history is [snapshot,
    acknowledgement, "Please continue.", ...]; the next time the count passes the threshold the
    only split point before 70 % is that "Please continue." and Gemini CLI compresses the snapshot
    alone (a 1.6k-token request), as the preset's findCompressSplitPoint does."""
    served = {s.setting.label: s for s in _results("gemini-cli")[0]}
    t03 = served["t03"]
    assert t03.turns == [5, 9, 10, 14]
    small = [r.input for r in t03.reqs if r.kind == "summary" and r.input < 5000]
    assert len(small) == 4  # two compressions of the snapshot alone, two calls each


def test_gemini_thought_signatures_are_the_cache_break_after_please_continue() -> None:
    """Without the thought-signature rewrite the preset reads the whole history from the cache
    after each "Please continue." and predicts the run without compression 21.7 % low; with it,
    to the cent (the server re-bills exactly)."""
    served = {s.setting.label: s for s in _results("gemini-cli")[0]}
    h, t08 = HARNESSES["gemini-cli"], served["t08"]
    _reqs, f = load_ledger(t08.path)
    task = task_of(t08.reqs, f)
    with_sig = simulate(task, policy_for(h, t08.setting), "gemini-implicit")
    without = simulate(task, replace(policy_for(h, t08.setting), thought_signatures=False), "gemini-implicit")
    cost = sum(r.cost for r in with_sig)
    assert cost == pytest.approx(t08.cost, rel=1e-3)
    assert sum(r.cost for r in without) < 0.85 * t08.cost


def test_gemini_split_point_is_find_compress_split_point() -> None:
    """One prompt and a tool loop: no message to split at, no compression (what blocks a plain
    `gemini -p` run); a history ending in a model text: all of it; a later prompt past 70 %: there."""
    from ctxbench.policies.condensers import ThresholdSummary
    from ctxbench.sim.core.content import Message, make_block

    def msg(role: str, kind: str, n: int) -> Message:
        return Message.of(role, (make_block(kind, role, n, n // 4, hash((role, kind, n))),), "")

    prompt, call, result = (
        msg("user", "text", 100),
        msg("assistant", "tool_use", 50),
        msg("user", "tool_result", 4000),
    )
    text = msg("assistant", "text", 30)
    split = ThresholdSummary._gemini_split
    assert split([prompt, call, result, call], 0, 0.3) == 0
    assert split([prompt, call, result, text], 0, 0.3) == 4
    assert split([prompt, call, result, text, msg("user", "text", 16), call], 0, 0.3) == 4


def test_cline_truncations_are_read_from_the_task_folder_and_need_reads_counted_twice() -> None:
    """Cline truncates without a summary request: its served truncations come from the kept task
    folder (bench/live/whatif_cline.py), and the ledger's XML-tool requests are its main turns. On
    its OpenAI-compatible provider Cline's trigger counts cache reads twice (the `truncated` run of
    tests/traces/importers, 20,000 tokens): without that setting the preset, given the run at
    128,000 tokens, predicts no truncation at 44,000 where Cline truncated four times."""
    served, _pairs = _results("cline")
    h = HARNESSES["cline"]
    by = {s.setting.label: s for s in served}
    assert all(r.kind != SIDE for s in served for r in s.reqs)
    src, tgt = by["w128k"], by["w44k"]
    assert src.turns == [] and tgt.turns == [5, 7, 9, 11]
    trace = whatif_cline.task_trace(ROOT / DATA, f"cline-2.18.0-{src.setting.label}")
    policy = policy_for(h, tgt.setting)
    once = with_policy_set(policy, ["compaction.reads_counted_twice=false"])
    assert whatif_cline.predicted_truncations(whatif_cline.simulate(trace, once)) == []
    assert whatif_cline.predicted_truncations(whatif_cline.simulate(trace, policy)) == tgt.turns
