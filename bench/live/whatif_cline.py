"""Counterfactual validation of Cline (bench/live/whatif.py, issue 29): its task folder kept beside
each ledger, its truncations read from it, and the task predicted from it.

Cline truncates its conversation without a summary request (policies/cline.py): nothing in a
ledger marks the point, and a truncated request no longer holds the messages it left out. The task
folder does: its `ui_messages.json` rows carry the range each request left out, and
`api_conversation_history.json` keeps every message (traces/importers/cline_context.py, checked on
Cline's own runs against `ctxbench serve`: tests/traces/importers/test_cline_task_live.py). So each
what-if run keeps its task folder's files, compressed, beside the ledger
(`<harness>-<version>-<setting>.<file>.json.xz`); the served truncations are the import's, each at
the number of requests before it; the task predicted from is the import of the folder recorded at
another setting, whose recorded truncations the preset does not replay: it truncates where its own
rule says, at the target setting's window.
"""

from __future__ import annotations

import lzma
import tempfile
from pathlib import Path

from ctxbench.bench.live import predict
from ctxbench.bench.live.ledger import PredictError, Task
from ctxbench.bench.live.session_logs import CLINE_OPENAI
from ctxbench.policies.preset import Policy
from ctxbench.sim.core.records import RequestRecord
from ctxbench.sim.runner import prepare_for
from ctxbench.traces.importers import import_paths
from ctxbench.traces.model import CompactionEvent, MessageEvent, Trace

TASK_FILES = ("ui_messages", "api_conversation_history", "task_metadata", "context_history")
PROFILE = CLINE_OPENAI[0]  # the profile the what-if runs were served on (session_logs `_cline_state`)


def task_file(data: Path, stem: str, name: str) -> Path:
    return data / f"{stem}.{name}.json.xz"


def keep_task(folder: Path, data: Path, stem: str) -> None:
    """Keep the task folder's files (those Cline wrote) beside the ledger `stem`."""
    for name in TASK_FILES:
        src = folder / f"{name}.json"
        if src.exists():
            task_file(data, stem, name).write_bytes(lzma.compress(src.read_bytes(), preset=9))


def task_trace(data: Path, stem: str) -> Trace:
    """The kept task folder `stem`, imported (traces/importers/cline_task.py)."""
    first = task_file(data, stem, TASK_FILES[0])
    if not first.exists():
        raise PredictError(f"{first}: no kept task folder (record the setting again)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tasks" / stem
        folder.mkdir(parents=True)
        for name in TASK_FILES:
            kept = task_file(data, stem, name)
            if kept.exists():
                (folder / f"{name}.json").write_bytes(lzma.decompress(kept.read_bytes()))
        res = import_paths([folder])
    if len(res.traces) != 1:
        raise PredictError(f"{stem}: the task folder imports as {len(res.traces)} conversations, not one")
    return res.traces[0]


def truncation_turns(trace: Trace) -> list[int]:
    """The requests before each truncation the import replays (a compaction without a summary)."""
    turns, requests = [], 0
    for e in trace.events:
        if isinstance(e, CompactionEvent):
            turns.append(requests)
        elif isinstance(e, MessageEvent) and e.role == "assistant":
            requests += 1
    return turns


def simulate(trace: Trace, policy: Policy) -> list[RequestRecord]:
    """`trace` under `policy` on the runs' profile (bench/live/predict.py `simulate`: a run that does
    not end well is an error)."""
    return predict.simulate(Task(prepare_for(trace), []), policy, PROFILE)


def predicted_truncations(recs: list[RequestRecord]) -> list[int]:
    """The requests before each truncation the preset made (its edit is named `compaction`)."""
    return [i for i, r in enumerate(recs) if "compaction" in r.edit.split("+")]


__all__ = ["PROFILE", "keep_task", "predicted_truncations", "simulate", "task_trace", "truncation_turns"]
