"""`ctxbench billed LOG|DIR...`: what the provider billed, as recorded in real logs, per session.

A session is a log's main conversation with its sub-agents (ccusage's `session` view groups them
so); its uncached input, output, cache writes (5m + 1h), cache reads and their cost at the catalog's
prices (bench/billed/totals.py; per request, so a long-context tier applies where a prompt exceeds it).
`--json` names the figures as ccusage's `session --json` does (inputTokens, outputTokens,
cacheCreationTokens, cacheReadTokens, totalCost), so the two can be compared to the token (issue
11; tests/bench/test_ccusage_totals.py keeps the shared sessions' figures). A folder is read as
`fidelity --all-real` reads one: every log in it, found by its format.

A request's cost is the one the log records where it records one (Claude Code 1.0.x `costUSD`,
Cline's own cost), as ccusage's default mode `auto` does, else its usage at list prices; `--mode
calculate` prices every request.

A request copied into a later session (Claude Code copies the turns of a session it forks or
resumes into the new file, with their requestId) is counted once, in the log whose first line is the
earliest, as ccusage does (bench/billed/totals.py); stderr says how many were left out where.

A model the catalog does not know gets no guessed cost (H-20): its session's tokens are printed,
its cost is unknown (null), the error names the closest known ids, and the exit status is 2;
`--model` prices the log as a known model (said on stderr), `--prices FILE` adds the row.

Every session is also broken down per model its requests ran on (a `/model` switch, Cline's model
picker, a Gemini CLI fallback to Flash): the table prints one indented line per model under a
session that used several; `--json` gives `modelsUsed` and `modelBreakdowns` (ccusage's names, with
`requests` added), and `model` is the model most of its requests ran on.

On Codex rollouts, Gemini CLI chats and opencode (or Kilo CLI) stores the figures are ccusage 20.x's
(`ccusage codex|gemini|opencode session --json`) but where ccusage reads a log otherwise: then
`readingNotes` has an entry with `versus: "ccusage"` giving ccusage's figure and why (Gemini's
thoughts tokens outside its outputTokens, Gemini CLI files of one sessionId summed, an opencode
store's sessions listed apart, a Codex rollout without a model priced as gpt-5), and stderr one line
per kind (bench/billed/ccusage.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

HELP = "billed tokens and cost of real logs per session (as ccusage sums them)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("billed", help=HELP, description=__doc__)
    p.add_argument("paths", nargs="+", help="recorded session logs, or folders of them")
    p.add_argument("--json", action="store_true", help="one object per session, ccusage's field names")
    p.add_argument("--model", help="price every request as this known model (default: the log's)")
    p.add_argument("--prices", metavar="FILE", help="extra price rows (YAML, as sim/data/prices.yaml)")
    p.add_argument(
        "--mode",
        choices=("auto", "calculate"),
        default="auto",
        help="auto (default, as ccusage): a request's cost as the log records it where it does "
        "(Claude Code 1.0.x costUSD, Cline), else at list prices; calculate: always at list prices",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ctxbench.bench.billed.ccusage import shared_session_notes, summary
    from ctxbench.bench.billed.logs import Seen, in_billing_order, log_totals
    from ctxbench.bench.billed.read_ahead import ReadAhead
    from ctxbench.bench.fidelity.discover import Log, discover
    from ctxbench.sim.core.catalog import add_prices_file, canonical
    from ctxbench.traces.importers import ImportFailure, detect

    if args.prices:
        add_prices_file(args.prices)
    model = canonical(args.model) if args.model else None
    logs: list[Log] = []
    for raw in args.paths:
        path = Path(raw)
        if path.is_dir():
            logs += [Log(f"{raw.rstrip('/')}/{log.rel}", log.path, log.format) for log in discover(path).logs]
        else:
            logs.append(Log(raw, path, detect(path)))
    rows: list[dict[str, Any]] = [{} for _ in logs]
    sessions = ["" for _ in logs]  # a Gemini CLI file's sessionId (ccusage groups its files by it)
    unpriced = False
    seen = Seen()  # request ids counted (and where): a copy in a later log is left out
    order = in_billing_order(logs)  # a Claude Code log is read ahead on the other cores (ReadAhead)
    with ReadAhead([logs[k].path for k in order if logs[k].format == "claude-code"]) as read:
        for k in order:
            log = logs[k]
            if model is not None:
                print(f"note: {log.rel}: priced as {model} (--model)", file=sys.stderr)
            seen.start(log.rel)
            try:
                lt = log_totals(log, model, seen, args.mode, read)
            except ImportFailure as e:  # one bad log of a folder: named, the others still summed
                if len(logs) == 1:
                    raise
                print(f"ctxbench: error: {log.rel}: {e} (left out)", file=sys.stderr)
                unpriced = True
                continue
            t, main_model, n_conv, sessions[k] = lt.totals, lt.model, lt.conversations, lt.session
            if t.copied:
                where = ", ".join(f"{n} in {rel}" for rel, n in seen.copied_from())
                print(
                    f"note: {log.rel}: {t.copied} request(s) copied from an earlier session (a forked or "
                    "resumed one, or a sub-agent's copy of its session's requests) left out: counted there "
                    f"({where})",
                    file=sys.stderr,
                )
            rows[k] = (
                {
                    "session": log.rel, "format": log.format, "model": model or _main_model(t) or main_model,
                    "modelsUsed": [m.model for m in t.models],
                    "conversations": n_conv, "requests": t.requests, "inputTokens": t.input,
                    "outputTokens": t.output, "cacheCreationTokens": t.cache_write,
                    "cacheCreation1hTokens": t.cache_write_1h, "cacheReadTokens": t.cache_read,
                    "totalTokens": t.input + t.output + t.cache_write + t.cache_read,
                    "totalCost": None if t.unpriced else round(t.cost, 6), "copiedRequests": t.copied,
                    "modelBreakdowns": [m.as_dict() for m in t.models],
                    "readingNotes": [note.as_dict() for note in t.notes],
                }
            )  # fmt: skip
            for note in t.notes:
                if note.versus != "ccusage":  # those: one line per kind, below
                    print(f"note: {log.rel}: {note.text()}", file=sys.stderr)
            for why in t.unpriced:
                print(f"ctxbench: error: {log.rel}: no cost: {why}", file=sys.stderr)
            unpriced = unpriced or bool(t.unpriced)
    shared_session_notes(rows, sessions)
    for line in summary(rows):
        print(line, file=sys.stderr)
    rows = [r for r in rows if r]  # a log left out above has no row
    print(json.dumps(rows, indent=2) if args.json else _table(rows))
    return 2 if unpriced else 0  # every figure printed; a cost or a log left out is bad input (H-20)


def _main_model(t: Any) -> str:
    """The model most requests of a session ran on (the first of them on a tie)."""
    return max(t.models, key=lambda m: m.requests).model if t.models else ""


def _table(rows: list[dict[str, Any]]) -> str:
    """One line per session; under a session that ran on several models, one line per model."""
    head = ("session", "requests", "input", "output", "cache write", "cache read", "cost")
    keys = ("requests", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
    sessions = [str(r["session"]) for r in rows]
    common = os.path.commonpath(sessions) if len(rows) > 1 and all("/" in x for x in sessions) else ""
    cut = len(common) + 1 if common else 0  # the folder they share is said once, above the table
    body: list[tuple[str, ...]] = []
    for r in rows:
        body.append((short_path(r["session"][cut:]), *(f"{r[k]:,}" for k in keys), _dollars(r["totalCost"])))
        if len(r["modelBreakdowns"]) > 1:
            for m in r["modelBreakdowns"]:
                body.append((f"  {m['modelName']}", *(f"{m[k]:,}" for k in keys), _dollars(m["cost"])))
    if len(rows) > 1:
        costs = [r["totalCost"] for r in rows]
        cost = None if None in costs else sum(costs)
        body.append(("total", *(f"{sum(r[k] for r in rows):,}" for k in keys), _dollars(cost)))
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    lines = [fmt.format(*line) for line in (head, *body)]
    return "\n".join(([f"sessions under {common}/"] if common else []) + lines)


SESSION_WIDTH = 56  # the table's session column; --json keeps every path whole


def short_path(path: str, width: int = SESSION_WIDTH) -> str:
    """`path` in at most `width` characters for the table: an ellipsis, the end of its folder (a
    project's name ends there) and its file name (which tells sessions apart), so a folder of
    Claude Code logs does not print a ~130-character column (issue 31 #9)."""
    if len(path) <= width:
        return path
    folder, _, name = path.rpartition("/")
    if len(name) > width - 8:
        return "…" + path[-(width - 1) :]
    room = width - len(name) - 2
    return f"…{folder[-room:]}/{name}" if folder else name


def _dollars(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
