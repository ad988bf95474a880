"""Fidelity of the non-Claude-Code formats on the real logs (bench/fidelity_report.md "Other
formats"): the Codex TUI log per session, the Cline gateway session, and the causes named for
every request outside tolerance."""

from __future__ import annotations

import pytest

from ctxbench.bench.fidelity.auto import KEPT, OUTPUT, ROUTING, auto_prefix_cause, evidence
from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.fidelity.discover import discover
from ctxbench.bench.fidelity.gateway import as_charged, reports_cache_writes
from ctxbench.bench.fidelity.other import other_formats, recorded_cost
from ctxbench.bench.fidelity.replay import serving
from ctxbench.bench.fidelity.results import RequestCompare, SessionFidelity
from ctxbench.sim.core.catalog import prices
from ctxbench.sim.core.provider import Usage as SimUsage
from ctxbench.sim.providers.anthropic import reported_usage
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent, Trace, Usage
from tests.real import REAL, needs_real

CODEX = "codex-tui/binary-size-log.jsonl"
CLINE = "cline-sdk/session.messages.json"


def _sessions(rel: str) -> dict[str, tuple[Trace, SessionFidelity]]:
    res = import_paths([REAL / rel])
    return {n: (tr, compare(tr, n)) for tr, n in zip(res.traces, res.names, strict=True)}


@needs_real
def test_codex_log_is_two_sessions_whose_prompts_have_the_billed_size() -> None:
    """FORMATS.md §2.3 "2 tasks, 34 responses": the second task is a new session (/new) whose first
    prompt (6,042) restarts at the instructions; every predicted prompt is the billed one."""
    s = _sessions(CODEX)
    assert list(s) == ["main", "session-2"]
    assert [sf.n for _, sf in s.values()] == [20, 14]
    for _, sf in s.values():
        for r in sf.requests:
            assert r.predicted.cache_read + r.input_predicted == r.billed.input_tokens + r.billed.cache_read


@needs_real
def test_codex_figures_and_causes() -> None:
    s = _sessions(CODEX)
    main, second = s["main"][1], s["session-2"][1]
    assert sum(r.within for r in main.requests) == 9 and sum(r.within for r in second.requests) == 12
    assert main.cost_billed == pytest.approx(0.1316, abs=5e-5)
    assert main.cost_predicted == pytest.approx(0.1059, abs=5e-5)
    assert second.cost_billed == pytest.approx(0.0722, abs=5e-5)
    assert second.cost_predicted == pytest.approx(0.0643, abs=5e-5)
    routed = [r.index for r in main.mismatches if r.cause.startswith(ROUTING)]
    assert routed == [3, 5, 6, 10, 14, 17]
    assert [r.index for r in second.mismatches if r.cause.startswith(ROUTING)] == [10, 12]
    # the instructions prefix other sessions keep warm: read by the first request of each session
    assert all(sf.meta["warm_tokens"] == 5537 for _, sf in s.values())
    notes = evidence(main.requests)
    assert any("33 + 128·k" in n for n in notes) and any("7 of 19" in n for n in notes)


@needs_real
def test_codex_command_output_is_in_the_next_prompt() -> None:
    """The first token_count follows the first command's end: its output is a tool_result after
    the first reply, and an exit-0 command shows the model its stdout."""
    tr = import_paths([REAL / CODEX]).traces[0]
    msgs = [e for e in tr.events if isinstance(e, MessageEvent)]
    first_reply = next(i for i, e in enumerate(msgs) if e.role == "assistant")
    assert msgs[0].role == "user" and msgs[0].content[0].text.startswith("[the user's message")
    calls = [c for c in msgs[first_reply].content if c.kind == "tool_use"]
    result = msgs[first_reply + 1].content[0]
    assert result.kind == "tool_result" and result.tool_id == calls[0].tool_id
    assert (result.text or "").startswith("## re-add-markdown")


@needs_real
def test_cline_session_replays_on_the_gateway_profile() -> None:
    res = import_paths([REAL / CLINE])
    assert res.names == ["main", "voxtral-small-24b-2507"]
    tr = res.traces[0]
    sf = compare(tr, "main")
    assert serving(tr).profile == "cline" and sf.model == "claude-opus-4-8-fast"
    assert sf.n == 15 and sf.share_within == 1.0
    assert sum(r.billed.cache_read for r in sf.requests) == 522211
    assert sf.cost_billed == pytest.approx(1.9390, abs=5e-5)
    assert sf.cost_predicted == pytest.approx(1.9387, abs=5e-5)
    # the gateway's own cost is 1.05x the list prices (Opus 4.8 fast, writes at the write rate)
    cost = recorded_cost(tr)
    assert cost is not None and cost / sf.cost_billed == pytest.approx(1.05, abs=1e-4)
    # the request served by another model is its own conversation
    assert res.traces[1].header.meta["model_recorded"] == "mistralai/voxtral-small-24b-2507"


@needs_real
def test_report_section_names_every_conversation() -> None:
    text = "\n".join(other_formats(discover(REAL)))
    assert "| codex-tui/binary-size-log.jsonl | session-2 | gpt-5 | openai-auto | 14 | 85.7% |" in text
    assert "| cline-sdk/session.messages.json | main | claude-opus-4-8-fast | cline | 15 | 100.0% |" in text
    assert "voxtral-small-24b-2507 | mistralai/voxtral-small-24b-2507 | — | 1 | model not in" in text
    assert "swe-agent/pydicom__pydicom-1458.traj | main | — | — | 0 | no per-request usage" in text


def test_a_gateway_that_hides_writes_reports_them_as_input_and_bills_them() -> None:
    assert not reports_cache_writes("cline") and reports_cache_writes("anthropic")
    billed = SimUsage(uncached=2, cache_read=100, cache_write_5m=40, output=7)
    assert reported_usage(billed, False) == SimUsage(42, 100, 0, 0, 7)
    assert reported_usage(billed, True) is billed
    logged = Usage(input_tokens=42, cache_read=100, output_tokens=7)
    assert as_charged(logged, "5m") == Usage(0, 100, 42, 0, 7)
    assert as_charged(logged, "1h") == Usage(0, 100, 0, 42, 7)


def _rc(i: int, total: int, read: int, out: int, predicted: int) -> RequestCompare:
    return RequestCompare(
        i, float(i), 1.0, Usage(total - read, read, 0, 0, out), SimUsage(total - predicted, predicted), 0
    )


def test_automatic_prefix_causes() -> None:
    meta = {"warm_tokens": 5537}
    a, b, c = _rc(0, 6034, 5537, 272, 5504), _rc(1, 9340, 5921, 394, 5888), _rc(2, 10909, 9633, 96, 9216)
    assert auto_prefix_cause(c, [a, b], meta).startswith(OUTPUT + ": read 293 tokens past")
    routed = _rc(3, 11145, 5537, 31, 10880)
    assert "5,537-token instructions prefix" in auto_prefix_cause(routed, [a, b, c], meta)
    older = _rc(4, 12000, 9633, 40, 11008)
    assert "request #1" in auto_prefix_cause(older, [a, b, c, routed], meta)


def test_an_expiry_the_cache_outlived_is_named_so_and_a_replaced_history_only_after_one() -> None:
    """A read more than predicted after an idle gap the replay expired is the entry kept past its
    lifetime, whatever the format; a Gemini CLI request is named the first of a replaced history
    only when it follows one (the import's compaction)."""
    from dataclasses import replace

    a = _rc(0, 30_000, 0, 100, 0)
    late = replace(_rc(1, 38_000, 31_000, 50, 0), gap=302.0, miss_cause="ttl_expiry", real_user=True)
    gemini = {"format": "gemini-cli"}
    assert auto_prefix_cause(late, [a], gemini).startswith(KEPT + ": the entry outlived")
    assert "302 s idle" in auto_prefix_cause(late, [a], gemini)
    rebuilt = replace(late, gap=5.0, miss_cause="compaction")
    assert "a history the CLI replaced" in auto_prefix_cause(rebuilt, [a], gemini)


@needs_real
def test_codex_naive_reading_and_cost_interval() -> None:
    """Automatic caching (issue 33): the naive reading is the previous prompt rounded to 128-token
    steps; the central replay matches at least as many reads; the billed cost of each session is
    predicted by the measured share of reads not found (bench/fidelity/auto_interval.py)."""
    s = _sessions(CODEX)
    main, second = s["main"][1], s["session-2"][1]
    assert (round(main.share_naive_ok, 3), round(second.share_naive_ok, 3)) == (0.45, 0.786)
    for sf in (main, second):
        assert sf.share_ok >= sf.share_naive_ok
        iv = sf.auto_interval
        assert iv is not None and iv.low < iv.mean < iv.high
    # main lost many of its reads (6 of its 19 later requests read only the static prefix or an
    # older entry): above its central value, inside the interval the development part's 120 Codex
    # conversations give (their 95 % share: 12 %); session-2 inside too
    assert main.cost_billed > main.auto_interval.median  # type: ignore[union-attr]
    assert main.auto_interval.inside(main.cost_billed) and second.auto_interval.inside(second.cost_billed)  # type: ignore[union-attr]
    pooled = main.auto_interval.mean + second.auto_interval.mean  # type: ignore[union-attr]
    billed = main.cost_billed + second.cost_billed
    point = main.baseline.cost_predicted + second.baseline.cost_predicted  # every request found
    assert abs(pooled - billed) < abs(point - billed)  # the measured share brings it nearer the bill
    assert compare(s["main"][0], "main").auto_interval == main.auto_interval


def test_naive_reading_of_an_automatic_prefix_cache() -> None:
    from ctxbench.bench.fidelity.auto import naive_read

    assert naive_read(9340, 10909, 1024, 128) == 9216  # the previous prompt, in 128-token steps
    assert naive_read(12000, 3773, 1024, 128) == 3712  # never more than its own prompt
    assert naive_read(1000, 5000, 1024, 128) == 0  # below the minimum: nothing cached


def test_cost_interval_needs_a_measured_share_for_the_endpoint() -> None:
    from ctxbench.bench.fidelity.auto_interval import LOST_SHARE, auto_interval, measured_share

    assert measured_share("openai", {}) == measured_share("openai", {"model_provider": "openai"})
    assert measured_share("openai", {"model_provider": "mock"}) is None  # ctxbench serve
    assert measured_share("gemini", {}) is not None and measured_share("zai", {}) is not None
    assert measured_share("moonshot", {}) is None  # measured on too few development conversations
    reqs = [
        _rc(i, 6000 + 1000 * i, 5504 + 1000 * i if i else 0, 50, 5504 + 1000 * i if i else 0)
        for i in range(12)
    ]
    sf = SessionFidelity("s", "gpt-5", "recorded", reqs, meta={"warm_tokens": 1100})
    a = auto_interval(sf, "openai")
    assert a is not None and a == auto_interval(sf, "openai")  # deterministic
    pr = prices("gpt-5")

    def cost(share: float) -> float:
        reads = [int(r.predicted.cache_read * (1 - share * bool(r.index))) for r in reqs]
        return sum(
            pr.cost(r.billed.input_tokens + r.billed.cache_read - x, x, 0, 0, 50)
            for r, x in zip(reqs, reads, strict=True)
        )

    qs = LOST_SHARE["openai"]
    assert a.shares == (qs[1], qs[10], qs[19])  # the 5 %, 50 % and 95 % quantiles of the share
    assert abs(a.low - cost(qs[1])) < 1e-9 and abs(a.high - cost(qs[19])) < 1e-9
    assert a.low < a.mean < a.high
    assert (a.low > cost(0)) == (qs[1] > 0)  # reads not found cost more; a negative share read more
