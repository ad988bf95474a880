"""Cline's context truncation, as a task folder records it (traces/importers/cline_task.py).

When a request's prompt nears the model's window (Cline's ContextManager: the context window less
27,000 tokens at 64k, 30,000 at 128k, 40,000 at 200k, else the larger of the window less 40,000 and
80 % of it; Cline 3.82.0's bundle, npm cline 2.18.0), or when the provider refuses a prompt as too long,
Cline sends the next requests without a range of the conversation's messages: the task (message 0) and
the first reply (message 1) stay, the reply's first block replaced by a notice that history was removed
(and, after a refused prompt, the task's first block by "[Continue assisting the user!]"), and the
messages of `conversationHistoryDeletedRange` [first, last] (inclusive, indices into
`api_conversation_history.json`) are left out. `api_conversation_history.json` keeps every message as
it was; the range is on the `ui_messages.json` rows written after the request that used it (Cline
stores it once the request's context is built), and the replaced texts are in `context_history.json`
(updates per message and block, each with its time). Seen on real runs of Cline CLI 2.18.0 against
`ctxbench serve` (tests/traces/importers/test_cline_task_live.py): on an OpenAI-compatible endpoint with
a 20,000-token window, where each request after the first truncation read the system prompt and the
task only, and on Anthropic past 200,000 tokens, where the refused prompts were sent again truncated
and read the system prompt only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxbench.traces.importers.anthropic_blocks import assistant_contents, user_contents
from ctxbench.traces.importers.base import ImportReport

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


Updates = dict[tuple[int, int], list[tuple[float, str]]]  # (message, block) -> [(time ms, text)]


def opening_updates(folder: Path) -> tuple[Updates, int]:
    """The text updates `context_history.json` holds for the blocks of messages 0 and 1 (oldest
    first), and how many it holds for other messages (Cline's other context optimisations, e.g. a
    file read again: not replayed). A missing or unreadable file holds none."""
    path = folder / CONTEXT_HISTORY
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}, 0
    found: Updates = {}
    other = 0
    for entry in doc if isinstance(doc, list) else []:
        if not (
            isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], list) and len(entry[1]) == 2
        ):
            continue
        message, (_, blocks) = entry[0], entry[1]
        for block in blocks if isinstance(blocks, list) else []:
            if not (isinstance(block, list) and len(block) == 2 and isinstance(block[1], list)):
                continue
            for u in block[1]:
                text = _update_text(u)
                if message in (0, 1) and isinstance(block[0], int) and text is not None:
                    ts = float(u[0]) if isinstance(u[0], int | float) else 0.0
                    found.setdefault((message, block[0]), []).append((ts, text))
                else:
                    other += 1
    return {k: sorted(v, key=lambda x: x[0]) for k, v in found.items()}, other


def _update_text(u: Any) -> str | None:
    """The text of a `[ts, "text", [text], metadata]` update, else None."""
    if isinstance(u, list) and len(u) >= 3 and u[1] == "text" and isinstance(u[2], list) and u[2]:
        return str(u[2][0])
    return None


def text_at(updates: list[tuple[float, str]], t_ms: float | None) -> str | None:
    """The text in effect at `t_ms` (the latest update not after it), None before any."""
    text = None
    for ts, n in updates:
        if t_ms is None or ts <= t_ms:
            text = n
    return text


def opened(message: dict[str, Any], index: int, updates: Updates, t_ms: float | None) -> list[Any]:
    """The content blocks of history message `index` (0 or 1) as sent at `t_ms`: each block's text
    replaced by its latest update; the first reply's first block is the notice at least."""
    raw = message.get("content")
    blocks = [{"type": "text", "text": raw}] if isinstance(raw, str) else list(raw or [])
    out = []
    for b, block in enumerate(blocks):
        text = text_at(updates.get((index, b), []), t_ms)
        if text is None and index == 1 and b == 0:
            text = NOTICE
        out.append({"type": "text", "text": text} if text is not None else block)
    return out


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
    updates, other = opening_updates(folder)
    before: Range | None = None
    for q, got in zip(requests, ranges, strict=True):
        if got is None or got[0] == before:
            continue
        (_, last), ts = got
        before = got[0]
        kept = f"h{last + 1}"  # none of the earlier messages kept when it is the request's own
        kept = "" if kept in q.get("hist", ([], ""))[0] else kept
        task = user_contents(opened(msgs[0], 0, updates, ts), report, "api_conversation_history.json[0]")
        reply = assistant_contents(opened(msgs[1], 1, updates, ts), report) if len(msgs) > 1 else []
        q["truncated"] = (kept, [*task, *reply])
        report.counts["context truncations (Cline: history left out of the prompt)"] += 1
    if other:
        report.note(f"{CONTEXT_HISTORY}: {other} other context update(s) not replayed")
