"""`ctxbench plot`: cost versus budget per policy (95 % bands over seeds), share read from cache
versus budget, compactions and failed runs versus budget; PNG and SVG from a sweep's results."""

from __future__ import annotations

import argparse

from ctxbench.bench.plots import plot_results
from ctxbench.bench.store import read_results


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plot",
        help="plot sweep results (PNG and SVG)",
        description=__doc__,
        epilog="example: ctxbench plot reports/sweep.csv -o reports/sweep-plots",
    )
    p.add_argument(
        "results", metavar="RESULTS", help="results CSV from `ctxbench sweep` (or its .runs.jsonl ledger)"
    )
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for the plots")
    p.add_argument("--title", default="", help="added to every plot title")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    paths = plot_results(read_results(args.results), args.output, args.title)
    for p in paths:
        print(p)
    return 0
