"""`ctxbench run`: replay one trace under one policy and print what it cost."""

from __future__ import annotations

import argparse
import json
import sys

from ctxbench.bench.cli._run_options import add_run_options, run_options
from ctxbench.bench.cli._session_log import trace_or_log_hint
from ctxbench.bench.runs import run_single
from ctxbench.policies.budget import budget_label
from ctxbench.policies.preset import load_policy, with_policy_set
from ctxbench.sim.core.catalog import add_prices_file, model_info
from ctxbench.sim.core.records import save, write_jsonl
from ctxbench.sim.core.values import size_arg
from ctxbench.sim.summary import format_summary
from ctxbench.traces.generators.spec import TRACE_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="replay a trace under a policy preset", description=__doc__)
    p.add_argument("trace", help=TRACE_HELP)
    p.add_argument("--policy", required=True, help="preset name (see `ctxbench presets`) or YAML path")
    p.add_argument(
        "--budget",
        type=size_arg,
        help="context budget in tokens (80000, 80k or 1.5M); what it means is the preset's budget_means "
        "(working: H-11 32000..200000; window: overrides the model window; none: refused)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    p.add_argument(
        "--provider",
        help="provider profile (default: the one the trace's model is served by, a log's own evidence "
        "first; the preset's only for a trace that names no model)",
    )
    p.add_argument(
        "--model",
        help="run every request as this model id (default: the trace's, and the models it switches to; "
        "aliases and dated ids resolve, sim/core/catalog.py)",
    )
    p.add_argument("--prices", metavar="FILE", help="extra price rows (YAML, as sim/data/prices.yaml)")
    p.add_argument("--records", help="write every request record to FILE (.jsonl or .csv); '-' for stdout")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_run_options(p)
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when the simulated run ends with an error (default: it is a result, exit 0)",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    opts = run_options(args)
    policy = load_policy(args.policy)
    if opts.policy_set:
        policy = with_policy_set(policy, opts.policy_set)
    policy = policy.with_budget(args.budget)
    if args.prices:  # before the trace is prepared: its model may be one the file adds
        add_prices_file(args.prices)
    with trace_or_log_hint(args.trace, "run"):  # a raw session log: say `ctxbench import` first
        one = run_single(
            args.trace, policy, args.seed, args.provider, args.model, opts.provider_params, opts.tokenizer,
            on_note=lambda note: print(f"note: {note}", file=sys.stderr),
            policy_set=opts.policy_set, spec=args.policy,
        )  # fmt: skip
    serving, result, s, knows = one.serving, one.result, one.summary, one.knows
    policy = knows.policy
    provider, model = serving.profile, serving.model
    window = model_info(model).window
    if args.budget and policy.budget_means == "window" and args.budget > window:
        note = f"note: --budget {args.budget:,} is above {model}'s window; capped at {window:,}"
        print(note, file=sys.stderr)
    if args.records == "-":
        write_jsonl(result.records, sys.stdout)
    elif args.records:
        save(result.records, args.records)
    if args.json:
        print(
            json.dumps(
                {
                    "trace": args.trace,
                    "policy": policy.name,
                    "provider": provider,
                    "model": model,
                    "from_trace": list(knows.from_trace),
                    "assumptions": list(knows.assumptions),
                    **s.as_dict(),
                },
                indent=2,
            )
        )
    elif args.records != "-":
        title = (
            f"{args.trace} · policy {policy.name} · budget {budget_label(policy, model_info(model))} · "
            f"provider {provider} "
            f"({serving.why}) · model {model}"
        )
        told = [f"from the trace: {k}" for k in knows.from_trace]
        told += [f"assumed: {a}" for a in knows.assumptions]
        print(title + "".join(f"\n  {t}" for t in told))
        print(format_summary(s, "").lstrip("\n"))
    if s.status != "ok" and not args.json:
        print(
            f"note: the simulated run ended with an {s.status} (a result; --strict exits 1)", file=sys.stderr
        )
    return 1 if args.strict and s.status != "ok" else 0
