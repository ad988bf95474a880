"""`ctxbench compare`: replay the same traces under several policies and print one table, policies
as rows: cost and cost relative to the best, share read from cache, misses by cause, compactions
and tokens saved, evictions, failed requests by error kind, runs ended early, estimate error;
with --seeds N, mean ± 95 % interval."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from ctxbench.bench.cli._run_options import add_run_options, run_options
from ctxbench.bench.compare import FORMATS, compare_runs, render, served_on, served_pairs
from ctxbench.policies.preset import preset_names
from ctxbench.sim.core.values import size_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare policies on traces (one table)",
        description=__doc__,
        epilog="example: ctxbench compare traces/samples/game-300.jsonl "
        "--policy h-openrouter --policy h-keep-last-2",
    )
    p.add_argument(
        "traces",
        nargs="+",
        metavar="TRACE",
        help="trace files, or generator specs: gen:game?turns=300, gen:FILE.yaml",
    )
    p.add_argument(
        "--policy", action="append", help="preset name or YAML path (repeat; default: every preset)"
    )
    p.add_argument(
        "--provider",
        help="provider profile (default: the one serving each trace's model, as `run`; the preset's "
        "only for a trace that names no model)",
    )
    p.add_argument("--model", help="run every request as this model (default: each trace's own, as `run`)")
    p.add_argument(
        "--budget",
        type=size_arg,
        help="budget for every policy (default: each preset's); 80000, 80k or 1.5M; what it means is "
        "each preset's budget_means (working budget, model window; none: refused)",
    )
    p.add_argument("--seeds", type=int, default=1, help="seeds per policy and trace (default 1)")
    p.add_argument("--seed-base", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--format", choices=FORMATS, default="terminal", help="output format (default terminal)")
    p.add_argument("-o", "--output", help="write the table to FILE instead of stdout")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: all cores, 1 for small jobs)")
    add_run_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.seeds < 1:
        raise ValueError("--seeds must be at least 1")
    policies = args.policy or preset_names()
    seeds = list(range(args.seed_base, args.seed_base + args.seeds))
    rows, prs = compare_runs(
        args.traces, policies, seeds, args.budget, args.provider, run_options(args), args.jobs, args.model
    )
    title = f"{len(args.traces)} trace(s) · {len(seeds)} seed(s) · {served_on(rows)}"
    meta = {
        "traces": args.traces,
        "seeds": seeds,
        "provider": args.provider,
        "model": args.model,
        "served": served_pairs(rows),
        "budget": args.budget,
        "runs": rows,
    }
    text = render(prs, args.format, title, meta)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text.rstrip("\n"))
    why = Counter(str(r["status"]) for r in rows if r["status"] != "ok")
    if why and args.format == "terminal":
        reasons = ", ".join(f"{k} {n}" for k, n in sorted(why.items()))
        print(
            f"note: {sum(why.values())} run(s) ended early: {reasons} (the failed requests are in the "
            "`req. errors` columns by kind; each run's status in --format json)",
            file=sys.stderr,
        )
    return 0
