"""`ctxbench generate`: write a synthetic trace from a seeded generator."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from ctxbench.traces.format import write_trace
from ctxbench.traces.generators import GENERATORS, params_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="write a synthetic trace", description=__doc__)
    p.add_argument("generator", choices=sorted(GENERATORS), help="which generator")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--turns", type=int, help="number of model replies")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="any generator parameter")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    params = params_for(args.generator)
    valid = {f.name: f for f in dataclasses.fields(params)}
    changes: dict[str, object] = {"seed": args.seed}
    if args.turns is not None:
        changes["turns"] = args.turns
    for item in args.set:
        key, _, value = item.partition("=")
        if key not in valid:
            raise ValueError(
                f"unknown parameter {key!r} for generator {args.generator}; valid: {', '.join(valid)}"
            )
        current = getattr(params, key)
        changes[key] = (
            type(current)(value) if not isinstance(current, bool) else value.lower() in ("1", "true", "yes")
        )
    trace = GENERATORS[args.generator](dataclasses.replace(params, **changes))
    if args.output == "-":
        write_trace(trace, sys.stdout)
    else:
        write_trace(trace, args.output)
        print(f"wrote {args.output}: {trace.replies} replies", file=sys.stderr)
    return 0
