"""`ctxbench report`: an HTML page with the sweep's plots, a policy table per budget and all runs."""

from __future__ import annotations

import argparse

from ctxbench.bench.report import write_report
from ctxbench.bench.store import read_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="HTML report of sweep results",
        description=__doc__,
        epilog="example: ctxbench report reports/sweep.csv -o reports/game-300",
    )
    p.add_argument(
        "results", metavar="RESULTS", help="results CSV from `ctxbench sweep` (or its .runs.jsonl ledger)"
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory, e.g. reports/NAME")
    p.add_argument("--name", default="", help="report title (default: the directory name)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    page = write_report(read_results(args.results), args.output, args.name, args.results)
    print(page)
    return 0
