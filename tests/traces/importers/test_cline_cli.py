"""Cline CLI 3.x on the Anthropic API (traces/importers/cline.py).

Real run: Cline CLI 3.0.65 (npm `cline`) against `ctxbench serve` (its `providers.json` giving the
anthropic provider a `baseUrl`), `cline --json "Review the build logs: …"` on claude-sonnet-4-5 with
the task script of four shell steps; its session log (`~/.cline/data/sessions/<id>/<id>.messages.json`)
and the server's ledger are in data/. Cline marks only the user's prompt (module docstring of the
importer), so every request of the tool loop reads the 6,553 tokens up to it and pays the rest as
uncached input. Before: 0/4 within tolerance (the replay marked the end of each prompt), and each
request's cache write was also counted as uncached input (billed $0.0770 against the server's
$0.0573)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.billed.totals import billed_totals
from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import MessageEvent, Usage
from tests.traces.importers.ledgers import billed_rows, usage_of

DATA = Path(__file__).parent / "data"
LOG = DATA / "cline-cli-3.0.65.messages.json.xz"
LEDGER = DATA / "cline-cli-3.0.65.requests.jsonl.xz"


def _ledger() -> list[tuple[Usage, float, list[str]]]:
    """Each request's usage, cost, and where its body put cache_control."""
    out = []
    for r in billed_rows(LEDGER):
        body = r["body"]
        marks = [f"system.{i}" for i, b in enumerate(body.get("system") or []) if "cache_control" in b]
        marks += [f"tools.{i}" for i, t in enumerate(body.get("tools") or []) if "cache_control" in t]
        for i, m in enumerate(body["messages"]):
            blocks = m["content"] if isinstance(m["content"], list) else []
            marks += [f"messages.{i}.{j}" for j, b in enumerate(blocks) if "cache_control" in b]
        out.append((usage_of(r), float(r["cost"]), marks))
    return out


def test_cline_marks_only_the_users_prompt() -> None:
    assert [marks for _, _, marks in _ledger()] == [["messages.0.0"]] * 4


def test_each_request_has_the_usage_the_server_billed() -> None:
    tr = import_paths([LOG]).traces[0]
    assert tr.header.meta["message_mark"] == "user prompt"
    usages = [replace(e.usage, cost=None) for e in tr.events if isinstance(e, MessageEvent) and e.usage]
    assert usages == [u for u, _, _ in _ledger()]  # the log records each cost too (Cline's own)
    assert billed_totals([tr]).cost == pytest.approx(sum(c for _, c, _ in _ledger()), abs=1e-8)


def test_the_replay_marks_the_prompt_and_matches_every_bill() -> None:
    sf = compare(import_paths([LOG]).traces[0])
    assert [r.within for r in sf.requests] == [True] * 4
    assert [r.predicted.uncached for r in sf.requests] == [0, 1285, 2570, 3855]
    assert sf.cost_predicted == pytest.approx(sum(c for _, c, _ in _ledger()), abs=1e-8)
