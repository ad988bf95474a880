"""Where ccusage 20.x reads a log of another harness than Claude Code otherwise than `billed` does:
`billed --json` says it in `readingNotes` (`versus: "ccusage"`), stderr once per kind of note.

Compared with `ccusage codex|gemini|opencode session --json --offline` 20.0.24 over copies of the
logs laid out as each sub-command looks for them (`$CODEX_HOME/sessions/YYYY/MM/DD/`,
`$CODEX_HOME/archived_sessions/`; `$GEMINI_DATA_DIR/tmp/<project>/chats/`;
`$OPENCODE_DATA_DIR/opencode.db` or `storage/`); tests/bench/test_ccusage_other_formats.py keeps
the figures. Tokens and cost agree but for these readings (each a test there):

- Gemini CLI `thoughts`: billed as output tokens (the Gemini API's `thoughtsTokenCount`, priced
  at the output rate: https://ai.google.dev/gemini-api/docs/thinking#pricing) and so in `billed`'s
  `outputTokens`. ccusage prices them as output too (its `totalCost` and `totalTokens` count them)
  but leaves them out of its `outputTokens`, so its fields do not add up to its total.
- Gemini CLI files sharing a `sessionId` (the CLI starts a new `session-*.json` file in the same
  session, e.g. after `/clear` or `/chat resume`): ccusage sums them into one session, `billed`
  prints one row per file (each its own conversation); the note gives the session's sum.
- opencode sessions: ccusage lists each session of the store on its own, a sub-agent's child
  session too; `billed` sums a store's sessions into one row, as ccusage's own `claude session`
  groups a Claude Code session with its sub-agents; the note gives the first session's figures.
- A Codex rollout that names no model (0.34: no `turn_context`): ccusage prices it as gpt-5 and
  marks it `isFallback`; `billed` guesses no price (H-20) and says how to give one (`--model`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.bench.billed.totals import BilledTotals, ReadingNote, billed_totals
from ctxbench.traces.compressed import open_log, read_errors

if TYPE_CHECKING:
    from ctxbench.traces.model import Trace

FIELDS = ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "totalTokens")


def _figures(t: BilledTotals) -> dict[str, int]:
    total = t.input + t.output + t.cache_write + t.cache_read
    return dict(zip(FIELDS, (t.input, t.output, t.cache_write, t.cache_read, total), strict=True))


def gemini_thoughts(path: Path) -> tuple[int, int]:
    """(requests with thoughts, their `thoughts` tokens) of a Gemini CLI session file (`.json` or
    `.jsonl`; a record logged again counts once, as its last copy: traces/importers/gemini_cli.py)."""
    try:
        with open_log(path) as f:
            text = f.read()
    except read_errors():
        return 0, 0
    records: dict[str, dict[str, Any]] = {}
    try:
        if path.name.split(".")[-1] == "json" or ".json." in path.name:
            doc = json.loads(text)
            rows = doc.get("messages", []) if isinstance(doc, dict) else []
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (ValueError, RecursionError):
        return 0, 0
    for k, r in enumerate(rows):
        if isinstance(r, dict) and r.get("type") == "gemini" and isinstance(r.get("tokens"), dict):
            records[str(r.get("id", k))] = r
    thoughts = [r["tokens"].get("thoughts") for r in records.values()]
    counts = [int(v) for v in thoughts if isinstance(v, int | float) and v > 0]
    return len(counts), sum(counts)


def format_notes(
    fmt: str, path: Path, traces: list[Trace], t: BilledTotals, priced_as: str | None = None
) -> tuple[ReadingNote, ...]:
    """The notes on one log (module docstring) that its own file tells; `priced_as`: `--model`."""
    notes: list[ReadingNote] = []
    if fmt == "gemini-cli":
        n, thoughts = gemini_thoughts(path)
        if thoughts:
            notes.append(ReadingNote(
                "gemini-thoughts-in-output", n, {"outputTokens": (t.output, t.output - thoughts)},
                f"outputTokens holds the {thoughts:,} thoughts tokens, billed as output (Gemini API "
                "thoughtsTokenCount); ccusage counts them in its totalTokens and totalCost, not in its "
                "outputTokens", "ccusage",
            ))  # fmt: skip
    elif fmt == "opencode":
        sessions = list(dict.fromkeys(str(tr.header.meta.get("session", "")) for tr in traces))
        if len(sessions) > 1:
            first = [tr for tr in traces if str(tr.header.meta.get("session", "")) == sessions[0]]
            main = billed_totals(first)
            theirs = _figures(main)
            notes.append(ReadingNote(
                "opencode-sessions-summed", t.requests - main.requests,
                {k: (v, theirs[k]) for k, v in _figures(t).items() if v != theirs[k]},
                f"this row sums {len(sessions)} opencode sessions (a sub-agent's child session has its "
                f"own); ccusage lists each on its own: its figures are those of {sessions[0]} alone",
                "ccusage",
            ))  # fmt: skip
    elif fmt == "cline-task":
        notes += _cline_default_price(traces)
    elif fmt == "codex" and priced_as is None and any(not tr.header.model for tr in traces) and t.requests:
        notes.append(ReadingNote(
            "codex-no-model", t.requests, {},
            "the rollout names no model: ccusage prices it as gpt-5 (`isFallback: true` in its "
            "JSON); billed guesses no price (--model gpt-5 gives ccusage's cost)", "ccusage",
        ))  # fmt: skip
    return tuple(notes)


def _cline_default_price(traces: list[Trace]) -> list[ReadingNote]:
    """A Cline task's requests whose logged cost 0 is Cline's default price, not a bill (the
    importer's count; imported here only for a Cline task: `billed` imports one importer per format)."""
    from ctxbench.traces.importers.cline_task import DEFAULT_PRICE_META

    n = sum(int(tr.header.meta.get(DEFAULT_PRICE_META, 0)) for tr in traces)
    if not n:
        return []
    return [ReadingNote(
        "cline-default-price", n, {},
        "the log records cost 0 on Cline's OpenAI-compatible provider, which prices a model at the "
        "user's prices, 0 unless set: not a bill; priced from the catalog (traces/importers/cline_task.py)",
        "log",
    )]  # fmt: skip


def shared_session_notes(rows: list[dict[str, Any]], sessions: list[str]) -> None:
    """Gemini CLI files of one `sessionId` (`sessions[k]` is row k's, "" for other formats): add
    to each a note with the sum ccusage prints for that session."""
    groups: dict[str, list[int]] = defaultdict(list)
    for k, (row, sid) in enumerate(zip(rows, sessions, strict=True)):
        if row and sid and row.get("format") == "gemini-cli":
            groups[sid].append(k)
    for sid, ks in groups.items():
        if len(ks) < 2:
            continue
        total = {f: sum(_as_ccusage(rows[k], f) for k in ks) for f in FIELDS}
        for k in ks:
            note = ReadingNote(
                "gemini-session-files-summed", sum(rows[j]["requests"] for j in ks if j != k),
                {f: (rows[k][f], total[f]) for f in FIELDS},
                f"{len(ks)} files of this folder share sessionId {sid}; ccusage sums them into one "
                "session (its figures here), billed gives each file a row", "ccusage",
            )  # fmt: skip
            rows[k]["readingNotes"].append(note.as_dict())


SHORT = {
    "gemini-thoughts-in-output": "outputTokens holds Gemini's thoughts tokens (billed as output); "
    "ccusage's outputTokens leaves them out, its totalTokens and cost count them",
    "gemini-session-files-summed": "files sharing a Gemini CLI sessionId: ccusage sums them into one "
    "session, billed gives each file a row",
    "opencode-sessions-summed": "a row sums an opencode store's sessions (sub-agents' child sessions "
    "too); ccusage lists each on its own",
    "codex-no-model": "a Codex rollout that names no model: ccusage prices it as gpt-5 (isFallback), "
    "billed leaves its cost unknown",
}


def _as_ccusage(row: dict[str, Any], field: str) -> int:
    """A row's figure as ccusage reads its file (its own notes applied)."""
    for note in row.get("readingNotes", []):
        if note.get("versus") == "ccusage" and field in note["figures"]:
            return int(note["figures"][field]["ccusage"])
    return int(row[field])


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """One stderr line per kind of ccusage note: how many sessions and requests it concerns."""
    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        for note in row.get("readingNotes", []):
            if note.get("versus") == "ccusage":
                per[note["what"]].append(note)
    lines = []
    for what, notes in per.items():
        n = sum(int(x["requests"]) for x in notes)
        lines.append(
            f"note: {len(notes)} session(s), {n:,} request(s) ({what}): "
            f"{SHORT.get(what, notes[0]['why'])} (--json readingNotes)"
        )
    return lines
