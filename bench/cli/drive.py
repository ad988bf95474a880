"""`ctxbench drive`: replay TRACE through a live server under a policy, with the official SDKs."""

from __future__ import annotations

import argparse
import sys

from ctxbench.bench.cli._serving import add_drive_options, drive_inputs
from ctxbench.bench.live.drive import live_provider_for, materialize
from ctxbench.bench.live.validate import run_conversation
from ctxbench.sim.core.records import write_jsonl
from ctxbench.sim.summary import format_summary, summarize


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "drive", help="reference agent loop (official SDKs) against a live server", description=__doc__
    )
    add_drive_options(p)
    p.add_argument("--server", required=True, help="base URL, e.g. http://127.0.0.1:8765")
    p.add_argument("--model", help="model (default: the trace's)")
    p.add_argument("--records", help="write the request records as JSONL ('-' for stdout)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    trace, policy = drive_inputs(args)
    from ctxbench.sim.core.catalog import canonical, prices
    from ctxbench.sim.runner import DEFAULT_MODEL

    model = args.model or trace.header.model or DEFAULT_MODEL
    prices(canonical(model))  # an unknown model stops here, naming the closest ids (H-20)
    live = live_provider_for(args.server.rstrip("/"), args.api, not args.no_stream, "drive")
    records = run_conversation(materialize(trace, args.api), policy, live, model)
    if args.records == "-":
        write_jsonl(records, sys.stdout)
    elif args.records:
        with open(args.records, "w", encoding="utf-8") as f:
            write_jsonl(records, f)
    print(format_summary(summarize(records, []), f"{args.trace} · policy {policy.name} · live {args.server}"))
    return 0
