"""`ctxbench validate`: simulate TRACE, drive it live through `ctxbench serve`, compare per request."""

from __future__ import annotations

import argparse

from ctxbench.policies.preset import load_policy
from ctxbench.sim.extras import require
from ctxbench.sim.serve.validate import format_comparison, validate
from ctxbench.traces.format import read_trace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate", help="simulation vs live drive through the HTTP server", description=__doc__
    )
    p.add_argument("trace", help="a ctxbench trace (JSONL) to replay")
    p.add_argument("--policy", required=True, help="preset name (see `ctxbench presets`) or YAML path")
    p.add_argument("--provider", help="provider profile (default: the preset's)")
    p.add_argument(
        "--api",
        choices=("anthropic", "chat"),
        default="anthropic",
        help="wire API the SDK speaks: anthropic Messages or OpenAI chat completions (default anthropic)",
    )
    p.add_argument("--no-stream", action="store_true", help="non-streaming requests")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random draw: fault and latency draws, best-effort evictions (default 0)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print every request's comparison")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    require("anthropic" if args.api == "anthropic" else "openai")  # the `live` extra
    c = validate(
        read_trace(args.trace),
        load_policy(args.policy),
        args.provider,
        args.api,
        not args.no_stream,
        args.seed,
    )
    print(format_comparison(c, args.verbose))
    return 0 if c.identical else 1
