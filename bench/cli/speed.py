"""`ctxbench speed`: how many requests this machine simulates per CPU-second, in process, on the
bundled sample traces and presets, against the naive full re-hash reference in the same run."""

from __future__ import annotations

import argparse
import json
import sys

from ctxbench.bench.throughput import format_report, measure, sample_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "speed",
        help="simulated requests per CPU-second on the bundled traces and presets",
        description=__doc__,
        epilog="example: ctxbench speed --preset h-direct --preset c-default --json",
    )
    p.add_argument("--preset", action="append", help="time only this preset (repeatable; default: all)")
    p.add_argument("--trace", action="append", help="only this sample trace, e.g. game-300 (repeatable)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per figure; the median is kept (default 3)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.rounds < 1:
        raise ValueError(f"--rounds must be at least 1, not {args.rounds}")
    unknown = sorted(set(args.trace or ()) - set(sample_names()))
    if unknown:
        raise ValueError(f"unknown sample trace {unknown[0]!r}; sample traces: {', '.join(sample_names())}")
    quiet = args.json or not sys.stderr.isatty()
    report = measure(args.preset, args.trace, args.rounds, None if quiet else _progress)
    print(json.dumps(report.as_dict(), indent=2) if args.json else format_report(report))
    return 0


def _progress(message: str) -> None:
    print(message, file=sys.stderr)
