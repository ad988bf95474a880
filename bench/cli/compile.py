"""`ctxbench compile`: build the simulator's hot path with mypyc (optional: without it ctxbench is
the same program in pure Python). The build is kept in the cache folder under a hash of the
sources, so an edit or another Python falls back to pure Python until the next build
(sim/core/native.py)."""

from __future__ import annotations

import argparse
import json

from ctxbench.sim.core import native


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile",
        help="compile the simulator's hot path with mypyc (optional)",
        description=__doc__,
        epilog="example: pip install 'ctxbench[native]' && ctxbench compile && ctxbench speed",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="say whether the compiled modules are in use")
    what.add_argument("--clean", action="store_true", help="remove every build (pure Python from then on)")
    p.add_argument("--json", action="store_true", help="with --status: print it as JSON")
    p.add_argument("--force", action="store_true", help="build anew though a build of these sources exists")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.clean:
        print(f"removed {native.clean()} build(s); ctxbench runs in pure Python")
        return 0
    if args.status:
        state = native.status()
        if args.json:
            print(json.dumps(state, indent=2))
        else:
            print(_describe(state))
        return 0
    root, seconds = native.build(args.force)
    if seconds is None:
        print(f"the hot path of these sources is built already ({root}); --force builds it anew")
        return 0
    print(f"compiled {len(native.COMPILED)} modules with mypyc in {seconds:.1f} s into {root}")
    print("in use from the next ctxbench process on; CTXBENCH_PURE=1 runs pure Python")
    return 0


def _describe(state: dict[str, object]) -> str:
    modules = state["compiled_modules"]
    if isinstance(modules, list) and modules:
        return f"compiled: {', '.join(modules)} (from {state['build']})"
    if state["pure_python_forced"]:
        return "pure Python: CTXBENCH_PURE is set"
    if state["built"]:
        return f"pure Python: a build exists at {state['build']} but this process did not load it"
    return "pure Python: no build of the current sources (run `ctxbench compile`)"
