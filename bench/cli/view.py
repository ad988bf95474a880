"""`ctxbench view`: one self-contained HTML page to look at a session request by request.

  ctxbench view TRACE --policy P -o run.html                 one run
  ctxbench view TRACE --policy A --policy B -o cmp.html      two runs of the same trace
  ctxbench view LOG --fidelity -o session.html               an imported session: billed beside predicted

Each request's prompt as cache read / cache write / uncached, its cost, the context size against
the budget and the compaction thresholds, the compactions, evictions and cache breaks with their
cause, and a click-through to the request's blocks (bench/view/). The page loads nothing from
elsewhere; a 5,000-request session is a few MB."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxbench.bench.cli._run_options import add_run_options, run_options
from ctxbench.bench.cli._session_log import trace_or_log_hint
from ctxbench.policies.preset import load_policy, policy_assignments
from ctxbench.sim.core.values import size_arg
from ctxbench.traces.generators.spec import TRACE_HELP

if TYPE_CHECKING:
    from ctxbench.bench.view.collect import Blocks
    from ctxbench.bench.view.data import Codes
    from ctxbench.policies.preset import Policy


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="an HTML page of one session: request timeline, cache breaks, blocks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", help=TRACE_HELP + "; with --fidelity also a harness's session log")
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        help="preset name or YAML path; twice to compare two runs of the trace (default: recorded "
        "with --fidelity)",
    )
    p.add_argument(
        "--fidelity",
        action="store_true",
        help="an imported session: the replay under `recorded` beside the log's bill (as "
        "`ctxbench fidelity`)",
    )
    p.add_argument(
        "--conversation", help="with --fidelity: which conversation of the log (default: the main)"
    )
    p.add_argument("--budget", type=size_arg, help="budget for every policy (80000, 80k; its budget_means)")
    p.add_argument("--seed", type=int, default=0, help="seed for every random choice (default 0)")
    p.add_argument("--provider", help="provider profile (default as `ctxbench run`)")
    p.add_argument("--model", help="run every request as this model id (default: the trace's)")
    p.add_argument("-o", "--output", default="view.html", help="the page to write (default view.html)")
    add_run_options(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ctxbench.bench.view.collect import Blocks, observe
    from ctxbench.bench.view.data import Codes, page_data
    from ctxbench.bench.view.page import render_page

    opts = run_options(args)
    names = args.policy or (["recorded"] if args.fidelity else [])
    if not names:
        raise ValueError("view: name a --policy (twice to compare two runs), or give --fidelity")
    if len(names) > 2 or (args.fidelity and len(names) > 1):
        raise ValueError("view: at most two --policy to compare (one with --fidelity)")
    policies = []
    for name in names:
        pol = load_policy(name)
        if opts.policy_set:
            pol = dataclasses.replace(pol, **policy_assignments(list(opts.policy_set)))
        policies.append(pol.with_budget(args.budget))
    blocks, codes = Blocks(), Codes()
    common: dict[str, Any] = {
        "seed": args.seed, "provider": args.provider, "model": args.model,
        "provider_params": opts.provider_params, "tokenizer": opts.tokenizer,
    }  # fmt: skip
    if args.fidelity:
        data = _fidelity(args, policies[0], blocks, codes, common)
    else:
        with trace_or_log_hint(args.trace, "view"):
            runs = [observe(args.trace, pol, blocks, **common) for pol in policies]
        labels = [r.policy.name for r in runs]
        if len(labels) == 2 and labels[0] == labels[1]:
            labels = [f"{labels[0]} (1)", f"{labels[1]} (2)"]
        kind = "compare" if len(runs) == 2 else "run"
        title = " vs ".join(labels) + f" · {Path(args.trace).name}"
        data = page_data(kind, title, args.trace, runs, blocks, labels=labels, codes=codes)
    out = Path(args.output)
    try:
        out.write_text(render_page(data), encoding="utf-8")
    except OSError as e:
        raise ValueError(f"{out}: cannot write: {e.strerror or e}") from None
    n = sum(len(r["req"]["read"]) for r in data["runs"])
    print(f"wrote {out}: {n:,} requests, {out.stat().st_size / 1e6:.1f} MB")
    return 0


def _fidelity(
    args: argparse.Namespace, policy: Policy, blocks: Blocks, codes: Codes, common: dict[str, Any]
) -> dict[str, Any]:
    """The imported session's replay under `policy` beside its bill (bench/view/bill.py)."""
    from ctxbench.bench.fidelity.logs import traces_of
    from ctxbench.bench.view.bill import bill_json, score
    from ctxbench.bench.view.collect import observe
    from ctxbench.bench.view.data import page_data

    found = traces_of(args.trace)
    if args.conversation:
        found = [(n, t) for n, t in found if n.endswith(f"#{args.conversation}")]
        if not found:
            raise ValueError(f"{args.trace}: no conversation {args.conversation!r}")
    name, trace = found[0]
    run = observe(trace, policy, blocks, **common)
    sf = score(trace, args.provider, args.model)
    bill = bill_json(sf, len(run.records), codes)
    title = f"{Path(args.trace).name} · billed vs predicted"
    return page_data("fidelity", title, name, [run], blocks, billed=bill, codes=codes)
