"""Cline's context truncation, as a task folder records it (traces/importers/cline_task.py).

When a request's prompt nears the model's window (Cline's ContextManager: the context window less
27,000 tokens at 64k, 30,000 at 128k, 40,000 at 200k, else the larger of the window less 40,000 and
80 % of it; Cline 3.82.0's bundle, npm cline 2.18.0), Cline sends the next requests without a range of
the conversation's messages: the task (message 0) stays, the first reply (message 1) is replaced by a
notice that history was removed, and the messages of `conversationHistoryDeletedRange` [first, last]
(inclusive, indices into `api_conversation_history.json`) are left out. `api_conversation_history.json`
keeps every message; the range is on the `ui_messages.json` rows written after the request that used
it (Cline stores it once the request's context is built), and the notice's text is in
`context_history.json` (its updates to message 1, block 0). Seen on a real run: Cline CLI 2.18.0 on an
OpenAI-compatible endpoint with a 20,000-token window against `ctxbench serve`, where each request
after the first truncation read the system prompt and the task only
(tests/traces/importers/test_cline_task_live.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxbench.traces.importers.anthropic_blocks import user_contents
from ctxbench.traces.importers.base import ImportReport
from ctxbench.traces.model import Content

RANGE = "conversationHistoryDeletedRange"
CONTEXT_HISTORY = "context_history.json"
# Cline's notice (formatResponse.contextTruncationNotice), when context_history.json is absent
NOTICE = (
    "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context "
    "window length. The initial user task has been retained for continuity, while intermediate conversation "
    "history has been removed. Keep this in mind as you continue assisting the user. Pay special attention "
    "to the user's latest messages."
)

Range = tuple[int, int]


def request_ranges(rows: list[Any], requests: list[int]) -> list[tuple[Range, float] | None]:
    """The range each request left out and the time (ms) of the row that says so (None: none yet),
    `requests` the indices of its api_req_started rows: the range on the first later row before the
    next request's that carries one, else the range in effect before it."""
    out: list[tuple[Range, float] | None] = []
    current: tuple[Range, float] | None = None
    for k, start in enumerate(requests):
        end = requests[k + 1] if k + 1 < len(requests) else len(rows)
        for row in rows[start + 1 : end]:
            r = row.get(RANGE) if isinstance(row, dict) else None
            if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r):
                ts = row.get("ts")
                current = ((r[0], r[1]), float(ts) if isinstance(ts, int | float) else 0.0)
                break
        out.append(current)
    return out


def notices(folder: Path) -> tuple[list[tuple[float, str]], int]:
    """The notice texts that replaced message 1 (time in ms, text), oldest first, and how many other
    updates the file holds (to other messages: Cline's other context optimisations, not replayed)."""
    path = folder / CONTEXT_HISTORY
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return [], 0
    found: list[tuple[float, str]] = []
    other = 0
    for entry in doc if isinstance(doc, list) else []:
        if not (
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list) and len(entry[1]) == 2
        ):
            continue
        message, (_, blocks) = entry[0], entry[1]
        for block in blocks if isinstance(blocks, list) else []:
            updates = (
                block[1] if isinstance(block, list) and len(block) == 2 and isinstance(block[1], list) else []
            )
            for u in updates:
                text = _update_text(u)
                if message == 1 and block[0] == 0 and text is not None:
                    found.append((float(u[0]) if isinstance(u[0], int | float) else 0.0, text))
                else:
                    other += 1
    return sorted(found, key=lambda x: x[0]), other


def _update_text(u: Any) -> str | None:
    """The text of a `[ts, "text", [text], metadata]` update, else None."""
    if isinstance(u, list) and len(u) >= 3 and u[1] == "text" and isinstance(u[2], list) and u[2]:
        return str(u[2][0])
    return None


def notice_at(found: list[tuple[float, str]], t_ms: float | None) -> str:
    """The notice in effect at `t_ms` (the latest not after it), else Cline's own text."""
    text = NOTICE
    for ts, n in found:
        if t_ms is None or ts <= t_ms:
            text = n
    return text


def mark_truncations(
    folder: Path,
    rows: list[Any],
    requests: list[dict[str, Any]],
    msgs: list[dict[str, Any]],
    report: ImportReport,
) -> None:
    """Mark each request whose prompt Cline truncated anew (module docstring) with
    `truncated`: the history message its kept messages start at, and the task message with the
    notice that replaced the first reply (what opens the context from then on)."""
    ranges = request_ranges(rows, [q["row"] for q in requests])
    if not any(ranges):
        return
    if len({q["model"] for q in requests}) > 1:
        report.note("context truncation not replayed: the task ran on several models")
        return
    odd = sorted({got[0][0] for got in ranges if got is not None and got[0][0] != 2})
    if odd:
        report.note(f"context truncation from message {odd[0]} (Cline keeps messages 0-1): not replayed")
        return
    found, other = notices(folder)
    task = user_contents(msgs[0].get("content"), report, "api_conversation_history.json[0]") if msgs else []
    before: Range | None = None
    for q, got in zip(requests, ranges, strict=True):
        if got is None or got[0] == before:
            continue
        (_, last), ts = got
        before = got[0]
        kept = f"h{last + 1}"  # none of the earlier messages kept when it is the request's own
        kept = "" if kept in q.get("hist", ([], ""))[0] else kept
        q["truncated"] = (kept, [*task, Content("text", text=notice_at(found, ts))])
        report.counts["context truncations (Cline: history left out of the prompt)"] += 1
    if other:
        report.note(f"{CONTEXT_HISTORY}: {other} other context update(s) not replayed")
