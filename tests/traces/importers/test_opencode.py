"""opencode sessions (traces/importers/opencode.py), on real output: opencode 1.18.33 from npm run
against `ctxbench serve` in task mode, `opencode export` of its session and its database, beside the
server's ledger of what it received and billed (tests/traces/importers/data):
- `compact`: Claude Sonnet 4.5 on the Anthropic API with a 22,000-token context limit, three
  auto-compactions that keep the latest tool calls (`tail_start_id`);
- `openai`: gpt-5.1-codex through an OpenAI-compatible provider (Chat Completions, no cache marks);
- `subagent`: a task-tool sub-agent, a session of its own in the database."""

from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxbench.bench.cli import main
from ctxbench.bench.fidelity.compare import compare
from ctxbench.bench.prefix.check import find_breaks
from ctxbench.bench.prefix.request_log import parse_line, read_request_log, trace_log
from ctxbench.traces.importers import ImportFailure, detect, import_paths
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace
from tests.traces.importers.test_claude_code_kept import _tool_ids as tool_ids

DATA = Path(__file__).parent / "data"
COMPACT = DATA / "opencode-1.18.33-compact.export.json.xz"
OPENAI = DATA / "opencode-1.18.33-openai.export.json.xz"
OPENAI_DB = DATA / "opencode-1.18.33-openai.db.xz"


def _ledger(name: str) -> list[dict[str, Any]]:
    with lzma.open(DATA / f"opencode-1.18.33-{name}.requests.jsonl.xz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _usage_of(tr: Trace) -> list[tuple[int, int, int, int]]:
    return [
        (e.usage.input_tokens, e.usage.cache_read, e.usage.cache_write_5m, e.usage.output_tokens)
        for e in tr.events
        if isinstance(e, MessageEvent) and e.usage is not None
    ]


def test_both_files_are_detected() -> None:
    assert detect(COMPACT) == detect(OPENAI_DB) == "opencode"


def test_every_step_is_a_request_with_the_usage_the_server_billed() -> None:
    """Main requests and compaction requests, in order, each with the server's bill (the title
    request, on Claude Haiku, is not in the session)."""
    res = import_paths([COMPACT])
    assert res.names == ["main", "compaction-1", "compaction-2", "compaction-3"]

    def bill(r: dict[str, Any]) -> tuple[int, int, int, int]:
        u = r["usage"]
        return u["uncached"], u["cache_read"], u["cache_write_5m"], u["output"]

    sonnet = [r for r in _ledger("compact") if r["model"] == "claude-sonnet-4-5"]
    summarisers = [bill(r) for r in sonnet if "summarization agent" in json.dumps(r["body"]["system"])]
    assert len(summarisers) == 3
    assert _usage_of(res.traces[0]) == [bill(r) for r in sonnet if r["body"].get("tools")]
    assert [_usage_of(t)[0] for t in res.traces[1:]] == summarisers


def test_compactions_keep_the_tail_after_the_summary() -> None:
    tr = import_paths([COMPACT]).traces[0]
    messages = [e for e in tr.events if isinstance(e, MessageEvent)]
    compactions = [e for e in tr.events if isinstance(e, CompactionEvent)]
    assert len(compactions) == 3 and all(c.trigger == "auto" for c in compactions)
    heads = [[x.tool_id for x in messages[c.kept_from].content if x.kind == "tool_use"] for c in compactions]
    assert heads == [["toolu_ctx000008"], ["toolu_ctx000014"], ["toolu_ctx000020"]]
    assert all(c.summary[0].text == "What did we do so far?" for c in compactions)


def test_rebuilt_requests_carry_the_tool_calls_the_server_received() -> None:
    ids = tool_ids
    sent = [ids(r["body"]["messages"]) for r in _ledger("compact") if r["body"].get("tools")]
    rebuilt = [ids(e["body"]["messages"]) for e in trace_log(import_paths([COMPACT]).traces[0])]
    assert rebuilt == sent and len(sent) == 25


@pytest.mark.parametrize("path", [COMPACT, OPENAI, OPENAI_DB])
def test_the_replay_matches_every_bill(path: Path) -> None:
    """Claude on Anthropic's cache (marks on the system prompt and the last two messages), gpt-5.1
    on OpenAI's automatic cache (the whole prompt billed: input + read), every compaction request
    on its own prompt: within tolerance and the cost exact, with no outside event."""
    for tr in import_paths([path]).traces:
        sf = compare(tr)
        assert sf.share_within == 1.0, (path.name, tr.header.meta["conversation"])
        assert len(sf.outside) == 0
        assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=1e-9)


def test_database_and_export_import_the_same() -> None:
    from_db, from_export = import_paths([OPENAI_DB]).traces, import_paths([OPENAI]).traces
    assert [_usage_of(t) for t in from_db] == [_usage_of(t) for t in from_export]
    head = from_db[0].header
    assert head.model == "gpt-5.1-codex" and head.meta["usage_counts"] == "whole prompt"


def test_a_step_without_prices_has_no_recorded_cost() -> None:
    """opencode records cost 0 for a model it has no prices for: unknown, not free."""
    tr = import_paths([OPENAI]).traces[0]
    assert all(e.usage.cost is None for e in tr.events if isinstance(e, MessageEvent) and e.usage)
    claude = import_paths([COMPACT]).traces[0]
    assert all(e.usage.cost for e in claude.events if isinstance(e, MessageEvent) and e.usage)


@pytest.mark.parametrize("name", ["compact", "openai"])
def test_check_prefix_explains_opencode_traffic(name: str) -> None:
    """The raw traffic: the title request before the conversation, each tool-less compaction
    request (recognised by the conversation text it sends) and the new conversation after it."""
    lines = [json.dumps(r) for r in _ledger(name)]
    rep = find_breaks(read_request_log(lines, name))
    assert rep.ok, [(b.request, b.cls) for b in rep.failing]
    if name == "compact":
        assert (
            sorted(b.cls for b in rep.breaks if b.explained)
            == ["reset_after_compaction"] * 3 + ["side_request"] * 2
        )


def test_a_title_request_before_a_reset_does_not_explain_it() -> None:
    """A helper that carries only the conversation's opening message is no summariser."""
    log = _ledger("compact")
    first = next(r for r in log if r["body"].get("tools"))
    title = next(r for r in log if not r["body"].get("tools") and "title" in json.dumps(r["body"]["system"]))
    later = [r for r in log if r["body"].get("tools")][5]
    restart = json.loads(json.dumps(later))
    restart["body"]["messages"] = [{"role": "user", "content": "start again"}, *later["body"]["messages"][3:]]
    reqs = [parse_line(r, i + 1, f"r{i}") for i, r in enumerate([first, later, title, restart])]
    rep = find_breaks(reqs)
    assert [(b.request, b.cls) for b in rep.failing] == [(3, "reset_after_compaction")]


def test_fidelity_cli_on_the_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fidelity", str(OPENAI_DB), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    sessions = out if isinstance(out, list) else out.get("sessions", [out])
    assert sessions[0]["within_tolerance"] == 1.0 and sessions[0]["requests"] == 7


def test_not_an_export_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_text('{"info": {"id": "ses_1"}, "messages": 3}', encoding="utf-8")
    with pytest.raises(ImportFailure, match=r"x\.json: not an opencode export"):
        import_paths([f], "opencode")
    db = tmp_path / "other.db"
    import sqlite3

    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ImportFailure, match=r"other\.db: not an opencode database"):
        import_paths([db])


PART = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["text", "tool", "step-start", "step-finish", "reasoning", "compaction", "file"]
        )
    },
    optional={
        "text": st.one_of(st.text(max_size=5), st.integers()),
        "state": st.one_of(
            st.none(), st.dictionaries(st.sampled_from(["status", "output", "time"]), st.none())
        ),
        "tokens": st.one_of(
            st.none(), st.dictionaries(st.sampled_from(["input", "total", "cache"]), st.integers(0, 9))
        ),
        "cost": st.one_of(st.none(), st.floats(0, 1)),
        "tail_start_id": st.text(max_size=3),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    messages=st.lists(
        st.fixed_dictionaries(
            {"info": st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "x"])},
                                           optional={"summary": st.booleans(), "modelID": st.just("gpt-5")}),
             "parts": st.lists(PART, max_size=4)}
        ),
        max_size=6,
    )
)  # fmt: skip
def test_any_export_shape_imports_or_fails_cleanly(tmp_path: Path, messages: list[Any]) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"info": {"id": "ses_1"}, "messages": messages}), encoding="utf-8")
    try:
        res = import_paths([f], "opencode")
    except ImportFailure as e:
        assert "s.json" in str(e)
    else:
        assert res.traces


def test_check_prefix_on_the_session_log_says_how_to_check_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-prefix", str(COMPACT)]) == 2
    err = capsys.readouterr().err
    assert "session log of opencode" in err and "ctxbench import" in err and "Traceback" not in err


def test_a_database_with_a_sub_agent_session_imports_both() -> None:
    """The task tool's sub-agent is a session of its own (opencode's `parent_id`): a conversation
    named `agent-<slug>/…`, each with the requests the server billed for its session id."""
    res = import_paths([DATA / "opencode-1.18.33-subagent.db.xz"])
    assert res.names[0].endswith("/main") and res.names[1].startswith("agent-")
    by_session: dict[str, list[tuple[int, int, int, int]]] = {}
    for r in _ledger("subagent"):
        if r["body"].get("tools"):
            u = r["usage"]
            by_session.setdefault(r["conversation"], []).append(
                (u["uncached"], u["cache_read"], u["cache_write_5m"], u["output"])
            )
    assert sorted(_usage_of(t) for t in res.traces) == sorted(by_session.values())
    for tr in res.traces:
        assert compare(tr).share_within == 1.0


def test_reading_a_database_writes_nothing_beside_it(tmp_path: Path) -> None:
    """A reader leaves the user's folder as it was: no `-shm`/`-wal` file made by opening the
    database (read-only and immutable when no write-ahead log exists)."""
    db = tmp_path / "opencode.db"
    db.write_bytes(lzma.decompress(OPENAI_DB.read_bytes()))
    assert import_paths([db])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opencode.db"]


AGENTS_DB = DATA / "opencode-1.18.33-agents.db.xz"


def test_an_agent_switch_is_a_new_tool_list_and_the_replay_misses_there() -> None:
    """opencode 1.18.33 run three times on one session against `ctxbench serve`: `--agent plan`,
    `--continue --agent build`, `--continue --agent plan`. Each agent sends its own tool definitions
    (the `task` tool lists the sub-agents it may call), so the build request read nothing of the
    plan's cache and the plan request after it read the plan's entries again; the import records
    each switch as a tool list, and the replay predicts both reads."""
    res = import_paths([AGENTS_DB])
    (tr,) = res.traces
    assert res.report.counts["agent switches (another agent's tool definitions: a cache break)"] == 2
    served = [r for r in _ledger("agents") if r["body"].get("tools")]
    sf = compare(tr)
    billed = [r.billed.cache_read for r in sf.requests]
    assert billed == [r["usage"]["cache_read"] for r in served]
    switch, back = sf.requests[3], sf.requests[4]
    assert billed[3] == 0 and switch.miss_cause == "tools_change"
    assert switch.predicted.cache_read == 0 and switch.within
    assert back.predicted.cache_read >= billed[4] > 0  # the plan agent's entries, read again
