"""Gemini CLI sessions (traces/importers/gemini_cli.py), on real output: Gemini CLI 0.61.0 from npm
run against `ctxbench serve` (`-m gemini-2.5-pro -p … --yolo`), its `chats/session-*.jsonl` beside
the server's ledger (tests/sim/serve/data): a plain session, and one resumed with `--resume latest` and
`model.compressionThreshold` 0.03, whose history the CLI replaced twice (the resume, then a
compression) and whose ledger holds six requests the log does not (compression passes, the request
loop detection stopped and its recovery request)."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import ImportFailure, detect, import_paths
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

DATA = Path(__file__).parent / "data"
LEDGERS = Path(__file__).parents[2] / "sim" / "serve" / "data"
PLAIN = DATA / "gemini-cli-0.61.0.session.jsonl.xz"
RESUMED = DATA / "gemini-cli-0.61.0-resume.session.jsonl.xz"


def _billed(name: str) -> list[tuple[int, int, int]]:
    with lzma.open(LEDGERS / name, "rt", encoding="utf-8") as f:
        rows = [json.loads(x) for x in f if x.strip()]
    return [(r["usage"]["uncached"], r["usage"]["cache_read"], r["usage"]["output"]) for r in rows]


def _usage(tr: Trace) -> list[tuple[int, int, int]]:
    return [
        (e.usage.input_tokens, e.usage.cache_read, e.usage.output_tokens)
        for e in tr.events
        if isinstance(e, MessageEvent) and e.usage is not None
    ]


def test_detected() -> None:
    assert detect(PLAIN) == detect(RESUMED) == "gemini-cli"


def test_every_logged_reply_is_a_request_with_the_server_bill() -> None:
    """`input` includes the cached part (promptTokenCount): the uncached input is input - cached."""
    assert _usage(import_paths([PLAIN]).main) == _billed("gemini-cli-0.61.0.requests.jsonl.xz")
    logged = _usage(import_paths([RESUMED]).main)
    billed = _billed("gemini-cli-0.61.0-resume.requests.jsonl.xz")
    assert len(logged) == 9 and len(billed) == 15 and all(u in billed for u in logged)


def test_replaced_histories_are_new_conversations() -> None:
    res = import_paths([RESUMED])
    assert res.report.counts["histories replaced (compression or --resume)"] == 2
    compactions = [e for e in res.main.events if isinstance(e, CompactionEvent)]
    assert len(compactions) == 2
    assert any("The summary records the goal" in (c.text or "") for c in compactions[1].summary)


@pytest.mark.parametrize("path", [PLAIN, RESUMED])
def test_the_replay_matches_every_logged_bill(path: Path) -> None:
    """On Gemini's implicit cache (profile gemini-implicit): every logged request within tolerance
    and the cost within 0.1 %, with no outside event."""
    sf = compare(import_paths([path]).main)
    assert sf.share_within == 1.0 and len(sf.outside) == 0
    assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=1e-3)


def test_the_older_single_json_session_imports_the_same(tmp_path: Path) -> None:
    """Older CLIs wrote one JSON document, and kept a call's result only in `toolCalls[].result`."""
    with lzma.open(PLAIN, "rt", encoding="utf-8") as f:
        lines = [json.loads(x) for x in f if x.strip()]
    latest: dict[str, Any] = {}
    for rec in lines:
        if "type" in rec and "id" in rec:
            latest[rec["id"]] = rec
    opening = next(x["$set"]["messages"] for x in lines if "messages" in x.get("$set", {}))
    messages = [
        r
        for r in latest.values()
        if not any("functionResponse" in p for p in r.get("content") or [] if isinstance(p, dict))
    ]
    doc = {
        "sessionId": "s",
        "projectHash": "h",
        "startTime": lines[0]["startTime"],
        "messages": opening + messages,
    }
    f = tmp_path / "session-old.json"
    f.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert detect(f) == "gemini-cli"
    tr = import_paths([f]).main
    assert _usage(tr) == _usage(import_paths([PLAIN]).main)
    assert compare(tr).share_within == 1.0


def test_not_a_session(tmp_path: Path) -> None:
    f = tmp_path / "session-x.json"
    f.write_text('{"sessionId": "s", "projectHash": "h", "messages": 3}', encoding="utf-8")
    with pytest.raises(ImportFailure, match=r"session-x\.json: not a Gemini CLI session"):
        import_paths([f], "gemini-cli")


PART_KEYS = st.sampled_from(["text", "functionCall", "functionResponse", "inlineData"])
PART = st.dictionaries(PART_KEYS, st.one_of(st.text(max_size=3), st.none(), st.integers()))
CALL = st.dictionaries(
    st.sampled_from(["name", "args", "result", "id"]),
    st.one_of(st.text(max_size=3), st.lists(st.none(), max_size=1)),
)
TOKENS = st.dictionaries(st.sampled_from(["input", "cached", "output", "thoughts"]), st.integers(0, 50))
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "gemini", "info", "x"])},
    optional={
        "id": st.sampled_from(["a", "b", "c"]),
        "content": st.one_of(st.text(max_size=4), st.lists(PART, max_size=2)),
        "tokens": st.one_of(st.none(), TOKENS),
        "toolCalls": st.one_of(st.none(), st.lists(CALL, max_size=2)),
        "model": st.just("gemini-2.5-pro"),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(
        st.one_of(RECORD, st.builds(lambda m: {"$set": {"messages": m}}, st.lists(RECORD, max_size=3))),
        max_size=8,
    )
)
def test_any_log_shape_imports_or_fails_cleanly(tmp_path: Path, lines: list[Any]) -> None:
    f = tmp_path / "session-f.jsonl"
    head = {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"}
    f.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n", encoding="utf-8")
    try:
        res = import_paths([f], "gemini-cli")
    except ImportFailure as e:
        assert "session-f.jsonl" in str(e)
    else:
        assert res.traces


def test_a_compression_in_the_same_folder_reads_the_session_context_as_billed() -> None:
    """Resumed in an unchanged folder, the CLI's session context (437 bytes) opens the compressed
    history exactly as it opened the session: sized the same (sizing_shares.py SAME_TEXT_BYTES), the
    first request after the compression reads what the bill says. The one miss is the first logged
    request after the resume, which read what the unlogged loop-recovery request had cached (named)."""
    path = DATA / "gemini-cli-0.61.0-resume-samedir.session.jsonl.xz"
    sf = compare(import_paths([path]).main)
    assert [r.index for r in sf.misses] == [4] and sf.n == 9
    assert "a request the CLI did not log" in sf.misses[0].cause
    assert sf.request(5).within
    billed = _billed("gemini-cli-0.61.0-resume-samedir.requests.jsonl.xz")
    assert all(u in billed for u in _usage(import_paths([path]).main))


# A session whose CLI switched from gemini-2.5-pro to gemini-2.5-flash (the older single-JSON file),
# written for these tests: the flash conversation's first request carries the pro history (14,000
# tokens), its second reads 13,000 (a fallback inside that history), a flash reply is logged with every
# token count 0 (a failed stream attempt the CLI sent again), and the pro conversation's second
# request reads its 8,000-token system prompt and tools.
SWITCH = DATA / "gemini-cli-model-switch.session.json"


def _prompts(tr: Trace) -> list[int]:
    """The prompt the trace's blocks make before each request with usage (system included)."""
    out, total = [], 0
    for e in tr.events:
        if isinstance(e, MessageEvent) and e.role == "assistant" and e.usage is not None:
            out.append(total)
        total += sum(c.tokens or 0 for c in getattr(e, "content", ()))
    return out


def test_a_model_switch_opens_a_conversation_on_the_first_ones_system() -> None:
    """The flash conversation's smallest read (13,000) ends inside the history it opens on; its system
    is the pro conversation's (8,000 tokens, one CLI process), and its prompt grows as billed."""
    res = import_paths([SWITCH])
    assert res.names == ["main", "gemini-2.5-flash"]
    pro, flash = res.traces
    assert pro.header.meta["system_tokens"] == 8000
    assert flash.header.meta["system_tokens"] == 8000
    assert "'main'" in flash.header.meta["system_inferred_from"]
    billed = [e.usage.total_input for e in flash.events if isinstance(e, MessageEvent) and e.usage]
    assert _prompts(flash) == billed == [14000, 14600, 15200, 15900]
    first = next(e for e in flash.events if isinstance(e, MessageEvent) and e.role == "user")
    assert sum(c.tokens or 0 for c in first.content) == 14000 - 8000  # the pro history, sized


def test_the_post_switch_conversation_reads_as_on_an_automatic_prefix_cache() -> None:
    """Replayed on Gemini's implicit cache: the first request reads nothing (the model's own cache is
    cold), each later one the whole prompt before it; the failed attempt is sent, not scored, and the
    request that sends it again reads its prompt."""
    flash = import_paths([SWITCH]).traces[1]
    sf = compare(flash)
    assert [r.index for r in sf.requests] == [0, 1, 2, 4]
    assert [r.predicted.cache_read for r in sf.requests] == [0, 14000, 14600, 15900]
    assert all(r.predicted.cache_read + r.predicted.uncached == r.billed.total_input for r in sf.requests)
    assert [r.within for r in sf.requests] == [True, False, True, True]


def test_a_failed_stream_attempt_is_sent_and_its_reply_is_in_no_later_prompt() -> None:
    res = import_paths([SWITCH])
    assert res.report.counts["failed stream attempts sent again (tokens all 0: not scored)"] == 1
    flash = res.traces[1]
    replies = [e for e in flash.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert [e.usage is None for e in replies] == [False, False, False, True, False]
    texts = [c.text or "" for e in flash.events if isinstance(e, MessageEvent) for c in e.content]
    assert "The integration tests look slower" not in "\n".join(texts)  # the attempt's cut answer


def test_plan_mode_is_another_tool_list() -> None:
    """Gemini CLI 0.61.0 into Plan Mode and out (bench/live/gemini_cli_plan_task.yaml): in Plan
    Mode it sends 10 tools and a shorter system instruction instead of 16 and its own, so the
    first request there read nothing, and the first after `exit_plan_mode` read the prefix cached
    before it. The import follows the successful calls with a tool list each, and the replay
    reads nothing at the switch as the server billed."""
    path = DATA / "gemini-cli-0.61.0-plan.session.jsonl.xz"
    res = import_paths([path])
    assert res.report.counts["Plan Mode switches (other tools and system instruction: a cache break)"] == 2
    (tr,) = res.traces
    assert _usage(tr) == _billed("gemini-cli-0.61.0-plan.requests.jsonl.xz")
    switch = compare(tr).requests[2]
    assert switch.billed.cache_read == 0 and switch.miss_cause == "tools_change"
    assert switch.predicted.cache_read == 0
