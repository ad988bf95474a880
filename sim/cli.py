"""The `ctxbench` command line: one sub-command per module in `sim/commands/`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ctxbench.sim import __version__

# Each module defines `register(subparsers)`; a sub-command's handler returns the exit status.
COMMAND_MODULES = (
    "ctxbench.sim.commands.run",
    "ctxbench.sim.commands.generate",
    "ctxbench.sim.commands.presets",
    "ctxbench.sim.commands.providers",
    "ctxbench.sim.commands.context",
    "ctxbench.sim.commands.compare",
    "ctxbench.sim.commands.sweep",
    "ctxbench.sim.commands.plot",
    "ctxbench.sim.commands.report",
    "ctxbench.sim.commands.check_prefix",
    "ctxbench.sim.commands.import_trace",
    "ctxbench.sim.commands.fidelity",
    "ctxbench.sim.commands.serve",
    "ctxbench.sim.commands.proxy",
    "ctxbench.sim.commands.drive",
    "ctxbench.sim.commands.validate",
)

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, KeyError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxbench",
        description="Simulate the context policies of LLM agent harnesses against prompt-cache providers.",
    )
    parser.add_argument("--version", action="version", version=f"ctxbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in COMMAND_MODULES:
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as exc:
        msg = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"ctxbench: error: {msg}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
