"""`ctxbench validate`: simulate TRACE, drive it live through `ctxbench serve`, compare per request."""

from __future__ import annotations

import argparse

from ctxbench.bench.cli._serving import add_drive_options, drive_inputs
from ctxbench.bench.live.validate import format_comparison, validate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate", help="simulation vs live drive through the HTTP server", description=__doc__
    )
    add_drive_options(p)
    p.add_argument("--provider", help="provider profile (default: the preset's)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random draw: fault and latency draws, best-effort evictions (default 0)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print every request's comparison")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    trace, policy = drive_inputs(args)
    c = validate(
        trace,
        policy,
        args.provider,
        args.api,
        not args.no_stream,
        args.seed,
    )
    print(format_comparison(c, args.verbose))
    return 0 if c.identical else 1
