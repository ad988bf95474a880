"""`ctxbench generate`: write a synthetic trace from a seeded generator."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from ctxbench.sim.values import parse_assignments
from ctxbench.traces.format import write_trace
from ctxbench.traces.generators import GENERATORS, params_for


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="write a synthetic trace",
        description=__doc__,
        epilog="example: ctxbench generate coding --turns 6 --set idle_seconds=400,500 -o t.jsonl",
    )
    p.add_argument("generator", choices=sorted(GENERATORS), help="which generator")
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw (same seed, same trace)")
    p.add_argument(
        "--turns", type=int, help="length: model replies for `game`, user turns for `coding` (`user_turns`)"
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any generator parameter, typed from its field: 80k for tokens, 400,500 for a range (repeat)",
    )
    p.set_defaults(handler=handle)


TURN_FIELDS = ("turns", "user_turns")  # what `--turns` sets, whichever the generator has


def handle(args: argparse.Namespace) -> int:
    cls = type(params_for(args.generator))
    valid = {f.name for f in dataclasses.fields(cls)}
    changes: dict[str, object] = {"seed": args.seed}
    if args.turns is not None:
        if args.turns < 1:
            raise ValueError(f"--turns must be at least 1, got {args.turns}")
        changes[next(f for f in TURN_FIELDS if f in valid)] = args.turns
    changes.update(parse_assignments(cls, args.set, f"generator {args.generator} --set"))
    trace = GENERATORS[args.generator](params_for(args.generator, **changes))
    if args.output == "-":
        write_trace(trace, sys.stdout)
    else:
        write_trace(trace, args.output)
        print(f"wrote {args.output}: {trace.replies} replies", file=sys.stderr)
    return 0
