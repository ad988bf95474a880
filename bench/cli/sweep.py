"""`ctxbench sweep`: run every combination of traces, policies, budgets, providers and seeds in
parallel; results in a columnar CSV, every finished run kept in a ledger so a killed sweep resumes."""

from __future__ import annotations

import argparse
import json

from ctxbench.bench.cli._extras import require
from ctxbench.bench.cli._run_options import add_run_options, run_options
from ctxbench.bench.progress import terminal_stderr
from ctxbench.bench.runs import make_tasks
from ctxbench.bench.sweep import run_sweep
from ctxbench.sim.core.values import parse_sizes


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="budget sweep: every policy x budget x seed on traces, resumable",
        description=__doc__,
        epilog="example: ctxbench sweep traces/samples/game-300.jsonl --policy h-openrouter "
        "--policy h-keep-last-2 --budgets 32k:200k:8k --seeds 3 -o reports/sweep.csv",
    )
    p.add_argument(
        "traces",
        nargs="+",
        metavar="TRACE",
        help="trace files, or generator specs: gen:game?turns=300&seed=1, gen:FILE.yaml",
    )
    p.add_argument("--policy", action="append", required=True, help="preset name or YAML path (repeat)")
    p.add_argument(
        "--budgets", default="32k:200k:8k", help="START:STOP:STEP or a list (default 32k:200k:8k, H-11)"
    )
    p.add_argument(
        "--provider",
        action="append",
        help="provider profile (repeat; default: the one serving each trace's model, as `run`; the "
        "preset's only for a trace that names no model)",
    )
    p.add_argument("--model", help="run every request as this model (default: each trace's own, as `run`)")
    p.add_argument("--seeds", type=int, default=1, help="number of seeds per cell (default 1)")
    p.add_argument("--seed-base", type=int, default=0, help="first seed (default 0)")
    p.add_argument(
        "-o", "--output", required=True, metavar="RESULTS", help="results CSV (ledger kept beside it)"
    )
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: all cores)")
    add_run_options(p)
    p.add_argument("--scheduler", help="'local-dask' or a Dask scheduler address (needs the dask extra)")
    p.add_argument("--fresh", action="store_true", help="discard the ledger and start over")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--json", action="store_true", help="print the totals as JSON")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.seeds < 1:
        raise ValueError("--seeds must be at least 1")
    if args.scheduler:  # name the missing extra before any progress is drawn
        require("distributed")
    budgets = parse_sizes(args.budgets)
    seeds = list(range(args.seed_base, args.seed_base + args.seeds))
    tasks = make_tasks(
        args.traces, args.policy, list(budgets), args.provider or [None], seeds, run_options(args), args.model
    )
    stats = run_sweep(
        tasks, args.output, args.jobs, args.scheduler, args.fresh, terminal_stderr(args.quiet)
    )
    if args.json:
        print(json.dumps(stats.as_dict(), indent=2))
    else:
        print(
            f"{stats.total} runs: {stats.reused} already stored, "
            f"{stats.computed} computed in {stats.seconds:.1f} s"
            f" -> {stats.results} (ledger {stats.ledger})"
        )
    return 0
