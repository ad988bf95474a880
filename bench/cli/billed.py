"""`ctxbench billed LOG|DIR...`: what the provider billed, as recorded in real logs, per session.

A session is a log's main conversation with its sub-agents (ccusage's `session` view groups them
so); its uncached input, output, cache writes (5m + 1h), cache reads and their cost at the catalog's
prices (bench/billed.py; per request, so a long-context tier applies where a prompt exceeds it).
`--json` names the figures as ccusage's `session --json` does (inputTokens, outputTokens,
cacheCreationTokens, cacheReadTokens, totalCost), so the two can be compared to the token (issue
11; tests/bench/test_ccusage_totals.py keeps the shared sessions' figures). A folder is read as
`fidelity --all-real` reads one: every log in it, found by its format.

A request's cost is the one the log records where it records one (Claude Code 1.0.x `costUSD`,
Cline's own cost), as ccusage's default mode `auto` does, else its usage at list prices; `--mode
calculate` prices every request.

A request copied into a later session (Claude Code copies the turns of a session it forks or
resumes into the new file, with their requestId) is counted once, in the log whose first line is the
earliest, as ccusage does (bench/billed.py); stderr says how many were left out where.

A model the catalog does not know gets no guessed cost (H-20): its session's tokens are printed,
its cost is unknown (null), the error names the closest known ids, and the exit status is 2;
`--model` prices the log as a known model (said on stderr), `--prices FILE` adds the row.
"""

from __future__ import annotations

import argparse
import json
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
    from ctxbench.bench.billed import billed_totals, first_time
    from ctxbench.bench.fidelity.discover import Log, discover
    from ctxbench.sim.core.catalog import add_prices_file, canonical
    from ctxbench.traces.importers import detect, import_paths

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
    unpriced = False
    seen: set[str] = set()  # request ids counted: a copy in a later log is left out
    for k in sorted(range(len(logs)), key=lambda k: first_time(logs[k].path)):  # stable: ties keep order
        log = logs[k]
        res = import_paths([log.path], log.format)
        if model is not None:
            print(f"note: {log.rel}: priced as {model} (--model)", file=sys.stderr)
        t = billed_totals(list(res.traces), model, seen if log.format == "claude-code" else None, args.mode)
        if t.copied:
            print(
                f"note: {log.rel}: {t.copied} request(s) copied from an earlier session "
                "(a forked or resumed session) left out: counted there",
                file=sys.stderr,
            )
        rows[k] = (
            {
                "session": log.rel, "format": log.format, "model": model or res.main.header.model,
                "conversations": len(res.traces), "requests": t.requests, "inputTokens": t.input,
                "outputTokens": t.output, "cacheCreationTokens": t.cache_write,
                "cacheCreation1hTokens": t.cache_write_1h, "cacheReadTokens": t.cache_read,
                "totalTokens": t.input + t.output + t.cache_write + t.cache_read,
                "totalCost": None if t.unpriced else round(t.cost, 6), "copiedRequests": t.copied,
            }
        )  # fmt: skip
        for why in t.unpriced:
            print(f"ctxbench: error: {log.rel}: no cost: {why}", file=sys.stderr)
        unpriced = unpriced or bool(t.unpriced)
    print(json.dumps(rows, indent=2) if args.json else _table(rows))
    return 2 if unpriced else 0  # every figure printed; a cost left out is bad input (H-20)


def _table(rows: list[dict[str, Any]]) -> str:
    head = ("session", "requests", "input", "output", "cache write", "cache read", "cost")
    keys = ("requests", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
    body = [(r["session"], *(f"{r[k]:,}" for k in keys), _dollars(r["totalCost"])) for r in rows]
    if len(rows) > 1:
        costs = [r["totalCost"] for r in rows]
        cost = None if None in costs else sum(costs)
        body.append(("total", *(f"{sum(r[k] for r in rows):,}" for k in keys), _dollars(cost)))
    widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*line) for line in (head, *body))


def _dollars(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
