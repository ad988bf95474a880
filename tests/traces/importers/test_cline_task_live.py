"""Cline task folders from real runs (traces/importers/cline_task.py), checked against the server's bill.

Real runs: Cline CLI 2.18.0 (npm `cline`, which runs the extension's task code, Cline 3.82.0, and keeps
each task as the extension does: `~/.cline/data/tasks/<id>/ui_messages.json`,
`api_conversation_history.json`, `task_metadata.json`) against `ctxbench serve --task
bench/live/cline_task.yaml --record DIR`, `cline -y --json "Review the build, test, lint, deploy,
coverage and audit logs and summarise any warnings."`:
- `anthropic`: `cline auth -p anthropic -m claude-sonnet-4-5`, `anthropicBaseUrl` set to the server in
  `~/.cline/data/globalState.json`; seven requests, six `execute_command` calls and `attempt_completion`;
- `openai`: `cline auth -p openai -m gpt-4.1 -b http://127.0.0.1:PORT/v1` on `--provider openai-auto`.
  Cline's OpenAI-compatible provider offers no tools: its system prompt has the model write each call
  as XML tags in its text, and the task script's steps are written so (sim/serve/script.py); the same
  seven requests;
- `truncated`: the same with the model's `contextWindow` set to 20,000 in `actModeOpenAiModelInfo`
  (`~/.cline/data/globalState.json`): from the third request on, Cline truncates the conversation
  (traces/importers/cline_context.py), and the folder holds `context_history.json`;
- `gemini`: `cline auth -p gemini -m gemini-2.5-flash`, `geminiBaseUrl` set to the server (on
  `--provider gemini-implicit`); seven requests;
- `anthropic-long`: as `anthropic` with `bench/live/cline_long_task.yaml` (outputs of ~70,000 tokens):
  the fourth prompt passes the 200,000-token window, the server refuses it (400, as the API does),
  and Cline sends it again truncated; so four times, then the prompt fits.
The task folders and the server's ledgers are in data/ (`cline-2.18.0-*`)."""

from __future__ import annotations

import json
import lzma
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.billed.ccusage import format_notes
from ctxbench.bench.billed.totals import billed_totals
from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.cline_task import DEFAULT_PRICE_META
from ctxbench.traces.model import MessageEvent, Usage
from tests.traces.importers.ledgers import billed_rows, usage_of

DATA = Path(__file__).parent / "data"
FILES = ("ui_messages", "api_conversation_history", "task_metadata")


def _task(tmp_path: Path, run: str) -> Path:
    """The run's task folder, as Cline wrote it (decompressed)."""
    folder = tmp_path / "tasks" / "1796665161879"
    folder.mkdir(parents=True)
    for name in (*FILES, "context_history"):
        src = DATA / f"cline-2.18.0-{run}.{name}.json.xz"
        if src.exists():
            with lzma.open(src, "rb") as f:
                (folder / f"{name}.json").write_bytes(f.read())
    return folder


def _ledger(run: str) -> list[tuple[Usage, float]]:
    """The requests the server billed (a prompt it refused as too long is not billed)."""
    rows = billed_rows(DATA / f"cline-2.18.0-{run}.requests.jsonl.xz")
    return [(usage_of(r), float(r["cost"])) for r in rows if r["status"] == 200]


def _usages(folder: Path) -> list[Usage]:
    tr = import_paths([folder]).traces[0]
    return [e.usage for e in tr.events if isinstance(e, MessageEvent) and e.usage is not None]


def test_anthropic_task_has_the_servers_input_and_cache_figures(tmp_path: Path) -> None:
    usages = _usages(_task(tmp_path, "anthropic"))
    ledger = _ledger("anthropic")
    assert len(usages) == len(ledger) == 7
    # Cline adds message_start's output_tokens (1, as the real API sends it) to message_delta's
    # cumulative count (its anthropic provider yields both as usage chunks): one output token more
    # than billed on every request, and a cost of that token more.
    logged = [replace(u, cost=None, output_tokens=u.output_tokens - 1) for u in usages]
    assert logged == [u for u, _ in ledger]
    for u, (_, c) in zip(usages, ledger, strict=True):
        assert u.cost == pytest.approx(c + 15e-6, abs=1e-9)  # claude-sonnet-4-5 output: $15 / M


def test_anthropic_task_replays_every_bill(tmp_path: Path) -> None:
    tr = import_paths([_task(tmp_path, "anthropic")]).traces[0]
    sf = compare(tr)
    assert [r.within for r in sf.requests] == [True] * 7
    assert [r.predicted.cache_read for r in sf.requests] == [u.cache_read for u, _ in _ledger("anthropic")]


def test_openai_task_reads_tokens_in_as_the_whole_prompt(tmp_path: Path) -> None:
    ledger = _ledger("openai")
    assert [replace(u, cost=None) for u in _usages(_task(tmp_path, "openai"))] == [u for u, _ in ledger]


def test_openai_task_cost_zero_is_priced_from_the_catalog_and_said(tmp_path: Path) -> None:
    folder = _task(tmp_path, "openai")
    rows = json.loads((folder / "ui_messages.json").read_text())
    logged = [json.loads(r["text"])["cost"] for r in rows if r.get("say") == "api_req_started"]
    assert logged == [0] * 7  # Cline's OpenAI-compatible model info: inputPrice 0, outputPrice 0
    res = import_paths([folder])
    assert [u.cost for u in _usages(folder)] == [None] * 7
    assert res.traces[0].header.meta[DEFAULT_PRICE_META] == 7
    t = billed_totals(list(res.traces))
    assert t.cost == pytest.approx(sum(c for _, c in _ledger("openai")), abs=1e-9)
    notes = format_notes("cline-task", folder / "ui_messages.json", list(res.traces), t)
    assert [(n.what, n.requests, n.versus) for n in notes] == [("cline-default-price", 7, "log")]


def test_openai_task_replays_every_bill(tmp_path: Path) -> None:
    """On OpenAI's automatic cache each request reads the previous prompt, rounded down to 128-token
    steps: what the replay predicts (its output is not read back: gpt-4.1 is not `output_cached`)."""
    sf = compare(import_paths([_task(tmp_path, "openai")]).traces[0])
    assert [r.within for r in sf.requests] == [True] * 7
    assert [r.predicted.cache_read for r in sf.requests] == [u.cache_read for u, _ in _ledger("openai")]


def test_truncated_task_replays_clines_context_truncation(tmp_path: Path) -> None:
    """After the first truncation each request reads the system prompt and the task only: the notice
    replaced the first reply, so the prefix breaks there. Replayed as Cline sent it, every request is
    within tolerance; the naive reading (the previous prompt) is right on the first two only."""
    folder = _task(tmp_path, "truncated")
    res = import_paths([folder])
    assert res.report.counts["context truncations (Cline: history left out of the prompt)"] == 5
    sf = compare(res.traces[0])
    ledger = _ledger("truncated")
    assert [r.predicted.cache_read for r in sf.requests] == [u.cache_read for u, _ in ledger]
    assert [u.cache_read for u, _ in ledger] == [0] + [10752] * 6
    assert [r.within for r in sf.requests] == [True] * 7
    assert [r.naive_within for r in sf.requests] == [True, True] + [False] * 5


def test_truncated_task_without_its_ranges_is_not_replayed_as_cline_sent_it(tmp_path: Path) -> None:
    """The rows' ranges are what tells the truncation: without them the replay sends the whole
    history and predicts the previous prompt's read."""
    folder = _task(tmp_path, "truncated")
    ui = folder / "ui_messages.json"
    rows = [
        {k: v for k, v in r.items() if k != "conversationHistoryDeletedRange"}
        for r in json.loads(ui.read_text())
    ]
    ui.write_text(json.dumps(rows))
    sf = compare(import_paths([folder]).traces[0])
    assert sum(r.within for r in sf.requests) == 2


def test_anthropic_task_past_its_window_replays_the_truncations_after_refused_prompts(tmp_path: Path) -> None:
    """Each refused prompt is sent again truncated: the task's first block replaced by "[Continue
    assisting the user!]" and the first reply's by the notice (context_history.json), so the
    retry reads the system prompt only; the next prompt, on the same range, reads it all again."""
    rows = billed_rows(DATA / "cline-2.18.0-anthropic-long.requests.jsonl.xz")
    assert [r["status"] for r in rows].count(400) == 4
    sf = compare(import_paths([_task(tmp_path, "anthropic-long")]).traces[0])
    ledger = _ledger("anthropic-long")
    assert [r.predicted.cache_read for r in sf.requests] == [u.cache_read for u, _ in ledger]
    assert [u.cache_read for u, _ in ledger][3:7] == [6945] * 4
    assert [r.within for r in sf.requests] == [True] * 9
    assert sum(r.naive_within for r in sf.requests) == 5
    # the replay bills the log's output, one token more per request than served (see above)
    assert sf.cost_predicted == pytest.approx(sum(c for _, c in ledger) + 9 * 15e-6, rel=1e-9)


def test_gemini_task_reads_tokens_in_as_the_uncached_part_and_its_cost_is_clines(tmp_path: Path) -> None:
    """Cline's Gemini provider reports the prompt less its cached part as tokensIn: each request's
    figures are the server's and the replay predicts every one. Its `cost` is Cline's own price
    table's: cached reads at $0.075/M for gemini-2.5-flash, where the catalog (and so the server)
    has $0.03 (providers.md §3), so the log's cost is above the bill; `billed --mode calculate`
    gives the server's."""
    folder = _task(tmp_path, "gemini")
    ledger = _ledger("gemini")
    usages = _usages(folder)
    assert [replace(u, cost=None) for u in usages] == [u for u, _ in ledger]
    sf = compare(import_paths([folder]).traces[0])
    assert [r.within for r in sf.requests] == [True] * 7
    traces = list(import_paths([folder]).traces)
    served = sum(c for _, c in ledger)
    assert billed_totals(traces, mode="calculate").cost == pytest.approx(served, rel=1e-9)
    logged = billed_totals(traces).cost
    assert logged == pytest.approx(sum(u.cost or 0 for u in usages)) and logged > served * 1.3
