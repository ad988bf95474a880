"""The importers on the logs of many harness versions, each run from npm against `ctxbench serve`
with the same task (three shell steps, then a final answer; `claude -p … --model
claude-sonnet-4-5`, `codex exec …` on gpt-5.1-codex through the Responses API): every request the
log records has the usage the server billed, and the replay of the log matches every bill.

Claude Code 1.0.128, 2.0.36, 2.1.20, 2.1.69 (the first to mark the last message only) and 2.1.250;
Codex CLI 0.40.0 and 0.92.0 (0.171.0: test_codex_rollout.py, test_model_switch.py); opencode
1.3.0 and 1.15.0 (`python -m ctxbench.bench.live.session_logs opencode --prefix …`, its own task;
the log is its database; 1.18.33: test_opencode.py). The ledgers also hold
requests the logs do not (Claude Code's title and warm-up requests on Haiku, opencode's title). Codex 0.22.0
wrote the first rollout format, with neither token counts nor the model: it imports as a
conversation without bills (fidelity has nothing to compare, `run` asks for --model)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from ctxbench.bench.fidelity.compare import compare
from ctxbench.traces.importers import import_paths
from ctxbench.traces.importers.detect import detect
from ctxbench.traces.model import MessageEvent, Usage
from tests.traces.importers.ledgers import billed_rows, usage_of

DATA = Path(__file__).parent / "data"
LOGS = {  # a harness's own log -> the ledger of the server it ran against
    **{
        f"claude-code-{v}.jsonl.xz": f"claude-code-{v}"
        for v in ("1.0.128", "2.0.36", "2.1.20", "2.1.69", "2.1.250")
    },
    **{f"codex-{v}.rollout.jsonl.xz": f"codex-{v}" for v in ("0.40.0", "0.92.0")},
    **{f"opencode-{v}.db.xz": f"opencode-{v}" for v in ("1.3.0", "1.15.0")},
}


def _billed(log: str) -> Counter[Usage]:
    """The usage (output aside) of every request the server billed."""
    return Counter(usage_of(r, output=False) for r in billed_rows(DATA / f"{LOGS[log]}.requests.jsonl.xz"))


@pytest.mark.parametrize("log", sorted(LOGS))
def test_every_logged_request_was_billed_so_and_the_replay_matches(log: str) -> None:
    tr = import_paths([DATA / log]).traces[0]
    usages = [
        replace(e.usage, cost=None, output_tokens=0)
        for e in tr.events
        if isinstance(e, MessageEvent) and e.usage
    ]
    assert len(usages) >= 4
    # each one is a request the server billed so (output aside: Claude Code 2.0.x-2.1.2x logs the
    # streaming snapshot's output_tokens, FORMATS.md §2.1 caveat)
    assert not Counter(usages) - _billed(log)
    sf = compare(tr)
    assert all(r.within for r in sf.requests), [r.index for r in sf.requests if not r.within]
    assert sf.cost_predicted == pytest.approx(sf.cost_billed, rel=0.01)  # the target


def test_the_first_codex_rollout_format_imports_without_bills() -> None:
    log = DATA / "codex-0.22.0.rollout.jsonl.xz"
    assert detect(log) == "codex"
    result = import_paths([log])
    tr = result.traces[0]
    replies = [e for e in tr.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    assert len(replies) == 4 and all(e.usage is None for e in replies)
    assert [c.kind for c in replies[0].content] == ["text", "tool_use"]
    assert tr.header.model == "" and not compare(tr).has_usage
    assert any("record neither" in c for c in result.report.cannot_provide)
