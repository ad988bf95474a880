"""The `ctxbench` command line: one sub-command per module in `bench/cli/`.

The parser is built from `VERBS`, a table of verb names, modules and help texts, so that
`ctxbench --help` lists every verb without importing any of them; only the chosen verb's module is
imported (and with it simpy, yaml or matplotlib, whichever that verb needs). Each module defines
`register(subparsers)`, adding the verb with the same help text as its row here (a test checks that
the table and the modules agree); its handler returns the exit status.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import NamedTuple

from ctxbench.bench.cli._extras import missing_message
from ctxbench.sim import __version__
from ctxbench.sim.core.values import HintingParser
from ctxbench.traces.gcpause import gc_paused


class Verb(NamedTuple):
    """One sub-command: its name on the command line, the module that registers it, its help."""

    name: str
    module: str
    help: str


_PKG = "ctxbench.bench.cli."
VERBS: tuple[Verb, ...] = (
    Verb("run", _PKG + "run", "replay a trace under a policy preset"),
    Verb("generate", _PKG + "generate", "write a synthetic trace"),
    Verb("presets", _PKG + "presets", "list policy presets"),
    Verb("providers", _PKG + "providers", "list provider profiles with their parameters and sources"),
    Verb(
        "tokenizers", _PKG + "tokenizers", "token counters: exact offline encodings and the calibrated rate"
    ),
    Verb("context", _PKG + "context", "C's context breakdown at one request (C-2, C-3)"),
    Verb("compare", _PKG + "compare", "compare policies on traces (one table)"),
    Verb("sweep", _PKG + "sweep", "budget sweep: every policy x budget x seed on traces, resumable"),
    Verb("plot", _PKG + "plot", "plot sweep results (PNG and SVG)"),
    Verb("report", _PKG + "report", "HTML report of sweep results"),
    Verb("view", _PKG + "view", "an HTML page of one session: request timeline, cache breaks, blocks"),
    Verb("check-prefix", _PKG + "check_prefix", "check prefix stability of a request log (CI)"),
    Verb("import", _PKG + "import_trace", "import a real recorded session as a trace"),
    Verb("fidelity", _PKG + "fidelity", "predicted vs billed usage of an imported trace"),
    Verb("billed", _PKG + "billed", "billed tokens and cost of real logs per session (as ccusage sums them)"),
    Verb("serve", _PKG + "serve", "serve the provider models over HTTP (Anthropic / OpenAI / Gemini APIs)"),
    Verb("proxy", _PKG + "proxy", "record traffic to a real provider into the trace format"),
    Verb("drive", _PKG + "drive", "reference agent loop (official SDKs) against a live server"),
    Verb("validate", _PKG + "validate", "simulation vs live drive through the HTTP server"),
    Verb("speed", _PKG + "speed", "simulated requests per CPU-second on the bundled traces and presets"),
    Verb("compile", _PKG + "compile", "compile the simulator's hot path with mypyc (optional)"),
)

# Bad input ends in exit 2 with one line (readers raise ValueError subclasses naming file, line and
# field); OSError (a directory, no permission, a name too long), RecursionError (nesting deeper than
# a parser's stack) and OverflowError (a number past float range) are caught as the last guard.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, KeyError, RecursionError, OverflowError)


def user_message(exc: BaseException) -> str:
    """The one line printed for a user error."""
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read"
    if isinstance(exc, OverflowError):
        return f"a number in the input is too large ({exc})"
    return str(exc)


def chosen_verb(argv: Sequence[str]) -> str | None:
    """The verb named on the command line: the first word that is not an option (the top-level
    parser has only flags without values), or None."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(verb: str | None = None, alone: bool = False) -> argparse.ArgumentParser:
    """The parser with every verb listed; only `verb` (None: every verb, for tools that inspect
    the whole parser) gets its real arguments, which imports its module. `alone`: `verb` only, the
    others not even listed, for a command line that starts with it (nothing can then name or list
    another verb; each listed verb is a parser, ~0.4 ms of a short run's start-up)."""
    parser = HintingParser(
        prog="ctxbench",
        description="Simulate the context policies of LLM agent harnesses against prompt-cache providers.",
    )
    parser.add_argument("--version", action="version", version=f"ctxbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for row in VERBS:
        if verb is None or row.name == verb:
            importlib.import_module(row.module).register(sub)
        elif not alone:
            sub.add_parser(row.name, help=row.help)
    return parser


def _start_up(verb: str, freeze: bool, alone: bool = False) -> argparse.ArgumentParser:
    """The parser, its verb's module imported, with the cyclic garbage collector paused: imports
    make only long-lived objects (modules, classes, functions), which the collector would walk
    again and again (~4 % of a short run; issue 13). The `ctxbench` command's own process
    (`freeze`) then moves them out of every later collection (`gc.freeze`); a caller that runs
    `main` in its own process (tests) only gets the collector back. `alone`: `build_parser`'s."""
    with gc_paused():
        parser = build_parser(verb, alone)
        if freeze:
            gc.freeze()
    return parser


# Exit status of a crash (an exception no reader turned into a user error): 2, as for bad input,
# because 1 means "a check failed" to a CI script (issue 32); the line says it is a bug.
CRASH_STATUS = 2


def main(argv: Sequence[str] | None = None, *, catch_crashes: bool = True) -> int:
    """Run `ctxbench ARGV`; the exit status. A crash prints one `ctxbench: internal error:` line
    (the traceback with CTXBENCH_TRACEBACK=1) and exits CRASH_STATUS, never 1; `catch_crashes=False`
    lets the exception through (the fuzz oracle counts it as a traceback)."""
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(words, freeze=argv is None)
    except ModuleNotFoundError as exc:  # an optional extra is not installed: say which (issue 14)
        msg = missing_message(exc, f"ctxbench {chosen_verb(words) or ''}".strip())
        if msg is None:
            if not catch_crashes:
                raise
            return _crashed(exc)
        print(f"ctxbench: error: {msg}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not catch_crashes:
            raise
        return _crashed(exc)


def _crashed(exc: Exception) -> int:
    import os

    if os.environ.get("CTXBENCH_TRACEBACK"):
        import traceback

        traceback.print_exc()
    first = (str(exc).splitlines() or [""])[0][:300]
    print(
        f"ctxbench: internal error: {type(exc).__name__}: {first} (a bug in ctxbench; "
        "CTXBENCH_TRACEBACK=1 shows where)",
        file=sys.stderr,
    )
    return CRASH_STATUS


def _main(words: list[str], freeze: bool = False) -> int:
    verb = chosen_verb(words) or ""
    known = verb in {row.name for row in VERBS}
    parser = _start_up(verb if known else "", freeze, alone=known and words[0] == verb)
    args = parser.parse_args(words)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        return 0
    except USER_ERRORS as exc:
        print(f"ctxbench: error: {user_message(exc)}", file=sys.stderr)
        return 2
