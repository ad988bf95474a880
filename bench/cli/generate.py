"""`ctxbench generate`: write a synthetic trace from a seeded generator.

Its parameters come from a spec file (`--config gen.yaml`: `generator: coding` and any of its
parameters as YAML), then `--seed`, `--turns` and `--set KEY=VALUE` on top; every value is checked
against the generator's typed fields like a preset. The same file runs anywhere a trace is accepted
as `gen:gen.yaml` (traces/generators/spec.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ctxbench.traces.format import write_trace
from ctxbench.traces.generators import GENERATORS
from ctxbench.traces.generators.spec import GenSpec, field_names, from_assignments, load_spec_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="write a synthetic trace",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  ctxbench generate coding --turns 6 --set idle_seconds=400,500 -o t.jsonl\n"
        "  ctxbench generate --config gen.yaml --seed 3 -o t.jsonl",
    )
    p.add_argument(
        "generator",
        nargs="?",
        choices=sorted(GENERATORS),
        help="which generator (or `generator:` in --config)",
    )
    p.add_argument(
        "--config", metavar="FILE", help="generator spec file (YAML): generator: NAME, then parameters"
    )
    p.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    p.add_argument(
        "--seed",
        type=int,
        help="seed of every random draw (same seed, same trace; default the file's, else 0)",
    )
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


def spec_from_args(args: argparse.Namespace) -> GenSpec:
    """The spec file's parameters (if any) with the command line's on top, each checked; errors
    name the file, `--set`, or `generate NAME` (--seed, --turns) as where the value came from."""
    base = load_spec_file(args.config) if args.config else None
    name = args.generator or (base.generator if base else None)
    if name is None:
        raise ValueError("generate: name a generator (game, coding) or give --config FILE")
    if base is not None and base.generator != name:
        raise ValueError(f"generate: {args.config} is a {base.generator!r} spec, not {name!r}")
    changes: dict[str, Any] = dict(from_assignments(name, args.set, f"generator {name} --set").params)
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.turns is not None:
        changes[next(f for f in TURN_FIELDS if f in field_names(name))] = args.turns
    if base is None:
        return GenSpec(name, changes, f"generate {name}")
    if not changes:
        return base
    return GenSpec(name, {**base.params, **changes}, f"{args.config} with the command line's values")


def length_note(spec: GenSpec, replies: int) -> str:
    """What `--turns` made, in its own unit: a game trace is the opening BEGIN reply then one reply
    per turn (traces/generators/game.py), so 300 turns are 301 replies (issue 31 #9)."""
    params = spec.make_params()
    field = next(f for f in TURN_FIELDS if f in field_names(spec.generator))
    turns = getattr(params, field)
    if spec.generator == "game":
        return f"{turns} turns ({replies} replies: the opening BEGIN reply, then one per turn)"
    return f"{turns} {field.replace('_', ' ')}, {replies} replies"


def handle(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    trace = spec.generate()
    if args.output == "-":
        write_trace(trace, sys.stdout)
    else:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # as `import -o` and `sweep -o` do
        write_trace(trace, args.output)
        # on stdout, like `ctxbench import` (issue 31 #9); the trace itself is never on stdout here
        print(f"wrote {args.output}: {length_note(spec, trace.replies)}")
    return 0
